//! Servers that leave the process group they were started in (`setsid`, a
//! daemon's double fork): every process they start is held and stopped
//! with them, and a command that puts its server in the background is
//! refused, saying so.

mod lab;

use std::time::{Duration, Instant};

use lab::{Lab, text};

/// A spec measuring the server `script` (a shell command) once.
fn spec_text(script: &str) -> String {
    format!(
        "name = \"escape\"\ntargets = [\"api\"]\n[run]\ntrials = 1\nduration = \"0.5s\"\n\
         warmup = \"0.1s\"\nidle = \"0.1s\"\n[schedule]\nconnections = 2\n[[workloads]]\n\
         name = \"hello\"\npath = \"/plaintext\"\n[servers.api]\n\
         command = [\"sh\", \"-c\", {script:?}]\nready = \"/healthz\"\n"
    )
}

/// That spec, written to the lab: its path.
fn spec(lab: &Lab, script: &str) -> String {
    lab.write("spec.toml", &spec_text(script))
        .display()
        .to_string()
}

/// The pids the servers wrote to `file`, one a line.
fn written_pids(file: &std::path::Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// Whether `pid` still runs (a zombie waiting for its reaper does not).
fn is_running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
        !state.is_some_and(|s| s.starts_with('Z') || s.starts_with('X'))
    })
}

/// Issue "hostile input, third round", left behind 1: a `setsid --wait`
/// wrapper left its servers listening after an exit-0 run. The server in
/// a session of its own is stopped with its command.
#[test]
fn a_server_in_a_session_of_its_own_is_stopped_with_its_command() {
    let lab = Lab::new();
    let pids = lab.path("pids");
    let script = format!(
        "exec setsid --wait sh -c 'echo $$ >> {}; exec {}'",
        pids.display(),
        corobench_testkit::binary_path().display()
    );
    let output = lab.run(&["run", &spec(&lab, &script)]);
    let stderr = text(&output.stderr);
    let started = written_pids(&pids);
    let left: Vec<i32> = started.iter().copied().filter(|&p| is_running(p)).collect();
    for &pid in &left {
        // SAFETY: kill with a pid this test's server wrote; it cleans up.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!started.is_empty(), "the server wrote its pid: {stderr}");
    assert!(left.is_empty(), "left running: {left:?}");
}

/// A command that starts its server in the background and exits (a double
/// fork, as a daemon does) is refused with the way out, and what it left
/// is stopped: never retried as a port clash.
#[test]
fn a_server_that_daemonizes_is_refused_and_what_it_left_is_stopped() {
    let lab = Lab::new();
    let pids = lab.path("pids");
    let script = format!(
        "(setsid sh -c 'echo $$ >> {}; exec {}' &)",
        pids.display(),
        corobench_testkit::binary_path().display()
    );
    let output = lab.run(&["run", &spec(&lab, &script)]);
    let stderr = text(&output.stderr);
    let started = written_pids(&pids);
    let left: Vec<i32> = started.iter().copied().filter(|&p| is_running(p)).collect();
    for &pid in &left {
        // SAFETY: kill with a pid this test's server wrote; it cleans up.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("daemonizes"), "{stderr}");
    assert!(stderr.contains("run it in the foreground"), "{stderr}");
    assert!(
        !stderr.contains("port") || !stderr.contains("in use"),
        "{stderr}"
    );
    assert!(left.is_empty(), "left running: {left:?}");
}

/// A corobench killed outright (SIGKILL) while it measures a server in a
/// session of its own leaves nothing running: what watches over its
/// servers kills the cgroup.
#[test]
fn a_server_in_a_session_of_its_own_dies_with_a_killed_corobench() {
    let lab = Lab::new();
    let pids = lab.path("pids");
    let script = format!(
        "exec setsid --wait sh -c 'echo $$ >> {}; exec {}'",
        pids.display(),
        corobench_testkit::binary_path().display()
    );
    let spec = spec_text(&script).replace("duration = \"0.5s\"", "duration = \"60s\"");
    assert!(spec.contains("duration = \"60s\""), "{spec}");
    lab.write("spec.toml", &spec);
    let mut child = lab
        .command_with_db(&["run", lab.path("spec.toml").to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The trial's server is the second one started (the first answered the
    // check before the trials).
    let limit = Instant::now() + Duration::from_secs(120);
    while written_pids(&pids).len() < 2 && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let started = written_pids(&pids);
    let limit = Instant::now() + Duration::from_secs(30);
    while started.iter().any(|&p| is_running(p)) && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = started.iter().copied().filter(|&p| is_running(p)).collect();
    for &pid in &left {
        // SAFETY: kill with a pid this test's server wrote; it cleans up.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(
        started.len() >= 2,
        "the trial's server started: {started:?}"
    );
    assert!(left.is_empty(), "left running: {left:?}");
}
