//! One trial of a program scenario on `[hosts]`: the server it talks to
//! (when it talks to one) served on the server host as a trial's server
//! is, the program run to the end on the first generator host by
//! `corobench program` over the transport, and its figures stored as a
//! local program trial's; the server's resources are `serve`'s samples
//! taken while the program ran.

use std::time::Duration;

use corobench_model::{ProgramResult, ResourceSummary, TrialFlag, TrialRecord, TrialStatus};
use corobench_spec::PlannedScenario;

use super::executor::{Ended, RemoteTrials, ServerSession, or_silent, param_flags, server_url};
use super::transport::Remote;
use crate::TrialOutcome;
use crate::trial::failed;

/// How often the trial looks at the program's and the server's sessions.
const POLL: Duration = Duration::from_millis(50);

/// What a program trial on hosts measured.
struct Measured {
    program: ProgramResult,
    server: Option<ResourceSummary>,
    flags: Vec<TrialFlag>,
}

/// Runs one trial of the program scenario `scenario` on the hosts.
pub(super) fn run(
    trials: &RemoteTrials<'_>,
    scenario: &PlannedScenario,
    mut trial: TrialRecord,
) -> TrialOutcome {
    match measure(trials, scenario) {
        Ok(measured) => {
            trial.status = TrialStatus::Ok;
            trial.program = Some(measured.program);
            trial.resources = measured.server;
            trial.flags = measured.flags;
            TrialOutcome::Ended(Box::new(trial))
        }
        Err(Ended::Interrupted) => TrialOutcome::Interrupted,
        Err(Ended::Failed(why)) => failed(trial, why),
    }
}

fn measure(trials: &RemoteTrials<'_>, scenario: &PlannedScenario) -> Result<Measured, Ended> {
    let choice = scenario.program.as_ref().and_then(|p| p.server.as_ref());
    let mut server = choice
        .map(|s| trials.start_server(&s.target, &s.parameters))
        .transpose()?;
    let address = &trials.hosts.hosts.server_address;
    let url = server.as_ref().map(|s| server_url(address, s.port, ""));
    let started_ms = unix_ms();
    let program = run_program(trials, scenario, url, server.as_mut());
    let span_ms = (started_ms, unix_ms());
    let mut flags = Vec::new();
    // Stopped whatever the program's outcome.
    let samples = server.map(|s| s.finish(span_ms, &mut flags));
    Ok(Measured {
        program: program?,
        server: samples.map(|s| corobench_sampler::summarize(&s)),
        flags,
    })
}

/// `corobench program` on the first generator host, to its end.
fn run_program(
    trials: &RemoteTrials<'_>,
    scenario: &PlannedScenario,
    server_url: Option<String>,
    mut server: Option<&mut ServerSession>,
) -> Result<ProgramResult, Ended> {
    let hosts = &trials.hosts.hosts;
    let host = &hosts.generators[0];
    let mut argv = vec![
        trials.hosts.generator_binaries[0].clone(),
        "program".to_owned(),
        scenario.target.clone(),
    ];
    argv.extend(param_flags(&scenario.parameters));
    if let Some(url) = server_url {
        argv.extend(["--server-url".to_owned(), url]);
    }
    if let Some(cpus) = &hosts.generator_cpus[0] {
        argv.extend(["--cpus".to_owned(), cpus.clone()]);
    }
    if let Some(dir) = &hosts.targets_dir {
        argv.extend(["--targets-dir".to_owned(), dir.clone()]);
    }
    let command = trials.hosts.transport.command(host, &argv);
    let mut remote =
        Remote::start(command, false).map_err(|e| Ended::Failed(format!("cannot run ssh: {e}")))?;
    let status = loop {
        if let Some(status) = remote.exited() {
            break status;
        }
        if trials.stopped() {
            return Err(Ended::Interrupted);
        }
        if let Some(server) = server.as_deref_mut() {
            server.collect_samples();
            if server.ended() {
                return Err(Ended::Failed(format!(
                    "the session with the server host {} ended while the program ran",
                    server.host
                )));
            }
        }
        std::thread::sleep(POLL);
    };
    remote.finish_reading();
    let output = remote.drain_stdout();
    if !status.success() {
        return Err(Ended::Failed(format!(
            "the program on {} failed ({status}): {}",
            host.text,
            or_silent(&remote.stderr_tail())
        )));
    }
    let line = output
        .iter()
        .rev()
        .find(|l| l.trim_start().starts_with('{'));
    line.and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            Ended::Failed(format!(
                "corobench program on {} printed no figures: {}",
                host.text,
                or_silent(&output.join("\n"))
            ))
        })
}

fn unix_ms() -> u64 {
    u64::try_from(crate::wall_clock::unix_ms()).unwrap_or(0)
}
