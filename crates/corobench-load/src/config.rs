//! What to send, to where, how fast and for how long — validated once, here.

use std::net::{SocketAddr, ToSocketAddrs as _};
use std::time::Duration;

use corobench_model::{Backend, Schedule};

use crate::error::LoadError;

/// When the measured window ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAfter {
    Duration(Duration),
    /// Exactly this many requests get an outcome (a response or an error).
    Requests(u64),
}

/// Where the load goes: the server's resolved address, the Host header and
/// the request target (path and query) of one `http://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: SocketAddr,
    /// Value of the Host header (`host:port` as written in the URL).
    pub host: String,
    /// Path and query, e.g. `/io?ms=10`.
    pub path: String,
    /// The URL as given, for reports.
    pub url: String,
}

impl Endpoint {
    /// Parses an `http://host[:port]/path?query` URL and resolves the host.
    ///
    /// # Errors
    /// An unsupported scheme, a malformed URL, or a host that does not resolve.
    pub fn from_url(url: &str) -> Result<Self, LoadError> {
        let bad = |why: &str| LoadError::Config(format!("invalid URL {url:?}: {why}"));
        let rest = if let Some(rest) = url.strip_prefix("http://") {
            rest
        } else if url.starts_with("https://") {
            return Err(bad(
                "https is not supported; corobench measures plain HTTP/1.1 servers",
            ));
        } else {
            return Err(bad(
                "it must start with http://, e.g. http://127.0.0.1:8080/plaintext",
            ));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) if rest.as_bytes()[at] == b'/' => (&rest[..at], rest[at..].to_string()),
            Some(at) => (&rest[..at], format!("/{}", &rest[at..])),
            None => (rest, "/".to_string()),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(bad(
                "it has no host (or has user info, which is not supported)",
            ));
        }
        let with_port = if has_port(authority) {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| bad(&format!("cannot resolve {authority}: {e}")))?
            .next()
            .ok_or_else(|| bad(&format!("{authority} resolves to no address")))?;
        if path
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(bad(
                "the path contains spaces or control characters; percent-encode them",
            ));
        }
        Ok(Self {
            addr,
            host: authority.to_string(),
            path,
            url: url.to_string(),
        })
    }
}

/// Whether an authority (`host`, `host:port`, `[v6]`, `[v6]:port`) names a port.
fn has_port(authority: &str) -> bool {
    match authority.rfind(']') {
        Some(bracket) => authority[bracket..].contains(':'),
        None => authority.contains(':'),
    }
}

/// The request every connection sends, before serialisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestTemplate {
    pub method: String,
    /// Extra headers, sent as given (a `Host` here replaces the URL's).
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Default for RequestTemplate {
    fn default() -> Self {
        Self {
            method: "GET".to_string(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }
}

impl RequestTemplate {
    /// The request bytes, serialised once for the whole run.
    ///
    /// # Errors
    /// A method or header that would break the request line or header block.
    pub fn serialize(&self, endpoint: &Endpoint) -> Result<Vec<u8>, LoadError> {
        if self.method.is_empty()
            || !self
                .method
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b == b'-')
        {
            return Err(LoadError::Config(format!(
                "invalid method {:?}: use an upper-case token such as GET or POST",
                self.method
            )));
        }
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, endpoint.path).into_bytes();
        let has = |name: &str| {
            self.headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
        };
        if !has("host") {
            out.extend_from_slice(format!("Host: {}\r\n", endpoint.host).as_bytes());
        }
        for (name, value) in &self.headers {
            check_header(name, value)?;
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        let needs_length = !self.body.is_empty() || self.method == "POST" || self.method == "PUT";
        if needs_length && !has("content-length") {
            out.extend_from_slice(format!("Content-Length: {}\r\n", self.body.len()).as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.body);
        Ok(out)
    }
}

fn check_header(name: &str, value: &str) -> Result<(), LoadError> {
    let name_ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':');
    let value_ok = !value.bytes().any(|b| b == b'\r' || b == b'\n');
    if name_ok && value_ok {
        Ok(())
    } else {
        Err(LoadError::Config(format!(
            "invalid header {name:?}: {value:?}: write it as 'Name: value' on one line"
        )))
    }
}

/// A complete, validated load run description.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    pub endpoint: Endpoint,
    pub request: RequestTemplate,
    pub threads: u32,
    /// The arrival pattern over how many connections.
    pub schedule: Schedule,
    pub stop: StopAfter,
    pub warmup: Duration,
    /// A request without a complete response after this long counts as a timeout.
    pub timeout: Duration,
    /// Generator threads are pinned round-robin to these CPUs, when given.
    pub cpus: Option<Vec<usize>>,
    pub backend: Backend,
}

