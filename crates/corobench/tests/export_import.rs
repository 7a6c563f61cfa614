//! `corobench export` and `corobench import` as a user runs them: a run
//! exported and imported elsewhere reports byte for byte as the original,
//! in every format; importing twice stores once; another machine's
//! database imports too; and every bad input is refused with the database
//! left as it was.

mod lab;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use corobench_model::{
    HostProvenance, IdleMeasurement, KernelCounts, MachineProbe, PoolCounters, PoolWindow,
    ProgramMetric, ProgramResult, ProgramScenario, RunStatus, ScenarioRecord, ServerChoice,
    StoredRun, TrialCounters, TrialFlag, TrialRecord,
};
use corobench_store::Store;
use lab::{Fixture, ok, stderr, stdout, usage_error};

/// Every format `report` writes.
const FORMATS: [&str; 10] = [
    "table",
    "md",
    "json",
    "csv",
    "csv-trials",
    "csv-claims",
    "csv-capacity",
    "csv-memory",
    "gobench",
    "html",
];

const EVERY_KIND: &str = "20261127-090000-eeee";
const CAPACITY: &str = "20261127-100000-cccc";

fn corobench(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_corobench"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("corobench runs")
}

/// The fixture database with two more runs, stored as the runner stores
/// them: one with every kind of trial (load, idle, program, a user's
/// server, failed), profiles, claims and hosts; one that searched capacity.
fn fixture_with_every_kind() -> Fixture {
    let fixture = Fixture::new();
    let mut store = Store::open_existing(&fixture.db).unwrap();
    let every = every_kind(store.load_run(&fixture.run_a).unwrap());
    let capacity = capacity_search(store.load_run(&fixture.run_b).unwrap());
    for run in [&every, &capacity] {
        store
            .create_run(&run.run, run.trials_per_scenario, &run.scenarios)
            .unwrap();
        for trial in &run.trials {
            store.record_trial(&run.run.id, trial).unwrap();
        }
        for profile in &run.profiles {
            store.record_profile(&run.run.id, profile).unwrap();
        }
    }
    fixture
}

fn every_kind(mut run: StoredRun) -> StoredRun {
    run.run.id = EVERY_KIND.to_owned();
    run.run.started_at_unix_ms += 86_400_000;
    run.run.claims = vec![lab::plaintext_claim()];
    run.run.provenance.hosts = vec![server_host()];
    run.run.provenance.tool_versions.insert(
        "orders command".to_owned(),
        "./orders --port $PORT".to_owned(),
    );
    let first = run.scenarios.len() as u32;
    let template = run.scenarios[0].clone();
    let load_trials: Vec<TrialRecord> = run
        .trials
        .iter()
        .filter(|t| t.scenario_index == 0)
        .cloned()
        .collect();
    run.scenarios.extend(extra_scenarios(&template, first));
    let mut sequence = run.trials.len() as u32;
    let mut next = |scenario: u32, index: u32| {
        sequence += 1;
        TrialRecord::started(
            scenario,
            index,
            sequence,
            1_763_900_000_000 + i64::from(sequence),
        )
    };
    for (index, base) in load_trials.iter().enumerate() {
        let index = index as u32;
        let idle = idle_trial(next(first, index), base);
        let program = program_trial(next(first + 1, index), base);
        let user = user_server_trial(&next(first + 2, index), base);
        run.trials.extend([idle, program, user]);
    }
    let failed = next(first + 2, load_trials.len() as u32)
        .failed("the server at http://127.0.0.1:8080 refused connections:\nconnect: refused");
    run.trials.push(failed);
    run.trials_per_scenario += 1;
    run.profiles = lab::two_profiles();
    run
}

