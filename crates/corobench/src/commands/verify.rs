//! `corobench verify [NAME…]`: builds, starts and checks targets against
//! docs/contract.md, one at a time, and prints each rule's verdict.

use std::io::Write as _;

use clap::Args;
use corobench_engine::targets::Targets;
use corobench_engine::verification::session::{Session, Verdict};
use corobench_target::Manifest;
use corobench_verify::{Outcome, RuleResult};
use serde_json::{Value, json};

use super::shared::TargetsDirArg;
use crate::exit::Exit;
use crate::output::run_progress::StepLines;

/// Flags of `corobench verify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 every rule passed (warnings allowed), 1 a rule failed, \
    3 a target failed to build or start.\n\nExamples:\n  \
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
    let verdicts: Vec<(Manifest, Verdict)> = manifests
        .into_iter()
        .map(|manifest| {
            let verdict = session.verify_target(&manifest);
            (manifest, verdict)
        })
        .collect();
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let document = json_document(&verdicts, session.database.is_some());
        writeln!(stdout, "{}", serde_json::to_string_pretty(&document)?)?;
    } else {
        write!(stdout, "{}", table(&verdicts))?;
    }
    stdout.flush()?;
    Ok(exit_status(&verdicts))
}

fn exit_status(verdicts: &[(Manifest, Verdict)]) -> Exit {
    let failed_target = verdicts
        .iter()
        .any(|(_, v)| matches!(v, Verdict::Failed(_)));
    let failed_rule = verdicts.iter().any(
        |(_, v)| matches!(v, Verdict::Verified(results) if results.iter().any(RuleResult::is_fail)),
    );
    if failed_target {
        Exit::TargetFailed
    } else if failed_rule {
        Exit::CheckFailed
    } else {
        Exit::Success
    }
}

/// Rules down, verified targets across; then every warning and failure in
/// full, then the targets skipped or failed.
fn table(verdicts: &[(Manifest, Verdict)]) -> String {
    let verified: Vec<(&str, &[RuleResult])> = verdicts
        .iter()
        .filter_map(|(m, v)| match v {
            Verdict::Verified(results) => Some((m.name.as_str(), results.as_slice())),
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

fn details(verdicts: &[(Manifest, Verdict)]) -> String {
    let mut out = String::new();
    for (manifest, verdict) in verdicts {
        match verdict {
            Verdict::Verified(results) => {
                let noted: Vec<&RuleResult> = results.iter().filter(|r| !r.is_pass()).collect();
                if !noted.is_empty() {
                    out.push_str(&format!("\n{}:\n", manifest.name));
                }
                for result in noted {
                    let word = outcome_word(&result.outcome);
                    out.push_str(&format!(
                        "  {word} {}\n",
                        result.message().unwrap_or_default()
                    ));
                }
            }
            Verdict::Skipped(reason) => {
                out.push_str(&format!("\n{}: skipped: {reason}\n", manifest.name))
            }
            Verdict::Failed(error) => out.push_str(&format!(
                "\n{}: FAILED to build or start: {error}\n",
                manifest.name
            )),
        }
    }
    out
}

fn json_document(verdicts: &[(Manifest, Verdict)], database: bool) -> Value {
    let targets: Vec<Value> = verdicts
        .iter()
        .map(|(manifest, verdict)| {
            let mut entry = json!({ "name": manifest.name, "model": manifest.model });
            let fields = match verdict {
                Verdict::Verified(results) => json!({ "status": "verified", "rules": results }),
                Verdict::Skipped(reason) => json!({ "status": "skipped", "reason": reason }),
                Verdict::Failed(error) => json!({ "status": "failed", "error": error }),
            };
            if let (Some(entry), Value::Object(fields)) = (entry.as_object_mut(), fields) {
                entry.extend(fields);
            }
            entry
        })
        .collect();
    json!({ "database": database, "targets": targets })
}
