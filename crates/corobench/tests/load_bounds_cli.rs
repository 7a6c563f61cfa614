//! `corobench load` given numbers and files out of range: every one is
//! refused before any load goes out, with exit status 2 and a message that
//! names the flag, never with a panic or an allocation the size of the value.

mod lab;

use corobench_testkit::{Knobs, TestServer};
use lab::{corobench, stderr};

/// Flags given to `corobench load`, and what its message must contain.
type Case<'a> = (&'a [&'a str], &'a [&'a str]);

/// Runs `corobench load ARGS URL` for every case against one server and
/// checks each is refused as a usage error naming what was wrong, and that
/// none of them sent a request.
fn assert_all_refused(cases: &[Case<'_>]) {
    let server = TestServer::start(Knobs::default());
    let url = server.url("/");
    for (args, expected) in cases {
        let mut full = vec!["load"];
        full.extend_from_slice(args);
        full.push(&url);
        let output = corobench(&full);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        for needle in *expected {
            assert!(
                err.contains(needle),
                "{args:?}: {needle:?} missing in {err}"
            );
        }
        assert!(output.stdout.is_empty(), "{args:?}: nothing is measured");
    }
    assert_eq!(
        server.counters().requests_received,
        0,
        "a refused run sends nothing"
    );
}

#[test]
fn every_value_out_of_range_is_refused() {
    assert_all_refused(&[
        // Durations past a day, or empty.
        (&["-d", "1000000h"], &["--duration", "24h"]),
        (&["-d", "1e30"], &["--duration", "24h"]),
        (&["-d", "inf"], &["--duration", "24h"]),
        (&["-d", "0"], &["--duration", "longer than 0"]),
        (&["--warmup", "25h"], &["--warmup", "24h"]),
        (&["--timeout", "1e400"], &["--timeout", "24h"]),
        (&["--timeout", "0s"], &["--timeout", "longer than 0"]),
        // Counts past their range, or past their type.
        (&["-n", "9007199254740993"], &["--requests", "2^53"]),
        (&["-n", "99999999999999999999999"], &["--requests", "2^53"]),
        (&["-n", "0"], &["--requests", "2^53"]),
        (&["-t", "5000", "-c", "6000"], &["--threads", "1024"]),
        (
            &["-c", "5000000000"],
            &["--connections", "file-descriptor limit"],
        ),
        (&["-c", "4294967295"], &["--connections", "use at most"]),
        (&["-c", "0"], &["--connections", "at least 1"]),
        // Rates no generator can send on these connections and threads.
        (&["-c", "1", "-n", "3", "-R", "1e12"], &["-R", "1000000"]),
        (&["-c", "1", "-R", "1e8"], &["-R", "1000000"]),
        (&["-c", "100", "-R", "5e7"], &["-R", "10000000", "-c, -t)"]),
        (&["-R", "1e-9"], &["-R", "0.001"]),
        // A body file that never ends is read only one byte past the cap.
        (
            &["-X", "POST", "-n", "1", "--body-file", "/dev/zero"],
            &["--body-file", "64 MiB"],
        ),
    ]);
}
