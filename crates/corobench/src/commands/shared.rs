//! What several commands share: the `--db` and `--targets-dir` arguments,
//! the statistics flags, opening the results database, and writing a
//! report to stdout or a file. Each is defined once, here.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal as _, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use corobench_model::StoredRun;
use corobench_store::Store;

use crate::exit;
use corobench_analyze::AnalyzeOptions;

/// The results database a command reads when none is named.
pub const DEFAULT_DB: &str = "corobench.db";

/// Where results live.
#[derive(Clone, Debug, Args)]
pub struct DbArg {
    /// The results database
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DB)]
    pub db: PathBuf,
}

impl DbArg {
    /// ` --db PATH` to repeat in advice, or nothing for the default.
    #[must_use]
    pub fn as_flag(&self) -> String {
        if self.db == Path::new(DEFAULT_DB) {
            String::new()
        } else {
            format!(" --db {}", self.db.display())
        }
    }
}

/// Where the targets are.
#[derive(Clone, Debug, Args)]
pub struct TargetsDirArg {
    /// The folder holding one folder per target [default: $COROBENCH_TARGETS, ./targets, or the
    /// repository's targets/ beside the executable]
    #[arg(long, value_name = "DIR")]
    pub targets_dir: Option<PathBuf>,
}

/// Where results are read from and how they are judged: `report` and `compare`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub db: DbArg,

    /// Significance level: a difference with p above it is shown as ~
    #[arg(long, default_value_t = 0.05, value_parser = parse_level, value_name = "P")]
    pub alpha: f64,

    /// Confidence level of the median intervals
    #[arg(long, default_value_t = 0.95, value_parser = parse_level, value_name = "LEVEL")]
    pub confidence: f64,

    /// Colour the table: auto (only on a terminal, unless NO_COLOR is set), always, never
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, value_name = "WHEN")]
    pub color: ColorArg,
}

impl StatsArgs {
    /// The levels of the statistics, from the flags.
    #[must_use]
    pub fn analyze_options(&self) -> AnalyzeOptions {
        AnalyzeOptions {
            alpha: self.alpha,
            confidence: self.confidence,
            ..AnalyzeOptions::default()
        }
    }
}

/// `--color` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

impl ColorArg {
    /// Colour for `always`, and for `auto` only when writing to a terminal
    /// (not to `output`) with `NO_COLOR` unset.
    #[must_use]
    pub fn enabled(self, output: Option<&Path>) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => {
                output.is_none()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && io::stdout().is_terminal()
            }
        }
    }
}

/// Opens an existing results database; a missing one is a usage error.
///
/// # Errors
/// The file is missing (exit 2) or is not a corobench database.
pub fn open_store(path: &Path) -> anyhow::Result<Store> {
    Ok(Store::open_existing(path)?)
}

/// Resolves `id_or_prefix` (or `latest`) and loads that run.
///
/// # Errors
/// No such run, or several runs share the prefix (exit 2, naming the
/// candidates), or the run cannot be read.
pub fn load_run(store: &Store, id_or_prefix: &str) -> anyhow::Result<StoredRun> {
    let id = store.resolve_run_id(id_or_prefix)?;
    let mut stored = store
        .load_run(&id)
        .with_context(|| format!("cannot read run {id} from {}", store.path().display()))?;
    // Runs stored before schema 4 did not record their precision goal; it
    // is read back out of their spec, the one place that still does so.
    if stored.run.precision_goal.is_none() {
        stored.run.precision_goal = corobench_spec::precision_goal(&stored.run.spec_toml);
    }
    Ok(stored)
}

/// Runs `write` on stdout, or on `path` (created or truncated).
///
/// # Errors
/// The file cannot be created (exit 2) or written.
pub fn write_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> Result<(), corobench_report::ReportError>,
) -> anyhow::Result<()> {
    match path {
        None => {
            let mut stdout = io::stdout().lock();
            write(&mut stdout).map_err(anyhow::Error::new)
        }
        Some(path) => {
            let file = File::create(path).map_err(|e| {
                exit::usage(format!(
                    "cannot create -o {}: {e}; check that its folder exists and is writable",
                    path.display()
                ))
            })?;
            let mut out = BufWriter::new(file);
            write(&mut out)
                .map_err(anyhow::Error::new)
                .with_context(|| format!("writing {}", path.display()))
        }
    }
}

/// A spec file's text, or the embedded default suite's when none is named.
///
/// # Errors
/// The file cannot be read (exit 2).
pub fn read_spec(path: Option<&Path>) -> anyhow::Result<String> {
    match path {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| exit::usage(format!("cannot read the spec {}: {e}", path.display()))),
        None => Ok(corobench_spec::DEFAULT_SUITE.to_string()),
    }
}

/// A level strictly between 0 and 1, e.g. 0.05 or 0.95.
fn parse_level(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(level) if level > 0.0 && level < 1.0 => Ok(level),
        _ => Err(format!(
            "{text:?} is not a level: use a number between 0 and 1, e.g. 0.05 or 0.95"
        )),
    }
}

/// Prints a load report (one generator's or a merge) on stdout: as JSON, or
/// as the text `render` makes with the asked percentiles (the default set
/// when none were asked), naming the window's asked start as its flag.
///
/// # Errors
/// Stdout cannot be written.
pub fn print_load_report(
    report: &corobench_model::LoadReport,
    json: bool,
    percentiles: &[f64],
    render: impl FnOnce(&corobench_model::LoadReport, &[f64], &str) -> String,
) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut stdout, report)
            .context("cannot write the JSON report")?;
        writeln!(stdout)?;
    } else {
        let percentiles = if percentiles.is_empty() {
            &corobench_report::load_summary::DEFAULT_PERCENTILES[..]
        } else {
            percentiles
        };
        write!(stdout, "{}", render(report, percentiles, "--start-at"))?;
    }
    stdout.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_strictly_between_zero_and_one() {
        assert_eq!(parse_level("0.05"), Ok(0.05));
        assert!(parse_level("1").is_err());
        assert!(parse_level("0").is_err());
        assert!(parse_level("five").unwrap_err().contains("between 0 and 1"));
    }

    #[test]
    fn colour_is_off_for_files_and_never() {
        assert!(!ColorArg::Auto.enabled(Some(Path::new("x.txt"))));
        assert!(!ColorArg::Never.enabled(None));
        assert!(ColorArg::Always.enabled(Some(Path::new("x.txt"))));
    }

    #[test]
    fn the_default_database_needs_no_flag_in_advice() {
        let default = DbArg {
            db: PathBuf::from(DEFAULT_DB),
        };
        assert_eq!(default.as_flag(), "");
        let other = DbArg {
            db: PathBuf::from("/tmp/r.db"),
        };
        assert_eq!(other.as_flag(), " --db /tmp/r.db");
    }
}
