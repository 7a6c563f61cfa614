//! `corobench report RUN`: one stored run, analysed, in any output format.
//! The helpers shared with `corobench compare` (opening the database,
//! choosing colour, writing to stdout or a file) live here too.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal as _, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use corobench_report::{Format, RenderOptions};
use corobench_store::{Store, StoreError, StoredRun};

use crate::analyze::{self, AnalyzeOptions};
use crate::exit::{self, Exit};

/// Flags of `corobench report`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    corobench report                              the latest run, as a table\n  \
    corobench report 20261122 --baseline go-ants  compare every target with go-ants\n  \
    corobench report latest --format html -o report.html\n  \
    corobench report latest --format gobench > run.txt && benchstat -col /target run.txt")]
pub struct ReportArgs {
    /// The run: its id, a unique prefix of it, or `latest`
    #[arg(value_name = "RUN", default_value = "latest")]
    pub run: String,

    /// Output format
    #[arg(short = 'f', long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,

    /// Write the report to this file instead of stdout
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Compare every target with this one [default: the run's first target]
    #[arg(long, value_name = "TARGET")]
    pub baseline: Option<String>,

    #[command(flatten)]
    pub stats: StatsArgs,
}

/// Where results are read from and how they are judged; shared with `compare`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The results database
    #[arg(long, value_name = "PATH", default_value = "corobench.db")]
    pub db: PathBuf,

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

/// `--format` values of `corobench report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Aligned columns for a terminal
    Table,
    /// Markdown tables
    #[value(alias = "markdown")]
    Md,
    /// Everything as JSON (docs/schema/report.schema.json)
    Json,
    /// One row per scenario × metric
    Csv,
    /// One row per trial × metric: the raw values
    CsvTrials,
    /// Go benchmark format for benchstat
    Gobench,
    /// A self-contained HTML page with charts
    Html,
}

impl From<FormatArg> for Format {
    fn from(arg: FormatArg) -> Self {
        match arg {
            FormatArg::Table => Self::Table,
            FormatArg::Md => Self::Markdown,
            FormatArg::Json => Self::Json,
            FormatArg::Csv => Self::Csv,
            FormatArg::CsvTrials => Self::CsvTrials,
            FormatArg::Gobench => Self::GoBench,
            FormatArg::Html => Self::Html,
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

/// Runs `corobench report`.
///
/// # Errors
/// A missing database or unknown run (exit 2), an unknown baseline target
/// (exit 2), a database that cannot be read or an output that cannot be written.
pub fn run(args: &ReportArgs) -> anyhow::Result<Exit> {
    let store = open_store(&args.stats.db)?;
    let stored = load(&store, &args.run)?;
    let options = AnalyzeOptions {
        baseline: args.baseline.clone(),
        ..analyze_options(&args.stats)
    };
    let analysis =
        analyze::analyze_run(&stored, &options).map_err(|e| exit::usage(e.to_string()))?;
    let render = RenderOptions {
        color: use_color(args.stats.color, args.output.as_deref()),
    };
    write_output(args.output.as_deref(), |out| {
        corobench_report::render_with(args.format.into(), &analysis, render, out)
    })?;
    Ok(Exit::Success)
}

/// The levels of the statistics, from the flags.
pub fn analyze_options(stats: &StatsArgs) -> AnalyzeOptions {
    AnalyzeOptions {
        alpha: stats.alpha,
        confidence: stats.confidence,
        ..AnalyzeOptions::default()
    }
}

/// Opens an existing results database; a missing one is a usage error.
///
/// # Errors
/// The file is missing (exit 2) or is not a corobench database.
pub fn open_store(path: &Path) -> anyhow::Result<Store> {
    Store::open_existing(path).map_err(store_error)
}

/// Resolves `id_or_prefix` (or `latest`) and loads that run.
///
/// # Errors
/// No such run, or several runs share the prefix (exit 2, naming the
/// candidates), or the run cannot be read.
pub fn load(store: &Store, id_or_prefix: &str) -> anyhow::Result<StoredRun> {
    let id = store.resolve_run_id(id_or_prefix).map_err(store_error)?;
    store
        .load_run(&id)
        .with_context(|| format!("cannot read run {id} from {}", store.path().display()))
}

/// Store errors the user fixes with other arguments are usage errors.
fn store_error(error: StoreError) -> anyhow::Error {
    match error {
        StoreError::Missing { .. }
        | StoreError::UnknownRun { .. }
        | StoreError::AmbiguousRun { .. }
        | StoreError::NoRuns { .. } => exit::usage(error.to_string()),
        other => anyhow::Error::new(other),
    }
}

/// Colour for `--color`, and for `auto` only when stdout is a terminal and
/// `NO_COLOR` is unset.
pub fn use_color(choice: ColorArg, output: Option<&Path>) -> bool {
    match choice {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            output.is_none()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && io::stdout().is_terminal()
        }
    }
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

/// A level strictly between 0 and 1, e.g. 0.05 or 0.95.
fn parse_level(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(level) if level > 0.0 && level < 1.0 => Ok(level),
        _ => Err(format!(
            "{text:?} is not a level: use a number between 0 and 1, e.g. 0.05 or 0.95"
        )),
    }
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
        assert!(!use_color(ColorArg::Auto, Some(Path::new("x.txt"))));
        assert!(!use_color(ColorArg::Never, None));
        assert!(use_color(ColorArg::Always, Some(Path::new("x.txt"))));
    }
}
