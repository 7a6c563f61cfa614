//! `corobench verify [NAME…]`: builds, starts and checks targets against
//! docs/contract.md, `--jobs` at a time, and prints each rule's verdict.

use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Args;
use corobench_engine::targets::Targets;
use corobench_engine::verification::session::{Session, Verdict};
use corobench_target::{Manifest, Protocol};
use corobench_verify::{Outcome, RuleResult};
use serde_json::{Value, json};

use super::shared::TargetsDirArg;
use crate::exit::Exit;
use crate::output::run_progress::StepLines;

/// Flags of `corobench verify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 every rule passed (warnings allowed), 1 a rule failed, \
    3 a target failed to build or start, 4 a target named here was skipped.\n\nExamples:\n  \
    corobench verify\n  \
    corobench verify go-nethttp rust-axum --json"
)]
pub struct VerifyArgs {
    /// Targets to verify [default: every available target]
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,

    #[command(flatten)]
    pub dir: TargetsDirArg,

    /// Print the verdicts as JSON on stdout instead of a table
    #[arg(long)]
    pub json: bool,

    /// Do not start PostgreSQL: every /db must then answer 503
    #[arg(long)]
    pub no_db: bool,

    /// Targets checked at once (each on ports of its own). Most of a
    /// check is waiting: on the target's start, its /io waits, its stop
    #[arg(long, short = 'j', default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
}

/// Runs `corobench verify`.
///
/// # Errors
/// A bad targets folder or target name (exit 2), an unusable cache or work
/// folder.
pub fn run(args: &VerifyArgs) -> anyhow::Result<Exit> {
    let targets = Targets::discover(args.dir.targets_dir.as_deref())?;
    let manifests = targets.select(&args.names)?;
    let observer = StepLines("verify");
    let session = Session::open(&manifests, &targets, args.no_db, &observer)?;
    let verdicts = verify_all(&session, &manifests, usize::from(args.jobs));
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let document = json_document(&verdicts, session.database.is_some());
        writeln!(stdout, "{}", serde_json::to_string_pretty(&document)?)?;
    } else {
        write!(stdout, "{}", table(&verdicts))?;
    }
    stdout.flush()?;
    let judged: Vec<&Verdict> = verdicts.iter().map(|c| &c.verdict).collect();
    Ok(exit_status(&judged, !args.names.is_empty()))
}

/// Every target's verdicts, in the order of `manifests`, checking `jobs`
/// targets at once.
fn verify_all(session: &Session<'_>, manifests: &[Manifest], jobs: usize) -> Vec<Checked> {
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Vec<Checked>>> = manifests.iter().map(|_| Mutex::default()).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, manifests.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let (Some(manifest), Some(slot)) = (manifests.get(i), done.get(i)) else {
                        break;
                    };
                    let checked = session
                        .verify_target(manifest)
                        .into_iter()
                        .map(|(protocol, verdict)| Checked {
                            manifest: manifest.clone(),
                            protocol,
                            verdict,
                        })
                        .collect();
                    if let Ok(mut slot) = slot.lock() {
                        *slot = checked;
                    }
                }
            });
        }
    });
    done.into_iter()
        .flat_map(|slot| slot.into_inner().unwrap_or_default())
        .collect()
}

/// One target in one protocol, and what became of it.
#[derive(Debug)]
struct Checked {
    manifest: Manifest,
    protocol: Protocol,
    verdict: Verdict,
}

impl Checked {
    /// The target's name, and the protocol unless it is cleartext HTTP/1.1.
    fn label(&self) -> String {
        match self.protocol {
            Protocol::HTTP1 => self.manifest.name.clone(),
            other => format!("{} ({other})", self.manifest.name),
        }
    }
}

/// The verdicts' exit status; `named`: the targets were named on the
/// command line, so one skipped is one the user asked for and nobody
/// checked, which is no success.
fn exit_status(verdicts: &[&Verdict], named: bool) -> Exit {
    let failed_target = verdicts.iter().any(|v| matches!(v, Verdict::Failed(_)));
    let failed_rule = verdicts.iter().any(
        |v| matches!(v, Verdict::Verified(results) if results.iter().any(RuleResult::is_fail)),
    );
    if failed_target {
        Exit::TargetFailed
    } else if failed_rule {
        Exit::CheckFailed
    } else if named && verdicts.iter().any(|v| matches!(v, Verdict::Skipped(_))) {
        Exit::NotChecked
    } else {
        Exit::Success
    }
}

