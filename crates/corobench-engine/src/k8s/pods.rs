//! The pods of `corobench k8s run`: one server pod and N generator pods,
//! each running the corobench image idle (`sleep`) for the whole run, so
//! that every trial `kubectl exec`s `corobench serve` into the server pod
//! and `corobench load --start-at` into each generator pod, as a run on
//! `[hosts]` does over SSH. Each pod has Guaranteed QoS and whole CPUs, so
//! that a node with the static CPU manager policy pins it; the target
//! listens on the server pod's own address (`serve --listen`), which the
//! generator pods reach directly.

use std::time::Duration;

use corobench_spec::Plan;
use serde_json::{Value, json};

use super::layout::LayoutOptions;
use super::manifests::{APP_LABEL, COMPONENT_LABEL, guaranteed, spread_from_each_other};

/// The server pod's name.
pub const SERVER_POD: &str = "corobench-server";
/// The container of every pod, which commands are run in.
pub const CONTAINER: &str = "corobench";
/// How long the pods live unless `--pod-lifetime` says otherwise.
pub const POD_LIFETIME: &str = "12h";

/// Everything the pods of a run depend on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodLayout {
    pub namespace: String,
    pub image: String,
    /// Whole CPUs of the server pod (the spec's server CPU count).
    pub server_cpus: u32,
    pub server_memory: String,
    pub generators: u32,
    /// Whole CPUs of each generator pod (the largest generator thread count).
    pub generator_cpus: u32,
    pub generator_memory: String,
    /// The most seconds a pod lives: a forgotten one stops by itself.
    pub lifetime_s: u64,
}

/// The name of generator pod `index`.
#[must_use]
pub fn generator_pod(index: u32) -> String {
    format!("corobench-generator-{index}")
}

impl PodLayout {
    /// The pods of a run of `plan`: the server pod with as many CPUs as the
    /// spec's server CPUs, each generator pod with as many as the largest
    /// generator thread count of its scenarios.
    #[must_use]
    pub fn for_plan(plan: &Plan, cluster: &LayoutOptions, lifetime: Duration) -> Self {
        let threads = plan
            .scenarios
            .iter()
            .map(|s| s.measurement.generator_threads);
        Self {
            namespace: cluster.namespace.clone(),
            image: cluster.image.clone(),
            server_cpus: u32::try_from(plan.server_cpus.len())
                .unwrap_or(u32::MAX)
                .max(1),
            server_memory: cluster.server_memory.clone(),
            generators: cluster.generators,
            generator_cpus: threads.max().unwrap_or(1).max(1),
            generator_memory: cluster.generator_memory.clone(),
            lifetime_s: lifetime.as_secs().max(1),
        }
    }

    /// Every pod's name: the server's first, then the generators' in order.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        std::iter::once(SERVER_POD.to_string())
            .chain((0..self.generators).map(generator_pod))
            .collect()
    }

    /// The pods, in the order of [`Self::names`].
    #[must_use]
    pub fn objects(&self) -> Vec<Value> {
        let server = self.pod(SERVER_POD, "server", self.server_cpus, &self.server_memory);
        std::iter::once(server)
            .chain((0..self.generators).map(|i| {
                let name = generator_pod(i);
                self.pod(
                    &name,
                    "generator",
                    self.generator_cpus,
                    &self.generator_memory,
                )
            }))
            .collect()
    }

    /// One idle pod: `sleep` until its lifetime ends; never restarted, since
    /// a restarted pod would lose the trial running in it.
    fn pod(&self, name: &str, component: &str, cpus: u32, memory: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": { APP_LABEL.0: APP_LABEL.1, COMPONENT_LABEL: component },
            },
            "spec": {
                "restartPolicy": "Never",
                "activeDeadlineSeconds": self.lifetime_s,
                // `sleep` ignores SIGTERM as PID 1: deleting waits only this long.
                "terminationGracePeriodSeconds": 2,
                "affinity": spread_from_each_other(),
                "containers": [{
                    "name": CONTAINER,
                    "image": self.image,
                    "command": ["sleep", self.lifetime_s.to_string()],
                    "resources": guaranteed(cpus, memory),
                }],
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_idle_pinned_pod_per_host() {
        let layout = PodLayout {
            namespace: "bench".into(),
            image: "corobench:1".into(),
            server_cpus: 2,
            server_memory: "2Gi".into(),
            generators: 2,
            generator_cpus: 3,
            generator_memory: "1Gi".into(),
            lifetime_s: 3600,
        };
        assert_eq!(
            layout.names(),
            [SERVER_POD, "corobench-generator-0", "corobench-generator-1"]
        );
        let pods = layout.objects();
        assert_eq!(pods.len(), 3);
        let server = &pods[0]["spec"];
        assert_eq!(server["containers"][0]["command"], json!(["sleep", "3600"]));
        assert_eq!(server["containers"][0]["resources"]["limits"]["cpu"], "2");
        assert_eq!(server["activeDeadlineSeconds"], 3600);
        let generator = &pods[2];
        assert_eq!(generator["metadata"]["name"], "corobench-generator-1");
        assert_eq!(
            generator["spec"]["containers"][0]["resources"]["requests"],
            json!({"cpu": "3", "memory": "1Gi"})
        );
    }
}
