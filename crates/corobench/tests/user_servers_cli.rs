//! A user's own servers end to end, with the test kit's binary standing in
//! for them (real processes, no contract): defined in a spec, started by
//! command, checked against the workload's expectations before the first
//! trial, measured, and the quick form `corobench bench`.

mod lab;

use corobench_model::TrialStatus;
use corobench_store::Store;
use lab::{AlreadyRunning, Lab, text};

/// A spec measuring `servers` (TOML `[servers.NAME]` tables) on /plaintext.
fn spec(lab: &Lab, targets: &[&str], expect: &str, servers: &str) -> String {
    let list: Vec<String> = targets.iter().map(|t| format!("{t:?}")).collect();
    let text = format!(
        "name = \"mine\"\ntargets = [{}]\n[run]\ntrials = 1\nduration = \"1s\"\nwarmup = \"0.2s\"\n\
         idle = \"0.1s\"\n[schedule]\nconnections = 2\n[[workloads]]\nname = \"hello\"\n\
         path = \"/plaintext\"\n{expect}\n{servers}",
        list.join(", ")
    );
    lab.write("spec.toml", &text).display().to_string()
}

fn kit() -> String {
    corobench_testkit::binary_path().display().to_string()
}

fn stored_trials(lab: &Lab) -> Vec<corobench_model::TrialRecord> {
    let store = Store::open_existing(lab.db()).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    store.load_run(&id).unwrap().trials
}

/// How many trials the latest run stored; 0 when there is no run at all.
fn trials_stored(lab: &Lab) -> usize {
    Store::open_existing(lab.db())
        .ok()
        .and_then(|store| {
            let id = store.resolve_run_id("latest").ok()?;
            Some(store.load_run(&id).ok()?.trials.len())
        })
        .unwrap_or(0)
}

#[test]
fn a_server_defined_in_the_spec_is_checked_measured_and_its_executable_recorded() {
    let lab = Lab::new();
    let servers = format!(
        "[servers.api]\ncommand = {:?}\nready = \"/healthz\"\n",
        kit()
    );
    let expect = "expect_status = 200\nexpect_body = \"Hello\"\nexpect_header = \"Content-Type: text/plain\"";
    let spec = spec(&lab, &["api"], expect, &servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("checking api answers hello as expected"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("building api"),
        "nothing is built for a server without a build command: {stderr}"
    );
    let trials = stored_trials(&lab);
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0].status, TrialStatus::Ok, "{:?}", trials[0].failure);
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap()
        .run;
    let versions = &run.provenance.tool_versions;
    assert!(
        versions["api executable"].starts_with("sha256:"),
        "{versions:?}"
    );
    assert_eq!(versions["api command"], kit());
}

#[test]
fn a_server_that_never_becomes_ready_fails_naming_the_port_it_was_given() {
    let lab = Lab::new();
    let servers = "[servers.sleepy]\ncommand = \"sleep 30\"\nready_timeout_s = 1\n";
    let spec = spec(&lab, &["sleepy"], "", servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("was not ready on port"), "{stderr}");
    assert!(
        stderr.contains("the port accepted a connection"),
        "{stderr}"
    );
}

#[test]
fn answers_that_break_the_expectations_stop_the_run_before_any_trial() {
    let lab = Lab::new();
    let servers = format!(
        "[servers.broken]\ncommand = [{:?}, \"knobs\", \"--status\", \"500\"]\n",
        kit()
    );
    let spec = spec(&lab, &["broken"], "", &servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("broken does not answer workload hello (GET /plaintext) as expected"),
        "{stderr}"
    );
    assert!(stderr.contains("got status 500"), "{stderr}");
    assert_eq!(trials_stored(&lab), 0, "no trial may run");
}

/// The test kit's knob server speaking h2c alone (no HTTP/1.1), with `flags`.
fn h2c_only_server(name: &str, flags: &str) -> String {
    format!(
        "[servers.{name}]\ncommand = [{:?}, \"knobs\", \"--h2c\"{flags}]\n\
         [servers.{name}.protocols]\nh2c = true\n",
        kit()
    )
}

