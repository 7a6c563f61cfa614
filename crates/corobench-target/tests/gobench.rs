//! The Go benchmark line parser on real `go test -bench` output, and every
//! malformed line with its message.

use std::path::Path;

use corobench_target::{
    BenchmarkError, BenchmarkResult, Measurement, check_units, parse_benchmarks,
};

fn sample(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gobench")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

fn names(results: &[BenchmarkResult]) -> Vec<&str> {
    results.iter().map(|r| r.name.as_str()).collect()
}

fn units(result: &BenchmarkResult) -> Vec<&str> {
    result
        .measurements
        .iter()
        .map(|m| m.unit.as_str())
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

#[test]
fn repeats_sub_benchmarks_and_custom_units_are_read_in_order() {
    let results = parse_benchmarks(&sample("count-3.txt")).unwrap();
    assert_eq!(
        names(&results),
        [
            "BenchmarkSHA256",
            "BenchmarkSHA256",
            "BenchmarkSHA256",
            "BenchmarkFanOut/workers=1",
            "BenchmarkFanOut/workers=1",
            "BenchmarkFanOut/workers=1",
            "BenchmarkFanOut/workers=16",
            "BenchmarkFanOut/workers=16",
            "BenchmarkFanOut/workers=16",
        ],
        "-count 3 repeats are separate results"
    );
    assert!(
        results
            .iter()
            .all(|r| r.procs == Some(2) && r.iterations == 2000)
    );
    assert_eq!(
        results[0].measurements,
        [
            Measurement {
                value: 3228.0,
                unit: "ns/op".into()
            },
            Measurement {
                value: 1268.80,
                unit: "MB/s".into()
            },
            Measurement {
                value: 0.0,
                unit: "B/op".into()
            },
            Measurement {
                value: 0.0,
                unit: "allocs/op".into()
            },
        ]
    );
    let fan_out = &results[6];
    assert_eq!(
        units(fan_out),
        [
            "ns/op",
            "errors",
            "p50-ms",
            "p99-ms",
            "req/s",
            "B/op",
            "allocs/op"
        ]
    );
    assert_eq!(fan_out.value("ns/op"), Some(125.2));
    assert_eq!(fan_out.value("p99-ms"), Some(0.000_035));
    assert_eq!(fan_out.value("req/s"), Some(8_505_788.0));
    assert_eq!(fan_out.value("B/op"), Some(12.0));
    assert_eq!(fan_out.value("MB/s"), None);
}

#[test]
fn failures_logs_and_a_cpu_list_are_handled() {
    let results = parse_benchmarks(&sample("cpu-list-with-failure.txt")).unwrap();
    let named: Vec<(&str, Option<u32>)> =
        results.iter().map(|r| (r.name.as_str(), r.procs)).collect();
    assert_eq!(
        named,
        [
            ("BenchmarkLogged", None),
            ("BenchmarkLogged", Some(2)),
            ("BenchmarkSHA256", None),
            ("BenchmarkSHA256", Some(2)),
        ],
        "GOMAXPROCS=1 prints no suffix; --- FAIL and --- BENCH are not results"
    );
    assert_eq!(results[2].value("MB/s"), Some(1234.62));
}

#[test]
fn verbose_output_announces_names_that_are_not_results() {
    let results = parse_benchmarks(&sample("verbose.txt")).unwrap();
    assert_eq!(
        names(&results),
        [
            "BenchmarkLogged",
            "BenchmarkFanOut/workers=1",
            "BenchmarkFanOut/workers=16"
        ]
    );
}

#[test]
fn output_without_results_is_no_results() {
    let text = "goos: linux\n\nBenchmarking the pool now\nPASS\nok  \texample.com/x\t0.1s\n";
    assert_eq!(parse_benchmarks(text).unwrap(), []);
    assert_eq!(parse_benchmarks("").unwrap(), []);
}

#[test]
fn a_custom_program_may_print_exponents_and_tabs() {
    let results =
        parse_benchmarks("BenchmarkPool/tasks=1e6\t1\t2.5e+06 tasks/s\t0 errors\r\n").unwrap();
    assert_eq!(results[0].name, "BenchmarkPool/tasks=1e6");
    assert_eq!(results[0].procs, None);
    assert_eq!(results[0].iterations, 1);
    assert_eq!(results[0].value("tasks/s"), Some(2_500_000.0));
    assert_eq!(results[0].value("errors"), Some(0.0));
}

#[test]
fn malformed_lines_name_their_number_text_and_problem() {
    let cases = [
        (
            "BenchmarkX-2 \t 100 \t 12 ns/op \t 3",
            "values and units do not pair up: \"3\" has no partner",
        ),
        (
            "BenchmarkX-2  100  12 ns/op  fast req/s",
            "the value \"fast\" (in req/s) is not a finite number",
        ),
        (
            "BenchmarkX-2  100  NaN p99-ms",
            "the value \"NaN\" (in p99-ms) is not a finite number",
        ),
        (
            "BenchmarkX-2  100  inf req/s",
            "the value \"inf\" (in req/s) is not a finite number",
        ),
        (
            "BenchmarkX-2  12.5  12 ns/op",
            "the iteration count \"12.5\" is not an integer",
        ),
        (
            "BenchmarkX-2  -3  12 ns/op",
            "the iteration count \"-3\" is not an integer",
        ),
        (
            "BenchmarkX-2 \thello from the benchmark",
            "the iteration count \"hello\" is not an integer",
        ),
        (
            "BenchmarkX-2  100",
            "no measurements after the iteration count",
        ),
    ];
    for (line, problem) in cases {
        let text = format!("goos: linux\nBenchmarkOk-2  1  5 ns/op\n{line}\nPASS\n");
        let error = parse_benchmarks(&text).unwrap_err();
        assert_eq!(
            error,
            BenchmarkError::Malformed {
                line: 3,
                text: line.to_string(),
                problem: problem.to_string(),
            }
        );
        assert_eq!(
            error.to_string(),
            format!("stdout line 3: {problem}: {line}")
        );
    }
}

#[test]
fn declared_units_are_checked_and_the_missing_ones_listed() {
    let results = parse_benchmarks(&sample("count-3.txt")).unwrap();
    let declared = strings(&["req/s", "p50-ms", "p99-ms", "errors"]);
    check_units(&results[3], &declared).unwrap();
    assert_eq!(results[3].missing_units(&declared), Vec::<&str>::new());

    let error = check_units(&results[0], &declared).unwrap_err();
    assert_eq!(
        error,
        BenchmarkError::MissingUnits {
            benchmark: "BenchmarkSHA256".into(),
            missing: declared.clone(),
            declared: declared.clone(),
        }
    );
    let declared = strings(&["MB/s", "req/s", "allocs/op", "errors"]);
    assert_eq!(results[0].missing_units(&declared), ["req/s", "errors"]);
    assert_eq!(
        check_units(&results[0], &declared).unwrap_err().to_string(),
        "BenchmarkSHA256 carries no req/s, errors: every result line must carry MB/s, req/s, allocs/op, errors"
    );
}
