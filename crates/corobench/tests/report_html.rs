//! The HTML report of the fixture run in headless Chromium: it loads with
//! no console message (the page logs nothing, so any message is an error
//! or an exception), its script runs, its charts are in the DOM, and a
//! screenshot is written to target/report-screenshot.png for a person to
//! look at.
//!
//! Needs Debian's `chromium` (or `chromium-browser`, `google-chrome`);
//! without it the test says so and passes, unless COROBENCH_REQUIRE_CHROMIUM
//! is set.

mod lab;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use lab::{Fixture, ok};

/// Chromium normally needs a few seconds; this only stops a hung browser.
const BROWSER_LIMIT: Duration = Duration::from_secs(180);

#[test]
fn the_page_loads_cleanly_in_chromium_with_its_charts() {
    let Some(chromium) = find_chromium() else {
        return;
    };
    let fixture = Fixture::new();
    let page = fixture.scratch("report.html");
    ok(&fixture.corobench(&[
        "report",
        &fixture.run_a,
        "-f",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]));
    let url = format!("file://{}", page.display());

    let dump = browse(&chromium, &fixture, &["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&dump.stdout);
    let log = String::from_utf8_lossy(&dump.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "the page wrote to the console:\n{}",
        console.join("\n")
    );
    assert!(
        dom.contains(r#"data-ready="true""#),
        "the page's script did not finish"
    );
    for section in [
        "throughput",
        "latency",
        "sweeps",
        "resources",
        "tables",
        "warnings",
        "provenance",
    ] {
        assert!(
            dom.contains(&format!(r#"id="{section}""#)),
            "no {section} section"
        );
    }
    // 5 workload × schedule groups: a throughput and a spectrum chart each,
    // one chart per metric of each sweep, one resource chart per scenario.
    let charts = dom.matches(r#"<svg class="chart""#).count();
    assert!(charts >= 5 * 2 + 5 + 20, "{charts} charts");
    assert_eq!(visible_in_group(&dom, "resources"), 1);
    assert_eq!(visible_in_group(&dom, "sweep-0"), 1);

    let screenshot = target_dir().join("report-screenshot.png");
    let _ = std::fs::remove_file(&screenshot);
    let shot = format!("--screenshot={}", screenshot.display());
    browse(
        &chromium,
        &fixture,
        &[&shot, "--window-size=1400,2000", &url],
    );
    let png = std::fs::read(&screenshot).expect("chromium wrote the screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 50_000,
        "{} bytes",
        png.len()
    );
}

/// Elements of a switch group the script left visible.
fn visible_in_group(dom: &str, group: &str) -> usize {
    let marker = format!(r#"data-group="{group}""#);
    dom.split('<')
        .filter(|tag| tag.contains(&marker) && !tag.contains(" hidden"))
        .count()
}

/// Runs headless Chromium on a fresh profile with `args`, logging to stderr.
/// Its output goes to files (a page's DOM would fill a pipe nobody reads
/// while we wait).
fn browse(chromium: &Path, fixture: &Fixture, args: &[&str]) -> Output {
    let run = format!("chromium-{}", args.len());
    let profile = fixture.scratch(&format!("{run}-profile"));
    let (out_path, err_path) = (
        fixture.scratch(&format!("{run}.out")),
        fixture.scratch(&format!("{run}.err")),
    );
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > BROWSER_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {BROWSER_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = Output {
        status: child.wait().unwrap(),
        stdout: std::fs::read(&out_path).unwrap(),
        stderr: std::fs::read(&err_path).unwrap(),
    };
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The workspace's target directory (CARGO_TARGET_TMPDIR is its `tmp`).
fn target_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).to_path_buf()
}

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("COROBENCH_REQUIRE_CHROMIUM").is_none(),
            "chromium is required but not found; on Debian: apt-get install chromium"
        );
        eprintln!("skipped: chromium not found (on Debian: apt-get install chromium)");
    }
    found
}
