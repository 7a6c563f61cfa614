//! Running program targets: what they are given, their output, their exit,
//! time limits and stops, and that nothing of their process group remains.

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{built, built_program, eventually, options, program_fixtures};
use corobench_target::{
    BuiltTarget, CpuSet, ProgramEnd, ProgramOptions, ProgramRun, STDOUT_LIMIT, check_units,
    discover, group_members, parse_benchmarks,
};

/// Options whose work directory is `scratch/work`, kept after the run.
fn in_scratch(scratch: &Path) -> ProgramOptions {
    ProgramOptions {
        work_dir: Some(scratch.join("work")),
        ..ProgramOptions::default()
    }
}

/// The pid the fixture wrote to `WORK_DIR/child`.
fn child_pid(scratch: &Path) -> i32 {
    let text = std::fs::read_to_string(scratch.join("work/child")).unwrap();
    text.trim().parse().unwrap()
}

/// Runs a program to its end; also returns its process group.
fn run_to_the_end(target: &BuiltTarget, options: &ProgramOptions) -> (ProgramRun, i32) {
    let running = target.spawn_program(options).unwrap();
    let pgid = running.pgid();
    (running.wait().unwrap(), pgid)
}

fn is_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(')')
            .is_some_and(|(_, s)| s.trim_start().starts_with('Z'))
    })
}

#[test]
fn every_program_fixture_is_a_valid_program() {
    let manifests = discover(&program_fixtures()).unwrap();
    assert_eq!(manifests.len(), 6);
    assert!(
        manifests.iter().all(|m| m.program().is_some()),
        "{manifests:?}"
    );
}

#[test]
fn a_program_that_exits_0_reports_its_result_and_what_it_was_given() {
    let (scratch, target) = built_program("reporter");
    let cpu = CpuSet::allowed().unwrap().iter().last().unwrap();
    let run = target
        .run_program(&ProgramOptions {
            parameters: BTreeMap::from([("workers".to_string(), "8".to_string())]),
            cpus: Some(CpuSet::parse(&cpu.to_string()).unwrap()),
            ..in_scratch(scratch.path())
        })
        .unwrap();
    assert_eq!(run.end, ProgramEnd::Exited);
    assert_eq!(run.status.unwrap().code(), Some(0));
    assert!(run.succeeded());
    assert!(!run.stdout_truncated);
    assert_eq!(run.stderr_tail, "measured");
    assert_eq!(run.leftover_processes, 0);
    let results = parse_benchmarks(&run.stdout).unwrap();
    assert_eq!(results.len(), 1, "{}", run.stdout);
    assert_eq!(results[0].name, "BenchmarkReport/workers=8");
    assert_eq!(results[0].value("req/s"), Some(400.0));
    check_units(&results[0], &target.manifest.program().unwrap().metrics).unwrap();

    let work = scratch.path().join("work");
    let dir = target.manifest.dir.display().to_string();
    let report = std::fs::read_to_string(work.join("report")).unwrap();
    assert_eq!(
        report.lines().collect::<Vec<_>>(),
        [
            format!("Cpus_allowed_list:{cpu}"),
            format!("REPORT_PATHS={dir}|{dir}|{}", work.display()),
            "TARGET_NAME=reporter".to_string(),
            format!("WORK_DIR={}", work.display()),
            format!("cwd={dir}"),
        ],
        "no PORT, DATA_DIR, UPLOAD_DIR or DATABASE_URL: a program serves nothing"
    );
}

#[test]
fn a_program_that_fails_reports_its_status_and_stderr() {
    let (scratch, target) = built_program("failer");
    let run = target.run_program(&in_scratch(scratch.path())).unwrap();
    assert_eq!(run.end, ProgramEnd::Exited);
    assert_eq!(run.status.unwrap().code(), Some(3));
    assert!(!run.succeeded());
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr_tail,
        "dialing the server\nfatal: connection refused"
    );
    assert!(!run.needed_sigkill);
}

#[test]
fn a_program_past_its_time_limit_is_killed_with_its_whole_group() {
    let (scratch, target) = built_program("endless");
    let (run, pgid) = run_to_the_end(&target, &in_scratch(scratch.path()));
    assert_eq!(run.end, ProgramEnd::TimedOut);
    assert!(!run.succeeded());
    assert!(run.needed_sigkill, "it ignores SIGTERM");
    assert_eq!(run.status.unwrap().signal(), Some(libc::SIGKILL));
    assert_eq!(run.stderr_tail, "ignoring SIGTERM");
    assert_eq!(group_members(pgid), [], "not even a zombie remains");
    assert!(
        !is_alive(child_pid(scratch.path())),
        "the child is gone too"
    );
}

