//! Kernel counters end to end: `corobench run` against the test kit's
//! contract server (one OS thread per connection, blocking reads and
//! writes), the counts stored with each trial and shown by `report`.

mod lab;

use corobench_model::{Side, StoredRun, TrialStatus};
use corobench_store::Store;
use lab::{Lab, text};

/// A lab whose spec loads `target` on keep-alive `/plaintext` for 0.5 s.
fn plaintext_lab(target: &str) -> Lab {
    spec_lab(target, "0.5s", "")
}

/// [`plaintext_lab`] with `schedule` added to the `[schedule]` table.
fn spec_lab(target: &str, duration: &str, schedule: &str) -> Lab {
    let lab = Lab::new();
    lab.write(
        "spec.toml",
        &format!(
            "name = \"counters\"\ntargets = [\"{target}\"]\n[run]\ntrials = 1\n\
             duration = \"{duration}\"\nwarmup = \"0.1s\"\nidle = \"0.1s\"\n[schedule]\n\
             connections = 4\n{schedule}[[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n"
        ),
    );
    lab
}

/// Runs the lab's spec (with `env` set) and returns the stored run.
fn run(lab: &Lab, env: &[(&str, &str)]) -> StoredRun {
    let spec = lab.path("spec.toml");
    let mut command = lab.command_with_db(&["run", spec.to_str().unwrap()]);
    command.envs(env.iter().copied());
    let output = command.output().expect("corobench runs");
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let store = Store::open_existing(lab.db()).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    store.load_run(&id).unwrap()
}

/// Two system calls per request (a read and a write), as measured: 2.003
/// to 2.013 on a quiet machine, up to 2.06 on a busy one. The load runs on
/// while the counters attach and are read, so the requests served in those
/// moments are on one side of the ratio only, and more of them the longer
/// a busy machine keeps corobench from running; the band leaves room for
/// that and no more. What it guards against stays outside: a missed write
/// (1 per request), a request counted twice (4), an accept and a close per
/// request (4), the generator's calls counted as the server's (4 or more).
const TWO_PER_REQUEST: std::ops::Range<f64> = 1.8..2.5;

/// Asserts the server's system calls per request in the run's only trial
/// lie in `band`.
fn assert_syscalls_per_request(run: &StoredRun, band: std::ops::Range<f64>) {
    let per_request = server_syscalls_per_request(run);
    assert!(
        band.contains(&per_request),
        "{per_request} system calls per request, expected {band:?}"
    );
}

/// The server's system calls per request in the run's only trial.
fn server_syscalls_per_request(run: &StoredRun) -> f64 {
    let trial = &run.trials[0];
    assert_eq!(trial.status, TrialStatus::Ok, "{:?}", trial.failure);
    let counters = trial.counters.as_ref().expect("the trial kept counters");
    assert!(counters.missing.is_empty(), "{:?}", counters.missing);
    // The responses completed while the counters counted.
    let requests = counters.responses.unwrap();
    assert!(requests > 100, "{requests} requests measured");
    counters.server.syscalls.unwrap() as f64 / requests as f64
}

#[test]
fn keep_alive_plaintext_costs_one_read_and_one_write_per_request() {
    let lab = plaintext_lab("kit-a");
    lab.kit_target("kit-a");
    let run = run(&lab, &[]);
    // The contract server blocks in read() until a request arrives and
    // answers it with one write(): 2 per request, and nothing else, since
    // the connections were accepted during the warm-up.
    assert_syscalls_per_request(&run, TWO_PER_REQUEST);
    let generator = &run.trials[0].counters.as_ref().unwrap().generator;
    assert!(generator.threads >= 1, "the generator's threads were found");
    assert!(generator.syscalls.unwrap() > 0);
}