fn server_host() -> HostProvenance {
    HostProvenance {
        role: "server".to_owned(),
        address: "ssh://bench@10.0.0.2".to_owned(),
        hostname: "server-1".to_owned(),
        kernel: "6.18.44".to_owned(),
        cpu_model: "AMD EPYC".to_owned(),
        cpu_count: 2,
        corobench_version: "corobench 0.1.0".to_owned(),
        corobench_path: "/usr/local/bin/corobench".to_owned(),
        cpus: Some("0".to_owned()),
        clock_offset_us: Some(-120),
        clock_uncertainty_us: Some(40),
        node: None,
        image: None,
    }
}

fn idle_trial(mut trial: TrialRecord, base: &TrialRecord) -> TrialRecord {
    let index = trial.trial_index;
    trial.idle = Some(IdleMeasurement {
        connections: 1000,
        rss_bytes: (40 << 20) + u64::from(index) * 4096,
        settled: index != 2,
        waited_s: 1.5,
    });
    trial.resources = base.resources;
    trial
}

fn program_trial(mut trial: TrialRecord, base: &TrialRecord) -> TrialRecord {
    let index = trial.trial_index;
    trial.program = Some(ProgramResult {
        metrics: vec![
            ProgramMetric {
                unit: "req/s".to_owned(),
                value: 48_900.0 + f64::from(index) * 113.0,
            },
            ProgramMetric {
                unit: "B/op".to_owned(),
                value: 412.0,
            },
        ],
        lines: vec![format!(
            "BenchmarkFanout-1 1 {index} ns/op 48900 req/s 412 B/op"
        )],
        elapsed_s: 2.5,
        resources: base.resources,
    });
    trial
}

/// A user's server already running: `base`'s load, with counters, the
/// probe and a pool, in `slot`'s place.
fn user_server_trial(slot: &TrialRecord, base: &TrialRecord) -> TrialRecord {
    let index = slot.trial_index;
    let mut user = TrialRecord {
        scenario_index: slot.scenario_index,
        trial_index: slot.trial_index,
        sequence: slot.sequence,
        ..base.clone()
    };
    user.flags.push(TrialFlag::AlreadyRunning {
        url: "http://127.0.0.1:8080".to_owned(),
    });
    user.counters = Some(counters(index));
    user.probe = Some(MachineProbe {
        server_mb_per_s: 480.0 + f64::from(index),
        generator_mb_per_s: 510.5,
    });
    user.pool = Some(pool(index));
    if index == 1 {
        // A mean without samples: NaN in the store, null in a run file.
        if let Some(resources) = user.resources.as_mut() {
            resources.cpu_user_pct_mean = f64::NAN;
        }
    }
    user
}

fn extra_scenarios(template: &ScenarioRecord, first: u32) -> Vec<ScenarioRecord> {
    let mut idle = template.clone();
    idle.index = first;
    idle.key = "go-nethttp/idle-1k/c=1000".into();
    idle.workload.name = "idle-1k".to_owned();
    idle.workload.idle = true;
    idle.connections = 1000;
    let mut program = template.clone();
    program.index = first + 1;
    program.key = "go-fanout/pooled".into();
    program.target = "go-fanout".to_owned();
    program.program = Some(ProgramScenario {
        server: Some(ServerChoice {
            target: "go-nethttp".to_owned(),
            parameters: [("GOMAXPROCS".to_owned(), "1".to_owned())].into(),
        }),
    });
    let mut user = template.clone();
    user.index = first + 2;
    user.key = "orders/plaintext/c=8".into();
    user.target = "orders".to_owned();
    vec![idle, program, user]
}

fn counters(index: u32) -> TrialCounters {
    let counts = |syscalls: u64| KernelCounts {
        syscalls: Some(syscalls),
        ctx_switches: Some(4000 + u64::from(index)),
        minor_faults: Some(12),
        threads: 4,
    };
    TrialCounters {
        server: counts(2_000_000 + u64::from(index)),
        generator: counts(1_000_000),
        missing: Vec::new(),
        responses: Some(100_000),
    }
}

