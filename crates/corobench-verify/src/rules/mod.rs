//! The rules, run in a fixed order (date-not-cached on its own thread), and
//! the expectations they share.

mod basic;
mod connection;
mod db;
mod endpoints;
mod headers;
mod select1;
mod upload;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;

use crate::client::{Client, Request, Response};
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

/// A rule's verdict before its name is attached; `Err` is a failure.
type Check = Result<Verdict, String>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Pass,
    Warn(String),
}

/// Checks every rule of the contract against the target in `config`.
#[must_use]
pub fn verify(config: &VerifyConfig<'_>) -> Vec<RuleResult> {
    let target = Target {
        addr: config.addr,
        timeout: config.timeout,
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
    RULES
        .iter()
        .map(|rule| {
            let at = checks.iter().position(|(name, _)| name == rule);
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
    let rules: [(&'static str, &dyn Fn() -> Check); 18] = [
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
    rules
        .iter()
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

/// Where the target listens and how long a response may take.
#[derive(Debug, Clone, Copy)]
struct Target {
    addr: SocketAddr,
    timeout: Duration,
}

impl Target {
    /// Sends `request` on a new connection and reads its response.
    fn exchange(self, request: &Request) -> Result<Response, String> {
        self.exchange_within(request, self.timeout)
    }

    fn exchange_within(self, request: &Request, timeout: Duration) -> Result<Response, String> {
        let mut client = self.connect(&request.label())?;
        client.set_timeout(timeout);
        client
            .exchange(request)
            .map_err(|e| format!("{}: {e}", request.label()))
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

    fn connect(self, label: &str) -> Result<Client, String> {
        Client::connect(self.addr, self.timeout).map_err(|e| format!("{label}: {e}"))
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