#[test]
fn a_server_that_forks_its_worker_is_counted_as_a_whole_tree() {
    let lab = plaintext_lab("kit-forked");
    // A shell that forks the contract server and waits for it: the server's
    // process tree is two processes, and only the worker serves.
    let kit = corobench_testkit::binary_path();
    let dir = lab.targets().join("kit-forked");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("target.toml"),
        format!(
            "name = \"kit-forked\"\nmodel = \"event-loop-multi-process\"\n\
             summary = \"the test kit behind a shell that forks it\"\nlanguage = \"Rust\"\n\
             requires = []\n[run]\ncommand = [\"sh\", \"-c\", \"trap 'kill $w; wait $w' TERM; \
             {} --model event-loop-multi-process & w=$!; wait $w\"]\nready_timeout_s = 20\n\
             stop_timeout_s = 5\n",
            kit.display()
        ),
    )
    .unwrap();
    let run = run(&lab, &[]);
    // The shell only waits: the worker's 2 per request are the tree's.
    assert_syscalls_per_request(&run, TWO_PER_REQUEST);
    let counters = run.trials[0].counters.as_ref().unwrap();
    // The shell's thread and the worker's accept and connection threads.
    assert!(counters.server.threads >= 6, "{:?}", counters.server);
}

#[test]
fn threads_the_server_starts_under_load_are_counted_through_inheritance() {
    // A thread per connection is slow on a busy machine (92 requests in a
    // 0.5 s window once, under a load average of 12): a longer window keeps
    // enough requests for the ratio.
    let lab = spec_lab("kit-a", "2s", "keepalive = false\n");
    lab.kit_target("kit-a");
    let run = run(&lab, &[]);
    // A connection per request: the contract server accepts it and starts
    // a thread for it, which reads, writes, drains and closes, then exits.
    // Those threads did not exist when the counters were attached; only
    // inheritance from the accepting thread counts them. Measured here:
    // 30.0 per request (the thread's start and exit, read, write, shutdown,
    // the drain's read and close); without inheritance the tree would show
    // only the accept loop's share (accept, the new thread's stack and
    // clone): 5.0 measured with `inherit` off.
    assert_syscalls_per_request(&run, 25.0..35.0);
    // Nearly every connection's thread started after attaching: the
    // threads attached to are a handful, the connections served hundreds.
    let counters = run.trials[0].counters.as_ref().unwrap();
    let served = counters.responses.unwrap();
    assert!(
        served > 20 * u64::from(counters.server.threads),
        "{served} connections, {:?}",
        counters.server
    );
}

#[test]
fn a_refused_counter_is_reported_missing_and_the_trial_is_still_stored() {
    let lab = plaintext_lab("kit-a");
    lab.kit_target("kit-a");
    let run = run(&lab, &[("COROBENCH_REFUSE_COUNTERS", "syscalls")]);
    let trial = &run.trials[0];
    assert_eq!(trial.status, TrialStatus::Ok, "{:?}", trial.failure);
    let counters = trial.counters.as_ref().unwrap();
    assert_eq!(counters.server.syscalls, None);
    assert_eq!(counters.generator.syscalls, None);
    assert!(counters.server.ctx_switches.is_some());
    let refused: Vec<Side> = counters.missing.iter().map(|m| m.side).collect();
    assert_eq!(refused, [Side::Server, Side::Generator]);
    let report = lab.run(&["report", "latest", "--format", "json"]);
    assert!(report.status.success(), "{}", text(&report.stderr));
    let analysis: corobench_model::RunAnalysis = serde_json::from_slice(&report.stdout).unwrap();
    let messages: Vec<&str> = analysis
        .warnings
        .iter()
        .filter(|w| w.kind == corobench_model::WarningKind::CountersMissing)
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "syscalls/req, gen syscalls/req not measured: the kernel counter was refused \
          (refused by COROBENCH_REFUSE_COUNTERS); the trials ran and were stored without it"
        ]
    );
    // The counters that were kept are shown beside the others.
    let detail = text(&lab.run(&["report", "latest", "--detail"]).stdout);
    assert!(detail.contains("ctx switches/req"), "{detail}");
}
