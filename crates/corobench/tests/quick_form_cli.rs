//! `corobench bench` complete: one server measured alone, a server that
//! ignores `{port}` told apart at once with its stderr, the flags its notes
//! point to (`--pid`, `--server-cpus`, `--generator-cpus`,
//! `--ready-timeout`, `--idle`), and a server whose folder holds the
//! results database compared with itself without a false "code changed".

mod lab;

use corobench_store::Store;
use lab::{Lab, text};

fn kit() -> String {
    corobench_testkit::binary_path().display().to_string()
}

/// A short quick-form run's flags after the servers.
const SHORT: [&str; 12] = [
    "--path",
    "/plaintext",
    "-c",
    "2",
    "--trials",
    "1",
    "-d",
    "0.3s",
    "--warmup",
    "0.1s",
    "--idle",
    "0.1s",
];

fn bench(lab: &Lab, servers: &[&str], extra: &[&str]) -> std::process::Output {
    let mut args = vec!["bench"];
    for server in servers {
        args.extend(["--server", server]);
    }
    args.extend(SHORT);
    args.extend(extra);
    lab.run(&args)
}

fn latest_run(lab: &Lab) -> corobench_model::StoredRun {
    let store = Store::open_existing(lab.db()).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    store.load_run(&id).unwrap()
}

#[test]
fn one_server_is_measured_alone_and_the_run_says_so() {
    let lab = Lab::new();
    let server = format!("api={}", kit());
    let output = bench(&lab, &[&server], &[]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("one server, measured alone"), "{stderr}");
    let stdout = text(&output.stdout);
    assert!(!stdout.contains("Deltas compare"), "{stdout}");
}

#[test]
fn a_server_that_ignores_its_port_fails_at_once_quoting_its_stderr() {
    let lab = Lab::new();
    // It listens on a port of its own choosing whatever it is told.
    let script = lab.write(
        "deaf.sh",
        &format!(
            "#!/bin/sh\necho 'binding my own port' >&2\nPORT=0 exec {} knobs\n",
            kit()
        ),
    );
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let server = format!("deaf={}", script.display());
    let output = bench(&lab, &[&server], &["--ready-timeout", "10m"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("listens on port"), "{stderr}");
    assert!(
        stderr.contains("the one it was told to listen on"),
        "{stderr}"
    );
    assert!(stderr.contains("binding my own port"), "{stderr}");
    assert!(
        !stderr.contains("stderr.log"),
        "no path to a log that is gone: {stderr}"
    );
}

#[test]
fn a_ready_timeout_bounds_the_wait_for_a_server() {
    let lab = Lab::new();
    let output = bench(&lab, &["sleepy=sleep 30"], &["--ready-timeout", "1s"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("was not ready on port"), "{stderr}");
    assert!(stderr.contains("within 1s"), "{stderr}");
}

#[test]
fn the_cpus_of_the_servers_and_the_generator_are_the_flags() {
    let lab = Lab::new();
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let (server_cpus, generator_cpus) = if cpus >= 2 { ("1", "0") } else { ("0", "0") };
    let server = format!("api={}", kit());
    let output = bench(
        &lab,
        &[&server],
        &[
            "--server-cpus",
            server_cpus,
            "--generator-cpus",
            generator_cpus,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let provenance = latest_run(&lab).run.provenance;
    assert_eq!(provenance.server_cpus, server_cpus);
    assert_eq!(provenance.generator_cpus, generator_cpus);
}

#[test]
fn pid_and_process_name_the_server_already_running_they_sample() {
    let lab = Lab::new();
    let spec_out = lab.path("bench.toml").display().to_string();
    let output = lab.run(&[
        "bench",
        "--server",
        "live=http://127.0.0.1:8080",
        "--pid",
        "4242",
        "--path",
        "/",
        "--spec-out",
        &spec_out,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let spec = std::fs::read_to_string(&spec_out).unwrap();
    assert!(spec.contains("pid = 4242"), "{spec}");
    let output = lab.run(&[
        "bench",
        "--server",
        &format!("api={}", kit()),
        "--process",
        "api=nginx",
        "--path",
        "/",
        "--spec-out",
        &spec_out,
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("--process api=nginx: api is not a server given as NAME=http://"),
        "{stderr}"
    );
}

#[test]
fn the_same_server_twice_beside_its_results_is_no_code_change() {
    let lab = Lab::new();
    // The server's folder is the lab, where the results database grows
    // with every run.
    let server = format!("api={}", kit());
    for _ in 0..2 {
        let output = bench(
            &lab,
            &[&server],
            &["--cwd", &lab.root().display().to_string()],
        );
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    }
    let store = Store::open_existing(lab.db()).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 2);
    let output = lab.run(&["compare", &runs[1].id, &runs[0].id]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(!stdout.contains("changed between the runs"), "{stdout}");
    assert!(!stdout.contains("ran another program"), "{stdout}");
}