fn pool(index: u32) -> PoolWindow {
    let reading = |acquires: u64| PoolCounters {
        max: Some(10),
        open: Some(10),
        idle: Some(2),
        waiting: Some(0),
        acquires: Some(acquires),
        new_connections: Some(10 + u64::from(index)),
        empty_acquires: Some(3),
        acquire_wait_us: Some(1500),
    };
    PoolWindow {
        before: reading(100),
        after: reading(9_100),
    }
}

/// Run B as a capacity search of its open loops.
fn capacity_search(mut run: StoredRun) -> StoredRun {
    use corobench_model::{CapacitySettings, Slo, SloMeasure};
    run.run.id = CAPACITY.to_owned();
    run.run.started_at_unix_ms += 2 * 86_400_000;
    run.run.capacity = Some(CapacitySettings {
        slos: vec![
            Slo {
                measure: SloMeasure::LatencyPercentile { percentile: 99.0 },
                limit: 2_000.0,
            },
            Slo {
                measure: SloMeasure::Errors,
                limit: 0.001,
            },
        ],
        start_rate: 1500.0,
        growth: 2.0,
        max_rate: 6000.0,
        min_rate: 100.0,
        trials_per_rate: 5,
        precision: 0.05,
        max_rates: 6,
    });
    run.run.status = RunStatus::Complete;
    run
}

/// Every format of `report RUN`, and its flame graph where it has one.
fn reports(db: &Path, run: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = FORMATS
        .iter()
        .map(|format| {
            let output = corobench(db, &["report", run, "--format", format, "--color", "never"]);
            assert!(
                output.status.success(),
                "{run} {format}: {}",
                stderr(&output)
            );
            ((*format).to_owned(), output.stdout)
        })
        .collect();
    if run == EVERY_KIND {
        let svg = db.with_extension("svg");
        let svg_text = svg.to_str().unwrap();
        let flame = [
            "report",
            run,
            "--flamegraph",
            "go-nethttp/plaintext/c=8",
            "-o",
            svg_text,
        ];
        ok(&corobench(db, &flame));
        out.push(("flamegraph".to_owned(), std::fs::read(&svg).unwrap()));
    }
    out
}

fn all_runs(fixture: &Fixture) -> [String; 4] {
    [
        fixture.run_a.clone(),
        fixture.run_b.clone(),
        EVERY_KIND.to_owned(),
        CAPACITY.to_owned(),
    ]
}

#[test]
fn an_imported_run_reports_byte_for_byte_as_the_original() {
    let fixture = fixture_with_every_kind();
    let file = fixture.scratch("runs.json.gz");
    let runs = all_runs(&fixture);
    let mut export = vec!["export"];
    export.extend(runs.iter().map(String::as_str));
    export.extend(["-o", file.to_str().unwrap()]);
    let said = ok(&fixture.corobench(&export));
    assert!(
        said.contains(&format!("exported run {EVERY_KIND}")),
        "{said}"
    );

    let elsewhere = fixture.scratch("elsewhere.db");
    let said = ok(&corobench(&elsewhere, &["import", file.to_str().unwrap()]));
    assert!(said.contains("4 of 4 runs added"), "{said}");
    for run in &runs {
        let original = reports(&fixture.db, run);
        let imported = reports(&elsewhere, run);
        for ((format, a), (_, b)) in original.iter().zip(&imported) {
            assert!(a.len() > 100, "{run} {format}: {} bytes", a.len());
            assert!(a == b, "{run} {format}: the imported run reports otherwise");
        }
    }
    let compare = ["compare", runs[0].as_str(), runs[1].as_str()];
    assert_eq!(
        ok(&corobench(&fixture.db, &compare)),
        ok(&corobench(&elsewhere, &compare))
    );
    // And the imported runs export to the same bytes.
    let again = fixture.scratch("again.json.gz");
    let mut export_again = vec!["export"];
    export_again.extend(runs.iter().map(String::as_str));
    export_again.extend(["-o", again.to_str().unwrap()]);
    ok(&corobench(&elsewhere, &export_again));
    assert!(std::fs::read(&file).unwrap() == std::fs::read(&again).unwrap());
}

