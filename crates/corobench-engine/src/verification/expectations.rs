//! The gate of a user's server (a target with `contract = false`): before
//! its first trial it is started once and answers each of its workloads
//! once, and every expectation of the workload (`expect_status`,
//! `expect_body`, `expect_header`) must hold, or the run stops, saying
//! what was expected and what came back. Without expectations, an answer
//! below 400 passes. The answer is asked in the scenario's protocol: HTTP/1.1
//! or HTTP/2, in cleartext or over TLS, so a server whose HTTP/2 answer
//! differs from its HTTP/1.1 one is judged by the answer its trials get.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use corobench_load::{Endpoint, LoadError, RequestTemplate};
use corobench_model::Protocol;
use corobench_spec::{Expectation, Plan, PlannedScenario, Workload};
use corobench_verify::client::{Client, ClientError, Response};
use corobench_verify::h2client::H2Client;
use corobench_verify::transport::Connector;

use crate::connection;
use crate::error::EngineError;
use crate::local::{TrialError, start_or_attach};
use crate::{PreparedRun, RunObserver};

/// How long the one answer may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks every user server of the plan against its workloads.
///
/// # Errors
/// A server that does not start, or whose answer breaks an expectation.
pub fn check_all(
    plan: &Plan,
    prepared: &PreparedRun,
    observer: &dyn RunObserver,
) -> Result<(), EngineError> {
    let mut checked = BTreeSet::new();
    for scenario in plan
        .scenarios
        .iter()
        .filter(|s| is_user_server(prepared, s))
    {
        let protocol = scenario.schedule.protocol;
        if !checked.insert((&scenario.target, &scenario.workload.name, protocol)) {
            continue;
        }
        observer.preparing(&format!(
            "checking {} answers {} as expected",
            scenario.target, scenario.workload.name
        ));
        check_one(prepared, scenario)?;
    }
    Ok(())
}

fn is_user_server(prepared: &PreparedRun, scenario: &PlannedScenario) -> bool {
    scenario.program.is_none()
        && prepared
            .env
            .built
            .get(&scenario.target)
            .is_some_and(|built| !built.manifest.contract)
}

/// Starts the scenario's server, asks once, stops it.
fn check_one(prepared: &PreparedRun, scenario: &PlannedScenario) -> Result<(), EngineError> {
    let env = &prepared.env;
    let protocol = scenario.schedule.protocol;
    let server = start_or_attach(env, &scenario.target, &scenario.parameters, false, protocol)
        .map_err(|error| {
            match error {
                // Where a running server is not as its spec says, the error says
                // so itself, and its kind decides the exit status.
                TrialError::NotThere(source) => EngineError::Target(source),
                error => EngineError::NotChecked {
                    target: scenario.target.clone(),
                    why: error.to_string(),
                },
            }
        })?;
    let body = env
        .bodies
        .get(&scenario.workload.name)
        .cloned()
        .unwrap_or_default();
    let answer = match connection::connector(protocol, &server.trust(env), server.addr()) {
        Some(connector) if protocol.is_h2() => {
            ask_h2(&connector, server.addr(), &scenario.workload, &body)
        }
        Some(connector) => ask(&connector, server.addr(), &scenario.workload, &body),
        None => Err(NoAnswer::Untrusted(protocol)),
    };
    // A command that answered and then went away (it daemonized, or died)
    // would fail every trial: it is refused here, saying why.
    let mut server = server;
    if let Some(why) = server.gone() {
        let _ = server.stop();
        return Err(EngineError::NotChecked {
            target: scenario.target.clone(),
            why,
        });
    }
    let _ = server.stop();
    let problem = match answer {
        Ok(response) => broken_expectation(&scenario.workload.expect, &response),
        Err(why) => Some(format!("no answer: {why}")),
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(EngineError::Expectation {
            target: scenario.target.clone(),
            request: format!("{} {}", scenario.workload.method, scenario.workload.path),
            workload: scenario.workload.name.clone(),
            problem,
        }),
    }
}

/// Why the one request got no answer.
#[derive(Debug, thiserror::Error)]
enum NoAnswer {
    #[error("{0}")]
    Request(#[from] LoadError),
    #[error("{0}")]
    Exchange(#[from] ClientError),
    #[error("the run has no certificate authority to check the server's {0} certificate with")]
    Untrusted(Protocol),
}

/// One request of the workload, serialised by the load generator itself
/// (so the check sends what the trials send), asking the server to close
/// the connection after its answer.
fn ask(
    connector: &Connector,
    addr: SocketAddr,
    workload: &Workload,
    body: &[u8],
) -> Result<Response, NoAnswer> {
    let endpoint = Endpoint::from_url(&format!("http://{addr}{}", workload.path))?;
    let mut headers = workload.headers.clone();
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("connection"))
    {
        headers.push(("Connection".to_owned(), "close".to_owned()));
    }
    let request = RequestTemplate {
        method: workload.method.clone(),
        headers,
        body: body.to_vec(),
    };
    let bytes = request.serialize(&endpoint)?;
    let mut client = Client::connect_with(connector, addr, ANSWER_TIMEOUT)?;
    client.send(&bytes)?;
    Ok(client.read_response_to(&workload.method)?)
}

/// One request of the workload on one HTTP/2 stream, through the verify
/// crate's client (the h2 crate): a framing of its own, so the check does
/// not take the load generator's HTTP/2 on trust.
fn ask_h2(
    connector: &Connector,
    addr: SocketAddr,
    workload: &Workload,
    body: &[u8],
) -> Result<Response, NoAnswer> {
    let mut client = H2Client::connect(connector, addr, ANSWER_TIMEOUT)?;
    Ok(client.exchange_parts(
        &workload.method,
        &workload.path,
        &workload.headers,
        body.to_vec(),
    )?)
}

/// What in `response` breaks `expect`, in words; `None` when it holds.
#[must_use]
pub fn broken_expectation(expect: &Expectation, response: &Response) -> Option<String> {
    let status = response.status;
    match expect.status {
        Some(code) if code != status => {
            return Some(format!(
                "expected status {code}, got {status} (body: {})",
                response.body_excerpt()
            ));
        }
        None if status >= 400 => {
            return Some(format!(
                "got status {status}, an error (body: {}); if that is the answer you mean to \
                 measure, say so with expect_status = {status}",
                response.body_excerpt()
            ));
        }
        _ => {}
    }
    if let Some(piece) = &expect.body
        && !String::from_utf8_lossy(&response.body).contains(piece.as_str())
    {
        return Some(format!(
            "expected the body to hold {piece:?}, got: {}",
            response.body_excerpt()
        ));
    }
    if let Some((name, piece)) = &expect.header {
        let values: Vec<&str> = response.headers_named(name).collect();
        if !values.iter().any(|v| v.contains(piece.as_str())) {
            let got = if values.is_empty() {
                "no such header".to_owned()
            } else {
                values.join(", ")
            };
            return Some(format!(
                "expected header {name} to hold {piece:?}, got: {got}"
            ));
        }
    }
    None
}
