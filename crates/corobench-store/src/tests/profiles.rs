//! Profiles and idle trials: stored beside the trials, never among them.

use corobench_model::{ProfileOutcome, ProfileRecord};

use super::fixtures::{RUN_ID, store_with_run};
use crate::StoreError;

fn captured(scenario_index: u32) -> ProfileRecord {
    ProfileRecord {
        scenario_index,
        frequency_hz: 99,
        started_at_unix_ms: 1_763_793_190_000,
        outcome: ProfileOutcome::Captured {
            samples: 3,
            folded_stacks: "server;main;write 2\nserver;main 1\n".to_owned(),
        },
    }
}

#[test]
fn profiles_load_back_with_the_run_and_add_no_trial() {
    let (_dir, mut store) = store_with_run();
    let skipped = ProfileRecord {
        outcome: ProfileOutcome::Skipped {
            reason: "perf is not installed".to_owned(),
        },
        ..captured(0)
    };
    store.record_profile(RUN_ID, &captured(1)).unwrap();
    store.record_profile(RUN_ID, &skipped).unwrap();
    let loaded = store.load_run(RUN_ID).unwrap();
    assert_eq!(loaded.profiles, vec![skipped, captured(1)]);
    assert!(loaded.trials.is_empty());
    assert!(store.completed_trials(RUN_ID).unwrap().is_empty());
}

#[test]
fn a_resumed_run_s_profile_replaces_the_earlier_one() {
    let (_dir, mut store) = store_with_run();
    store.record_profile(RUN_ID, &captured(0)).unwrap();
    let mut again = captured(0);
    again.started_at_unix_ms += 60_000;
    store.record_profile(RUN_ID, &again).unwrap();
    assert_eq!(store.load_run(RUN_ID).unwrap().profiles, vec![again]);
}

#[test]
fn a_profile_of_an_unknown_scenario_is_refused() {
    let (_dir, mut store) = store_with_run();
    let error = store.record_profile(RUN_ID, &captured(9)).unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::UnknownScenario {
                scenario_index: 9,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn an_idle_trial_s_measurement_loads_back_with_its_trial() {
    let (_dir, mut store) = store_with_run();
    let mut trial = super::fixtures::ok_trial(0, 0, 0);
    trial.load = None;
    trial.idle = Some(corobench_model::IdleMeasurement {
        connections: 5000,
        rss_bytes: 123_456_789,
        settled: false,
        waited_s: 15.0,
    });
    store.record_trial(RUN_ID, &trial).unwrap();
    store
        .record_trial(RUN_ID, &super::fixtures::ok_trial(1, 0, 1))
        .unwrap();
    let loaded = store.load_run(RUN_ID).unwrap();
    assert_eq!(loaded.trials[0], trial);
    assert_eq!(loaded.trials[1].idle, None);
}
