//! The rules, run in a fixed order (date-not-cached on its own thread), and
//! the expectations they share.

mod basic;
mod connection;
mod db;
mod endpoints;
mod h2;
mod headers;
mod select1;
mod tls;
mod upload;

use std::net::SocketAddr;
use std::time::Duration;

use corobench_target::{Protocol, TlsFiles};
use serde_json::Value;

use crate::client::{Client, ClientError, Request, Response};
use crate::h2client::H2Client;
use crate::transport::Connector;
use crate::{Outcome, RuleResult, VerifyConfig};

/// Every rule [`verify`] reports, in its order.
pub const RULES: [&str; 20] = [
    "healthz",
    "plaintext",
    "json",
    "header-server",
    "header-date",
    "date-not-cached",
    "header-content-type",
    "header-content-length",
    "keep-alive",
    "pipelining",
    "io",
    "db",
    "select1",
    "file",
    "upload",
    "mixed",
    "stats",
    "not-found",
    "bad-parameter",
    "method-not-allowed",
];

/// The rules checked only over TLS, before the others.
pub const TLS_RULES: [&str; 3] = ["tls-certificate", "tls-alpn", "tls-refuses-cleartext"];

/// The rules checked only over HTTP/2, before the others.
pub const H2_RULES: [&str; 3] = ["h2-settings", "h2-hpack", "h2-concurrent-streams"];

/// Rules about HTTP/1.1 connection handling, which HTTP/2 replaces with
/// streams: not checked over HTTP/2.
pub const HTTP1_ONLY_RULES: [&str; 2] = ["keep-alive", "pipelining"];

/// Every rule [`verify`] reports for a target that speaks `protocol`, in its order.
#[must_use]
pub fn rules_for(protocol: Protocol) -> Vec<&'static str> {
    let tls: &[&str] = if protocol.tls { &TLS_RULES } else { &[] };
    let h2: &[&str] = if protocol.is_h2() { &H2_RULES } else { &[] };
    let http1 = RULES
        .iter()
        .filter(|rule| !(protocol.is_h2() && HTTP1_ONLY_RULES.contains(rule)));
    tls.iter().chain(h2).chain(http1).copied().collect()
}

/// A rule's verdict before its name is attached; `Err` is a failure.
type Check = Result<Verdict, String>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Pass,
    Warn(String),
}

/// Checks every rule of the contract against the target in `config`, in
/// the protocol it names.
#[must_use]
pub fn verify(config: &VerifyConfig<'_>) -> Vec<RuleResult> {
    let rules = rules_for(config.protocol);
    let link = match Link::new(config) {
        Ok(link) => link,
        Err(message) => {
            return rules
                .into_iter()
                .map(|rule| result(rule, Err(message.clone())))
                .collect();
        }
    };
    let target = Target {
        addr: config.addr,
        timeout: config.timeout,
        link: &link,
    };
    let database = config.database;
    let mut checks: Vec<(&'static str, Check)> = std::thread::scope(|scope| {
        let date = scope.spawn(move || headers::date_not_cached(target));
        // After the sweep, whose own GET /db would blur the read count.
        let sweep = headers::Sweep::collect(target);
        let db = scope.spawn(move || db::db(target, database));
        let mut checks = run_quick_rules(target, config, &sweep);
        checks.push(("date-not-cached", joined(date)));
        checks.push(("db", joined(db)));
        checks
    });
    rules
        .into_iter()
        .map(|rule| {
            let at = checks.iter().position(|(name, _)| *name == rule);
            let check = at.map_or_else(
                || Err("not checked".to_owned()),
                |at| checks.swap_remove(at).1,
            );
            result(rule, check)
        })
        .collect()
}

fn joined(check: std::thread::ScopedJoinHandle<'_, Check>) -> Check {
    check
        .join()
        .unwrap_or_else(|_| Err("the check itself panicked".to_owned()))
}

/// What a rule not checked because verification was cancelled says.
const INTERRUPTED: &str = "not checked: verification was interrupted";

