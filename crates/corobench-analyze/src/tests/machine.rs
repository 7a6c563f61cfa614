//! The machine-speed probe: its spread, where a run's spread came from,
//! comparisons within it, and normalising req/s by it, on synthetic runs
//! whose truth is known.

use corobench_model::{MachineProbe, Metric, SpreadSource, StoredRun, WarningKind};

use crate::fixtures::RunBuilder;
use crate::{AnalyzeOptions, analyze_run};

/// A reproducible sequence in [0, 1): the test's own machine and servers.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A factor in 1 ± `amplitude`.
    fn factor(&mut self, amplitude: f64) -> f64 {
        1.0 + amplitude * (2.0 * self.next() - 1.0)
    }
}

/// One trial of a two-target run: the machine's speed factor during it
/// (which the probe sees), and the server's own factor (which it does not).
#[derive(Clone, Copy)]
struct Moment {
    machine: f64,
    server: f64,
    probe_noise: f64,
}

/// Moments drawn from `seed`: the machine, the server and the probe's own
/// noise each swing by ± their amplitude in `[machine, server, probe]`.
fn swings(seed: u64, amplitudes: [f64; 3]) -> impl FnMut() -> Moment {
    let mut dice = Dice(seed);
    move || Moment {
        machine: dice.factor(amplitudes[0]),
        server: dice.factor(amplitudes[1]),
        probe_noise: dice.factor(amplitudes[2]),
    }
}

/// Two targets, `a` at 1000 req/s and `b` at 1100 (true ratio 1.1), with
/// `n` trials each; trial `i` of each side runs at `moments(i)`. When the
/// probe follows the machine, req/s is the true value × machine × server.
fn run(n: usize, probe_follows_machine: bool, moments: &mut dyn FnMut() -> Moment) -> StoredRun {
    let mut builder = RunBuilder::new("r1", u32::try_from(n).unwrap());
    let mut probes = Vec::new();
    for (target, truth) in [("a", 1000.0), ("b", 1100.0)] {
        let mut rates = Vec::new();
        for _ in 0..n {
            let m = moments();
            let machine_in_rate = if probe_follows_machine {
                m.machine
            } else {
                1.0
            };
            rates.push(truth * machine_in_rate * m.server);
            probes.push(MachineProbe {
                server_mb_per_s: 500.0 * m.machine * m.probe_noise,
                generator_mb_per_s: 600.0 * m.machine * m.probe_noise,
            });
        }
        builder = builder.scenario(target, &[], "plaintext", 4).rates(&rates);
    }
    let mut run = builder.build();
    for (trial, probe) in run.trials.iter_mut().zip(probes) {
        trial.probe = Some(probe);
    }
    run
}

fn ratio_and_width(run: &StoredRun, normalise: bool) -> (f64, f64) {
    let options = AnalyzeOptions {
        normalise_by_probe: normalise,
        ..AnalyzeOptions::default()
    };
    let analysis = analyze_run(run, &options).unwrap();
    assert_eq!(analysis.settings.normalise_by_probe, normalise);
    let ratio = analysis.comparisons[0]
        .metrics
        .iter()
        .find(|m| m.metric == Metric::RequestsPerS)
        .and_then(|m| m.ratio)
        .unwrap();
    let b = &analysis.scenarios[1].metrics[&Metric::RequestsPerS];
    let width = (b.ci_hi.unwrap() - b.ci_lo.unwrap()) / b.median;
    (ratio, width)
}

#[test]
fn normalising_recovers_the_true_ratio_and_narrows_the_interval() {
    let mut moments = swings(7, [0.15, 0.01, 0.01]);
    let run = run(12, true, &mut moments);
    let (raw_ratio, raw_width) = ratio_and_width(&run, false);
    let (ratio, width) = ratio_and_width(&run, true);
    assert!((ratio / 1.1 - 1.0).abs() < 0.02, "normalised ratio {ratio}");
    assert!(
        (ratio / 1.1 - 1.0).abs() < (raw_ratio / 1.1 - 1.0).abs(),
        "normalised {ratio} is no closer to 1.1 than raw {raw_ratio}"
    );
    assert!(
        width < raw_width / 2.0,
        "interval {width} not narrower than {raw_width}"
    );
}