#[test]
fn a_spec_server_that_does_not_declare_a_protocol_is_skipped_saying_where_to_declare_it() {
    let lab = Lab::new();
    let servers = format!("[servers.plain]\ncommand = {:?}\n", kit());
    let spec = spec(&lab, &["plain"], "protocol = \"h2c\"", &servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "skipped plain over h2c (1 scenario): the spec does not declare it \
             (add h2c = true under [servers.plain.protocols] if the server speaks it)"
        ),
        "{stderr}"
    );
}

#[test]
fn a_server_that_speaks_http2_alone_is_checked_over_http2_and_measured() {
    let lab = Lab::new();
    let servers = h2c_only_server("h2only", "");
    let expect = "protocol = \"h2c\"\nexpect_status = 200\nexpect_body = \"Hello\"";
    let spec = spec(&lab, &["h2only"], expect, &servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("checking h2only answers hello as expected"),
        "{stderr}"
    );
    let trials = stored_trials(&lab);
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0].status, TrialStatus::Ok, "{:?}", trials[0].failure);
    let load = trials[0].load.as_ref().expect("the trial measured");
    assert!(load.http2.is_some() && load.requests > 0);
}

#[test]
fn an_http2_answer_that_breaks_the_expectations_stops_the_run_before_any_trial() {
    let lab = Lab::new();
    let servers = h2c_only_server("h2broken", ", \"--status\", \"503\"");
    let spec = spec(&lab, &["h2broken"], "protocol = \"h2c\"", &servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("h2broken does not answer workload hello (GET /plaintext) as expected"),
        "{stderr}"
    );
    assert!(stderr.contains("got status 503"), "{stderr}");
    assert_eq!(trials_stored(&lab), 0, "no trial may run");
}

#[test]
fn a_server_that_exits_mid_trial_fails_that_trial_with_the_reason() {
    let lab = Lab::new();
    // The shell becomes the server (exec) after starting a timer that
    // stops it a second into the measured window.
    let script = format!("(sleep 1.4; kill $$) & exec {}", kit());
    let servers = format!("[servers.short]\ncommand = [\"sh\", \"-c\", {script:?}]\n");
    let spec = spec(&lab, &["short"], "", &servers);
    let longer = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("duration = \"1s\"", "duration = \"3s\"");
    lab.write("spec.toml", &longer);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let trials = stored_trials(&lab);
    assert_eq!(trials[0].status, TrialStatus::Failed);
    assert!(
        trials[0]
            .failure
            .as_deref()
            .unwrap_or("")
            .contains("exited"),
        "{:?}",
        trials[0].failure
    );
}

#[test]
fn the_quick_form_runs_two_servers_and_writes_the_spec_it_stands_for() {
    let lab = Lab::new();
    let (a, b) = (
        format!("fast={}", kit()),
        format!("slow={} --model worker-pool", kit()),
    );
    let common = [
        "--path",
        "/plaintext",
        "--expect-status",
        "200",
        "-c",
        "2",
        "--trials",
        "1",
        "-d",
        "0.5s",
        "--warmup",
        "0.1s",
    ];
    let mut args = vec!["bench", "--server", &a, "--server", &b];
    args.extend(common);
    let output = lab.run(&args);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("fast/request/c=2") || stdout.contains("fast "),
        "{stdout}"
    );
    assert_eq!(stored_trials(&lab).len(), 2);
    let spec_out = lab.path("bench.toml").display().to_string();
    args.extend(["--spec-out", spec_out.as_str()]);
    let output = lab.command(&args).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let plan = lab.command(&["plan", &spec_out]).output().unwrap();
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan.stderr));
    assert!(
        text(&plan.stdout).contains("fast"),
        "{}",
        text(&plan.stdout)
    );
}

