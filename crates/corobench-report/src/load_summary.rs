//! The human summary of one load run (`LoadReport`): request counts and
//! rates, latency percentiles, the schedule, TLS and HTTP/2, statuses,
//! errors and the generator's own cost.

use std::fmt::Write as _;

use corobench_model::{Http2Report, LatencyReport, LoadReport, ScheduleKind, TlsReport};

use crate::units::{bytes, count, latency_us, percentile_or_max, whole_rate};

/// Percentiles shown when the user asks for none.
pub const DEFAULT_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// Renders the summary; `percentiles` are read from the full histograms.
/// `start_asked_as` is how the reader asked for the window's start instant
/// (a command's flag, say), named where the summary tells how far from it
/// the window opened.
#[must_use]
pub fn render(report: &LoadReport, percentiles: &[f64], start_asked_as: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(report));
    let _ = writeln!(
        out,
        "  Requests    {} in {:.2}s   {} req/s   {}/s read",
        count(report.requests),
        report.elapsed_s,
        whole_rate(report.requests_per_s),
        bytes(report.read_bytes_per_s)
    );
    if let Some(line) = window_line(report, start_asked_as) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(open) = report.open_loop {
        schedule_lines(&mut out, &open, report.ready_s);
    }
    if let Some(drain) = report.drain {
        let _ = writeln!(
            out,
            "  Drain       {} answered after the window closed, in {}; {} timed out",
            count(drain.responses),
            latency_us(drain.elapsed_s * 1e6),
            count(drain.timeouts)
        );
    }
    let label = if report.latency_uncorrected.is_some() {
        "Latency*"
    } else {
        "Latency"
    };
    out.push_str(&latency_lines(label, &report.latency, percentiles));
    if let Some(uncorrected) = &report.latency_uncorrected {
        out.push_str(&latency_lines("Uncorrected", uncorrected, percentiles));
        out.push_str("              * from each request's intended send time; uncorrected: from its actual send\n");
    }
    connect_lines(&mut out, report, percentiles);
    if let Some(http2) = &report.http2 {
        let _ = writeln!(out, "{}", http2_line(http2));
    }
    let _ = writeln!(out, "  Status      {}", status_line(report));
    let _ = writeln!(out, "  Errors      {}", errors_line(report));
    if report.reconnects > 0 {
        let _ = writeln!(
            out,
            "  Reconnects  {}: the server closed kept-alive connections, opened again in the window",
            report.reconnects
        );
    }
    let g = &report.generator;
    let _ = writeln!(
        out,
        "  Generator   {:.1}µs CPU/request, {:.0}% of {} core{}, RSS {}",
        g.cpu_us_per_request,
        g.utilization * 100.0,
        g.threads,
        if g.threads == 1 { "" } else { "s" },
        bytes(g.max_rss_bytes as f64)
    );
    if let Some(stamps) = report.kernel_stamps {
        stamps_line(&mut out, &stamps);
    }
    for warning in &report.warnings {
        let _ = writeln!(out, "\n  warning: {warning}");
    }
    out
}

/// With a start instant asked for: when the window opened and how far from
/// that instant.
fn window_line(report: &LoadReport, start_asked_as: &str) -> Option<String> {
    let placement = &report.placement;
    let offset_us = placement.start_offset_us?;
    let opened =
        std::time::UNIX_EPOCH + std::time::Duration::from_micros(placement.window_start_unix_us?);
    let direction = if offset_us >= 0 { "after" } else { "before" };
    Some(format!(
        "  Window      opened {}, {} {direction} {start_asked_as}",
        humantime::format_rfc3339_micros(opened),
        latency_us(offset_us.unsigned_abs() as f64)
    ))
}

fn headline(report: &LoadReport) -> String {
    let schedule = match report.schedule {
        ScheduleKind::Closed => "closed loop".to_string(),
        ScheduleKind::Open { rate_per_s } => {
            format!("open loop at {} req/s", whole_rate(rate_per_s))
        }
    };
    let mut wire = String::new();
    if !report.wire.keepalive {
        wire.push_str(", a new connection per request");
    }
    if report.wire.pipeline != 1 {
        wire.push_str(&format!(
            ", {} pipelined per connection",
            report.wire.pipeline
        ));
    }
    format!(
        "{} {}\n  {} thread{}, {} connection{}, {schedule}{wire}, {} backend",
        report.method,
        report.url,
        report.threads,
        if report.threads == 1 { "" } else { "s" },
        report.connections,
        if report.connections == 1 { "" } else { "s" },
        report.backend
    )
}

fn latency_lines(label: &str, latency: &LatencyReport, percentiles: &[f64]) -> String {
    let s = &latency.summary;
    let mut line = format!(
        "  {label:<11} mean {}  stdev {}  max {}\n             ",
        latency_us(s.mean_us),
        latency_us(s.stdev_us),
        latency_us(s.max_us as f64)
    );
    for &p in percentiles {
        let value = latency.histogram.value_at_percentile_us(p);
        let _ = write!(
            line,
            " {} {} ",
            percentile_or_max(p),
            latency_us(value as f64)
        );
    }
    line.truncate(line.trim_end().len());
    line.push('\n');
    line
}

