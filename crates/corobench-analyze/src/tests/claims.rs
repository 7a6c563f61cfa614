//! Published claims judged on trials whose truth is known: a ratio of 2
//! with modest noise, a wide spread, too few trials, generator-bound sides,
//! a side that could not run, and a program's own figures.

use corobench_model::StoredRun;
use corobench_model::{
    ClaimDirection, ClaimExpectation, ClaimOutcome, ClaimRecord, ClaimScenario, ClaimSide,
    ClaimVerdict, Metric, ProgramUnit,
};

use crate::fixtures::{RunBuilder, generator_bound};
use crate::{AnalyzeOptions, analyze_run};

/// b's req/s, and a's at twice b's with noise of about 1%.
const B: [f64; 6] = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];
const A: [f64; 6] = [201.0, 199.0, 203.0, 198.0, 202.0, 200.0];
const A_KEY: &str = "fast/plaintext/c=64";
const B_KEY: &str = "slow/plaintext/c=64";

fn side(target: &str, resolved: ClaimScenario) -> ClaimSide {
    ClaimSide {
        selector: target.to_owned(),
        target: target.to_owned(),
        resolved,
    }
}

fn scenario(key: &str) -> ClaimScenario {
    ClaimScenario::Scenario(key.into())
}

fn claim(
    metric: Metric,
    a: ClaimScenario,
    b: ClaimScenario,
    expectation: ClaimExpectation,
) -> ClaimRecord {
    ClaimRecord {
        source: "a blog post".to_owned(),
        says: "fast serves twice what slow serves".to_owned(),
        workload: Some("plaintext".to_owned()),
        metric,
        a: side("fast", a),
        b: side("slow", b),
        expectation,
        published: None,
    }
}

fn ratio(ratio: f64) -> ClaimExpectation {
    ClaimExpectation::Ratio {
        ratio,
        tolerance: 0.10,
    }
}

/// fast at `a` req/s against slow at `b`.
fn run(a: &[f64], b: &[f64]) -> StoredRun {
    RunBuilder::new("r1", 6)
        .scenario("fast", &[], "plaintext", 64)
        .rates(a)
        .scenario("slow", &[], "plaintext", 64)
        .rates(b)
        .build()
}

/// The verdicts on `claims` about `run`.
fn judged(mut run: StoredRun, claims: Vec<ClaimRecord>) -> Vec<ClaimVerdict> {
    run.run.claims = claims;
    analyze_run(&run, &AnalyzeOptions::default())
        .unwrap()
        .claims
}

fn rps_claims(expectations: &[ClaimExpectation]) -> Vec<ClaimRecord> {
    expectations
        .iter()
        .map(|e| claim(Metric::RequestsPerS, scenario(A_KEY), scenario(B_KEY), *e))
        .collect()
}

#[test]
fn a_true_ratio_of_two_is_consistent_with_two_and_refutes_one_and_a_half() {
    let verdicts = judged(
        run(&A, &B),
        rps_claims(&[ratio(2.0), ratio(1.5), ratio(3.06)]),
    );
    let [two, one_and_a_half, three] = verdicts.as_slice() else {
        panic!("three verdicts: {verdicts:#?}");
    };
    assert_eq!(two.outcome, ClaimOutcome::Consistent, "{}", two.why);
    let measured = two.ratio.as_ref().unwrap();
    assert!((measured.estimate - 2.0).abs() < 0.02, "{measured:?}");
    assert!(measured.lo.unwrap() < 2.0 && measured.hi.unwrap() > 2.0);
    assert_eq!(two.claimed_text, "2× ±10%");
    assert!(two.ratio_text.starts_with("2.00× ["), "{}", two.ratio_text);
    assert_eq!(two.verdict_text, "consistent");
    assert_eq!(
        (
            two.a.as_ref().unwrap().median,
            two.b.as_ref().unwrap().median
        ),
        (200.5, 100.25)
    );
    assert_eq!(one_and_a_half.outcome, ClaimOutcome::RefutedHigher);
    assert!(
        one_and_a_half.why.contains(
            "where 1.5× was claimed: 33.3% higher (the interval lies wholly above 1.36–1.65×)"
        ),
        "{}",
        one_and_a_half.why
    );
    assert_eq!(three.outcome, ClaimOutcome::RefutedLower);
    assert_eq!(three.verdict_text, "refuted (lower)");
    assert!(three.why.contains("34.6% lower"), "{}", three.why);
}

