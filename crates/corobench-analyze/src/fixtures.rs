//! Runs, scenarios and trials in memory, with the values a test chooses:
//! for the tests of the analysis and of the crates that call it.

use std::collections::BTreeMap;

use corobench_model::{
    ErrorCounts, GeneratorUsage, LatencyHistogram, LoadReport, LoadWarning, ProgramMetric,
    ProgramResult, ProgramScenario, Provenance, ResourceSample, ResourceSummary, RunRecord,
    RunStatus, ScenarioRecord, ScheduleKind, StatusCounts, TrialFlag, TrialRecord, TrialStatus,
    WorkloadRecord,
};
use corobench_model::{PrecisionGoal, StoredRun};

/// A run under construction: scenarios are added, then trials with values.
#[derive(Debug)]
pub struct RunBuilder {
    run: StoredRun,
}

impl RunBuilder {
    pub fn new(id: &str, trials_per_scenario: u32) -> Self {
        Self {
            run: StoredRun {
                run: RunRecord {
                    id: id.to_owned(),
                    started_at_unix_ms: 1_700_000_000_000,
                    finished_at_unix_ms: Some(1_700_000_100_000),
                    status: RunStatus::Complete,
                    suite: "test".to_owned(),
                    spec_toml: String::new(),
                    seed: 1,
                    provenance: Provenance {
                        cpu_model: "test-cpu".to_owned(),
                        kernel: "6.1.0".to_owned(),
                        ..Provenance::default()
                    },
                    claims: Vec::new(),
                    baseline: None,
                    capacity: None,
                    precision_goal: None,
                },
                trials_per_scenario,
                scenarios: Vec::new(),
                trials: Vec::new(),
                profiles: Vec::new(),
            },
        }
    }

    /// Adds a closed-loop scenario; `parameters` as `name=value` strings.
    pub fn scenario(
        mut self,
        target: &str,
        parameters: &[&str],
        workload: &str,
        connections: u32,
    ) -> Self {
        let parameters: BTreeMap<String, String> = parameters
            .iter()
            .map(|p| {
                let (name, value) = p.split_once('=').expect("name=value");
                (name.to_owned(), value.to_owned())
            })
            .collect();
        let mut key = target.to_owned();
        for (name, value) in &parameters {
            key.push_str(&format!("/{name}={value}"));
        }
        key.push_str(&format!("/{workload}/c={connections}"));
        let index = u32::try_from(self.run.scenarios.len()).unwrap();
        self.run.scenarios.push(ScenarioRecord {
            index,
            key: key.into(),
            target: target.to_owned(),
            parameters,
            workload: WorkloadRecord {
                name: workload.to_owned(),
                method: "GET".to_owned(),
                path: format!("/{workload}"),
                body_bytes: 0,
                idle: false,
                background: None,
            },
            schedule: ScheduleKind::Closed,
            connections,
            wire: corobench_model::WireMode::default(),
            protocol: corobench_model::Protocol::HTTP1,
            warmup_s: 1.0,
            duration_s: 2.0,
            program: None,
        });
        self
    }

    /// The last scenario added, speaking `protocol` with `streams` and
    /// `tls_resume` (its key gains what its schedule's key would).
    pub fn speaking(
        mut self,
        protocol: corobench_model::Protocol,
        streams: u32,
        tls_resume: bool,
    ) -> Self {
        if let Some(scenario) = self.run.scenarios.last_mut() {
            scenario.protocol = protocol;
            scenario.wire.streams = streams;
            scenario.wire.tls_resume = tls_resume;
            let schedule = scenario.schedule();
            let key = format!("{}/{}", scenario.target, scenario.workload.name);
            scenario.key = format!("{key}/{}", schedule.key()).into();
        }
        self
    }

    /// The last scenario added keeps `path` in flight on one background
    /// stream per connection, under the workload name `name`.
    pub fn beside(mut self, name: &str, path: &str) -> Self {
        if let Some(scenario) = self.run.scenarios.last_mut() {
            scenario.workload.name = name.to_owned();
            scenario.workload.background = Some(corobench_model::BackgroundRecord {
                path: path.to_owned(),
                streams: 1,
            });
            let schedule = scenario.schedule();
            scenario.key = format!("{}/{name}/{}", scenario.target, schedule.key()).into();
        }
        self
    }

    /// One `ok` trial per value of req/s for the last scenario added.
    pub fn rates(mut self, rates: &[f64]) -> Self {
        for &rate in rates {
            // The latency a closed loop over 4 connections has at this rate
            // (Little's law), so the trials are consistent.
            let latency_us = (4e6 / rate.max(1e-3)).round() as u64;
            let trial = self.next_trial(TrialStatus::Ok, Some(load(rate, &[latency_us])));
            self.run.trials.push(trial);
        }
        self
    }