#[test]
fn a_stop_flag_ends_a_program_early() {
    let (scratch, target) = built_program("endless");
    let stop = Arc::new(AtomicBool::new(false));
    let running = target
        .spawn_program(&ProgramOptions {
            time_limit: Some(Duration::from_secs(600)),
            stop: Some(Arc::clone(&stop)),
            ..in_scratch(scratch.path())
        })
        .unwrap();
    let (pgid, stderr_log) = (running.pgid(), running.stderr_log());
    // Another thread watches the group while the run is waited for, as a
    // sampler would, and stops it once the program and its child run.
    let watcher = std::thread::spawn(move || {
        eventually("the program and its child run", || {
            std::fs::read_to_string(&stderr_log).is_ok_and(|s| s.contains("ignoring SIGTERM"))
                && group_members(pgid).len() >= 2
        });
        stop.store(true, Ordering::SeqCst);
    });
    let run = running.wait().unwrap();
    watcher.join().unwrap();
    assert_eq!(run.end, ProgramEnd::Stopped);
    assert_eq!(run.status.unwrap().signal(), Some(libc::SIGKILL));
    assert_eq!(group_members(pgid), []);
}

#[test]
fn children_left_by_a_program_that_exited_are_stopped() {
    let (scratch, target) = built_program("forker");
    let (run, pgid) = run_to_the_end(&target, &in_scratch(scratch.path()));
    assert_eq!(run.end, ProgramEnd::Exited);
    assert!(run.succeeded());
    assert_eq!(run.leftover_processes, 1, "the sleep it started");
    assert!(!run.needed_sigkill, "sleep ends on SIGTERM");
    assert_eq!(
        run.stdout, "BenchmarkFork 1 1000 ns/op 0 errors\n",
        "read to its end although the child held the pipe"
    );
    assert_eq!(group_members(pgid), []);
    assert!(!is_alive(child_pid(scratch.path())));
}

#[test]
fn a_program_that_needs_a_server_gets_its_url() {
    let (scratch, target) = built_program("client");
    let run = target
        .run_program(&ProgramOptions {
            server_url: Some("http://127.0.0.1:41234/".into()),
            ..in_scratch(scratch.path())
        })
        .unwrap();
    assert!(run.succeeded(), "{run:?}");
    assert_eq!(
        run.stderr_tail,
        "argument http://127.0.0.1:41234\nenvironment http://127.0.0.1:41234/plaintext",
        "without the trailing slash"
    );
    let message = target
        .run_program(&in_scratch(scratch.path()))
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "program client needs a server: name a server target for it"
    );
}

#[test]
fn mismatched_kinds_and_urls_are_refused_before_anything_starts() {
    let (scratch, program) = built_program("reporter");
    let with_url = ProgramOptions {
        server_url: Some("http://127.0.0.1:1".into()),
        ..in_scratch(scratch.path())
    };
    assert_eq!(
        program.run_program(&with_url).unwrap_err().to_string(),
        "program reporter talks to no server ([program] server = \"none\")"
    );
    assert_eq!(
        program
            .launch(&options(scratch.path()))
            .unwrap_err()
            .to_string(),
        "target reporter is a program, not a server: it runs to completion and serves nothing"
    );
    let (_, server) = built("web");
    assert_eq!(
        server
            .run_program(&in_scratch(scratch.path()))
            .unwrap_err()
            .to_string(),
        "target web is a server, not a program: it prints no results"
    );
    let bad = ProgramOptions {
        parameters: BTreeMap::from([("workers".to_string(), "0".to_string())]),
        ..in_scratch(scratch.path())
    };
    assert!(program.run_program(&bad).is_err());
    assert!(
        !scratch.path().join("work").join("stderr.log").exists(),
        "nothing was started"
    );
}

#[test]
fn stdout_is_kept_up_to_its_limit() {
    let (_scratch, target) = built_program("chatty");
    let running = target.spawn_program(&ProgramOptions::default()).unwrap();
    assert_eq!(
        running.time_limit(),
        Duration::from_secs(300),
        "the default"
    );
    let work_dir = running.work_dir().to_path_buf();
    let run = running.wait().unwrap();
    assert!(run.succeeded(), "{:?}", run.stderr_tail);
    assert!(run.stdout_truncated);
    assert_eq!(run.stdout.len(), STDOUT_LIMIT);
    assert!(
        run.stdout
            .starts_with("BenchmarkChatty 1 1 ns/op 0 errors\n")
    );
    assert!(
        !work_dir.exists(),
        "a work directory made for the run is removed"
    );
}
