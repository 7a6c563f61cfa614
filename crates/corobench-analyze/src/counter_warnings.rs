//! Kernel counters a scenario's trials ran without: each reason once, with
//! the metrics it left out, so the reader knows which figure is missing
//! and what would bring it back.

use std::collections::BTreeMap;

use corobench_model::{Cost, KernelCounter, Metric, PerRequest, Side, TrialStatus, WarningKind};

use super::warnings::{Found, ScenarioFacts};

/// One warning per distinct reason a counter was missing in the `ok` trials.
pub(crate) fn missing_counters(facts: &ScenarioFacts<'_>) -> Vec<Found> {
    let mut by_reason: BTreeMap<&str, Vec<Metric>> = BTreeMap::new();
    let missing = facts
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Ok)
        .filter_map(|t| t.counters.as_ref())
        .flat_map(|c| c.missing.iter());
    for m in missing {
        let metric = Metric::PerRequest(metric_of(m.side, m.counter));
        let metrics = by_reason.entry(m.reason.as_str()).or_default();
        if !metrics.contains(&metric) {
            metrics.push(metric);
        }
    }
    by_reason
        .into_iter()
        .map(|(reason, metrics)| {
            let labels: Vec<&str> = metrics.iter().map(|m| m.label()).collect();
            Found::new(
                WarningKind::CountersMissing,
                format!(
                    "{} not measured: the kernel counter was refused ({reason}); the trials ran \
                     and were stored without it",
                    labels.join(", ")
                ),
            )
            .about(metrics)
        })
        .collect()
}

fn metric_of(side: Side, counter: KernelCounter) -> PerRequest {
    let cost = match counter {
        KernelCounter::Syscalls => Cost::Syscalls,
        KernelCounter::ContextSwitches => Cost::ContextSwitches,
        KernelCounter::MinorFaults => Cost::MinorFaults,
    };
    PerRequest { side, cost }
}
