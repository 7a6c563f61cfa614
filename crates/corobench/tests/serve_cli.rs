//! `corobench serve` with a test-kit target (a real process): the ready
//! line, the samples, and no process left behind when stdin closes (the
//! lifeline) or a signal arrives.

mod lab;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdout, Stdio};

use lab::Lab;
use serde_json::Value;

/// A lab with one test-kit target.
fn kit_lab() -> Lab {
    let lab = Lab::new();
    lab.kit_target("kit");
    lab
}

/// `corobench serve ARGS` with stdin and stdout piped, stderr to a file.
fn serve(lab: &Lab, args: &[&str]) -> Child {
    let stderr = std::fs::File::create(lab.path("stderr.log")).unwrap();
    lab.command(&[&["serve"], args].concat())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("corobench starts")
}

/// What `serve` wrote on stderr so far.
fn serve_stderr(lab: &Lab) -> String {
    std::fs::read_to_string(lab.path("stderr.log")).unwrap_or_default()
}

/// The next JSON line on `lines`, or a panic quoting corobench's stderr.
fn next_event(lines: &mut impl Iterator<Item = std::io::Result<String>>, lab: &Lab) -> Value {
    let line = lines
        .next()
        .unwrap_or_else(|| {
            panic!(
                "serve printed no further line; stderr:\n{}",
                serve_stderr(lab)
            )
        })
        .unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?} is not JSON: {e}"))
}

/// A served target: its ready line, then the rest of stdout.
fn ready(child: &mut Child, lab: &Lab) -> (Value, std::io::Lines<BufReader<ChildStdout>>) {
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let hello = next_event(&mut lines, lab);
    assert_eq!(hello["event"], "hello", "{hello}");
    assert_eq!(
        hello["protocol"],
        corobench_engine::protocol::PROTOCOL_VERSION,
        "{hello}"
    );
    let ready = next_event(&mut lines, lab);
    assert_eq!(ready["event"], "ready", "{ready}");
    (ready, lines)
}

fn get(url: &str, path: &str) -> String {
    let addr = url.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// Whether any process, zombie or not, is left of the target's group.
fn group_is_gone(pgid: i32) -> bool {
    corobench_target::group_members(pgid).is_empty()
        && !Path::new(&format!("/proc/{pgid}")).exists()
}

#[test]
fn closing_stdin_stops_the_target_and_leaves_no_process() {
    let lab = kit_lab();
    let mut child = serve(&lab, &["kit", "--sample-interval", "50ms"]);
    let (ready, mut lines) = ready(&mut child, &lab);
    assert_eq!(ready["target"], "kit");
    assert_eq!(ready["verified"], true);
    assert!(
        ready["source_hash"].as_str().is_some_and(|h| !h.is_empty()),
        "{ready}"
    );
    let url = ready["url"].as_str().unwrap().to_string();
    let pgid = i32::try_from(ready["pgid"].as_i64().unwrap()).unwrap();
    assert!(!group_is_gone(pgid));

    let response = get(&url, "/plaintext");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let sample = next_event(&mut lines, &lab);
    assert_eq!(sample["event"], "sample", "{sample}");
    assert!(
        sample["processes"].as_u64().is_some_and(|n| n >= 1),
        "{sample}"
    );

    drop(child.stdin.take());
    let last = lines
        .map(|line| serde_json::from_str::<Value>(&line.unwrap()).unwrap())
        .last()
        .expect("a last line");
    assert_eq!(last["event"], "stopped", "{last}");
    assert_eq!(last["reason"], "stdin closed", "{last}");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stderr:\n{}", serve_stderr(&lab));
    assert!(group_is_gone(pgid), "the target's processes outlived serve");
}

#[test]
fn sigterm_stops_the_target_with_status_130() {
    let lab = kit_lab();
    let mut child = serve(&lab, &["kit", "--no-verify"]);
    let (ready, _lines) = ready(&mut child, &lab);
    assert_eq!(ready["verified"], false);
    let pgid = i32::try_from(ready["pgid"].as_i64().unwrap()).unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill with the pid of our own child, not reaped yet.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "stderr:\n{}", serve_stderr(&lab));
    assert!(group_is_gone(pgid), "the target's processes outlived serve");
}

