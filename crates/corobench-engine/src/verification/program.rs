//! Verifying a program target. It serves no HTTP, so no contract rule
//! applies; instead it runs once with its default parameters (beside a
//! server, when it needs one) and must exit 0 within its time limit and
//! report every figure its manifest declares, in the Go benchmark format.

use corobench_target::{
    BuiltTarget, LaunchOptions, ProgramEnd, ProgramOptions, TargetError, check_units,
    parse_benchmarks,
};
use corobench_verify::{Outcome, RuleResult};

use super::VerifyEnv;

/// The server a program that needs one is checked against, when it can run
/// here; otherwise the first server target that can.
pub const PREFERRED_SERVER: &str = "go-nethttp";

/// Runs `program` once (beside `server`, started and stopped here) and
/// judges what it printed.
///
/// # Errors
/// The server did not start or become healthy, or the program did not start.
pub fn check_program(
    program: &BuiltTarget,
    server: Option<&BuiltTarget>,
    env: &VerifyEnv<'_>,
) -> Result<Vec<RuleResult>, Box<TargetError>> {
    let mut running_server = match server {
        Some(server) => {
            let options = LaunchOptions {
                data_dir: env.data_dir.clone(),
                upload_dir: env.work_dir.join("uploads").join(&server.manifest.name),
                cpus: env.cpus.clone(),
                ..LaunchOptions::default()
            };
            let mut running = server.launch(&options)?;
            running.wait_healthy(server.manifest.run.ready_timeout())?;
            Some(running)
        }
        None => None,
    };
    let options = ProgramOptions {
        server_url: running_server
            .as_ref()
            .map(|s| format!("http://{}", s.addr())),
        ..ProgramOptions::default()
    };
    let ran = program.run_program(&options);
    if let Some(server) = running_server.take() {
        let _ = server.stop();
    }
    let ran = ran?;
    let runs = runs_rule(&ran);
    let reports = reports_rule(program, &ran.stdout);
    Ok(vec![runs, reports])
}

/// `program-runs`: it exits 0 within its time limit.
fn runs_rule(ran: &corobench_target::ProgramRun) -> RuleResult {
    let outcome = match ran.end {
        _ if ran.succeeded() => Outcome::Pass,
        ProgramEnd::TimedOut => Outcome::Fail(format!(
            "program-runs: it ran past its time limit ({:.0} s) and was stopped",
            ran.elapsed.as_secs_f64()
        )),
        _ => Outcome::Fail(format!(
            "program-runs: it exited with {}; last lines of its stderr: {}",
            ran.status
                .map_or_else(|| "no status".to_string(), |s| s.to_string()),
            ran.stderr_tail.trim()
        )),
    };
    RuleResult {
        rule: "program-runs",
        outcome,
    }
}

/// `program-reports`: at least one result line, each with every declared unit.
fn reports_rule(program: &BuiltTarget, stdout: &str) -> RuleResult {
    let declared = program
        .manifest
        .program()
        .map(|p| p.metrics.clone())
        .unwrap_or_default();
    let outcome = match parse_benchmarks(stdout) {
        Err(error) => Outcome::Fail(format!("program-reports: {error}")),
        Ok(results) if results.is_empty() => Outcome::Fail(
            "program-reports: it printed no result line (Go benchmark format)".to_string(),
        ),
        Ok(results) => match results.iter().try_for_each(|r| check_units(r, &declared)) {
            Ok(()) => Outcome::Pass,
            Err(error) => Outcome::Fail(format!("program-reports: {error}")),
        },
    };
    RuleResult {
        rule: "program-reports",
        outcome,
    }
}
