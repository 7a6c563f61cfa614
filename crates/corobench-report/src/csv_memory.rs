//! `--format csv-memory`: one row per target and idle workload with the
//! bytes per connection fitted over its trials, the slope's interval, the
//! line's intercept and the numbers of connections swept. Raw numbers; an
//! empty cell where there is no fit or interval.

use std::io::{self, Write};

use corobench_model::RunAnalysis;

use crate::csv::write_row;

/// Writes the table (a header only for a run without idle workloads).
pub(crate) fn write(analysis: &RunAnalysis, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "run,target,workload,scenarios,connections,trials,bytes_per_connection,ci_lo,ci_hi,\
         ci_confidence,intercept_bytes,note"
    )?;
    let number = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for fit in &analysis.memory_per_connection {
        let keys: Vec<&str> = fit
            .scenarios
            .iter()
            .filter_map(|i| analysis.scenarios.get(*i as usize))
            .map(|s| s.scenario.key.as_str())
            .collect();
        let levels: Vec<String> = fit.connections.iter().map(u32::to_string).collect();
        write_row(
            out,
            &[
                analysis.run.id.clone(),
                fit.label.clone(),
                fit.workload.clone(),
                keys.join(" "),
                levels.join(" "),
                fit.trials.to_string(),
                number(fit.bytes_per_connection),
                number(fit.interval.map(|i| i.0)),
                number(fit.interval.map(|i| i.1)),
                analysis.settings.confidence.to_string(),
                number(fit.intercept_bytes),
                fit.note.clone().unwrap_or_default(),
            ],
        )?;
    }
    Ok(())
}