/// The rules other than date-not-cached and db, one after the other; once
/// `config` is cancelled, the rest are reported as interrupted at once.
fn run_quick_rules(
    target: Target,
    config: &VerifyConfig<'_>,
    sweep: &headers::Sweep,
) -> Vec<(&'static str, Check)> {
    let keep_alive = std::cell::OnceCell::new();
    let keep_alive = || {
        keep_alive
            .get_or_init(|| connection::keep_alive(target))
            .clone()
    };
    let files = || {
        config
            .tls
            .ok_or_else(|| "no certificates were given to check against".to_owned())
    };
    let rules: [(&'static str, &dyn Fn() -> Check); 24] = [
        ("tls-certificate", &|| tls::certificate(target, files()?)),
        ("tls-alpn", &|| tls::alpn(target, files()?)),
        ("tls-refuses-cleartext", &|| tls::refuses_cleartext(target)),
        ("h2-settings", &|| h2::settings(target)),
        ("h2-hpack", &|| h2::hpack(target)),
        ("h2-concurrent-streams", &|| h2::concurrent_streams(target)),
        ("healthz", &|| basic::healthz(target)),
        ("plaintext", &|| basic::plaintext(target)),
        ("json", &|| basic::json(target)),
        ("header-server", &|| sweep.server(config.target_name)),
        ("header-date", &|| sweep.date()),
        ("header-content-type", &|| sweep.content_type()),
        ("header-content-length", &|| sweep.content_length()),
        ("keep-alive", &keep_alive),
        ("pipelining", &|| {
            connection::pipelining(target, &keep_alive())
        }),
        ("io", &|| endpoints::io(target)),
        ("select1", &|| {
            select1::select1(target, config.database.is_some())
        }),
        ("file", &|| endpoints::file(target)),
        ("upload", &|| upload::upload(target)),
        ("mixed", &|| endpoints::mixed(target)),
        ("stats", &|| endpoints::stats(target, config.model)),
        ("not-found", &|| basic::not_found(target)),
        ("bad-parameter", &|| basic::bad_parameter(target)),
        ("method-not-allowed", &|| basic::method_not_allowed(target)),
    ];
    let checked = rules_for(config.protocol);
    rules
        .iter()
        .filter(|(name, _)| checked.contains(name))
        .map(|(name, rule)| {
            let check = if config.cancelled() {
                Err(INTERRUPTED.to_owned())
            } else {
                rule()
            };
            (*name, check)
        })
        .collect()
}

fn result(rule: &'static str, check: Check) -> RuleResult {
    let outcome = match check {
        Ok(Verdict::Pass) => Outcome::Pass,
        Ok(Verdict::Warn(message)) => Outcome::Warn(format!("{rule}: {message}")),
        Err(message) => Outcome::Fail(format!("{rule}: {message}")),
    };
    RuleResult { rule, outcome }
}

/// How the rules reach the target: the protocol, and the connector that
/// offers its ALPN id over TLS and trusts only the run's authority.
#[derive(Debug)]
struct Link {
    protocol: Protocol,
    connector: Connector,
}

impl Link {
    fn new(config: &VerifyConfig<'_>) -> Result<Self, String> {
        let protocol = config.protocol;
        if !protocol.tls {
            return Ok(Self {
                protocol,
                connector: Connector::Plain,
            });
        }
        let files: &TlsFiles = config.tls.ok_or_else(|| {
            format!("{protocol} runs over TLS, but no certificates were given to check against")
        })?;
        // Over h2, HTTP/1.1 is offered too, so that a server without h2
        // shows by agreeing on it (and is told so) instead of refusing.
        let offered: &[&[u8]] = if protocol.is_h2() {
            &[b"h2", b"http/1.1"]
        } else {
            &[b"http/1.1"]
        };
        let tls = files
            .client_config(offered)
            .map_err(|e| format!("cannot trust the run's authority: {e}"))?;
        Ok(Self {
            protocol,
            connector: Connector::Tls {
                config: tls,
                name: corobench_target::tls::server_name(config.addr.ip()),
            },
        })
    }
}

/// One connection that carries several requests: HTTP/1.1 kept alive, or
/// the streams of one HTTP/2 connection.
#[derive(Debug)]
enum Session {
    Http1(Client),
    H2(Box<H2Client>),
}

impl Session {
    fn exchange(&mut self, request: &Request) -> Result<Response, ClientError> {
        match self {
            Self::Http1(client) => client.exchange(request),
            Self::H2(client) => client.exchange(request),
        }
    }
}

/// Where the target listens, how it is reached and how long a response may take.
#[derive(Debug, Clone, Copy)]
struct Target<'a> {
    addr: SocketAddr,
    timeout: Duration,
    link: &'a Link,
}

