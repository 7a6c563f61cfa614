//! benchstat, fed our `--format gobench` export of the fixture runs, must
//! reach the same centers, the same `~` verdicts and the same `p=… n=…`
//! notes as `corobench report` and `corobench compare`. Its delta is the
//! ratio of the medians, which corobench shows as its two centers; the
//! change corobench prints is the Hodges–Lehmann ratio with its interval
//! (docs/methodology.md), so the deltas are checked against the centers'
//! ratio. The one documented exception: with tied values benchstat doubles a fixed tail of
//! the U distribution and corobench the smaller one (the exact permutation p,
//! checked against scipy in corobench-stats), so there only the centers and
//! the sample counts must agree: in the fixture, go-ants `/io` peak RSS gets
//! p = 0.052 (`~`) from corobench and scipy, and p ≤ 0.05 from benchstat.
//!
//! Needs `benchstat` (`go install golang.org/x/perf/cmd/benchstat@latest`,
//! which `make deps` does): found on PATH, in $GOBIN, or in $(go env
//! GOPATH)/bin. Without it the tests say so and pass, unless
//! COROBENCH_REQUIRE_BENCHSTAT is set (CI sets it).

mod lab;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use lab::{Fixture, ok};
use serde_json::Value;

/// What benchstat printed for one cell: center, `vs base`, `P`.
#[derive(Debug, Clone)]
struct Cell {
    center: f64,
    delta: String,
    note: String,
}

/// (row name, column label, unit) → cell.
type Table = BTreeMap<(String, String, String), Cell>;

#[test]
fn benchstat_agrees_with_the_report_on_targets_within_a_run() {
    let Some(benchstat) = find_benchstat() else {
        return;
    };
    let fixture = Fixture::new();
    let export = write_export(&fixture, &fixture.run_a, "a.txt");
    let file = export.to_str().unwrap();
    let csv = run(&benchstat, &["-col", "/target", "-format", "csv", file]);
    let cells = parse_benchstat_csv(&csv);
    let export_text = std::fs::read_to_string(&export).unwrap();
    let names = scenario_names(&export_text);
    let samples = export_samples(&export_text);
    let analysis: Value = serde_json::from_str(&ok(&fixture.corobench(&[
        "report",
        &fixture.run_a,
        "-f",
        "json",
    ])))
    .unwrap();
    let scenarios = analysis["scenarios"].as_array().unwrap();
    let (mut checked, mut in_full) = (0, 0);
    for comparison in analysis["comparisons"].as_array().unwrap() {
        let scenario = |field: &str| &scenarios[comparison[field].as_u64().unwrap() as usize];
        // A sweep within one target is compared with its first value; with
        // `-col /target` benchstat compares targets only.
        if scenario("scenario")["target"] == scenario("baseline")["target"] {
            continue;
        }
        let key = |field: &str| scenario(field)["key"].as_str().unwrap().to_owned();
        let (row, column) = split_target(&names[&key("scenario")]);
        let (base_row, base_column) = split_target(&names[&key("baseline")]);
        assert_eq!(
            row, base_row,
            "benchstat pairs rows as corobench pairs scenarios"
        );
        for m in comparison["metrics"].as_array().unwrap() {
            let unit = unit_of(m["metric"].as_str().unwrap());
            if has_zeros(&samples, unit) {
                continue;
            }
            let find = |column: &String| {
                let key = (row.clone(), column.clone(), unit.to_owned());
                cells
                    .get(&key)
                    .unwrap_or_else(|| panic!("benchstat printed no {key:?}"))
            };
            let tied = have_ties(
                &samples,
                (&names[&key("scenario")], &names[&key("baseline")]),
                unit,
            );
            in_full += usize::from(agree(find(&column), find(&base_column), m, unit, tied));
            checked += 1;
        }
    }
    assert!(checked >= 15 * 8, "only {checked} cells compared");
    eprintln!("{in_full} of {checked} cells agree in full, the rest have ties");
    assert!(
        in_full * 2 >= checked,
        "only {in_full} of {checked} without ties"
    );
}

