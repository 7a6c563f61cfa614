//! Checks every row of committed benchstat outputs: our median, `± x%`,
//! delta / `~` cell, `p=… n=…` note and warnings must read exactly as
//! benchstat's for the same samples. Regenerate the outputs with
//! `scripts/benchstat_fixtures.sh`.

mod common;

use std::path::Path;

use common::{assert_close, fixture_path};
use corobench_stats::{
    StatsError, format_delta, format_p_and_n, format_pct_range, format_signed_pct,
    geomean_of_ratios, geometric_mean, mann_whitney_u_test, median_ci, min_samples_for_median_ci,
    min_samples_to_detect,
};

/// benchstat's defaults.
const CONFIDENCE: f64 = 0.95;
const ALPHA: f64 = 0.05;

/// Rows where we knowingly differ from benchstat: (set, row, benchstat's
/// note, ours). go-moremath doubles an asymmetric tie-conditioned tail and
/// reports p = 1.333; a probability above 1 is meaningless, so we cap it.
const KNOWN_DIFFERENCES: &[(&str, &str, &str, &str)] = &[(
    "edge-cases",
    "AsymmetricTies",
    "p=1.333 n=1+2",
    "p=1.000 n=1+2",
)];

/// One benchmark's samples, in the order they first appear in the file.
type Samples = Vec<(String, Vec<f64>)>;

/// Reads result lines `Benchmark<Name> <iterations> <value> <unit>`.
fn read_samples(path: &Path) -> Samples {
    let text = std::fs::read_to_string(path).unwrap();
    let mut samples: Samples = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("Benchmark")) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let name = fields[0].trim_start_matches("Benchmark").to_string();
        let value: f64 = fields[2].parse().unwrap();
        match samples.iter_mut().find(|(n, _)| *n == name) {
            Some((_, values)) => values.push(value),
            None => samples.push((name, vec![value])),
        }
    }
    samples
}

/// A CSV row of benchstat's table and its 1-based line number (for warning cells).
struct CsvRow {
    line: usize,
    cells: Vec<String>,
}

fn read_csv_rows(path: &Path) -> Vec<CsvRow> {
    let text = std::fs::read_to_string(path).unwrap();
    let header = text
        .lines()
        .position(|l| l.starts_with(",req/s,CI"))
        .expect("benchstat CSV header");
    text.lines()
        .enumerate()
        .skip(header + 1)
        .map(|(index, line)| CsvRow {
            line: index + 1,
            cells: line.split(',').map(str::to_string).collect(),
        })
        .collect()
}

fn center_and_range(values: &[f64], cell: &str, warnings: &mut Vec<String>) -> f64 {
    let ci = median_ci(values, CONFIDENCE).unwrap();
    if ci.lo.is_infinite() || ci.hi.is_infinite() {
        let need = min_samples_for_median_ci(CONFIDENCE).unwrap().unwrap();
        warnings.push(format!(
            "{cell}: need >= {need} samples for confidence interval at level {CONFIDENCE}"
        ));
    }
    ci.estimate
}

