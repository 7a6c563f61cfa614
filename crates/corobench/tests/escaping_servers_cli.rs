//! Servers that leave the process group they were started in (`setsid`, a
//! daemon's double fork): every process they start is held and stopped
//! with them, after a run, a Ctrl-C or a SIGKILL of corobench, and a
//! command that puts its server in the background (nginx without
//! `daemon off;`) is refused, saying so.

mod lab;

use std::process::Child;
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
    let left = left_running(&started, Duration::ZERO);
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
    let left = left_running(&started, Duration::ZERO);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("daemonizes"), "{stderr}");
    assert!(stderr.contains("run it in the foreground"), "{stderr}");
    assert!(
        !stderr.contains("port") || !stderr.contains("in use"),
        "{stderr}"
    );
    assert!(left.is_empty(), "left running: {left:?}");
}

/// A corobench measuring, for a minute, a server in a session of its own
/// that writes its pid to `pids`; returned once the trial's server started
/// (the second one: the first answered the check before the trials).
fn measuring_a_server_in_its_own_session(lab: &Lab, pids: &std::path::Path) -> Child {
    let script = format!(
        "exec setsid --wait sh -c 'echo $$ >> {}; exec {}'",
        pids.display(),
        corobench_testkit::binary_path().display()
    );
    let spec = spec_text(&script).replace("duration = \"0.5s\"", "duration = \"60s\"");
    assert!(spec.contains("duration = \"60s\""), "{spec}");
    lab.write("spec.toml", &spec);
    let child = lab
        .command_with_db(&["run", lab.path("spec.toml").to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let limit = Instant::now() + Duration::from_secs(120);
    while written_pids(pids).len() < 2 && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// A corobench killed outright (SIGKILL) while it measures a server in a
/// session of its own leaves nothing running: what watches over its
/// servers kills the cgroup.
#[test]
fn a_server_in_a_session_of_its_own_dies_with_a_killed_corobench() {
    let lab = Lab::new();
    let pids = lab.path("pids");
    let mut child = measuring_a_server_in_its_own_session(&lab, &pids);
    child.kill().unwrap();
    child.wait().unwrap();
    let started = written_pids(&pids);
    let left = left_running(&started, Duration::from_secs(30));
    assert!(
        started.len() >= 2,
        "the trial's server started: {started:?}"
    );
    assert!(left.is_empty(), "left running: {left:?}");
}

/// Waits up to `limit` for `pids` to stop running; kills and returns
/// those still running then.
fn left_running(pids: &[i32], limit: Duration) -> Vec<i32> {
    let deadline = Instant::now() + limit;
    while pids.iter().any(|&p| is_running(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|&p| is_running(p)).collect();
    for &pid in &left {
        // SAFETY: kill with a pid this test's server wrote; it cleans up.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    left
}

/// Issue "hostile input, third round", left behind 1: a server that
/// double-forks into a session of its own, while the command that started
/// it stays in the foreground, is stopped with that command after the run.
#[test]
fn a_server_that_double_forks_is_stopped_after_the_run() {
    let lab = Lab::new();
    let pids = lab.path("pids");
    // The subshell forks the server's shell and exits at once: the server
    // is orphaned, in a session of its own, while `sleep` (the command)
    // stays.
    let script = format!(
        "(setsid sh -c 'echo $$ >> {pids}; exec {kit}' &); echo $$ >> {pids}; exec sleep 300",
        pids = pids.display(),
        kit = corobench_testkit::binary_path().display()
    );
    let output = lab.run(&["run", &spec(&lab, &script)]);
    let stderr = text(&output.stderr);
    let started = written_pids(&pids);
    let left = left_running(&started, Duration::ZERO);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        started.len() >= 4,
        "two starts, each a command and a server: {started:?}"
    );
    assert!(left.is_empty(), "left running: {left:?}");
    assert_eq!(lab.stored_trials().len(), 1, "{stderr}");
}

/// Issue "hostile input, third round", left behind 1: a corobench stopped
/// by Ctrl-C (SIGINT) while it measures a server in a session of its own
/// stops that server before it exits.
#[test]
fn a_server_in_a_session_of_its_own_is_stopped_at_ctrl_c() {
    let lab = Lab::new();
    let pids = lab.path("pids");
    let mut child = measuring_a_server_in_its_own_session(&lab, &pids);
    let corobench = i32::try_from(child.id()).unwrap();
    // SAFETY: kill with the pid of the child this test started.
    assert_eq!(unsafe { libc::kill(corobench, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    let started = written_pids(&pids);
    // Nothing waited for: what corobench stopped is gone when it exits.
    let left = left_running(&started, Duration::ZERO);
    assert!(
        started.len() >= 2,
        "the trial's server started: {started:?}"
    );
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(left.is_empty(), "left running: {left:?}");
}

/// The processes of `program` whose working folder is `folder` or below.
fn processes_in(program: &std::path::Path, folder: &std::path::Path) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let link = |name: &str| std::fs::read_link(format!("/proc/{pid}/{name}")).ok();
            link("exe").is_some_and(|exe| exe == program)
                && link("cwd").is_some_and(|cwd| cwd.starts_with(folder))
                && is_running(*pid)
        })
        .collect()
}

/// An nginx configuration that keeps every file in `dir` and serves
/// "Hello" on the loopback port `@PORT@` stands for; `daemon off;` not
/// said, so nginx puts itself in the background.
fn nginx_conf(dir: &std::path::Path) -> String {
    let d = dir.display();
    format!(
        "pid {d}/nginx.pid;\nerror_log {d}/error.log;\nworker_processes 1;\n\
         events {{ worker_connections 64; }}\nhttp {{\n  access_log off;\n\
         client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n\
         scgi_temp_path {d}/scgi;\n  server {{\n    listen 127.0.0.1:@PORT@;\n\
         location / {{ return 200 \"Hello\\n\"; }}\n  }}\n}}\n"
    )
}

/// Issue "hostile input, third round", left behind 1: nginx without
/// `daemon off;` left 4 copies: its leader exits, the port was then "in
/// use" by its own daemon, and corobench retried. It is refused with the
/// way to keep it in the foreground, and none of its processes is left.
#[test]
fn nginx_without_daemon_off_is_refused_and_nothing_of_it_is_left() {
    let nginx = std::path::Path::new("/usr/sbin/nginx");
    if !nginx.is_file() {
        eprintln!("skipped: {} is not installed", nginx.display());
        return;
    }
    let lab = Lab::new();
    let dir = lab.path("nginx");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("nginx.conf.in"), nginx_conf(&dir)).unwrap();
    let script = format!(
        "sed \"s/@PORT@/$PORT/\" {d}/nginx.conf.in > {d}/nginx.conf && \
         exec {nginx} -e {d}/error.log -p {d} -c {d}/nginx.conf",
        d = dir.display(),
        nginx = nginx.display()
    );
    let spec = spec_text(&script).replace("ready = \"/healthz\"", "ready = \"/\"");
    lab.write("spec.toml", &spec);
    let output = lab.run(&["run", lab.path("spec.toml").to_str().unwrap()]);
    let stderr = text(&output.stderr);
    let mut left = processes_in(nginx, lab.root());
    let limit = Instant::now() + Duration::from_secs(10);
    while !left.is_empty() && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(50));
        left = processes_in(nginx, lab.root());
    }
    for &pid in &left {
        // SAFETY: kill with the pid of an nginx started in this test's lab.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("one of them listening on its port"),
        "nginx started and its daemon was found: {stderr}"
    );
    assert!(stderr.contains("daemonizes"), "{stderr}");
    assert!(stderr.contains("run it in the foreground"), "{stderr}");
    assert!(stderr.contains("daemon off;"), "{stderr}");
    assert!(
        !stderr.contains("in use"),
        "never retried as a port clash: {stderr}"
    );
    assert!(left.is_empty(), "nginx left running: {left:?}");
}
