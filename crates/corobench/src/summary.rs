//! The table printed when a run ends.

use std::io::Write as _;

use corobench_store::Store;

use crate::output::format::{latency_us, rate};

/// Prints the stored run's summary on stdout.
///
/// # Errors
/// The run cannot be read back, or stdout is closed.
pub fn print_run(store: &Store, run_id: &str, _baseline: Option<&str>) -> anyhow::Result<()> {
    let stored = store.load_run(run_id)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "\nrun {run_id}: {} scenarios", stored.scenarios.len())?;
    for scenario in &stored.scenarios {
        let mut values: Vec<(f64, u64)> = stored
            .trials
            .iter()
            .filter(|t| t.scenario_index == scenario.index)
            .filter_map(|t| t.load.as_ref())
            .map(|l| {
                (
                    l.requests_per_s,
                    l.latency.summary.percentile_us(99.0).unwrap_or(0),
                )
            })
            .collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let Some(&(median, p99)) = values.get(values.len() / 2) else {
            writeln!(out, "  {:<50} no successful trial", scenario.key)?;
            continue;
        };
        writeln!(
            out,
            "  {:<50} {:>10} req/s  p99 {:>8}  ({} trials)",
            scenario.key,
            rate(median),
            latency_us(p99 as f64),
            values.len()
        )?;
    }
    Ok(())
}
