//! `[capacity]`: the run searches, for every scenario, the highest open-loop
//! rate that keeps its service level objectives. The spec's scenarios then
//! name what is searched (target × parameters × workload × connections);
//! their schedule becomes an open loop at the first rate, and the runner adds
//! a scenario for every further rate it tries.

use corobench_model::{CapacitySettings, ScenarioKey, Schedule, Slo};
use toml::de::DeValue;

use crate::document::{self, Field, Table, Value};
use crate::error::{Locator, SpecError};
use crate::keys;
use crate::limits::{MAX_RATE, MAX_TRIALS, MIN_RATE};
use crate::plan::PlannedScenario;

use super::settings::fraction;

/// Reads `[capacity]`, if the spec has one.
pub(super) fn read(
    field: Option<&Field<'_>>,
    at: &Locator<'_>,
) -> Result<Option<CapacitySettings>, SpecError> {
    let Some(field) = field else { return Ok(None) };
    let table = Table::read(field.value, "capacity", keys::CAPACITY, at)?;
    let slo = table.require("slo", "slo = \"p99 <= 10ms\"", at)?;
    let slos = objectives(slo.value, at)?;
    let rate = |name: &str, default: f64| -> Result<f64, SpecError> {
        table.get(name).map_or(Ok(default), |f| {
            document::number(f.value, &f.path, ((MIN_RATE..=MAX_RATE), "req/s"), at)
        })
    };
    let start_rate = rate("start_rate", 1_000.0)?;
    let max_rate = rate("max_rate", MAX_RATE)?;
    let min_rate = rate("min_rate", start_rate / 16.0)?;
    let growth = table.get("growth").map_or(Ok(2.0), |f| {
        document::number(f.value, &f.path, ((1.1..=10.0), "times"), at)
    })?;
    let count = |name: &str, default: i64, most: i64| -> Result<u32, SpecError> {
        table
            .get(name)
            .map_or(Ok(default), |f| {
                document::integer(f.value, &f.path, 1..=most, at)
            })
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    let trials_per_rate = count("trials_per_rate", 3, i64::from(MAX_TRIALS))?;
    let max_rates = count("max_rates", 12, 100)?;
    let precision = table
        .get("precision")
        .map_or(Ok(0.05), |f| fraction(f.value, &f.path, at))?;
    check_order(&table, (min_rate, start_rate, max_rate), at)?;
    Ok(Some(CapacitySettings {
        slos,
        start_rate,
        growth,
        max_rate,
        min_rate,
        trials_per_rate,
        precision,
        max_rates,
    }))
}

/// `slo = "p99 <= 10ms"` or a list of them, all of which must hold.
fn objectives(value: &Value<'_>, at: &Locator<'_>) -> Result<Vec<Slo>, SpecError> {
    let items = match value.get_ref() {
        DeValue::Array(items) if items.is_empty() => {
            let message = "an empty list sets no objective; write e.g. slo = \"p99 <= 10ms\"";
            return Err(at.at(value.span(), "capacity.slo", message));
        }
        DeValue::Array(items) => items.iter().collect(),
        _ => vec![value],
    };
    let mut slos: Vec<Slo> = Vec::with_capacity(items.len());
    for item in items {
        let text = document::text(item, "capacity.slo", "\"p99 <= 10ms\"", at)?;
        let slo = text
            .parse::<Slo>()
            .map_err(|e| at.at(item.span(), "capacity.slo", e.to_string()))?;
        // Two objectives on one measure: which was meant cannot be told.
        if let Some(earlier) = slos.iter().find(|s| s.measure == slo.measure) {
            let message = format!(
                "\"{earlier}\" and \"{slo}\" bound the same measure: give each objective once"
            );
            return Err(at.at(item.span(), "capacity.slo", message));
        }
        slos.push(slo);
    }
    Ok(slos)
}

/// min_rate ≤ start_rate ≤ max_rate, or the search has nowhere to go.
fn check_order(
    table: &Table<'_>,
    (min_rate, start_rate, max_rate): (f64, f64, f64),
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    let span_of = |name: &str| {
        table
            .get(name)
            .map_or(table.span.clone(), |f| f.value.span())
    };
    if start_rate > max_rate {
        let message = format!(
            "start_rate {start_rate} is above max_rate {max_rate}; start lower or raise max_rate"
        );
        return Err(at.at(span_of("start_rate"), "capacity.start_rate", message));
    }
    if min_rate > start_rate {
        let message = format!(
            "min_rate {min_rate} is above start_rate {start_rate}: the search starts at \
             start_rate and goes down to min_rate when that fails"
        );
        return Err(at.at(span_of("min_rate"), "capacity.min_rate", message));
    }
    Ok(())
}

/// A scenario to search: its schedule becomes the open loop at the first
/// rate, over the same connections, and its key says so.
#[must_use]
pub fn at_rate(scenario: &PlannedScenario, rate: f64, index: u32) -> PlannedScenario {
    let schedule = Schedule {
        kind: corobench_model::ScheduleKind::Open { rate_per_s: rate },
        ..scenario.schedule
    };
    PlannedScenario {
        index,
        key: ScenarioKey::compose(
            &scenario.target,
            &scenario.parameters,
            &scenario.workload.name,
            &schedule,
        ),
        schedule,
        ..scenario.clone()
    }
}

/// The spec asked both for rates and for a capacity search, which chooses
/// the rates itself.
pub(super) fn refuse_rates(spec: &Table<'_>, at: &Locator<'_>) -> Result<(), SpecError> {
    match schedule_key(spec, "rates") {
        None => Ok(()),
        Some(span) => Err(at.at(
            span,
            "rates",
            "a spec with [capacity] chooses its rates itself; remove `rates` (set where the \
             search starts with capacity.start_rate)",
        )),
    }
}

/// A capacity search runs open loops, which send one request at a time per
/// connection: a pipeline depth would make every trial fail to start.
pub(super) fn refuse_pipelining(
    spec: &Table<'_>,
    scenarios: &[PlannedScenario],
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    let Some(depth) = scenarios
        .iter()
        .map(|s| s.schedule.wire().pipeline)
        .find(|depth| *depth > 1)
    else {
        return Ok(());
    };
    let span = schedule_key(spec, "pipeline").unwrap_or(0..0);
    let message = format!(
        "pipeline = {depth}: a capacity search offers rates in open loops, which send one \
         request at a time per connection; remove `pipeline`"
    );
    Err(at.at(span, "pipeline", message))
}

/// Program targets run to completion and serve no rate: `rates` in a spec
/// of program targets alone would apply to nothing.
pub(super) fn refuse_rates_for_programs(
    spec: &Table<'_>,
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    match schedule_key(spec, "rates") {
        None => Ok(()),
        Some(span) => Err(at.at(
            span,
            "rates",
            "every target of this spec is a program, which runs to completion rather than \
             serve a rate: `rates` would apply to nothing; remove it",
        )),
    }
}

/// Where a schedule key is written: in `[schedule]`, or else in the first
/// workload that sets it.
pub(super) fn schedule_key(spec: &Table<'_>, name: &str) -> Option<std::ops::Range<usize>> {
    let in_schedule = spec.get("schedule").and_then(|f| field_in(f.value, name));
    in_schedule.or_else(|| {
        spec.get("workloads").and_then(|f| match f.value.get_ref() {
            DeValue::Array(items) => items.iter().find_map(|w| field_in(w, name)),
            _ => None,
        })
    })
}

fn field_in(value: &Value<'_>, name: &str) -> Option<std::ops::Range<usize>> {
    match value.get_ref() {
        DeValue::Table(table) => table
            .iter()
            .find(|(k, _)| k.get_ref().as_ref() == name)
            .map(|(k, _)| k.span()),
        _ => None,
    }
}

/// Program targets serve no rate: a capacity search cannot measure them.
pub(super) fn refuse_programs(
    scenarios: &[PlannedScenario],
    capacity: Option<&Field<'_>>,
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    let Some(program) = scenarios.iter().find(|s| s.program.is_some()) else {
        return Ok(());
    };
    let span = capacity.map_or(0..0, |f| f.key_span.clone());
    let message = format!(
        "{} is a program target: it runs to completion rather than serve a rate, so a \
         capacity search cannot measure it; run it from a spec without [capacity]",
        program.target
    );
    Err(at.at(span, "capacity", message))
}
