//! `corobench run` with `[hosts]`, across network namespaces that stand in
//! for machines: a coordinator namespace holding a bridge, and a server and
//! two generator namespaces, each with its own address and its own `sshd`
//! (a throwaway host key, a key made for the test, its own known_hosts).
//! `bench/lib/netns-lab.sh` builds that lab, for these tests as for
//! `bench/hosts-netns.sh`. Nothing is installed here: `sshd` comes from
//! Debian's openssh-server, which `make test` installs (scripts/deps.sh).
//! Without root, network namespaces or sshd, the tests say why and return.

mod lab;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

use corobench_model::TrialFlag;
use corobench_store::Store;
use lab::Lab;

/// The checkout, whose `targets/` the real-target test measures.
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
/// The script that builds, keeps and removes the namespaces.
const NETNS_LAB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/lib/netns-lab.sh");
/// The script's exit status when this machine cannot host the lab.
const CANNOT_HOST: i32 = 2;
/// The lab's addresses: the server at .1, the generators at .2 and .3.
const SUBNET: &str = "10.231.0";
/// A whole run: serve, two generators, a 1 s window, the stop.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// The namespaces with their sshd listeners, kept by the lab script for as
/// long as its standard input is open, and the scratch folder; dropping it
/// closes that input, and the script kills every process in the
/// namespaces and deletes them.
struct Network {
    lab: Lab,
    coordinator: String,
    /// Server, then the two generators, with their addresses.
    hosts: Vec<(String, String)>,
    /// The sshd listeners' pids.
    listeners: Vec<u32>,
    script: Child,
    hold: Option<ChildStdin>,
}

impl Network {
    /// `None` (and the reason printed) when this machine cannot host it.
    fn new() -> Option<Self> {
        Self::of_kind("cbh")
    }

