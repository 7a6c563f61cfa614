//! What to send, to where, how fast and for how long — validated once, here.

use std::net::{SocketAddr, ToSocketAddrs as _};
use std::time::Duration;

use corobench_model::{Backend, BackgroundRecord, HttpVersion, Protocol, Schedule};

use crate::error::{LoadError, Setting};
use crate::h2::Http2Options;
use crate::limits;
use crate::tls::TlsOptions;

/// When the measured window ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAfter {
    Duration(Duration),
    /// Exactly this many requests get an outcome (a response or an error).
    Requests(u64),
}

/// Where the load goes: the server's resolved address, the Host header and
/// the request target (path and query) of one `http://` or `https://` URL,
/// and how TLS is spoken to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: SocketAddr,
    /// Value of the Host header (`host:port` as written in the URL).
    pub host: String,
    /// Path and query, e.g. `/io?ms=10`.
    pub path: String,
    /// The URL as given, for reports.
    pub url: String,
    /// `https://`: how the generator speaks TLS (the defaults until changed).
    pub tls: Option<TlsOptions>,
}

impl Endpoint {
    /// Parses an `http[s]://host[:port]/path?query` URL and resolves the
    /// host. A `#fragment` is dropped and bytes a request line may not carry
    /// are percent-encoded (see [`request_target`]).
    ///
    /// # Errors
    /// An unsupported scheme, a malformed URL, or a host that does not resolve.
    pub fn from_url(url: &str) -> Result<Self, LoadError> {
        let bad =
            |why: &str| LoadError::config(&[Setting::Url], format!("invalid URL {url:?}: {why}"));
        let (rest, tls, default_port) = if let Some(rest) = url.strip_prefix("http://") {
            (rest, None, 80)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (rest, Some(TlsOptions::default()), 443)
        } else {
            return Err(bad(
                "it must start with http:// or https://, e.g. http://127.0.0.1:8080/plaintext",
            ));
        };
        // A fragment points into the response for the client alone: the
        // request target has no place for it (RFC 9112 §3.2.1, origin-form).
        let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(bad("it has no host"));
        }
        if authority.contains('@') {
            return Err(bad(
                "user info (user:password@) is not supported: remove it, and send \
                 credentials in a header (-H \"Authorization: …\")",
            ));
        }
        if !authority.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(bad(
                "the host contains spaces, control characters or non-ASCII letters; \
                 write an IP address or the ASCII (punycode) form of the name",
            ));
        }
        let path = request_target(path).map_err(bad)?;
        Ok(Self {
            addr: resolve(authority, default_port).map_err(|why| bad(&why))?,
            host: authority.to_string(),
            path,
            url: url.to_string(),
            tls,
        })
    }

    /// The URL's host without its port or IPv6 brackets: the name TLS
    /// sends (SNI) and checks the certificate against, unless told another.
    #[must_use]
    pub fn host_name(&self) -> &str {
        let host = match self.host.rfind(']') {
            Some(bracket) => &self.host[..=bracket],
            None => self
                .host
                .rsplit_once(':')
                .map_or(self.host.as_str(), |(h, _)| h),
        };
        host.trim_start_matches('[').trim_end_matches(']')
    }
}

/// The request target for the path and query of a URL (`""`, `/p`, `?q`,
/// `/p?q`), as it goes on the request line: always starting with `/`,
/// every non-ASCII byte (a UTF-8 path) and every ASCII character a URI never
/// carries raw percent-encoded, and `%xx` already there kept as it is.
///
/// # Errors
/// Spaces and control characters, which the user must encode (a space is
/// ambiguous: `%20` or `+`).
fn request_target(path_and_query: &str) -> Result<String, &'static str> {
    /// Printable ASCII that RFC 3986 allows nowhere in a URI.
    const NEVER_RAW: &[u8] = b"\"<>\\^`{|}";
    if path_and_query
        .bytes()
        .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err("the path contains spaces or control characters; percent-encode them");
    }
    let mut target = String::with_capacity(path_and_query.len() + 1);
    if !path_and_query.starts_with('/') {
        target.push('/');
    }
    for byte in path_and_query.bytes() {
        if byte.is_ascii() && !NEVER_RAW.contains(&byte) {
            target.push(char::from(byte));
        } else {
            target.push_str(&format!("%{byte:02X}"));
        }
    }
    Ok(target)
}