/// Checks one benchmark row; returns the two centers for the geomean row.
fn check_row(
    set: &str,
    row: &CsvRow,
    old: &[f64],
    new: &[f64],
    warnings: &mut Vec<String>,
) -> (f64, f64) {
    let (name, line) = (&row.cells[0], row.line);
    let old_center = center_and_range(old, &format!("B{line}"), warnings);
    let new_center = center_and_range(new, &format!("D{line}"), warnings);
    assert_eq!(
        old_center,
        row.cells[1].parse::<f64>().unwrap(),
        "{name}: old median"
    );
    assert_eq!(
        new_center,
        row.cells[3].parse::<f64>().unwrap(),
        "{name}: new median"
    );
    for (values, center, cell) in [(old, old_center, 2), (new, new_center, 4)] {
        let ci = median_ci(values, CONFIDENCE).unwrap();
        assert_eq!(
            format_pct_range(center, ci.lo, ci.hi),
            row.cells[cell],
            "{name}: ± range"
        );
    }
    let p = match mann_whitney_u_test(old, new) {
        Ok(test) => test.p,
        Err(StatsError::AllValuesEqual { .. }) => {
            warnings.push(format!("F{line}: all samples are equal"));
            1.0
        }
        Err(other) => panic!("{name}: {other}"),
    };
    let need = min_samples_to_detect(ALPHA).unwrap().unwrap();
    let all_equal = warnings
        .last()
        .is_some_and(|w| w.ends_with("all samples are equal"));
    if p > ALPHA && old.len() < need && new.len() < need && !all_equal {
        warnings.push(format!(
            "F{line}: need >= {need} samples to detect a difference at alpha level {ALPHA}"
        ));
    }
    assert_eq!(
        format_delta(old_center, new_center, p, ALPHA),
        row.cells[5],
        "{name}: delta"
    );
    let note = format_p_and_n(p, old.len(), new.len());
    match KNOWN_DIFFERENCES.iter().find(|d| d.0 == set && d.1 == name) {
        Some(&(_, _, theirs, ours)) => assert_eq!((&*row.cells[6], &*note), (theirs, ours)),
        None => assert_eq!(note, row.cells[6], "{name}: p and n"),
    }
    (old_center, new_center)
}

/// Checks the geomean row: geomean of each column's centers and of the ratios.
fn check_geomean(row: &CsvRow, centers: &[(f64, f64)], warnings: &mut Vec<String>) {
    assert_eq!(row.cells[0], "geomean");
    for (column, cell, letter) in [(0, 1, 'B'), (1, 3, 'D')] {
        let column: Vec<f64> = centers
            .iter()
            .map(|c| if column == 0 { c.0 } else { c.1 })
            .collect();
        match geometric_mean(&column) {
            Ok(gm) => assert_close(gm, row.cells[cell].parse().unwrap(), "geomean of centers"),
            Err(StatsError::NonPositive { .. }) => {
                assert_eq!(row.cells[cell], "");
                warnings.push(format!(
                    "{letter}{}: summaries must be >0 to compute geomean",
                    row.line
                ));
            }
            Err(other) => panic!("geomean: {other}"),
        }
    }
    let zero_baseline = centers.iter().any(|&(old, new)| old == 0.0 && new != 0.0);
    let expected = match geomean_of_ratios(centers) {
        Ok(ratio) => format_signed_pct(ratio - 1.0),
        Err(_) if zero_baseline => "?".to_string(),
        Err(other) => panic!("geomean of ratios: {other}"),
    };
    assert_eq!(expected, row.cells[5], "geomean vs base");
}

fn check_set(set: &str) {
    let dir = fixture_path("benchstat").join(set);
    let old = read_samples(&dir.join("old.txt"));
    let new = read_samples(&dir.join("new.txt"));
    let rows = read_csv_rows(&dir.join("benchstat.csv"));
    assert_eq!(
        rows.len(),
        old.len() + 1,
        "{set}: one row per benchmark plus geomean"
    );
    let mut warnings = Vec::new();
    let mut centers = Vec::new();
    for ((row, (name, old_values)), (new_name, new_values)) in rows.iter().zip(&old).zip(&new) {
        assert_eq!(
            (&row.cells[0], name),
            (new_name, new_name),
            "{set}: row order"
        );
        centers.push(check_row(set, row, old_values, new_values, &mut warnings));
    }
    check_geomean(rows.last().unwrap(), &centers, &mut warnings);
    let stderr = std::fs::read_to_string(dir.join("benchstat-warnings.txt")).unwrap();
    let mut theirs: Vec<&str> = stderr.lines().collect();
    let mut ours: Vec<&str> = warnings.iter().map(String::as_str).collect();
    theirs.sort_unstable();
    ours.sort_unstable();
    assert_eq!(ours, theirs, "{set}: warnings");
}

#[test]
fn edge_cases_read_as_benchstat_prints_them() {
    check_set("edge-cases");
}

#[test]
fn geomean_row_reads_as_benchstat_prints_it() {
    check_set("geomean");
}
