//! The plan as `corobench plan` shows it: the scenarios a spec expands
//! into, what each kind of trial does, the claims and the estimated wall
//! time, without running anything.

use std::collections::BTreeMap;
use std::time::Duration;

use corobench_model::{ClaimExpectation, ClaimScenario};
use corobench_spec::{Plan, PlannedClaim};

/// The plan described; the wall time is estimated with `trial_overhead`
/// for each trial's start-up, health check and stop.
#[must_use]
pub fn render(plan: &Plan, trial_overhead: Duration) -> String {
    let mut text = format!("suite {}", plan.name);
    if !plan.description.is_empty() {
        text.push_str(&format!(": {}", plan.description));
    }
    let per_scenario = plan
        .capacity
        .as_ref()
        .map_or(plan.trials.min, |c| c.trials_per_rate);
    let trials = plan.scenarios.len() as u64 * u64::from(per_scenario);
    text.push_str(&format!(
        "\n  {} scenarios × {per_scenario} trials = {trials} trials, interleaved round by round (seed {})\n",
        plan.scenarios.len(),
        plan.seed
    ));
    text.push_str(&adaptive_lines(plan));
    text.push_str(&format!(
        "  server on CPU {}, generator on CPU {}\n",
        cpu_list(&plan.server_cpus),
        cpu_list(&plan.generator_cpus)
    ));
    text.push_str(&trial_lines(plan));
    let estimate = plan.estimated_duration(trial_overhead);
    let programs = if plan.scenarios.iter().any(|s| s.program.is_some()) {
        ", plus the programs' own run time"
    } else {
        ""
    };
    text.push_str(&wall_time_line(plan, estimate, programs));
    for skipped in &plan.skipped_targets {
        text.push_str(&format!(
            "  skipped {}: {}\n",
            skipped.target, skipped.reason
        ));
    }
    for line in plan
        .skipped_protocols
        .iter()
        .map(corobench_spec::SkippedProtocol::line)
    {
        text.push_str(&format!("  {line}\n"));
    }
    if let Some(baseline) = &plan.baseline {
        text.push_str(&format!("  every target is compared with {baseline}\n"));
    }
    text.push_str(&claims_text(&plan.claims));
    text.push('\n');
    for s in &plan.scenarios {
        let database = if s.needs_database {
            "  (PostgreSQL)"
        } else {
            ""
        };
        let what = match s.program.as_ref().and_then(|p| p.server.as_ref()) {
            Some(server) => format!("program beside {server}"),
            None if s.program.is_some() => "program".to_string(),
            None => format!("{} {}", s.workload.method, s.workload.path),
        };
        let what = match &s.workload.background {
            Some(b) => format!("{what}, beside GET {} on {} stream(s)", b.path, b.streams),
            None => what,
        };
        text.push_str(&format!(
            "  {:>4}  {:<56} {what}{database}\n",
            s.index, s.key
        ));
    }
    text
}

/// The estimate, as the most a capacity search can take.
fn wall_time_line(plan: &Plan, estimate: Duration, programs: &str) -> String {
    let most = if plan.capacity.is_some() {
        "at most "
    } else {
        ""
    };
    format!(
        "  estimated wall time: {most}{} (plus first-time builds{programs})\n",
        humantime::format_duration(Duration::from_secs(estimate.as_secs()))
    )
}

/// What an adaptive run adds after the first rounds, and for how long.
fn adaptive_lines(plan: &Plan) -> String {
    let mut text = String::new();
    if let Some(capacity) = &plan.capacity {
        let slos: Vec<String> = capacity.slos.iter().map(ToString::to_string).collect();
        text.push_str(&format!(
            "  capacity search of each scenario for {}: open loop from {} req/s, ×{} while \
             every rate passes, then bisecting to within {:.0}%; {} trials a rate (most must \
             pass), rates {}…{} req/s, at most {} rates; the first rate's trials are counted \
             above, the search adds the rest\n",
            slos.join(" and "),
            capacity.start_rate,
            capacity.growth,
            capacity.precision * 100.0,
            capacity.trials_per_rate,
            capacity.min_rate,
            capacity.max_rate,
            capacity.max_rates
        ));
        return text;
    }
    if let Some(width) = plan.trials.until_ci {
        text.push_str(&format!(
            "  then more trials, up to {}, until each req/s interval is within ±{:.1}%\n",
            plan.trials.max,
            width * 100.0
        ));
    }
    if let Some(budget) = plan.trials.budget {
        text.push_str(&format!(
            "  measuring for at most {}, the widest interval first\n",
            humantime::format_duration(budget)
        ));
    }
    text
}

