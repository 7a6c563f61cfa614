//! Launching real programs: environment and placeholders, health waits,
//! crashes, port clashes, and stops by SIGTERM, by SIGKILL and by drop.

mod common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::os::unix::process::ExitStatusExt as _;
use std::time::Duration;

use common::{built, eventually, options};
use corobench_target::{CpuSet, LaunchOptions, TargetError, group_members};

#[test]
fn the_target_gets_the_contract_environment_parameters_and_cpus() {
    let (scratch, target) = built("env-dump");
    let cpu = CpuSet::allowed().unwrap().iter().last().unwrap();
    let launch = LaunchOptions {
        parameters: BTreeMap::from([("mode".to_string(), "slow".to_string())]),
        cpus: Some(CpuSet::parse(&cpu.to_string()).unwrap()),
        database_url: Some("postgres://u@127.0.0.1:5/db".into()),
        ..options(scratch.path())
    };
    let running = target.launch(&launch).unwrap();
    let report_path = running.work_dir().join("report");
    eventually("the target writes its report", || report_path.exists());
    let report = std::fs::read_to_string(&report_path).unwrap();
    let work = running.work_dir().display().to_string();
    let data = scratch.path().join("data").display().to_string();
    let upload = scratch.path().join("upload").display().to_string();
    let dir = target.manifest.dir.display().to_string();
    let port = running.port();
    let home = std::env::var("HOME").unwrap();
    let expected = [
        "args=2 postgres://u@127.0.0.1:5/db".to_string(),
        "DATABASE_URL=postgres://u@127.0.0.1:5/db".to_string(),
        format!("DATA_DIR={data}"),
        "DUMP_PARAMS=threads=2 mode=slow".to_string(),
        format!("DUMP_PATHS={dir}|{dir}|{work}|{data}|{upload}|{port}|127.0.0.1|${{HOME}}"),
        format!("PORT={port}"),
        "TARGET_NAME=env-dump".to_string(),
        format!("UPLOAD_DIR={upload}"),
        format!("WORK_DIR={work}"),
        format!("Cpus_allowed_list:{cpu}"),
        format!("cwd={dir}"),
    ];
    assert_eq!(
        report.lines().collect::<Vec<_>>(),
        expected,
        "HOME is {home}, and stays unexpanded"
    );
    assert!(
        scratch.path().join("upload").is_dir(),
        "the upload directory is created"
    );
    eventually("stdout goes to stdout.log", || {
        std::fs::read_to_string(running.stdout_log()).is_ok_and(|s| s == "to stdout\n")
    });
    running.stop().unwrap();
    assert!(
        report_path.exists(),
        "a work directory that was given is kept"
    );
}

#[test]
fn without_a_database_database_url_is_unset() {
    let (scratch, target) = built("env-dump");
    let running = target.launch(&options(scratch.path())).unwrap();
    let report_path = running.work_dir().join("report");
    eventually("the target writes its report", || report_path.exists());
    let report = std::fs::read_to_string(&report_path).unwrap();
    assert!(
        report.starts_with("args=2 \n"),
        "{{database_url}} is empty: {report}"
    );
    assert!(!report.contains("DATABASE_URL"), "{report}");
}

#[test]
fn a_healthy_target_stops_on_sigterm_and_leaves_nothing() {
    let (scratch, target) = built("web");
    let launch = LaunchOptions {
        work_dir: None,
        ..options(scratch.path())
    };
    let mut running = target.launch(&launch).unwrap();
    running.wait_healthy(Duration::from_secs(30)).unwrap();
    assert_eq!(running.exit_status(), None);
    assert_eq!(running.pid(), running.pgid());
    let (pgid, work_dir) = (running.pgid(), running.work_dir().to_path_buf());
    assert!(work_dir.join("stderr.log").exists());

    let report = running.stop().unwrap();
    assert!(!report.needed_sigkill, "http.server ends on SIGTERM");
    assert!(!report.exited_before_stop);
    assert_eq!(report.status.unwrap().signal(), Some(libc::SIGTERM));
    assert_eq!(
        group_members(pgid),
        [],
        "nothing of the group remains, not even a zombie"
    );
    assert!(
        !work_dir.exists(),
        "a work directory made for the target is removed"
    );
}