impl LoadConfig {
    /// A closed-loop run of `duration` with one thread and `connections` connections.
    #[must_use]
    pub fn closed(endpoint: Endpoint, connections: u32, duration: Duration) -> Self {
        Self {
            endpoint,
            request: RequestTemplate::default(),
            threads: 1,
            schedule: Schedule::closed(connections),
            stop: StopAfter::Duration(duration),
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(10),
            cpus: None,
            backend: Backend::default(),
        }
    }

    /// Checks the combination of values; the engine trusts them afterwards.
    ///
    /// # Errors
    /// Zero connections or threads, more threads than connections, a rate
    /// that is not positive, an empty duration, a zero timeout.
    pub fn validate(&self) -> Result<(), LoadError> {
        let fail = |msg: String| Err(LoadError::Config(msg));
        let connections = self.schedule.connections;
        if connections == 0 {
            return fail("connections (-c) must be at least 1".into());
        }
        if self.threads == 0 {
            return fail("threads (-t) must be at least 1".into());
        }
        if self.threads > connections {
            return fail(format!(
                "threads (-t {}) cannot exceed connections (-c {}): each thread needs a connection",
                self.threads, connections
            ));
        }
        if let Some(rate_per_s) = self.schedule.rate_per_s() {
            if !(rate_per_s.is_finite() && rate_per_s > 0.0) {
                return fail(format!(
                    "rate (-R) must be a positive number of requests/s, got {rate_per_s}"
                ));
            }
        }
        match self.stop {
            StopAfter::Duration(d) if d.is_zero() => {
                return fail("duration (-d) must be longer than 0".into());
            }
            StopAfter::Requests(0) => return fail("request count (-n) must be at least 1".into()),
            _ => {}
        }
        if self.timeout.is_zero() {
            return fail("timeout must be longer than 0".into());
        }
        if self.cpus.as_ref().is_some_and(Vec::is_empty) {
            return fail("the CPU list (--cpus) is empty".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let t = Endpoint::from_url("http://127.0.0.1:8080/io?ms=10").unwrap();
        assert_eq!(
            (t.addr.port(), t.host.as_str(), t.path.as_str()),
            (8080, "127.0.0.1:8080", "/io?ms=10")
        );
        let t = Endpoint::from_url("http://127.0.0.1").unwrap();
        assert_eq!((t.addr.port(), t.path.as_str()), (80, "/"));
        let t = Endpoint::from_url("http://[::1]:9000?x=1").unwrap();
        assert_eq!((t.addr.port(), t.path.as_str()), (9000, "/?x=1"));
    }

    #[test]
    fn rejects_bad_urls_with_the_reason() {
        for (url, why) in [
            ("https://127.0.0.1/", "https is not supported"),
            ("127.0.0.1:80/", "must start with http://"),
            ("http:///x", "no host"),
            ("http://127.0.0.1:99999/", "cannot resolve"),
            ("http://127.0.0.1/a b", "spaces"),
        ] {
            let err = Endpoint::from_url(url).unwrap_err().to_string();
            assert!(err.contains(why), "{url}: {err}");
        }
    }

    #[test]
    fn serialises_the_request_once() {
        let target = Endpoint::from_url("http://127.0.0.1:8080/upload").unwrap();
        let request = RequestTemplate {
            method: "POST".into(),
            headers: vec![("X-A".into(), "1".into())],
            body: b"abc".to_vec(),
        };
        let bytes = request.serialize(&target).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "POST /upload HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\nContent-Length: 3\r\n\r\nabc"
        );
        let bad = RequestTemplate {
            headers: vec![("X".into(), "a\r\nb".into())],
            ..RequestTemplate::default()
        };
        assert!(bad.serialize(&target).is_err());
    }

    #[test]
    fn validation_names_the_flag() {
        let target = Endpoint::from_url("http://127.0.0.1:1/").unwrap();
        let mut config = LoadConfig::closed(target, 0, Duration::from_secs(1));
        assert!(config.validate().unwrap_err().to_string().contains("-c"));
        config.schedule.connections = 2;
        config.threads = 3;
        assert!(config.validate().unwrap_err().to_string().contains("-t 3"));
        config.threads = 1;
        config.schedule = Schedule::open(0.0, 2);
        assert!(config.validate().unwrap_err().to_string().contains("-R"));
    }
}
