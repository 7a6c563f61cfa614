//! `corobench import FILE…`: runs from run files (`corobench export`) or
//! from another machine's results database, stored in this one. Every
//! file is read and checked before the database is touched, and the runs
//! are stored in one transaction: an import stores all of them or none.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;
use corobench_model::StoredRun;
use corobench_store::{ImportOutcome, RunSource, Store};

use super::shared::DbArg;
use crate::exit::Exit;

/// Flags of `corobench import`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench import run.json.gz                    into ./corobench.db\n  \
    corobench import results/*/*.json.gz --db all.db\n  \
    corobench import other-machine.db               every ended run of another database\n\n\
    A run already stored with the same contents is left as it is, so importing twice stores \
    it once; a different run under a stored run's id is refused.")]
pub struct ImportArgs {
    /// Run files written by `corobench export`, or results databases of other machines
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub db: DbArg,
}

/// Runs `corobench import`.
///
/// # Errors
/// A file that is not a run file or database, is truncated, damaged or
/// from a newer corobench (exit 2); a run whose id is stored with other
/// contents (exit 2); a database that is read-only (exit 2), locked or
/// full.
pub fn run(args: &ImportArgs) -> anyhow::Result<Exit> {
    let mut runs: Vec<StoredRun> = Vec::new();
    let mut sources: Vec<&Path> = Vec::new();
    for file in &args.files {
        for run in read(file)? {
            runs.push(run);
            sources.push(file);
        }
    }
    let mut store = Store::open(&args.db.db)?;
    let imported = store
        .import_runs(&runs)
        .with_context(|| format!("importing into {}", args.db.db.display()))?;
    let mut out = std::io::stdout().lock();
    for (done, source) in imported.iter().zip(&sources) {
        let what = match done.outcome {
            ImportOutcome::Added => "imported",
            ImportOutcome::AlreadyStored => "already stored, unchanged:",
        };
        writeln!(
            out,
            "{what} run {} (suite {}) from {}",
            done.run_id,
            done.suite,
            source.display()
        )?;
    }
    let added = imported
        .iter()
        .filter(|d| d.outcome == ImportOutcome::Added)
        .count();
    writeln!(
        out,
        "{added} of {} runs added to {}",
        imported.len(),
        args.db.db.display()
    )?;
    Ok(Exit::Success)
}

/// Every run a file holds: a run file's runs, or a database's ended runs
/// (a run still running there is left out, and said so).
fn read(file: &Path) -> anyhow::Result<Vec<StoredRun>> {
    match RunSource::of(file)? {
        RunSource::RunFile => Ok(corobench_store::read_run_file(file)?),
        RunSource::Database => {
            let found = corobench_store::runs_of_database(file)?;
            for id in &found.running {
                eprintln!(
                    "warning: run {id} in {} is still running (or its process died): not \
                     imported; import it once it has ended",
                    file.display()
                );
            }
            Ok(found.ended)
        }
    }
}
