//! `corobench export RUN… -o FILE`: stored runs as one portable run file,
//! for another machine, a repository or an archive (`corobench import`
//! reads it back).

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use corobench_store::StoreError;

use super::shared::{DbArg, open_store};
use crate::exit::{Exit, usage};

/// Flags of `corobench export`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench export latest -o run.json.gz\n  \
    corobench export 20261127-124609-f82d 20261127-121020-bbc3 -o amd-epyc.json.gz\n  \
    zcat run.json.gz | jq '.runs[0].run.provenance'      the file is gzip-compressed JSON")]
pub struct ExportArgs {
    /// The runs: ids, unique prefixes of them, or `latest`
    #[arg(value_name = "RUN", required = true)]
    pub runs: Vec<String>,

    /// The run file to write (gzip-compressed JSON, docs/output.md); replaced when it exists
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,

    #[command(flatten)]
    pub db: DbArg,
}

/// Runs `corobench export`.
///
/// # Errors
/// A missing database, an unknown run or a run still running (exit 2), or
/// a file that cannot be written.
pub fn run(args: &ExportArgs) -> anyhow::Result<Exit> {
    let store = open_store(&args.db.db)?;
    let mut ids: Vec<String> = Vec::new();
    for given in &args.runs {
        let id = store.resolve_run_id(given)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut runs = Vec::with_capacity(ids.len());
    for id in &ids {
        let run = store.run_to_export(id).map_err(|error| match error {
            StoreError::StillRunning { .. } => usage(format!(
                "{error} (`{}`)",
                crate::commands::hints::resume_command(id, &args.db.db)
            )),
            other => anyhow::Error::new(other),
        })?;
        runs.push(run);
    }
    corobench_store::write_run_file(&args.output, &runs)?;
    let size = std::fs::metadata(&args.output)
        .with_context(|| format!("reading back {}", args.output.display()))?
        .len();
    let mut out = std::io::stdout().lock();
    for run in &runs {
        writeln!(
            out,
            "exported run {} (suite {}, {}, {} trials)",
            run.run.id,
            run.run.suite,
            run.run.status,
            run.trials.len()
        )?;
    }
    writeln!(
        out,
        "wrote {} ({})",
        args.output.display(),
        corobench_report::units::bytes(size as f64)
    )?;
    Ok(Exit::Success)
}
