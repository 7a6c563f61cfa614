//! Servers already running at a URL, named by a pid or a process name that
//! must be the server at that URL.

mod lab;

use lab::{AlreadyRunning, Lab, text};

/// A spec measuring the already running server `live` once on /plaintext,
/// its process named by `process` (`pid = 12` or `process = "x"`).
fn spec(lab: &Lab, url: &str, process: &str) -> String {
    let text = format!(
        "name = \"running\"\ntargets = [\"live\"]\n[run]\ntrials = 1\nduration = \"0.3s\"\n\
         warmup = \"0.1s\"\nidle = \"0.1s\"\n[schedule]\nconnections = 2\n[[workloads]]\n\
         name = \"hello\"\npath = \"/plaintext\"\n[servers.live]\nurl = {url:?}\n{process}\n"
    );
    lab.write("spec.toml", &text).display().to_string()
}

/// A process that is not the server: a `sleep` in its own group.
fn bystander() -> std::process::Child {
    use std::os::unix::process::CommandExt as _;
    std::process::Command::new("sleep")
        .arg("60")
        .process_group(0)
        .spawn()
        .unwrap()
}

/// Issue "hostile input, third round", wrong result 1: a `pid` of another
/// process than the server at the `url` was sampled beside the server's
/// requests (CPU 0%, 1.6 MiB). It is refused before any trial, naming both.
#[test]
fn a_pid_that_is_not_the_server_at_the_url_is_refused_naming_both() {
    let lab = Lab::new();
    let server = AlreadyRunning::start();
    let mut other = bystander();
    let spec = spec(&lab, &server.url, &format!("pid = {}", other.id()));
    let output = lab.run(&["run", &spec]);
    let _ = other.kill();
    let _ = other.wait();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let port = server.url.rsplit(':').next().unwrap();
    assert!(
        stderr.contains(&format!(
            "process {} (sleep) is not the server at {}",
            other.id(),
            server.url
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("listens on port {port}")),
        "{stderr}"
    );
    assert!(stderr.contains("spec.toml:"), "{stderr}");
    assert!(lab.stored_trials().is_empty(), "no trial may run");
}

/// The server's own pid passes the same check (the listening socket is
/// found among its descriptors).
#[test]
fn the_servers_own_pid_is_accepted() {
    let lab = Lab::new();
    let server = AlreadyRunning::start();
    let spec = spec(&lab, &server.url, &format!("pid = {}", server.child.id()));
    let output = lab.command(&["plan", &spec]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let output = lab.run(&["run", &spec]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
}

/// Issue "hostile input, third round", message 13: a `process` name that
/// fits processes of several groups is the spec's to fix (exit 2), not a
/// failed server (it was 3).
#[test]
fn an_ambiguous_process_name_is_a_usage_error() {
    let lab = Lab::new();
    let server = AlreadyRunning::start();
    let twin = AlreadyRunning::start();
    let spec = spec(&lab, &server.url, "process = \"corobench-testkit\"");
    let output = lab.run(&["run", &spec]);
    drop(twin);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("different process groups"), "{stderr}");
}

/// A pid that runs nothing is a server that is not there: exit 3, as the
/// README's table says.
#[test]
fn a_pid_that_runs_nothing_is_a_server_not_running() {
    let lab = Lab::new();
    let server = AlreadyRunning::start();
    let mut gone = bystander();
    let pid = gone.id();
    gone.kill().unwrap();
    gone.wait().unwrap();
    let spec = spec(&lab, &server.url, &format!("pid = {pid}"));
    let output = lab.run(&["run", &spec]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("no process has pid {pid}")),
        "{stderr}"
    );
}

/// Issue "hostile input, third round", message 8: `plan` accepted memory
/// per connection (`idle_connections`) and profiles for a server already
/// running, and every such trial then failed at run time. Both need a
/// server started fresh: `plan` refuses them (as `run --profile` does),
/// saying how to get one.
#[test]
fn what_needs_a_fresh_server_is_refused_for_one_already_running() {
    let lab = Lab::new();
    let server = AlreadyRunning::start();
    let plain = std::fs::read_to_string(spec(&lab, &server.url, "")).unwrap();
    let idle = plain.replace(
        "path = \"/plaintext\"\n",
        "path = \"/plaintext\"\nidle_connections = [4, 8]\n",
    );
    let profiled = plain.replace("[run]\n", "[run]\nprofile = true\n");
    assert!(idle.contains("idle_connections") && profiled.contains("profile = true"));
    let path = lab.path("spec.toml").display().to_string();
    let refusals = [
        (
            "plan",
            &idle,
            "workload hello holds idle connections (idle_connections)",
        ),
        (
            "plan",
            &profiled,
            "the run profiles each scenario (profile = true)",
        ),
        (
            "run --profile",
            &plain,
            "the run profiles each scenario (profile = true)",
        ),
    ];
    for (command, spec_text, asked) in refusals {
        lab.write("spec.toml", spec_text);
        let output = match command {
            "plan" => lab.corobench(&["plan", &path]),
            _ => lab.run(&["run", "--profile", &path]),
        };
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.contains(asked), "{command}: {stderr}");
        assert!(
            stderr.contains("already running at its url")
                && stderr.contains("give servers.live.command"),
            "{command}: {stderr}"
        );
        assert!(lab.stored_trials().is_empty(), "no trial may run");
    }
}
