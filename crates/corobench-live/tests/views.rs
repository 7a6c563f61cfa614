//! Each view's layout, drawn from a fixed sequence of snapshots or events
//! into ratatui's test backend and compared with the screen kept beside
//! these tests. Time is given, never read: the same input draws the same
//! screen on any machine.

use std::collections::BTreeMap;
use std::time::Duration;

use corobench_analyze::fixtures;
use corobench_engine::{Phase, RunEvent, StoredTrials, TrialSlot};
use corobench_live::{LoadView, RunView, View};
use corobench_load::{
    Endpoint, Http2Options, LiveHandshakes, LiveSnapshot, LiveStreams, LoadConfig,
    ProgressSnapshot, Schedule, StopAfter,
};
use corobench_model::{
    Backend, ErrorCounts, LatencyHistogram, MachineProbe, StatusCounts, TrialFlag, TrialRecord,
};
use corobench_spec::{Catalog, CatalogTarget, Plan, PlannedScenario, resolve};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What `view` draws at `now` on a terminal of `width` × `height`.
fn screen(view: &impl View, now: Duration, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| view.render(frame, now)).unwrap();
    terminal.backend().to_string()
}

fn load_config() -> LoadConfig {
    LoadConfig {
        threads: 2,
        warmup: Duration::from_secs(1),
        backend: Backend::Epoll,
        schedule: Schedule::closed(64),
        ..LoadConfig::closed(
            Endpoint::from_url("http://127.0.0.1:8080/plaintext").unwrap(),
            64,
            Duration::from_secs(5),
        )
    }
}

/// The window so far: latencies spread over 0.2–9 ms, a few 5xx and timeouts.
fn live(responses: u64) -> LiveSnapshot {
    let mut latency = LatencyHistogram::new();
    for i in 0..responses {
        latency.record_us(200 + (i * 7_919) % 3_000 + if i % 50 == 0 { 6_000 } else { 0 });
    }
    LiveSnapshot {
        latency,
        status: StatusCounts {
            success: responses - responses / 100,
            server_error: responses / 100,
            ..StatusCounts::default()
        },
        errors: ErrorCounts {
            timeout: 3,
            status_5xx: responses / 100,
            ..ErrorCounts::default()
        },
        responses,
        open_connections: 63,
        threads_reporting: 2,
        tls: None,
        http2: None,
    }
}

fn counters(responses: u64, measuring: bool) -> ProgressSnapshot {
    ProgressSnapshot {
        responses,
        errors: 0,
        measuring,
    }
}

#[test]
fn the_load_view_while_warming_up() {
    let mut view = LoadView::new(&load_config());
    view.observe(ms(250), counters(0, false), Some(LiveSnapshot::default()));
    view.observe(ms(500), counters(0, false), Some(LiveSnapshot::default()));
    insta::assert_snapshot!(screen(&view, ms(600), 100, 30));
}

#[test]
fn the_load_view_while_measuring() {
    let mut view = LoadView::new(&load_config());
    view.observe(ms(750), counters(0, false), None);
    // The window opens at 1 s; 10,000 responses a second, but for a slow
    // second (the third) with half as many.
    let mut total = 0;
    for step in 0..=14 {
        let at = 1_000 + step * 250;
        view.observe(ms(at), counters(total, true), Some(live(total)));
        total += if (2_000..3_000).contains(&(at - 1_000)) {
            1_250
        } else {
            2_500
        };
    }
    insta::assert_snapshot!(screen(&view, ms(4_600), 100, 30));
}

#[test]
fn the_load_view_of_a_request_count_after_ctrl_c() {
    let config = LoadConfig {
        stop: StopAfter::Requests(100_000),
        ..load_config()
    };
    let mut view = LoadView::new(&config);
    view.observe(ms(0), counters(0, true), Some(LiveSnapshot::default()));
    view.observe(ms(1_000), counters(20_000, true), Some(live(20_000)));
    view.stopping();
    insta::assert_snapshot!(screen(&view, ms(1_100), 100, 30));
}

/// The view of a measured second of `config`'s run, whose window so far
/// is `live`, drawn 100 × 30.
fn measured_screen(config: &LoadConfig, live: LiveSnapshot) -> String {
    let mut view = LoadView::new(config);
    view.observe(ms(0), counters(0, true), Some(LiveSnapshot::default()));
    view.observe(ms(1_000), counters(live.responses, true), Some(live));
    screen(&view, ms(1_100), 100, 30)
}

/// `load_config()` against an `https://` URL.
fn tls_config() -> LoadConfig {
    LoadConfig {
        endpoint: Endpoint::from_url("https://127.0.0.1:8443/plaintext").unwrap(),
        ..load_config()
    }
}

