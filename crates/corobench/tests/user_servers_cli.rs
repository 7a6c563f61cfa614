//! A user's own servers end to end, with the test kit's binary standing in
//! for them (real processes, no contract): defined in a spec, started by
//! command, checked against the workload's expectations before the first
//! trial, measured, and the quick form `corobench bench`.

mod lab;

use corobench_model::TrialStatus;
use corobench_store::Store;
use lab::{Lab, text};

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
    let measured = Store::open_existing(lab.db())
        .ok()
        .and_then(|store| {
            let id = store.resolve_run_id("latest").ok()?;
            Some(store.load_run(&id).ok()?.trials.len())
        })
        .unwrap_or(0);
    assert_eq!(measured, 0, "no trial may run");
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
