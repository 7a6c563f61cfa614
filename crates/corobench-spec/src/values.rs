//! Parsers for the values people write in specs and on the command line;
//! each error says what a valid value looks like.

use std::time::Duration;

use crate::error::shown;

/// A value that is not what its place takes; each says what a valid one
/// looks like (the caller adds where it was written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("{} is not a duration: use e.g. 10s, 500ms, 2m", shown(.0))]
    Duration(String),
    #[error("{} is not a fraction: use e.g. 3% or 0.03", shown(.0))]
    Fraction(String),
    #[error("{} is not a CPU list ({why}): use e.g. 0 or 0-1 or 0,2", shown(.text))]
    CpuList { text: String, why: &'static str },
    #[error("this machine reports no CPU this process may use")]
    NoCpus,
    #[error("CPU {cpu} does not exist: this machine has CPUs 0-{}", .cpus.saturating_sub(1))]
    NoSuchCpu { cpu: usize, cpus: usize },
    /// A parameter's value outside its integer range.
    #[error("must be an integer in {min}..={max}")]
    OutOfRange { min: i64, max: i64 },
    /// A parameter's value that is none of its choices.
    #[error("must be one of {}", .0.join(", "))]
    NotAChoice(Vec<String>),
    /// A `name=value` word whose value its name does not take.
    #[error("{name}={} is not {expected}", shown(.value))]
    Word {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
}

/// `10s`, `500ms`, `2m`, `1h 30m`, or a bare number of seconds (`10`, `0.5`).
///
/// # Errors
/// Text that is neither a number of seconds nor a duration with units.
pub fn parse_duration(text: &str) -> Result<Duration, ValueError> {
    let text = text.trim();
    let bad = || ValueError::Duration(text.to_owned());
    if let Ok(seconds) = text.parse::<f64>() {
        // try_: a count of seconds beyond what a Duration holds is refused, not a panic.
        return match Duration::try_from_secs_f64(seconds) {
            Ok(duration) if seconds >= 0.0 => Ok(duration),
            _ => Err(bad()),
        };
    }
    humantime::parse_duration(text).map_err(|_| bad())
}

/// `3%` or `0.03`: a fraction in (0, 1).
///
/// # Errors
/// Anything else.
pub fn parse_fraction(text: &str) -> Result<f64, ValueError> {
    let text = text.trim();
    let value = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.parse::<f64>(),
    };
    match value {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(ValueError::Fraction(text.to_owned())),
    }
}

/// `1`, `0-3`, `0,2-3`: CPU numbers that exist on a machine with `cpus` CPUs.
///
/// # Errors
/// Malformed lists, reversed ranges, CPUs the machine does not have.
pub fn parse_cpu_list(text: &str, cpus: usize) -> Result<Vec<usize>, ValueError> {
    let bad = |why| ValueError::CpuList {
        text: text.to_owned(),
        why,
    };
    let mut list = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let lo: usize = lo.trim().parse().map_err(|_| bad("not a number"))?;
        let hi: usize = hi.trim().parse().map_err(|_| bad("not a number"))?;
        if lo > hi {
            return Err(bad("a range runs backwards"));
        }
        if cpus == 0 {
            return Err(ValueError::NoCpus);
        }
        if hi >= cpus {
            return Err(ValueError::NoSuchCpu { cpu: hi, cpus });
        }
        list.extend((lo..=hi).filter(|c| !list.contains(c)).collect::<Vec<_>>());
    }
    Ok(list)
}

/// The first `name=value` word whose name an earlier word gave already,
/// as a message naming both: `c=8 c=16` must not keep the last silently.
pub(crate) fn repeated_word<'w>(words: impl IntoIterator<Item = &'w str>) -> Option<String> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for word in words {
        let Some((name, _)) = word.split_once('=') else {
            continue;
        };
        if let Some((_, earlier)) = seen.iter().find(|(n, _)| *n == name) {
            return Some(format!(
                "gives {name} twice ({earlier} and {word}): give each name once"
            ));
        }
        seen.push((name, word));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1m 30s").unwrap(), Duration::from_secs(90));
        assert!(
            parse_duration("ten")
                .unwrap_err()
                .to_string()
                .contains("10s")
        );
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("18446744073709551615").is_err());
        assert!(parse_duration("1e400").is_err());
        assert!(parse_duration("NaN").is_err());
        assert!(parse_duration("5124095576030431h").is_ok());
        assert!(parse_duration("99999999999999999999h").is_err());
    }

    #[test]
    fn fractions() {
        assert!((parse_fraction("3%").unwrap() - 0.03).abs() < 1e-12);
        assert!((parse_fraction("0.05").unwrap() - 0.05).abs() < 1e-12);
        assert!(parse_fraction("150%").is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0,2-3", 4).unwrap(), vec![0, 2, 3]);
        assert_eq!(parse_cpu_list("1-1,1", 2).unwrap(), vec![1]);
        assert!(
            parse_cpu_list("2", 2)
                .unwrap_err()
                .to_string()
                .contains("CPUs 0-1")
        );
        assert!(parse_cpu_list("3-1", 4).is_err());
        assert!(parse_cpu_list("a", 4).is_err());
    }
}
