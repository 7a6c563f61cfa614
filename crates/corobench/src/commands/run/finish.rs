//! How a run ends: its status in the store, the table, and what the reader
//! must know — how to resume it, or why it measured nothing.

use std::collections::BTreeMap;

use corobench_engine::wall_clock::unix_ms;
use corobench_engine::{EngineError, RunTally};
use corobench_model::{RunStatus, TrialRecord, TrialStatus, failure_line};
use corobench_store::Store;

use super::RunArgs;
use crate::commands::shared::ColorArg;
use crate::exit::{self, Exit};
use crate::output::run_summary;

/// How many distinct failure reasons a failed run names.
const REASONS_SHOWN: usize = 5;

/// Marks the run's status, prints its table, and says how to resume it
/// (with `resume_with`, the command that ran it) or why it failed.
///
/// # Errors
/// The store refused a trial or the status; every trial failed (exit 1).
pub(super) fn finish(
    args: &RunArgs,
    store: &mut Store,
    (run_id, resume_with): (&str, &str),
    stopped: bool,
    tally: Result<RunTally, EngineError>,
) -> anyhow::Result<Exit> {
    let interrupted = stopped || tally.as_ref().map_or(true, |t| t.interrupted);
    let trials = store.load_run(run_id).map(|r| r.trials).unwrap_or_default();
    let failed = trials
        .iter()
        .filter(|t| t.status == TrialStatus::Failed)
        .count();
    let measured_nothing =
        !trials.is_empty() && (failed == trials.len() || no_response_succeeded(&trials));
    let status = match (interrupted, measured_nothing) {
        (true, _) => RunStatus::Interrupted,
        (false, true) => RunStatus::Failed,
        (false, false) => RunStatus::Complete,
    };
    // The error that ended the run is its reason (a trial the store refused).
    let reason = tally.as_ref().err().map(ToString::to_string);
    let finished = (!interrupted).then(unix_ms);
    let ended = store.end_run(run_id, status, finished, reason.as_deref());
    // A store that refused a trial is the error to report, not the status update after it.
    let tally = tally?;
    ended?;
    run_summary::print_run(
        store,
        run_id,
        args.baseline.as_deref(),
        ColorArg::Auto.enabled(None),
    )?;
    if interrupted {
        eprintln!(
            "\ninterrupted: {} trials of run {run_id} are stored; finish it with\n  {resume_with} --resume {run_id}{}",
            tally.stored,
            args.db.as_flag()
        );
        return Ok(Exit::Interrupted);
    }
    if measured_nothing && failed < trials.len() {
        return Err(exit::check_failed(format!(
            "run {run_id} measured nothing: no request of its {} measured trials got a \
             successful response ({}); check the workloads' paths and the targets",
            trials.len() - failed,
            error_responses(&trials)
        )));
    }
    if measured_nothing {
        return Err(exit::check_failed(format!(
            "run {run_id} measured nothing: all {failed} trials failed. {}",
            reasons(&trials)
        )));
    }
    if failed > 0 {
        eprintln!(
            "\nnote: {failed} of {} trials failed and are left out of the figures; {}",
            trials.len(),
            reasons(&trials)
        );
    }
    Ok(Exit::Success)
}

/// Every trial that measured load got only error responses (a 404 for
/// every request, say): the run measured nothing the user asked for.
/// Program trials, which send no requests, never count as such.
fn no_response_succeeded(trials: &[TrialRecord]) -> bool {
    let measured: Vec<_> = trials
        .iter()
        .filter(|t| t.status != TrialStatus::Failed)
        .map(|t| t.load.as_ref())
        .collect();
    !measured.is_empty()
        && measured
            .iter()
            .all(|load| load.is_some_and(|l| l.status.succeeded() == 0))
}

/// `4xx: 1200, 5xx: 3, transport errors: 2` over every measured trial.
fn error_responses(trials: &[TrialRecord]) -> String {
    let (mut client, mut server, mut transport) = (0, 0, 0);
    for load in trials.iter().filter_map(|t| t.load.as_ref()) {
        client += load.status.client_error;
        server += load.status.server_error;
        transport += load.errors.transport();
    }
    format!("4xx: {client}, 5xx: {server}, transport errors: {transport}")
}

/// `Why: 12× the load could not start: …; 3× …` — each distinct failure on
/// one line (with the program's own message when the first line only
/// introduces it), most frequent first.
fn reasons(trials: &[TrialRecord]) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for trial in trials.iter().filter(|t| t.status == TrialStatus::Failed) {
        let line = trial
            .failure
            .as_deref()
            .map_or_else(|| "no reason recorded".to_owned(), failure_line);
        *counts.entry(line).or_default() += 1;
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let shown: Vec<String> = ranked
        .iter()
        .take(REASONS_SHOWN)
        .map(|(why, n)| format!("{n}× {why}"))
        .collect();
    let more = ranked.len().saturating_sub(REASONS_SHOWN);
    let tail = if more > 0 {
        format!("; and {more} other reasons (see `corobench report`)")
    } else {
        String::new()
    };
    format!("Why: {}{tail}", shown.join("; "))
}

#[cfg(test)]
mod tests {
    use corobench_model::TrialRecord;

    use super::reasons;

    fn failed(why: &str) -> TrialRecord {
        TrialRecord::started(0, 0, 0, 0).failed(why)
    }

    #[test]
    fn reasons_are_counted_by_their_first_line_most_frequent_first() {
        let trials = [
            failed("the load could not start: too many connections\nmore"),
            failed("the target exited during the measurement"),
            failed("the load could not start: too many connections"),
        ];
        assert_eq!(
            reasons(&trials),
            "Why: 2× the load could not start: too many connections; \
             1× the target exited during the measurement"
        );
    }

    /// Issue "wrong successes", item 7: the reason ended at "last lines of
    /// its stderr:" although the program's message followed it.
    #[test]
    fn a_reason_that_introduces_stderr_shows_the_program_message() {
        let trials = [failed(
            "the program exited with status 1; last lines of its stderr:\n\
             starting\nconfig: min_ms 50 is above max_ms 10\n",
        )];
        assert_eq!(
            reasons(&trials),
            "Why: 1× the program exited with status 1; last lines of its stderr: \
             starting | config: min_ms 50 is above max_ms 10"
        );
    }
}
