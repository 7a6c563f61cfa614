//! What a trial tells its load generators: the one place where a
//! scenario's connection settings (where the server is, the request, the
//! schedule, the measurement) reach the generator, whether it runs in this
//! process ([`load_config`]) or as `corobench load` on a generator host
//! ([`load_args`]: runs over SSH, trials on pods, Kubernetes layouts). A
//! new setting of the connection (a protocol, say) is added to both here.
//! With several generators, each gets its [`share`] of the connections and
//! the rate.

use std::net::SocketAddr;
use std::time::Duration;

use corobench_load::{LoadConfig, LoadError, RequestTemplate, StopAfter};
use corobench_model::{Protocol, Schedule, ScheduleKind};
use corobench_spec::PlannedScenario;

use crate::connection::{self, Trust};
use crate::prepare::TrialEnvironment;

/// The generator's configuration for one trial on this machine: warm-up
/// then the measured window, pinned to the generator CPUs, against the
/// server at `addr`, trusting its certificate as `trust` says.
///
/// # Errors
/// The workload's path does not make a URL with `addr`.
pub fn load_config(
    env: &TrialEnvironment,
    scenario: &PlannedScenario,
    addr: SocketAddr,
    trust: &Trust,
) -> Result<LoadConfig, LoadError> {
    let m = &scenario.measurement;
    Ok(LoadConfig {
        endpoint: connection::endpoint(&scenario.schedule, trust, addr, &scenario.workload.path)?,
        request: RequestTemplate {
            method: scenario.workload.method.clone(),
            headers: scenario.workload.headers.clone(),
            body: env
                .bodies
                .get(&scenario.workload.name)
                .cloned()
                .unwrap_or_default(),
        },
        threads: m.generator_threads,
        schedule: scenario.schedule,
        stop: StopAfter::Duration(m.duration),
        warmup: m.warmup,
        timeout: m.timeout,
        cpus: Some(env.generator_cpus.clone()),
        backend: env.backend,
        http2: connection::http2(&scenario.schedule),
        background: scenario.workload.background.clone(),
    })
}

/// The URL a generator host loads: the server host's `address` (an IPv6
/// one in brackets), the port `corobench serve` reported, the workload's
/// path.
#[must_use]
pub fn server_url(address: &str, port: u16, path: &str) -> String {
    server_url_over(Protocol::HTTP1, address, port, path)
}

/// As [`server_url`], `https://` when `protocol` runs over TLS.
#[must_use]
pub fn server_url_over(protocol: Protocol, address: &str, port: u16, path: &str) -> String {
    let scheme = if protocol.tls { "https" } else { "http" };
    if address.contains(':') {
        format!("{scheme}://[{address}]:{port}{path}")
    } else {
        format!("{scheme}://{address}:{port}{path}")
    }
}

/// The `corobench load` flags of `schedule`'s protocol, as
/// [`connection::endpoint`] and [`connection::http2`] set them for a
/// generator in this process: `--h2` or `--h2c` and the streams, and over
/// TLS the run's authority (`--ca CA`: `-`, read from stdin, which the
/// caller writes, or a file the generator sees) and whether sessions are
/// resumed.
#[must_use]
pub fn protocol_args(schedule: &Schedule, ca: &str) -> Vec<String> {
    let protocol = schedule.protocol;
    let mut args = Vec::new();
    if protocol.is_h2() {
        args.push(if protocol.tls { "--h2" } else { "--h2c" }.to_owned());
        args.extend(["-m".to_owned(), schedule.streams.to_string()]);
    }
    if protocol.tls {
        args.extend(["--ca".to_owned(), ca.to_owned()]);
        if !schedule.tls_resume {
            args.push("--no-tls-resume".to_owned());
        }
    }
    args
}

/// One generator's part of a scenario's load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    pub connections: u32,
    /// Requests a second, for an open loop.
    pub rate: Option<f64>,
}

/// Generator `index` of `count`: the connections split as evenly as they
/// go (the first `total % count` generators take one more), the rate
/// split evenly, so that together they offer the scenario's load.
#[must_use]
pub fn share(scenario: &PlannedScenario, index: usize, count: usize) -> Share {
    let count = u32::try_from(count.max(1)).unwrap_or(u32::MAX);
    let index = u32::try_from(index).unwrap_or(u32::MAX);
    let total = scenario.schedule.connections;
    Share {
        connections: total / count + u32::from(index < total % count),
        rate: split_rate(scenario, count),
    }
}

/// Connections that do not split evenly over generators that all run the
/// same arguments.
#[derive(Debug, thiserror::Error)]
#[error(
    "scenario {scenario} ({key}) opens {total} connections, which do not split evenly into \
     {count} generators running the same arguments: choose a count that divides {total} ({})",
    dividing.join(", ")
)]
pub struct UnevenShare {
    pub scenario: u32,
    pub key: String,
    pub total: u32,
    pub count: u32,
    /// The counts that would divide them, up to 64.
    pub dividing: Vec<String>,
}

