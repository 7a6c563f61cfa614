//! Go benchmark lines, the format program targets print their figures in
//! (as `go test -bench` does):
//!
//! ```text
//! BenchmarkName[/sub...][-P]   <N>   <value> <unit>   [<value> <unit>]...
//! ```
//!
//! Every other line (`goos:`, `pkg:`, `cpu:`, `PASS`, `ok ...`, `--- FAIL`,
//! `--- BENCH` and the log lines under them, blank lines) is ignored, and so
//! is a benchmark's bare name, which `go test -v` prints before running it.

use serde::Serialize;

/// One result line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchmarkResult {
    /// The name as printed, sub-benchmarks included (`BenchmarkFanOut/workers=16`),
    /// without the `-P` suffix.
    pub name: String,
    /// GOMAXPROCS, from the `-P` suffix; Go prints none when it is 1.
    pub procs: Option<u32>,
    /// The iterations the figures are averaged over (`b.N`).
    pub iterations: u64,
    /// The figures in the order printed: `ns/op` first, then the rest.
    pub measurements: Vec<Measurement>,
}

/// One `<value> <unit>` pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measurement {
    pub value: f64,
    pub unit: String,
}

impl BenchmarkResult {
    /// The first value reported in `unit`.
    #[must_use]
    pub fn value(&self, unit: &str) -> Option<f64> {
        self.measurements
            .iter()
            .find(|m| m.unit == unit)
            .map(|m| m.value)
    }

    /// The units of `declared` this result does not carry, in their order.
    #[must_use]
    pub fn missing_units<'a>(&self, declared: &'a [String]) -> Vec<&'a str> {
        declared
            .iter()
            .filter(|unit| self.value(unit).is_none())
            .map(String::as_str)
            .collect()
    }
}

/// Output that does not hold the figures a program promised.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BenchmarkError {
    /// A line that starts like a result but is not one.
    #[error("stdout line {line}: {problem}: {text}")]
    Malformed {
        /// 1-based.
        line: usize,
        text: String,
        problem: String,
    },

    /// A result without some of the units the manifest declares.
    #[error("{benchmark} carries no {}: every result line must carry {}", missing.join(", "), declared.join(", "))]
    MissingUnits {
        benchmark: String,
        missing: Vec<String>,
        declared: Vec<String>,
    },
}

/// Every result line of a program's whole stdout, in order (repeats of one
/// benchmark, as `-count` prints them, are separate results).
///
/// # Errors
/// The first malformed result line: an iteration count that is not an
/// integer, a value without its unit, a value that is not a finite number.
pub fn parse_benchmarks(stdout: &str) -> Result<Vec<BenchmarkResult>, BenchmarkError> {
    let mut results = Vec::new();
    for (index, text) in stdout.lines().enumerate() {
        let malformed = |problem: String| BenchmarkError::Malformed {
            line: index + 1,
            text: text.to_string(),
            problem,
        };
        if let Some(result) = parse_line(text).map_err(malformed)? {
            results.push(result);
        }
    }
    Ok(results)
}

/// Checks that `result` carries every unit in `declared`.
///
/// # Errors
/// The units it lacks, with the benchmark's name.
pub fn check_units(result: &BenchmarkResult, declared: &[String]) -> Result<(), BenchmarkError> {
    let missing = result.missing_units(declared);
    if missing.is_empty() {
        return Ok(());
    }
    Err(BenchmarkError::MissingUnits {
        benchmark: result.name.clone(),
        missing: missing.into_iter().map(str::to_string).collect(),
        declared: declared.to_vec(),
    })
}

/// A result, `None` for a line that is not one, or what is wrong with it.
fn parse_line(text: &str) -> Result<Option<BenchmarkResult>, String> {
    let mut fields = text.split_whitespace();
    let Some(full_name) = fields.next().filter(|f| is_benchmark_name(f)) else {
        return Ok(None);
    };
    let rest: Vec<&str> = fields.collect();
    match rest.first() {
        None => return Ok(None), // `go test -v` announcing it
        Some(first) if first.starts_with("---") => return Ok(None), // --- FAIL, --- SKIP
        Some(_) => {}
    }
    let iterations = rest[0]
        .parse::<u64>()
        .map_err(|_| format!("the iteration count {:?} is not an integer", rest[0]))?;
    let pairs = &rest[1..];
    if pairs.is_empty() {
        return Err("no measurements after the iteration count".into());
    }
    if pairs.len() % 2 != 0 {
        let last = pairs[pairs.len() - 1];
        return Err(format!(
            "values and units do not pair up: {last:?} has no partner"
        ));
    }
    let measurements = pairs
        .chunks_exact(2)
        .map(|pair| measurement(pair[0], pair[1]))
        .collect::<Result<_, _>>()?;
    let (name, procs) = split_procs(full_name);
    Ok(Some(BenchmarkResult {
        name: name.to_string(),
        procs,
        iterations,
        measurements,
    }))
}

fn measurement(value: &str, unit: &str) -> Result<Measurement, String> {
    match value.parse::<f64>() {
        Ok(number) if number.is_finite() => Ok(Measurement {
            value: number,
            unit: unit.to_string(),
        }),
        _ => Err(format!(
            "the value {value:?} (in {unit}) is not a finite number"
        )),
    }
}

/// `Benchmark`, alone or followed by anything but a lower-case letter: the
/// names Go accepts for benchmark functions (so "Benchmarking ..." is prose).
fn is_benchmark_name(field: &str) -> bool {
    field
        .strip_prefix("Benchmark")
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_lowercase()))
}

/// `BenchmarkX/sub-8` → (`BenchmarkX/sub`, 8). As in Go's own tools, a
/// trailing `-<digits>` is always GOMAXPROCS: a sub-benchmark whose name
/// ends in `-<digits>` run with GOMAXPROCS=1 cannot be told apart.
fn split_procs(full_name: &str) -> (&str, Option<u32>) {
    if let Some((name, suffix)) = full_name.rsplit_once('-')
        && !name.is_empty()
        && !suffix.is_empty()
        && suffix.bytes().all(|b| b.is_ascii_digit())
        && let Ok(procs) = suffix.parse::<u32>()
    {
        return (name, Some(procs));
    }
    (full_name, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_off_their_procs_suffix() {
        assert_eq!(split_procs("BenchmarkX-8"), ("BenchmarkX", Some(8)));
        assert_eq!(split_procs("BenchmarkX"), ("BenchmarkX", None));
        assert_eq!(
            split_procs("BenchmarkX/conns-16-2"),
            ("BenchmarkX/conns-16", Some(2))
        );
        assert_eq!(split_procs("BenchmarkX/a-b"), ("BenchmarkX/a-b", None));
        assert_eq!(split_procs("BenchmarkX-"), ("BenchmarkX-", None));
        assert_eq!(split_procs("BenchmarkX/-+1"), ("BenchmarkX/-+1", None));
    }

    #[test]
    fn benchmark_names_follow_go_rules() {
        assert!(is_benchmark_name("Benchmark"));
        assert!(is_benchmark_name("BenchmarkFanOut/x-2"));
        assert!(is_benchmark_name("Benchmark_x"));
        assert!(!is_benchmark_name("Benchmarking"));
        assert!(!is_benchmark_name("benchmarkX"));
    }
}
