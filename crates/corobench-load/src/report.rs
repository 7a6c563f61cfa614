//! Merges the threads' measurements into one [`LoadReport`].

use corobench_model::load::LOAD_REPORT_SCHEMA_VERSION;
use corobench_model::{
    BackgroundReport, DrainReport, ErrorCounts, GeneratorUsage, Http2Report, KernelStamps,
    LatencyHistogram, LoadReport, LoadWarning, OpenLoopReport, StatusCounts, TimelineSecond,
    TlsReport,
};

use crate::clock::NS_PER_S;
use crate::config::LoadConfig;
use crate::core::ThreadResult;
use crate::h2::{self, H2Setup};
use crate::os;
use crate::recorder::LagTotals;
use crate::start::Origin;
use crate::timeline::TimelineSum;
use crate::tls::TlsFacts;

/// Generator CPU over (elapsed × threads) at or above which a run is generator-bound.
pub const GENERATOR_BOUND_UTILIZATION: f64 = 0.90;
/// The shortest measured window, and the fewest outcomes in it, over which
/// the generator's CPU share can call a run generator-bound. A run of a few
/// requests lasts about as long as the thread's few busy stretches, so its
/// share is near 100% whatever the server does (a 3-request run read 100%),
/// and a single wake-up or page fault weighs as much as the whole run. Over
/// a second and a thousand outcomes such costs are amortised, and a share of
/// 90% means the generator's cores really were busy all along.
pub const GENERATOR_BOUND_MIN_WINDOW_S: f64 = 1.0;
/// See [`GENERATOR_BOUND_MIN_WINDOW_S`].
pub const GENERATOR_BOUND_MIN_OUTCOMES: u64 = 1000;
/// Achieved over requested rate below which an open-loop run missed its schedule.
pub const SCHEDULE_KEPT_RATIO: f64 = 0.99;
/// The latest an open-loop request may leave after its intended send time
/// before the run is flagged "schedule not kept". A generator keeping up
/// sends within about a millisecond even on a busy machine (1.65 ms at most
/// at 60k req/s over 400 connections once warm); the start-up transient
/// this flag exists for lagged 65 ms. Ten times the normal lag leaves room
/// for a scheduler hiccup and still catches a generator or a connection
/// pool that cannot offer the rate asked for.
pub const SCHEDULE_LAG_BOUND_US: u64 = 10_000;

pub(crate) fn build(
    config: &LoadConfig,
    results: &[ThreadResult],
    origin: &Origin,
    (kernel_stamps, tls, h2): (bool, Option<&TlsFacts>, Option<&H2Setup>),
) -> LoadReport {
    let start = results.iter().map(|r| r.window_start_ns).min().unwrap_or(0);
    let end = results
        .iter()
        .map(|r| r.window_end_ns)
        .max()
        .unwrap_or(start);
    let elapsed_s = end.saturating_sub(start) as f64 / NS_PER_S as f64;
    let per_s = |n: u64| {
        if elapsed_s > 0.0 {
            n as f64 / elapsed_s
        } else {
            0.0
        }
    };

    let mut latency = LatencyHistogram::new();
    let mut uncorrected = config
        .schedule
        .rate_per_s()
        .is_some()
        .then(LatencyHistogram::new);
    let mut connect = (!config.schedule.keepalive || tls.is_some()).then(LatencyHistogram::new);
    let (mut status, mut errors) = (StatusCounts::default(), ErrorCounts::default());
    let (mut requests, mut bytes_read, mut bytes_written) = (0, 0, 0);
    for r in results {
        let rec = &r.recorder;
        latency.add(&rec.latency);
        if let (Some(total), Some(part)) = (uncorrected.as_mut(), rec.uncorrected.as_ref()) {
            total.add(part);
        }
        if let (Some(total), Some(part)) = (connect.as_mut(), rec.connect.as_ref()) {
            total.add(part);
        }
        status.add(&rec.status);
        errors.add(&rec.errors);
        requests += rec.responses;
        bytes_read += rec.bytes_read;
        bytes_written += rec.bytes_written;
    }
    let error_rate = errors.rate(requests);
    let generator = generator_usage(config, results, requests, elapsed_s);
    let open_loop = open_loop_report(config, results, elapsed_s);
    let mut report = LoadReport {
        schema_version: LOAD_REPORT_SCHEMA_VERSION,
        url: config.endpoint.url.clone(),
        method: config.request.method.clone(),
        backend: config.backend.name().to_string(),
        placement: origin.placement(start),
        threads: config.threads,
        connections: config.schedule.connections,
        schedule: config.schedule.kind,
        wire: config.schedule.wire(),
        warmup_s: config.warmup.as_secs_f64(),
        elapsed_s,
        requests,
        requests_per_s: per_s(requests),
        bytes_read,
        bytes_written,
        read_bytes_per_s: per_s(bytes_read),
        status,
        errors,
        error_rate,
        latency: latency.report(),
        latency_uncorrected: uncorrected.map(|h| h.report()),
        open_loop,
        connect_latency: connect.map(|h| h.report()),
        reconnects: results.iter().map(|r| r.recorder.reconnects).sum(),
        generator,
        drain: drain_report(results),
        ready_s: ready_s(results),
        kernel_stamps: kernel_stamps.then(|| stamps_report(results)),
        timeline: threads_timeline(results),
        warnings: Vec::new(),
        merged: None,
        counters: None,
        probe_mb_per_s: None,
        tls: tls.map(|facts| tls_report(facts, results)),
        http2: h2.map(|setup| http2_report(setup, results, elapsed_s, config.schedule.connections)),
    };
    report.warnings = warnings(&report, results);
    report
}