impl Target<'_> {
    /// Sends `request` on a new connection and reads its response.
    fn exchange(self, request: &Request) -> Result<Response, String> {
        self.exchange_within(request, self.timeout)
    }

    fn exchange_within(self, request: &Request, timeout: Duration) -> Result<Response, String> {
        let (_session, response) = self.session_within(request, timeout)?;
        Ok(response)
    }

    /// Opens a connection in the target's protocol and exchanges `request`
    /// on it, keeping the connection for what the rule sends next.
    fn session_with(self, request: &Request) -> Result<(Session, Response), String> {
        self.session_within(request, self.timeout)
    }

    fn session_within(
        self,
        request: &Request,
        timeout: Duration,
    ) -> Result<(Session, Response), String> {
        let label = request.label();
        let mut session = if self.link.protocol.is_h2() {
            let client = H2Client::connect(&self.link.connector, self.addr, timeout)
                .map_err(|e| format!("{label}: {e}"))?;
            Session::H2(Box::new(client))
        } else {
            let mut client = self.connect(&label)?;
            client.set_timeout(timeout);
            Session::Http1(client)
        };
        let response = session
            .exchange(request)
            .map_err(|e| format!("{label}: {e}"))?;
        Ok((session, response))
    }

    fn get(self, target: &str) -> Result<Response, String> {
        self.exchange(&Request::get(target))
    }

    /// Opens a connection and exchanges `request` on it, keeping the
    /// connection for what the rule sends next.
    fn open_with(self, request: &Request) -> Result<(Client, Response), String> {
        let label = request.label();
        let mut client = self.connect(&label)?;
        let response = client
            .exchange(request)
            .map_err(|e| format!("{label}: {e}"))?;
        Ok((client, response))
    }

    /// An HTTP/1.1 connection (over TLS when the protocol is).
    fn connect(self, label: &str) -> Result<Client, String> {
        Client::connect_with(&self.link.connector, self.addr, self.timeout)
            .map_err(|e| format!("{label}: {e}"))
    }
}

fn expect_status(label: &str, response: &Response, status: u16) -> Result<(), String> {
    if response.status == status {
        return Ok(());
    }
    Err(format!(
        "{label}: expected status {status}, got {} (body {})",
        response.status,
        response.body_excerpt()
    ))
}

fn expect_body(label: &str, response: &Response, body: &[u8]) -> Result<(), String> {
    expect_status(label, response, 200)?;
    if response.body == body {
        return Ok(());
    }
    Err(format!(
        "{label}: expected body {}, got {}",
        String::from_utf8_lossy(body),
        response.body_excerpt()
    ))
}

/// The body as JSON.
fn json_body(label: &str, response: &Response) -> Result<Value, String> {
    serde_json::from_slice(&response.body).map_err(|e| {
        format!(
            "{label}: expected a JSON body, got {} ({e})",
            response.body_excerpt()
        )
    })
}

/// A `200` whose JSON body equals `expected` (field order aside).
fn expect_json(label: &str, response: &Response, expected: &Value) -> Result<(), String> {
    expect_status(label, response, 200)?;
    if json_body(label, response).is_ok_and(|body| body == *expected) {
        return Ok(());
    }
    Err(format!(
        "{label}: expected body {expected}, got {}",
        response.body_excerpt()
    ))
}

/// An error response: `status` and `{"error":"…"}`, the text naming
/// `parameter` when given.
fn expect_error(
    label: &str,
    response: &Response,
    status: u16,
    parameter: Option<&str>,
) -> Result<(), String> {
    expect_status(label, response, status)?;
    let body = json_body(label, response)?;
    let Some(message) = body.get("error").and_then(Value::as_str) else {
        return Err(format!(
            "{label}: expected a body {{\"error\":\"…\"}}, got {}",
            response.body_excerpt()
        ));
    };
    match parameter {
        Some(name) if !message.contains(name) => Err(format!(
            "{label}: expected an error message naming {name}, got {message:?}"
        )),
        _ => Ok(()),
    }
}