    /// One `ok` trial per value of a program figure in `unit`, for the last
    /// scenario added, which becomes a program scenario.
    pub fn figures(mut self, unit: &str, values: &[f64]) -> Self {
        if let Some(scenario) = self.run.scenarios.last_mut() {
            scenario.program = Some(ProgramScenario::default());
        }
        for &value in values {
            let mut trial = self.next_trial(TrialStatus::Ok, None);
            trial.program = Some(ProgramResult {
                metrics: vec![ProgramMetric {
                    unit: unit.to_owned(),
                    value,
                }],
                lines: Vec::new(),
                elapsed_s: 1.0,
                resources: None,
            });
            self.run.trials.push(trial);
        }
        self
    }

    /// A failed trial for the last scenario added.
    pub fn failed(mut self, why: &str) -> Self {
        let mut trial = self.next_trial(TrialStatus::Failed, None);
        trial.failure = Some(why.to_owned());
        self.run.trials.push(trial);
        self
    }

    /// Changes the last trial added.
    pub fn edit_last(mut self, edit: impl FnOnce(&mut TrialRecord)) -> Self {
        edit(self.run.trials.last_mut().expect("a trial was added"));
        self
    }

    /// The req/s precision the run aimed for: `until_ci` as a fraction,
    /// and a budget in seconds when it had one.
    #[must_use]
    pub fn goal(mut self, fraction: f64, budget_s: Option<f64>) -> Self {
        self.run.run.precision_goal = Some(PrecisionGoal { fraction, budget_s });
        self
    }

    pub fn build(self) -> StoredRun {
        self.run
    }

    fn next_trial(&self, status: TrialStatus, load: Option<LoadReport>) -> TrialRecord {
        let scenario_index = u32::try_from(self.run.scenarios.len() - 1).unwrap();
        let trial_index = self
            .run
            .trials
            .iter()
            .filter(|t| t.scenario_index == scenario_index)
            .count();
        let rss_bytes = 10 << 20;
        let started = TrialRecord::started(
            scenario_index,
            u32::try_from(trial_index).unwrap(),
            u32::try_from(self.run.trials.len()).unwrap(),
            1_700_000_000_000,
        );
        TrialRecord {
            status,
            resources: load.as_ref().map(|_| ResourceSummary {
                samples: 2,
                cpu_pct_mean: 50.0,
                // 30 and 20 clock ticks over the 1 s window: a split
                // that is shown.
                cpu_user_pct_mean: 30.0,
                cpu_system_pct_mean: 20.0,
                rss_peak_bytes: rss_bytes,
                ..ResourceSummary::default()
            }),
            resource_series: vec![ResourceSample {
                t_ms: 100,
                cpu_user_pct: 40.0,
                cpu_system_pct: 10.0,
                rss_bytes,
                ..ResourceSample::default()
            }],
            load,
            ..started
        }
    }
}

/// A load report with this req/s and these latencies recorded.
pub fn load(requests_per_s: f64, latencies_us: &[u64]) -> LoadReport {
    let mut histogram = LatencyHistogram::new();
    for &us in latencies_us {
        histogram.record_us(us);
    }
    LoadReport {
        schema_version: 1,
        url: "http://127.0.0.1:1/".to_owned(),
        method: "GET".to_owned(),
        backend: "epoll".to_owned(),
        placement: corobench_model::WindowPlacement::default(),
        threads: 1,
        connections: 4,
        schedule: ScheduleKind::Closed,
        wire: corobench_model::WireMode::default(),
        warmup_s: 0.0,
        elapsed_s: 1.0,
        requests: requests_per_s as u64,
        requests_per_s,
        bytes_read: 0,
        bytes_written: 0,
        read_bytes_per_s: 0.0,
        status: StatusCounts::default(),
        errors: ErrorCounts::default(),
        error_rate: 0.0,
        latency: histogram.report(),
        latency_uncorrected: None,
        open_loop: None,
        connect_latency: None,
        reconnects: 0,
        generator: GeneratorUsage {
            threads: 1,
            cpu_user_s: 0.1,
            cpu_system_s: 0.1,
            cpu_us_per_request: 1.0,
            utilization: 0.2,
            max_rss_bytes: 0,
        },
        drain: None,
        ready_s: None,
        kernel_stamps: None,
        timeline: Vec::new(),
        warnings: Vec::new(),
        merged: None,
        counters: None,
        probe_mb_per_s: None,
        tls: None,
        http2: None,
    }
}

/// Marks a trial generator-bound as the runner does.
pub fn generator_bound(trial: &mut TrialRecord) {
    trial
        .flags
        .push(TrialFlag::GeneratorBound { utilization: 0.97 });
    if let Some(load) = trial.load.as_mut() {
        load.warnings
            .push(LoadWarning::GeneratorBound { utilization: 0.97 });
    }
}

/// Marks an open-loop trial whose schedule was not kept as the runner
/// does: the load's warning, and the flag `TrialFlag::of_load` raises.
pub fn schedule_not_kept(trial: &mut TrialRecord) {
    if let Some(load) = trial.load.as_mut() {
        load.warnings.push(LoadWarning::ScheduleNotKept {
            max_send_lag_us: 42_000,
            bound_us: 10_000,
        });
        trial.flags = TrialFlag::of_load(load);
    }
}
