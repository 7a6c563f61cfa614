//! The `/proc` parsers on files captured from a real machine (see
//! `fixtures/procfs/README.md`) and on hand-made broken ones.

use corobench_target::procfs::{CtxSwitches, ParseError, parse_pid, parse_stat, parse_status};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/procfs/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

#[test]
fn multi_threaded_process_stat() {
    let stat = parse_stat(&fixture("multi_threaded.stat")).unwrap();
    assert_eq!(stat.pid, 24690);
    assert_eq!(stat.state, 'R');
    assert_eq!((stat.ppid, stat.pgrp), (24685, 24685));
    assert_eq!((stat.utime_ticks, stat.stime_ticks), (3, 3));
    assert_eq!(stat.num_threads, 5);
    assert_eq!(stat.starttime_ticks, 194_859);
    assert_eq!(stat.rss_pages, 3535);
    assert!(stat.is_live());
}

#[test]
fn multi_threaded_process_status() {
    let status = parse_status(&fixture("multi_threaded.status")).unwrap();
    assert_eq!(status.threads, 5);
    assert_eq!(status.rss_bytes, Some(14_276 * 1024));
    assert_eq!(
        status.ctx,
        CtxSwitches {
            voluntary: 28,
            involuntary: 6
        }
    );
}

#[test]
fn stat_and_status_agree_on_threads() {
    for name in ["multi_threaded", "odd_comm", "zombie"] {
        let stat = parse_stat(&fixture(&format!("{name}.stat"))).unwrap();
        let status = parse_status(&fixture(&format!("{name}.status"))).unwrap();
        assert_eq!(stat.num_threads, status.threads, "{name}");
    }
}

#[test]
fn command_name_with_spaces_and_parentheses() {
    // The command is `srv) S 1 (x)`: a parser that stops at the first `)`
    // would read `S` as the state and `1` as the parent.
    let text = fixture("odd_comm.stat");
    assert!(text.contains("(srv) S 1 (x))"));
    let stat = parse_stat(&text).unwrap();
    assert_eq!(stat.pid, 24742);
    assert_eq!(stat.state, 'S');
    assert_eq!((stat.ppid, stat.pgrp), (24690, 24685));
    assert_eq!(stat.num_threads, 1);
    assert_eq!(stat.starttime_ticks, 194_902);
}

#[test]
fn zombie_has_no_memory_but_parses() {
    let stat = parse_stat(&fixture("zombie.stat")).unwrap();
    assert_eq!(stat.state, 'Z');
    assert!(!stat.is_live());
    assert_eq!(stat.rss_pages, 0);
    let status = parse_status(&fixture("zombie.status")).unwrap();
    assert_eq!(status.rss_bytes, None, "a zombie has no VmRSS line");
    assert_eq!(status.ctx.voluntary, 1);
}

#[test]
fn own_process_parses_live() {
    let pid = i32::try_from(std::process::id()).unwrap();
    let stat = parse_stat(&std::fs::read_to_string("/proc/self/stat").unwrap()).unwrap();
    assert_eq!(stat.pid, pid);
    assert!(stat.num_threads >= 1);
    let status = parse_status(&std::fs::read_to_string("/proc/self/status").unwrap()).unwrap();
    assert!(status.rss_bytes.unwrap() > 0);
}

#[test]
fn truncated_stat_names_the_first_missing_field() {
    let full = fixture("multi_threaded.stat");
    // Cut right after `utime`: `stime` is the first field missing.
    let cut = "24690 (python3) R 24685 24685 16791 0 -1 4194304 3009 6557 1 0 3";
    assert!(full.starts_with(cut));
    assert_eq!(parse_stat(cut), Err(ParseError::Missing { field: "stime" }));
    assert_eq!(
        parse_stat("24690 (python3)"),
        Err(ParseError::Missing { field: "state" })
    );
    assert_eq!(parse_stat("24690 (python3"), Err(ParseError::NoCommEnd));
    assert_eq!(parse_stat(""), Err(ParseError::NoCommStart));
    assert_eq!(parse_stat("24690 ) x ("), Err(ParseError::NoCommEnd));
}

#[test]
fn every_prefix_of_a_stat_line_is_an_error_not_a_panic() {
    let full = fixture("odd_comm.stat");
    // The parser reads up to `rss` and requires the `rsslim` after it, so
    // every line cut before `rsslim` must be rejected. (The command name
    // holds 3 spaces, so `rsslim` follows the 27th space.)
    let rsslim_start = full.match_indices(' ').nth(26).unwrap().0 + 1;
    assert!(full[rsslim_start..].starts_with("18446744073709551615 "));
    for end in 0..=rsslim_start {
        assert!(
            parse_stat(&full[..end]).is_err(),
            "accepted {:?}",
            &full[..end]
        );
    }
    assert!(parse_stat(&full[..rsslim_start + 1]).is_ok());
}

#[test]
fn stat_fields_that_are_not_numbers_are_named() {
    let bad = fixture("multi_threaded.stat").replacen(" 5 0 194859", " five 0 194859", 1);
    assert_eq!(
        parse_stat(&bad),
        Err(ParseError::NotANumber {
            field: "num_threads",
            value: "five".into()
        })
    );
    let bad_state = fixture("multi_threaded.stat").replacen(") R ", ") RR ", 1);
    assert_eq!(
        parse_stat(&bad_state),
        Err(ParseError::BadState { value: "RR".into() })
    );
}

#[test]
fn status_without_a_required_line_is_an_error() {
    let full = fixture("multi_threaded.status");
    for (line_start, field) in [
        ("Threads:", "Threads"),
        ("voluntary_ctxt_switches:", "voluntary_ctxt_switches"),
        ("nonvoluntary_ctxt_switches:", "nonvoluntary_ctxt_switches"),
    ] {
        let without: String = full
            .lines()
            .filter(|line| !line.starts_with(line_start))
            .map(|line| format!("{line}\n"))
            .collect();
        assert_eq!(parse_status(&without), Err(ParseError::Missing { field }));
    }
}

#[test]
fn status_cut_mid_line_is_an_error() {
    let full = fixture("multi_threaded.status");
    let cut_at = full.find("nonvoluntary_ctxt_switches:").unwrap();
    // Cut inside the key: the line no longer names the field.
    assert_eq!(
        parse_status(&full[..cut_at + 10]),
        Err(ParseError::Missing {
            field: "nonvoluntary_ctxt_switches"
        })
    );
    // Cut after the colon: the field is there without a value.
    let after_colon = cut_at + "nonvoluntary_ctxt_switches:".len();
    assert!(matches!(
        parse_status(&full[..after_colon]),
        Err(ParseError::NotANumber {
            field: "nonvoluntary_ctxt_switches",
            ..
        })
    ));
    assert!(matches!(
        parse_status("Threads:\t4\nVmRSS:\t 12 MB\n"),
        Err(ParseError::NotANumber { field: "VmRSS", .. })
    ));
}

#[test]
fn only_all_digit_names_are_pids() {
    assert_eq!(parse_pid("1234"), Some(1234));
    for name in ["self", "thread-self", "", "12a", "-1", "+5", "99999999999"] {
        assert_eq!(parse_pid(name), None, "{name:?}");
    }
}