/// The claims the run's trials will be held against, each side with the
/// scenario it names or why it cannot be measured here.
fn claims_text(claims: &[PlannedClaim]) -> String {
    let mut text = String::new();
    for (i, claim) in claims.iter().enumerate() {
        let expected = match claim.expectation {
            ClaimExpectation::Ratio { ratio, tolerance } => {
                format!("a/b = {ratio} ±{:.0}%", tolerance * 100.0)
            }
            ClaimExpectation::Direction { direction } => direction.as_str().to_owned(),
        };
        text.push_str(&format!(
            "  claim {}: {} ({}, {expected})\n",
            i + 1,
            claim.says,
            claim.metric.label()
        ));
        for (name, side) in [("a", &claim.a), ("b", &claim.b)] {
            let resolved = match &side.resolved {
                ClaimScenario::Scenario(key) => key.to_string(),
                ClaimScenario::Unavailable(reason) => format!("not measured here: {reason}"),
            };
            text.push_str(&format!("    {name} = {} → {resolved}\n", side.selector));
        }
    }
    text
}

/// The warm-up the spec asked for: the shortest any scenario got.
/// What each kind of trial of the plan does, one line each.
fn trial_lines(plan: &Plan) -> String {
    let mut text = String::new();
    if plan.scenarios.iter().any(|s| s.program.is_some()) {
        text.push_str(
            "  each program trial: start its server (if any) fresh, run the program to completion \
             on the generator CPUs (each target's time limit bounds it), stop\n",
        );
    }
    if plan.scenarios.iter().any(|s| s.workload.idle) {
        text.push_str(
            "  each idle trial (idle_connections): start the target, open the connections (each \
             answered once), read RSS once it settles (1–15 s), stop; no load\n",
        );
    }
    let loaded = plan
        .scenarios
        .iter()
        .find(|s| s.program.is_none() && !s.workload.idle);
    if let Some(first) = loaded {
        let m = &first.measurement;
        let warmup = spec_warmup(plan);
        text.push_str(&format!(
            "  each trial: start the target, {warmup:?} warm-up, {:?} measured, {:?} idle and leak check, stop ({} generator thread(s), {})\n",
            m.duration, m.idle, m.generator_threads, m.backend
        ));
        if plan.profile {
            text.push_str(&format!(
                "  then one profile trial per scenario, as above, under `perf record -F {} -g` \
                 from the end of the warm-up; its figures are not kept\n",
                corobench_profile::FREQUENCY_HZ
            ));
        }
        for (target, raised) in raised_warmups(plan, warmup) {
            text.push_str(&format!(
                "  {target}: warm-up raised to {raised:?} (the target's min_warmup_s: its runtime compiles while it serves)\n"
            ));
        }
    }
    text
}

fn spec_warmup(plan: &Plan) -> Duration {
    plan.scenarios
        .iter()
        .map(|s| s.measurement.warmup)
        .min()
        .unwrap_or_default()
}

/// Targets whose own minimum raised their warm-up above the spec's.
fn raised_warmups(plan: &Plan, spec: Duration) -> BTreeMap<&str, Duration> {
    plan.scenarios
        .iter()
        .filter(|s| s.measurement.warmup > spec)
        .map(|s| (s.target.as_str(), s.measurement.warmup))
        .collect()
}

/// `[0, 2, 3]` → `0,2,3`.
fn cpu_list(cpus: &[usize]) -> String {
    let cpus: Vec<String> = cpus.iter().map(usize::to_string).collect();
    cpus.join(",")
}