/// `config` over HTTP/2 with 10 streams per connection.
fn over_h2(config: LoadConfig) -> LoadConfig {
    LoadConfig {
        http2: Some(Http2Options {
            streams: 10,
            ..Http2Options::default()
        }),
        ..config
    }
}

/// 1,234 handshakes, 234 of them resumed.
fn handshakes() -> Option<LiveHandshakes> {
    Some(LiveHandshakes {
        full: 1_000,
        resumed: 234,
    })
}

/// 250 streams in flight on average over the 64 connections; the server
/// allowed 4 each and sent a GOAWAY.
fn streams() -> Option<LiveStreams> {
    Some(LiveStreams {
        in_flight_mean: 250.0,
        goaways: 1,
        server_limit: Some(4),
    })
}

#[test]
fn the_load_view_of_a_tls_run_shows_its_handshakes() {
    let screen = measured_screen(
        &tls_config(),
        LiveSnapshot {
            tls: handshakes(),
            ..live(10_000)
        },
    );
    assert!(
        screen.contains("HTTP/1.1 over TLS · 2 threads, 64 connections"),
        "{screen}"
    );
    assert!(
        screen.contains("TLS     1,234 handshakes in the window: 1,000 full, 234 resumed (19.0%)"),
        "{screen}"
    );
    assert!(
        !screen.contains("HTTP/2") && !screen.contains("GOAWAY"),
        "{screen}"
    );
}

#[test]
fn the_load_view_of_a_tls_run_without_resumption_says_so() {
    let mut config = tls_config();
    config.endpoint.tls.as_mut().unwrap().resumption = false;
    let screen = measured_screen(&config, live(10_000));
    assert!(
        screen.contains("HTTP/1.1 over TLS, full handshakes · 2 threads"),
        "{screen}"
    );
    assert!(
        screen.contains("TLS     no handshake in the window so far; resumption off"),
        "{screen}"
    );
}

#[test]
fn the_load_view_of_an_h2c_run_shows_its_streams() {
    let mut live = live(10_000);
    live.errors.rst_stream = 2;
    let screen = measured_screen(
        &over_h2(load_config()),
        LiveSnapshot {
            http2: streams(),
            ..live
        },
    );
    assert!(
        screen.contains("h2c, 10 streams per connection · 2 threads, 64 connections"),
        "{screen}"
    );
    assert!(
        screen.contains(
            "HTTP/2  streams per connection: 3.9 in flight (mean), 10 asked, server limit 4 · \
             1 GOAWAY"
        ),
        "{screen}"
    );
    assert!(!screen.contains("TLS"), "{screen}");
    assert!(
        screen.contains("rst_stream  2"),
        "resets stay with the errors: {screen}"
    );
}

#[test]
fn the_load_view_of_an_h2_run_over_tls() {
    let screen = measured_screen(
        &over_h2(tls_config()),
        LiveSnapshot {
            tls: handshakes(),
            http2: streams(),
            ..live(10_000)
        },
    );
    insta::assert_snapshot!(screen);
}

#[test]
fn the_load_view_of_a_cleartext_http1_run_names_no_protocol() {
    let screen = measured_screen(&load_config(), live(10_000));
    assert!(
        screen.contains("│2 threads, 64 connections, closed loop, epoll backend"),
        "{screen}"
    );
    for word in ["TLS", "HTTP/2", "handshake", "GOAWAY", "streams"] {
        assert!(!screen.contains(word), "{word}: {screen}");
    }
}

#[test]
fn the_responses_and_their_classes_come_from_one_snapshot() {
    let mut view = LoadView::new(&load_config());
    view.observe(ms(0), counters(0, true), Some(LiveSnapshot::default()));
    // The counters run ahead of the 250 ms snapshot the classes come from.
    view.observe(ms(1_000), counters(12_500, true), Some(live(10_000)));
    let screen = screen(&view, ms(1_100), 100, 30);
    assert!(
        screen.contains("│10,000 responses in the window"),
        "{screen}"
    );
    assert!(
        screen.contains("│  2xx  9,900") && screen.contains("│  5xx  100"),
        "{screen}"
    );
    assert!(!screen.contains("12,500"), "{screen}");
}

/// Two kit targets, one workload, three trials each.
fn plan() -> Plan {
    let target = |name: &str| CatalogTarget {
        name: name.to_owned(),
        available: Ok(()),
        parameters: BTreeMap::new(),
        min_warmup: Duration::ZERO,
        program: None,
        unserved: BTreeMap::new(),
    };
    let catalog = Catalog {
        targets: vec![target("kit-a"), target("kit-b")],
        cpus: 2,
    };
    let spec = "name = \"smoke\"\ntargets = [\"kit-a\", \"kit-b\"]\n[run]\ntrials = 3\nduration = \"2s\"\n\
                warmup = \"1s\"\nidle = \"1s\"\n[[workloads]]\nname = \"plaintext\"\npath = \"/plaintext\"\n";
    resolve(spec, None, &catalog).unwrap()
}

