//! The rules every response obeys (header-server, header-date,
//! header-content-type, header-content-length), checked on one response of
//! every endpoint and of every error, plus date-not-cached.

use std::time::{Duration, SystemTime};

use super::{Check, Target, Verdict};
use crate::client::{ClientError, Framing, Request, Response};
use crate::date::parse_imf_fixdate;

/// How far `Date` may be from the real time.
const DATE_TOLERANCE: Duration = Duration::from_secs(5);
/// How far apart date-not-cached's two requests are.
const DATE_GAP: Duration = Duration::from_millis(1500);

const TEXT: &str = "text/plain";
const JSON: &str = "application/json";
const OCTETS: &str = "application/octet-stream";

/// One request per endpoint and per kind of error, with the content type a
/// success must carry (errors always carry JSON; `None`: no expectation).
fn sweep_requests() -> Vec<(Request, Option<&'static str>)> {
    vec![
        (Request::get("/healthz"), Some(TEXT)),
        (Request::get("/plaintext"), Some(TEXT)),
        (Request::get("/json"), Some(JSON)),
        (Request::get("/io?ms=0"), Some(JSON)),
        (Request::get("/db"), Some(JSON)),
        (Request::get("/file?kb=1"), Some(OCTETS)),
        (Request::post("/upload", b"corobench".to_vec()), Some(JSON)),
        (Request::get("/mixed?iters=1&ms=0"), Some(JSON)),
        (Request::get("/stats"), Some(JSON)),
        (Request::get("/no-such-path"), None),
        (Request::get("/io?ms=abc"), Some(JSON)),
        (Request::post("/plaintext", Vec::new()), Some(TEXT)),
    ]
}

/// A received response, with when it arrived and what its type should be.
#[derive(Debug)]
struct Sample {
    label: String,
    response: Response,
    received_at: SystemTime,
    success_type: Option<&'static str>,
}

/// The responses the header rules judge.
#[derive(Debug)]
pub(super) struct Sweep {
    samples: Vec<Sample>,
    /// Requests that got no response at all (other rules report why).
    unanswered: Vec<String>,
}

impl Sweep {
    /// Sends every sweep request, each on its own connection.
    pub fn collect(target: Target) -> Self {
        let mut sweep = Self {
            samples: Vec::new(),
            unanswered: Vec::new(),
        };
        for (request, success_type) in sweep_requests() {
            match target.exchange(&request) {
                Ok(response) => sweep.samples.push(Sample {
                    label: request.label(),
                    response,
                    received_at: SystemTime::now(),
                    success_type,
                }),
                Err(problem) => sweep.unanswered.push(problem),
            }
        }
        sweep
    }

    /// Applies `judge` to every sample; the first complaint fails the rule.
    fn judge(&self, judge: impl Fn(&Sample) -> Result<(), String>) -> Check {
        if self.samples.is_empty() {
            let problems = self.unanswered.join("; ");
            return Err(format!("no response to check: {problems}"));
        }
        for sample in &self.samples {
            judge(sample).map_err(|problem| format!("{}: {problem}", sample.label))?;
        }
        Ok(Verdict::Pass)
    }

    pub fn server(&self, target_name: &str) -> Check {
        self.judge(|sample| match only_header(&sample.response, "Server")? {
            Some(server) if server == target_name => Ok(()),
            Some(server) => Err(format!(
                "expected Server: {target_name}, got Server: {server}"
            )),
            None => Err(format!(
                "expected Server: {target_name}, got no Server header"
            )),
        })
    }

    pub fn date(&self) -> Check {
        self.judge(|sample| {
            let Some(text) = only_header(&sample.response, "Date")? else {
                return Err("expected a Date header, got none".to_owned());
            };
            let Some(date) = parse_imf_fixdate(text) else {
                return Err(format!("expected Date in IMF-fixdate form (Sun, 22 Nov 2026 06:33:00 GMT), got {text:?}"));
            };
            let skew = sample
                .received_at
                .duration_since(date)
                .unwrap_or_else(|ahead| ahead.duration());
            // The header has whole seconds: allow the truncated second too.
            if skew > DATE_TOLERANCE + Duration::from_secs(1) {
                return Err(format!("expected Date within 5 s of the real time, got {text:?}, {skew:.1?} off"));
            }
            Ok(())
        })
    }

