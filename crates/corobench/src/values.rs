//! Parsers for command-line values; each error says what a valid value looks like.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
