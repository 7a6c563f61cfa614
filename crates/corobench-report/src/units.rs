//! Numbers for people: every figure with its unit, scaled so that about
//! three significant digits show (`31.23k`, `1.24ms`, `11.4MiB`, `98%`).

use corobench_model::{Metric, MetricSummary, MetricUnit};

/// A metric's value with its unit, e.g. `31.23k` req/s, `812µs`, `11.4MiB`.
#[must_use]
pub fn value(metric: Metric, v: f64) -> String {
    // Costs per request are small numbers whose heading names the unit
    // (`user µs/req`): shown with three significant digits, bare.
    if let Metric::PerRequest(_) = metric {
        return per_request(v);
    }
    match metric.unit() {
        MetricUnit::PerSecond => si(v),
        MetricUnit::Microseconds => latency_us(v),
        MetricUnit::PercentOfCore => cpu_pct(v),
        MetricUnit::Bytes => bytes(v),
        MetricUnit::Fraction => fraction_pct(v),
        // Counts (requests, errors, dials) read best as whole numbers.
        MetricUnit::Reported if v.fract() == 0.0 && v.abs() < 1e6 => thousands(v),
        MetricUnit::Reported => si(v),
        MetricUnit::PerRequest => per_request(v),
    }
}

/// A median with its interval as every format writes it: `31.23k ± 2%`;
/// `31.23k (n<6)` when too few trials bound the interval; and, where a
/// relative spread means nothing (a median of 0 with an interval above
/// it), the interval itself: `0.00% [0.00%, 0.02%]`.
#[must_use]
pub fn summary(s: &MetricSummary, show: impl Fn(f64) -> String) -> String {
    let center = show(s.median);
    match (s.ci_lo, s.ci_hi) {
        (Some(lo), Some(hi)) if s.ci_text == "?" => {
            format!("{center} [{}, {}]", show(lo), show(hi))
        }
        (Some(_), Some(_)) => format!("{center} ± {}", s.ci_text),
        _ => format!("{center} ({})", s.ci_text),
    }
}

/// A count per request with three significant digits, however small:
/// `2.01`, `0.0312`, `153`, `1.24k`.
#[must_use]
pub fn per_request(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || a == 0.0 || !a.is_finite() {
        return si3(v);
    }
    // Digits after the point so that three significant digits show.
    let magnitude = a.log10().floor() as i32;
    let decimals = usize::try_from(2 - magnitude).unwrap_or(0);
    format!("{v:.decimals$}")
}

/// A decimal number with an SI prefix and four significant digits:
/// `812.0`, `31.23k`, `1.235M`.
#[must_use]
pub fn si(v: f64) -> String {
    let (scaled, prefix) = decimal_prefix(v);
    format!("{}{prefix}", four_digits(scaled))
}

/// `v` scaled below 1000 with its SI prefix.
fn decimal_prefix(v: f64) -> (f64, &'static str) {
    match v.abs() {
        a if a >= 1e9 => (v / 1e9, "G"),
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    }
}

/// `n` bytes scaled below 1024 with its binary prefix (`None` below 1 KiB).
fn binary_prefix(n: f64) -> (f64, Option<&'static str>) {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024.0 {
        return (n, None);
    }
    let mut scaled = n / 1024.0;
    let mut unit = 0;
    while scaled >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    (scaled, Some(UNITS[unit]))
}

/// Like [`si`] with three significant digits, for compact ranges: `16.8k`.
#[must_use]
pub fn si3(v: f64) -> String {
    let (scaled, prefix) = decimal_prefix(v);
    let a = scaled.abs();
    let digits = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else {
        2
    };
    format!("{scaled:.digits$}{prefix}")
}

/// `scaled` (below 1000 in magnitude) with four significant digits.
fn four_digits(scaled: f64) -> String {
    let a = scaled.abs();
    if a >= 100.0 {
        format!("{scaled:.1}")
    } else if a >= 10.0 {
        format!("{scaled:.2}")
    } else {
        format!("{scaled:.3}")
    }
}

/// A whole number with thousands separators: `1,500`.
#[must_use]
pub fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 && digits != "0" {
        out.insert(0, '-');
    }
    out
}

