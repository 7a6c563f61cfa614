//! The table printed when a run ends: the stored run, analysed once and
//! rendered as `corobench report RUN` would, except that the verdicts on
//! the suite's published claims come last, where the eye lands.

use std::io::Write as _;

use corobench_report::{Format, RenderOptions};
use corobench_store::Store;

use corobench_analyze::{AnalyzeOptions, analyze_run};

/// Prints the stored run's report table on stdout.
///
/// # Errors
/// The run cannot be read back, an unknown baseline target (exit 2), or a
/// closed stdout.
pub fn print_run(
    store: &Store,
    run_id: &str,
    baseline: Option<&str>,
    color: bool,
) -> anyhow::Result<()> {
    let stored = store.load_run(run_id)?;
    let options = AnalyzeOptions {
        baseline: baseline.map(str::to_string),
        ..AnalyzeOptions::default()
    };
    let analysis = analyze_run(&stored, &options)?;
    let mut out = std::io::stdout().lock();
    writeln!(out)?;
    let options = RenderOptions {
        color,
        detail: false,
        claims_last: true,
    };
    corobench_report::render_with(Format::Table, &analysis, options, &mut out)?;
    out.flush()?;
    Ok(())
}
