//! `corobench k8s run SPEC`: a spec run on a cluster exactly as `corobench
//! run` runs it (rounds, interleaving, `--until-ci`, budget, resume,
//! claims, every trial stored, the report at the end), with pods as its
//! hosts: one server pod and `--generators` generator pods, made idle
//! before the first trial and reached with `kubectl exec`. Every object is
//! deleted afterwards, whatever happened.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use corobench_engine::RunObserver;
use corobench_engine::k8s::Kubectl;
use corobench_engine::k8s::kubectl::DELETE_CALL;
use corobench_engine::k8s::manifests::{APP_LABEL, list};
use corobench_engine::k8s::pods::{CONTAINER, POD_LIFETIME, PodLayout, SERVER_POD};
use corobench_engine::transport::kubectl::pod_host;
use corobench_model::HostProvenance;
use corobench_spec::{Hosts, Plan};
use serde_json::Value;

use super::{ClusterArgs, check_namespace};
use crate::commands::run::{self, HostMaker, MadeHosts, RunArgs};
use crate::exit::{Exit, Failure};
use crate::signals;

/// Time between two looks at the cluster while waiting.
const POLL: Duration = Duration::from_secs(2);
/// How long the pods may take to be scheduled, pull the image and start.
const READY_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Flags of `corobench k8s run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Needs kubectl with a context whose cluster can run the image \
    (see docs/distributed.md). The run is stored in the results database like any \
    `corobench run`: `corobench report`, `runs` and `compare` read it.\n\n\
    Examples:\n  \
    corobench k8s run spec.toml --generators 4 --image registry.example/corobench:1\n  \
    corobench k8s run spec.toml --until-ci 3% --context bench --namespace corobench\n  \
    corobench k8s run --resume latest --image registry.example/corobench:1"
)]
pub struct ClusterRunArgs {
    #[command(flatten)]
    pub run: RunArgs,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    /// kubectl context to use [default: kubectl's current context]
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// corobench's path inside the image
    #[arg(long, default_value = "corobench", value_name = "PATH")]
    pub corobench: String,

    /// The longest the pods live: a run that outlives them fails its last
    /// trials, and pods a killed corobench left behind stop by themselves
    #[arg(long, default_value = POD_LIFETIME, value_parser = corobench_spec::parse_duration, value_name = "DURATION")]
    pub pod_lifetime: Duration,
}

/// Runs `corobench k8s run`.
///
/// # Errors
/// As `corobench run`; no reachable cluster (exit 3), pods that do not
/// start, an interruption (exit 130).
pub fn run(args: &ClusterRunArgs) -> anyhow::Result<Exit> {
    check_namespace(&args.cluster.namespace)?;
    // Ctrl-C is handled from the start: it ends a kubectl call that hangs.
    let stop = signals::stop_flag()?;
    let kubectl = Kubectl::new(
        args.context.clone(),
        args.cluster.namespace.clone(),
        CONTAINER,
        Arc::clone(&stop),
    );
    kubectl.check_reachable()?;
    let mut pods = ClusterPods {
        args,
        kubectl: &kubectl,
        made: false,
    };
    let outcome = run::run_on(&args.run, stop, Some(&mut pods));
    // Deleting comes first: nothing may keep running, whatever happened.
    let deleted = pods.delete();
    match (outcome, deleted) {
        (Ok(exit), deleted) => deleted.map(|()| exit),
        (Err(error), Err(not_deleted)) => {
            eprintln!("error: {not_deleted:#}");
            Err(error)
        }
        (Err(error), Ok(())) => Err(error),
    }
}

/// The pods of one `k8s run`, made when the run needs its hosts.
struct ClusterPods<'a> {
    args: &'a ClusterRunArgs,
    kubectl: &'a Kubectl,
    /// Objects may exist: they must be deleted.
    made: bool,
}

impl HostMaker for ClusterPods<'_> {
    fn command(&self) -> &'static str {
        "corobench k8s run"
    }

    fn make(
        &mut self,
        plan: &Plan,
        stop: &AtomicBool,
        observer: &dyn RunObserver,
    ) -> anyhow::Result<MadeHosts> {
        let layout =
            PodLayout::for_plan(plan, &self.args.cluster.options(), self.args.pod_lifetime);
        observer.preparing(&format!(
            "creating {} pods in namespace {}",
            layout.names().len(),
            layout.namespace
        ));
        self.made = true;
        delete_all(self.kubectl, true)?;
        self.kubectl.apply(&list(layout.objects()))?;
        observer.preparing("waiting for the pods to run");
        let pods = wait_running(self.kubectl, &layout.names(), stop)?;
        self.hosts(&pods)
    }
}

impl ClusterPods<'_> {
    /// The running pods as the run's hosts: the target listens on the
    /// server pod's address, which the generator pods load.
    fn hosts(&self, pods: &[Pod]) -> anyhow::Result<MadeHosts> {
        let (server, generators) = pods.split_first().context("no server pod")?;
        let hosts = Hosts {
            server: pod_host(&server.name),
            generators: generators.iter().map(|p| pod_host(&p.name)).collect(),
            server_cpus: None,
            generator_cpus: vec![None; generators.len()],
            server_address: server.ip.clone(),
            listen: server.ip.clone(),
            corobench: Some(self.args.corobench.clone()),
            install_dir: "/tmp".to_string(),
            targets_dir: None,
            ssh_config: None,
        };
        let described = pods
            .iter()
            .map(|pod| HostProvenance {
                node: Some(pod.node.clone()),
                image: Some(pod.image.clone()),
                ..HostProvenance::default()
            })
            .collect();
        Ok(MadeHosts {
            hosts,
            transport: Box::new(self.kubectl.transport()),
            described,
        })
    }

    /// Deletes every object once; the next call has nothing to do.
    fn delete(&mut self) -> anyhow::Result<()> {
        if std::mem::take(&mut self.made) {
            // Also after a Ctrl-C: only the time limit ends it.
            delete_all(self.kubectl, false)?;
        }
        Ok(())
    }
}

impl Drop for ClusterPods<'_> {
    fn drop(&mut self) {
        if let Err(error) = self.delete() {
            eprintln!("error: {error:#}");
        }
    }
}

/// Deletes every object with corobench's label, and waits until they are
/// gone: the run's pods, and whatever a layout of `k8s render` applied by
/// hand left (its Service, Job, ConfigMap, and over TLS its Secret with a
/// private key); `interruptible`: a Ctrl-C ends the wait (not in the clean-up).
fn delete_all(kubectl: &Kubectl, interruptible: bool) -> anyhow::Result<()> {
    let selector = format!("{}={}", APP_LABEL.0, APP_LABEL.1);
    kubectl
        .run_within(
            &[
                "delete",
                "pod,service,job,configmap,secret",
                "-l",
                &selector,
                "--ignore-not-found",
                "--wait",
            ],
            None,
            DELETE_CALL,
            interruptible,
        )
        .map(drop)
        .context("cannot delete the run's objects; delete them by hand (label app.kubernetes.io/name=corobench)")
}

/// A running pod, as the cluster describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pod {
    name: String,
    ip: String,
    node: String,
    image: String,
}

/// Waits until every pod of `names` runs, in that order; a pod that ends
/// first fails the wait, and so does the user's Ctrl-C.
fn wait_running(
    kubectl: &Kubectl,
    names: &[String],
    stop: &AtomicBool,
) -> anyhow::Result<Vec<Pod>> {
    let selector = format!("{}={}", APP_LABEL.0, APP_LABEL.1);
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Failure {
                exit: Exit::Interrupted,
                message: "interrupted while waiting for the pods to run".to_string(),
            }
            .into());
        }
        let listed = kubectl.get_json(&["pods", "-l", &selector])?;
        if let Some(pods) = running(&listed, names)? {
            return Ok(pods);
        }
        if Instant::now() >= deadline {
            anyhow::bail!(
                "the pods did not all run within {} s; see `kubectl describe pod {SERVER_POD}`",
                READY_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(POLL);
    }
}

/// Every pod of `names`, when all run; `None` while some do not yet.
///
/// # Errors
/// A pod that ended (it will never run a trial).
fn running(listed: &Value, names: &[String]) -> anyhow::Result<Option<Vec<Pod>>> {
    let items = listed["items"].as_array().map_or(&[][..], Vec::as_slice);
    let mut found = Vec::with_capacity(names.len());
    for name in names {
        let Some(pod) = items
            .iter()
            .find(|p| p["metadata"]["name"] == name.as_str())
        else {
            return Ok(None);
        };
        let phase = pod["status"]["phase"].as_str().unwrap_or("Unknown");
        if matches!(phase, "Failed" | "Succeeded") {
            anyhow::bail!(
                "pod {name} ended ({phase}) before the run started: {}",
                pod["status"]["message"].as_str().unwrap_or("no message")
            );
        }
        let ip = pod["status"]["podIP"].as_str().unwrap_or_default();
        if phase != "Running" || ip.is_empty() {
            return Ok(None);
        }
        let status = &pod["status"]["containerStatuses"][0];
        let image = status["imageID"]
            .as_str()
            .filter(|id| !id.is_empty())
            .or_else(|| pod["spec"]["containers"][0]["image"].as_str())
            .unwrap_or_default();
        found.push(Pod {
            name: name.clone(),
            ip: ip.to_string(),
            node: pod["spec"]["nodeName"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            image: image.to_string(),
        });
    }
    Ok(Some(found))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, phase: &str, ip: &str) -> Value {
        json!({
            "metadata": {"name": name},
            "spec": {"nodeName": "node-1", "containers": [{"image": "corobench:1"}]},
            "status": {"phase": phase, "podIP": ip, "containerStatuses": [{"imageID": ""}]},
        })
    }

    #[test]
    fn pods_are_hosts_once_all_run_and_an_ended_one_fails() {
        let names = vec!["a".to_string(), "b".to_string()];
        let pending = json!({"items": [pod("a", "Running", "10.0.0.1"), pod("b", "Pending", "")]});
        assert_eq!(running(&pending, &names).unwrap(), None);
        let up =
            json!({"items": [pod("b", "Running", "10.0.0.2"), pod("a", "Running", "10.0.0.1")]});
        let pods = running(&up, &names).unwrap().unwrap();
        assert_eq!(pods[0].ip, "10.0.0.1");
        assert_eq!(pods[1].name, "b");
        assert_eq!(pods[1].image, "corobench:1");
        assert_eq!(pods[1].node, "node-1");
        let ended = json!({"items": [pod("a", "Failed", ""), pod("b", "Running", "10.0.0.2")]});
        let error = running(&ended, &names).unwrap_err().to_string();
        assert!(error.starts_with("pod a ended (Failed)"), "{error}");
    }
}
