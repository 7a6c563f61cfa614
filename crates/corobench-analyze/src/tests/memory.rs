//! Memory per connection: one fit per target and idle workload, over every
//! successful idle trial of its scenarios.

use corobench_model::{IdleMeasurement, StoredRun};

use crate::fixtures::RunBuilder;
use crate::{AnalyzeOptions, analyze_run};

/// An idle trial of the last scenario: `rss` bytes at `connections`.
fn idle(builder: RunBuilder, connections: u32, rss: u64) -> RunBuilder {
    builder.failed("placeholder").edit_last(|trial| {
        trial.status = corobench_model::TrialStatus::Ok;
        trial.failure = None;
        trial.idle = Some(IdleMeasurement {
            connections,
            rss_bytes: rss,
            settled: connections != 3000,
            waited_s: 1.0,
        });
    })
}

/// go at 8 KiB and node at 2 KiB per connection (with ±4 KiB of noise
/// per trial), over 1000, 2000 and 3000 connections, two trials each.
fn swept() -> StoredRun {
    let mut run = RunBuilder::new("memory", 2);
    for (target, per_connection) in [("go", 8192_u64), ("node", 2048)] {
        for connections in [1000_u32, 2000, 3000] {
            run = run.scenario(target, &[], "idle", connections);
            for noise in [0_u64, 4096] {
                let rss = 5_000_000 + per_connection * u64::from(connections) + noise;
                run = idle(run, connections, rss);
            }
        }
    }
    let mut run = run.build();
    for scenario in &mut run.scenarios {
        scenario.workload.idle = true;
    }
    run
}

#[test]
fn each_target_gets_its_slope_with_an_interval_and_no_sweep() {
    let analysis = analyze_run(&swept(), &AnalyzeOptions::default()).unwrap();
    assert!(
        analysis.sweeps.is_empty(),
        "idle workloads are not USL sweeps"
    );
    let fits = &analysis.memory_per_connection;
    assert_eq!(fits.len(), 2);
    for (fit, truth) in fits.iter().zip([8192.0, 2048.0]) {
        let slope = fit.bytes_per_connection.unwrap();
        let (lo, hi) = fit.interval.unwrap();
        assert!((slope - truth).abs() < 1e-6, "{fit:?}");
        assert!(lo < truth && truth < hi && hi - lo < 10.0, "{fit:?}");
        assert_eq!(
            (fit.trials, fit.connections.as_slice()),
            (6, &[1000, 2000, 3000][..])
        );
        assert_eq!(
            fit.note.as_deref(),
            Some("in 2 trial(s) RSS was still changing when the wait ended")
        );
    }
    assert_eq!(fits[0].label, "go");
    assert_eq!(fits[0].scenarios, [0, 1, 2]);
}

#[test]
fn one_number_of_connections_has_no_slope_and_says_why() {
    let mut run = idle(
        RunBuilder::new("memory", 1).scenario("go", &[], "idle", 1000),
        1000,
        9,
    )
    .build();
    run.scenarios[0].workload.idle = true;
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    let fit = &analysis.memory_per_connection[0];
    assert_eq!((fit.bytes_per_connection, fit.interval), (None, None));
    assert!(
        fit.note
            .as_deref()
            .unwrap()
            .starts_with("one number of connections only")
    );
}
