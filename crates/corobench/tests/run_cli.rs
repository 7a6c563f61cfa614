//! `corobench run` end to end against test-kit targets (real processes):
//! a smoke run, an interrupted run resumed, and corobench killed outright.

mod lab;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use corobench_store::Store;
use lab::{Lab, text};

/// A lab with test-kit targets and a spec of two workloads.
fn smoke_lab(targets: &[&str], trials: u32, duration: &str) -> Lab {
    let lab = Lab::new();
    for name in targets {
        lab.kit_target(name);
    }
    let list: Vec<String> = targets.iter().map(|t| format!("{t:?}")).collect();
    let spec = format!(
        "name = \"smoke\"\ntargets = [{}]\n[run]\ntrials = {trials}\nduration = \"{duration}\"\nwarmup = \"0.1s\"\nidle = \"0.1s\"\n\
         [schedule]\nconnections = 4\n[[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n\
         [[workloads]]\nname = \"json\"\npath = \"/json\"\n",
        list.join(", ")
    );
    lab.write("spec.toml", &spec);
    lab
}

/// corobench started with `args`, its output piped.
fn spawn(lab: &Lab, args: &[&str]) -> Child {
    lab.command_with_db(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("corobench starts")
}

/// Waits (bounded) until `ready` holds.
fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < limit,
            "gave up waiting for {what} after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_run_stores_every_trial_and_prints_its_summary() {
    let lab = smoke_lab(&["kit-a", "kit-b"], 2, "0.3s");
    let output = lab.run(&["run", lab.path("spec.toml").to_str().unwrap()]);
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    // The summary is the report table: a section per workload, a row per target.
    for needle in [
        "plaintext · GET /plaintext",
        "json · GET /json",
        "\nkit-a ",
        "\nkit-b ",
        "vs kit-a",
    ] {
        assert!(
            stdout.contains(needle),
            "summary lacks {needle:?}:\n{stdout}"
        );
    }
    let store = Store::open_existing(lab.path("results.db")).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    let run = store.load_run(&id).unwrap();
    assert_eq!(run.run.status, corobench_model::RunStatus::Complete);
    assert_eq!(run.trials.len(), 8, "2 targets × 2 workloads × 2 trials");
    for trial in &run.trials {
        let load = lab::load_of(trial);
        assert!(load.requests > 0);
        assert!(
            trial
                .resources
                .is_some_and(|r| r.samples > 0 && r.rss_peak_bytes > 0)
        );
        assert!(
            trial.tasks.before.is_some(),
            "the test kit reports /stats tasks"
        );
        let probe = trial
            .probe
            .expect("the machine-speed probe ran before the trial");
        assert!(probe.server_mb_per_s > 0.0 && probe.generator_mb_per_s > 0.0);
    }
    assert!(
        stdout.contains("machine-speed probe"),
        "the summary says how the machine's speed varied:\n{stdout}"
    );
    let sequences: Vec<u32> = run.trials.iter().map(|t| t.sequence).collect();
    assert_eq!(sequences, (0..8).collect::<Vec<_>>());
    let listing = lab.run(&["runs"]);
    assert!(
        text(&listing.stdout).contains(&id),
        "{}",
        text(&listing.stdout)
    );
}

#[test]
fn no_probe_skips_the_machine_speed_probe() {
    let lab = smoke_lab(&["kit-a"], 2, "0.2s");
    let spec = lab.path("spec.toml");
    let output = lab.run(&["run", spec.to_str().unwrap(), "--no-probe"]);
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    assert!(!text(&output.stdout).contains("machine-speed probe"));
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    assert_eq!(run.trials.len(), 4);
    assert!(run.trials.iter().all(|t| t.probe.is_none()));
}

#[test]
fn an_interrupted_run_resumes_without_repeating_a_trial() {
    let lab = smoke_lab(&["kit-a", "kit-b"], 3, "0.5s");
    let child = spawn(&lab, &["run", lab.path("spec.toml").to_str().unwrap()]);
    wait_for("two stored trials", Duration::from_secs(120), || {
        lab.stored_trials().len() >= 2
    });
    // SAFETY: kill only signals the child we started.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "stderr:\n{}",
        text(&output.stderr)
    );
    let stderr = text(&output.stderr);
    assert!(stderr.contains("corobench run --resume"), "{stderr}");
    let before = lab.stored_trials();
    assert!(
        before.len() < 12,
        "the run was interrupted before its end ({} trials)",
        before.len()
    );

    let resumed = lab.run(&["run", "--resume", "latest"]);
    assert!(
        resumed.status.success(),
        "stderr:\n{}",
        text(&resumed.stderr)
    );
    let after = lab.stored_trials();
    let expected: Vec<(u32, u32)> = (0..4).flat_map(|s| (0..3).map(move |t| (s, t))).collect();
    assert_eq!(after, expected, "every trial exactly once");
    for slot in &before {
        assert!(after.contains(slot));
    }
    let again = lab.run(&["run", "--resume", "latest"]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "a complete run cannot be resumed: {}",
        text(&again.stderr)
    );
}

