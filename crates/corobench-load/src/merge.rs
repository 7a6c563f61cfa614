//! Exact merging of the load reports of several generators that loaded one
//! server at the same time. It lives with the generator because it is the
//! other way a load report is made: by one generator, or by merging those
//! of several, wherever they ran (`corobench merge`, a trial on hosts, a
//! trial on Kubernetes).
//!
//! Histograms are added bucket by bucket and counts summed, so the merged
//! percentiles are those of every recorded latency, not an average of
//! percentiles. Per-second timelines are placed by the wall clock: a
//! generator's second `i` is the Unix second nearest its window start,
//! plus `i`. Everything that depends on the grouping (rates, CPU, windows,
//! warnings) is computed from the list of generator reports at the bottom,
//! sorted, so that merging is associative and commutative: a merged report
//! can be merged again, and merging one report gives it back unchanged.

mod checks;

use std::collections::BTreeSet;
use std::fmt;

use corobench_model::load::LOAD_REPORT_SCHEMA_VERSION;
use corobench_model::{
    DrainReport, ErrorCounts, GeneratorPart, GeneratorUsage, KernelStamps, LatencyHistogram,
    LatencyReport, LoadReport, LoadWarning, MergeDetail, OpenLoopReport, ScheduleKind,
    SideCounters, StatusCounts, TimelineSecond, WindowPlacement,
};

use crate::timeline::{SecondTotals, TimelineSum};

/// The share of the span any generator measured that all must have
/// measured together; below it, the merged report carries a warning.
pub const MIN_OVERLAP_RATIO: f64 = 0.9;

const US_PER_S: f64 = 1e6;

/// The longest measured window a generator report can have: `corobench
/// load -d` allows a day. A longer one was not written by corobench.
pub const MAX_WINDOW_S: f64 = 24.0 * 3600.0;

/// The longest merged timeline: windows of a day that must overlap span
/// two days at most. Nothing longer is allocated.
const MAX_TIMELINE_S: u64 = 2 * 24 * 3600;

/// One report to merge and where it came from (a file name, for messages
/// and for the per-generator detail).
#[derive(Clone, Copy, Debug)]
pub struct MergeInput<'a> {
    pub source: &'a str,
    pub report: &'a LoadReport,
}

