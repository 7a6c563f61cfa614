//! `corobench-testkit`: serves the contract server as a real target process.
//!
//! ```text
//! PORT=8080 corobench-testkit [--model MODEL] [--fault NAME]... [--max-rate K [--burst-s S]] [--alloc-per-conn BYTES]
//! PORT=0 corobench-testkit knobs [--delay-us N] [--status N] [--chunked] [--h2c] ...
//! ```
//!
//! It reads the contract's environment (`PORT`, `LISTEN_ADDR`, `TARGET_NAME`, `DATA_DIR`,
//! `UPLOAD_DIR`, `DATABASE_URL`; `/db` runs `psql` per request; `TLS_CERT` and
//! `TLS_KEY`, PEM files: then it serves HTTPS on its port; `HTTP_PROTOCOL`
//! `h2` or `h2c`: then it serves HTTP/2 too) and, besides
//! `--fault`, takes faults from `TESTKIT_FAULTS` (comma-separated names).
//!
//! `client URL REQUESTS` is a tiny program target instead: it GETs URL
//! REQUESTS times and prints its figures as a Go benchmark line.
//!
//! `knobs` serves the knob server instead (flags: see
//! `corobench_testkit::knob_args`) and prints `listening on ADDR` on stdout
//! once it listens.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use corobench_testkit::{
    ContractConfig, ContractServer, Fault, PsqlWorld, TestServer, TlsKnobs, WorldSource,
    parse_knob_args, server_config,
};