    /// A lab whose namespaces' names begin with `letters`: a lab removes
    /// the namespaces of ended labs of its own kind only.
    fn of_kind(letters: &str) -> Option<Self> {
        // The tests of this file run at once in one process: each lab
        // needs names of its own.
        static LABS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let lab_number = LABS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // The pid in full: a later lab removes these namespaces if this
        // process ends without taking them down (netns-lab.sh, lab_sweep).
        let tag = format!("{letters}{}n{lab_number}", std::process::id());
        let lab = Lab::new();
        let mut script = Command::new(NETNS_LAB)
            .arg(lab.root())
            .args([tag.as_str(), SUBNET])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        let stdout = script.stdout.take().unwrap();
        BufReader::new(stdout).read_line(&mut ready).unwrap();
        if ready.trim() != "ready" {
            let out = script.wait_with_output().unwrap();
            let why = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(CANNOT_HOST),
                "the namespace lab failed: {why}"
            );
            eprintln!("skipped: {}", why.trim());
            return None;
        }
        let listeners = std::fs::read_to_string(lab.path("listeners"))
            .unwrap()
            .split_whitespace()
            .map(|pid| pid.parse().unwrap())
            .collect();
        Some(Self {
            lab,
            coordinator: format!("{tag}c"),
            hosts: ["s", "g1", "g2"]
                .iter()
                .enumerate()
                .map(|(i, role)| (format!("{tag}{role}"), format!("{SUBNET}.{}", i + 1)))
                .collect(),
            listeners,
            hold: script.stdin.take(),
            script,
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.lab.path(name)
    }

    fn in_coordinator(&self, program: &str) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.coordinator, program]);
        command
    }

    /// A spec of the test-kit target on the hosts; a short closed loop.
    fn write_spec(&self, duration: &str) -> PathBuf {
        self.lab.kit_target("testkit");
        self.write_kit_spec(duration, "")
    }

    /// A spec of the test-kit target written already, whose workload has
    /// `workload_keys` besides its name and path.
    fn write_kit_spec(&self, duration: &str, workload_keys: &str) -> PathBuf {
        let spec = format!(
            "name = \"hosts\"\ntargets = [\"testkit\"]\n\
             [run]\ntrials = 1\nduration = \"{duration}\"\nwarmup = \"0.2s\"\nidle = \"0s\"\n\
             [schedule]\nconnections = 2\n[[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n{workload_keys}{}",
            self.hosts_table(&self.lab.targets())
        );
        self.lab.write("spec.toml", &spec)
    }

    /// A spec of reference targets from `targets/` on the hosts, which the
    /// server host builds with the toolchains of this machine's PATH.
    fn write_real_spec(&self, targets: &[&str]) -> PathBuf {
        let list: Vec<String> = targets.iter().map(|t| format!("{t:?}")).collect();
        let spec = format!(
            "name = \"real-hosts\"\ntargets = [{}]\n\
             [run]\ntrials = 1\nduration = \"1s\"\nwarmup = \"0.5s\"\nidle = \"0s\"\n\
             [schedule]\nconnections = 4\n[[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n{}",
            list.join(", "),
            self.hosts_table(&Path::new(REPO).join("targets")),
        );
        self.lab.write("real-spec.toml", &spec)
    }

    /// The `[hosts]` table: the server and both generators, each host
    /// finding its targets in `targets_dir`.
    fn hosts_table(&self, targets_dir: &Path) -> String {
        format!(
            "[hosts]\nserver = \"ssh://root@{SUBNET}.1\"\n\
             generators = [\"ssh://root@{SUBNET}.2\", \"ssh://root@{SUBNET}.3\"]\n\
             ssh_config = \"{d}/ssh_config\"\ntargets_dir = \"{t}\"\n\
             install_dir = \"{d}/install\"\n",
            d = self.lab.root().display(),
            t = targets_dir.display(),
        )
    }

    /// `corobench run SPEC` in the coordinator's namespace.
    fn spawn_run(&self, spec: &Path) -> Child {
        self.spawn_run_of(spec, &self.lab.targets())
    }

    /// `corobench run SPEC` in the coordinator's namespace, resolving the
    /// spec's targets in `targets`.
    fn spawn_run_of(&self, spec: &Path, targets: &Path) -> Child {
        let mut command = self.in_coordinator(env!("CARGO_BIN_EXE_corobench"));
        command.arg("run").arg(spec).arg("--db").arg(self.lab.db());
        self.lab
            .inside(&mut command)
            .env("COROBENCH_TARGETS", targets)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Processes in namespace `ns` other than its sshd listener.
    fn strays(&self, ns: &str) -> Vec<u32> {
        netns_pids(ns)
            .into_iter()
            .filter(|pid| !self.listeners.contains(pid))
            .collect()
    }

    /// Kills the sshd processes of the sessions into namespace `ns` (not
    /// its listener): every connection to that host dies on its side.
    fn drop_sessions(&self, ns: &str) {
        for pid in self.strays(ns) {
            let line = command_line(pid);
            if line.starts_with("sshd") || line.contains("sshd-session") {
                kill(pid);
            }
        }
    }

    /// Waits until no process the run started is left in any namespace (a
    /// generator whose session died ends by itself when its window does).
    fn wait_until_empty(&self) {
        for ns in self.every_namespace() {
            wait_for(
                &format!("{ns} to be empty"),
                Duration::from_secs(20),
                || self.strays(&ns).is_empty(),
            );
        }
    }

    fn every_namespace(&self) -> Vec<String> {
        let mut all = vec![self.coordinator.clone()];
        all.extend(self.hosts.iter().map(|(ns, _)| ns.clone()));
        all
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        // End of input: the script takes the lab down, then ends.
        drop(self.hold.take());
        let _ = self.script.wait();
    }
}

