//! `corobench k8s run SPEC`: one trial of each scenario on a cluster,
//! through the user's `kubectl`: the target Pod up and verified, a start
//! instant `T` chosen, the generators' Job run to completion, each
//! generator's report read from its pod's log, all merged exactly, and
//! every object deleted afterwards, whatever happened.
//!
//! The trials are not stored in a results database: the reports, the
//! target's log and the merged report are written to files instead.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use clap::Args;
use corobench_model::LoadReport;
use serde_json::Value;

use super::LayoutArgs;
use super::kubectl::Kubectl;
use super::layout::layout;
use super::logs::{report_in_log, serve_is_ready, tail};
use super::manifests::{
    APP_LABEL, JOB_NAME, LOAD_CONTAINER, Layout, SERVE_CONTAINER, TARGET_NAME, list,
};
use crate::exit::{self, Exit, Failure};
use crate::output::{load_summary, merge_summary};
use crate::signals;

/// Time between two looks at the cluster while waiting.
const POLL: Duration = Duration::from_secs(2);
/// How long the target may take to be scheduled, pull the image, build,
/// start and verify.
const READY_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// The annotation the Job controller puts on each pod: its index.
const INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";

/// Flags of `corobench k8s run`.
#[derive(Debug, Args)]
#[command(
    after_help = "Needs kubectl with a context whose cluster can run the image \
    (see docs/distributed.md). Each trial's files go to RESULTS/scenario-N: generator-I.json \
    (one per generator), serve.log (the target's log) and merged.json. The trials are not \
    stored in a results database.\n\n\
    Examples:\n  \
    corobench k8s run spec.toml --generators 4 --image registry.example/corobench:1\n  \
    corobench k8s run spec.toml --scenario 2 --context bench --namespace corobench"
)]
pub struct ClusterRunArgs {
    #[command(flatten)]
    pub layout: LayoutArgs,

    /// kubectl context to use [default: kubectl's current context]
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// How far ahead the generators' start instant is set once the target
    /// is ready: enough for every generator pod to be scheduled and connected
    #[arg(long, default_value = "20s", value_parser = corobench_spec::parse_duration, value_name = "DURATION")]
    pub lead: Duration,

    /// Folder for each trial's reports and logs
    #[arg(long, default_value = "k8s-results", value_name = "DIR")]
    pub results: PathBuf,
}

