//! Comparisons with the baseline target and between two runs.

use corobench_model::{Metric, Verdict, WarningKind};

use crate::fixtures::RunBuilder;
use crate::{AnalyzeError, AnalyzeOptions, analyze_run, compare_runs};

const LOW: [f64; 6] = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0];
const HIGH: [f64; 6] = [110.0, 111.0, 112.0, 113.0, 114.0, 115.0];
const MIXED: [f64; 6] = [99.0, 101.5, 102.5, 103.5, 104.5, 106.0];

fn three_targets() -> RunBuilder {
    RunBuilder::new("r1", 6)
        .scenario("base", &["GOMAXPROCS=1"], "plaintext", 4)
        .rates(&LOW)
        .scenario("base", &["GOMAXPROCS=2"], "plaintext", 4)
        .rates(&LOW)
        .scenario("ants", &["GOMAXPROCS=1", "pool=8"], "plaintext", 4)
        .rates(&HIGH)
        .scenario("node", &[], "plaintext", 4)
        .rates(&MIXED)
        .scenario("node", &[], "json", 4)
        .rates(&MIXED)
}

#[test]
fn scenarios_meet_the_baseline_on_workload_schedule_and_shared_parameters() {
    let analysis = analyze_run(&three_targets().build(), &AnalyzeOptions::default()).unwrap();
    assert_eq!(analysis.settings.baseline_target.as_deref(), Some("base"));
    let pairs: Vec<(usize, usize)> = analysis
        .comparisons
        .iter()
        .map(|c| (c.scenario, c.baseline))
        .collect();
    // ants shares GOMAXPROCS=1 with base; node has no GOMAXPROCS, so it
    // meets both base scenarios; node's json has no base counterpart; and
    // base's own sweep compares GOMAXPROCS=2 with its first, 1.
    assert_eq!(pairs, vec![(2, 0), (3, 0), (3, 1), (1, 0)]);
    let no_baseline: Vec<_> = analysis
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::NoBaseline)
        .collect();
    assert_eq!(no_baseline.len(), 1);
    assert_eq!(no_baseline[0].scenarios, vec!["node/json/c=4".to_owned()]);
}

#[test]
fn separated_samples_are_significant_and_judged_by_direction() {
    let analysis = analyze_run(&three_targets().build(), &AnalyzeOptions::default()).unwrap();
    let ants = &analysis.comparisons[0];
    let rate = ants
        .metrics
        .iter()
        .find(|m| m.metric == Metric::RequestsPerS)
        .unwrap();
    // 6 vs 6 without overlap: exact p = 2 / C(12, 6) = 2/924.
    assert!((rate.p_value - 2.0 / 924.0).abs() < 1e-12);
    assert_eq!(rate.note_text, "p=0.002 n=6");
    // The change is the Hodges–Lehmann ratio with Moses's interval.
    assert_eq!(rate.delta_text, "+9.76% [+6.80%, +12.75%]");
    assert_eq!(rate.delta_text, rate.change_text);
    assert!(rate.significant);
    assert_eq!(rate.verdict, Verdict::Improved);
    let expected = corobench_stats::hodges_lehmann_ratio(&HIGH, &LOW).unwrap();
    assert!((rate.ratio.unwrap() - expected).abs() < 1e-12);
    assert!(rate.ratio_lo.unwrap() < expected && expected < rate.ratio_hi.unwrap());
}

#[test]
fn overlapping_samples_are_not_significant() {
    let analysis = analyze_run(&three_targets().build(), &AnalyzeOptions::default()).unwrap();
    let node = &analysis.comparisons[1];
    let rate = &node.metrics[0];
    assert_eq!(rate.metric, Metric::RequestsPerS);
    assert_eq!(rate.delta_text, "~");
    assert_eq!(rate.verdict, Verdict::NoDifference);
    assert!(rate.p_value > 0.05);
    // Equal samples (every trial's CPU is 50%) compare as p = 1.
    let cpu = node
        .metrics
        .iter()
        .find(|m| m.metric == Metric::ServerCpuPct)
        .unwrap();
    assert_eq!((cpu.p_value, cpu.delta_text.as_str()), (1.0, "~"));
}