fn status_line(report: &LoadReport) -> String {
    let shown = nonzero(&report.status.by_class());
    if shown.is_empty() {
        "no complete response".to_string()
    } else {
        shown
    }
}

fn errors_line(report: &LoadReport) -> String {
    let kinds = nonzero(&report.errors.by_kind());
    if kinds.is_empty() {
        "none".to_string()
    } else {
        format!(
            "{} ({:.2}%): {}",
            count(report.errors.total()),
            report.error_rate * 100.0,
            kinds
        )
    }
}

/// `name count` of every count above zero, comma-separated.
fn nonzero(counts: &[(&str, u64)]) -> String {
    let shown: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} {}", count(*n)))
        .collect();
    shown.join(", ")
}

/// How long connects took (with a connection per request, and over TLS),
/// and the TLS session and its handshakes.
fn connect_lines(out: &mut String, report: &LoadReport, percentiles: &[f64]) {
    if let Some(connect) = &report.connect_latency {
        out.push_str(&latency_lines("Connect", connect, percentiles));
        if !report.wire.keepalive {
            let with = if report.tls.is_some() {
                "its connect and handshake"
            } else {
                "its connect"
            };
            let _ = writeln!(
                out,
                "              a connection per request: each latency above includes {with}"
            );
        }
    }
    if let Some(tls) = &report.tls {
        tls_lines(out, tls, report.connect_latency.as_ref());
    }
}

/// What TLS session the server agreed to, and its handshakes in the window.
fn tls_lines(out: &mut String, tls: &TlsReport, connect: Option<&LatencyReport>) {
    let on_off = |on: bool| if on { "on" } else { "off" };
    let agreed: Vec<&str> = [&tls.version, &tls.cipher, &tls.key_exchange]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let _ = writeln!(
        out,
        "  TLS         {}; ALPN {}; certificate {}; resumption {}{}; {}",
        if agreed.is_empty() {
            "no handshake completed".to_owned()
        } else {
            agreed.join(" ")
        },
        tls.alpn.as_deref().unwrap_or("none"),
        if tls.verified {
            "checked"
        } else {
            "not checked"
        },
        on_off(tls.resumption),
        if tls.ktls { "; kTLS" } else { "" },
        tls.provider
    );
    let p = |latency: &LatencyReport, q: f64| {
        latency_us(latency.histogram.value_at_percentile_us(q) as f64)
    };
    let mut line = format!(
        "  Handshakes  {} full, {} resumed in the window",
        count(tls.full_handshakes),
        count(tls.resumed_handshakes)
    );
    if tls.handshakes() > 0 {
        let _ = write!(
            line,
            "; handshake p50 {} p99 {}",
            p(&tls.handshake, 50.0),
            p(&tls.handshake, 99.0)
        );
        if let Some(connect) = connect.filter(|c| c.summary.count > 0) {
            let _ = write!(
                line,
                ", connect p50 {} p99 {}",
                p(connect, 50.0),
                p(connect, 99.0)
            );
        }
    }
    let _ = writeln!(out, "{line}");
}

/// The protocol, the streams asked for and allowed per connection, how
/// many were really in flight, and the server's GOAWAYs.
fn http2_line(http2: &Http2Report) -> String {
    let limit = http2.server_max_concurrent_streams.map_or_else(
        || "no server limit".to_owned(),
        |l| format!("server limit {l}"),
    );
    let background = http2
        .background
        .as_ref()
        .map_or_else(String::new, |b| format!("\n  Background  {}", b.sentence()));
    format!(
        "  HTTP/2      {}; streams per connection {} asked, {} effective ({limit}); in flight \
         mean {:.1}, max {} per connection; {} GOAWAY{background}",
        http2.protocol,
        http2.streams_per_connection,
        http2.streams_effective,
        http2.streams_in_flight_mean,
        http2.streams_in_flight_max,
        count(http2.goaways)
    )
}

/// How the kernel's stamps were used, and how late corobench read them.
/// An open loop's schedule: the rates, how late requests left, the tick,
/// and when the schedule began.
fn schedule_lines(out: &mut String, open: &corobench_model::OpenLoopReport, ready_s: Option<f64>) {
    let tick = open.tick_us.map_or(String::new(), |tick| {
        format!("; tick {}", latency_us(tick as f64))
    });
    let _ = writeln!(
        out,
        "  Schedule    {} req/s requested, {} req/s sent; send lag mean {}, max {}{tick}",
        whole_rate(open.requested_rate_per_s),
        whole_rate(open.achieved_rate_per_s),
        latency_us(open.mean_send_lag_us),
        latency_us(open.max_send_lag_us as f64),
    );
    if let Some(ready_s) = ready_s {
        let _ = writeln!(
            out,
            "              began {} after the start, once every connection was ready",
            latency_us(ready_s * 1e6)
        );
    }
}

fn stamps_line(out: &mut String, stamps: &corobench_model::KernelStamps) {
    let _ = writeln!(
        out,
        "  Stamps      {} responses stamped by the kernel, read {} after on average (max {}){}",
        count(stamps.stamped),
        latency_us(stamps.mean_read_delay_us),
        latency_us(stamps.max_read_delay_us as f64),
        if stamps.send {
            "; requests timed from the kernel's send"
        } else {
            ""
        }
    );
}