/// Why reports cannot be merged.
#[derive(Clone, Debug, PartialEq)]
pub enum MergeError {
    NoReports,
    /// A report made before corobench recorded when its window was.
    NoWindowStart {
        source: String,
    },
    /// The reports measured different loads.
    Differ {
        what: &'static str,
        first: String,
        first_value: String,
        other: String,
        other_value: String,
    },
    /// No moment was measured by every generator.
    NoOverlap {
        early: String,
        late: String,
        gap_s: f64,
    },
    /// The same generator report twice.
    Duplicate {
        first: String,
        other: String,
    },
    /// One report has a histogram (uncorrected, connect) another lacks.
    MissingHistogram {
        which: &'static str,
        has: String,
        lacks: String,
    },
    /// A figure no generator can have measured (negative, not finite), or
    /// counts that disagree with each other.
    Impossible {
        source: String,
        field: String,
        problem: String,
    },
    /// A sum of counts beyond what a count can hold.
    Overflow {
        what: &'static str,
    },
    /// A size read from a report that no generator can have measured.
    Implausible {
        source: String,
        what: &'static str,
        value: String,
        limit: String,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoReports => f.write_str("no reports to merge: name at least one file"),
            Self::NoWindowStart { source } => write!(
                f,
                "{source} does not say when its measured window began (it was made by an \
                 older corobench); measure again with this version"
            ),
            Self::Differ {
                what,
                first,
                first_value,
                other,
                other_value,
            } => write!(
                f,
                "{other} and {first} differ in their {what} ({other_value} vs {first_value}): \
                 only reports of the same load can be merged"
            ),
            Self::NoOverlap { early, late, gap_s } => write!(
                f,
                "{late} began measuring {gap_s:.3}s after {early} stopped: their windows do \
                 not overlap, so no moment was measured by both; give every generator the \
                 same start instant and duration"
            ),
            Self::Duplicate { first, other } => write!(
                f,
                "{first} and {other} are the same generator report: merging it twice would \
                 count its requests twice"
            ),
            Self::MissingHistogram { which, has, lacks } => write!(
                f,
                "{has} has {which} and {lacks} has none: the reports were not made the \
                 same way"
            ),
            Self::Impossible {
                source,
                field,
                problem,
            } => write!(
                f,
                "{source}: {field} {problem}: no load corobench ran wrote that; merge the \
                 reports as the generators wrote them"
            ),
            Self::Overflow { what } => write!(
                f,
                "the reports' {what} add up to more than a count can hold: they cannot be \
                 the reports of one load"
            ),
            Self::Implausible {
                source,
                what,
                value,
                limit,
            } => write!(
                f,
                "{source}: its {what} is {value}, beyond {limit}: no load corobench ran wrote \
                 that; merge the reports as the generators wrote them"
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// Merges `inputs` into one report: see the module documentation.
///
/// # Errors
/// No input, inputs of different loads, windows that do not overlap, a
/// report twice, or one without its window start.
pub fn merge(inputs: &[MergeInput<'_>]) -> Result<LoadReport, MergeError> {
    let first = inputs.first().ok_or(MergeError::NoReports)?;
    for input in inputs {
        checks::check_report(input.source, input.report)?;
    }
    for other in &inputs[1..] {
        check_same_load(first, other)?;
    }
    let parts = generator_parts(inputs)?;
    let window = CommonWindow::of(&parts)?;
    let totals = Totals::of(inputs)?;
    check_timeline_length(inputs, window.timeline_start_unix_s)?;
    let timeline = merge_timelines(inputs, window.timeline_start_unix_s);
    let mut report = assemble(first.report, parts, &window, totals, timeline);
    report.drain = merge_drains(inputs);
    report.kernel_stamps = merge_stamps(inputs);
    report.ready_s = inputs
        .iter()
        .filter_map(|input| input.report.ready_s)
        .reduce(f64::max);
    report.counters = merge_counters(inputs);
    report.tls = merge_tls(inputs);
    report.http2 = merge_http2(inputs);
    let probes: Option<Vec<f64>> = inputs.iter().map(|i| i.report.probe_mb_per_s).collect();
    report.probe_mb_per_s = probes.map(|p| p.iter().sum::<f64>() / p.len() as f64);
    Ok(report)
}

/// The generators' kernel counters added up, when every one counted;
/// each one's refusals kept (in one order, whatever the reports' order).
fn merge_counters(inputs: &[MergeInput<'_>]) -> Option<SideCounters> {
    let all: Option<Vec<&SideCounters>> =
        inputs.iter().map(|i| i.report.counters.as_ref()).collect();
    let mut merged = all?.into_iter().cloned().reduce(|mut a, b| {
        a.counts = a.counts.plus(b.counts);
        a.missing.extend(b.missing);
        a.responses = a.responses.zip(b.responses).map(|(x, y)| x + y);
        a
    })?;
    merged
        .missing
        .sort_by(|a, b| (a.counter, &a.reason).cmp(&(b.counter, &b.reason)));
    Some(merged)
}

/// The generators' read delays, when every one stamped at the kernel.
fn merge_stamps(inputs: &[MergeInput<'_>]) -> Option<KernelStamps> {
    let all: Option<Vec<KernelStamps>> = inputs.iter().map(|i| i.report.kernel_stamps).collect();
    all?.into_iter().reduce(|a, b| {
        let stamped = a.stamped + b.stamped;
        let sum = a.mean_read_delay_us * a.stamped as f64 + b.mean_read_delay_us * b.stamped as f64;
        KernelStamps {
            stamped,
            mean_read_delay_us: if stamped == 0 {
                0.0
            } else {
                sum / stamped as f64
            },
            max_read_delay_us: a.max_read_delay_us.max(b.max_read_delay_us),
            send: a.send && b.send,
        }
    })
}

/// The generators' TLS handshakes added up (their settings are the same:
/// see [`check_same_load`]).
fn merge_tls(inputs: &[MergeInput<'_>]) -> Option<corobench_model::TlsReport> {
    let mut all = inputs.iter().filter_map(|input| input.report.tls.as_ref());
    let mut merged = all.next()?.clone();
    for other in all {
        merged.add(other);
    }
    Some(merged)
}

/// The generators' HTTP/2 streams together (their settings are the same:
/// see [`check_same_load`]), the in-flight mean weighted by each one's
/// connection-seconds.
fn merge_http2(inputs: &[MergeInput<'_>]) -> Option<corobench_model::Http2Report> {
    let weight = |r: &LoadReport| f64::from(r.connections) * r.elapsed_s;
    let mut all = inputs
        .iter()
        .filter_map(|input| Some((input.report.http2.as_ref()?, weight(input.report))));
    let (first, mut weight_so_far) = all.next()?;
    let mut merged = first.clone();
    for (other, other_weight) in all {
        merged.add(other, (weight_so_far, other_weight));
        weight_so_far += other_weight;
    }
    Some(merged)
}

/// The generators' drains: every answer and timeout, and the longest drain.
fn merge_drains(inputs: &[MergeInput<'_>]) -> Option<DrainReport> {
    inputs
        .iter()
        .filter_map(|input| input.report.drain)
        .reduce(|a, b| DrainReport {
            responses: a.responses + b.responses,
            timeouts: a.timeouts + b.timeouts,
            elapsed_s: a.elapsed_s.max(b.elapsed_s),
        })
}

/// Refuses to merge reports of different URLs, methods, loop kinds or wire modes.
fn check_same_load(first: &MergeInput<'_>, other: &MergeInput<'_>) -> Result<(), MergeError> {
    let (a, b) = (first.report, other.report);
    let facts: [(&'static str, String, String); 6] = [
        ("URL", a.url.clone(), b.url.clone()),
        ("method", a.method.clone(), b.method.clone()),
        (
            "schedule",
            loop_kind(a.schedule).into(),
            loop_kind(b.schedule).into(),
        ),
        ("connection use", wire_words(a), wire_words(b)),
        ("TLS settings", tls_words(a), tls_words(b)),
        ("HTTP version", http_words(a), http_words(b)),
    ];
    for (what, first_value, other_value) in facts {
        if first_value != other_value {
            return Err(MergeError::Differ {
                what,
                first: first.source.to_string(),
                first_value,
                other: other.source.to_string(),
                other_value,
            });
        }
    }
    Ok(())
}

fn loop_kind(schedule: ScheduleKind) -> &'static str {
    match schedule {
        ScheduleKind::Closed => "closed loop",
        ScheduleKind::Open { .. } => "open loop",
    }
}

fn wire_words(report: &LoadReport) -> String {
    let wire = report.wire;
    let reuse = if wire.keepalive {
        "keep-alive"
    } else {
        "a connection per request"
    };
    format!("{reuse}, pipeline {}", wire.pipeline)
}

/// How a report spoke TLS: what must match for its handshakes to add up.
fn tls_words(report: &LoadReport) -> String {
    let Some(tls) = &report.tls else {
        return "cleartext".to_owned();
    };
    let on_off = |on: bool| if on { "on" } else { "off" };
    format!(
        "certificate check {}, resumption {}, kTLS {}",
        on_off(tls.verified),
        on_off(tls.resumption),
        on_off(tls.ktls)
    )
}

/// Which HTTP a report spoke, and with what HTTP/2 settings.
fn http_words(report: &LoadReport) -> String {
    report.http2.as_ref().map_or_else(
        || "HTTP/1.1".to_owned(),
        |http2| format!("HTTP/2 ({}), {}", http2.protocol, http2.settings_words()),
    )
}

/// Every generator report at the bottom of `inputs`, in a fixed order.
fn generator_parts(inputs: &[MergeInput<'_>]) -> Result<Vec<GeneratorPart>, MergeError> {
    let mut parts = Vec::new();
    for input in inputs {
        match &input.report.merged {
            Some(detail) => parts.extend(detail.generators.iter().cloned()),
            None => parts.push(part_of(input)?),
        }
    }
    parts.sort_by(|a, b| part_key(a).cmp(&part_key(b)));
    check_no_duplicates(&parts)?;
    for part in &parts {
        check_window_length(part)?;
    }
    Ok(parts)
}

/// A window of a negative, infinite or more than a day's length is no
/// generator's: refused before any size is derived from it.
fn check_window_length(part: &GeneratorPart) -> Result<(), MergeError> {
    if (0.0..=MAX_WINDOW_S).contains(&part.elapsed_s) {
        return Ok(());
    }
    Err(MergeError::Implausible {
        source: part.source.clone(),
        what: "measured window (elapsed_s)",
        value: format!("{}s", part.elapsed_s),
        limit: format!("{MAX_WINDOW_S}s"),
    })
}

/// Refuses inputs whose timelines, placed on the wall clock, would need a
/// merged timeline longer than [`MAX_TIMELINE_S`].
fn check_timeline_length(
    inputs: &[MergeInput<'_>],
    timeline_start_unix_s: u64,
) -> Result<(), MergeError> {
    for input in inputs {
        let first_second = timeline_start(input.report).saturating_sub(timeline_start_unix_s);
        let needed = first_second.saturating_add(input.report.timeline.len() as u64);
        if needed > MAX_TIMELINE_S {
            return Err(MergeError::Implausible {
                source: input.source.to_string(),
                what: "timeline, placed by its window start",
                value: format!("{needed} seconds after the earliest start"),
                limit: format!("{MAX_TIMELINE_S} seconds"),
            });
        }
    }
    Ok(())
}

fn part_key(part: &GeneratorPart) -> (u64, Option<&str>, &str, u64) {
    (
        window_start(part),
        part.placement.host.as_deref(),
        part.source.as_str(),
        part.requests,
    )
}

fn window_start(part: &GeneratorPart) -> u64 {
    part.placement.window_start_unix_us.unwrap_or(0)
}

/// A generator's own report, condensed to its share of a merge.
fn part_of(input: &MergeInput<'_>) -> Result<GeneratorPart, MergeError> {
    let report = input.report;
    if report.placement.window_start_unix_us.is_none() {
        return Err(MergeError::NoWindowStart {
            source: input.source.to_string(),
        });
    }
    Ok(GeneratorPart {
        source: input.source.to_string(),
        placement: report.placement.clone(),
        backend: report.backend.clone(),
        elapsed_s: report.elapsed_s,
        threads: report.threads,
        connections: report.connections,
        requests: report.requests,
        requests_per_s: report.requests_per_s,
        read_bytes_per_s: report.read_bytes_per_s,
        errors: report.errors.total(),
        error_rate: report.error_rate,
        latency: report.latency.summary.clone(),
        open_loop: report.open_loop,
        generator: report.generator,
        warnings: report.warnings.clone(),
    })
}

/// Two parts equal in all but their file are one report read twice.
fn check_no_duplicates(parts: &[GeneratorPart]) -> Result<(), MergeError> {
    for (i, a) in parts.iter().enumerate() {
        for b in &parts[i + 1..] {
            let renamed = GeneratorPart {
                source: a.source.clone(),
                ..b.clone()
            };
            if renamed == *a {
                return Err(MergeError::Duplicate {
                    first: a.source.clone(),
                    other: b.source.clone(),
                });
            }
        }
    }
    Ok(())
}

/// The time every generator measured, and the span any of them did.
#[derive(Debug)]
struct CommonWindow {
    start_us: u64,
    elapsed_s: f64,
    span_s: f64,
    /// The Unix second merged timeline second 0 begins at.
    timeline_start_unix_s: u64,
}

impl CommonWindow {
    fn of(parts: &[GeneratorPart]) -> Result<Self, MergeError> {
        let start_us = parts.iter().map(window_start).max().unwrap_or(0);
        let earliest_us = parts.iter().map(window_start).min().unwrap_or(0);
        // Each window, cut to begin at the latest start; subtracting from
        // elapsed_s keeps a single report's length as it was.
        let lead_s = |p: &GeneratorPart| (start_us - window_start(p)) as f64 / US_PER_S;
        let end_s =
            |p: &GeneratorPart| (window_start(p) - earliest_us) as f64 / US_PER_S + p.elapsed_s;
        let elapsed_s = parts
            .iter()
            .map(|p| p.elapsed_s - lead_s(p))
            .fold(f64::INFINITY, f64::min);
        if parts.len() > 1 && elapsed_s <= 0.0 {
            return Err(no_overlap(parts, start_us, -elapsed_s));
        }
        Ok(Self {
            start_us,
            elapsed_s: elapsed_s.max(0.0),
            span_s: parts.iter().map(end_s).fold(0.0, f64::max),
            timeline_start_unix_s: parts
                .iter()
                .map(|p| nearest_second(window_start(p)))
                .min()
                .unwrap_or(0),
        })
    }
}

fn no_overlap(parts: &[GeneratorPart], latest_start_us: u64, gap_s: f64) -> MergeError {
    let end_us = |p: &GeneratorPart| window_start(p) as f64 + p.elapsed_s * US_PER_S;
    let early = parts
        .iter()
        .min_by(|a, b| end_us(a).total_cmp(&end_us(b)))
        .map_or_else(String::new, |p| p.source.clone());
    let late = parts
        .iter()
        .find(|p| window_start(p) == latest_start_us)
        .map_or_else(String::new, |p| p.source.clone());
    MergeError::NoOverlap { early, late, gap_s }
}

/// The Unix second nearest `unix_us`.
fn nearest_second(unix_us: u64) -> u64 {
    unix_us.saturating_add(500_000) / 1_000_000
}

/// What adds up exactly, whatever the grouping: histograms and counts.
#[derive(Debug)]
struct Totals {
    latency: LatencyHistogram,
    uncorrected: Option<LatencyHistogram>,
    connect: Option<LatencyHistogram>,
    status: StatusCounts,
    errors: ErrorCounts,
    requests: u64,
    bytes_read: u64,
    bytes_written: u64,
    reconnects: u64,
    warmup_s: f64,
}

impl Totals {
    fn of(inputs: &[MergeInput<'_>]) -> Result<Self, MergeError> {
        let mut totals = Self {
            latency: LatencyHistogram::new(),
            uncorrected: optional_sum(inputs, "an uncorrected latency histogram", |r| {
                r.latency_uncorrected.as_ref()
            })?,
            connect: optional_sum(inputs, "a connect latency histogram", |r| {
                r.connect_latency.as_ref()
            })?,
            status: StatusCounts::default(),
            errors: ErrorCounts::default(),
            requests: 0,
            bytes_read: 0,
            bytes_written: 0,
            reconnects: 0,
            warmup_s: 0.0,
        };
        let add = |total: u64, more: u64, what: &'static str| {
            total.checked_add(more).ok_or(MergeError::Overflow { what })
        };
        let mut errors = 0_u64;
        for input in inputs {
            let report = input.report;
            let report_errors = checks::error_total(report).unwrap_or(u64::MAX);
            errors = add(errors, report_errors, "errors")?;
            totals.latency.add(&report.latency.histogram);
            totals.status.add(&report.status);
            totals.errors.add(&report.errors);
            totals.requests = add(totals.requests, report.requests, "requests")?;
            totals.bytes_read = add(totals.bytes_read, report.bytes_read, "bytes read")?;
            totals.bytes_written =
                add(totals.bytes_written, report.bytes_written, "bytes written")?;
            totals.reconnects = add(totals.reconnects, report.reconnects, "reconnects")?;
            totals.warmup_s = totals.warmup_s.max(report.warmup_s);
        }
        // Each class adds up to no more than the requests, and each kind of
        // error to no more than the errors: neither wraps.
        Ok(totals)
    }
}

/// The sum of a histogram every input has, or `None` if none has it.
fn optional_sum(
    inputs: &[MergeInput<'_>],
    which: &'static str,
    histogram: impl Fn(&LoadReport) -> Option<&LatencyReport>,
) -> Result<Option<LatencyHistogram>, MergeError> {
    let has = inputs.iter().find(|i| histogram(i.report).is_some());
    let lacks = inputs.iter().find(|i| histogram(i.report).is_none());
    match (has, lacks) {
        (None, _) => Ok(None),
        (Some(has), Some(lacks)) => Err(MergeError::MissingHistogram {
            which,
            has: has.source.to_string(),
            lacks: lacks.source.to_string(),
        }),
        (Some(_), None) => {
            let mut sum = LatencyHistogram::new();
            for input in inputs {
                if let Some(part) = histogram(input.report) {
                    sum.add(&part.histogram);
                }
            }
            Ok(Some(sum))
        }
    }
}

/// Adds the inputs' timelines second by second, each placed by its start
/// on the wall clock.
fn merge_timelines(inputs: &[MergeInput<'_>], timeline_start_unix_s: u64) -> Vec<TimelineSecond> {
    let mut sum = TimelineSum::default();
    for input in inputs {
        let first_second = timeline_start(input.report).saturating_sub(timeline_start_unix_s);
        let first = usize::try_from(first_second).unwrap_or(usize::MAX);
        sum.add(
            first,
            input.report.timeline.iter().map(SecondTotals::of_row),
        );
    }
    sum.rows()
}

/// The Unix second a report's timeline second 0 begins at.
fn timeline_start(report: &LoadReport) -> u64 {
    report.merged.as_ref().map_or_else(
        || nearest_second(report.placement.window_start_unix_us.unwrap_or(0)),
        |detail| detail.timeline_start_unix_s,
    )
}

fn assemble(
    first: &LoadReport,
    parts: Vec<GeneratorPart>,
    window: &CommonWindow,
    totals: Totals,
    timeline: Vec<TimelineSecond>,
) -> LoadReport {
    let open_loop = merge_open_loop(&parts);
    let generator = merge_usage(&parts, totals.requests);
    let mut report = LoadReport {
        schema_version: LOAD_REPORT_SCHEMA_VERSION,
        url: first.url.clone(),
        method: first.method.clone(),
        backend: backends(&parts),
        placement: placement(&parts, window),
        threads: parts.iter().map(|p| p.threads).sum(),
        connections: parts.iter().map(|p| p.connections).sum(),
        schedule: match (first.schedule, open_loop) {
            (ScheduleKind::Open { .. }, Some(open)) => ScheduleKind::Open {
                rate_per_s: open.requested_rate_per_s,
            },
            (schedule, _) => schedule,
        },
        wire: first.wire,
        warmup_s: totals.warmup_s,
        elapsed_s: window.elapsed_s,
        requests: totals.requests,
        requests_per_s: sum(&parts, |p| p.requests_per_s),
        bytes_read: totals.bytes_read,
        bytes_written: totals.bytes_written,
        read_bytes_per_s: sum(&parts, |p| p.read_bytes_per_s),
        status: totals.status,
        errors: totals.errors,
        error_rate: totals.errors.rate(totals.requests),
        latency: totals.latency.report(),
        latency_uncorrected: totals.uncorrected.map(|h| h.report()),
        open_loop,
        connect_latency: totals.connect.map(|h| h.report()),
        reconnects: totals.reconnects,
        generator,
        drain: None,
        ready_s: None,
        kernel_stamps: None,
        timeline,
        warnings: Vec::new(),
        merged: None,
        counters: None,
        probe_mb_per_s: None,
        tls: None,
        http2: None,
    };
    report.warnings = warnings(&report, &parts, window);
    if parts.len() > 1 {
        report.merged = Some(MergeDetail {
            timeline_start_unix_s: window.timeline_start_unix_s,
            generators: parts,
        });
    }
    report
}

/// Adds `value` over the parts in their fixed order (a single part's value
/// comes back as it was).
fn sum(parts: &[GeneratorPart], value: impl Fn(&GeneratorPart) -> f64) -> f64 {
    parts.iter().map(value).reduce(|a, b| a + b).unwrap_or(0.0)
}

fn backends(parts: &[GeneratorPart]) -> String {
    let names: BTreeSet<&str> = parts.iter().map(|p| p.backend.as_str()).collect();
    names.into_iter().collect::<Vec<_>>().join(",")
}

/// The merged window: when all generators measured; host and `--start-at`
/// where they all agree.
fn placement(parts: &[GeneratorPart], window: &CommonWindow) -> WindowPlacement {
    let start_at_unix_us = common(parts, |p| p.placement.start_at_unix_us).flatten();
    WindowPlacement {
        host: common(parts, |p| p.placement.host.clone()).flatten(),
        window_start_unix_us: Some(window.start_us),
        start_at_unix_us,
        start_offset_us: start_at_unix_us.map(|at| WindowPlacement::offset_us(window.start_us, at)),
    }
}

/// The value every part has, if they agree.
fn common<T: PartialEq>(parts: &[GeneratorPart], value: impl Fn(&GeneratorPart) -> T) -> Option<T> {
    let first = value(parts.first()?);
    parts[1..]
        .iter()
        .all(|p| value(p) == first)
        .then_some(first)
}

fn merge_usage(parts: &[GeneratorPart], requests: u64) -> GeneratorUsage {
    GeneratorUsage::from_cpu(
        parts.iter().map(|p| p.generator.threads).sum(),
        (
            sum(parts, |p| p.generator.cpu_user_s),
            sum(parts, |p| p.generator.cpu_system_s),
        ),
        sum(parts, |p| p.elapsed_s * f64::from(p.generator.threads)),
        requests,
        parts
            .iter()
            .map(|p| p.generator.max_rss_bytes)
            .max()
            .unwrap_or(0),
    )
}

fn merge_open_loop(parts: &[GeneratorPart]) -> Option<OpenLoopReport> {
    let open: Vec<OpenLoopReport> = parts.iter().filter_map(|p| p.open_loop).collect();
    if open.len() <= 1 {
        return open.first().copied();
    }
    let sent: u64 = open.iter().map(|o| o.sent).sum();
    let lag_sum_us: f64 = open
        .iter()
        .map(|o| o.mean_send_lag_us * o.sent as f64)
        .sum();
    Some(OpenLoopReport {
        requested_rate_per_s: open.iter().map(|o| o.requested_rate_per_s).sum(),
        achieved_rate_per_s: open.iter().map(|o| o.achieved_rate_per_s).sum(),
        scheduled: open.iter().map(|o| o.scheduled).sum(),
        sent,
        mean_send_lag_us: if sent == 0 {
            0.0
        } else {
            lag_sum_us / sent as f64
        },
        max_send_lag_us: open.iter().map(|o| o.max_send_lag_us).max().unwrap_or(0),
        tick_us: open.iter().filter_map(|o| o.tick_us).max(),
    })
}

/// The generators' warnings, each kind once with the merged figures, and
/// whether their windows overlapped enough; in the order a single
/// generator's report lists them.
fn warnings(
    report: &LoadReport,
    parts: &[GeneratorPart],
    window: &CommonWindow,
) -> Vec<LoadWarning> {
    let all = || parts.iter().flat_map(|p| p.warnings.iter());
    let mut merged = Vec::new();
    let bound = all().filter_map(|w| match w {
        LoadWarning::GeneratorBound { utilization } => Some(*utilization),
        _ => None,
    });
    if let Some(utilization) = bound.reduce(f64::max) {
        merged.push(LoadWarning::GeneratorBound { utilization });
    }
    let missed = all().any(|w| matches!(w, LoadWarning::ScheduleMissed { .. }));
    if let (true, Some(open)) = (missed, report.open_loop) {
        merged.push(LoadWarning::ScheduleMissed {
            requested_rate_per_s: open.requested_rate_per_s,
            achieved_rate_per_s: open.achieved_rate_per_s,
        });
    }
    let lag = all().filter_map(|w| match w {
        LoadWarning::ScheduleNotKept {
            max_send_lag_us,
            bound_us,
        } => Some((*max_send_lag_us, *bound_us)),
        _ => None,
    });
    if let Some((max_send_lag_us, bound_us)) = lag.reduce(|a, b| (a.0.max(b.0), a.1)) {
        merged.push(LoadWarning::ScheduleNotKept {
            max_send_lag_us,
            bound_us,
        });
    }
    let ports = all().filter_map(|w| match w {
        LoadWarning::PortsExhausted { failed_connects } => Some(*failed_connects),
        _ => None,
    });
    if let Some(failed_connects) = ports.reduce(|a, b| a + b) {
        merged.push(LoadWarning::PortsExhausted { failed_connects });
    }
    let fds = all().filter_map(|w| match w {
        LoadWarning::FdExhausted { limit } => Some(*limit),
        _ => None,
    });
    if let Some(limit) = fds.min() {
        merged.push(LoadWarning::FdExhausted { limit });
    }
    let total = report.errors.total();
    if total > 0 {
        merged.push(LoadWarning::Errors {
            total,
            error_rate: report.error_rate,
        });
    }
    let tls_answers = all().filter_map(|w| match w {
        LoadWarning::PortSpeaksTls { answers } => Some(*answers),
        _ => None,
    });
    if let Some(answers) = tls_answers.reduce(|a, b| a + b) {
        merged.push(LoadWarning::PortSpeaksTls { answers });
    }
    let http1_answers = all().filter_map(|w| match w {
        LoadWarning::SpeaksHttp1 { answers } => Some(*answers),
        _ => None,
    });
    if let Some(answers) = http1_answers.reduce(|a, b| a + b) {
        merged.push(LoadWarning::SpeaksHttp1 { answers });
    }
    let background = all().filter_map(|w| match w {
        LoadWarning::BackgroundUnanswered { failed } => Some(*failed),
        _ => None,
    });
    if let Some(failed) = background.reduce(|a, b| a + b) {
        merged.push(LoadWarning::BackgroundUnanswered { failed });
    }
    if parts.len() > 1 && window.elapsed_s < MIN_OVERLAP_RATIO * window.span_s {
        merged.push(LoadWarning::PartialOverlap {
            common_s: window.elapsed_s,
            span_s: window.span_s,
        });
    }
    merged
}