/// Issue "hostile input, third round", message 14: `servers = 5` was not
/// said to be a table of servers at its line.
#[test]
fn servers_that_are_no_table_are_refused_at_their_line_with_what_they_take() {
    let lab = Lab::new();
    let path = lab.write(
        "spec.toml",
        "name = \"mine\"\nservers = 5\n[[workloads]]\nname = \"hello\"\npath = \"/\"\n",
    );
    let plan = lab
        .command(&["plan", path.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = lab::exited(&plan, 2);
    lab::assert_says(
        &stderr,
        &[
            "spec.toml:2: servers: expects a table for each server",
            "found the integer 5",
            "targets = [\"NAME\", …]",
        ],
    );
}

#[test]
fn a_server_whose_program_is_missing_is_skipped_with_the_reason() {
    let lab = Lab::new();
    let servers = "[servers.here]\ncommand = \"true {port}\"\n\
                   [servers.missing]\ncommand = \"nowhere {port}\"\n\
                   requires = [\"corobench-no-such-command\"]\nhint = \"install it\"\n";
    let spec = spec(&lab, &["here", "missing"], "", servers);
    let output = lab.command(&["plan", &spec]).output().unwrap();
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        stdout.contains("skipped missing: `corobench-no-such-command` is not on PATH (install it)"),
        "{stdout}"
    );
}

#[test]
fn a_server_already_running_is_measured_where_it_is_sampled_and_left_running() {
    let lab = Lab::new();
    let mut server = AlreadyRunning::start();
    let servers = format!(
        "[servers.live]\nurl = {:?}\npid = {}\n",
        server.url,
        server.child.id()
    );
    let spec = spec(&lab, &["live"], "expect_status = 200", &servers);
    let twice = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("trials = 1", "trials = 2");
    lab.write("spec.toml", &twice);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(server.still_running(), "the run must not stop it");
    let plan = text(&lab.command(&["plan", &spec]).output().unwrap().stdout);
    assert!(
        plan.contains(&format!("live: already running at {}", server.url)),
        "{plan}"
    );
    let trials = stored_trials(&lab);
    assert_eq!(trials.len(), 2);
    for trial in &trials {
        assert_eq!(trial.status, TrialStatus::Ok, "{:?}", trial.failure);
        assert!(
            trial.flags.iter().any(|f| matches!(
                f,
                corobench_model::TrialFlag::AlreadyRunning { url } if *url == server.url
            )),
            "{:?}",
            trial.flags
        );
        let resources = trial.resources.as_ref().expect("its process was sampled");
        assert!(resources.rss_peak_bytes > 0, "{resources:?}");
    }
    let report = lab.run(&["report", "latest"]);
    let shown = text(&report.stdout);
    assert!(
        shown.contains(&format!("already running at {}", server.url)),
        "{shown}"
    );
    let json = lab.run(&["report", "latest", "--format", "json"]);
    let document: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let schema_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/report.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<String> = validator
        .iter_errors(&document)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    let versions = &run.run.provenance.tool_versions;
    assert!(
        versions["live executable"].starts_with("sha256:"),
        "{versions:?}"
    );
    assert!(
        versions["live url"].contains("already running"),
        "{versions:?}"
    );
}

#[test]
fn a_url_that_refuses_connections_stops_the_run_before_any_trial() {
    let lab = Lab::new();
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let servers = format!("[servers.gone]\nurl = \"http://127.0.0.1:{port}\"\n");
    let spec = spec(&lab, &["gone"], "", &servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("http://127.0.0.1:{port} refuses connections")),
        "{stderr}"
    );
    assert!(
        stderr.contains("spec.toml:"),
        "names where it is declared: {stderr}"
    );
    assert!(stderr.contains("start the server first"), "{stderr}");
    assert_eq!(trials_stored(&lab), 0, "no trial may run");
}

