//! `[run] profile` / `run --profile` end to end against a test-kit target:
//! a real `perf record` of its process tree where `perf` works here (the
//! test says why it is skipped where not), stored apart from the trials
//! and drawn by the reports; and a missing `perf` that leaves the run
//! successful with the reason in its report.

mod lab;

use std::process::{Command, Stdio};

use corobench_model::ProfileOutcome;
use corobench_store::Store;
use lab::{Lab, text};

/// A lab with one test-kit target and a profiled spec of one scenario.
fn profiled_lab() -> Lab {
    let lab = Lab::new();
    lab.kit_target("kit");
    lab.write(
        "spec.toml",
        "name = \"profiled\"\ntargets = [\"kit\"]\n[run]\ntrials = 1\nduration = \"1s\"\n\
         warmup = \"0.5s\"\nidle = \"0.1s\"\nprofile = true\n[schedule]\nconnections = 4\n\
         [[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n",
    );
    lab
}

/// Why `perf record` of another process cannot work here, if it cannot.
fn perf_unavailable() -> Option<String> {
    let dir = tempfile::tempdir().ok()?;
    let mut sleeper = Command::new("sleep").arg("5").spawn().ok()?;
    let pid = sleeper.id().to_string();
    let data = dir.path().join("probe.data");
    let probe = Command::new("perf")
        .args(["record", "-F", "99", "-g", "-o"])
        .arg(&data)
        .args(["-p", &pid, "--", "sleep", "0.2"])
        .stdout(Stdio::null())
        .output();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    match probe {
        Err(e) => Some(format!("perf cannot run: {e}")),
        Ok(out) if !out.status.success() => Some(format!(
            "perf record refused: {}",
            text(&out.stderr).lines().next().unwrap_or_default()
        )),
        Ok(_) => None,
    }
}

fn stored_run(lab: &Lab) -> corobench_model::StoredRun {
    let store = Store::open_existing(lab.db()).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    store.load_run(&id).unwrap()
}

#[test]
fn a_profiled_run_keeps_real_stacks_apart_from_its_trials_and_draws_them() {
    if let Some(why) = perf_unavailable() {
        println!("skipped: {why}");
        return;
    }
    let lab = profiled_lab();
    let output = lab.run(&["run", lab.path("spec.toml").to_str().unwrap()]);
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let run = stored_run(&lab);
    assert_eq!(run.trials.len(), 1, "the profile trial is not a trial");
    assert_eq!(run.profiles.len(), 1);
    let ProfileOutcome::Captured {
        samples,
        folded_stacks,
    } = &run.profiles[0].outcome
    else {
        panic!("no profile: {:?}", run.profiles[0].outcome);
    };
    assert!(*samples > 0 && !folded_stacks.is_empty());
    // The target's threads only: the connection threads that serve the
    // load are there, the generator's and the sampler's threads are not.
    assert!(
        folded_stacks
            .lines()
            .any(|l| l.starts_with("contract-conn;")),
        "no stack of the threads serving the load:\n{folded_stacks}"
    );
    assert!(
        !folded_stacks
            .lines()
            .any(|l| l.starts_with("corobench-load") || l.starts_with("sampler-")),
        "stacks of corobench's own threads:\n{folded_stacks}"
    );
    let key = run.scenarios[0].key.to_string();
    let table = text(&lab.run(&["report"]).stdout);
    assert!(
        table.contains(&format!("{key}: {samples} samples")) && table.contains("--flamegraph"),
        "{table}"
    );
    let gobench = text(&lab.run(&["report", "--format", "gobench"]).stdout);
    assert!(
        gobench.contains(&format!(
            "# {key}: {samples} samples; flame graph: corobench report"
        )),
        "{gobench}"
    );
    let html = lab.run(&["report", "--format", "html"]);
    assert!(html.status.success(), "{}", text(&html.stderr));
    let html = text(&html.stdout);
    assert!(html.contains("Where the CPU goes"), "no profile section");
    assert!(html.contains("<img class=\"flamegraph\""), "no flame graph");
    let svg = lab.path("flame.svg");
    let drawn = lab.run(&["report", "--flamegraph", &key, "-o", svg.to_str().unwrap()]);
    assert!(drawn.status.success(), "{}", text(&drawn.stderr));
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("<svg") && svg.contains(&key), "{svg}");
}

#[test]
fn a_missing_perf_skips_the_profile_with_its_reason_and_the_run_succeeds() {
    let lab = profiled_lab();
    let output = lab
        .command_with_db(&["run", lab.path("spec.toml").to_str().unwrap()])
        .env("COROBENCH_PERF", "/nonexistent/perf")
        .output()
        .unwrap();
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let run = stored_run(&lab);
    assert_eq!(run.trials.len(), 1);
    let ProfileOutcome::Skipped { reason } = &run.profiles[0].outcome else {
        panic!("a profile without perf: {:?}", run.profiles[0].outcome);
    };
    assert!(reason.contains("linux-perf"), "{reason}");
    let table = text(&lab.run(&["report"]).stdout);
    assert!(
        table.contains("no profile: `/nonexistent/perf` is not installed"),
        "{table}"
    );
    let key = run.scenarios[0].key.to_string();
    let refused = lab.run(&["report", "--flamegraph", &key]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("has no profile"),
        "{}",
        text(&refused.stderr)
    );
}

#[test]
fn profiles_of_a_capacity_search_are_refused_before_anything_runs() {
    let lab = profiled_lab();
    let spec = std::fs::read_to_string(lab.path("spec.toml")).unwrap()
        + "[capacity]\nslo = \"p99 <= 10ms\"\nstart_rate = 100\n";
    lab.write("capacity.toml", &spec);
    let output = lab.run(&["run", lab.path("capacity.toml").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("is not available in a run that searches [capacity]"),
        "{}",
        text(&output.stderr)
    );
}