#[test]
fn a_chosen_baseline_must_be_a_target_of_the_run() {
    let options = AnalyzeOptions {
        baseline: Some("nginx".to_owned()),
        ..AnalyzeOptions::default()
    };
    let error = analyze_run(&three_targets().build(), &options).unwrap_err();
    let AnalyzeError::UnknownBaseline { .. } = &error;
    assert_eq!(
        error.to_string(),
        "run r1 has no target nginx to compare with; use one of: base, ants, node"
    );
    let options = AnalyzeOptions {
        baseline: Some("node".to_owned()),
        ..AnalyzeOptions::default()
    };
    let analysis = analyze_run(&three_targets().build(), &options).unwrap();
    assert!(analysis.comparisons.iter().all(|c| c.baseline >= 3));
}

#[test]
fn the_runs_own_baseline_is_used_unless_another_is_asked_for() {
    let mut run = three_targets().build();
    run.run.baseline = Some("node".to_owned());
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    assert_eq!(analysis.settings.baseline_target.as_deref(), Some("node"));
    let asked = AnalyzeOptions {
        baseline: Some("ants".to_owned()),
        ..AnalyzeOptions::default()
    };
    let analysis = analyze_run(&run, &asked).unwrap();
    assert_eq!(analysis.settings.baseline_target.as_deref(), Some("ants"));
    // A stored baseline the run did not measure leaves the first target.
    run.run.baseline = Some("swoole-uring".to_owned());
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    assert_eq!(analysis.settings.baseline_target.as_deref(), Some("base"));
}

#[test]
fn too_few_trials_to_detect_a_difference_are_reported() {
    let run = RunBuilder::new("r1", 2)
        .scenario("base", &[], "plaintext", 4)
        .rates(&[1.0, 2.0])
        .scenario("other", &[], "plaintext", 4)
        .rates(&[3.0, 4.0])
        .build();
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    let warning = analysis
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::TooFewTrialsToDetect)
        .unwrap();
    assert_eq!(
        warning.message,
        "too few trials for any difference to be significant at alpha 0.05: rerun with \
         --trials 4 or more"
    );
    assert_eq!(
        warning.details["other/plaintext/c=4"],
        "2+2 trials, the smallest possible p is 0.333"
    );
}

#[test]
fn two_runs_are_matched_by_key_with_a_geomean_row() {
    let a = three_targets().build();
    let mut b = RunBuilder::new("r2", 6)
        .scenario("base", &["GOMAXPROCS=1"], "plaintext", 4)
        .rates(&HIGH)
        .scenario("ants", &["GOMAXPROCS=1", "pool=8"], "plaintext", 4)
        .rates(&HIGH)
        .scenario("extra", &[], "plaintext", 4)
        .rates(&LOW)
        .build();
    b.run.provenance.kernel = "6.18.0".to_owned();
    let comparison = compare_runs(&a, &b, &AnalyzeOptions::default());
    assert_eq!(comparison.only_in_b, vec!["extra/plaintext/c=4".to_owned()]);
    assert_eq!(comparison.only_in_a.len(), 3);
    let rate = &comparison.tables[0];
    assert_eq!(rate.metric, Metric::RequestsPerS);
    let keys: Vec<&str> = rate.rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "base/GOMAXPROCS=1/plaintext/c=4",
            "ants/GOMAXPROCS=1/pool=8/plaintext/c=4"
        ]
    );
    let deltas: Vec<&str> = rate
        .rows
        .iter()
        .map(|r| r.comparison.as_ref().unwrap().delta_text.as_str())
        .collect();
    assert_eq!(deltas, ["+9.76% [+6.80%, +12.75%]", "~"]);
    let geomean = rate.geomean.as_ref().unwrap();
    // The geomean of the rows' own change estimates.
    let ratios: Vec<f64> = rate
        .rows
        .iter()
        .map(|r| r.comparison.as_ref().unwrap().ratio.unwrap())
        .collect();
    let expected = (ratios[0] * ratios[1]).sqrt();
    assert!((geomean.ratio.unwrap() - expected).abs() < 1e-12);
    assert_eq!(geomean.delta_text.as_deref(), Some("+4.76%"));
    let provenance = comparison
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::ProvenanceDiffers)
        .unwrap();
    assert!(
        provenance.message.contains("kernel 6.1.0 vs 6.18.0"),
        "{}",
        provenance.message
    );
}