#[test]
fn benchstat_agrees_with_corobench_compare_across_runs() {
    let Some(benchstat) = find_benchstat() else {
        return;
    };
    let fixture = Fixture::new();
    let a = write_export(&fixture, &fixture.run_a, "A.txt");
    let b = write_export(&fixture, &fixture.run_b, "B.txt");
    let (text_a, text_b) = (
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap(),
    );
    // Config lines that differ would split the runs into separate tables.
    let ignore = differing_config_keys(&text_a, &text_b).join(",");
    // `label=file` names the columns A and B.
    let (label_a, label_b) = (format!("A={}", a.display()), format!("B={}", b.display()));
    let csv = run(
        &benchstat,
        &["-ignore", &ignore, "-format", "csv", &label_a, &label_b],
    );
    let cells = parse_benchstat_csv(&csv);
    let names = scenario_names(&text_a);
    let mut samples = export_samples(&text_a);
    for ((name, unit), values) in export_samples(&text_b) {
        samples.insert((format!("B:{name}"), unit), values);
    }
    let comparison: Value = serde_json::from_str(&ok(&fixture.corobench(&[
        "compare",
        &fixture.run_a,
        &fixture.run_b,
        "-f",
        "json",
    ])))
    .unwrap();
    let (mut checked, mut in_full) = (0, 0);
    for table in comparison["tables"].as_array().unwrap() {
        let unit = unit_of(table["metric"].as_str().unwrap());
        if has_zeros(&samples, unit) {
            continue;
        }
        for row in table["rows"].as_array().unwrap() {
            let name = &names[row["key"].as_str().unwrap()];
            let find = |column: &str| {
                let key = (name.clone(), column.to_owned(), unit.to_owned());
                cells
                    .get(&key)
                    .unwrap_or_else(|| panic!("benchstat printed no {key:?}"))
            };
            let tied = have_ties(&samples, (&format!("B:{name}"), name), unit);
            in_full += usize::from(agree(find("B"), find("A"), &row["comparison"], unit, tied));
            checked += 1;
        }
        // benchstat's geomean is of the medians' ratios, corobench's of its
        // change estimates: the same over the medians the rows show.
        let geomean = &cells[&("geomean".to_owned(), "B".to_owned(), unit.to_owned())];
        assert_eq!(geomean.delta, medians_geomean(table), "{unit} geomean");
    }
    assert!(checked >= 16 * 8, "only {checked} cells compared");
    eprintln!("{in_full} of {checked} cells agree in full, the rest have ties");
    assert!(
        in_full * 2 >= checked,
        "only {in_full} of {checked} without ties"
    );
}

/// benchstat's cell and ours: same centers, same delta, same note (with
/// tied samples: the same sample counts; p and so the verdict may differ).
fn agree(cell: &Cell, base: &Cell, ours: &Value, unit: &str, tied: bool) -> bool {
    let scale = if unit.contains("sec/op") { 1e6 } else { 1.0 };
    let close =
        |theirs: f64, ours: f64| (theirs * scale - ours).abs() <= 1e-9 * ours.abs().max(1.0);
    let (value, baseline) = (
        ours["value"].as_f64().unwrap(),
        ours["baseline"].as_f64().unwrap(),
    );
    assert!(
        close(cell.center, value),
        "{unit}: {} vs {value}",
        cell.center
    );
    assert!(
        close(base.center, baseline),
        "{unit}: {} vs {baseline}",
        base.center
    );
    let note = ours["note_text"].as_str().unwrap();
    if tied {
        let counts = |n: &str| n.split_once(" n=").map(|(_, n)| n.to_owned());
        assert_eq!(counts(&cell.note), counts(note), "{unit} {ours}");
        if cell.note != note {
            eprintln!(
                "tied {unit}: benchstat {} {}, corobench {ours}",
                cell.delta, cell.note
            );
        }
        return false;
    }
    let delta = ours["delta_text"].as_str().unwrap();
    assert_eq!(cell.delta == "~", delta == "~", "{unit} {ours}");
    if delta != "~" && baseline != 0.0 {
        let medians = format!("{:+.2}%", (value / baseline - 1.0) * 100.0);
        assert_eq!(cell.delta, medians, "{unit} {ours}");
    }
    assert_eq!(cell.note, note, "{unit} {ours}");
    true
}