#[test]
fn a_target_ignoring_sigterm_is_killed_after_its_stop_timeout() {
    let (scratch, target) = built("stubborn");
    let running = target.launch(&options(scratch.path())).unwrap();
    eventually("the trap is set", || {
        running.stderr_tail(5).contains("ignoring SIGTERM")
    });
    let pgid = running.pgid();
    let report = running.stop().unwrap();
    assert!(report.needed_sigkill);
    assert_eq!(report.status.unwrap().signal(), Some(libc::SIGKILL));
    assert!(
        report.elapsed >= Duration::from_secs(1),
        "stop_timeout_s = 1 was granted: {report:?}"
    );
    assert_eq!(group_members(pgid), []);
}

#[test]
fn dropping_a_running_target_kills_its_whole_group() {
    let (scratch, target) = built("forker");
    let running = target.launch(&options(scratch.path())).unwrap();
    let pgid = running.pgid();
    eventually("the grandchild exists", || group_members(pgid).len() >= 3);
    drop(running);
    assert_eq!(group_members(pgid), []);
}

#[test]
fn a_crash_before_health_fails_fast_with_the_stderr_tail() {
    let (scratch, target) = built("crasher");
    let mut running = target.launch(&options(scratch.path())).unwrap();
    let port = running.port();
    let error = running.wait_healthy(Duration::from_secs(600)).unwrap_err();
    let TargetError::Exited {
        status,
        stderr_tail,
        ..
    } = &error
    else {
        panic!("not an exit: {error}");
    };
    assert_eq!(status.code(), Some(7));
    assert_eq!(
        *stderr_tail,
        format!("starting on port {port}\nfatal: cannot open the config")
    );
    let message = error.to_string();
    assert!(
        message.starts_with("target crasher exited (exit status: 7) before it became healthy"),
        "{message}"
    );
    let report = running.stop().unwrap();
    assert!(report.exited_before_stop);
    assert_eq!(report.status.unwrap().code(), Some(7));
}

#[test]
fn a_target_that_ignores_its_port_is_told_apart_long_before_its_timeout() {
    let (scratch, target) = built("deaf");
    let mut running = target.launch(&options(scratch.path())).unwrap();
    let port = running.port();
    // Its manifest allows ten minutes to get ready: this returns once it
    // has listened elsewhere for the grace period.
    let error = running.wait_healthy(Duration::from_secs(600)).unwrap_err();
    let TargetError::ListensElsewhere {
        port: told,
        listening,
        ..
    } = &error
    else {
        panic!("not a target listening elsewhere: {error}");
    };
    assert_eq!(*told, port);
    assert!(!listening.is_empty() && !listening.contains(&port));
    let message = error.to_string();
    assert!(
        message.contains(&format!("but not on port {port}, the one it was told")),
        "{message}"
    );
}

#[test]
fn a_crash_mid_run_is_detected() {
    let (scratch, target) = built("web");
    let mut running = target.launch(&options(scratch.path())).unwrap();
    running.wait_healthy(Duration::from_secs(30)).unwrap();
    // SAFETY: the target is our own unreaped child.
    assert_eq!(unsafe { libc::kill(running.pid(), libc::SIGKILL) }, 0);
    eventually("the crash is seen", || running.exit_status().is_some());
    assert_eq!(running.exit_status().unwrap().signal(), Some(libc::SIGKILL));
    assert!(running.stop().unwrap().exited_before_stop);
}

