//! From a resolved scenario to the [`Layout`] of its trial on a cluster:
//! the scenario's load split over the generators, the flags each generator
//! gets, over TLS the certificates made for it, and what a Pod layout
//! cannot carry refused with the reason.

use std::path::PathBuf;
use std::time::Duration;

use corobench_spec::{Body, Plan, PlannedScenario};

use super::manifests::Layout;
use super::tls;
use crate::generator::{self, UnevenShare};
use crate::protocol::Certificates;

/// The largest body carried inline in the Job's arguments: a Pod spec is
/// stored in etcd, whose objects are limited to about 1.5 MB.
const MAX_INLINE_BODY: usize = 64 * 1024;
/// Time the target gets to start, verify and wait for the generators, on
/// top of the measured time, before a forgotten Pod is stopped.
const TARGET_SLACK: Duration = Duration::from_secs(15 * 60);
/// Time the generators get to be scheduled, pull the image and wait for
/// `T`, on top of the measured time.
const JOB_SLACK: Duration = Duration::from_secs(10 * 60);

/// What a Pod layout cannot carry.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "scenario {index} ({key}) runs a program, not a server under load; Kubernetes layouts \
         carry only servers"
    )]
    Program { index: u32, key: String },
    #[error(
        "scenario {index} ({key}) reads the database, and a Kubernetes layout runs no \
         PostgreSQL beside the target"
    )]
    Database { index: u32, key: String },
    #[error(
        "scenario {index} ({key}) speaks TLS, and its certificates could not be made: {source}"
    )]
    Certificates {
        index: u32,
        key: String,
        source: Box<corobench_target::TargetError>,
    },
    #[error(transparent)]
    Uneven(#[from] UnevenShare),
    #[error("cannot read the body file {}: {source}", path.display())]
    BodyUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the body file {} has {bytes} bytes; a Kubernetes layout carries bodies of at most \
         {MAX_INLINE_BODY} bytes inline in the Job",
        path.display()
    )]
    BodyTooLarge { path: PathBuf, bytes: usize },
    #[error(
        "the body file {} is not UTF-8 text; a Kubernetes layout passes the body as an \
         argument, which must be text",
        path.display()
    )]
    BodyNotText { path: PathBuf },
}

/// What the command line chooses about a layout.
#[derive(Clone, Debug)]
pub struct LayoutOptions {
    pub namespace: String,
    pub image: String,
    pub generators: u32,
    pub server_memory: String,
    pub generator_memory: String,
}

/// The layout of one scenario's trial; over TLS, with a throwaway
/// authority and a certificate for the target's Service made for it.
///
/// # Errors
/// A scenario a Pod layout cannot run (a program, one that needs
/// PostgreSQL), a load that does not split evenly over the generators, an
/// unreadable or too large body file, or certificates that cannot be made.
pub fn layout(
    plan: &Plan,
    scenario: &PlannedScenario,
    options: &LayoutOptions,
) -> Result<Layout, LayoutError> {
    check_runs_in_pods(scenario)?;
    let m = &scenario.measurement;
    let server_cpus = u32::try_from(plan.server_cpus.len())
        .unwrap_or(u32::MAX)
        .max(1);
    let measured = m.warmup + m.duration + m.timeout;
    Ok(Layout {
        namespace: options.namespace.clone(),
        image: options.image.clone(),
        scenario_index: scenario.index,
        scenario_key: scenario.key.to_string(),
        target: scenario.target.clone(),
        parameters: scenario.parameters.clone(),
        protocol: scenario.schedule.protocol,
        certificates: certificates(scenario, &options.namespace)?,
        server_cpus,
        server_memory: options.server_memory.clone(),
        generators: options.generators,
        generator_cpus: m.generator_threads,
        generator_memory: options.generator_memory.clone(),
        load_flags: load_flags(scenario, options.generators)?,
        path: scenario.workload.path.clone(),
        target_deadline_s: (measured + TARGET_SLACK).as_secs(),
        job_deadline_s: (measured + JOB_SLACK).as_secs(),
    })
}

fn check_runs_in_pods(scenario: &PlannedScenario) -> Result<(), LayoutError> {
    let (index, key) = (scenario.index, scenario.key.to_string());
    if scenario.program.is_some() {
        return Err(LayoutError::Program { index, key });
    }
    if scenario.needs_database {
        return Err(LayoutError::Database { index, key });
    }
    Ok(())
}

/// Over TLS, a throwaway authority and a leaf for the target's Service in
/// `namespace`; `None` in cleartext.
fn certificates(
    scenario: &PlannedScenario,
    namespace: &str,
) -> Result<Option<Certificates>, LayoutError> {
    if !scenario.schedule.protocol.tls {
        return Ok(None);
    }
    Certificates::throwaway(&tls::service_names(namespace))
        .map(Some)
        .map_err(|source| LayoutError::Certificates {
            index: scenario.index,
            key: scenario.key.to_string(),
            source,
        })
}

/// The flags of `corobench load` every generator pod runs: the scenario's
/// connections and rate divided evenly, so that together they offer the
/// load the scenario names, not `generators` times it; its protocol, over
/// TLS trusting the authority in the Secret's mount.
fn load_flags(scenario: &PlannedScenario, generators: u32) -> Result<Vec<String>, LayoutError> {
    let share = generator::even_share(scenario, generators)?;
    let backend = scenario.measurement.backend.name();
    let mut flags = generator::load_args(scenario, share, backend);
    flags.extend(generator::protocol_args(
        &scenario.schedule,
        &tls::ca_path(),
    ));
    flags.extend(body_flags(scenario)?);
    Ok(flags)
}