/// The geomean of value ÷ baseline over a comparison table's rows, as
/// benchstat prints it.
fn medians_geomean(table: &Value) -> String {
    let ratios: Vec<f64> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| {
            let c = row.get("comparison")?;
            let (a, b) = (c["baseline"].as_f64()?, c["value"].as_f64()?);
            Some(if a == b { 1.0 } else { b / a })
        })
        .collect();
    let mean_ln = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
    format!("{:+.2}%", (mean_ln.exp() - 1.0) * 100.0)
}

/// (benchmark name without `Benchmark`, unit as exported) → one value per trial.
type Samples = BTreeMap<(String, String), Vec<f64>>;

fn export_samples(export: &str) -> Samples {
    let mut samples = Samples::new();
    for line in export.lines() {
        let Some(rest) = line.strip_prefix("Benchmark") else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // name, iterations, then value-unit pairs.
        for pair in fields[2..].chunks(2) {
            samples
                .entry((fields[0].to_owned(), pair[1].to_owned()))
                .or_default()
                .push(pair[0].parse().unwrap());
        }
    }
    samples
}

/// Whether a trial's value of `unit` (as benchstat prints it) is 0 in
/// any benchmark. benchstat leaves such samples out of its units of time
/// (a CPU time per request of 0 ticks), corobench keeps them: the two
/// then summarise different samples, so those units are not compared.
fn has_zeros(samples: &Samples, unit: &str) -> bool {
    if !unit.ends_with("-sec/op") {
        return false;
    }
    let exported = unit.replace("-sec/op", "-ns/op");
    samples
        .iter()
        .filter(|((_, u), _)| *u == exported)
        .any(|(_, values)| values.contains(&0.0))
}

/// Whether any value occurs twice among the two benchmarks' trials of the
/// unit benchstat printed (`p99-sec/op` was exported as `p99-ns/op`).
fn have_ties(samples: &Samples, (a, b): (&String, &String), unit: &str) -> bool {
    let exported = unit.replace("-sec/op", "-ns/op");
    let values = |name: &String| {
        samples
            .get(&(name.clone(), exported.clone()))
            .unwrap_or_else(|| panic!("the export has no {name} {exported}"))
            .clone()
    };
    let mut pooled = values(a);
    pooled.extend(values(b));
    pooled.sort_by(f64::total_cmp);
    pooled.windows(2).any(|w| w[0] == w[1])
}

/// Our metric ids in the units benchstat prints after tidying.
fn unit_of(metric: &str) -> &'static str {
    match metric {
        "requests_per_s" => "req/s",
        "latency_mean_us" => "mean-sec/op",
        "latency_p50_us" => "p50-sec/op",
        "latency_p99_us" => "p99-sec/op",
        "latency_p99_9_us" => "p99.9-sec/op",
        "server_cpu_pct" => "server-cpu-%",
        "peak_rss_bytes" => "peak-rss-B",
        "error_rate" => "error-ratio",
        "server_syscalls_per_req" => "syscalls/op",
        "server_ctx_switches_per_req" => "ctx-switches/op",
        "server_user_us_per_req" => "user-sec/op",
        "server_sys_us_per_req" => "sys-sec/op",
        "server_minor_faults_per_req" => "faults/op",
        "server_cpu_us_per_req" => "cpu-sec/op",
        "generator_syscalls_per_req" => "gen-syscalls/op",
        "generator_ctx_switches_per_req" => "gen-ctx-switches/op",
        "generator_user_us_per_req" => "gen-user-sec/op",
        "generator_sys_us_per_req" => "gen-sys-sec/op",
        "generator_minor_faults_per_req" => "gen-faults/op",
        other => panic!("unknown metric {other}"),
    }
}

fn write_export(fixture: &Fixture, run: &str, name: &str) -> PathBuf {
    let path = fixture.scratch(name);
    ok(&fixture.corobench(&["report", run, "-f", "gobench", "-o", path.to_str().unwrap()]));
    path
}