#[test]
fn an_unhealthy_target_times_out_with_the_stderr_tail() {
    let (scratch, target) = built("silent");
    let mut running = target.launch(&options(scratch.path())).unwrap();
    let error = running
        .wait_healthy(Duration::from_millis(500))
        .unwrap_err();
    let message = error.to_string();
    let expected_start = format!(
        "target silent was not ready on port {} within 500ms: it was told to listen there \
         (PORT, {{port}}) and waited for until GET /healthz answered 2xx (last attempt: connect:",
        running.port()
    );
    assert!(message.starts_with(&expected_start), "{message}");
    assert!(
        message.ends_with(":\nbooting\nstuck waiting for a lock"),
        "{message}"
    );
    assert_eq!(
        running.exit_status(),
        None,
        "a timeout does not kill the target; stop does"
    );
}

#[test]
fn a_clash_on_a_picked_port_is_retried_on_another() {
    let (scratch, target) = built("flaky-port");
    let mut running = target.launch(&options(scratch.path())).unwrap();
    let first_port = running.port();
    running.wait_healthy(Duration::from_secs(30)).unwrap();
    assert_eq!(running.port_retries(), 1);
    assert_ne!(running.port(), first_port);
    running.stop().unwrap();
}

#[test]
fn a_given_port_in_use_is_reported_as_such() {
    let (scratch, target) = built("web");
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let launch = LaunchOptions {
        port: Some(port),
        ..options(scratch.path())
    };
    let mut running = target.launch(&launch).unwrap();
    let error = running.wait_healthy(Duration::from_secs(30)).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("target web: port {port} is in use")
    );
}

#[test]
fn bad_launch_options_are_refused_before_anything_starts() {
    let (scratch, target) = built("web");
    let launch = LaunchOptions {
        parameters: BTreeMap::from([("threads".to_string(), "0".to_string())]),
        ..options(scratch.path())
    };
    let message = target.launch(&launch).unwrap_err().to_string();
    assert_eq!(
        message,
        "target web: parameter threads: \"0\" is not allowed: use an integer in 1..=64"
    );
    let launch = LaunchOptions {
        cpus: Some(CpuSet::parse("1023").unwrap()),
        ..options(scratch.path())
    };
    let message = target.launch(&launch).unwrap_err().to_string();
    assert!(
        message.starts_with("CPU list \"1023\": CPU 1023 not available"),
        "{message}"
    );
    let message = target
        .launch(&LaunchOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(message, "launching web: LaunchOptions::data_dir is empty");
    assert!(
        !scratch.path().join("work").join("stderr.log").exists(),
        "nothing was started"
    );
}

/// A command whose program does not exist fails its launch with the
/// spawn's own error. It used to panic ("short read on the CLOEXEC pipe"):
/// the attempt made again without a cgroup also ran the first attempt's
/// setup, which wrote into a descriptor since reused by the spawn's pipe.
#[test]
fn a_program_that_does_not_exist_fails_to_start_saying_so() {
    corobench_target::install_child_reaper().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let spec = "targets = [\"api\"]\n[[workloads]]\nname = \"w\"\npath = \"/\"\n\
                [servers.api]\ncommand = \"./corobench-no-such-program {port}\"\n";
    let spec_path = scratch.path().join("bench.toml");
    std::fs::write(&spec_path, spec).unwrap();
    let manifest = corobench_target::inline_servers(spec, Some(&spec_path))
        .unwrap()
        .remove(0);
    let target = corobench_target::BuildCache::new(scratch.path().join("cache"))
        .build(&manifest, &scratch.path().join("build.log"))
        .unwrap();
    for attempt in 0..2 {
        let error = target.launch(&options(scratch.path())).unwrap_err();
        let TargetError::Spawn { source, .. } = &error else {
            panic!("attempt {attempt}: not a spawn error: {error}");
        };
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{error}");
        assert!(
            error.to_string().contains("corobench-no-such-program"),
            "{error}"
        );
    }
}
