//! HTTP/1.1 pieces both test servers share: request heads, response heads,
//! reason phrases, query parameters and the `Date` header.

use std::time::{SystemTime, UNIX_EPOCH};

/// The most header fields a request may carry.
const MAX_HEADERS: usize = 64;

/// A request head, parsed and owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    /// The request target as sent: path and query.
    pub target: String,
    /// The declared body length (0 when absent).
    pub content_length: u64,
    /// The client sent `Connection: close`.
    pub connection_close: bool,
    /// The client sent `Transfer-Encoding: chunked`.
    pub chunked: bool,
    /// Bytes of the head, including the blank line.
    pub head_bytes: usize,
}

impl RequestHead {
    /// The path without the query.
    #[must_use]
    pub fn path(&self) -> &str {
        self.target
            .split_once('?')
            .map_or(&self.target, |(path, _)| path)
    }

    /// The first value of query parameter `name`, if present.
    #[must_use]
    pub fn query_param(&self, name: &str) -> Option<&str> {
        let (_, query) = self.target.split_once('?')?;
        query
            .split('&')
            .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }
}

/// What the bytes received so far hold.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    Complete(RequestHead),
    /// More bytes are needed.
    Partial,
    /// Not an HTTP/1.x request head; the text says why.
    Invalid(String),
}

/// Parses the request head at the start of `buf`.
#[must_use]
pub fn parse_request(buf: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let head_bytes = match request.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(error) => return Parsed::Invalid(error.to_string()),
    };
    let mut head = RequestHead {
        method: request.method.unwrap_or_default().to_owned(),
        target: request.path.unwrap_or_default().to_owned(),
        content_length: 0,
        connection_close: false,
        chunked: false,
        head_bytes,
    };
    for header in request.headers.iter() {
        let value = String::from_utf8_lossy(header.value);
        let value = value.trim();
        if header.name.eq_ignore_ascii_case("content-length") {
            match value.parse() {
                Ok(length) => head.content_length = length,
                Err(_) => return Parsed::Invalid(format!("bad Content-Length {value:?}")),
            }
        } else if header.name.eq_ignore_ascii_case("connection") {
            head.connection_close = value.eq_ignore_ascii_case("close");
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            head.chunked = value.to_ascii_lowercase().contains("chunked");
        }
    }
    Parsed::Complete(head)
}

/// The standard reason phrase of a status code, `Unknown` for a code
/// without one.
#[must_use]
pub fn reason(status: u16) -> &'static str {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|code| code.canonical_reason())
        .unwrap_or("Unknown")
}

/// Appends a status line and header fields (and the blank line) to `out`.
pub fn write_head(out: &mut Vec<u8>, status: u16, headers: &[(&str, String)]) {
    out.extend_from_slice(format!("HTTP/1.1 {status} {}\r\n", reason(status)).as_bytes());
    for (name, value) in headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

/// `time` in IMF-fixdate form, e.g. `Sun, 22 Nov 2026 06:33:00 GMT`.
#[must_use]
pub fn http_date(time: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = secs / 86_400;
    let (year, month, day) = civil_from_days(days);
    let of_day = secs % 86_400;
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        DAYS[usize::try_from(days % 7).unwrap_or(0)],
        MONTHS[usize::from(month - 1)],
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// The Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u8, u8) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (
        year,
        u8::try_from(month).unwrap_or(1),
        u8::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn reason_phrases_are_the_standard_ones() {
        assert_eq!(reason(200), "OK");
        assert_eq!(reason(404), "Not Found");
        assert_eq!(reason(503), "Service Unavailable");
        assert_eq!(reason(599), "Unknown");
        assert_eq!(reason(42), "Unknown");
    }

    #[test]
    fn dates_are_imf_fixdate() {
        let at = |secs| UNIX_EPOCH + Duration::from_secs(secs);
        assert_eq!(http_date(at(0)), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(at(951_782_400)), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(
            http_date(at(1_795_329_180)),
            "Sun, 22 Nov 2026 06:33:00 GMT"
        );
        assert_eq!(
            http_date(at(4_102_444_799)),
            "Thu, 31 Dec 2099 23:59:59 GMT"
        );
    }

    #[test]
    fn parses_a_request_head_with_its_framing() {
        let raw = b"POST /upload?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
        let Parsed::Complete(head) = parse_request(raw) else {
            panic!("not complete")
        };
        assert_eq!(head.method, "POST");
        assert_eq!(head.path(), "/upload");
        assert_eq!(head.query_param("x"), Some("1"));
        assert_eq!(head.query_param("y"), None);
        assert_eq!(head.content_length, 5);
        assert!(head.connection_close);
        assert_eq!(head.head_bytes, raw.len() - 5);
    }

    #[test]
    fn partial_and_invalid_heads_are_told_apart() {
        assert_eq!(parse_request(b"GET / HTTP/1.1\r\nHo"), Parsed::Partial);
        assert!(matches!(
            parse_request(b"\x00\x01 nonsense\r\n\r\n"),
            Parsed::Invalid(_)
        ));
        let bad_length = b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n";
        assert!(
            matches!(parse_request(bad_length), Parsed::Invalid(m) if m.contains("Content-Length"))
        );
    }

    #[test]
    fn query_params_without_values_are_empty() {
        let Parsed::Complete(head) = parse_request(b"GET /io?ms&kb=2 HTTP/1.1\r\n\r\n") else {
            panic!("not complete")
        };
        assert_eq!(head.query_param("ms"), Some(""));
        assert_eq!(head.query_param("kb"), Some("2"));
    }
}