/// The threads' handshakes together, and what the server agreed to (as
/// the first thread that completed one saw it).
fn tls_report(facts: &TlsFacts, results: &[ThreadResult]) -> TlsReport {
    let mut handshake = LatencyHistogram::new();
    let (mut full, mut resumed) = (0, 0);
    let mut negotiated = None;
    for tls in results.iter().filter_map(|r| r.recorder.tls.as_ref()) {
        handshake.add(&tls.handshake);
        full += tls.full;
        resumed += tls.resumed;
        negotiated = negotiated.or_else(|| tls.negotiated.clone());
    }
    let negotiated = negotiated.unwrap_or_default();
    TlsReport {
        version: negotiated.version,
        cipher: negotiated.cipher,
        key_exchange: negotiated.key_exchange,
        alpn: negotiated.alpn,
        server_name: facts.server_name.clone(),
        verified: facts.verified,
        resumption: facts.resumption,
        ktls: facts.ktls,
        provider: facts.provider.to_owned(),
        full_handshakes: full,
        resumed_handshakes: resumed,
        handshake: handshake.report(),
    }
}

/// The threads' streams together: the in-flight mean per connection over
/// the window, the most on one connection, the server's lowest limit.
fn http2_report(
    setup: &H2Setup,
    results: &[ThreadResult],
    elapsed_s: f64,
    connections: u32,
) -> Http2Report {
    let all = || results.iter().filter_map(|r| r.recorder.streams.as_ref());
    let area_ns: u128 = all().map(|s| s.area_ns).sum();
    let connection_ns = elapsed_s * 1e9 * f64::from(connections);
    let limit = all().filter_map(|s| s.server_limit).min();
    let asked = setup.options.streams;
    // Background streams take their share of the server's limit first
    // (always leaving one for a measured stream).
    let background = setup.background_streams();
    let effective = limit.map_or(asked, |limit| {
        let taken = background.min(limit.saturating_sub(1));
        limit.saturating_sub(taken).min(asked)
    });
    Http2Report {
        protocol: setup.protocol.to_owned(),
        streams_per_connection: asked,
        streams_effective: effective,
        server_max_concurrent_streams: limit,
        streams_in_flight_mean: if connection_ns > 0.0 {
            area_ns as f64 / connection_ns
        } else {
            0.0
        },
        streams_in_flight_max: all().map(|s| s.max_per_connection).max().unwrap_or(0),
        goaways: all().map(|s| s.goaways).sum(),
        stream_window_bytes: setup.options.stream_window,
        connection_window_bytes: setup.options.connection_window,
        max_frame_bytes: setup.options.max_frame,
        background: setup
            .background
            .as_ref()
            .map(|background| background_report(background, results)),
    }
}

/// The background streams' outcomes, all threads together.
fn background_report(background: &h2::Background, results: &[ThreadResult]) -> BackgroundReport {
    let all = || results.iter().filter_map(|r| r.recorder.streams.as_ref());
    let responses: u64 = all().map(|s| s.background_answered).sum();
    let total_ns: u128 = all().map(|s| s.background_ns).sum();
    let max_ns = all().map(|s| s.background_max_ns).max().unwrap_or(0);
    #[allow(clippy::cast_precision_loss)]
    let mean_ms = if responses > 0 {
        total_ns as f64 / responses as f64 / 1e6
    } else {
        0.0
    };
    #[allow(clippy::cast_precision_loss)]
    let max_ms = max_ns as f64 / 1e6;
    BackgroundReport {
        path: background.path.clone(),
        streams_per_connection: background.streams,
        responses,
        errors: all().map(|s| s.background_failed).sum(),
        latency_mean_ms: mean_ms,
        latency_max_ms: max_ms,
    }
}

/// Every thread's timeline, second by second.
fn threads_timeline(results: &[ThreadResult]) -> Vec<TimelineSecond> {
    let mut sum = TimelineSum::default();
    for result in results {
        sum.add(0, result.recorder.timeline.iter().copied());
    }
    sum.rows()
}

/// Kernel stamps: how long after the kernel's receipt responses were read.
fn stamps_report(results: &[ThreadResult]) -> KernelStamps {
    let delay = LagTotals::total(results.iter().map(|r| &r.recorder.read_delay));
    KernelStamps {
        stamped: delay.sent,
        mean_read_delay_us: delay.mean_us(),
        max_read_delay_us: delay.max_us,
        send: false,
    }
}

/// Open loop: when the schedule began (the same moment for every thread).
fn ready_s(results: &[ThreadResult]) -> Option<f64> {
    let ready_ns = results.iter().filter_map(|r| r.ready_ns).max()?;
    Some(ready_ns as f64 / NS_PER_S as f64)
}