/// The body, as `corobench load` takes it.
fn body_flags(scenario: &PlannedScenario) -> Result<Vec<String>, LayoutError> {
    let body = match &scenario.workload.body {
        Body::Empty => None,
        Body::Text(text) => Some(text.clone()),
        Body::File(path) => Some(inline_body(path)?),
    };
    Ok(body.map_or_else(Vec::new, |body| vec!["--body".to_string(), body]))
}

/// A body file's text, to pass inline: the generator pods do not see the
/// files of the machine that renders.
fn inline_body(path: &std::path::Path) -> Result<String, LayoutError> {
    let bytes = std::fs::read(path).map_err(|source| LayoutError::BodyUnreadable {
        path: path.to_owned(),
        source,
    })?;
    if bytes.len() > MAX_INLINE_BODY {
        return Err(LayoutError::BodyTooLarge {
            path: path.to_owned(),
            bytes: bytes.len(),
        });
    }
    String::from_utf8(bytes).map_err(|_| LayoutError::BodyNotText {
        path: path.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use corobench_model::{Protocol, Schedule};
    use serde_json::Value;

    use super::*;

    /// The layout of a scenario of the fake plan speaking `protocol` with
    /// 8 streams (over HTTP/2), for two generators in namespace `bench`.
    fn laid_out(protocol: Protocol) -> Layout {
        let plan = crate::fakes::plan(1, 1, None, 1);
        let mut scenario = plan.scenarios[0].clone();
        let mut schedule = Schedule::closed(4).with_protocol(protocol);
        if protocol.is_h2() {
            schedule = schedule.with_streams(8);
        }
        scenario.schedule = schedule;
        let options = LayoutOptions {
            namespace: "bench".into(),
            image: "corobench:1".into(),
            generators: 2,
            server_memory: "2Gi".into(),
            generator_memory: "1Gi".into(),
        };
        layout(&plan, &scenario, &options).unwrap()
    }

    /// A container's arguments, joined by spaces (none holds one here).
    fn args(container: &Value) -> String {
        serde_json::from_value::<Vec<String>>(container["args"].clone())
            .unwrap()
            .join(" ")
    }

    #[test]
    fn cleartext_http2_is_served_and_loaded_with_its_streams_and_no_secret() {
        let layout = laid_out(Protocol::H2C);
        assert!(layout.tls_secret().is_none());
        let pod = layout.target_pod();
        let serve = args(&pod["spec"]["containers"][0]);
        assert!(serve.ends_with(" --protocol h2c"), "{serve}");
        assert!(pod["spec"]["volumes"].is_null());
        let job = layout.generator_job();
        let load = args(&job["spec"]["template"]["spec"]["containers"][0]);
        assert!(load.contains(" --h2c -m 8 "), "{load}");
        assert!(!load.contains("--ca"), "{load}");
        assert!(
            load.ends_with(" http://corobench-target:8080/plaintext"),
            "{load}"
        );
        let port = &layout.service()["spec"]["ports"][0];
        assert_eq!(port["appProtocol"], "kubernetes.io/h2c");
        assert_eq!(layout.target_objects().len(), 2);
    }

    #[test]
    fn http2_over_tls_mounts_the_secret_and_trusts_its_authority_alone() {
        let layout = laid_out(Protocol::H2);
        let secret = layout.tls_secret().expect("a Secret over TLS");
        assert_eq!(secret["type"], "kubernetes.io/tls");
        assert_eq!(secret["metadata"]["name"], "corobench-tls");
        let cert = secret["stringData"]["tls.crt"].as_str().unwrap();
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"), "{cert}");
        let pod = layout.target_pod();
        let container = &pod["spec"]["containers"][0];
        let serve = args(container);
        assert!(
            serve.ends_with(" --protocol h2 --tls-dir /etc/corobench/tls"),
            "{serve}"
        );
        assert_eq!(container["volumeMounts"][0]["readOnly"], true);
        let volume = &pod["spec"]["volumes"][0]["secret"];
        assert_eq!(volume["secretName"], "corobench-tls");
        let generator = &layout.generator_job()["spec"]["template"]["spec"];
        let load = args(&generator["containers"][0]);
        assert!(
            load.contains(" --h2 -m 8 --ca /etc/corobench/tls/ca.pem "),
            "{load}"
        );
        assert!(
            load.ends_with(" https://corobench-target:8080/plaintext"),
            "{load}"
        );
        let mount = &generator["containers"][0]["volumeMounts"][0];
        assert_eq!(mount["mountPath"], "/etc/corobench/tls");
        let kinds: Vec<Value> = layout
            .target_objects()
            .iter()
            .map(|o| o["kind"].clone())
            .collect();
        assert_eq!(kinds, ["Secret", "Service", "Pod"]);
    }

    #[test]
    fn cleartext_http1_carries_no_protocol_flag() {
        let layout = laid_out(Protocol::HTTP1);
        let pod = layout.target_pod();
        let serve = args(&pod["spec"]["containers"][0]);
        assert!(!serve.contains("--protocol"), "{serve}");
        assert!(!layout.load_flags.iter().any(|f| f.starts_with("--h2")));
        assert_eq!(layout.service()["spec"]["ports"][0]["name"], "http");
    }
}