#[test]
fn killing_corobench_leaves_no_target_running() {
    let name = format!("kit-orphan-{}", std::process::id());
    let lab = smoke_lab(&[&name], 1, "60s");
    let mut child = spawn(&lab, &["run", lab.path("spec.toml").to_str().unwrap()]);
    // The run is created after verification: a target found then is a trial's.
    wait_for("the trial's target", Duration::from_secs(120), || {
        Store::open_existing(lab.path("results.db"))
            .is_ok_and(|s| s.resolve_run_id("latest").is_ok())
            && !targets_named(&name).is_empty()
    });
    // A second corobench may not measure the same run at the same time.
    let again = lab.run(&["run", "--resume", "latest"]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(
        text(&again.stderr).contains("is still being measured by corobench process"),
        "{}",
        text(&again.stderr)
    );
    child.kill().unwrap(); // SIGKILL: no handler, no clean-up in corobench itself
    child.wait().unwrap();
    wait_for("the target group to die", Duration::from_secs(15), || {
        targets_named(&name).is_empty()
    });
    // Its process is gone: the run shows as died, not running, and resumes.
    let runs = text(&lab.run(&["runs"]).stdout);
    assert!(runs.contains(" died "), "{runs}");
}

/// Issue "hostile input, third round", message 13: a run whose trial
/// could not be stored (the database locked by another process) was then
/// listed as `died`, its status left at running. It is listed as
/// interrupted, with the error that ended it.
#[test]
fn a_run_ended_by_a_locked_database_is_listed_with_the_reason() {
    let lab = smoke_lab(&["kit-locked"], 1, "1s");
    let child = spawn(&lab, &["run", lab.path("spec.toml").to_str().unwrap()]);
    wait_for("the run to be stored", Duration::from_secs(120), || {
        Store::open_existing(lab.db()).is_ok_and(|s| s.resolve_run_id("latest").is_ok())
    });
    // Another process holds the write lock while the first trial ends, and
    // longer than the store's own wait of 10 s for each of the trial and
    // the run's status: the trial is refused, and so was the status once.
    let holder = rusqlite::Connection::open(lab.db()).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    std::thread::sleep(Duration::from_secs(25));
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is locked by another process"), "{stderr}");
    let runs = text(&lab.run(&["runs"]).stdout);
    assert!(!runs.contains(" died "), "{runs}");
    assert!(
        runs.contains(" interrupted ")
            && runs.contains("\n  interrupted: storing a trial: ")
            && runs.contains("is locked by another process"),
        "{runs}"
    );
}

/// Live (not zombie) processes whose environment names `target` as TARGET_NAME.
fn targets_named(target: &str) -> Vec<u32> {
    let needle = format!("TARGET_NAME={target}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let proc_dir = Path::new("/proc").join(pid.to_string());
            let environ = std::fs::read(proc_dir.join("environ")).unwrap_or_default();
            let alive = std::fs::read_to_string(proc_dir.join("stat"))
                .ok()
                .and_then(|stat| {
                    stat.rsplit_once(')')
                        .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
                })
                .unwrap_or(false);
            alive
                && environ
                    .split(|&b| b == 0)
                    .any(|var| var == needle.as_bytes())
        })
        .collect()
}

/// Waits for the trial's own target process: verification starts and stops
/// one first, then the trial starts a fresh one.
fn wait_for_trial_target(name: &str) -> u32 {
    let mut verifying = None;
    let mut trial = None;
    wait_for("the trial's target", Duration::from_secs(60), || {
        let live = targets_named(name);
        match (verifying, live.first()) {
            (None, Some(&pid)) => verifying = Some(pid),
            (Some(first), Some(&pid)) if pid != first => trial = Some(pid),
            _ => {}
        }
        trial.is_some()
    });
    trial.unwrap_or_default()
}

/// Stops corobench (all its threads, generator included) for `pause`.
fn stall(child: &Child, pause: Duration) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill only signals the child we started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(pause);
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
}

/// The run's first trial (the one stalled) and how many trials it stored.
fn first_trial(lab: &Lab) -> (corobench_model::TrialRecord, usize) {
    let store = Store::open_existing(lab.path("results.db")).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    let mut trials = store.load_run(&id).unwrap().trials;
    let stored = trials.len();
    (trials.remove(0), stored)
}

const STALLED: &str = "corobench itself was not running";

