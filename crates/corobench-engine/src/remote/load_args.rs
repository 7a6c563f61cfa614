//! One builder of a generator host's `corobench load` arguments, for runs
//! over SSH and for Kubernetes layouts alike: each generator's share of
//! the scenario's connections and rate, and the flags that carry the
//! measurement, the schedule and the request head.

use std::time::Duration;

use corobench_model::ScheduleKind;
use corobench_spec::PlannedScenario;

/// One generator's part of a scenario's load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    pub connections: u32,
    /// Requests a second, for an open loop.
    pub rate: Option<f64>,
}

/// Generator `index` of `count`: the connections split as evenly as they
/// go (the first `total % count` generators take one more), the rate
/// split evenly, so that together they offer the scenario's load.
#[must_use]
pub fn share(scenario: &PlannedScenario, index: usize, count: usize) -> Share {
    let count = u32::try_from(count.max(1)).unwrap_or(u32::MAX);
    let index = u32::try_from(index).unwrap_or(u32::MAX);
    let total = scenario.schedule.connections;
    Share {
        connections: total / count + u32::from(index < total % count),
        rate: split_rate(scenario, count),
    }
}

/// The one share every generator gets when they all run the same
/// arguments (the pods of one Job).
///
/// # Errors
/// Connections that do not split evenly over `count` generators.
pub fn even_share(scenario: &PlannedScenario, count: u32) -> Result<Share, String> {
    let count = count.max(1);
    let total = scenario.schedule.connections;
    if total % count != 0 || total < count {
        let dividing: Vec<String> = (1..=total.min(64))
            .filter(|n| total % n == 0)
            .map(|n| n.to_string())
            .collect();
        return Err(format!(
            "scenario {} ({}) opens {total} connections, which do not split evenly into {count} \
             generators running the same arguments: choose a count that divides {total} ({})",
            scenario.index,
            scenario.key,
            dividing.join(", ")
        ));
    }
    Ok(Share {
        connections: total / count,
        rate: split_rate(scenario, count),
    })
}

fn split_rate(scenario: &PlannedScenario, count: u32) -> Option<f64> {
    match scenario.schedule.kind {
        ScheduleKind::Closed => None,
        ScheduleKind::Open { rate_per_s } => Some(rate_per_s / f64::from(count)),
    }
}

/// The flags of one generator's `corobench load` for `share`, on event
/// loop `backend`: all but the body, the CPUs, the start and the URL. A
/// generator runs no more threads than it has connections.
#[must_use]
pub fn load_args(scenario: &PlannedScenario, share: Share, backend: &str) -> Vec<String> {
    let m = &scenario.measurement;
    let threads = m.generator_threads.min(share.connections).max(1);
    let mut args: Vec<String> = vec![
        "-c".into(),
        share.connections.to_string(),
        "-t".into(),
        threads.to_string(),
        "-d".into(),
        cli_duration(m.duration),
        "--warmup".into(),
        cli_duration(m.warmup),
        "--timeout".into(),
        cli_duration(m.timeout),
        "--backend".into(),
        backend.to_owned(),
        "-m".into(),
        scenario.workload.method.clone(),
    ];
    if let Some(rate) = share.rate {
        args.extend(["-R".into(), format!("{rate}")]);
    }
    if !scenario.schedule.keepalive {
        args.push("--no-keepalive".into());
    }
    if scenario.schedule.pipeline > 1 {
        args.extend(["--pipeline".into(), scenario.schedule.pipeline.to_string()]);
    }
    for (name, value) in &scenario.workload.headers {
        args.extend(["-H".into(), format!("{name}: {value}")]);
    }
    args
}

/// A duration as `corobench load` parses it, without rounding.
#[must_use]
pub fn cli_duration(duration: Duration) -> String {
    if duration.subsec_nanos() % 1_000_000 == 0 {
        format!("{}ms", duration.as_millis())
    } else {
        format!("{}us", duration.as_micros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_keep_their_precision() {
        assert_eq!(cli_duration(Duration::from_secs(10)), "10000ms");
        assert_eq!(cli_duration(Duration::from_micros(1500)), "1500us");
        assert_eq!(cli_duration(Duration::ZERO), "0ms");
    }
}