#[test]
fn bad_requests_are_usage_errors() {
    let lab = kit_lab();
    for (args, expected) in [
        (&["nope"][..], "no target named \"nope\""),
        (&["kit", "--param", "novalue"][..], "is not a parameter"),
        (&["kit", "--param", "workers=2"][..], "workers"),
        (&["kit", "--sample-interval", "1ms"][..], "from 10ms to 1h"),
        // Issue "wrong successes", item 8: the last value used to win silently.
        (
            &["kit", "--param", "workers=2", "--param", "workers=4"][..],
            "--param workers is given twice (workers=2 and workers=4)",
        ),
    ] {
        let output = lab.command(&[&["serve"], args].concat()).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

/// Issue "wrong successes", item 3: `serve --port P` with P in use used to
/// announce `"verified": true` with the pid of a process that had already
/// exited, its checks having reached the other server on P.
#[test]
fn a_port_in_use_is_refused_before_anything_is_announced() {
    let lab = kit_lab();
    let mut first = serve(&lab, &["kit", "--no-verify"]);
    let (ready_line, _lines) = ready(&mut first, &lab);
    let port = ready_line["port"].as_u64().unwrap().to_string();
    let mut second = lab
        .command(&["serve", "kit", "--port", &port])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stdin stays open, as a coordinator keeps it: serve ends by itself.
    let lifeline = second.stdin.take();
    let output = second.wait_with_output().unwrap();
    drop(lifeline);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(!stdout.contains("\"ready\""), "{stdout}");
    assert!(
        stderr.contains(&format!("--port {port}: 127.0.0.1:{port} cannot be bound")),
        "{stderr}"
    );
    drop(first.stdin.take());
    assert_eq!(
        first.wait().unwrap().code(),
        Some(0),
        "{}",
        serve_stderr(&lab)
    );
}

/// Issue "wrong successes", item 11: the folder a target launched by a
/// corobench killed with SIGKILL worked in stayed in the temporary folder;
/// the next corobench removes it (and leaves those of live processes).
#[test]
fn a_dead_corobench_s_target_folder_is_removed_by_the_next() {
    let lab = kit_lab();
    let mut exited = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = exited.id();
    exited.wait().unwrap();
    let stale = lab
        .path("tmp")
        .join(format!("corobench-{dead_pid}-go-nethttp-0"));
    let live = lab
        .path("tmp")
        .join(format!("corobench-{}-php-fpm-1", std::process::id()));
    for folder in [&stale, &live] {
        std::fs::create_dir_all(folder.join("uploads")).unwrap();
    }
    let mut child = serve(&lab, &["kit", "--no-verify"]);
    let (_ready, lines) = ready(&mut child, &lab);
    drop(child.stdin.take());
    assert!(lines.count() > 0, "serve printed no stopped line");
    assert_eq!(
        child.wait().unwrap().code(),
        Some(0),
        "{}",
        serve_stderr(&lab)
    );
    assert!(!stale.exists(), "{} was left", stale.display());
    assert!(live.exists(), "a live process's folder was removed");
}

/// Issue "wrong successes", item 12: `serve </dev/null` exited 1, where the
/// docs say a closed stdin ends serving with 0.
#[test]
fn stdin_closed_before_the_target_is_up_exits_0() {
    let lab = kit_lab();
    let output = lab
        .command(&["serve", "kit", "--no-verify"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("stdin closed while"), "{stderr}");
    assert!(stderr.contains("nothing is served"), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("\"ready\""));
}

#[test]
fn probe_runs_the_machine_speed_probe_before_the_target_starts() {
    let lab = kit_lab();
    let mut child = serve(&lab, &["kit", "--no-verify", "--probe"]);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let events: Vec<Value> = (0..3).map(|_| next_event(&mut lines, &lab)).collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["hello", "probe", "ready"]);
    assert!(
        events[1]["mb_per_s"].as_f64().is_some_and(|mb| mb > 0.0),
        "{}",
        events[1]
    );
    drop(child.stdin.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_footprint_order_is_answered_with_the_group_and_its_stats_tasks() {
    let lab = kit_lab();
    let mut child = serve(&lab, &["kit", "--no-verify", "--sample-interval", "50ms"]);
    let (ready, mut lines) = ready(&mut child, &lab);
    let url = ready["url"].as_str().unwrap().to_string();
    // A connection held open: the test kit's `/stats` counts it as a task.
    let held = TcpStream::connect(url.strip_prefix("http://").unwrap()).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "not an order").unwrap();
    let order = corobench_engine::protocol::Order::Footprint {
        id: 41,
        at_unix_ms: None,
    };
    writeln!(stdin, "{}", corobench_engine::protocol::to_line(&order)).unwrap();
    let answer = (0..200)
        .map(|_| next_event(&mut lines, &lab))
        .find(|event| event["event"] == "footprint")
        .expect("a footprint among the next lines");
    assert_eq!(answer["id"], 41, "{answer}");
    assert!(answer["tasks"].as_u64().is_some_and(|n| n >= 1), "{answer}");
    assert!(
        answer["processes"].as_u64().is_some_and(|n| n >= 1),
        "{answer}"
    );
    assert!(
        answer["rss_bytes"].as_u64().is_some_and(|n| n > 0),
        "{answer}"
    );
    assert!(answer.get("error").is_none(), "{answer}");
    assert!(serve_stderr(&lab).contains("\"not an order\""));
    drop((held, stdin));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// `serve --tls-dir DIR`, as the target Pod of `k8s render` runs it with
/// its Secret mounted: the target serves the certificate in DIR's files,
/// is verified over TLS trusting DIR's authority alone, and DIR is left as
/// it was (the copies go with serve's own folder).
#[test]
fn tls_dir_serves_the_certificate_in_its_files_and_leaves_them() {
    let lab = Lab::new();
    lab.kit_target_serving("kit", &["tls"]);
    let names = ["corobench-target".to_owned()];
    let (ca, cert, key) = corobench_target::RunCertificates::pem_naming(&names).unwrap();
    let dir = lab.path("mounted-secret");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, pem) in [("ca.pem", &ca), ("cert.pem", &cert), ("key.pem", &key)] {
        std::fs::write(dir.join(name), pem).unwrap();
    }
    let tls_dir = dir.to_str().unwrap();
    let mut child = serve(&lab, &["kit", "--protocol", "tls", "--tls-dir", tls_dir]);
    let (ready, _lines) = ready(&mut child, &lab);
    assert_eq!(ready["verified"], true, "checked over TLS: {ready}");
    let cleartext = get(ready["url"].as_str().unwrap(), "/plaintext");
    assert!(
        !cleartext.starts_with("HTTP/1.1 200"),
        "the port speaks TLS only: {cleartext}"
    );
    drop(child.stdin.take());
    assert_eq!(
        child.wait().unwrap().code(),
        Some(0),
        "{}",
        serve_stderr(&lab)
    );
    assert_eq!(std::fs::read_to_string(dir.join("key.pem")).unwrap(), key);
}

#[test]
fn tls_dir_without_tls_or_without_its_files_is_a_usage_error() {
    let lab = kit_lab();
    let empty = lab.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let empty = empty.to_str().unwrap();
    for (args, expected) in [
        (
            &["kit", "--protocol", "tls"][..],
            "pass --tls-dir DIR (with cert.pem, key.pem and ca.pem), or --tls-stdin",
        ),
        (
            &["kit", "--tls-dir", empty][..],
            "--tls-dir is for a protocol over TLS, and --protocol is http/1.1",
        ),
        (
            &["kit", "--protocol", "h2", "--tls-dir", empty][..],
            "cert.pem: No such file",
        ),
        (
            &[
                "kit",
                "--protocol",
                "tls",
                "--tls-dir",
                empty,
                "--tls-stdin",
            ][..],
            "cannot be used with",
        ),
    ] {
        let output = lab.command(&[&["serve"], args].concat()).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