/// What a database holds, as `runs --json` lists it.
fn listing(db: &Path) -> String {
    ok(&corobench(db, &["runs", "--json"]))
}

#[test]
fn importing_twice_stores_each_run_once() {
    let fixture = Fixture::new();
    let file = fixture.scratch("a.json.gz");
    ok(&fixture.corobench(&["export", &fixture.run_a, "-o", file.to_str().unwrap()]));
    let db = fixture.scratch("copy.db");
    ok(&corobench(&db, &["import", file.to_str().unwrap()]));
    let once = listing(&db);
    let said = ok(&corobench(
        &db,
        &["import", file.to_str().unwrap(), file.to_str().unwrap()],
    ));
    assert!(said.contains("already stored, unchanged"), "{said}");
    assert!(said.contains("0 of 2 runs added"), "{said}");
    assert_eq!(listing(&db), once);
}

#[test]
fn another_machines_database_imports_like_a_run_file() {
    let fixture = Fixture::new();
    let db = fixture.scratch("here.db");
    let source = fixture.db.to_str().unwrap();
    let said = ok(&corobench(&db, &["import", source]));
    assert!(said.contains("2 of 2 runs added"), "{said}");
    for run in [&fixture.run_a, &fixture.run_b] {
        assert_eq!(reports(&fixture.db, run), reports(&db, run));
    }
}

/// Runs `import FILE` into `db` and returns the error, checking that the
/// database (if it existed) lists the same runs as before and that a
/// database that did not exist was not created.
fn refused(db: &Path, file: &Path, exit: i32) -> String {
    let before = db.exists().then(|| listing(db));
    let output = corobench(db, &["import", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(exit), "{}", stderr(&output));
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
    match before {
        Some(before) => assert_eq!(listing(db), before),
        None => assert!(!db.exists(), "a refused import created {}", db.display()),
    }
    stderr(&output)
}

fn exported_run_a(fixture: &Fixture) -> PathBuf {
    let file = fixture.scratch("a.json.gz");
    ok(&fixture.corobench(&["export", &fixture.run_a, "-o", file.to_str().unwrap()]));
    file
}

#[test]
fn files_that_are_not_exports_or_are_truncated_change_nothing() {
    let fixture = Fixture::new();
    let text = fixture.scratch("notes.txt");
    std::fs::write(&text, "a/b = 2\n").unwrap();
    let error = refused(&fixture.db, &text, 2);
    assert!(error.contains("is not a corobench run file"), "{error}");
    let fresh = fixture.scratch("fresh.db");
    refused(&fresh, &text, 2);

    let file = exported_run_a(&fixture);
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let error = refused(&fresh, &file, 2);
    assert!(error.contains("is truncated"), "{error}");
}

#[test]
fn a_corrupt_histogram_changes_nothing_and_names_the_trial() {
    use std::io::{Read as _, Write as _};
    let fixture = Fixture::new();
    let file = exported_run_a(&fixture);
    let mut json = String::new();
    flate2_read(&file).read_to_string(&mut json).unwrap();
    let mut document: serde_json::Value = serde_json::from_str(&json).unwrap();
    let latency = &mut document["runs"][0]["trials"][0]["load"]["latency"];
    let text = latency["hdr_v2_base64"].as_str().unwrap().to_owned();
    // Flip bytes inside the compressed payload, past its header.
    let mut broken: Vec<char> = text.chars().collect();
    for c in broken.iter_mut().skip(20).take(12) {
        *c = if *c == 'A' { 'B' } else { 'A' };
    }
    latency["hdr_v2_base64"] = serde_json::Value::String(broken.into_iter().collect());
    let mut gzip = flate2_write();
    gzip.write_all(document.to_string().as_bytes()).unwrap();
    std::fs::write(&file, gzip.finish().unwrap()).unwrap();
    let db = fixture.scratch("fresh.db");
    let error = refused(&db, &file, 2);
    assert!(error.contains("trial 0 of scenario"), "{error}");
    assert!(error.contains("histogram"), "{error}");
}

fn flate2_read(path: &Path) -> impl std::io::Read {
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
}

fn flate2_write() -> flate2::write::GzEncoder<Vec<u8>> {
    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast())
}