/// Rules down, verified targets across; then every warning and failure in
/// full, then the targets skipped or failed.
fn table(verdicts: &[Checked]) -> String {
    let verified: Vec<(String, &[RuleResult])> = verdicts
        .iter()
        .filter_map(|c| match &c.verdict {
            Verdict::Verified(results) => Some((c.label(), results.as_slice())),
            _ => None,
        })
        .collect();
    // Rules down (every rule any target was checked by, in the order met:
    // program targets have their own), targets across.
    let mut rules: Vec<&str> = Vec::new();
    for result in verified.iter().flat_map(|(_, results)| results.iter()) {
        if !rules.contains(&result.rule) {
            rules.push(result.rule);
        }
    }
    let mut out = String::new();
    if !verified.is_empty() {
        let rule_width = rules.iter().map(|r| r.len()).max().unwrap_or(4).max(4);
        out.push_str(&format!("{:rule_width$}", "rule"));
        for (name, _) in &verified {
            out.push_str(&format!("  {name:<width$}", width = name.len().max(4)));
        }
        out.push('\n');
        for rule in &rules {
            out.push_str(&format!("{rule:rule_width$}"));
            for (name, results) in &verified {
                let found = results.iter().find(|r| r.rule == *rule);
                let cell = found.map_or("—", |r| outcome_word(&r.outcome));
                out.push_str(&format!("  {cell:<width$}", width = name.len().max(4)));
            }
            out.push('\n');
        }
    }
    let mut out: String = out
        .lines()
        .map(|line| format!("{}\n", line.trim_end()))
        .collect();
    let details = details(verdicts);
    out.push_str(if out.is_empty() {
        details.trim_start()
    } else {
        &details
    });
    out
}

fn outcome_word(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Warn(_) => "warn",
        Outcome::Fail(_) => "FAIL",
    }
}

fn details(verdicts: &[Checked]) -> String {
    let mut out = String::new();
    for checked in verdicts {
        let name = checked.label();
        match &checked.verdict {
            Verdict::Verified(results) => {
                let noted: Vec<&RuleResult> = results.iter().filter(|r| !r.is_pass()).collect();
                if !noted.is_empty() {
                    out.push_str(&format!("\n{name}:\n"));
                }
                for result in noted {
                    let word = outcome_word(&result.outcome);
                    out.push_str(&format!(
                        "  {word} {}\n",
                        result.message().unwrap_or_default()
                    ));
                }
            }
            Verdict::Skipped(reason) => out.push_str(&format!("\n{name}: skipped: {reason}\n")),
            Verdict::Failed(error) => {
                out.push_str(&format!("\n{name}: FAILED to build or start: {error}\n"));
            }
            Verdict::NotServed(_) => {}
        }
    }
    out.push_str(&not_served(verdicts));
    out
}

/// One line per target and reason for the protocols it does not serve.
fn not_served(verdicts: &[Checked]) -> String {
    let mut lines: Vec<(&str, &str, Vec<String>)> = Vec::new();
    for checked in verdicts {
        let Verdict::NotServed(reason) = &checked.verdict else {
            continue;
        };
        let name = checked.manifest.name.as_str();
        match lines
            .iter_mut()
            .find(|(n, r, _)| *n == name && *r == reason)
        {
            Some((_, _, protocols)) => protocols.push(checked.protocol.to_string()),
            None => lines.push((name, reason, vec![checked.protocol.to_string()])),
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nnot served, so not checked:\n");
    for (name, reason, protocols) in lines {
        out.push_str(&format!("  {name}: {}: {reason}\n", protocols.join(", ")));
    }
    out
}

fn json_document(verdicts: &[Checked], database: bool) -> Value {
    let targets: Vec<Value> = verdicts
        .iter()
        .map(|checked| {
            let manifest = &checked.manifest;
            let mut entry = json!({
                "name": manifest.name,
                "model": manifest.model,
                "protocol": checked.protocol,
            });
            let fields = match &checked.verdict {
                Verdict::Verified(results) => json!({ "status": "verified", "rules": results }),
                Verdict::Skipped(reason) => json!({ "status": "skipped", "reason": reason }),
                Verdict::Failed(error) => json!({ "status": "failed", "error": error }),
                Verdict::NotServed(reason) => json!({ "status": "not-served", "reason": reason }),
            };
            if let (Some(entry), Value::Object(fields)) = (entry.as_object_mut(), fields) {
                entry.extend(fields);
            }
            entry
        })
        .collect();
    json!({ "database": database, "targets": targets })
}

#[cfg(test)]
mod exit_tests {
    use corobench_engine::verification::session::Verdict;

    use super::exit_status;
    use crate::exit::Exit;

    /// Issue "hostile input, third round", message 15: `verify NAME…`
    /// exited 0 when every named target was skipped (toolchain missing).
    #[test]
    fn a_named_target_that_was_skipped_is_no_success() {
        let skipped = Verdict::Skipped("go is not installed".to_owned());
        let verified = Verdict::Verified(Vec::new());
        assert_eq!(exit_status(&[&skipped], true), Exit::NotChecked);
        assert_eq!(exit_status(&[&verified, &skipped], true), Exit::NotChecked);
        // Without names, verify checks what is available: a skip is news,
        // not a failure.
        assert_eq!(exit_status(&[&verified, &skipped], false), Exit::Success);
        let failed = Verdict::Failed("did not start".to_owned());
        assert_eq!(exit_status(&[&skipped, &failed], true), Exit::TargetFailed);
    }
}