#[test]
fn a_geomean_needs_positive_centers() {
    let a = three_targets().build();
    let comparison = compare_runs(&a, &a, &AnalyzeOptions::default());
    let errors = comparison
        .tables
        .iter()
        .find(|t| t.metric == Metric::ErrorRate)
        .unwrap();
    let geomean = errors.geomean.as_ref().unwrap();
    assert_eq!((geomean.a, geomean.ratio), (None, Some(1.0)));
    assert_eq!(
        geomean.notes,
        ["summaries must be > 0 to compute a geomean"]
    );
    assert!(comparison.only_in_a.is_empty() && comparison.only_in_b.is_empty());
}

#[test]
fn a_run_compared_with_itself_is_flagged_once() {
    let a = three_targets().build();
    let comparison = compare_runs(&a, &a, &AnalyzeOptions::default());
    let same: Vec<&str> = comparison
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::SameRun)
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        same,
        ["run r1 is compared with itself, so every difference is zero; name two runs"]
    );
    let other = RunBuilder::new("r2", 6)
        .scenario("base", &[], "plaintext", 4)
        .rates(&LOW)
        .build();
    let distinct = compare_runs(&a, &other, &AnalyzeOptions::default());
    assert!(
        distinct
            .warnings
            .iter()
            .all(|w| w.kind != WarningKind::SameRun)
    );
}

#[test]
fn a_users_server_that_ran_another_executable_is_said_in_the_comparison() {
    let mut a = three_targets().build();
    let mut b = a.clone();
    b.run.id = "r2".to_owned();
    a.run.provenance.tool_versions.insert(
        "api executable".to_owned(),
        "sha256:aaaa /srv/api".to_owned(),
    );
    b.run.provenance.tool_versions.insert(
        "api executable".to_owned(),
        "sha256:bbbb /srv/api".to_owned(),
    );
    let comparison = compare_runs(&a, &b, &AnalyzeOptions::default());
    let note = comparison
        .warnings
        .iter()
        .find(|w| w.message.contains("ran another program"))
        .expect("a note on the changed executable");
    assert!(
        note.message
            .contains("api executable: sha256:aaaa /srv/api vs sha256:bbbb /srv/api"),
        "{}",
        note.message
    );
}

#[test]
fn the_same_executable_is_not_a_code_change() {
    let mut a = three_targets().build();
    let mut b = three_targets().build();
    b.run.id = "r2".to_owned();
    for (run, folder) in [(&mut a, "aaaa"), (&mut b, "bbbb")] {
        let provenance = &mut run.run.provenance;
        // The folder's hash differs (a results database grew in it) ...
        provenance
            .target_sources
            .insert("base".to_owned(), folder.to_owned());
        // ... but the same executable ran with the same command line.
        provenance.tool_versions.insert(
            "base executable".to_owned(),
            "sha256:1234 /srv/api".to_owned(),
        );
        provenance
            .tool_versions
            .insert("base command".to_owned(), "./api --port {port}".to_owned());
    }
    let comparison = compare_runs(&a, &b, &AnalyzeOptions::default());
    let said: Vec<&str> = comparison
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::ProvenanceDiffers)
        .map(|w| w.message.as_str())
        .collect();
    assert!(said.is_empty(), "{said:?}");
    b.run.provenance.tool_versions.insert(
        "base executable".to_owned(),
        "sha256:5678 /srv/api".to_owned(),
    );
    let comparison = compare_runs(&a, &b, &AnalyzeOptions::default());
    assert!(
        comparison
            .warnings
            .iter()
            .any(|w| w.message.contains("the sources of base changed"))
    );
}

