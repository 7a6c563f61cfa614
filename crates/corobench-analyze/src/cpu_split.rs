//! A server CPU split below the clock ticks' resolution: the parts not
//! shown, why, and what would show them ([`corobench_model::cpu_split`]).

use corobench_model::cpu_split::MIN_SPLIT_TICKS;
use corobench_model::{Cost, CpuSplit, Metric, PerRequest, TrialRecord, WarningKind};

use crate::warnings::Found;

/// The warning for a scenario whose split leaves out a part.
pub(crate) fn below_resolution(trials: &[&TrialRecord]) -> Option<Found> {
    let split = CpuSplit::of(trials);
    let hidden = split.hidden();
    if hidden.is_empty() {
        return None;
    }
    // One wording for every scenario it concerns, whichever part is
    // hidden (the table shows which, as —): identical notes merge into one
    // line naming their rows, which keeps a first look of short windows
    // (the default suite's 0.8 s) on one screen.
    Some(
        Found::new(
            WarningKind::CpuSplitBelowResolution,
            format!(
                "user/sys µs/req are — where a part spanned fewer than {MIN_SPLIT_TICKS} clock \
                 ticks (10 ms each) in the median trial, too few to tell user time from system \
                 time; cpu µs/req gives the total (to the nanosecond where the scheduler's run \
                 time could be read); a longer window (run.duration) or more load brings the \
                 split back"
            ),
        )
        .about(vec![
            Metric::PerRequest(PerRequest::server(Cost::UserCpu)),
            Metric::PerRequest(PerRequest::server(Cost::SystemCpu)),
            Metric::SERVER_CPU,
        ]),
    )
}

#[cfg(test)]
mod tests {
    use corobench_model::{Cost, Metric, PerRequest, StoredRun, WarningKind};

    use crate::fixtures::RunBuilder;
    use crate::{AnalyzeOptions, analyze_run};

    /// Six trials of 1 s at 1000 req/s whose server used `user` and
    /// `system` percent of a core (ticks = percent over a 1 s window).
    fn run_with_split(user: &[f64], system: f64) -> StoredRun {
        let mut run = RunBuilder::new("r1", 6)
            .scenario("srv", &[], "plaintext", 4)
            .rates(&[1000.0; 6])
            .build();
        for (trial, user) in run.trials.iter_mut().zip(user.iter().cycle()) {
            let resources = trial.resources.as_mut().unwrap();
            resources.cpu_user_pct_mean = *user;
            resources.cpu_system_pct_mean = system;
            resources.cpu_pct_mean = user + system;
        }
        run
    }

    fn shown(run: &StoredRun) -> Vec<Metric> {
        let analysis = analyze_run(run, &AnalyzeOptions::default()).unwrap();
        [Cost::UserCpu, Cost::SystemCpu, Cost::Cpu]
            .map(|cost| Metric::PerRequest(PerRequest::server(cost)))
            .into_iter()
            .filter(|m| analysis.scenarios[0].metrics.contains_key(m))
            .collect()
    }

    #[test]
    fn a_split_of_enough_ticks_is_shown_and_the_total_is_not() {
        let run = run_with_split(&[60.0], 25.0);
        assert_eq!(
            shown(&run),
            [Cost::UserCpu, Cost::SystemCpu].map(|c| Metric::PerRequest(PerRequest::server(c)))
        );
    }

    #[test]
    fn a_part_of_few_ticks_gives_way_to_the_total_in_every_trial() {
        // Two ticks that land in user mode in some trials, in system mode
        // in others: each part below 20 ticks in the median trial.
        let run = run_with_split(&[2.0, 0.0], 1.0);
        assert_eq!(shown(&run), [Metric::SERVER_CPU]);
        let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
        let total = &analysis.scenarios[0].metrics[&Metric::SERVER_CPU];
        // 3 or 1 % of a core over 1 s and 1000 requests: 30 or 10 µs each.
        assert_eq!((total.min, total.max), (10.0, 30.0));
        let notes: Vec<(&str, Vec<&String>)> = analysis
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::CpuSplitBelowResolution)
            .map(|w| (w.message.as_str(), w.details.values().collect()))
            .collect();
        let [(message, details)] = notes.as_slice() else {
            panic!("one note on the split: {notes:?}");
        };
        assert!(
            message.starts_with("user/sys µs/req are — where a part spanned fewer than 20"),
            "{message}"
        );
        assert!(details.is_empty(), "one wording for every row: {details:?}");
    }

    #[test]
    fn one_trial_of_few_ticks_does_not_hide_a_split_the_median_resolves() {
        let run = run_with_split(&[5.0, 60.0, 60.0], 25.0);
        assert!(!shown(&run).contains(&Metric::SERVER_CPU));
    }

    #[test]
    fn the_part_that_spans_enough_ticks_stays_beside_the_total() {
        let run = run_with_split(&[400.0], 3.0);
        assert_eq!(
            shown(&run),
            [
                Metric::PerRequest(PerRequest::server(Cost::UserCpu)),
                Metric::SERVER_CPU
            ]
        );
    }
}
