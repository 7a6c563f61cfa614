//! A target that ignores its stop signal: SIGKILL ends it only after its
//! stop timeout, so every trial waits that long and the run takes longer
//! than its plan says. Named, with how long, so that the user can make the
//! server exit on the signal or give it the one it obeys.

use corobench_model::{TrialFlag, TrialRecord, WarningKind};

use crate::warnings::Found;

/// The warning for a scenario some of whose trials ended in SIGKILL.
pub(crate) fn killed_at_stop(trials: &[&TrialRecord]) -> Option<Found> {
    let killed: Vec<(&str, f64)> = trials
        .iter()
        .flat_map(|t| &t.flags)
        .filter_map(|flag| match flag {
            TrialFlag::KilledAtStop { signal, waited_s } => Some((signal.as_str(), *waited_s)),
            _ => None,
        })
        .collect();
    let (signal, _) = *killed.first()?;
    let longest = killed.iter().map(|(_, s)| *s).fold(0.0, f64::max);
    Some(
        Found::new(
            WarningKind::KilledAtStop,
            format!(
                "the target ignored {signal} and was killed when its stop timeout ran out, so \
                 every trial waited for it: make it exit on {signal}, or give the signal it \
                 obeys (stop_signal) and a shorter stop_timeout_s"
            ),
        )
        .detail(format!(
            "in {} of {} trials, up to {longest:.1} s each",
            killed.len(),
            trials.len()
        )),
    )
}

#[cfg(test)]
mod tests {
    use corobench_model::{TrialFlag, WarningKind};

    use crate::fixtures::RunBuilder;
    use crate::{AnalyzeOptions, analyze_run};

    #[test]
    fn a_target_killed_at_every_stop_is_named_with_how_long_it_cost() {
        let run = RunBuilder::new("r1", 6)
            .scenario("api", &[], "json", 4)
            .rates(&[100.0, 101.0, 102.0, 103.0, 104.0, 105.0])
            .edit_last(|trial| {
                trial.flags.push(TrialFlag::KilledAtStop {
                    signal: "SIGTERM".to_owned(),
                    waited_s: 5.02,
                });
            })
            .build();
        let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
        let warning = analysis
            .warnings
            .iter()
            .find(|w| w.kind == WarningKind::KilledAtStop)
            .expect("a warning about the stop");
        assert!(
            warning.message.contains("ignored SIGTERM"),
            "{}",
            warning.message
        );
        let detail: Vec<&String> = warning.details.values().collect();
        assert!(
            detail
                .iter()
                .any(|d| d.contains("in 1 of 6 trials, up to 5.0 s each")),
            "{detail:?}"
        );
    }
}
