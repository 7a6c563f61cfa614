//! Parsers for command-line values; each error says what a valid value looks like.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use corobench_target::{CpuSet, TargetError};

pub use corobench_spec::parse_duration;

/// A positive request rate such as `20000`, `20k` or `1.5k` (requests per second).
///
/// # Errors
/// Anything that is not a positive finite number.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let lower = text.trim().to_ascii_lowercase();
    let (digits, scale) = match lower.strip_suffix('k') {
        Some(digits) => (digits, 1_000.0),
        None => (lower.as_str(), 1.0),
    };
    match digits.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate * scale),
        _ => Err(format!(
            "{text:?} is not a rate: use a positive number of requests/s, e.g. 20000 or 20k"
        )),
    }
}

/// A header written as `Name: value`.
///
/// # Errors
/// Text without a colon, or with an empty name.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!(
            "{text:?} is not a header: write it as 'Name: value'"
        )),
    }
}

/// A target parameter written as `name=value`.
///
/// # Errors
/// Text without `=`, or with an empty name.
pub fn parse_parameter(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!(
            "{text:?} is not a parameter: write it as name=value, e.g. workers=4"
        )),
    }
}

/// `--param` values by name; a name given twice is refused with both
/// values, rather than keeping the last silently.
///
/// # Errors
/// A name given twice (exit 2).
pub fn parameter_map(
    pairs: &[(String, String)],
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut map = std::collections::BTreeMap::new();
    for (name, value) in pairs {
        if let Some(earlier) = map.insert(name.clone(), value.clone()) {
            return Err(crate::exit::usage(format!(
                "--param {name} is given twice ({name}={earlier} and {name}={value}): give \
                 each parameter once"
            )));
        }
    }
    Ok(map)
}

/// One percentile in 0..=100 (`--percentiles` splits its list at commas).
///
/// # Errors
/// A value that is not a number in 0..=100.
pub fn parse_percentile(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "{text:?} is not a percentile: use numbers in 0..=100, e.g. 50,90,99,99.9"
        )),
    }
}

/// A wall-clock instant: RFC 3339 in UTC (`2026-11-24T08:00:00Z`, with a
/// fraction of a second if wanted) or seconds since the Unix epoch
/// (`1795507200` or `1795507200.25`).
///
/// # Errors
/// Anything else, with both forms shown.
pub fn parse_instant(text: &str) -> Result<SystemTime, String> {
    let trimmed = text.trim();
    let parsed = if trimmed.starts_with(|c: char| c.is_ascii_digit()) && !trimmed.contains('-') {
        parse_unix_seconds(trimmed)
    } else {
        humantime::parse_rfc3339(trimmed).ok()
    };
    parsed.ok_or_else(|| {
        format!(
            "{text:?} is not an instant: write it in UTC as RFC 3339, e.g. \
             2026-11-24T08:00:00Z (time zone offsets other than Z are not accepted), or as \
             seconds since the Unix epoch, e.g. 1795507200.5"
        )
    })
}

/// `1795507200` or `1795507200.123456789`, read digit by digit so that no
/// nanosecond is lost to a float.
fn parse_unix_seconds(text: &str) -> Option<SystemTime> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) || fraction.len() > 9 {
        return None;
    }
    let seconds: u64 = whole.parse().ok()?;
    let nanos: u32 = format!("{fraction:0<9}").parse().ok()?;
    UNIX_EPOCH.checked_add(Duration::new(seconds, nanos))
}

/// `--cpus`: a CPU list (`1`, `0-3`, `1,3`) of CPUs this process may run on.
///
/// # Errors
/// A list that does not parse, or names a CPU this process may not use.
pub fn parse_cpus(text: &str) -> Result<CpuSet, Box<TargetError>> {
    let cpus = CpuSet::parse(text)?;
    cpus.validate()?;
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_in_both_forms() {
        let at = |s| {
            parse_instant(s)
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
        };
        assert_eq!(at("1795507200"), Duration::from_secs(1_795_507_200));
        assert_eq!(
            at("1795507200.25"),
            Duration::new(1_795_507_200, 250_000_000)
        );
        assert_eq!(at("2026-11-24T08:00:00Z"), at("1795507200"));
        assert_eq!(at("2026-11-24T08:00:00.5Z"), at("1795507200.5"));
        for bad in [
            "",
            "tomorrow",
            "2026-11-24T08:00:00+01:00",
            "1.2.3",
            "17955.1234567890",
            "-5",
        ] {
            let message = parse_instant(bad).unwrap_err();
            assert!(message.contains("RFC 3339"), "{bad}: {message}");
        }
    }

    #[test]
    fn rates_headers_percentiles() {
        assert_eq!(parse_rate("20k").unwrap(), 20_000.0);
        assert!(parse_rate("0").is_err());
        assert_eq!(
            parse_header("X-A: b: c").unwrap(),
            ("X-A".into(), "b: c".into())
        );
        assert!(parse_header("nocolon").is_err());
        assert_eq!(parse_percentile(" 99.9").unwrap(), 99.9);
        assert!(parse_percentile("101").is_err());
    }

    #[test]
    fn cpu_lists_are_parsed_once_and_checked_against_this_process() {
        let first = CpuSet::allowed().unwrap().iter().next().unwrap();
        let set = parse_cpus(&first.to_string()).unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), [first]);
        let reversed = parse_cpus("3-1").unwrap_err().to_string();
        assert!(reversed.contains("reversed range"), "{reversed}");
        let missing = parse_cpus("1000").unwrap_err().to_string();
        assert!(missing.contains("CPU 1000 not available"), "{missing}");
    }
}