/// Runs `corobench k8s run`.
///
/// # Errors
/// A spec or scenario a layout cannot run (exit 2), no reachable cluster
/// (exit 3), a trial that failed (exit 1), an interruption (exit 130).
pub fn run(args: &ClusterRunArgs) -> anyhow::Result<Exit> {
    let plan = args.layout.plan()?;
    let options = args.layout.options();
    let layouts = args
        .layout
        .scenarios(&plan)?
        .into_iter()
        .map(|scenario| layout(&plan, scenario, &options))
        .collect::<anyhow::Result<Vec<Layout>>>()?;
    let kubectl = Kubectl::new(args.context.clone(), options.namespace.clone());
    kubectl.check_reachable()?;
    let stop = signals::stop_flag()?;
    let mut failed = 0;
    for layout in &layouts {
        let dir = args
            .results
            .join(format!("scenario-{}", layout.scenario_index));
        eprintln!(
            "scenario {} ({}): {} generator(s)",
            layout.scenario_index, layout.scenario_key, layout.generators
        );
        let outcome = Trial {
            kubectl: &kubectl,
            layout,
            stop: &stop,
        }
        .run(args.lead, &dir);
        // Deleting comes first: nothing may keep running, whatever happened.
        delete_layout(&kubectl)?;
        match outcome {
            Ok(merged) => print!(
                "{}",
                merge_summary::render(&merged, &load_summary::DEFAULT_PERCENTILES)
            ),
            Err(error) if stop.load(Ordering::Relaxed) => return Err(error),
            Err(error) => {
                eprintln!("scenario {} failed: {error:#}", layout.scenario_index);
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(exit::check_failed(format!(
            "{failed} of {} trial(s) failed (reasons above)",
            layouts.len()
        )));
    }
    Ok(Exit::Success)
}

/// Deletes every object a layout made, and waits until they are gone.
fn delete_layout(kubectl: &Kubectl) -> anyhow::Result<()> {
    let selector = format!("{}={}", APP_LABEL.0, APP_LABEL.1);
    kubectl
        .run(
            &[
                "delete",
                "pod,service,job,configmap",
                "-l",
                &selector,
                "--ignore-not-found",
                "--wait",
            ],
            None,
        )
        .map(drop)
        .context("cannot delete the trial's objects; delete them by hand (label app.kubernetes.io/name=corobench)")
}

/// One trial of one layout.
struct Trial<'a> {
    kubectl: &'a Kubectl,
    layout: &'a Layout,
    stop: &'a Arc<AtomicBool>,
}

impl Trial<'_> {
    fn run(&self, lead: Duration, dir: &Path) -> anyhow::Result<LoadReport> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        delete_layout(self.kubectl)?;
        self.kubectl.apply(&list(self.layout.target_objects()))?;
        let ready = self.wait_for_target();
        self.save_serve_log(dir);
        ready?;
        let start_at = start_instant(SystemTime::now(), lead);
        eprintln!("target ready; the generators' window opens at Unix second {start_at}");
        self.kubectl.apply(&list(vec![
            self.layout.start_at_config_map(&start_at.to_string()),
            self.layout.generator_job(),
        ]))?;
        self.wait_for_generators()?;
        self.save_serve_log(dir);
        let reports = self.collect_reports(dir)?;
        let merged = crate::commands::merge::merge_files(&reports)?;
        let path = dir.join("merged.json");
        std::fs::write(&path, serde_json::to_string_pretty(&merged)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(merged)
    }

    /// Polls until `f` says done, the time is up, or the user interrupts.
    fn poll<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut f: impl FnMut() -> anyhow::Result<Option<T>>,
    ) -> anyhow::Result<T> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Err(Failure {
                    exit: Exit::Interrupted,
                    message: format!("interrupted while waiting for {what}"),
                }
                .into());
            }
            if let Some(done) = f()? {
                return Ok(done);
            }
            if Instant::now() >= deadline {
                anyhow::bail!("{what} did not happen within {}s", timeout.as_secs());
            }
            std::thread::sleep(POLL);
        }
    }

    /// Until the Pod is Ready and `corobench serve` has announced the
    /// target (built, healthy, verified); a Pod that ends first fails.
    fn wait_for_target(&self) -> anyhow::Result<()> {
        self.poll("the target to be ready", READY_TIMEOUT, || {
            let pod = self.kubectl.get_json(&["pod", TARGET_NAME])?;
            let phase = pod["status"]["phase"].as_str().unwrap_or("Unknown");
            if matches!(phase, "Failed" | "Succeeded") {
                anyhow::bail!(
                    "the target Pod ended ({phase}) before it was ready; its log ends with:\n{}",
                    tail(&self.serve_log(), 20)
                );
            }
            Ok((is_ready(&pod) && serve_is_ready(&self.serve_log())).then_some(()))
        })
    }

    fn serve_log(&self) -> String {
        self.kubectl
            .run(&["logs", TARGET_NAME, "-c", SERVE_CONTAINER], None)
            .unwrap_or_default()
    }

    /// Keeps the target's log beside the reports; best effort, since the
    /// log is evidence, not a result.
    fn save_serve_log(&self, dir: &Path) {
        let path = dir.join("serve.log");
        if let Err(error) = std::fs::write(&path, self.serve_log()) {
            eprintln!("warning: cannot write {}: {error}", path.display());
        }
    }

    /// Until every generator succeeded; any failure fails the trial, since
    /// the Job never retries.
    fn wait_for_generators(&self) -> anyhow::Result<()> {
        let timeout = Duration::from_secs(self.layout.job_deadline_s) + Duration::from_secs(60);
        let wanted = u64::from(self.layout.generators);
        self.poll("the generators to finish", timeout, || {
            let job = self.kubectl.get_json(&["job", JOB_NAME])?;
            let failed = job["status"]["failed"].as_u64().unwrap_or(0);
            if failed > 0 || has_condition(&job, "Failed") {
                anyhow::bail!(
                    "{failed} generator(s) failed:\n{}",
                    self.failed_generator_logs()
                );
            }
            let succeeded = job["status"]["succeeded"].as_u64().unwrap_or(0);
            Ok((succeeded >= wanted).then_some(()))
        })
    }

    fn failed_generator_logs(&self) -> String {
        let Ok(pods) = self.generator_pods() else {
            return "  (their pods could not be listed)".to_string();
        };
        pods.iter()
            .filter(|(_, _, phase)| phase == "Failed")
            .map(|(index, name, _)| {
                format!(
                    "generator {index} ({name}):\n{}",
                    tail(&self.log_of(name), 12)
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn log_of(&self, pod: &str) -> String {
        self.kubectl
            .run(&["logs", pod, "-c", LOAD_CONTAINER], None)
            .unwrap_or_default()
    }

    /// Index, name and phase of each generator pod, by index.
    fn generator_pods(&self) -> anyhow::Result<Vec<(u32, String, String)>> {
        let selector = format!("job-name={JOB_NAME}");
        let pods = self.kubectl.get_json(&["pods", "-l", &selector])?;
        let mut found: Vec<(u32, String, String)> = pods["items"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|pod| {
                let meta = &pod["metadata"];
                let index = meta["annotations"][INDEX_ANNOTATION]
                    .as_str()?
                    .parse()
                    .ok()?;
                let name = meta["name"].as_str()?.to_string();
                let phase = pod["status"]["phase"]
                    .as_str()
                    .unwrap_or("Unknown")
                    .to_string();
                Some((index, name, phase))
            })
            .collect();
        found.sort();
        Ok(found)
    }

    /// Each succeeded generator's report, written as `generator-I.json`.
    fn collect_reports(&self, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
        let pods = self.generator_pods()?;
        let mut paths = Vec::new();
        for (index, name, _) in pods.iter().filter(|(_, _, phase)| phase == "Succeeded") {
            let report = report_in_log(&self.log_of(name))
                .map_err(|why| anyhow::anyhow!("generator {index} ({name}): {why}"))?;
            let path = dir.join(format!("generator-{index}.json"));
            std::fs::write(&path, report)
                .with_context(|| format!("cannot write {}", path.display()))?;
            paths.push(path);
        }
        if paths.len() != self.layout.generators as usize {
            anyhow::bail!(
                "{} generator report(s) found, {} expected",
                paths.len(),
                self.layout.generators
            );
        }
        Ok(paths)
    }
}

/// `T`: `lead` from now, on a whole second (the merged timeline is cut
/// into whole wall-clock seconds).
fn start_instant(now: SystemTime, lead: Duration) -> u64 {
    let at = now.duration_since(UNIX_EPOCH).unwrap_or_default() + lead;
    at.as_secs() + u64::from(at.subsec_nanos() > 0)
}

fn has_condition(object: &Value, kind: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

fn is_ready(pod: &Value) -> bool {
    has_condition(pod, "Ready")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_instant_is_a_whole_second_at_least_lead_ahead() {
        let now = UNIX_EPOCH + Duration::from_millis(1_000_500);
        assert_eq!(start_instant(now, Duration::from_secs(20)), 1021);
        let whole = UNIX_EPOCH + Duration::from_secs(1000);
        assert_eq!(start_instant(whole, Duration::from_secs(20)), 1020);
    }

    #[test]
    fn conditions_are_read_from_status() {
        let pod = serde_json::json!({"status": {"conditions": [
            {"type": "Initialized", "status": "True"},
            {"type": "Ready", "status": "False"},
        ]}});
        assert!(!is_ready(&pod));
        assert!(has_condition(&pod, "Initialized"));
        assert!(!has_condition(&serde_json::json!({}), "Failed"));
    }
}
