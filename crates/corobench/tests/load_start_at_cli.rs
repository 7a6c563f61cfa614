//! `corobench load --start-at`: the measured window opens at a wall-clock
//! instant, and the report says where it really opened.

mod lab;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use corobench_testkit::{Knobs, TestServer};
use lab::{Lab, corobench, load_report_schema_errors, stderr};

/// `now + ahead` (or `now - behind`) as Unix seconds with microseconds.
fn unix_seconds(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap();
    format!("{}.{:06}", since.as_secs(), since.subsec_micros())
}

fn unix_us(text: &str) -> u64 {
    let (whole, fraction) = text.split_once('.').unwrap();
    whole.parse::<u64>().unwrap() * 1_000_000 + fraction.parse::<u64>().unwrap()
}

#[test]
fn a_future_start_opens_the_window_no_earlier_than_asked() {
    let server = TestServer::start(Knobs::default());
    let start_at = unix_seconds(SystemTime::now() + Duration::from_millis(600));
    let output = corobench(&[
        "load",
        "--json",
        "-c",
        "2",
        "--warmup",
        "0.2s",
        "-d",
        "0.3s",
        "--start-at",
        &start_at,
        &server.url("/plaintext"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    // How the start is announced depends on how soon corobench got to it
    // (a busy machine may take longer than the 0.6 s): it waits, shortens
    // the warm-up or starts at once. Whichever it was, the window opens no
    // earlier than asked.
    let announced = stderr(&output);
    assert!(
        ["waiting", "is shortened", "passed"]
            .iter()
            .any(|how| announced.contains(how)),
        "{announced}"
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let errors = load_report_schema_errors(&report);
    assert!(errors.is_empty(), "{errors:#?}");
    let asked = report["start_at_unix_us"].as_u64().unwrap();
    assert_eq!(asked, unix_us(&start_at));
    let offset = report["start_offset_us"].as_i64().unwrap();
    // The threads open the window when their clock reaches the instant, never before.
    assert!(offset >= 0, "the window opened {offset} µs early");
    let opened = report["window_start_unix_us"].as_u64().unwrap();
    assert_eq!(opened, asked + offset.unsigned_abs());
    assert!(report["host"].as_str().is_some_and(|h| !h.is_empty()));
}

#[test]
fn a_past_start_begins_at_once_and_says_so() {
    let server = TestServer::start(Knobs::default());
    let start_at = unix_seconds(SystemTime::now() - Duration::from_secs(2));
    let output = corobench(&[
        "load",
        "-n",
        "50",
        "-c",
        "2",
        "--warmup",
        "1s",
        "--start-at",
        &start_at,
        &server.url("/plaintext"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("passed") && stderr(&output).contains("without warm-up"),
        "{}",
        stderr(&output)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("Window      opened") && text.contains("after --start-at"),
        "{text}"
    );
}

#[test]
fn bad_instants_are_usage_errors() {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/");
    let far = unix_seconds(SystemTime::now() + Duration::from_secs(3 * 24 * 3600));
    for (instant, expected) in [
        ("tomorrow", "is not an instant"),
        ("2026-11-24T08:00:00+01:00", "offsets other than Z"),
        (far.as_str(), "within 24h"),
    ] {
        let output = corobench(&["load", "-n", "5", "--start-at", instant, &url]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(expected), "{}", stderr(&output));
    }
}

/// Issue "wrong successes", item 10: Ctrl-C while waiting for --start-at
/// printed a report whose window "opened 3597 s before --start-at". An
/// interrupted wait says so, with no figures, and exits 130.
#[test]
fn an_interrupted_wait_reports_no_figures() {
    let server = TestServer::start(Knobs::default());
    let start_at = unix_seconds(SystemTime::now() + Duration::from_secs(3600));
    let lab = Lab::new();
    let mut child = lab
        .command(&["load", "--json", "-d", "1s", "--start-at", &start_at])
        .arg(server.url("/plaintext"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once it says it waits (its Ctrl-C handler is in place by
    // then), however long a busy machine took to get there.
    let mut announced = String::new();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap());
    while !announced.contains("waiting") {
        let before = announced.len();
        std::io::BufRead::read_line(&mut lines, &mut announced).unwrap();
        assert!(announced.len() > before, "it ended first: {announced}");
    }
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill with the pid of our own child, not reaped yet.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    std::io::Read::read_to_string(&mut lines, &mut announced).unwrap();
    let output = child.wait_with_output().unwrap();
    let err = announced;
    assert_eq!(output.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted before the measured window opened"),
        "{err}"
    );
    assert!(
        output.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}
