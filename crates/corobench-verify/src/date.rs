//! Parsing the `Date` header's IMF-fixdate form (RFC 9110 §5.6.7).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Parses `Sun, 22 Nov 2026 06:33:00 GMT`; `None` unless the text is exactly
/// that form with a consistent weekday.
#[must_use]
pub fn parse_imf_fixdate(text: &str) -> Option<SystemTime> {
    let bytes = text.as_bytes();
    if !text.is_ascii() || bytes.len() != 29 || &text[3..5] != ", " || &text[25..] != " GMT" {
        return None;
    }
    let separators = [(7, b' '), (11, b' '), (16, b' '), (19, b':'), (22, b':')];
    if separators.iter().any(|&(at, byte)| bytes[at] != byte) {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u64> {
        let digits = &text[range];
        digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let day = number(5..7)?;
    let month = MONTHS.iter().position(|m| *m == &text[8..11])? as u64 + 1;
    let year = number(12..16)?;
    let (hour, minute, second) = (number(17..19)?, number(20..22)?, number(23..25)?);
    if !(1..=31).contains(&day) || year < 1970 || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if DAYS[usize::try_from(days % 7).ok()?] != &text[..3] {
        return None;
    }
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Days from 1970-01-01 to a Gregorian date on or after it (Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year / 400;
    let year_of_era = year % 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(text: &str) -> Option<u64> {
        parse_imf_fixdate(text).map(|t| t.duration_since(UNIX_EPOCH).unwrap().as_secs())
    }

    #[test]
    fn parses_imf_fixdates() {
        assert_eq!(secs("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(secs("Tue, 29 Feb 2000 00:00:00 GMT"), Some(951_782_400));
        assert_eq!(secs("Sun, 22 Nov 2026 06:33:00 GMT"), Some(1_795_329_180));
        assert_eq!(secs("Thu, 31 Dec 2099 23:59:59 GMT"), Some(4_102_444_799));
    }

    #[test]
    fn rejects_other_forms_and_wrong_weekdays() {
        for text in [
            "Mon, 22 Nov 2026 06:33:00 GMT",
            "Sunday, 22-Nov-26 06:33:00 GMT",
            "Sun Nov 22 06:33:00 2026",
            "Sun, 22 Nov 2026 06:33:00 UTC",
            "Sun, 22 Xyz 2026 06:33:00 GMT",
            "Sun, 2x Nov 2026 06:33:00 GMT",
            "Sün, 22 Nov 2026 06:33:00 GM",
            "Sun, 22 Nov 2026 25:33:00 GMT",
            "",
        ] {
            assert_eq!(parse_imf_fixdate(text), None, "{text}");
        }
    }
}