#[test]
fn a_different_run_under_a_stored_id_changes_nothing() {
    let fixture = Fixture::new();
    let file = exported_run_a(&fixture);
    // Run B stored under run A's id, in another database.
    let other = fixture.scratch("other.db");
    let mut store = Store::open(&other).unwrap();
    let mut impostor = Store::open_existing(&fixture.db)
        .unwrap()
        .load_run(&fixture.run_b)
        .unwrap();
    impostor.run.id = fixture.run_a.clone();
    store.import_runs(&[impostor]).unwrap();
    drop(store);
    let error = refused(&other, &file, 2);
    assert!(error.contains("with other contents"), "{error}");
    assert!(error.contains("import into another database"), "{error}");
}

#[test]
fn a_run_still_running_is_not_exported() {
    let fixture = Fixture::new();
    let mut store = Store::open_existing(&fixture.db).unwrap();
    store
        .set_run_status(&fixture.run_a, RunStatus::Running, None)
        .unwrap();
    drop(store);
    let file = fixture.scratch("running.json.gz");
    let error =
        usage_error(&fixture.corobench(&["export", &fixture.run_a, "-o", file.to_str().unwrap()]));
    assert!(error.contains("is still running"), "{error}");
    assert!(
        error.contains(&format!("corobench run --resume {}", fixture.run_a)),
        "{error}"
    );
    assert!(!file.exists());
}

#[test]
fn a_newer_run_file_is_refused() {
    use std::io::Write as _;
    let fixture = Fixture::new();
    let file = fixture.scratch("future.json.gz");
    let mut gzip = flate2_write();
    gzip.write_all(br#"{"format":"corobench-runs","version":9,"runs":[]}"#)
        .unwrap();
    std::fs::write(&file, gzip.finish().unwrap()).unwrap();
    let error = refused(&fixture.db, &file, 2);
    assert!(
        error.contains("newer corobench (run file version 9"),
        "{error}"
    );
}

#[test]
fn a_read_only_database_is_left_as_it_was() {
    let fixture = Fixture::new();
    let file = exported_run_a(&fixture);
    let db = fixture.scratch("read-only.db");
    let store = Store::open(&db).unwrap();
    drop(store);
    let Some(_guard) = ReadOnly::make(&db) else {
        eprintln!("skipped: this user can write to a read-only file and chattr +i is refused");
        return;
    };
    let error = refused(&db, &file, 2);
    assert!(error.contains("is read-only"), "{error}");
}

/// A file made read-only for the test: mode 0444, and for root (whom the
/// mode does not stop) the immutable attribute; undone on drop.
struct ReadOnly(PathBuf, bool);

impl ReadOnly {
    fn make(path: &Path) -> Option<Self> {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444)).unwrap();
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        if !root {
            return Some(Self(path.to_path_buf(), false));
        }
        let status = Command::new("chattr").arg("+i").arg(path).status();
        status
            .is_ok_and(|s| s.success())
            .then(|| Self(path.to_path_buf(), true))
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if self.1 {
            let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
        }
    }
}

#[test]
fn a_locked_database_is_left_as_it_was() {
    let fixture = Fixture::new();
    let file = exported_run_a(&fixture);
    let db = fixture.scratch("locked.db");
    drop(Store::open(&db).unwrap());
    let before = listing(&db);
    // Another process's write transaction holds the lock while the import
    // waits for it (the store's busy timeout) and gives up.
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let output = corobench(&db, &["import", file.to_str().unwrap()]);
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is locked by another process"),
        "{}",
        stderr(&output)
    );
    assert_eq!(listing(&db), before);
}