fn netns_pids(ns: &str) -> Vec<u32> {
    Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn kill(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
}

fn command_line(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits for `child` at most `limit`, killing it after that.
fn finish(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "corobench run took longer than {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// The trial's kernel counters, each side counted or missing with its
/// reason, as a local trial's are.
fn assert_counted(trial: &corobench_model::TrialRecord, requests: u64) {
    use corobench_model::{KernelCounter, Side};
    let counters = trial.counters.as_ref().expect("counters on hosts");
    for side in [Side::Server, Side::Generator] {
        for kind in KernelCounter::ALL {
            let missing = counters
                .missing
                .iter()
                .any(|m| m.side == side && m.counter == kind);
            let counted = counters.side(side).get(kind).is_some();
            assert_ne!(counted, missing, "{side:?} {kind}: {counters:?}");
        }
    }
    assert!(counters.server.threads >= 1, "{counters:?}");
    assert!(
        counters.generator.threads >= 2,
        "a thread per generator: {counters:?}"
    );
    eprintln!(
        "server {:?} syscalls, generators {:?}, for {requests} requests",
        counters.server.syscalls, counters.generator.syscalls
    );
    // Without pipelining a server reads and writes at least once a request.
    if let Some(syscalls) = counters.server.syscalls {
        assert!(syscalls >= requests, "{syscalls} for {requests} requests");
    }
}

fn first_trial(lab: &Network) -> corobench_model::TrialRecord {
    let store = Store::open_existing(lab.lab.db()).unwrap();
    let id = store.resolve_run_id("latest").unwrap();
    let run = store.load_run(&id).unwrap();
    assert_eq!(run.trials.len(), 1, "one trial stored");
    assert_eq!(run.run.provenance.hosts.len(), 3, "every host's provenance");
    for host in &run.run.provenance.hosts {
        // One machine's clock, read through three namespaces.
        let offset = host.clock_offset_us.expect("each clock was read");
        let uncertainty = host.clock_uncertainty_us.expect("with its uncertainty");
        assert!(offset.abs() <= uncertainty + 1_000, "{host:?}");
    }
    run.trials.into_iter().next().unwrap()
}

/// A lab killed outright, its script too, leaves its namespaces behind:
/// the next lab of its kind removes them, and what still runs in them.
#[test]
fn a_new_lab_removes_the_namespaces_an_ended_lab_left_behind() {
    // No process has this pid: it is above the largest pid_max Linux allows.
    // A kind of its own, so that no other test's lab sweeps it first.
    let stale = "cbs9999999n0c";
    let made = Command::new("ip").args(["netns", "add", stale]).status();
    if !made.is_ok_and(|status| status.success()) {
        eprintln!("skipped: cannot create a network namespace here");
        return;
    }
    let mut inside = Command::new("ip")
        .args(["netns", "exec", stale, "sleep", "120"])
        .spawn()
        .unwrap();
    wait_for(
        "the process to enter the namespace",
        Duration::from_secs(20),
        || netns_pids(stale).contains(&inside.id()),
    );
    let lab = Network::of_kind("cbs");
    let listed = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let left = String::from_utf8_lossy(&listed.stdout).contains(stale);
    if left {
        kill(inside.id());
        let _ = Command::new("ip").args(["netns", "del", stale]).status();
    }
    let ended = inside.wait().unwrap();
    let Some(_lab) = lab else { return };
    assert!(!left, "the namespace of an ended lab is still there");
    assert!(!ended.success(), "what ran in it was killed: {ended}");
}

#[test]
fn a_trial_on_three_hosts_merges_both_generators() {
    let Some(lab) = Network::new() else { return };
    let spec = lab.write_spec("1s");
    let out = finish(lab.spawn_run(&spec), RUN_LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "run failed: {stderr}");
    let trial = first_trial(&lab);
    assert_eq!(trial.failure, None);
    let load = trial.load.clone().expect("a merged load report");
    let merged = load.merged.as_ref().expect("per-generator detail");
    let hosts: Vec<Option<&str>> = merged
        .generators
        .iter()
        .map(|g| g.source.strip_prefix("ssh://root@"))
        .collect();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert!(hosts.contains(&Some("10.231.0.2")) && hosts.contains(&Some("10.231.0.3")));
    let sum: u64 = merged.generators.iter().map(|g| g.requests).sum();
    assert_eq!(load.requests, sum);
    assert!(load.requests > 0 && load.errors.total() == 0);
    eprintln!(
        "merged {:.0} req/s from {}",
        load.requests_per_s,
        merged
            .generators
            .iter()
            .map(|g| format!("{} {:.0} req/s", g.source, g.requests_per_s))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(trial.resources.is_some_and(|r| r.samples > 0));
    // The leak check ran on the server host's footprints, and found nothing.
    assert!(
        trial.tasks.before.is_some() && trial.tasks.after.is_some(),
        "{:?}",
        trial.tasks
    );
    assert!(trial.tasks.peak.is_some(), "{:?}", trial.tasks);
    assert_counted(&trial, load.requests);
    let probe = trial.probe.expect("the machine-speed probe of both sides");
    assert!(probe.server_mb_per_s > 0.0 && probe.generator_mb_per_s > 0.0);
    let leaks: Vec<_> = trial
        .flags
        .iter()
        .filter(|f| matches!(f, TrialFlag::Leak { .. }))
        .collect();
    assert!(leaks.is_empty(), "{leaks:?}");
    lab.wait_until_empty();
}

/// The run `out` ended, which succeeded, as stored; and its stderr.
fn succeeded(lab: &Network, out: &Output) -> (corobench_model::StoredRun, String) {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "run failed: {stderr}");
    let store = Store::open_existing(lab.lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    (run, stderr)
}

/// Runs the test-kit target, declaring every protocol, on the hosts in a
/// spec whose workload speaks `protocol_keys`; its one trial served
/// requests on both generators without an error, its scenario was stored
/// speaking `protocol`, and the generators loaded the server host's
/// address in `scheme`. The trial, for more checks.
fn run_speaking(
    lab: &Network,
    protocol_keys: &str,
    (protocol, scheme): (corobench_model::Protocol, &str),
) -> corobench_model::TrialRecord {
    lab.lab.kit_target("testkit");
    let manifest = lab.lab.targets().join("testkit").join("target.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[protocols]\ntls = true\nh2 = true\nh2c = true\n");
    std::fs::write(&manifest, text).unwrap();
    let spec = lab.write_kit_spec("1s", protocol_keys);
    let out = finish(lab.spawn_run(&spec), RUN_LIMIT);
    let (run, _) = succeeded(lab, &out);
    assert_eq!(run.scenarios[0].protocol, protocol);
    let trial = first_trial(lab);
    assert_eq!(trial.failure, None);
    let load = trial.load.as_ref().expect("a merged load report");
    assert!(load.requests > 0 && load.errors.total() == 0, "{load:?}");
    let merged = load.merged.as_ref().expect("per-generator detail");
    assert_eq!(merged.generators.len(), 2);
    assert!(
        merged.generators.iter().all(|g| g.requests > 0),
        "{merged:?}"
    );
    let url = &load.url;
    assert!(url.starts_with(&format!("{scheme}://{SUBNET}.1:")), "{url}");
    trial
}

/// Over TLS the server host serves the run's leaf, which names its
/// address, and each generator host trusts the run's authority alone: the
/// handshakes are verified, a connection per request resumes the session
/// its generator got in the warm-up, and the target's `/stats` is read over TLS.
#[test]
fn a_trial_over_tls_on_three_hosts_trusts_the_runs_authority() {
    let Some(lab) = Network::new() else { return };
    let over_tls = (corobench_model::Protocol::TLS, "https");
    let trial = run_speaking(&lab, "tls = true\nkeepalive = false\n", over_tls);
    let load = trial.load.expect("a load report");
    let tls = load.tls.expect("the TLS figures of both generators");
    assert!(
        tls.verified,
        "the leaf was checked against the run's authority"
    );
    assert_eq!(tls.alpn.as_deref(), Some("http/1.1"));
    assert!(tls.resumed_handshakes > 0, "sessions resumed: {tls:?}");
    assert!(
        trial.tasks.before.is_some(),
        "/stats read over TLS: {:?}",
        trial.tasks
    );
    lab.wait_until_empty();
}

/// Cleartext HTTP/2 with several streams a connection: the target is told
/// h2c, and both generators speak it by prior knowledge.
#[test]
fn a_trial_over_h2c_with_streams_on_three_hosts_is_measured() {
    let Some(lab) = Network::new() else { return };
    let h2c = (corobench_model::Protocol::H2C, "http");
    let trial = run_speaking(&lab, "protocol = \"h2c\"\nstreams = 4\n", h2c);
    let load = trial.load.expect("a load report");
    assert!(load.tls.is_none());
    let http2 = load.http2.expect("the HTTP/2 figures of both generators");
    assert_eq!(http2.protocol, "h2c");
    assert_eq!(http2.streams_per_connection, 4);
    assert!(
        http2.streams_in_flight_max > 1,
        "streams in flight at once: {http2:?}"
    );
    lab.wait_until_empty();
}

#[test]
fn a_target_that_leaks_tasks_on_the_server_host_is_flagged_as_a_local_one_is() {
    let Some(lab) = Network::new() else { return };
    corobench_testkit::write_target(
        &lab.lab.targets(),
        "testkit",
        "goroutine-per-connection",
        corobench_testkit::binary_path(),
        &[corobench_testkit::Fault::LeakTasks],
    )
    .unwrap();
    // A connection per request: every one of them leaves a task behind.
    let spec = lab.write_kit_spec("1s", "keepalive = false\n");
    let out = finish(lab.spawn_run(&spec), RUN_LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "run failed: {stderr}");
    let trial = first_trial(&lab);
    assert_eq!(trial.failure, None);
    let requests = trial.load.as_ref().map_or(0, |l| l.requests);
    let (before, after) = (trial.tasks.before.unwrap(), trial.tasks.after.unwrap());
    assert!(
        after >= before + requests,
        "{:?} after {requests} requests",
        trial.tasks
    );
    let leak = trial
        .flags
        .iter()
        .find_map(|f| match f {
            TrialFlag::Leak { what } => Some(what.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no leak flag in {:?}", trial.flags));
    assert_eq!(
        leak,
        format!("tasks: {before} before the load, {after} after it")
    );
}

#[test]
fn a_program_runs_on_a_generator_host_beside_its_server_on_the_server_host() {
    let Some(lab) = Network::new() else { return };
    lab.lab.kit_target("kit");
    let binary = corobench_testkit::binary_path();
    corobench_testkit::write_program_target(&lab.lab.targets(), "tiny-client", binary).unwrap();
    let spec = format!(
        "name = \"programs-hosts\"\ntargets = [\"tiny-client\"]\n[run]\ntrials = 1\n\
         [parameters.tiny-client]\nrequests = 25\n[program]\nserver = \"kit\"\n{}",
        lab.hosts_table(&lab.lab.targets())
    );
    let spec = lab.lab.write("program-spec.toml", &spec);
    let out = finish(lab.spawn_run(&spec), RUN_LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "run failed: {stderr}");
    let trial = first_trial(&lab);
    let program = trial
        .program
        .as_ref()
        .unwrap_or_else(|| panic!("no program result: {:?}", trial.failure));
    let figure = |unit: &str| {
        program
            .metrics
            .iter()
            .find(|m| m.unit == unit)
            .map(|m| m.value)
    };
    // Every request crossed from a generator host to the server host.
    assert_eq!(figure("ok"), Some(25.0), "{program:?}");
    assert_eq!(figure("errors"), Some(0.0), "{program:?}");
    assert!(
        program.lines.iter().all(|l| l.starts_with("Benchmark")),
        "{program:?}"
    );
    assert!(
        program.resources.is_some(),
        "the program's tree was sampled on its host"
    );
    lab.wait_until_empty();
}

#[test]
fn losing_the_server_host_fails_the_trial_and_leaves_nothing_running() {
    let Some(lab) = Network::new() else { return };
    let spec = lab.write_spec("1s");
    let run = lab.spawn_run(&spec);
    let server_ns = lab.hosts[0].0.clone();
    wait_for(
        "the target on the server host",
        Duration::from_secs(120),
        || {
            netns_pids(&server_ns)
                .iter()
                .any(|pid| command_line(*pid).contains("corobench-testkit"))
        },
    );
    // The connection dies on the server's side, as when the host goes away.
    std::thread::sleep(Duration::from_millis(500));
    lab.drop_sessions(&server_ns);
    let out = finish(run, RUN_LIMIT);
    assert!(!out.status.success(), "a run whose only trial failed fails");
    let trial = first_trial(&lab);
    let failure = trial.failure.expect("the trial failed");
    eprintln!("the trial failed: {failure}");
    assert!(failure.contains("server host"), "{failure}");
    lab.wait_until_empty();
}

#[test]
fn losing_a_generator_host_fails_the_trial_and_leaves_nothing_running() {
    let Some(lab) = Network::new() else { return };
    let spec = lab.write_spec("4s");
    let run = lab.spawn_run(&spec);
    let (generator_ns, generator_addr) = lab.hosts[1].clone();
    wait_for(
        "the load on the first generator host",
        Duration::from_secs(120),
        || {
            netns_pids(&generator_ns)
                .iter()
                .any(|pid| command_line(*pid).contains(" load "))
        },
    );
    // The generator host goes away while the other one and the server go on.
    lab.drop_sessions(&generator_ns);
    let out = finish(run, RUN_LIMIT);
    assert!(!out.status.success(), "a run whose only trial failed fails");
    let trial = first_trial(&lab);
    let failure = trial.failure.expect("the trial failed");
    eprintln!("the trial failed: {failure}");
    assert!(
        failure.contains("generator") && failure.contains(&generator_addr),
        "the failure names the generator host: {failure}"
    );
    lab.wait_until_empty();
}

/// The reference targets a run across hosts is shown with: ones whose
/// toolchain `make test` installs and which build in seconds.
const REAL_TARGETS: [&str; 3] = ["go-nethttp", "go-gnet", "node-http"];

/// One trial of a reference target on the hosts: merged from both
/// generators, without errors, with what a local trial has.
fn check_real_trial(target: &str, trial: &corobench_model::TrialRecord) {
    assert_eq!(trial.failure, None, "{target}");
    let load = trial.load.as_ref().expect("a merged load report");
    let generators = load.merged.as_ref().map_or(0, |m| m.generators.len());
    assert_eq!(generators, 2, "{target}: both generator hosts measured");
    assert!(
        load.requests > 0 && load.errors.total() == 0,
        "{target}: {:?}",
        load.errors
    );
    // A real target gets what a local trial gets: counters, the tasks
    // its /stats reports around the load, the leak verdict, the probe.
    assert_counted(trial, load.requests);
    assert!(
        trial.tasks.before.is_some() && trial.tasks.after.is_some(),
        "{target}"
    );
    assert!(trial.probe.is_some(), "{target}");
    let leaks: Vec<String> = trial
        .flags
        .iter()
        .filter(|f| matches!(f, TrialFlag::Leak { .. }))
        .map(ToString::to_string)
        .collect();
    eprintln!("{target}: tasks {:?}, leak flags {leaks:?}", trial.tasks);
    let each: Vec<String> = load
        .merged
        .iter()
        .flat_map(|m| &m.generators)
        .map(|g| format!("{} {:.0}", g.source, g.requests_per_s))
        .collect();
    eprintln!(
        "{target}: merged {:.0} req/s ({})",
        load.requests_per_s,
        each.join(", ")
    );
}

/// Builds `targets` on this machine's own network first. The namespaces
/// have no route out, and the server host builds with this machine's
/// module caches (Go's, npm's): on a machine that never built them, its
/// build would find no package registry.
fn build_outside_the_lab(targets: &[&str]) -> Result<(), String> {
    let out = Command::new(env!("CARGO_BIN_EXE_corobench"))
        .args(["targets", "build", "--targets-dir"])
        .arg(Path::new(REPO).join("targets"))
        .args(targets)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run corobench targets build: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    Err(format!(
        "the reference targets did not build here, so their modules cannot be had: {}",
        tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
    ))
}

#[test]
fn reference_targets_on_three_hosts_are_measured_stored_and_reported() {
    let missing: Vec<&str> = ["go", "node", "npm"]
        .into_iter()
        .filter(|tool| corobench_target::find_on_path(tool).is_none())
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "skipped: {} not on PATH (`make test` installs them)",
            missing.join(", ")
        );
        return;
    }
    if let Err(why) = build_outside_the_lab(&REAL_TARGETS) {
        eprintln!("skipped: {why}");
        return;
    }
    let Some(lab) = Network::new() else { return };
    let spec = lab.write_real_spec(&REAL_TARGETS);
    let targets = Path::new(REPO).join("targets");
    let out = finish(lab.spawn_run_of(&spec, &targets), Duration::from_secs(600));
    let (run, stderr) = succeeded(&lab, &out);
    assert_eq!(run.trials.len(), REAL_TARGETS.len(), "{stderr}");
    for trial in &run.trials {
        check_real_trial(&run.scenarios[trial.scenario_index as usize].target, trial);
    }
    for host in &run.run.provenance.hosts {
        eprintln!(
            "clock of {}: {:?} µs ± {:?} µs",
            host.address, host.clock_offset_us, host.clock_uncertainty_us
        );
    }
    let report = lab
        .lab
        .command_with_db(&["report", "latest"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&report.stdout);
    for target in REAL_TARGETS {
        assert!(
            shown.lines().any(|line| line.starts_with(target)),
            "{target} has its row: {shown}"
        );
    }
    lab.wait_until_empty();
}

/// The queue target's rate: the test kit answers at most this many
/// requests a second at once and makes every request beyond wait 400 ms.
const QUEUE_RATE: f64 = 1000.0;

#[test]
fn a_capacity_search_runs_across_hosts_and_brackets_the_known_capacity() {
    let Some(lab) = Network::new() else { return };
    let target = lab.lab.targets().join("queue");
    std::fs::create_dir_all(&target).unwrap();
    let binary = corobench_testkit::binary_path();
    std::fs::write(
        target.join("target.toml"),
        format!(
            "name = \"queue\"\nmodel = \"goroutine-per-connection\"\nsummary = \"at most \
             {QUEUE_RATE} req/s at once\"\nlanguage = \"Rust\"\nrequires = []\n[run]\n\
             command = [{binary:?}, \"--max-rate\", \"{QUEUE_RATE}\"]\nready_timeout_s = 20\n"
        ),
    )
    .unwrap();
    let hosts_part = std::fs::read_to_string(lab.write_spec("1s")).unwrap();
    let hosts_part = &hosts_part[hosts_part.find("[hosts]").unwrap()..];
    let spec = format!(
        "name = \"capacity-hosts\"\ntargets = [\"queue\"]\n\
         [run]\nduration = \"1.5s\"\nwarmup = \"0.2s\"\nidle = \"0s\"\n\
         [schedule]\nconnections = 32\n[[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n\
         [capacity]\nslo = [\"p99 <= 150ms\", \"errors <= 1%\"]\nstart_rate = 400\n\
         trials_per_rate = 1\nprecision = \"30%\"\nmax_rates = 6\n{hosts_part}"
    );
    let path = lab.path("capacity.toml");
    std::fs::write(&path, spec).unwrap();
    let out = finish(lab.spawn_run(&path), Duration::from_secs(600));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "run failed: {stderr}");
    let report = lab
        .lab
        .command_with_db(&["report", "latest", "--format", "json"])
        .output()
        .unwrap();
    let analysis: corobench_model::RunAnalysis = serde_json::from_slice(&report.stdout).unwrap();
    let search = &analysis.capacity.expect("a capacity run").scenarios[0];
    let corobench_model::CapacityEstimate::Estimated { lo, hi, .. } = search.estimate else {
        panic!("no capacity estimated: {search:#?}");
    };
    // Coarse on purpose (30%, one trial a rate): it brackets the rate.
    assert!(
        lo <= 1.05 * QUEUE_RATE && 0.5 * QUEUE_RATE <= hi,
        "{lo}…{hi} misses {QUEUE_RATE}: {search:#?}"
    );
    eprintln!("capacity across hosts: {lo:.0}…{hi:.0} req/s");
}
