//! Query parameters: integers within a range, with the contract's 400 messages.

use std::ops::RangeInclusive;

use crate::ContractError;

/// One integer query parameter the contract defines.
#[derive(Debug, Clone)]
pub struct IntParam {
    pub name: &'static str,
    pub range: RangeInclusive<u32>,
    pub default: u32,
}

/// `/io?ms=` and `/mixed?ms=`: the wait in milliseconds.
pub const WAIT_MS: IntParam = IntParam {
    name: "ms",
    range: 0..=10_000,
    default: 10,
};
/// `/file?kb=`: KiB of the payload to send.
pub const FILE_KB: IntParam = IntParam {
    name: "kb",
    range: 1..=10_240,
    default: 1,
};
/// `/mixed?iters=`: rounds of SHA-256.
pub const MIXED_ITERS: IntParam = IntParam {
    name: "iters",
    range: 0..=1_000_000,
    default: 1000,
};

impl IntParam {
    /// Reads this parameter from a raw query string (`a=1&b=2`, no `?`).
    ///
    /// Absent means the default; the last occurrence wins, as in most
    /// frameworks; unknown parameters are ignored.
    pub fn read(&self, query: Option<&str>) -> Result<u32, ContractError> {
        let raw = query.and_then(|q| last_value(q, self.name));
        match raw {
            None => Ok(self.default),
            Some(raw) => self.parse(raw),
        }
    }

    fn parse(&self, raw: &str) -> Result<u32, ContractError> {
        // Only plain ASCII digits: no sign, no spaces, no percent-escapes.
        let valid_digits =
            !raw.is_empty() && raw.len() <= 10 && raw.bytes().all(|b| b.is_ascii_digit());
        let value = if valid_digits {
            raw.parse::<u64>().ok()
        } else {
            None
        };
        match value {
            Some(v) if v <= u64::from(*self.range.end()) && v >= u64::from(*self.range.start()) => {
                Ok(u32::try_from(v).expect("within a u32 range"))
            }
            _ => Err(ContractError::BadParameter {
                message: format!(
                    "{} must be an integer in {}..={}",
                    self.name,
                    self.range.start(),
                    self.range.end()
                ),
            }),
        }
    }
}

fn last_value<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query
        .split('&')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == name).then_some(value)
        })
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<u32, ContractError>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn absent_parameter_takes_the_default() {
        assert_eq!(WAIT_MS.read(None), Ok(10));
        assert_eq!(WAIT_MS.read(Some("")), Ok(10));
        assert_eq!(FILE_KB.read(Some("other=5")), Ok(1));
        assert_eq!(MIXED_ITERS.read(Some("ms=3")), Ok(1000));
    }

    #[test]
    fn bounds_are_inclusive() {
        assert_eq!(WAIT_MS.read(Some("ms=0")), Ok(0));
        assert_eq!(WAIT_MS.read(Some("ms=10000")), Ok(10_000));
        assert_eq!(FILE_KB.read(Some("kb=10240")), Ok(10_240));
        assert_eq!(MIXED_ITERS.read(Some("iters=1000000")), Ok(1_000_000));
    }

    #[test]
    fn out_of_range_names_the_parameter_and_range() {
        assert_eq!(
            message(WAIT_MS.read(Some("ms=10001"))),
            "ms must be an integer in 0..=10000"
        );
        assert_eq!(
            message(FILE_KB.read(Some("kb=0"))),
            "kb must be an integer in 1..=10240"
        );
        assert_eq!(
            message(MIXED_ITERS.read(Some("iters=1000001"))),
            "iters must be an integer in 0..=1000000"
        );
    }

    #[test]
    fn non_integers_are_rejected() {
        for raw in [
            "ms=",
            "ms",
            "ms=abc",
            "ms=-1",
            "ms=+5",
            "ms=1.5",
            "ms=%31",
            "ms= 1",
            "ms=99999999999999999999",
        ] {
            assert!(WAIT_MS.read(Some(raw)).is_err(), "{raw} was accepted");
        }
    }

    #[test]
    fn picks_the_named_parameter_among_others() {
        assert_eq!(WAIT_MS.read(Some("iters=5&ms=7")), Ok(7));
        assert_eq!(MIXED_ITERS.read(Some("iters=5&ms=7")), Ok(5));
        assert_eq!(WAIT_MS.read(Some("ms=1&ms=2")), Ok(2));
        assert_eq!(WAIT_MS.read(Some("xms=1")), Ok(10));
    }
}
