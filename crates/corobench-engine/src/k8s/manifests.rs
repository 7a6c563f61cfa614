//! The Kubernetes objects of one trial layout, as JSON values (`kubectl`
//! reads JSON as well as YAML, and no YAML serializer is among our
//! dependencies):
//!
//! - the target: a Pod with Guaranteed QoS and whole CPUs, so that a node
//!   with the static CPU manager policy gives it exclusive, pinned CPUs,
//!   running `corobench serve`;
//! - a headless Service, so generators reach the Pod by name without a
//!   kube-proxy hop;
//! - the generators: an Indexed Job whose every pod runs `corobench load
//!   --json --start-at T` at once;
//! - the ConfigMap that carries `T`, made when the trial starts;
//! - over TLS, the Secret with the target's certificate ([`super::tls`]).
//!
//! Targets listen on 127.0.0.1 (docs/contract.md). An init container adds a
//! DNAT rule in the Pod's network namespace that sends the Pod's port to
//! the loopback port, with `route_localnet` set by a Pod sysctl: the kernel
//! rewrites the packets, so no user-space relay sits in the measured path
//! and nothing shares the target's CPUs.

use std::collections::BTreeMap;

use corobench_model::Protocol;
use serde_json::{Value, json};

use super::tls;
use crate::generator;
use crate::protocol::Certificates;

/// The port the target listens on inside its Pod, and the Service's port.
pub const TARGET_PORT: u16 = 8080;
/// Name of the target Pod and of the Service in front of it.
pub const TARGET_NAME: &str = "corobench-target";
/// Name of the generators' Job.
pub const JOB_NAME: &str = "corobench-generators";
/// Name of the ConfigMap that carries the start instant.
pub const START_AT_CONFIG_MAP: &str = "corobench-start-at";
/// The ConfigMap's key holding `T` in Unix seconds.
pub const START_AT_KEY: &str = "start-at";
/// The generator container, whose log holds the report.
pub const LOAD_CONTAINER: &str = "load";
/// The target container, whose log holds `corobench serve`'s JSON lines.
pub const SERVE_CONTAINER: &str = "serve";
/// Every object of a layout carries this label, so one selector finds them all.
pub const APP_LABEL: (&str, &str) = ("app.kubernetes.io/name", "corobench");
/// The sysctl that lets packets from outside be routed to 127.0.0.0/8.
pub const ROUTE_LOCALNET_SYSCTL: &str = "net.ipv4.conf.all.route_localnet";

pub(super) const COMPONENT_LABEL: &str = "app.kubernetes.io/component";
const SCENARIO_LABEL: &str = "corobench.dev/scenario";
const SCENARIO_KEY_ANNOTATION: &str = "corobench.dev/scenario-key";
const START_AT_ENV: &str = "COROBENCH_START_AT";

/// Everything the manifests of one trial depend on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub namespace: String,
    pub image: String,
    pub scenario_index: u32,
    pub scenario_key: String,
    pub target: String,
    /// The parameters the spec gave (the target's defaults fill the rest).
    pub parameters: BTreeMap<String, String>,
    /// What the target serves and the generators speak.
    pub protocol: Protocol,
    /// Over TLS, the Secret's certificates, made for this layout.
    pub certificates: Option<Certificates>,
    /// Whole CPUs of the target Pod (the spec's server CPU count).
    pub server_cpus: u32,
    pub server_memory: String,
    pub generators: u32,
    /// Whole CPUs of each generator pod (its thread count).
    pub generator_cpus: u32,
    pub generator_memory: String,
    /// The flags of `corobench load` for one generator, without `--start-at` and the URL.
    pub load_flags: Vec<String>,
    /// The request path, e.g. `/plaintext`.
    pub path: String,
    /// The most seconds the target Pod may live: a forgotten one is stopped.
    pub target_deadline_s: u64,
    /// The most seconds the Job may run, waiting for `T` included.
    pub job_deadline_s: u64,
}

impl Layout {
    /// The URL every generator loads: the Service's name, resolved in the
    /// namespace, so that every report names the same URL and merges.
    #[must_use]
    pub fn url(&self) -> String {
        generator::server_url_over(self.protocol, TARGET_NAME, TARGET_PORT, &self.path)
    }