#[test]
fn a_sweep_within_the_one_target_of_a_run_is_compared_with_its_first_value() {
    let run = RunBuilder::new("r1", 6)
        .scenario("api", &["GOMAXPROCS=1"], "plaintext", 4)
        .rates(&LOW)
        .scenario("api", &["GOMAXPROCS=2"], "plaintext", 4)
        .rates(&HIGH)
        .scenario("api", &["GOMAXPROCS=1"], "json", 4)
        .rates(&LOW)
        .build();
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    let pairs: Vec<(usize, usize)> = analysis
        .comparisons
        .iter()
        .map(|c| (c.scenario, c.baseline))
        .collect();
    // GOMAXPROCS 2 against 1 on plaintext; json has no second value.
    assert_eq!(pairs, vec![(1, 0)]);
    let rate = &analysis.comparisons[0].metrics[0];
    assert_eq!(rate.metric, Metric::RequestsPerS);
    assert!(rate.significant);
}

#[test]
fn each_targets_protocols_are_compared_with_its_own_cleartext_and_full_handshakes_with_resumed() {
    use corobench_model::Protocol;
    let run = RunBuilder::new("r1", 6)
        .scenario("api", &[], "plaintext", 4)
        .rates(&HIGH)
        .scenario("api", &[], "plaintext", 4)
        .speaking(Protocol::TLS, 1, true)
        .rates(&LOW)
        .scenario("api", &[], "plaintext", 4)
        .speaking(Protocol::TLS, 1, false)
        .rates(&LOW)
        .scenario("api", &[], "plaintext", 4)
        .speaking(Protocol::H2C, 10, true)
        .rates(&HIGH)
        .scenario("other", &[], "plaintext", 4)
        .speaking(Protocol::TLS, 1, true)
        .rates(&LOW)
        .build();
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    let pairs: Vec<(usize, usize)> = analysis
        .comparisons
        .iter()
        .map(|c| (c.scenario, c.baseline))
        .collect();
    // `other` over TLS against the baseline (api) over TLS, never its
    // cleartext; then each target's own: TLS and h2c against api's
    // cleartext, full handshakes against resumed ones (`other` has no
    // cleartext scenario of its own).
    assert_eq!(pairs, vec![(4, 1), (1, 0), (2, 1), (3, 0)]);
    let tls = &analysis.comparisons[1].metrics[0];
    assert_eq!(tls.metric, Metric::RequestsPerS);
    assert!(
        tls.significant && tls.ratio.is_some_and(|r| r < 1.0),
        "{tls:?}"
    );
}

#[test]
fn a_slow_stream_beside_is_compared_with_the_same_scenario_without_it() {
    use corobench_model::Protocol;
    let run = RunBuilder::new("r1", 6)
        .scenario("api", &[], "plaintext", 4)
        .speaking(Protocol::H2C, 10, true)
        .rates(&HIGH)
        .scenario("api", &[], "plaintext", 4)
        .speaking(Protocol::H2C, 10, true)
        .beside("plaintext-beside-slow", "/io?ms=200")
        .rates(&LOW)
        .scenario("api", &[], "plaintext", 4)
        .speaking(Protocol::H2C, 100, true)
        .beside("plaintext-m100-beside-slow", "/io?ms=200")
        .rates(&LOW)
        .build();
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    let pairs: Vec<(usize, usize)> = analysis
        .comparisons
        .iter()
        .map(|c| (c.scenario, c.baseline))
        .collect();
    // Only the scenario with the same streams has a base without the slow
    // stream; the one at 100 streams has none, and no scenario with a
    // background is ever a base.
    assert!(pairs.contains(&(1, 0)), "{pairs:?}");
    assert!(!pairs.iter().any(|&(s, _)| s == 2), "{pairs:?}");
    assert!(!pairs.iter().any(|&(_, b)| b != 0), "{pairs:?}");
}