/// The threads' drains together: every answer and timeout, and the longest.
fn drain_report(results: &[ThreadResult]) -> Option<DrainReport> {
    results
        .iter()
        .filter_map(|r| r.drain)
        .fold(None, |total: Option<DrainReport>, d| {
            let total = total.unwrap_or_default();
            Some(DrainReport {
                responses: total.responses + d.responses,
                timeouts: total.timeouts + d.timeouts,
                elapsed_s: total.elapsed_s.max(d.elapsed_ns as f64 / NS_PER_S as f64),
            })
        })
}

fn generator_usage(
    config: &LoadConfig,
    results: &[ThreadResult],
    requests: u64,
    elapsed_s: f64,
) -> GeneratorUsage {
    GeneratorUsage::from_cpu(
        config.threads,
        (
            results.iter().map(|r| r.cpu.user.as_secs_f64()).sum(),
            results.iter().map(|r| r.cpu.system.as_secs_f64()).sum(),
        ),
        elapsed_s * f64::from(config.threads),
        requests,
        os::max_rss_bytes(),
    )
}

fn open_loop_report(
    config: &LoadConfig,
    results: &[ThreadResult],
    elapsed_s: f64,
) -> Option<OpenLoopReport> {
    let rate_per_s = config.schedule.rate_per_s()?;
    let lag = LagTotals::total(results.iter().map(|r| &r.recorder.send_lag));
    let sent = lag.sent;
    Some(OpenLoopReport {
        requested_rate_per_s: rate_per_s,
        achieved_rate_per_s: if elapsed_s > 0.0 {
            sent as f64 / elapsed_s
        } else {
            0.0
        },
        scheduled: results.iter().map(|r| r.scheduled).sum(),
        sent,
        mean_send_lag_us: lag.mean_us(),
        max_send_lag_us: lag.max_us,
        // Said by the run, which knows the tick it was given.
        tick_us: None,
    })
}

fn warnings(report: &LoadReport, results: &[ThreadResult]) -> Vec<LoadWarning> {
    let mut warnings = Vec::new();
    let outcomes = report.requests.saturating_add(report.errors.transport());
    if report.generator.utilization >= GENERATOR_BOUND_UTILIZATION
        && sample_can_show_saturation(report.elapsed_s, outcomes)
    {
        warnings.push(LoadWarning::GeneratorBound {
            utilization: report.generator.utilization,
        });
    }
    if let Some(open) = report.open_loop {
        if open.achieved_rate_per_s < SCHEDULE_KEPT_RATIO * open.requested_rate_per_s {
            warnings.push(LoadWarning::ScheduleMissed {
                requested_rate_per_s: open.requested_rate_per_s,
                achieved_rate_per_s: open.achieved_rate_per_s,
            });
        }
    }
    if let Some(open) = report.open_loop {
        if open.max_send_lag_us > SCHEDULE_LAG_BOUND_US {
            warnings.push(LoadWarning::ScheduleNotKept {
                max_send_lag_us: open.max_send_lag_us,
                bound_us: SCHEDULE_LAG_BOUND_US,
            });
        }
    }
    if report.errors.ports_exhausted > 0 {
        warnings.push(LoadWarning::PortsExhausted {
            failed_connects: report.errors.ports_exhausted,
        });
    }
    if report.errors.fd_exhausted > 0 {
        let limit = os::raise_fd_limit().unwrap_or(0);
        warnings.push(LoadWarning::FdExhausted { limit });
    }
    let total = report.errors.total();
    if total > 0 {
        warnings.push(LoadWarning::Errors {
            total,
            error_rate: report.error_rate,
        });
    }
    let answers: u64 = results.iter().map(|r| r.recorder.tls_answers).sum();
    if answers > 0 {
        warnings.push(LoadWarning::PortSpeaksTls { answers });
    }
    let http1: u64 = results
        .iter()
        .filter_map(|r| r.recorder.streams.as_ref())
        .map(|s| s.http1_answers)
        .sum();
    if http1 > 0 {
        warnings.push(LoadWarning::SpeaksHttp1 { answers: http1 });
    }
    let background = report.http2.as_ref().and_then(|h| h.background.as_ref());
    if let Some(background) = background.filter(|b| b.responses == 0) {
        warnings.push(LoadWarning::BackgroundUnanswered {
            failed: background.errors,
        });
    }
    warnings
}

/// Whether a window is long and full enough for the generator's CPU share
/// to mean anything (see [`GENERATOR_BOUND_MIN_WINDOW_S`]).
fn sample_can_show_saturation(elapsed_s: f64, outcomes: u64) -> bool {
    elapsed_s >= GENERATOR_BOUND_MIN_WINDOW_S && outcomes >= GENERATOR_BOUND_MIN_OUTCOMES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_sample_never_shows_saturation() {
        assert!(!sample_can_show_saturation(0.000_2, 3));
        assert!(!sample_can_show_saturation(30.0, 3));
        assert!(!sample_can_show_saturation(0.5, 1_000_000));
        assert!(sample_can_show_saturation(1.0, 1000));
    }
}