    /// The name of the Service's and the container's port, which tools
    /// that read the traffic (service meshes) take as its protocol.
    fn port_name(&self) -> &'static str {
        match (self.protocol.tls, self.protocol.is_h2()) {
            (true, _) => "https",
            (false, true) => "http2",
            (false, false) => "http",
        }
    }

    fn labels(&self, component: &str) -> Value {
        json!({
            APP_LABEL.0: APP_LABEL.1,
            COMPONENT_LABEL: component,
            SCENARIO_LABEL: self.scenario_index.to_string(),
        })
    }

    fn metadata(&self, name: &str, component: &str) -> Value {
        json!({
            "name": name,
            "namespace": self.namespace,
            "labels": self.labels(component),
            "annotations": { SCENARIO_KEY_ANNOTATION: self.scenario_key },
        })
    }

    /// The objects that stay for the whole trial, in the order to apply them.
    #[must_use]
    pub fn target_objects(&self) -> Vec<Value> {
        let secret = self.tls_secret();
        secret
            .into_iter()
            .chain([self.service(), self.target_pod()])
            .collect()
    }

    /// Over TLS, the Secret the target serves its certificate from and the
    /// generators take the authority from; `None` in cleartext.
    #[must_use]
    pub fn tls_secret(&self) -> Option<Value> {
        let certificates = self.certificates.as_ref()?;
        Some(tls::secret(
            self.metadata(tls::TLS_SECRET, "tls"),
            certificates,
        ))
    }

    /// The headless Service: DNS answers with the Pod's own address.
    #[must_use]
    pub fn service(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.metadata(TARGET_NAME, "target"),
            "spec": {
                "clusterIP": "None",
                "selector": { APP_LABEL.0: APP_LABEL.1, COMPONENT_LABEL: "target" },
                "ports": [self.service_port()],
            },
        })
    }

    /// The Service's one port; cleartext HTTP/2 says so with the
    /// application protocol Kubernetes defines for it.
    fn service_port(&self) -> Value {
        let mut port = json!({
            "name": self.port_name(), "port": TARGET_PORT, "targetPort": TARGET_PORT, "protocol": "TCP",
        });
        if self.protocol.is_h2() && !self.protocol.tls {
            port["appProtocol"] = json!("kubernetes.io/h2c");
        }
        port
    }

    /// `corobench serve`'s arguments: the target, its port and parameters,
    /// and what it serves (over TLS, the certificate in the Secret's mount).
    fn serve_args(&self) -> Vec<String> {
        let mut args = vec![
            "serve".to_string(),
            self.target.clone(),
            "--port".to_string(),
            TARGET_PORT.to_string(),
        ];
        for (name, value) in &self.parameters {
            args.push("--param".to_string());
            args.push(format!("{name}={value}"));
        }
        if !self.protocol.is_http1() {
            args.extend(["--protocol".to_string(), self.protocol.name().to_string()]);
        }
        if self.certificates.is_some() {
            args.extend(["--tls-dir".to_string(), tls::TLS_DIR.to_string()]);
        }
        args
    }

    /// The target Pod: `corobench serve` on exclusive CPUs.
    #[must_use]
    pub fn target_pod(&self) -> Value {
        let mut pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": self.metadata(TARGET_NAME, "target"),
            "spec": {
                // A target that stops is a failed trial, never restarted.
                "restartPolicy": "Never",
                "activeDeadlineSeconds": self.target_deadline_s,
                "affinity": spread_from_each_other(),
                "securityContext": { "sysctls": [{ "name": ROUTE_LOCALNET_SYSCTL, "value": "1" }] },
                "initContainers": [self.expose_loopback()],
                "containers": [{
                    "name": SERVE_CONTAINER,
                    "image": self.image,
                    "command": ["corobench"],
                    "args": self.serve_args(),
                    // serve stops when stdin closes; an open, never-written
                    // stdin keeps it up until the Pod is deleted (SIGTERM).
                    "stdin": true,
                    "ports": [{ "name": self.port_name(), "containerPort": TARGET_PORT, "protocol": "TCP" }],
                    "resources": guaranteed(self.server_cpus, &self.server_memory),
                    // Probed through the DNAT rule, so Ready also proves
                    // that other pods can reach the loopback listener.
                    "readinessProbe": {
                        "tcpSocket": { "port": TARGET_PORT },
                        "periodSeconds": 1,
                        "failureThreshold": 3,
                    },
                }],
            },
        });
        if self.certificates.is_some() {
            mount_tls(&mut pod["spec"], tls::target_volume());
        }
        pod
    }

    /// The init container that forwards the Pod's port to the loopback
    /// listener inside the kernel. Its own CPU is whole too: a Pod is
    /// Guaranteed only if every container, init containers included, is.
    fn expose_loopback(&self) -> Value {
        let port = TARGET_PORT.to_string();
        json!({
            "name": "expose-loopback",
            "image": self.image,
            "command": [
                "iptables", "-t", "nat", "-A", "PREROUTING", "-p", "tcp", "--dport", port,
                "-j", "DNAT", "--to-destination", format!("127.0.0.1:{port}"),
            ],
            "securityContext": { "capabilities": { "add": ["NET_ADMIN", "NET_RAW"] } },
            "resources": guaranteed(1, "64Mi"),
        })
    }

    /// The generators: `generators` pods at once, each loading its share.
    #[must_use]
    pub fn generator_job(&self) -> Value {
        let mut args = vec![
            "load".to_string(),
            "--json".to_string(),
            "--start-at".to_string(),
            format!("$({START_AT_ENV})"),
        ];
        args.extend(self.load_flags.iter().cloned());
        args.push(self.url());
        let mut job = json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": self.metadata(JOB_NAME, "generator"),
            "spec": {
                "completionMode": "Indexed",
                "completions": self.generators,
                "parallelism": self.generators,
                // A retried generator would measure another window than its peers.
                "backoffLimit": 0,
                "activeDeadlineSeconds": self.job_deadline_s,
                "template": {
                    "metadata": { "labels": self.labels("generator") },
                    "spec": {
                        "restartPolicy": "Never",
                        "affinity": spread_from_each_other(),
                        "containers": [{
                            "name": LOAD_CONTAINER,
                            "image": self.image,
                            "command": ["corobench"],
                            "args": args,
                            "env": [{
                                "name": START_AT_ENV,
                                "valueFrom": { "configMapKeyRef": { "name": START_AT_CONFIG_MAP, "key": START_AT_KEY } },
                            }],
                            "resources": guaranteed(self.generator_cpus, &self.generator_memory),
                        }],
                    },
                },
            },
        });
        if self.certificates.is_some() {
            mount_tls(
                &mut job["spec"]["template"]["spec"],
                tls::generator_volume(),
            );
        }
        job
    }

    /// The ConfigMap holding the start instant `T`, as `corobench load
    /// --start-at` takes it.
    #[must_use]
    pub fn start_at_config_map(&self, start_at: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": self.metadata(START_AT_CONFIG_MAP, "start-at"),
            "data": { START_AT_KEY: start_at },
        })
    }
}