#[test]
fn a_wide_spread_over_six_trials_is_inconclusive_and_says_what_would_decide() {
    let a = [50.0, 400.0, 120.0, 300.0, 80.0, 200.0];
    let b = [100.0, 60.0, 250.0, 90.0, 150.0, 110.0];
    let verdicts = judged(run(&a, &b), rps_claims(&[ratio(1.2)]));
    let verdict = &verdicts[0];
    assert_eq!(
        verdict.outcome,
        ClaimOutcome::Inconclusive,
        "{}",
        verdict.why
    );
    assert!(
        verdict
            .why
            .contains("the interval is wider than the claim's band 1.09–1.32×")
            && verdict
                .why
                .contains("trials per side at this spread (--trials), or a quieter machine"),
        "{}",
        verdict.why
    );
}

#[test]
fn too_few_trials_give_a_ratio_without_an_interval() {
    let verdicts = judged(run(&A[..3], &B[..3]), rps_claims(&[ratio(2.0)]));
    let verdict = &verdicts[0];
    assert_eq!(verdict.outcome, ClaimOutcome::Inconclusive);
    let measured = verdict.ratio.as_ref().unwrap();
    assert_eq!((measured.lo, measured.hi), (None, None));
    assert_eq!(verdict.ratio_text, "2.01× (no interval)");
    assert!(
        verdict.why.contains(
            "3 and 3 trials are too few for a 95% interval of the ratio (it needs 4 a side); \
             rerun with --trials 6 or more"
        ),
        "{}",
        verdict.why
    );
}

/// The run with every trial of scenario `index` generator-bound.
fn bound(mut run: StoredRun, index: u32) -> StoredRun {
    for trial in run.trials.iter_mut().filter(|t| t.scenario_index == index) {
        generator_bound(trial);
    }
    run
}

#[test]
fn a_generator_bound_side_only_supports_the_verdict_its_bound_allows() {
    let claims = || rps_claims(&[ratio(3.06), ratio(1.5), ratio(2.0)]);
    // a's req/s is a lower bound: the true a/b may be higher than measured.
    let verdicts = judged(bound(run(&A, &B), 0), claims());
    let outcomes: Vec<ClaimOutcome> = verdicts.iter().map(|v| v.outcome).collect();
    assert_eq!(
        outcomes,
        [
            ClaimOutcome::Inconclusive,
            ClaimOutcome::RefutedHigher,
            ClaimOutcome::Inconclusive
        ]
    );
    assert!(
        verdicts[0].why.contains(
            "but a (fast) was generator-bound in 6 of 6 trials: its req/s is a lower bound of the target's, so 'refuted (lower)' cannot be concluded"
        ),
        "{}",
        verdicts[0].why
    );
    assert!(
        verdicts[1].why.ends_with("which only strengthens this"),
        "{}",
        verdicts[1].why
    );
    assert_eq!(verdicts[0].a.as_ref().unwrap().generator_bound_trials, 6);
    // b's req/s is a lower bound: the true a/b may be lower than measured.
    let verdicts = judged(bound(run(&A, &B), 1), claims());
    let outcomes: Vec<ClaimOutcome> = verdicts.iter().map(|v| v.outcome).collect();
    assert_eq!(
        outcomes,
        [
            ClaimOutcome::RefutedLower,
            ClaimOutcome::Inconclusive,
            ClaimOutcome::Inconclusive
        ]
    );
    // Both bound: nothing can be concluded.
    let verdicts = judged(bound(bound(run(&A, &B), 0), 1), claims());
    assert!(
        verdicts
            .iter()
            .all(|v| v.outcome == ClaimOutcome::Inconclusive)
    );
}

