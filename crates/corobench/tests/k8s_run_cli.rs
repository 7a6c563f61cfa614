//! `corobench k8s run` end to end against a fake `kubectl` on PATH
//! (tests/fixtures/k8s/fake-kubectl): it replays recorded outputs for the
//! calls that talk to a cluster and runs each `exec`'s argv on this
//! machine, so every trial really runs, on loopback, with test-kit targets.
//! The run is the runner of `corobench run`: trials stored, interleaved,
//! resumed, with the pods as hosts, and every object deleted afterwards.

mod lab;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use corobench_store::Store;
use lab::{Lab, text};

const IMAGE: &str = "registry.example/corobench:test";

/// A lab with two test-kit targets, a spec of both, and a fake kubectl.
struct Cluster {
    lab: Lab,
}

impl Cluster {
    fn new(trials: u32) -> Self {
        let lab = Lab::new();
        lab.kit_target("alpha");
        lab.kit_target("beta");
        lab.write(
            "spec.toml",
            &format!(
                "name = \"pods\"\ntargets = [\"alpha\", \"beta\"]\n\
                 [run]\ntrials = {trials}\nduration = \"0.5s\"\nwarmup = \"0.2s\"\nidle = \"0s\"\n\
                 [schedule]\nconnections = 2\n\
                 [[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n"
            ),
        );
        let bin = lab.path("fake-bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::copy(fixture("fake-kubectl"), bin.join("kubectl")).unwrap();
        std::fs::create_dir_all(lab.path("cluster")).unwrap();
        let cluster = Self { lab };
        cluster.replay_pods(&std::fs::read_to_string(fixture("pods-running.json")).unwrap());
        cluster
    }

    /// What the fake answers to `kubectl get pods`.
    fn replay_pods(&self, json: &str) {
        std::fs::write(self.lab.path("cluster/pods.json"), json).unwrap();
    }

    /// `corobench k8s run ARGS --db DB` with the fake kubectl first on PATH.
    fn command(&self, args: &[&str]) -> Command {
        let mut all = vec!["k8s", "run"];
        all.extend_from_slice(args);
        let mut command = self.lab.command_with_db(&all);
        let corobench = Path::new(env!("CARGO_BIN_EXE_corobench")).parent().unwrap();
        let path = std::env::join_paths(
            [self.lab.path("fake-bin"), corobench.to_path_buf()]
                .into_iter()
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        command
            .env("PATH", path)
            .env("FAKE_KUBECTL_DIR", self.lab.path("cluster"));
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn spec(&self) -> String {
        self.lab.path("spec.toml").display().to_string()
    }

    /// Every kubectl call so far, one line each.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.lab.path("cluster/calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The objects were deleted after the last call that made or used them.
    fn assert_deleted_last(&self) {
        let calls = self.calls();
        let last = calls.last().map(String::as_str).unwrap_or_default();
        assert!(
            last.contains(
                " delete pod,service,job,configmap,secret -l app.kubernetes.io/name=corobench"
            ),
            "the last kubectl call deletes every object: {calls:#?}"
        );
    }

    /// What was applied: the three idle pods, of the chosen image.
    fn assert_applied_pods(&self) {
        let applied: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(self.lab.path("cluster/applied.json")).unwrap(),
        )
        .unwrap();
        let pods: Vec<(&str, &str)> = applied["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["kind"].as_str().unwrap(),
                    o["metadata"]["name"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            pods,
            [
                ("Pod", "corobench-server"),
                ("Pod", "corobench-generator-0"),
                ("Pod", "corobench-generator-1")
            ]
        );
        assert_eq!(applied["items"][0]["spec"]["containers"][0]["image"], IMAGE);
    }

    /// `k8s run SPEC` where every `kubectl exec` of `argument` (the
    /// command's first argument) fails: it exits 1 (a failed environment),
    /// says why and deletes every object. Its stderr.
    fn fails_as_every_exec_of(&self, argument: &str) -> String {
        let output = self
            .command(&[&self.spec(), "--image", IMAGE])
            .env("FAKE_KUBECTL_EXEC_FAILS", argument)
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("unable to upgrade connection"), "{stderr}");
        self.assert_deleted_last();
        stderr
    }

    fn store(&self) -> Store {
        Store::open_existing(self.lab.db()).unwrap()
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k8s")
        .join(name)
}

#[test]
fn trials_on_pods_are_stored_interleaved_with_the_pods_as_hosts() {
    let cluster = Cluster::new(2);
    let output = cluster.run(&[&cluster.spec(), "--image", IMAGE, "--namespace", "bench"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let store = cluster.store();
    let id = store.resolve_run_id("latest").unwrap();
    let run = store.load_run(&id).unwrap();
    assert_eq!(run.trials.len(), 4);
    assert!(
        run.trials.iter().all(|t| t.failure.is_none()),
        "{:?}",
        run.trials.iter().map(|t| &t.failure).collect::<Vec<_>>()
    );
    // Rounds: each pair of consecutive trials holds one of each target.
    let mut order: Vec<(u32, u32)> = run
        .trials
        .iter()
        .map(|t| (t.sequence, t.scenario_index))
        .collect();
    order.sort_unstable();
    for round in order.chunks(2) {
        assert_ne!(round[0].1, round[1].1, "not interleaved: {order:?}");
    }
    let hosts = &run.run.provenance.hosts;
    let described: Vec<(&str, &str, Option<&str>)> = hosts
        .iter()
        .map(|h| (h.role.as_str(), h.address.as_str(), h.node.as_deref()))
        .collect();
    assert_eq!(
        described,
        [
            ("server", "pod/corobench-server", Some("node-a")),
            ("generator", "pod/corobench-generator-0", Some("node-b")),
            ("generator", "pod/corobench-generator-1", Some("node-c")),
        ]
    );
    assert!(
        hosts.iter().all(|h| h
            .image
            .as_deref()
            .is_some_and(|i| i.starts_with("registry.example/corobench@sha256:"))),
        "{hosts:?}"
    );
    for trial in &run.trials {
        let merge = trial.load.as_ref().unwrap().merged.as_ref().unwrap();
        let mut sources: Vec<&str> = merge.generators.iter().map(|g| g.source.as_str()).collect();
        sources.sort_unstable();
        assert_eq!(
            sources,
            ["pod/corobench-generator-0", "pod/corobench-generator-1"]
        );
    }
    let calls = cluster.calls();
    assert!(
        calls.iter().any(|c| c.contains(
            "exec -i corobench-server -c corobench -- corobench serve alpha --listen 127.0.0.1"
        )),
        "{calls:#?}"
    );
    cluster.assert_deleted_last();
    cluster.assert_applied_pods();
    let report = cluster.lab.run(&["report", &id]);
    assert!(report.status.success(), "{}", text(&report.stderr));
    let shown = text(&report.stdout);
    assert!(shown.contains("alpha") && shown.contains("beta"), "{shown}");
    let runs = cluster.lab.run(&["runs"]);
    assert!(text(&runs.stdout).contains(&id), "{}", text(&runs.stdout));
}

/// `k8s run SPEC` started, interrupted with SIGINT once `ready` holds, to
/// its end.
fn interrupted_when(cluster: &Cluster, what: &str, ready: impl Fn() -> bool) -> Output {
    let child = cluster
        .command(&[&cluster.spec(), "--image", IMAGE])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "gave up waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill only signals the child this test started.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) };
    child.wait_with_output().unwrap()
}

#[test]
fn an_interrupted_run_is_cleaned_up_and_resumes_on_new_pods() {
    let cluster = Cluster::new(3);
    let output = interrupted_when(&cluster, "a stored trial", || {
        !cluster.lab.stored_trials().is_empty()
    });
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("corobench k8s run --resume"), "{stderr}");
    cluster.assert_deleted_last();
    let before = cluster.lab.stored_trials();
    assert!(!before.is_empty() && before.len() < 6, "{before:?}");

    // The resumed session's pods land on another node.
    let moved = std::fs::read_to_string(fixture("pods-running.json"))
        .unwrap()
        .replace("\"node-a\"", "\"node-d\"");
    cluster.replay_pods(&moved);
    let resumed = cluster.run(&["--resume", "latest", "--image", IMAGE]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let after = cluster.lab.stored_trials();
    assert_eq!(after.len(), 6, "{after:?}");
    for pair in &before {
        assert!(after.contains(pair));
    }
    cluster.assert_deleted_last();
    let store = cluster.store();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    let nodes: Vec<Option<&str>> = run
        .run
        .provenance
        .hosts
        .iter()
        .map(|h| h.node.as_deref())
        .collect();
    assert_eq!(
        nodes,
        [
            Some("node-a"),
            Some("node-b"),
            Some("node-c"),
            Some("node-d")
        ]
    );
}

#[test]
fn a_pod_that_ends_fails_the_run_and_every_object_is_deleted() {
    let cluster = Cluster::new(1);
    let failed = std::fs::read_to_string(fixture("pods-running.json"))
        .unwrap()
        .replacen("\"Running\"", "\"Failed\"", 1);
    cluster.replay_pods(&failed);
    let output = cluster.run(&[&cluster.spec(), "--image", IMAGE]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("pod corobench-generator-0 ended (Failed) before the run started"),
        "{stderr}"
    );
    let calls = cluster.calls();
    assert!(
        calls.iter().any(|c| c.contains(" apply -f -")),
        "{calls:#?}"
    );
    assert!(!calls.iter().any(|c| c.contains(" exec ")), "{calls:#?}");
    cluster.assert_deleted_last();
    assert!(cluster.lab.stored_trials().is_empty());
}

#[test]
fn trials_that_fail_on_the_pods_fail_the_run_and_every_object_is_deleted() {
    let cluster = Cluster::new(1);
    cluster.fails_as_every_exec_of("serve");
    let store = cluster.store();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    assert_eq!(run.trials.len(), 2);
    assert!(
        run.trials.iter().all(|t| t
            .failure
            .as_deref()
            .is_some_and(|f| f.contains("unable to upgrade connection"))),
        "{:?}",
        run.trials.iter().map(|t| &t.failure).collect::<Vec<_>>()
    );
}

/// Issue "hostile input, third round", message 13: a failed `kubectl
/// exec` exited 2, as if the spec were wrong; the pods corobench made
/// failed, which is the environment's failure (exit 1).
#[test]
fn a_pod_kubectl_exec_cannot_reach_fails_the_run_and_is_not_a_usage_error() {
    let cluster = Cluster::new(1);
    // The pods are described with `sh -c …`: every such exec fails.
    let stderr = cluster.fails_as_every_exec_of("-c");
    assert!(stderr.contains("kubectl"), "{stderr}");
    assert_announced_run_not_stored(&cluster, &stderr);
}

/// The run id `stderr` announced is said not to be stored, and is not:
/// nothing invites the user to resume it (issue "hostile input, third
/// round", message 13).
fn assert_announced_run_not_stored(cluster: &Cluster, stderr: &str) {
    let id = stderr
        .lines()
        .find_map(|line| line.strip_prefix("run ")?.split_once(" · suite"))
        .map(|(id, _)| id)
        .expect("the run is announced");
    assert!(
        stderr.contains(&format!("nothing measured; run {id} not stored: ")),
        "{stderr}"
    );
    assert!(!stderr.contains("--resume"), "{stderr}");
    let runs = text(&cluster.lab.run(&["runs"]).stdout);
    assert!(!runs.contains(id), "{runs}");
    assert!(cluster.lab.stored_trials().is_empty());
}

#[test]
fn ctrl_c_while_the_pods_start_deletes_them() {
    let cluster = Cluster::new(1);
    let pending = std::fs::read_to_string(fixture("pods-running.json"))
        .unwrap()
        .replace("\"Running\"", "\"Pending\"");
    cluster.replay_pods(&pending);
    let output = interrupted_when(&cluster, "the wait for the pods", || {
        cluster.calls().iter().any(|c| c.contains(" get pods "))
    });
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted while waiting for the pods to run"),
        "{stderr}"
    );
    cluster.assert_deleted_last();
    assert_announced_run_not_stored(&cluster, &stderr);
}

#[test]
fn a_missing_context_is_named_and_nothing_is_made() {
    let cluster = Cluster::new(1);
    let output = cluster.run(&[&cluster.spec(), "--context", "missing"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("no Kubernetes cluster reachable through kubectl context \"missing\"")
            && stderr.contains("context \"missing\" does not exist")
            && stderr.contains("--context NAME"),
        "{stderr}"
    );
    let calls = cluster.calls();
    assert!(!calls.iter().any(|c| c.contains(" apply ")), "{calls:#?}");
    assert!(!cluster.lab.db().exists(), "nothing is stored");
}

/// Issue "hostile input, third round", hang 2: `k8s run` hung for ever,
/// ignoring Ctrl-C, when kubectl hung. Ctrl-C ends the hung call, and the
/// clean-up still deletes every object.
#[test]
fn ctrl_c_ends_a_hung_kubectl_call_and_the_objects_are_still_deleted() {
    let cluster = Cluster::new(1);
    let spec = cluster.spec();
    let child = cluster
        .command(&[&spec, "--image", IMAGE])
        .env("FAKE_KUBECTL_HANGS", "get")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !cluster
        .calls()
        .iter()
        .any(|call| call.contains(" get pods"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "kubectl get was never called: {:#?}",
            cluster.calls()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill only signals the child we started.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    cluster.assert_deleted_last();
}

/// Over TLS and in cleartext HTTP/2, trials on pods run as on hosts over
/// SSH: the run's certificate reaches `serve` on its stdin (`--tls-stdin`)
/// and its authority each `load` on its stdin (`--ca -`), through `kubectl
/// exec -i`. No Secret is made and no key is on any command line; the
/// clean-up deletes Secrets with the rest (a hand-applied layout's).
#[test]
fn tls_and_h2c_trials_run_on_pods_with_the_certificate_on_stdin() {
    let cluster = Cluster::new(1);
    cluster.lab.kit_target_serving("alpha", &["tls", "h2c"]);
    let spec = cluster.lab.write(
        "protocols.toml",
        "name = \"pods-protocols\"\ntargets = [\"alpha\"]\n\
         [run]\ntrials = 1\nduration = \"0.5s\"\nwarmup = \"0.2s\"\nidle = \"0s\"\n\
         [schedule]\nconnections = 2\n\
         [[workloads]]\nname = \"tls\"\npath = \"/plaintext\"\ntls = true\n\
         [[workloads]]\nname = \"h2c\"\npath = \"/plaintext\"\nprotocol = \"h2c\"\nstreams = 4\n",
    );
    let output = cluster.run(&[spec.to_str().unwrap(), "--image", IMAGE]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let store = cluster.store();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    let protocols: Vec<_> = run.scenarios.iter().map(|s| s.protocol).collect();
    assert_eq!(
        protocols,
        [
            corobench_model::Protocol::TLS,
            corobench_model::Protocol::H2C
        ]
    );
    assert_eq!(run.trials.len(), 2);
    for trial in &run.trials {
        let load = lab::load_of(trial);
        assert!(load.requests > 0);
        let over_tls = trial.scenario_index == 0;
        assert_eq!(load.url.starts_with("https://"), over_tls, "{}", load.url);
        assert_eq!(load.tls.as_ref().is_some_and(|t| t.verified), over_tls);
    }
    let calls = cluster.calls();
    let exec = |needle: &str| calls.iter().any(|c| c.contains(needle));
    assert!(exec("serve alpha --listen 127.0.0.1"), "{calls:#?}");
    assert!(exec("--protocol tls --tls-stdin"), "{calls:#?}");
    assert!(exec("--protocol h2c"), "{calls:#?}");
    assert!(exec("--ca -") && exec("--h2c -m 4"), "{calls:#?}");
    assert!(!exec("PRIVATE KEY"), "a key on a command line: {calls:#?}");
    cluster.assert_applied_pods();
    cluster.assert_deleted_last();
}