/// Gives the pod `spec` the Secret's `volume`, mounted read-only into its
/// one container.
fn mount_tls(spec: &mut Value, volume: Value) {
    spec["volumes"] = json!([volume]);
    spec["containers"][0]["volumeMounts"] = json!([tls::mount()]);
}

/// Requests equal to limits, CPU whole: Guaranteed QoS, pinnable.
pub(super) fn guaranteed(cpus: u32, memory: &str) -> Value {
    let amounts = json!({ "cpu": cpus.to_string(), "memory": memory });
    json!({ "requests": amounts, "limits": amounts })
}

/// Prefer a node of their own for every pod of the layout, so that
/// generators and target do not contend for a node's network and memory
/// bandwidth; only preferred, so a small cluster still runs the trial.
pub(super) fn spread_from_each_other() -> Value {
    json!({
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 100,
                "podAffinityTerm": {
                    "labelSelector": { "matchLabels": { APP_LABEL.0: APP_LABEL.1 } },
                    "topologyKey": "kubernetes.io/hostname",
                },
            }],
        },
    })
}

/// A `v1` List of objects: one document `kubectl apply -f -` reads at once.
#[must_use]
pub fn list(items: Vec<Value>) -> Value {
    json!({ "apiVersion": "v1", "kind": "List", "items": items })
}