/// The request target of a background request: its path as the request
/// line carries it.
///
/// # Errors
/// A path that does not start with `/`, or one with spaces or control
/// characters.
pub(crate) fn background_target(background: &BackgroundRecord) -> Result<String, LoadError> {
    let bad = |why: &str| {
        LoadError::config(
            &[Setting::Background],
            format!(
                "invalid background path {:?}: {why}, e.g. /io?ms=200",
                background.path
            ),
        )
    };
    if !background.path.starts_with('/') {
        return Err(bad("it must start with '/'"));
    }
    request_target(&background.path).map_err(bad)
}

/// The first address `authority` (`host`, `host:port`, `[v6]:port`)
/// resolves to, at `default_port` when it names none.
fn resolve(authority: &str, default_port: u16) -> Result<SocketAddr, String> {
    let with_port = if has_port(authority) {
        authority.to_string()
    } else {
        format!("{authority}:{default_port}")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority} resolves to no address"))
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
        self.serialize_with(endpoint, false)
    }

    /// The request bytes; with `connection_close`, asking the server to
    /// close the connection after its response (`Connection: close`,
    /// unless the headers already say what the connection does).
    ///
    /// # Errors
    /// As [`Self::serialize`].
    pub(crate) fn serialize_with(
        &self,
        endpoint: &Endpoint,
        connection_close: bool,
    ) -> Result<Vec<u8>, LoadError> {
        if self.method.is_empty()
            || !self
                .method
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b == b'-')
        {
            return Err(LoadError::config(
                &[Setting::Method],
                format!(
                    "invalid method {:?}: use an upper-case token such as GET or POST",
                    self.method
                ),
            ));
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
        if connection_close && !has("connection") {
            out.extend_from_slice(b"Connection: close\r\n");
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

/// A header the request line and header block can carry as they are: the
/// name a token (RFC 9110 §5.1), the value free of control characters but
/// the tab (§5.5), so nothing can end a line or smuggle a NUL.
fn check_header(name: &str, value: &str) -> Result<(), LoadError> {
    const TOKEN_SYMBOLS: &[u8] = b"!#$%&'*+-.^_`|~";
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || TOKEN_SYMBOLS.contains(&b));
    let value_ok = !value.bytes().any(|b| b.is_ascii_control() && b != b'\t');
    if name_ok && value_ok {
        Ok(())
    } else {
        Err(LoadError::config(
            &[Setting::Header],
            format!(
                "invalid header {name:?}: {value:?}: write it as 'Name: value' on one line, \
                 the name a token (letters, digits, !#$%&'*+-.^_`|~), the value without \
                 control characters"
            ),
        ))
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
    /// Speak HTTP/2 (over TLS for `https://`, h2c by prior knowledge for
    /// `http://`); `None`: HTTP/1.1.
    pub http2: Option<Http2Options>,
    /// HTTP/2 only: streams on every connection that carry a GET of this
    /// path beside the measured ones, reopened as each ends; their outcomes
    /// are counted apart (head-of-line blocking).
    pub background: Option<BackgroundRecord>,
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
            http2: None,
            background: None,
        }
    }

    /// What the connections speak: HTTP/2 with `http2`, over TLS for an
    /// `https://` endpoint (`corobench load` sets these, not the schedule's
    /// protocol).
    #[must_use]
    pub fn protocol(&self) -> Protocol {
        Protocol {
            http: if self.http2.is_some() {
                HttpVersion::H2
            } else {
                HttpVersion::Http1
            },
            tls: self.endpoint.tls.is_some(),
        }
    }

    /// Checks every value and their combination; the engine trusts them
    /// afterwards (see [`crate::limits`] for the bounds and why).
    ///
    /// # Errors
    /// A value out of its range, more threads than connections, an empty
    /// CPU list; the error names the settings.
    pub fn validate(&self) -> Result<(), LoadError> {
        let connections = self.schedule.connections;
        if connections == 0 {
            return Err(LoadError::config(
                &[Setting::Connections],
                "connections must be at least 1",
            ));
        }
        limits::check_threads(self.threads)?;
        if self.threads > connections {
            return Err(LoadError::config(
                &[Setting::Threads, Setting::Connections],
                format!(
                    "{} threads cannot exceed {connections} connections: each thread needs a \
                     connection",
                    self.threads
                ),
            ));
        }
        if let Some(rate_per_s) = self.schedule.rate_per_s() {
            limits::check_rate(rate_per_s, connections, self.threads)?;
        }
        limits::check_wire_mode(&self.schedule)?;
        match self.stop {
            StopAfter::Duration(d) => limits::check_positive_duration(Setting::Duration, d)?,
            StopAfter::Requests(n) => limits::check_requests(n)?,
        }
        limits::check_duration(Setting::Warmup, self.warmup)?;
        limits::check_positive_duration(Setting::Timeout, self.timeout)?;
        limits::check_body_len(self.request.body.len())?;
        if let Some(http2) = &self.http2 {
            http2.validate()?;
            if self.schedule.pipeline != 1 {
                return Err(LoadError::config(
                    &[Setting::Pipeline, Setting::Streams],
                    "pipelining is HTTP/1.1's; over HTTP/2 keep several streams open on each \
                     connection instead",
                ));
            }
        }
        if self.cpus.as_ref().is_some_and(Vec::is_empty) {
            return Err(LoadError::config(&[Setting::Cpus], "the CPU list is empty"));
        }
        if let Some(background) = &self.background {
            self.check_background(background)?;
        }
        Ok(())
    }

    /// A background request needs HTTP/2 connections kept alive (it shares
    /// them with the measured streams), a path, and streams within bounds.
    fn check_background(&self, background: &BackgroundRecord) -> Result<(), LoadError> {
        let Some(http2) = &self.http2 else {
            return Err(LoadError::config(
                &[Setting::Background, Setting::H2c],
                "a background request runs on streams beside the measured ones on the same \
                 connection, which only HTTP/2 has: speak h2 or h2c",
            ));
        };
        if !self.schedule.keepalive {
            return Err(LoadError::config(
                &[Setting::Background, Setting::NoKeepalive],
                "a background request needs connections kept alive: with a connection per \
                 request nothing runs beside it",
            ));
        }
        background_target(background)?;
        let total = u64::from(http2.streams) + u64::from(background.streams);
        if background.streams == 0 || total > u64::from(crate::h2::MAX_STREAMS) {
            return Err(LoadError::config(
                &[Setting::BackgroundStreams, Setting::Streams],
                format!(
                    "background streams must be at least 1, and with the {} measured streams \
                     at most {} per connection, got {}",
                    http2.streams,
                    crate::h2::MAX_STREAMS,
                    background.streams
                ),
            ));
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
    fn https_urls_speak_tls_to_port_443_by_default() {
        let t = Endpoint::from_url("https://127.0.0.1/json").unwrap();
        assert_eq!((t.addr.port(), t.path.as_str()), (443, "/json"));
        assert_eq!(t.tls, Some(TlsOptions::default()));
        assert_eq!(t.host_name(), "127.0.0.1");
        let t = Endpoint::from_url("https://[::1]:8443/").unwrap();
        assert_eq!((t.addr.port(), t.host_name()), (8443, "::1"));
        let t = Endpoint::from_url("http://localhost:8080/").unwrap();
        assert_eq!((&t.tls, t.host_name()), (&None, "localhost"));
    }

    #[test]
    fn fragments_are_never_sent() {
        for (url, target) in [
            ("http://127.0.0.1:1/p?a=1#frag", "/p?a=1"),
            ("http://127.0.0.1:1/p#a?b", "/p"),
            ("http://127.0.0.1:1#frag", "/"),
            ("http://127.0.0.1:1?q#", "/?q"),
        ] {
            let endpoint = Endpoint::from_url(url).unwrap();
            assert_eq!(endpoint.path, target, "{url}");
            assert_eq!(endpoint.host, "127.0.0.1:1", "{url}");
        }
    }

    #[test]
    fn targets_are_percent_encoded_where_a_request_line_needs_it() {
        for (url, target) in [
            ("http://127.0.0.1:1/café", "/caf%C3%A9"),
            (
                "http://127.0.0.1:1/ü?q=日本",
                "/%C3%BC?q=%E6%97%A5%E6%9C%AC",
            ),
            ("http://127.0.0.1:1/a%20b?x=%E2%82%AC", "/a%20b?x=%E2%82%AC"),
            ("http://127.0.0.1:1/%zz", "/%zz"),
            ("http://127.0.0.1:1/{a}|\"<>", "/%7Ba%7D%7C%22%3C%3E"),
            (
                "http://127.0.0.1:1/x?a=1&b=/c:d@e!$'()*+,;=",
                "/x?a=1&b=/c:d@e!$'()*+,;=",
            ),
        ] {
            assert_eq!(Endpoint::from_url(url).unwrap().path, target, "{url}");
        }
    }

    #[test]
    fn rejects_bad_urls_with_the_reason() {
        for (url, why) in [
            ("ftp://127.0.0.1/", "must start with http:// or https://"),
            ("127.0.0.1:80/", "must start with http://"),
            ("http:///x", "no host"),
            (
                "http://user:pw@127.0.0.1:8080/",
                "user info (user:password@) is not supported",
            ),
            ("http://127.0.0.1:99999/", "cannot resolve"),
            ("http://127.0.0.1/a b", "spaces"),
            ("http://127.0.0.1/a\u{7f}", "control characters"),
            ("http://127.0.0.1 :80/", "the host contains spaces"),
            ("http://127.0.0.1\r\nX-Evil: 1/", "the host contains spaces"),
            ("http://bücher.example/", "punycode"),
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
        for (name, value) in [
            ("X", "a\r\nb"),
            ("X", "a\0b"),
            ("X Y", "1"),
            ("X:Y", "1"),
            ("", "1"),
            ("Ä", "1"),
        ] {
            let bad = RequestTemplate {
                headers: vec![(name.into(), value.into())],
                ..RequestTemplate::default()
            };
            let message = bad.serialize(&target).unwrap_err().to_string();
            assert!(message.contains("invalid header"), "{name:?}: {message}");
        }
        let fine = RequestTemplate {
            headers: vec![("X-Odd_Name.1~".into(), "tab\tand ütf-8".into())],
            ..RequestTemplate::default()
        };
        assert!(fine.serialize(&target).is_ok());
    }

    #[test]
    fn a_connection_per_request_asks_the_server_to_close() {
        let target = Endpoint::from_url("http://127.0.0.1:8080/").unwrap();
        let closing = RequestTemplate::default()
            .serialize_with(&target, true)
            .unwrap();
        assert_eq!(
            String::from_utf8(closing).unwrap(),
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\n\r\n"
        );
        let own = RequestTemplate {
            headers: vec![("connection".into(), "keep-alive".into())],
            ..RequestTemplate::default()
        };
        let text = String::from_utf8(own.serialize_with(&target, true).unwrap()).unwrap();
        assert_eq!(text.matches("onnection").count(), 1, "{text}");
    }

    #[test]
    fn validation_names_the_settings() {
        let target = Endpoint::from_url("http://127.0.0.1:1/").unwrap();
        let mut config = LoadConfig::closed(target, 0, Duration::from_secs(1));
        let about = |config: &LoadConfig| match config.validate().unwrap_err() {
            LoadError::Config { settings, message } => (settings, message),
            other => panic!("not a configuration error: {other}"),
        };
        let (settings, message) = about(&config);
        assert_eq!(settings, [Setting::Connections]);
        assert!(
            message.contains("connections must be at least 1"),
            "{message}"
        );
        config.schedule.connections = 2;
        config.threads = 3;
        let (settings, message) = about(&config);
        assert_eq!(settings, [Setting::Threads, Setting::Connections]);
        assert!(
            message.contains("3 threads cannot exceed 2 connections"),
            "{message}"
        );
        config.threads = 1;
        config.schedule = Schedule::open(0.0, 2);
        let (settings, message) = about(&config);
        assert_eq!(settings[0], Setting::Rate);
        assert!(message.starts_with("rate must be"), "{message}");
    }

    #[test]
    fn validation_bounds_every_number() {
        let target = Endpoint::from_url("http://127.0.0.1:1/").unwrap();
        let valid = LoadConfig::closed(target, 2, Duration::from_secs(1));
        assert!(valid.validate().is_ok());
        let hour = Duration::from_secs(3600);
        let cases: [(LoadConfig, &str); 7] = [
            (
                LoadConfig {
                    stop: StopAfter::Duration(1_000_000 * hour),
                    ..valid.clone()
                },
                "duration can be at most 24h",
            ),
            (
                LoadConfig {
                    warmup: 25 * hour,
                    ..valid.clone()
                },
                "warm-up can be at most 24h",
            ),
            (
                LoadConfig {
                    timeout: Duration::MAX,
                    ..valid.clone()
                },
                "timeout can be at most 24h",
            ),
            (
                LoadConfig {
                    stop: StopAfter::Requests(u64::MAX),
                    ..valid.clone()
                },
                "request count must be from 1 to 2^53",
            ),
            (
                LoadConfig {
                    schedule: Schedule::open(1e12, 2),
                    ..valid.clone()
                },
                "rate must be from 0.001 to 2000000",
            ),
            (
                LoadConfig {
                    threads: 5000,
                    schedule: Schedule::closed(10_000),
                    ..valid.clone()
                },
                "threads must be from 1 to 1024",
            ),
            (
                LoadConfig {
                    request: RequestTemplate {
                        body: vec![0; crate::limits::MAX_BODY_BYTES + 1],
                        ..RequestTemplate::default()
                    },
                    ..valid.clone()
                },
                "the request body can be at most 64 MiB",
            ),
        ];
        for (config, expected) in cases {
            let message = config.validate().unwrap_err().to_string();
            assert!(message.contains(expected), "{message}");
        }
    }
}
