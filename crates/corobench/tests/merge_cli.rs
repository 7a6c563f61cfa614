//! `corobench merge` on reports of real `corobench load --start-at` runs:
//! the exact merge, its per-generator detail, and the refusals.

mod lab;

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use corobench_model::{LatencyHistogram, LoadReport};
use corobench_testkit::{Knobs, TestServer};
use lab::{Lab, corobench, load_report_schema_errors, stderr};

/// Two generators loading one server with the same `--start-at`, their
/// reports written to `dir/a.json` and `dir/b.json`.
fn two_generators(dir: &Path) -> (LoadReport, LoadReport) {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/plaintext");
    let at = SystemTime::now() + Duration::from_millis(700);
    let at = at.duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    let start_at = format!("{at:.6}");
    let args = |connections| {
        [
            "load",
            "--json",
            "-c",
            connections,
            "--warmup",
            "0.1s",
            "-d",
            "0.3s",
            "--start-at",
            &start_at,
            &url,
        ]
        .map(str::to_string)
    };
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| corobench(&args("2").each_ref().map(String::as_str)));
        let b = corobench(&args("3").each_ref().map(String::as_str));
        (a.join().unwrap(), b)
    });
    let mut reports = Vec::new();
    for (output, name) in [(a, "a.json"), (b, "b.json")] {
        assert!(output.status.success(), "{}", stderr(&output));
        std::fs::write(dir.join(name), &output.stdout).unwrap();
        reports.push(serde_json::from_slice(&output.stdout).unwrap());
    }
    let b = reports.pop().unwrap();
    (reports.pop().unwrap(), b)
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

#[test]
fn two_generators_merge_exactly_with_their_detail() {
    let dir = Lab::new();
    let (a, b) = two_generators(dir.root());
    let output = corobench(&[
        "merge",
        "--json",
        &path(dir.root(), "a.json"),
        &path(dir.root(), "b.json"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let errors = load_report_schema_errors(&json);
    assert!(errors.is_empty(), "{errors:#?}");
    let merged: LoadReport = serde_json::from_value(json).unwrap();
    let mut both = LatencyHistogram::new();
    both.add(&a.latency.histogram);
    both.add(&b.latency.histogram);
    assert_eq!(merged.latency.histogram, both);
    assert_eq!(merged.requests, a.requests + b.requests);
    assert_eq!(merged.connections, 5);
    let detail = merged.merged.expect("two generators leave their detail");
    let sources: Vec<&str> = detail
        .generators
        .iter()
        .map(|g| g.source.as_str())
        .collect();
    assert!(
        sources
            .iter()
            .all(|s| s.ends_with("a.json") || s.ends_with("b.json")),
        "{sources:?}"
    );
    assert_eq!(sources.len(), 2);

    let text = corobench(&[
        "merge",
        &path(dir.root(), "a.json"),
        &path(dir.root(), "b.json"),
    ]);
    assert!(text.status.success(), "{}", stderr(&text));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("2 generators") && text.contains("b.json"),
        "{text}"
    );
}

#[test]
fn one_report_merges_into_itself() {
    let dir = Lab::new();
    two_generators(dir.root());
    let output = corobench(&["merge", "--format", "json", &path(dir.root(), "a.json")]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        output.stdout,
        std::fs::read(dir.root().join("a.json")).unwrap()
    );
}

/// A histogram of 1 µs to 1 h at 2 digits, as another tool might write it.
fn foreign_histogram() -> String {
    let mut histogram =
        hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 2).unwrap();
    histogram.record(250).unwrap();
    let mut bytes = Vec::new();
    hdrhistogram::serialization::Serializer::serialize(
        &mut hdrhistogram::serialization::V2Serializer::new(),
        &histogram,
        &mut bytes,
    )
    .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn reports_that_cannot_be_merged_are_refused_with_the_reason() {
    let dir = Lab::new();
    two_generators(dir.root());
    let b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.root().join("b.json")).unwrap()).unwrap();
    let mut later = b.clone();
    later["window_start_unix_us"] =
        (b["window_start_unix_us"].as_u64().unwrap() + 10_000_000).into();
    let mut other_settings = b.clone();
    other_settings["latency"]["hdr_v2_base64"] = foreign_histogram().into();
    let mut json_path = b;
    json_path["url"] = "http://127.0.0.1:1/json".into();
    for (name, value) in [
        ("later.json", later),
        ("settings.json", other_settings),
        ("json.json", json_path),
    ] {
        std::fs::write(dir.root().join(name), serde_json::to_vec(&value).unwrap()).unwrap();
    }
    std::fs::write(dir.root().join("garbage.json"), "not json").unwrap();
    let a = path(dir.root(), "a.json");
    for (other, expected) in [
        ("later.json", "their windows do not overlap"),
        ("settings.json", "settings differ from corobench's"),
        ("json.json", "differ in their URL"),
        ("a.json", "are the same generator report"),
        ("garbage.json", "is not a load report"),
        ("missing.json", "cannot read"),
    ] {
        let output = corobench(&["merge", &a, &path(dir.root(), other)]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{other}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(expected),
            "{other}: {}",
            stderr(&output)
        );
    }
}

/// Issue "hostile input, third round", wrong result 7: 7,500 + 2⁶⁴−1
/// requests merged to 7,499; an error rate of 1.2e15 and negative CPU were
/// accepted. Each is refused, naming the file and the field.
#[test]
fn impossible_figures_are_refused_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    two_generators(dir.path());
    let b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("b.json")).unwrap()).unwrap();
    let forged = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value = b.clone();
        edit(&mut value);
        std::fs::write(dir.path().join(name), serde_json::to_vec(&value).unwrap()).unwrap();
    };
    forged("huge.json", &|v| v["requests"] = u64::MAX.into());
    forged("rate.json", &|v| v["error_rate"] = 1.2e15.into());
    forged("cpu.json", &|v| {
        v["generator"]["cpu_user_s"] = (-3.0).into()
    });
    forged("classes.json", &|v| v["status"]["2xx"] = 1.into());
    let a = path(dir.path(), "a.json");
    for (file, field) in [
        ("huge.json", "requests"),
        ("rate.json", "error_rate"),
        ("cpu.json", "generator.cpu_user_s"),
        ("classes.json", "requests"),
    ] {
        let output = corobench(&["merge", &a, &path(dir.path(), file)]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{file}: {err}");
        assert!(err.contains(&format!("{file}: {field} ")), "{file}: {err}");
        assert!(!err.contains("panicked"), "{file}: {err}");
    }
}