#[test]
fn a_side_that_could_not_run_or_measured_nothing_is_not_measured_here() {
    let skipped = ClaimScenario::Unavailable(
        "`php` is not on PATH (build the Swoole 6 extension; see targets/swoole-uring/README.md)"
            .to_owned(),
    );
    let failing = RunBuilder::new("r1", 6)
        .scenario("fast", &[], "plaintext", 64)
        .rates(&A)
        .scenario("slow", &[], "plaintext", 64)
        .failed("the target exited during the measurement: status 2\nstderr tail")
        .failed("the target exited during the measurement: status 2")
        .build();
    let claims = vec![
        claim(Metric::RequestsPerS, skipped, scenario(B_KEY), ratio(3.06)),
        claim(
            Metric::RequestsPerS,
            scenario(A_KEY),
            scenario(B_KEY),
            ratio(2.0),
        ),
    ];
    let verdicts = judged(failing, claims);
    assert_eq!(verdicts[0].outcome, ClaimOutcome::NotMeasured);
    assert_eq!(verdicts[0].verdict_text, "not measured here");
    assert_eq!(
        verdicts[0].why,
        "a (fast) could not run where the run was planned: `php` is not on PATH (build the Swoole 6 extension; see targets/swoole-uring/README.md)"
    );
    assert!(verdicts[0].a.is_none() && verdicts[0].ratio.is_none());
    assert_eq!(verdicts[0].ratio_text, "—");
    assert_eq!(verdicts[1].outcome, ClaimOutcome::NotMeasured);
    assert_eq!(
        verdicts[1].why,
        "b (slow) has no successful trial: 2 failed, e.g. the target exited during the measurement: status 2"
    );
    assert!(verdicts[1].a.is_some(), "a's figure is still shown");
}

#[test]
fn a_claim_about_a_programs_own_figure_is_judged_on_it() {
    let tasks = Metric::Program(ProgramUnit::new("tasks/s"));
    let run = RunBuilder::new("r1", 6)
        .scenario("go-ants-tasks", &["pool_size=50"], "program", 0)
        .figures("tasks/s", &[1440.0, 1445.0, 1438.0, 1446.0, 1442.0, 1441.0])
        .scenario("go-ants-tasks", &["pool_size=200"], "program", 0)
        .figures("tasks/s", &[5710.0, 5730.0, 5690.0, 5725.0, 5702.0, 5718.0])
        .build();
    let pool = |size: u32| scenario(&format!("go-ants-tasks/pool_size={size}/program/c=0"));
    let mut rising = claim(tasks, pool(200), pool(50), ratio(2210.0 / 1850.0));
    rising.workload = None;
    let mut four = rising.clone();
    four.expectation = ratio(4.0);
    let verdicts = judged(run, vec![rising, four]);
    assert_eq!(
        verdicts[0].outcome,
        ClaimOutcome::RefutedHigher,
        "{}",
        verdicts[0].why
    );
    assert_eq!(
        verdicts[1].outcome,
        ClaimOutcome::Consistent,
        "{}",
        verdicts[1].why
    );
    assert_eq!(verdicts[1].a.as_ref().unwrap().median, 5714.0);
}

#[test]
fn direction_claims_are_judged_by_the_u_test() {
    let direction = |direction| ClaimExpectation::Direction { direction };
    let claims = rps_claims(&[
        direction(ClaimDirection::AGreater),
        direction(ClaimDirection::ALess),
    ]);
    let verdicts = judged(run(&A, &B), claims.clone());
    assert_eq!(verdicts[0].outcome, ClaimOutcome::Consistent);
    let p = verdicts[0].p_value.unwrap();
    assert!((p - 2.0 / 924.0).abs() < 1e-12, "{p}");
    assert!(
        verdicts[0].why.starts_with("measured a>b (2.00× ["),
        "{}",
        verdicts[0].why
    );
    assert_eq!(verdicts[1].outcome, ClaimOutcome::RefutedHigher);
    assert!(
        verdicts[1].why.ends_with("where a<b was claimed"),
        "{}",
        verdicts[1].why
    );
    // Indistinguishable samples decide nothing.
    let verdicts = judged(
        run(&B, &[99.5, 101.5, 98.5, 100.0, 100.8, 99.2]),
        claims.clone(),
    );
    assert_eq!(verdicts[0].outcome, ClaimOutcome::Inconclusive);
    assert!(
        verdicts[0].why.contains("more trials or a quieter machine"),
        "{}",
        verdicts[0].why
    );
    // Three trials a side can never reach p ≤ 0.05.
    let verdicts = judged(run(&A[..3], &B[..3]), claims);
    assert!(
        verdicts[0]
            .why
            .contains("3 and 3 trials cannot reach p ≤ 0.05 at all"),
        "{}",
        verdicts[0].why
    );
}