/// Scenario key → benchmark name (without `Benchmark`), from the comment
/// line the export writes before each scenario's results.
fn scenario_names(export: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let mut key = None;
    for line in export.lines() {
        if let Some(comment) = line.strip_prefix("# ") {
            key = Some(comment.to_owned());
        } else if let (Some(k), Some(rest)) = (&key, line.strip_prefix("Benchmark")) {
            let name = rest.split_whitespace().next().unwrap().to_owned();
            names.insert(k.clone(), name);
            key = None;
        }
    }
    names
}

/// `Plaintext/target=go-ants,pool_size=4/c=8` → (`Plaintext/c=8`, `go-ants,pool_size=4`).
fn split_target(name: &str) -> (String, String) {
    let mut row = Vec::new();
    let mut column = String::new();
    for part in name.split('/') {
        match part.strip_prefix("target=") {
            Some(target) => column = target.to_owned(),
            None => row.push(part),
        }
    }
    (row.join("/"), column)
}

fn differing_config_keys(a: &str, b: &str) -> Vec<String> {
    let config = |text: &str| -> BTreeMap<String, String> {
        text.lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase()))
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    };
    let (a, b) = (config(a), config(b));
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect()
}

/// benchstat's CSV: per unit, a header of column labels, a row of units,
/// then one row per benchmark (center, CI, and for non-baseline columns
/// `vs base` and `P`).
fn parse_benchstat_csv(csv: &str) -> Table {
    let mut cells = Table::new();
    let rows: Vec<Vec<String>> = csv.lines().map(parse_csv_line).collect();
    let mut i = 0;
    while i + 1 < rows.len() {
        let (labels, units) = (&rows[i], &rows[i + 1]);
        if labels.first().is_none_or(|c| !c.is_empty())
            || units.get(2).map(String::as_str) != Some("CI")
        {
            i += 1;
            continue;
        }
        let columns = column_starts(labels);
        let mut r = i + 2;
        while r < rows.len() && rows[r].len() > 1 {
            for &(start, ref label) in &columns {
                let row = &rows[r];
                let field = |k: usize| row.get(start + k).cloned().unwrap_or_default();
                // A geomean row has no center when a center is 0, but still a ratio.
                let center = match field(0).parse::<f64>() {
                    Ok(center) => center,
                    Err(_) if row[0] == "geomean" => f64::NAN,
                    Err(_) => continue,
                };
                let cell = Cell {
                    center,
                    delta: if start == 1 { String::new() } else { field(2) },
                    note: if start == 1 { String::new() } else { field(3) },
                };
                cells.insert((row[0].clone(), label.clone(), units[start].clone()), cell);
            }
            r += 1;
        }
        i = r;
    }
    cells
}

/// Where each column label starts in a header row.
fn column_starts(labels: &[String]) -> Vec<(usize, String)> {
    labels
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| (i, l.clone()))
        .collect()
}

/// One CSV line with RFC 4180 quoting.
fn parse_csv_line(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                fields.last_mut().unwrap().push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

fn run(benchstat: &Path, args: &[&str]) -> String {
    let output = Command::new(benchstat)
        .args(args)
        .output()
        .expect("benchstat runs");
    assert!(
        output.status.success(),
        "benchstat failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// benchstat on PATH, in $GOBIN or in $(go env GOPATH)/bin.
fn find_benchstat() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("benchstat"))
                .collect()
        })
        .unwrap_or_default();
    if let Some(gobin) = std::env::var_os("GOBIN") {
        candidates.push(PathBuf::from(gobin).join("benchstat"));
    }
    if let Ok(output) = Command::new("go").args(["env", "GOPATH"]).output() {
        let gopath = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if !gopath.is_empty() {
            candidates.push(PathBuf::from(gopath).join("bin/benchstat"));
        }
    }
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        let install = "go install golang.org/x/perf/cmd/benchstat@latest";
        assert!(
            std::env::var_os("COROBENCH_REQUIRE_BENCHSTAT").is_none(),
            "benchstat is required but not found; install it with `{install}`"
        );
        eprintln!("skipped: benchstat not found (install it with `{install}`)");
    }
    found
}