#[test]
fn a_stall_inside_the_window_fails_the_trial_and_blames_corobench() {
    let lab = smoke_lab(&["kit-stall"], 1, "6s");
    let child = spawn(&lab, &["run", lab.path("spec.toml").to_str().unwrap()]);
    wait_for_trial_target("kit-stall");
    // Health takes well under a second and the warm-up is 0.1 s: 1.5 s in,
    // the 6 s window is open.
    std::thread::sleep(Duration::from_millis(1500));
    stall(&child, Duration::from_secs(1));
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    // The stalled trial fails; the run goes on and measures the next one.
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("1 of 2 trials failed"), "{stderr}");
    let (trial, stored) = first_trial(&lab);
    assert_eq!(stored, 2);
    let failure = trial.failure.unwrap_or_default();
    assert!(failure.contains(STALLED), "{failure}");
    assert!(
        !failure.contains("(target:"),
        "the target is not blamed: {failure}"
    );
    assert!(
        trial.load.is_none(),
        "no figures stored from a stalled window"
    );
}

#[test]
fn a_stall_across_the_window_start_is_never_stored_as_a_normal_trial() {
    let lab = smoke_lab(&["kit-edge"], 1, "1s");
    let child = spawn(&lab, &["run", lab.path("spec.toml").to_str().unwrap()]);
    wait_for_trial_target("kit-edge");
    // Longer than the warm-up and the window together: whenever the stop
    // lands after the warm-up began, the window is lost.
    std::thread::sleep(Duration::from_millis(150));
    stall(&child, Duration::from_millis(2500));
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let (trial, _) = first_trial(&lab);
    match trial.failure {
        // Stopped after the warm-up began: the stall is named, not the target.
        Some(failure) => assert!(failure.contains(STALLED), "{failure}"),
        // Stopped before the load began (the target was still starting):
        // the trial then measured its whole window undisturbed.
        None => {
            let load = trial.load.expect("an ok trial has its load");
            assert!(load.requests > 0 && load.elapsed_s >= 0.9, "{load:?}");
        }
    }
}

#[test]
fn a_budgeted_run_stops_when_the_time_is_spent_and_names_what_fell_short() {
    let lab = smoke_lab(&["kit-a"], 2, "0.3s");
    let spec = lab.path("spec.toml");
    let output = lab.run(&["run", spec.to_str().unwrap(), "--budget", "1s"]);
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let said = format!("{}{}", text(&output.stdout), text(&output.stderr));
    // A budgeted run gets at least six trials per scenario (the first
    // rounds always run); a 1 s budget is spent by then, so no more follow.
    let stored = lab.stored_trials();
    assert_eq!(stored.len(), 12, "{stored:?}");
    let reached = said.contains("every scenario's req/s interval is within");
    let fell_short = said.contains("did not reach ±5% in req/s") && said.contains("budget spent");
    assert!(reached || fell_short, "{said}");
}

/// Issue "wrong successes", item 6: a run in which every request got a 404
/// measured nothing the user asked for; it used to exit 0 as complete.
#[test]
fn a_run_whose_every_response_was_an_error_exits_1_as_failed() {
    let lab = smoke_lab(&["kit-a"], 1, "0.3s");
    let spec = std::fs::read_to_string(lab.path("spec.toml")).unwrap();
    let spec = spec
        .replace("path = \"/plaintext\"", "path = \"/no-such-endpoint\"")
        .replace("path = \"/json\"", "path = \"/no-such-endpoint-either\"");
    std::fs::write(lab.path("spec.toml"), spec).unwrap();
    let output = lab.run(&["run", lab.path("spec.toml").to_str().unwrap()]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains(
            "measured nothing: no request of its 2 measured trials got a successful response (4xx: "
        ),
        "{stderr}"
    );
    let store = Store::open_existing(lab.path("results.db")).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    let run = store.load_run(&id).unwrap();
    assert_eq!(run.run.status, corobench_model::RunStatus::Failed);
}

/// Issue "wrong successes", item 13: --max-trials without --until-ci or
/// --budget (in flags or spec) was silently ignored.
#[test]
fn max_trials_without_an_adaptive_stop_is_refused() {
    let lab = smoke_lab(&["kit-a"], 1, "0.3s");
    let output = lab.run(&[
        "run",
        lab.path("spec.toml").to_str().unwrap(),
        "--max-trials",
        "9",
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--max-trials 9 bounds the trials --until-ci or --budget add"),
        "{stderr}"
    );
}

/// Writes `body` to `path` as an executable script.
fn script(path: &Path, body: &str) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, body).unwrap();
    let mut mode = std::fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    std::fs::set_permissions(path, mode).unwrap();
}