    pub fn content_type(&self) -> Check {
        self.judge(|sample| {
            let expected = if sample.response.status >= 400 {
                JSON
            } else if let Some(expected) = sample.success_type {
                expected
            } else {
                return Ok(());
            };
            match only_header(&sample.response, "Content-Type")? {
                Some(got) if content_type_matches(got, expected) => Ok(()),
                Some(got) => Err(format!(
                    "expected Content-Type: {expected} (status {}), got {got}",
                    sample.response.status
                )),
                None => Err(format!(
                    "expected Content-Type: {expected}, got no Content-Type header"
                )),
            }
        })
    }

    pub fn content_length(&self) -> Check {
        self.judge(|sample| match sample.response.framing {
            Framing::Chunked => Err("expected Content-Length, got Transfer-Encoding: chunked".to_owned()),
            Framing::UntilClose => Err("expected Content-Length, got neither it nor chunked encoding (the body ended with the connection)".to_owned()),
            Framing::EndStream => Err("expected content-length, got none (the body ended with its HTTP/2 stream)".to_owned()),
            // The client read exactly Content-Length bytes, so they agree.
            Framing::ContentLength => Ok(()),
        })
    }
}

/// The single value of header `name`; two of them is a fault.
fn only_header<'a>(response: &'a Response, name: &'a str) -> Result<Option<&'a str>, String> {
    let mut values = response.headers_named(name);
    let first = values.next();
    match values.next() {
        Some(second) => Err(format!(
            "expected one {name} header, got {:?} and {second:?}",
            first.unwrap_or_default()
        )),
        None => Ok(first),
    }
}

/// `text/plain` and `application/json` may carry `; charset=utf-8`.
fn content_type_matches(got: &str, expected: &str) -> bool {
    let mut parts = got.split(';').map(str::trim);
    let media_type = parts.next().unwrap_or_default();
    if !media_type.eq_ignore_ascii_case(expected) {
        return false;
    }
    let parameters: Vec<&str> = parts.collect();
    match parameters.as_slice() {
        [] => true,
        [charset] => {
            expected != OCTETS
                && charset
                    .replace(' ', "")
                    .eq_ignore_ascii_case("charset=utf-8")
        }
        _ => false,
    }
}

/// Two requests 1.5 s apart, on one connection when the target keeps it
/// alive (a per-connection cache is a cache too), must carry different dates.
pub(super) fn date_not_cached(target: Target) -> Check {
    let request = Request::get("/plaintext");
    let label = request.label();
    let (mut client, first) = target.session_with(&request)?;
    std::thread::sleep(DATE_GAP);
    let second = match client.exchange(&request) {
        Ok(response) => response,
        // Closed connections are keep-alive's business: ask again afresh.
        Err(ClientError::Closed(_) | ClientError::Io(_)) => target.exchange(&request)?,
        Err(e) => return Err(format!("{label}: {e}")),
    };
    let (Some(first_date), Some(second_date)) = (first.header("Date"), second.header("Date"))
    else {
        return Ok(Verdict::Warn(
            "not checked: a response had no Date header (see header-date)".to_owned(),
        ));
    };
    if first_date == second_date {
        return Err(format!(
            "{label} twice, {DATE_GAP:?} apart: expected different Date headers, got {first_date:?} both times"
        ));
    }
    Ok(Verdict::Pass)
}

#[cfg(test)]
mod tests {
    use super::content_type_matches;

    #[test]
    fn content_types_may_carry_a_utf8_charset_only() {
        assert!(content_type_matches("text/plain", "text/plain"));
        assert!(content_type_matches(
            "text/plain; charset=utf-8",
            "text/plain"
        ));
        assert!(content_type_matches(
            "application/json;charset=UTF-8",
            "application/json"
        ));
        assert!(!content_type_matches("text/html", "text/plain"));
        assert!(!content_type_matches(
            "text/plain; charset=latin1",
            "text/plain"
        ));
        assert!(!content_type_matches(
            "application/octet-stream; charset=utf-8",
            "application/octet-stream"
        ));
    }
}