const USAGE: &str = "usage: PORT=N corobench-testkit [--model MODEL] [--fault NAME]...\n       \
                     PORT=N corobench-testkit knobs [KNOB FLAGS]";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().is_some_and(|first| first == "knobs") {
        args.next();
        return serve_knobs(args);
    }
    if args.peek().is_some_and(|first| first == "client") {
        args.next();
        return client(args);
    }
    let config = match configure(args) {
        Ok(config) => config,
        Err(problem) => {
            eprintln!("corobench-testkit: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let listen = if config.faults.contains(&Fault::IgnoreListenAddr) {
        Ok(std::net::IpAddr::from([127, 0, 0, 1]))
    } else {
        listen_addr()
    };
    let addr = match port().and_then(|port| Ok(SocketAddr::new(listen.clone()?, port))) {
        Ok(addr) => addr,
        Err(problem) => {
            eprintln!("corobench-testkit: {problem}");
            return ExitCode::from(2);
        }
    };
    if config.faults.contains(&Fault::IgnoreSigterm) {
        ignore_sigterm();
    }
    let faults: Vec<&str> = config.faults.iter().map(|f| f.name()).collect();
    match ContractServer::bind(addr, config) {
        Ok(server) => {
            eprintln!(
                "corobench-testkit: serving the contract on {} (faults: {})",
                server.addr(),
                if faults.is_empty() {
                    "none".to_owned()
                } else {
                    faults.join(", ")
                }
            );
            server.wait();
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("corobench-testkit: cannot listen on {addr}: {e}");
            ExitCode::from(3)
        }
    }
}

/// `LISTEN_ADDR`, set by `corobench serve --listen`; 127.0.0.1 without it.
fn listen_addr() -> Result<std::net::IpAddr, String> {
    match std::env::var("LISTEN_ADDR") {
        Ok(text) if !text.is_empty() => text
            .parse()
            .map_err(|_| format!("LISTEN_ADDR={text:?} is not an IP address")),
        _ => Ok(std::net::IpAddr::from([127, 0, 0, 1])),
    }
}

/// `client URL REQUESTS`: the tiny program target.
fn client(mut args: impl Iterator<Item = String>) -> ExitCode {
    let (Some(url), Some(requests)) = (args.next(), args.next().and_then(|n| n.parse().ok()))
    else {
        eprintln!("usage: corobench-testkit client URL REQUESTS");
        return ExitCode::from(2);
    };
    match corobench_testkit::run_client(&url, requests) {
        Ok(figures) => {
            println!("goos: linux\npkg: corobench-testkit");
            println!("{}", figures.line(requests));
            if figures.ok == 0 {
                eprintln!("corobench-testkit client: no request to {url} succeeded");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("corobench-testkit client: {problem}");
            ExitCode::from(2)
        }
    }
}

fn serve_knobs(args: impl Iterator<Item = String>) -> ExitCode {
    let parsed = parse_knob_args(args).map_err(|e| e.to_string());
    let (knobs, port) = match parsed.and_then(|knobs| Ok((knobs, port()?))) {
        Ok(parsed) => parsed,
        Err(problem) => {
            eprintln!("corobench-testkit knobs: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match TestServer::try_start_on(port, knobs) {
        Ok(server) => {
            println!("listening on {}", server.addr());
            // Serves until a signal ends the process.
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!("corobench-testkit knobs: cannot listen on 127.0.0.1:{port}: {e}");
            ExitCode::from(3)
        }
    }
}

fn configure(mut args: impl Iterator<Item = String>) -> Result<ContractConfig, String> {
    let mut config = ContractConfig::default();
    let mut faults = BTreeSet::new();
    if let Ok(names) = std::env::var("TESTKIT_FAULTS") {
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            faults.insert(
                name.parse::<Fault>()
                    .map_err(|e| format!("TESTKIT_FAULTS: {e}"))?,
            );
        }
    }
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or_else(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--fault" => {
                faults.insert(
                    value("--fault")?
                        .parse::<Fault>()
                        .map_err(|e| format!("--fault: {e}"))?,
                );
            }
            "--model" => config.model = value("--model")?,
            "--max-rate" => {
                let rate: f64 = value("--max-rate")?
                    .parse()
                    .map_err(|e| format!("--max-rate: {e}"))?;
                if !(rate.is_finite() && rate > 0.0) {
                    return Err(format!("--max-rate must be a rate above 0, not {rate}"));
                }
                config.max_rate = Some(rate);
            }
            "--burst-s" => {
                let seconds: f64 = value("--burst-s")?
                    .parse()
                    .map_err(|e| format!("--burst-s: {e}"))?;
                if !(seconds.is_finite() && seconds >= 0.0) {
                    return Err(format!("--burst-s takes seconds, 0 or more, not {seconds}"));
                }
                config.burst_s = seconds;
            }
            "--alloc-per-conn" => {
                config.alloc_per_conn = value("--alloc-per-conn")?
                    .parse()
                    .map_err(|e| format!("--alloc-per-conn takes a number of bytes: {e}"))?;
            }
            "-h" | "--help" => return Err("help requested".to_owned()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    config.faults = faults;
    if let Ok(name) = std::env::var("TARGET_NAME") {
        config.target_name = name;
    }
    config.data_dir = std::env::var_os("DATA_DIR").map(PathBuf::from);
    config.upload_dir = std::env::var_os("UPLOAD_DIR").map(PathBuf::from);
    config.world = std::env::var("DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .map(|url| Arc::new(PsqlWorld::new(url)) as Arc<dyn WorldSource>);
    config.http2 = http2_from_env()?;
    config.tls = tls_from_env(config.http2)?;
    if config.http2 && std::env::var("HTTP_PROTOCOL").as_deref() == Ok("h2") && config.tls.is_none()
    {
        return Err(
            "HTTP_PROTOCOL=h2 is HTTP/2 over TLS: set TLS_CERT and TLS_KEY, or use h2c for \
             cleartext HTTP/2"
                .to_owned(),
        );
    }
    if std::env::var("HTTP_PROTOCOL").as_deref() == Ok("h2c") && config.tls.is_some() {
        return Err(
            "HTTP_PROTOCOL=h2c is cleartext HTTP/2: unset TLS_CERT and TLS_KEY, or use h2 over TLS"
                .to_owned(),
        );
    }
    Ok(config)
}

/// `HTTP_PROTOCOL`: `http/1.1` (or unset), `h2` or `h2c`; whether to serve HTTP/2.
fn http2_from_env() -> Result<bool, String> {
    match std::env::var("HTTP_PROTOCOL").as_deref() {
        Err(_) | Ok("" | "http/1.1") => Ok(false),
        Ok("h2" | "h2c") => Ok(true),
        Ok(other) => Err(format!(
            "HTTP_PROTOCOL={other:?} is not served: use http/1.1, h2 or h2c"
        )),
    }
}

/// `TLS_CERT` and `TLS_KEY`: PEM files of the certificate chain and its
/// key; with both set the server speaks HTTPS (ALPN `http/1.1`, and `h2`
/// first when it serves HTTP/2).
fn tls_from_env(http2: bool) -> Result<Option<Arc<rustls::ServerConfig>>, String> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let (cert, key) = match (var("TLS_CERT"), var("TLS_KEY")) {
        (None, None) => return Ok(None),
        (Some(cert), Some(key)) => (cert, key),
        (Some(_), None) | (None, Some(_)) => {
            return Err(
                "TLS_CERT and TLS_KEY go together: set both PEM files to serve \
                        HTTPS, or neither"
                    .to_owned(),
            );
        }
    };
    let read = |name: &str, path: &PathBuf| {
        std::fs::read(path).map_err(|e| format!("{name}={}: cannot read it: {e}", path.display()))
    };
    let mut alpn = vec!["http/1.1".to_owned()];
    if http2 {
        alpn.insert(0, "h2".to_owned());
    }
    let knobs = TlsKnobs {
        alpn,
        ..TlsKnobs::default()
    };
    server_config(&read("TLS_CERT", &cert)?, &read("TLS_KEY", &key)?, &knobs)
        .map(Some)
        .map_err(|e| {
            format!(
                "TLS_CERT={} and TLS_KEY={}: {e}",
                cert.display(),
                key.display()
            )
        })
}

fn port() -> Result<u16, String> {
    let text = std::env::var("PORT")
        .map_err(|_| "PORT is not set: give the TCP port to listen on".to_owned())?;
    text.parse()
        .map_err(|_| format!("PORT={text:?} is not a TCP port number (0..=65535)"))
}

fn ignore_sigterm() {
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler
    // code; it happens before any other thread starts.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    }
}