#[test]
fn the_quick_form_takes_a_server_already_running_beside_one_it_starts() {
    let lab = Lab::new();
    let server = AlreadyRunning::start();
    let (fresh, live) = (format!("fresh={}", kit()), format!("live={}", server.url));
    let output = lab.run(&[
        "bench",
        "--server",
        &fresh,
        "--server",
        &live,
        "--path",
        "/plaintext",
        "-c",
        "2",
        "--trials",
        "1",
        "-d",
        "0.5s",
        "--warmup",
        "0.1s",
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let trials = stored_trials(&lab);
    assert_eq!(trials.len(), 2);
    let flagged = trials
        .iter()
        .filter(|t| {
            !t.flags.is_empty()
                && t.flags
                    .iter()
                    .any(|f| f.to_string().contains("already running"))
        })
        .count();
    assert_eq!(flagged, 1, "only the server already running is flagged");
}

/// The entries of the lab's temporary folder (`TMPDIR`) named after the
/// corobench of process `pid`.
fn work_folders_of(lab: &Lab, pid: u32) -> Vec<String> {
    let owned = format!("corobench-{pid}-");
    std::fs::read_dir(lab.path("tmp"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&owned) || name.ends_with(&format!("-{pid}")))
        .collect()
}

/// Issue "hostile input, third round", left behind 3: a command that
/// cannot start left its work folder, `$TMPDIR/corobench-PID-NAME-0`,
/// after a normal error exit. Neither a program that does not exist nor
/// one that exits at once leaves anything of that corobench behind.
#[test]
fn a_server_that_cannot_start_leaves_no_work_folder() {
    let commands = [
        ("missing", "\"./corobench-no-such-program {port}\""),
        ("quits", "[\"sh\", \"-c\", \"exit 7\"]"),
    ];
    for (name, command) in commands {
        let lab = Lab::new();
        let servers = format!("[servers.{name}]\ncommand = {command}\nready_timeout_s = 5\n");
        let spec = spec(&lab, &[name], "", &servers);
        let child = lab
            .command_with_db(&["run", &spec])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let output = child.wait_with_output().unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{name}: {stderr}");
        assert!(stderr.contains(name), "{name}: {stderr}");
        let left = work_folders_of(&lab, pid);
        assert!(left.is_empty(), "{name} left {left:?}: {stderr}");
    }
}

/// Issue "hostile input, third round", message 4: errors pointed to a
/// `stderr.log` that was deleted with the server's work folder. The error
/// quotes what the server wrote, and names no log that is gone.
#[test]
fn a_server_that_exits_at_once_is_told_by_what_it_wrote() {
    let lab = Lab::new();
    let script = "echo 'cannot read /etc/api/config.yaml: permission denied' >&2; exit 1";
    let servers = format!("[servers.api]\ncommand = [\"sh\", \"-c\", {script:?}]\n");
    let spec = spec(&lab, &["api"], "", &servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("cannot read /etc/api/config.yaml: permission denied"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("stderr.log"),
        "a log that is gone: {stderr}"
    );
    let tmp = lab.path("tmp").display().to_string();
    assert!(!stderr.contains(&tmp), "a folder that is gone: {stderr}");
}

/// The same for a build that fails: its output is quoted, and the log the
/// error names is still there when the error is read.
#[test]
fn a_failed_build_is_told_by_its_output_and_a_log_that_stays() {
    let lab = Lab::new();
    let build = "echo 'main.go:3: undefined: handler' >&2; exit 2";
    let servers = format!(
        "[servers.api]\ncommand = \"{{out}}/api --port {{port}}\"\n\
         build = [\"sh\", \"-c\", {build:?}]\n"
    );
    let spec = spec(&lab, &["api"], "", &servers);
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("main.go:3: undefined: handler"), "{stderr}");
    let logs: Vec<&str> = stderr
        .split_whitespace()
        .map(|word| word.trim_end_matches([':', ',', ';']))
        .filter(|word| word.starts_with('/') && word.ends_with(".log"))
        .collect();
    assert!(!logs.is_empty(), "the error names its log: {stderr}");
    for log in logs {
        let kept = std::fs::read_to_string(log).unwrap_or_default();
        assert!(kept.contains("undefined: handler"), "{log}: {kept:?}");
    }
}
