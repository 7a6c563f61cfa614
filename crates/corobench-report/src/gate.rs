//! The regression gate of `corobench compare --fail-on`: the offenders as
//! text for stderr, a JUnit XML document and GitHub Actions annotations.
//! The verdicts come from the [`Gate`] in the comparison; nothing is
//! judged here.

use std::fmt::Write as _;
use std::io::{self, Write};

use corobench_model::{Gate, GateCheck, GateOutcome, RunComparison};

use crate::units;

/// Formats of the gate's verdicts for CI systems.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateFormat {
    /// JUnit XML: one testsuite for the run pair, one testcase per scenario
    /// × gated metric.
    Junit,
    /// GitHub Actions workflow commands: `::error title=…::…` per offender.
    Github,
}

impl GateFormat {
    /// Both formats.
    pub const ALL: [Self; 2] = [Self::Junit, Self::Github];

    /// The format's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Junit => "junit",
            Self::Github => "github",
        }
    }

    /// What the format holds, in a line.
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Self::Junit => "The gate's verdicts as JUnit XML",
            Self::Github => "The gate's offenders as GitHub Actions annotations",
        }
    }
}

/// Writes the gate of `comparison` in `format`; a comparison without a gate
/// writes an empty suite (JUnit) or nothing (GitHub).
///
/// # Errors
/// When `out` cannot be written.
pub fn render_gate(
    format: GateFormat,
    comparison: &RunComparison,
    out: &mut dyn Write,
) -> io::Result<()> {
    let empty = Gate {
        rules: Vec::new(),
        checks: Vec::new(),
        scenarios: 0,
        alpha: comparison.settings.alpha,
        confidence: comparison.settings.confidence,
    };
    let gate = comparison.gate.as_ref().unwrap_or(&empty);
    let text = match format {
        GateFormat::Junit => junit(comparison, gate),
        GateFormat::Github => github(gate),
    };
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// What `corobench compare --fail-on` prints on stderr: the offenders and
/// the checks that could not be judged, then the verdict line.
#[must_use]
pub fn gate_summary(gate: &Gate) -> String {
    let mut text = String::new();
    for check in &gate.checks {
        let label = match check.outcome {
            GateOutcome::Failed => "FAIL",
            GateOutcome::Undecided => "NOT JUDGED",
            GateOutcome::Passed => continue,
        };
        let _ = writeln!(text, "{label} {}", check_line(check));
    }
    let failed = gate.failures().count();
    let judged = gate.judged();
    if judged == 0 {
        let _ = writeln!(text, "gate failed: {}", nothing_judged(gate));
    } else if failed == 0 {
        let _ = writeln!(
            text,
            "gate passed: {judged} metrics of {} scenarios within thresholds",
            gate.scenarios
        );
    } else {
        let _ = writeln!(
            text,
            "gate failed: {failed} of {judged} metrics of {} scenarios worse beyond their \
             thresholds",
            gate.scenarios
        );
    }
    text
}

/// Why a gate judged nothing.
fn nothing_judged(gate: &Gate) -> String {
    if gate.scenarios == 0 {
        "no scenario was measured by both runs: there was nothing to judge".to_owned()
    } else {
        format!(
            "none of the {} checks on {} scenarios could be judged (see NOT JUDGED above): \
             rerun with more trials",
            gate.checks.len(),
            gate.scenarios
        )
    }
}

/// `plaintext/c=64 req/s (rps:-5%): A 31.2k, B 27.9k, change -10.31% [-12.05%,
/// -8.40%], p=0.002: B/A … lies wholly below …`.
fn check_line(check: &GateCheck) -> String {
    let change = if check.change_text.is_empty() {
        "no ratio".to_owned()
    } else {
        format!("change {}", check.change_text)
    };
    let p = check
        .p_value
        .map_or_else(|| "p=?".to_owned(), |p| format!("p={p:.3}"));
    format!(
        "{} {} ({}): A {}, B {}, {change}, {p}: {}",
        check.scenario,
        check.metric.label(),
        check.rule,
        units::value(check.metric, check.a_median),
        units::value(check.metric, check.b_median),
        check.reason
    )
}

fn junit(comparison: &RunComparison, gate: &Gate) -> String {
    let failures = gate.failures().count();
    let skipped = gate
        .checks
        .iter()
        .filter(|c| c.outcome == GateOutcome::Undecided)
        .count();
    let tests = gate.checks.len();
    let suite = format!("{} vs {}", comparison.a.run.id, comparison.b.run.id);
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"corobench gate\" tests=\"{tests}\" failures=\"{failures}\" \
         skipped=\"{skipped}\">"
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" skipped=\"{skipped}\">",
        xml_escape(&suite)
    );
    for check in &gate.checks {
        let name = xml_escape(&check.rule);
        let class = xml_escape(&check.scenario);
        let detail = xml_escape(&check_line(check));
        match check.outcome {
            GateOutcome::Passed => {
                let _ = writeln!(xml, "    <testcase classname=\"{class}\" name=\"{name}\"/>");
            }
            GateOutcome::Failed => {
                let _ = writeln!(
                    xml,
                    "    <testcase classname=\"{class}\" name=\"{name}\">\n      \
                     <failure message=\"{}\">{detail}</failure>\n    </testcase>",
                    xml_escape(&check.reason)
                );
            }
            GateOutcome::Undecided => {
                let _ = writeln!(
                    xml,
                    "    <testcase classname=\"{class}\" name=\"{name}\">\n      \
                     <skipped message=\"{}\"/>\n    </testcase>",
                    xml_escape(&check.reason)
                );
            }
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// One `::error` per offender, one `::warning` per check that could not be
/// judged, and a `::notice` with the verdict (an `::error` when nothing
/// could be judged).
fn github(gate: &Gate) -> String {
    let mut text = String::new();
    for check in &gate.checks {
        let level = match check.outcome {
            GateOutcome::Failed => "error",
            GateOutcome::Undecided => "warning",
            GateOutcome::Passed => continue,
        };
        let title = format!("corobench gate: {} {}", check.metric.label(), check.rule);
        let _ = writeln!(
            text,
            "::{level} title={}::{}",
            github_property(&title),
            github_data(&check_line(check))
        );
    }
    let summary = gate_summary(gate);
    let verdict = summary.lines().last().unwrap_or_default();
    let level = if gate.judged() == 0 {
        "error"
    } else {
        "notice"
    };
    let _ = writeln!(
        text,
        "::{level} title=corobench gate::{}",
        github_data(verdict)
    );
    text
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// A workflow command's message: `%`, CR and LF are encoded.
fn github_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: as data, and `:` and `,` too.
fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}
