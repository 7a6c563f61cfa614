//! A tiny program target: `corobench-testkit client URL REQUESTS` sends
//! REQUESTS GETs to URL one after another, each on its own connection, and
//! prints its figures as one Go benchmark line, as program targets do.
//! It exits 1 when no request succeeded, 2 on bad arguments.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// What one client run measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClientFigures {
    pub ok: u64,
    pub errors: u64,
    pub elapsed: Duration,
}

impl ClientFigures {
    /// The Go benchmark line for these figures.
    #[must_use]
    pub fn line(&self, requests: u64) -> String {
        let seconds = self.elapsed.as_secs_f64().max(1e-9);
        let mean_ms = seconds * 1e3 / (self.ok + self.errors).max(1) as f64;
        format!(
            "BenchmarkClient/requests={requests}-1\t1\t{} ns/op\t{:.1} req/s\t{mean_ms:.3} mean-ms\t{} ok\t{} errors",
            self.elapsed.as_nanos(),
            self.ok as f64 / seconds,
            self.ok,
            self.errors
        )
    }
}

/// A URL the client cannot send to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} does not start with http://")]
pub struct NotHttp(pub String);

/// Sends `requests` GETs to `url` (`http://HOST:PORT/PATH`).
///
/// # Errors
/// A URL that is not `http://host:port/path`.
pub fn run_client(url: &str, requests: u64) -> Result<ClientFigures, NotHttp> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| NotHttp(url.to_owned()))?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let started = Instant::now();
    let mut figures = ClientFigures::default();
    for _ in 0..requests {
        if get(authority, path).is_ok() {
            figures.ok += 1;
        } else {
            figures.errors += 1;
        }
    }
    figures.elapsed = started.elapsed();
    Ok(figures)
}

/// One GET on its own connection; `Ok` for a 200 answer.
fn get(authority: &str, path: &str) -> std::io::Result<()> {
    let mut stream = TcpStream::connect(authority)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET /{path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    if answer.starts_with(b"HTTP/1.1 200") {
        Ok(())
    } else {
        Err(std::io::Error::other("not a 200 answer"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_a_go_benchmark_line() {
        let figures = ClientFigures {
            ok: 4,
            errors: 0,
            elapsed: Duration::from_millis(2),
        };
        assert_eq!(
            figures.line(4),
            "BenchmarkClient/requests=4-1\t1\t2000000 ns/op\t2000.0 req/s\t0.500 mean-ms\t4 ok\t0 errors"
        );
    }

    #[test]
    fn an_unreachable_server_counts_errors() {
        let figures = run_client("http://127.0.0.1:1/plaintext", 2).unwrap();
        assert_eq!((figures.ok, figures.errors), (0, 2));
        assert!(run_client("ftp://x", 1).is_err());
    }
}
