//! Number formatting for people: thousands separators, latencies and sizes
//! with units chosen so that three significant digits show.

/// `1234567` → `1,234,567`.
#[must_use]
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate rounded to a whole number with separators: `93,120`.
#[must_use]
pub fn rate(per_s: f64) -> String {
    thousands(per_s.round().max(0.0) as u64)
}

/// Microseconds as `812µs`, `1.24ms`, `12.3ms`, `1.05s`.
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

/// Bytes as `512B`, `4.2KiB`, `11.4MiB`, `1.02GiB`.
#[must_use]
pub fn bytes(n: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024.0 {
        return format!("{n:.0}B");
    }
    let mut value = n / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1}{}", UNITS[unit])
}

/// A percentile label: `p50`, `p99.9`, `max` for 100.
#[must_use]
pub fn percentile_label(p: f64) -> String {
    if (p - 100.0).abs() < f64::EPSILON {
        "max".to_string()
    } else {
        format!("p{}", trim_float(p))
    }
}

fn trim_float(p: f64) -> String {
    let text = format!("{p:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(latency_us(812.4), "812µs");
        assert_eq!(latency_us(1240.0), "1.24ms");
        assert_eq!(latency_us(12_345.0), "12.3ms");
        assert_eq!(latency_us(1_050_000.0), "1.05s");
        assert_eq!(bytes(4300.0), "4.2KiB");
        assert_eq!(percentile_label(99.9), "p99.9");
        assert_eq!(percentile_label(50.0), "p50");
        assert_eq!(percentile_label(100.0), "max");
    }
}