fn measured(scenario: u32, trial: u32, per_s: f64, probe: f64) -> TrialRecord {
    let mut record = TrialRecord::started(scenario, trial, 0, 0);
    record.load = Some(fixtures::load(per_s, &[900, 1_100, 1_400, 2_900]));
    record.probe = Some(MachineProbe {
        server_mb_per_s: probe,
        generator_mb_per_s: probe * 0.98,
    });
    record
}

/// A view fed events, each a given number of milliseconds after the last.
struct Feed {
    view: RunView,
    at: u64,
}

impl Feed {
    fn step(&mut self, after_ms: u64, event: RunEvent<'_>) {
        self.at += after_ms;
        self.view.apply(event, ms(self.at));
    }

    fn started(&mut self, after_ms: u64, scenario: &PlannedScenario, trial: u32) {
        let slot = TrialSlot {
            scenario: scenario.index,
            trial,
        };
        self.step(after_ms, RunEvent::TrialStarted { scenario, slot });
    }

    fn ended(&mut self, after_ms: u64, scenario: &PlannedScenario, record: &TrialRecord) {
        self.step(after_ms, RunEvent::TrialEnded { scenario, record });
    }

    /// A second of warm-up, then `readings` of the counters 100 ms apart.
    fn measuring(&mut self, readings: u64, per_reading: u64, errors_every: u64) {
        self.step(0, RunEvent::TrialPhase(Phase::WarmingUp));
        for i in 0..readings {
            let snapshot = ProgressSnapshot {
                responses: i * per_reading,
                errors: i / errors_every,
                measuring: true,
            };
            let after = if i == 0 { 1_000 } else { 100 };
            self.step(after, RunEvent::TrialPhase(Phase::Measuring(snapshot)));
        }
    }
}

/// A run's first trials: one measured, one failed, one measuring now.
fn run_view() -> RunView {
    let plan = plan();
    let (a, b) = (&plan.scenarios[0], &plan.scenarios[1]);
    let mut feed = Feed {
        view: RunView::new(&plan.scenarios, 3, &StoredTrials::default(), 6),
        at: 0,
    };
    feed.step(
        0,
        RunEvent::Notice(
            "run 20261128-101500-ab12 · suite smoke · 2 scenarios × 3 trials = 6 trials (0 stored) · seed 1",
        ),
    );
    feed.step(0, RunEvent::Notice("server on CPU 0, generator on CPU 1"));
    feed.step(100, RunEvent::Preparing("verifying kit-a"));
    feed.started(900, a, 0);
    feed.step(0, RunEvent::TrialPhase(Phase::Starting));
    feed.measuring(21, 4_800, u64::MAX);
    feed.step(0, RunEvent::TrialPhase(Phase::Stopping));
    feed.ended(1_100, a, &measured(0, 0, 48_013.0, 512.0));
    feed.started(50, b, 0);
    let mut failed = TrialRecord::started(1, 0, 1, 0).failed(
        "kit-b exited with status 1 before it was healthy:\nbind: address in use".to_owned(),
    );
    failed.probe = Some(MachineProbe {
        server_mb_per_s: 498.0,
        generator_mb_per_s: 505.0,
    });
    feed.ended(2_000, b, &failed);
    feed.started(50, a, 1);
    let mut flagged = measured(0, 1, 45_200.0, 530.0);
    flagged
        .flags
        .push(TrialFlag::GeneratorBound { utilization: 0.97 });
    feed.ended(4_400, a, &flagged);
    feed.started(50, b, 1);
    feed.measuring(15, 2_000, 5);
    feed.view
}

#[test]
fn the_run_view_in_the_middle_of_a_run() {
    let view = run_view();
    insta::assert_snapshot!(screen(&view, ms(14_100), 100, 32));
}

#[test]
fn the_run_view_leaves_the_plain_lines_behind() {
    let view = run_view();
    insta::assert_snapshot!(view.log().join("\n"));
}

#[test]
fn a_resumed_run_s_strip_shows_the_trials_stored_before() {
    let plan = plan();
    let before = StoredTrials {
        slots: [
            TrialSlot {
                scenario: 0,
                trial: 0,
            },
            TrialSlot {
                scenario: 1,
                trial: 2,
            },
        ]
        .into(),
        headlines: BTreeMap::new(),
    };
    let view = RunView::new(&plan.scenarios, 3, &before, 4);
    insta::assert_snapshot!(screen(&view, ms(100), 80, 16));
}
