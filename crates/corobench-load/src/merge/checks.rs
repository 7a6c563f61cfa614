//! What a load report must hold before it is merged: figures a generator
//! can have measured (finite, not negative, error rates within 0…1) and
//! counts that agree with each other (every complete response has a status
//! class and a latency). A report that breaks one was not written by
//! `corobench load` as it stands, and merging it would spread the damage
//! into every merged figure.

use corobench_model::LoadReport;

use super::MergeError;

/// Refuses `report` (read from `source`) when a figure is impossible,
/// naming the field.
pub(super) fn check_report(source: &str, report: &LoadReport) -> Result<(), MergeError> {
    let impossible = |field: &str, problem: String| MergeError::Impossible {
        source: source.to_owned(),
        field: field.to_owned(),
        problem,
    };
    for (field, value) in figures(report) {
        if !value.is_finite() || value < 0.0 {
            return Err(impossible(
                field,
                format!("is {value}, not a finite figure ≥ 0"),
            ));
        }
    }
    if report.error_rate > 1.0 {
        return Err(impossible(
            "error_rate",
            format!("is {}, above 1 (every request an error)", report.error_rate),
        ));
    }
    let classes = report.status.total();
    if classes != report.requests {
        return Err(impossible(
            "requests",
            format!(
                "is {}, but the status classes (status) add up to {classes}",
                report.requests
            ),
        ));
    }
    let recorded = report.latency.histogram.count();
    if recorded != report.requests {
        return Err(impossible(
            "requests",
            format!(
                "is {}, but the latency histogram (latency.hdr_v2_base64) holds {recorded} \
                 latencies",
                report.requests
            ),
        ));
    }
    let Some(error_total) = error_total(report) else {
        return Err(impossible(
            "errors",
            "add up to more than a count can hold".to_owned(),
        ));
    };
    check_timeline(report, error_total).map_err(|problem| impossible("timeline", problem))?;
    let errors = &report.errors;
    if errors.status_4xx != report.status.client_error
        || errors.status_5xx != report.status.server_error
    {
        return Err(impossible(
            "errors",
            format!(
                "count {} 4xx and {} 5xx answers, but status counts {} and {}",
                errors.status_4xx,
                errors.status_5xx,
                report.status.client_error,
                report.status.server_error
            ),
        ));
    }
    Ok(())
}

/// Every error of every kind, or `None` when they add up beyond a count.
pub(super) fn error_total(report: &LoadReport) -> Option<u64> {
    report
        .errors
        .by_kind()
        .iter()
        .try_fold(0_u64, |total, (_, count)| total.checked_add(*count))
}

/// The timeline holds the window's answers, errors and bytes, second by
/// second: its rows add up to the report's totals (the bytes and errors of
/// a drain may fall outside it, never more).
fn check_timeline(report: &LoadReport, error_total: u64) -> Result<(), String> {
    let sum = |value: fn(&corobench_model::TimelineSecond) -> u64| {
        report
            .timeline
            .iter()
            .try_fold(0_u64, |total, row| total.checked_add(value(row)))
    };
    let requests = sum(|row| row.requests);
    if requests.is_some_and(|r| r == report.requests) || report.timeline.is_empty() {
        let errors = sum(|row| row.errors).is_some_and(|e| e <= error_total);
        let bytes = sum(|row| row.bytes_read).is_some_and(|b| b <= report.bytes_read);
        if errors && bytes {
            return Ok(());
        }
    }
    Err(format!(
        "does not add up to the report's requests ({}), errors ({error_total}) and bytes \
         read ({})",
        report.requests, report.bytes_read
    ))
}

/// Every figure of `report` that is a measured quantity, by its JSON name.
fn figures(report: &LoadReport) -> Vec<(&'static str, f64)> {
    let generator = &report.generator;
    let mut figures = vec![
        ("warmup_s", report.warmup_s),
        ("elapsed_s", report.elapsed_s),
        ("requests_per_s", report.requests_per_s),
        ("read_bytes_per_s", report.read_bytes_per_s),
        ("error_rate", report.error_rate),
        ("latency.mean_us", report.latency.summary.mean_us),
        ("latency.stdev_us", report.latency.summary.stdev_us),
        ("generator.cpu_user_s", generator.cpu_user_s),
        ("generator.cpu_system_s", generator.cpu_system_s),
        ("generator.cpu_us_per_request", generator.cpu_us_per_request),
        ("generator.utilization", generator.utilization),
    ];
    if let Some(open) = report.open_loop {
        figures.extend([
            ("open_loop.requested_rate_per_s", open.requested_rate_per_s),
            ("open_loop.achieved_rate_per_s", open.achieved_rate_per_s),
            ("open_loop.mean_send_lag_us", open.mean_send_lag_us),
        ]);
    }
    if let Some(drain) = report.drain {
        figures.push(("drain.elapsed_s", drain.elapsed_s));
    }
    if let Some(ready) = report.ready_s {
        figures.push(("ready_s", ready));
    }
    if let Some(probe) = report.probe_mb_per_s {
        figures.push(("probe_mb_per_s", probe));
    }
    figures.extend(
        report
            .timeline
            .iter()
            .map(|second| ("timeline.mean_latency_us", second.mean_latency_us)),
    );
    figures
}
