//! Where a run's trials run: on this machine, on the spec's `[hosts]` over
//! SSH, or on hosts a command makes for the run (`corobench k8s run`'s
//! pods). Whichever it is, the hosts are made ready the same way (probed,
//! versions checked, clocks compared) and the same executor runs the
//! trials through their transport.

use std::sync::atomic::AtomicBool;

use corobench_engine::RunObserver;
use corobench_engine::hosts::ReadyHosts;
use corobench_engine::transport::{Ssh, Transport};
use corobench_model::HostProvenance;
use corobench_spec::{Hosts, Plan};

use crate::exit;

/// Hosts a command made for a run.
#[derive(Debug)]
pub struct MadeHosts {
    pub hosts: Hosts,
    pub transport: Box<dyn Transport>,
    /// What the maker knows of each host, server first: its node and image.
    pub described: Vec<HostProvenance>,
}

/// A maker of hosts for a run whose spec has no `[hosts]`.
pub trait HostMaker {
    /// The command that runs and resumes such runs, e.g. `corobench k8s run`.
    fn command(&self) -> &'static str;

    /// Makes hosts for `plan`, ready to be reached; `stop` is the user's
    /// Ctrl-C.
    ///
    /// # Errors
    /// The hosts could not be made, or the user stopped the wait.
    fn make(
        &mut self,
        plan: &Plan,
        stop: &AtomicBool,
        observer: &dyn RunObserver,
    ) -> anyhow::Result<MadeHosts>;
}

/// A spec with `[hosts]` names its own hosts: a maker's would be ignored.
pub(super) fn refuse_both(plan: &Plan, maker: Option<&dyn HostMaker>) -> anyhow::Result<()> {
    match (maker, &plan.hosts) {
        (Some(maker), Some(_)) => Err(exit::usage(format!(
            "the spec has [hosts], and `{}` makes the hosts of its run itself: remove \
             [hosts] from the spec, or run it with `corobench run`",
            maker.command()
        ))),
        _ => Ok(()),
    }
}

/// The run's hosts, ready, with their clocks compared with this one's;
/// `None` for a run on this machine. A maker's hosts become the plan's.
pub(super) fn ready_hosts(
    plan: &mut Plan,
    maker: Option<&mut dyn HostMaker>,
    stop: &AtomicBool,
    observer: &dyn RunObserver,
) -> anyhow::Result<Option<ReadyHosts>> {
    let made = match (maker, &plan.hosts) {
        (Some(maker), _) => maker.make(plan, stop, observer)?,
        (None, Some(hosts)) => MadeHosts {
            transport: Box::new(Ssh {
                config: hosts.ssh_config.clone(),
            }),
            hosts: hosts.clone(),
            described: Vec::new(),
        },
        (None, None) => return Ok(None),
    };
    plan.hosts = Some(made.hosts.clone());
    let mut ready = corobench_engine::hosts::connect(&made.hosts, made.transport, observer)?;
    for (host, described) in ready.provenance.iter_mut().zip(&made.described) {
        host.node.clone_from(&described.node);
        host.image.clone_from(&described.image);
    }
    corobench_engine::hosts::check_clocks(&mut ready, shortest_window(plan), observer)?;
    Ok(Some(ready))
}

/// The shortest measured window of the plan's scenarios.
fn shortest_window(plan: &Plan) -> std::time::Duration {
    plan.scenarios
        .iter()
        .map(|s| s.measurement.duration)
        .min()
        .unwrap_or_default()
}
