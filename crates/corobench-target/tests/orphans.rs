//! No process of a target's group outlives the process that launched it, even
//! when that process is SIGKILLed (so it can clean nothing up itself).
//!
//! This test runs its own `main`: it re-executes itself as the "launcher",
//! which starts a target whose first process forks a grandchild, reports the
//! group and then waits to be killed. The test SIGKILLs it and watches the
//! group disappear. It is a child subreaper, so the orphans are reparented to
//! it and it can reap them: "nothing remains" includes zombies.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use corobench_target::{
    BuildCache, LaunchOptions, Manifest, Postgres, children_of, group_members,
    install_child_reaper, live_members,
};

/// Set in the launcher's environment to the role it plays.
const ROLE: &str = "COROBENCH_ORPHAN_TEST_ROLE";
/// Set in the launcher's environment to a directory it may fill, which the
/// test removes (the launcher, killed, cleans up nothing).
const SCRATCH: &str = "COROBENCH_ORPHAN_TEST_SCRATCH";
/// How long the group may take to disappear after the launcher's death.
const GRACE: Duration = Duration::from_secs(20);

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("target") => launch_target_and_wait(),
        Ok("postgres") => start_postgres_and_wait(),
        _ => {
            install_child_reaper().expect("becoming a child subreaper");
            check(
                "a SIGKILLed launcher leaves no process of its target's group",
                || {
                    sigkilled_launcher_leaves_nothing("target");
                },
            );
            if corobench_target::find_on_path("pg_config").is_none()
                && !Path::new("/usr/lib/postgresql").is_dir()
            {
                println!(
                    "test a SIGKILLed launcher leaves no PostgreSQL process ... skipped: PostgreSQL is not installed"
                );
            } else {
                check("a SIGKILLed launcher leaves no PostgreSQL process", || {
                    sigkilled_launcher_leaves_nothing("postgres");
                });
            }
        }
    }
}

fn check(name: &str, test: impl FnOnce()) {
    print!("test {name} ... ");
    test();
    println!("ok");
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/targets")
        .join(name)
}

/// Launcher role: starts the `forker` fixture, waits for its grandchild,
/// prints `<pgid> <guardian pid>` and sleeps until killed.
fn launch_target_and_wait() {
    let scratch = PathBuf::from(std::env::var_os(SCRATCH).unwrap());
    let manifest = Manifest::load(&fixture("forker")).unwrap();
    let built = BuildCache::new(scratch.join("cache"))
        .build(&manifest, &scratch.join("log"))
        .unwrap();
    let options = LaunchOptions {
        data_dir: scratch.join("data"),
        upload_dir: scratch.join("upload"),
        work_dir: Some(scratch.join("work")),
        ..LaunchOptions::default()
    };
    let target = built.launch(&options).unwrap();
    let deadline = Instant::now() + GRACE;
    // The group holds the shell and both sleeps once the grandchild exists.
    while live_members(target.pgid()).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the target never forked its grandchild"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    println!("{} {}", target.pgid(), target.guardian_pid());
    std::thread::sleep(Duration::from_secs(1000));
}

/// Launcher role: starts PostgreSQL, prints `<postmaster pid> <cluster dir>`
/// and sleeps until killed.
fn start_postgres_and_wait() {
    let postgres = Postgres::start(Path::new(&std::env::var_os(SCRATCH).unwrap())).unwrap();
    println!("{} {}", postgres.pid().unwrap(), postgres.dir().display());
    std::thread::sleep(Duration::from_secs(1000));
}

fn sigkilled_launcher_leaves_nothing(role: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let mut launcher = Launcher(
        Command::new(std::env::current_exe().unwrap())
            .env(ROLE, role)
            .env(SCRATCH, scratch.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(launcher.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let mut fields = line.split_whitespace();
    let pgid: i32 = fields
        .next()
        .expect("the launcher reports its target")
        .parse()
        .unwrap();
    let other = fields.next().unwrap().to_string();
    // PostgreSQL's children leave the postmaster's group (they call setsid)
    // and exit by themselves when it dies: watch them by parentage.
    let mut watched: Vec<i32> = live_members(pgid).iter().map(|m| m.pid).collect();
    watched.extend(children_of(pgid).iter().map(|child| child.pid));
    if role == "target" {
        assert!(
            watched.len() >= 3,
            "the shell, its sleep and the background sleep: {watched:?}"
        );
        watched.push(other.parse().unwrap()); // the guardian
    } else {
        assert!(
            watched.len() >= 2,
            "the postmaster and its helper processes: {watched:?}"
        );
    }

    launcher.0.kill().unwrap(); // SIGKILL
    assert!(!launcher.0.wait().unwrap().success());

    let deadline = Instant::now() + GRACE;
    let remaining = || {
        watched
            .iter()
            .copied()
            .filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
            .collect::<Vec<_>>()
    };
    while !(remaining().is_empty() && group_members(pgid).is_empty()) && Instant::now() < deadline {
        reap_orphans();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        group_members(pgid),
        [],
        "processes of group {pgid} outlived their launcher"
    );
    assert_eq!(
        remaining(),
        Vec::<i32>::new(),
        "processes outlived their launcher"
    );
    if role == "postgres" {
        std::fs::remove_dir_all(other).unwrap();
    }
}

/// The launcher process, killed should the test fail before it does.
struct Launcher(Child);

impl Drop for Launcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reaps every orphan reparented to this (subreaper) process.
fn reap_orphans() {
    // SAFETY: this test process starts no other children that anything waits for.
    while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
}
