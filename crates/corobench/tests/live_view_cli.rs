//! The live view end to end. Under a terminal (a pseudo-terminal made
//! here) `corobench load` draws its view, and Ctrl-C stops the load cleanly
//! and gives the terminal back as it was; without a terminal, or with
//! `--no-tui`, the output is plain lines with no terminal control in them.

mod lab;

use std::io::Read as _;
use std::os::fd::{FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corobench_testkit::{Knobs, TestServer};
use lab::{Lab, text};

/// Entering and leaving the alternate screen; hiding and showing the cursor.
const ENTER: &str = "\x1b[?1049h";
const LEAVE: &str = "\x1b[?1049l";
const HIDE: &str = "\x1b[?25l";
const SHOW: &str = "\x1b[?25h";

/// A pseudo-terminal of 100 × 30: the side corobench gets, and the side
/// this test reads: everything corobench writes, kept as it arrives, and
/// the screen it draws. The view redraws only the cells that changed, so
/// a phrase on screen need not appear whole in the bytes: what the screen
/// shows is read from a terminal emulator, never from the raw stream.
struct Pty {
    terminal: OwnedFd,
    seen: Arc<Mutex<Vec<u8>>>,
    screen: Arc<Mutex<vt100::Parser>>,
}

impl Pty {
    fn open() -> Self {
        let (mut controller, mut terminal): (RawFd, RawFd) = (-1, -1);
        let size = libc::winsize {
            ws_row: 30,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: valid out-pointers and a valid winsize; no name or termios asked for.
        let made = unsafe {
            libc::openpty(
                &raw mut controller,
                &raw mut terminal,
                std::ptr::null_mut(),
                std::ptr::null(),
                &raw const size,
            )
        };
        assert_eq!(made, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: openpty returned two fresh descriptors this test now owns.
        let (controller, terminal) = unsafe {
            (
                OwnedFd::from_raw_fd(controller),
                OwnedFd::from_raw_fd(terminal),
            )
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(size.ws_row, size.ws_col, 0)));
        let (sink, emulator) = (Arc::clone(&seen), Arc::clone(&screen));
        std::thread::spawn(move || {
            let mut reader = std::fs::File::from(controller);
            let mut buffer = [0_u8; 4096];
            // Ends with EIO once every holder of the terminal side is gone.
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
                emulator.lock().unwrap().process(&buffer[..n]);
            }
        });
        Self {
            terminal,
            seen,
            screen,
        }
    }

    /// The text on the screen now, row by row.
    fn screen(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Waits until the screen shows `phrase` while `child` runs; fails at
    /// once, with what the terminal holds, if the child ends first.
    fn wait_for_screen(&self, child: &mut Child, phrase: &str) {
        wait_for(
            &format!("the screen to show {phrase:?}"),
            Duration::from_secs(300),
            || {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!(
                        "corobench ended ({status}) before the screen showed {phrase:?}:\n{}",
                        self.seen()
                    );
                }
                self.screen().contains(phrase)
            },
            || self.screen(),
        );
    }

    fn seen(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// The terminal's local modes (echo, line editing, signals).
    fn local_modes(&self) -> libc::tcflag_t {
        use std::os::fd::AsRawFd as _;
        // SAFETY: termios is plain data, filled by tcgetattr on a descriptor we own.
        let mut settings: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to a termios, on a descriptor we own.
        let got = unsafe { libc::tcgetattr(self.terminal.as_raw_fd(), &raw mut settings) };
        assert_eq!(got, 0, "tcgetattr: {}", std::io::Error::last_os_error());
        settings.c_lflag
    }

    /// `command` with this terminal as its stdin, stdout and stderr, and as
    /// its controlling terminal, in a session of its own.
    fn attach(&self, command: &mut Command) {
        let io = || Stdio::from(self.terminal.try_clone().unwrap());
        command.stdin(io()).stdout(io()).stderr(io());
        // SAFETY: setsid and ioctl are async-signal-safe, as pre_exec requires.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Waits up to `limit` for `done`, checking every 50 ms; a guard against a
/// hang, not a speed check. On giving up, says what `shown` returns.
fn wait_for(
    what: &str,
    limit: Duration,
    mut done: impl FnMut() -> bool,
    shown: impl Fn() -> String,
) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < limit,
            "gave up waiting for {what}; the terminal holds:\n{}",
            shown()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ctrl-C to `child`; waits for it to end and checks that it gave the
/// terminal back (left the alternate screen, showed the cursor). Returns
/// its exit status and what it wrote after leaving the alternate screen.
fn interrupt(child: &mut Child, pty: &Pty) -> (ExitStatus, String) {
    // SAFETY: kill only signals the child this test started.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) };
    let mut status = None;
    wait_for(
        "corobench to end after Ctrl-C",
        Duration::from_secs(60),
        || {
            status = child.try_wait().unwrap();
            status.is_some()
        },
        || pty.seen(),
    );
    let seen = pty.seen();
    let (entered, left) = (seen.rfind(ENTER).unwrap(), seen.rfind(LEAVE).unwrap());
    assert!(left > entered, "the alternate screen was left:\n{seen}");
    let shown = seen.rfind(SHOW).unwrap() > seen.rfind(HIDE).unwrap();
    assert!(shown, "the cursor shows again:\n{seen}");
    (status.unwrap(), seen[left..].to_owned())
}

#[test]
fn ctrl_c_under_the_load_view_stops_cleanly_and_gives_the_terminal_back() {
    let server = TestServer::start(Knobs::default());
    let pty = Pty::open();
    let modes_before = pty.local_modes();
    assert_ne!(modes_before & libc::ECHO, 0, "a new terminal echoes");
    let mut command = Command::new(env!("CARGO_BIN_EXE_corobench"));
    command
        .args(["load", "-c", "4", "-d", "60s", "--warmup", "0s"])
        .arg(server.url("/plaintext"))
        .env("TERM", "xterm-256color");
    pty.attach(&mut command);
    let mut child = command.spawn().unwrap();
    pty.wait_for_screen(&mut child, "measuring:");
    assert_eq!(
        pty.local_modes() & libc::ECHO,
        0,
        "keys are not echoed over the view"
    );
    assert_ne!(
        pty.local_modes() & libc::ISIG,
        0,
        "Ctrl-C still raises SIGINT"
    );
    let (status, after) = interrupt(&mut child, &pty);
    assert!(status.success(), "{status:?}:\n{after}");
    assert!(after.contains("interrupted: the report covers"), "{after}");
    assert!(
        after.contains("Requests"),
        "the summary follows the view:\n{after}"
    );
    assert_eq!(
        pty.local_modes(),
        modes_before,
        "the terminal's modes are as they were"
    );
}

#[test]
fn a_load_without_a_terminal_writes_plain_lines() {
    let server = TestServer::start(Knobs::default());
    for extra in [&[][..], &["--no-tui"][..]] {
        let output = Command::new(env!("CARGO_BIN_EXE_corobench"))
            .args(["load", "-c", "2", "-d", "0.5s", "--warmup", "0s"])
            .args(extra)
            .arg(server.url("/plaintext"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        assert!(stdout.contains("Requests"), "{stdout}");
        assert!(
            !stdout.contains('\x1b') && !stderr.contains('\x1b'),
            "{stderr}"
        );
    }
}

#[test]
fn a_run_without_a_terminal_writes_one_plain_line_per_trial() {
    let lab = Lab::new();
    lab.kit_target("kit-a");
    lab.write(
        "spec.toml",
        "name = \"plain\"\ntargets = [\"kit-a\"]\n[run]\ntrials = 2\nduration = \"0.3s\"\n\
         warmup = \"0.1s\"\nidle = \"0.1s\"\n[schedule]\nconnections = 2\n\
         [[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n",
    );
    let output = lab.run(&["run", lab.path("spec.toml").to_str().unwrap(), "--no-probe"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(!stderr.contains('\x1b'), "{stderr}");
    for counter in [
        "[1/2] kit-a/plaintext/c=2 trial",
        "[2/2] kit-a/plaintext/c=2 trial",
    ] {
        assert!(stderr.contains(counter), "{stderr}");
    }
}

#[test]
fn ctrl_c_under_the_run_view_stops_cleanly_and_leaves_the_run_s_log() {
    let lab = Lab::new();
    lab.kit_target("kit-a");
    lab.write(
        "spec.toml",
        "name = \"view\"\ntargets = [\"kit-a\"]\n[run]\ntrials = 2\nduration = \"60s\"\n\
         warmup = \"0.1s\"\nidle = \"0.1s\"\n[schedule]\nconnections = 2\n\
         [[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n",
    );
    let pty = Pty::open();
    let modes_before = pty.local_modes();
    let mut command = lab.command_with_db(&["run", lab.path("spec.toml").to_str().unwrap()]);
    command.env("TERM", "xterm-256color");
    pty.attach(&mut command);
    let mut child = command.spawn().unwrap();
    pty.wait_for_screen(&mut child, "measuring:");
    let (status, after) = interrupt(&mut child, &pty);
    assert_eq!(status.code(), Some(130), "{after}");
    assert!(
        after.contains("suite view"),
        "the run's log stays behind:\n{after}"
    );
    assert!(after.contains("corobench run --resume"), "{after}");
    assert_eq!(
        pty.local_modes(),
        modes_before,
        "the terminal's modes are as they were"
    );
}