/// Writes the lab's `spec.toml`: one server `api` run by `server`, with the
/// `[run]` keys `run` and the server's keys `extra`.
fn server_spec(lab: &Lab, server: &Path, run: &str, extra: &str) {
    lab.write(
        "spec.toml",
        &format!(
            "name = \"changed\"\ntargets = [\"api\"]\n[run]\n{run}\n\
             warmup = \"0.1s\"\nidle = \"0.1s\"\n[schedule]\nconnections = 2\n[[workloads]]\n\
             name = \"hello\"\npath = \"/plaintext\"\n[servers.api]\ncommand = {:?}\n\
             ready = \"/healthz\"\n{extra}",
            server.display()
        ),
    );
}

/// Issue "hostile input, third round", wrong result 3: a run resumed after
/// its server's executable changed mixed both programs' trials in one
/// scenario and kept the old SHA-256. The resume is refused with both.
#[test]
fn a_run_whose_server_changed_is_not_resumed() {
    let lab = Lab::new();
    let server = lab.path("server");
    std::fs::copy(corobench_testkit::binary_path(), &server).unwrap();
    server_spec(&lab, &server, "trials = 2\nduration = \"60s\"", "");
    let mut child = spawn(&lab, &["run", lab.path("spec.toml").to_str().unwrap()]);
    wait_for("the run to be stored", Duration::from_secs(120), || {
        Store::open_existing(lab.db()).is_ok_and(|s| s.resolve_run_id("latest").is_ok())
    });
    child.kill().unwrap();
    child.wait().unwrap();
    // Another program under the same name: the kit behind a shell.
    script(
        &server,
        &format!(
            "#!/bin/sh\nexec {} \"$@\"\n",
            corobench_testkit::binary_path().display()
        ),
    );
    let resumed = lab.run(&["run", "--resume", "latest"]);
    let stderr = text(&resumed.stderr);
    assert_eq!(resumed.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the api executable changed"), "{stderr}");
    assert!(
        stderr.contains("add --new-run-if-changed"),
        "the way to a new run: {stderr}"
    );
    assert_eq!(
        stderr.matches("sha256:").count(),
        2,
        "both digests: {stderr}"
    );
    assert!(
        lab.stored_trials().is_empty(),
        "no trial of the new program"
    );
}

/// Issue "hostile input, third round", wrong result 3, its other way out:
/// with `--new-run-if-changed`, a resume whose server changed measures
/// the run's spec in a new run, says so with the new run's id, and leaves
/// the interrupted run as it was.
#[test]
fn a_changed_server_starts_a_new_run_when_asked() {
    let lab = Lab::new();
    let server = lab.path("server");
    let kit = corobench_testkit::binary_path();
    // The first program answers the check before the trials, then hangs
    // in the trial's start: the run is stored and never finishes.
    let (started, hanging) = (lab.path("started"), lab.path("hanging"));
    script(
        &server,
        &format!(
            "#!/bin/sh\nif [ -e {s} ]; then touch {h}; exec sleep 300; fi\ntouch {s}\n\
             exec {kit} \"$@\"\n",
            s = started.display(),
            h = hanging.display(),
            kit = kit.display()
        ),
    );
    server_spec(
        &lab,
        &server,
        "trials = 1\nduration = \"0.3s\"",
        "ready_timeout_s = 300\n",
    );
    let mut child = spawn(&lab, &["run", lab.path("spec.toml").to_str().unwrap()]);
    wait_for("the trial's start", Duration::from_secs(120), || {
        hanging.exists()
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let store = Store::open_existing(lab.db()).unwrap();
    let old = store.resolve_run_id("latest").unwrap();
    drop(store);
    script(
        &server,
        &format!("#!/bin/sh\nexec {} \"$@\"\n", kit.display()),
    );
    let resumed = lab.run(&["run", "--resume", &old, "--new-run-if-changed"]);
    let stderr = text(&resumed.stderr);
    assert_eq!(resumed.status.code(), Some(0), "{stderr}");
    let store = Store::open_existing(lab.db()).unwrap();
    let new = store.resolve_run_id("latest").unwrap();
    assert_ne!(new, old);
    assert!(
        stderr.contains(&format!(
            "run {old} is not resumed: the api executable changed"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("in a new run, {new}, instead")),
        "{stderr}"
    );
    let (old, new) = (store.load_run(&old).unwrap(), store.load_run(&new).unwrap());
    assert!(old.trials.is_empty(), "{:?}", old.trials);
    assert_ne!(old.run.status, corobench_model::RunStatus::Complete);
    assert_eq!(new.run.status, corobench_model::RunStatus::Complete);
    assert_eq!(new.run.spec_toml, old.run.spec_toml);
    assert_eq!(new.trials.len(), 1);
    let executable = |run: &corobench_model::StoredRun| {
        run.run.provenance.tool_versions["api executable"].clone()
    };
    assert_ne!(executable(&new), executable(&old));
}