/// The one share every generator gets when they all run the same
/// arguments (the pods of one Job).
///
/// # Errors
/// Connections that do not split evenly over `count` generators.
pub fn even_share(scenario: &PlannedScenario, count: u32) -> Result<Share, UnevenShare> {
    let count = count.max(1);
    let total = scenario.schedule.connections;
    if total % count != 0 || total < count {
        return Err(UnevenShare {
            scenario: scenario.index,
            key: scenario.key.to_string(),
            total,
            count,
            dividing: (1..=total.min(64))
                .filter(|n| total % n == 0)
                .map(|n| n.to_string())
                .collect(),
        });
    }
    Ok(Share {
        connections: total / count,
        rate: split_rate(scenario, count),
    })
}

fn split_rate(scenario: &PlannedScenario, count: u32) -> Option<f64> {
    match scenario.schedule.kind {
        ScheduleKind::Closed => None,
        ScheduleKind::Open { rate_per_s } => Some(rate_per_s / f64::from(count)),
    }
}

/// The flags of one generator's `corobench load` for `share`, on event
/// loop `backend`: all but the body, the CPUs, the start and the URL. A
/// generator runs no more threads than it has connections.
#[must_use]
pub fn load_args(scenario: &PlannedScenario, share: Share, backend: &str) -> Vec<String> {
    let m = &scenario.measurement;
    let threads = m.generator_threads.min(share.connections).max(1);
    let mut args: Vec<String> = vec![
        "-c".into(),
        share.connections.to_string(),
        "-t".into(),
        threads.to_string(),
        "-d".into(),
        cli_duration(m.duration),
        "--warmup".into(),
        cli_duration(m.warmup),
        "--timeout".into(),
        cli_duration(m.timeout),
        "--backend".into(),
        backend.to_owned(),
        "--method".into(),
        scenario.workload.method.clone(),
    ];
    if let Some(rate) = share.rate {
        args.extend(["-R".into(), format!("{rate}")]);
    }
    if !scenario.schedule.keepalive {
        args.push("--no-keepalive".into());
    }
    if scenario.schedule.pipeline > 1 {
        args.extend(["--pipeline".into(), scenario.schedule.pipeline.to_string()]);
    }
    for (name, value) in &scenario.workload.headers {
        args.extend(["-H".into(), format!("{name}: {value}")]);
    }
    if let Some(background) = &scenario.workload.background {
        args.extend([
            "--background".into(),
            background.path.clone(),
            "--background-streams".into(),
            background.streams.to_string(),
        ]);
    }
    args
}

/// A request body a generator host cannot be sent.
#[derive(Debug, thiserror::Error)]
#[error(
    "workload {workload} has a binary body, which is not sent to generator hosts yet; use a \
     text body with [hosts]"
)]
pub struct BinaryBody {
    pub workload: String,
}

/// The request body of `workload` as `corobench load` arguments: text
/// travels on the command line.
///
/// # Errors
/// A body that is not text.
pub fn body_args(workload: &str, body: Option<&[u8]>) -> Result<Vec<String>, BinaryBody> {
    let Some(body) = body else {
        return Ok(Vec::new());
    };
    match std::str::from_utf8(body) {
        Ok(text) if !text.contains('\0') => Ok(vec!["--body".into(), text.to_string()]),
        _ => Err(BinaryBody {
            workload: workload.to_owned(),
        }),
    }
}

/// A duration as `corobench load` parses it, without rounding.
#[must_use]
pub fn cli_duration(duration: Duration) -> String {
    if duration.subsec_nanos() % 1_000_000 == 0 {
        format!("{}ms", duration.as_millis())
    } else {
        format!("{}us", duration.as_micros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up() {
        let mut scenario = crate::fakes::plan(1, 1, None, 1).scenarios[0].clone();
        scenario.schedule = corobench_model::Schedule::closed(5);
        let parts: Vec<u32> = (0..3).map(|i| share(&scenario, i, 3).connections).collect();
        assert_eq!(parts, [2, 2, 1]);
        scenario.schedule = corobench_model::Schedule::open(900.0, 4);
        let half = share(&scenario, 1, 2);
        assert_eq!(half.rate, Some(450.0));
        assert_eq!(server_url("fd00::1", 80, "/x"), "http://[fd00::1]:80/x");
    }

    #[test]
    fn a_protocol_reaches_corobench_load_as_its_flags() {
        let url = server_url_over(Protocol::TLS, "10.0.0.2", 8443, "/json");
        assert_eq!(url, "https://10.0.0.2:8443/json");
        assert!(protocol_args(&Schedule::closed(4), "-").is_empty());
        let tls = Schedule::closed(4).with_protocol(Protocol::TLS);
        assert_eq!(protocol_args(&tls, "-"), ["--ca", "-"]);
        assert_eq!(
            protocol_args(&tls.with_tls_resume(false), "-"),
            ["--ca", "-", "--no-tls-resume"]
        );
        let h2c = Schedule::closed(2)
            .with_protocol(Protocol::H2C)
            .with_streams(8);
        assert_eq!(protocol_args(&h2c, "-"), ["--h2c", "-m", "8"]);
        let h2 = h2c.with_protocol(Protocol::H2);
        assert_eq!(
            protocol_args(&h2, "/tls/ca.pem"),
            ["--h2", "-m", "8", "--ca", "/tls/ca.pem"]
        );
    }

    #[test]
    fn durations_keep_their_precision() {
        assert_eq!(cli_duration(Duration::from_secs(10)), "10000ms");
        assert_eq!(cli_duration(Duration::from_micros(1500)), "1500us");
        assert_eq!(cli_duration(Duration::ZERO), "0ms");
    }
}