#[test]
fn a_probe_unrelated_to_the_servers_does_not_bias_the_ratio() {
    let mut moments = swings(11, [0.10, 0.05, 0.0]);
    let run = run(101, false, &mut moments);
    let (raw_ratio, _) = ratio_and_width(&run, false);
    let (ratio, _) = ratio_and_width(&run, true);
    assert!(
        (raw_ratio / 1.1 - 1.0).abs() < 0.02,
        "raw ratio {raw_ratio}"
    );
    assert!((ratio / 1.1 - 1.0).abs() < 0.03, "normalised ratio {ratio}");
}

#[test]
fn a_varying_machine_is_named_as_the_source_and_close_comparisons_are_marked() {
    let mut moments = swings(3, [0.15, 0.01, 0.0]);
    let analysis = analyze_run(&run(6, true, &mut moments), &AnalyzeOptions::default()).unwrap();
    let machine = analysis.machine.as_ref().expect("the trials carry probes");
    assert_eq!(machine.source, SpreadSource::Machine);
    assert_eq!(machine.server.trials, 12);
    assert!(machine.server.half_range > 0.1, "{machine:?}");
    assert!(
        machine.text.contains("comes from the machine's own speed"),
        "{}",
        machine.text
    );
    let within = analysis
        .warnings
        .iter()
        .position(|w| w.kind == WarningKind::WithinMachineVariation)
        .expect("a 10% difference within a ±15% machine is marked");
    assert_eq!(analysis.warnings[within].scenarios, vec!["b/plaintext/c=4"]);
    assert!(analysis.scenarios[1].warnings.contains(&within));
    assert!(
        analysis
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::MachineSpeed && w.message == machine.text)
    );
}

#[test]
fn a_steady_machine_leaves_the_spread_to_the_servers_and_advises_accordingly() {
    let mut moments = swings(5, [0.002, 0.15, 0.0]);
    let analysis = analyze_run(&run(6, true, &mut moments), &AnalyzeOptions::default()).unwrap();
    let machine = analysis.machine.as_ref().unwrap();
    assert_eq!(machine.source, SpreadSource::Servers);
    assert!(
        machine
            .text
            .contains("quieting the machine will not narrow it")
    );
    let wide = analysis
        .warnings
        .iter()
        .find(|w| w.kind == WarningKind::WideCi)
        .expect("servers varying ±15% give a wide interval");
    assert!(
        wide.message.ends_with(
            "the machine-speed probe was steady, so the servers themselves varied: add trials"
        ) && !wide.message.contains("quiet the machine"),
        "{}",
        wide.message
    );
    assert!(
        !analysis
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::WithinMachineVariation)
    );
}

#[test]
fn a_run_without_probes_says_nothing_of_the_machine() {
    let mut moments = swings(5, [0.1, 0.0, 0.0]);
    let mut run = run(6, true, &mut moments);
    for trial in &mut run.trials {
        trial.probe = None;
    }
    let analysis = analyze_run(&run, &AnalyzeOptions::default()).unwrap();
    assert!(analysis.machine.is_none());
    assert!(!analysis.warnings.iter().any(|w| matches!(
        w.kind,
        WarningKind::MachineSpeed | WarningKind::WithinMachineVariation
    )));
}

#[test]
fn normalising_is_advised_only_where_it_narrows_the_intervals() {
    // The probe follows the machine, which moves the servers: it helps.
    let mut moments = swings(3, [0.15, 0.01, 0.0]);
    let helped = analyze_run(&run(6, true, &mut moments), &AnalyzeOptions::default()).unwrap();
    let text = &helped.machine.as_ref().unwrap().text;
    assert!(
        text.contains("`report --normalise-by-probe` here"),
        "{text}"
    );
    // The probe swings as much, but the servers do not follow it:
    // normalising would widen their intervals, so it is not advised.
    let mut moments = swings(3, [0.15, 0.01, 0.0]);
    let unrelated = analyze_run(&run(6, false, &mut moments), &AnalyzeOptions::default()).unwrap();
    let machine = unrelated.machine.as_ref().unwrap();
    assert_eq!(machine.source, SpreadSource::Machine);
    assert!(!machine.text.contains("normalise"), "{}", machine.text);
}