/// fast and slow at 100 req/s, failing these shares of their requests.
fn erring(a: &[f64], b: &[f64]) -> StoredRun {
    let mut run = run(&[100.0; 6][..a.len()], &[100.0; 6][..b.len()]);
    let rates = a.iter().chain(b);
    for (trial, rate) in run.trials.iter_mut().zip(rates) {
        trial.load.as_mut().unwrap().error_rate = *rate;
    }
    run
}

#[test]
fn a_figure_only_a_has_is_judged_on_every_trial() {
    let only_a = ClaimExpectation::Direction {
        direction: ClaimDirection::OnlyA,
    };
    let claims = vec![claim(
        Metric::ErrorRate,
        scenario(A_KEY),
        scenario(B_KEY),
        only_a,
    )];
    let some = [0.0, 0.0002, 0.0, 0.0001, 0.0, 0.0];
    let none = [0.0; 6];
    let verdict = &judged(erring(&some, &none), claims.clone())[0];
    assert_eq!(verdict.outcome, ClaimOutcome::Consistent, "{}", verdict.why);
    assert_eq!(verdict.claimed_text, "a>0,b=0");
    assert_eq!(
        verdict.why,
        "a measured above 0 in 2 of 6 trials (up to 0.000200), b was 0 in all 6"
    );
    let verdict = &judged(
        erring(&some, &[0.0, 0.0, 0.0, 0.0, 0.0001, 0.0]),
        claims.clone(),
    )[0];
    assert_eq!(
        verdict.outcome,
        ClaimOutcome::RefutedLower,
        "{}",
        verdict.why
    );
    assert!(
        verdict
            .why
            .starts_with("b measured above 0 in 1 of 6 trials"),
        "{}",
        verdict.why
    );
    let verdict = &judged(erring(&none, &none), claims)[0];
    assert_eq!(
        verdict.outcome,
        ClaimOutcome::Inconclusive,
        "{}",
        verdict.why
    );
    assert!(
        verdict
            .why
            .starts_with("both were 0 in every trial (6 and 6)"),
        "{}",
        verdict.why
    );
}

#[test]
fn claims_on_connection_reuse_read_the_pools_own_counters() {
    use corobench_model::{PoolCounters, PoolFigure, PoolWindow};
    let mut run = run(&[100.0; 6], &[100.0; 6]);
    // fast opened 50 connections for 1,000 checkouts, slow 10.
    for (i, trial) in run.trials.iter_mut().enumerate() {
        let opened = if i < 6 { 50 } else { 10 };
        let counted = |acquires, new_connections| PoolCounters {
            acquires: Some(acquires),
            new_connections: Some(new_connections),
            ..PoolCounters::default()
        };
        trial.pool = Some(PoolWindow {
            before: counted(0, 0),
            after: counted(1_000, opened),
        });
    }
    let reuse = Metric::Pool(PoolFigure::Reuse);
    let less = ClaimExpectation::Direction {
        direction: ClaimDirection::ALess,
    };
    let claims = vec![claim(reuse, scenario(A_KEY), scenario(B_KEY), less)];
    let verdict = &judged(run, claims)[0];
    assert_eq!(verdict.outcome, ClaimOutcome::Consistent, "{}", verdict.why);
    assert_eq!(verdict.a.as_ref().unwrap().median, 0.95);
    assert_eq!(verdict.b.as_ref().unwrap().median, 0.99);
}