/// A number with at most three decimals and no trailing zeros: `0.6`, `1.5`, `60`.
#[must_use]
pub fn trimmed(v: f64) -> String {
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// An axis tick: round numbers stay short (`500`, `1k`, `1.5k`, `60k`).
#[must_use]
pub fn tick(metric: Metric, v: f64) -> String {
    match metric.unit() {
        MetricUnit::PerSecond => tick_si(v),
        MetricUnit::Microseconds => tick_latency_us(v),
        MetricUnit::PercentOfCore => format!("{}%", trimmed(v)),
        MetricUnit::Bytes => tick_bytes(v),
        MetricUnit::Fraction => format!("{}%", trimmed(v * 100.0)),
        MetricUnit::Reported | MetricUnit::PerRequest => tick_si(v),
    }
}

/// `500`, `1k`, `1.5k`, `2M`.
#[must_use]
pub fn tick_si(v: f64) -> String {
    let (scaled, prefix) = decimal_prefix(v);
    format!("{}{prefix}", trimmed(scaled))
}

/// `200µs`, `1.5ms`, `20ms`, `2s`.
#[must_use]
pub fn tick_latency_us(us: f64) -> String {
    if us < 1_000.0 {
        format!("{}µs", trimmed(us))
    } else if us < 1_000_000.0 {
        format!("{}ms", trimmed(us / 1e3))
    } else {
        format!("{}s", trimmed(us / 1e6))
    }
}

/// `512B`, `10KiB`, `15MiB`.
#[must_use]
pub fn tick_bytes(n: f64) -> String {
    let (scaled, unit) = binary_prefix(n);
    format!("{}{}", trimmed(scaled), unit.unwrap_or("B"))
}

/// Microseconds as `41µs`, `812µs`, `1.24ms`, `12.3ms`, `1.05s`.
#[must_use]
pub fn latency_us(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0}µs")
    } else if us < 10_000.0 {
        format!("{:.2}ms", us / 1e3)
    } else if us < 1_000_000.0 {
        format!("{:.1}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// Bytes with binary prefixes: `512B`, `4.2KiB`, `11.4MiB`, `1.02GiB`.
#[must_use]
pub fn bytes(n: f64) -> String {
    match binary_prefix(n) {
        (n, None) => format!("{n:.0}B"),
        (scaled, Some(unit)) if scaled >= 100.0 => format!("{scaled:.0}{unit}"),
        (scaled, Some(unit)) => format!("{scaled:.1}{unit}"),
    }
}

/// CPU in percent of one core: `98%`, `4.5%`, `0%`.
#[must_use]
pub fn cpu_pct(pct: f64) -> String {
    if pct >= 10.0 || pct == 0.0 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// A fraction as a percentage with two decimals: `0.00%`, `1.25%`.
#[must_use]
pub fn fraction_pct(fraction: f64) -> String {
    format!("{:.2}%", fraction * 100.0)
}

/// A confidence level or a fraction as a whole percentage: `95%`.
#[must_use]
pub fn whole_pct(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

/// A percentile as a label: `p50`, `p99.9`, `p99.99`.
#[must_use]
pub fn percentile_label(percentile: f64) -> String {
    let text = format!("{percentile:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("p{text}")
}

/// A percentile as a label, `max` for 100: `p50`, `p99.9`, `max`.
#[must_use]
pub fn percentile_or_max(percentile: f64) -> String {
    if (percentile - 100.0).abs() < f64::EPSILON {
        "max".to_string()
    } else {
        percentile_label(percentile)
    }
}

/// A counter with separators: `1234567` → `1,234,567`.
#[must_use]
pub fn count(n: u64) -> String {
    thousands(n as f64)
}

/// A rate rounded to a whole number with separators: `93,120`.
#[must_use]
pub fn whole_rate(per_s: f64) -> String {
    thousands(per_s.round().max(0.0))
}

/// A date as UTC `2026-11-22 06:33:01` from Unix milliseconds.
#[must_use]
pub fn utc(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Superscript digits for footnote markers: 1 → `¹`, 12 → `¹²`.
#[must_use]
pub fn superscript(n: usize) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string()
        .chars()
        .map(|c| DIGITS[c.to_digit(10).unwrap_or(0) as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_keep_four_significant_digits() {
        assert_eq!(si(812.0), "812.0");
        assert_eq!(si(31_234.0), "31.23k");
        assert_eq!(si(1_234_567.0), "1.235M");
        assert_eq!(si(5.0), "5.000");
        assert_eq!(si3(16_784.0), "16.8k");
        assert_eq!(si3(692.3), "692");
        assert_eq!(thousands(1500.0), "1,500");
        assert_eq!(per_request(2.013), "2.01");
        assert_eq!(per_request(0.03125), "0.0312");
        assert_eq!(per_request(153.4), "153");
        assert_eq!(per_request(1240.0), "1.24k");
        assert_eq!(per_request(0.0), "0.00");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(-1_234_567.0), "-1,234,567");
    }

    #[test]
    fn counters_rates_and_percentile_labels() {
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(whole_rate(93_119.6), "93,120");
        assert_eq!(percentile_or_max(99.9), "p99.9");
        assert_eq!(percentile_or_max(100.0), "max");
    }

    #[test]
    fn latencies_sizes_and_percentages() {
        assert_eq!(latency_us(41.0), "41µs");
        assert_eq!(latency_us(1240.0), "1.24ms");
        assert_eq!(latency_us(12_345.0), "12.3ms");
        assert_eq!(latency_us(1_050_000.0), "1.05s");
        assert_eq!(bytes(512.0), "512B");
        assert_eq!(bytes(11.4 * 1024.0 * 1024.0), "11.4MiB");
        assert_eq!(bytes(300.0 * 1024.0 * 1024.0), "300MiB");
        assert_eq!(cpu_pct(98.4), "98%");
        assert_eq!(cpu_pct(4.54), "4.5%");
        assert_eq!(fraction_pct(0.0125), "1.25%");
        assert_eq!(value(Metric::ErrorRate, 0.0), "0.00%");
    }

    #[test]
    fn ticks_stay_short() {
        assert_eq!(tick_si(500.0), "500");
        assert_eq!(tick_si(1500.0), "1.5k");
        assert_eq!(tick_si(60_000.0), "60k");
        assert_eq!(tick_latency_us(5_000.0), "5ms");
        assert_eq!(tick_latency_us(200.0), "200µs");
        assert_eq!(trimmed(0.600_000_000_000_000_1), "0.6");
        assert_eq!(tick(Metric::PeakRssBytes, 15.0 * 1024.0 * 1024.0), "15MiB");
        assert_eq!(tick(Metric::ErrorRate, 0.005), "0.5%");
    }

    #[test]
    fn a_summary_says_n_when_open_and_shows_the_interval_when_a_spread_means_nothing() {
        let summary = |median: f64, lo: Option<f64>, hi: Option<f64>, text: &str| MetricSummary {
            n: 6,
            median,
            ci_lo: lo,
            ci_hi: hi,
            ci_confidence: 0.95,
            ci_text: text.to_owned(),
            min: 0.0,
            max: 0.0,
        };
        let rate = |v: f64| value(Metric::RequestsPerS, v);
        let s = summary(31_230.0, Some(30_000.0), Some(32_000.0), "4%");
        assert_eq!(super::summary(&s, rate), "31.23k ± 4%");
        let open = summary(31_230.0, None, Some(32_000.0), "n<6");
        assert_eq!(super::summary(&open, rate), "31.23k (n<6)");
        let errors = |v: f64| value(Metric::ErrorRate, v);
        let zero = summary(0.0, Some(0.0), Some(0.0002), "?");
        assert_eq!(super::summary(&zero, errors), "0.00% [0.00%, 0.02%]");
    }

    #[test]
    fn labels_and_markers() {
        assert_eq!(percentile_label(99.9), "p99.9");
        assert_eq!(percentile_label(50.0), "p50");
        assert_eq!(superscript(12), "¹²");
        assert_eq!(whole_pct(0.95), "95%");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(1_700_000_000_000), "2023-11-14 22:13:20");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00");
    }
}
