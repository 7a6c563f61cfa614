//! The skeleton against a scripted place: no process, no socket. The place
//! logs what the skeleton asks of it, and answers from a script.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use corobench_analyze::fixtures::load;
use corobench_model::{
    IdleMeasurement, MachineProbe, ProfileOutcome, ProgramResult, ResourceSample, ServerChoice,
    StatusCounts, TrialCounters, TrialFlag, TrialRecord, TrialStatus,
};
use corobench_sampler::ResourceSeries;
use corobench_spec::PlannedScenario;
use corobench_target::CpuSet;

use super::*;
use crate::fakes::Recorder;
use crate::leak::{Footprint, Unreadable};
use crate::prepare::TrialEnvironment;

type Log = Rc<RefCell<Vec<String>>>;

/// A place whose every step answers from the script.
struct Scripted {
    env: TrialEnvironment,
    log: Log,
    /// The footprints the server gives, in order; `None`: it cannot say.
    footprints: RefCell<VecDeque<Option<Footprint>>>,
    /// What the load step ends with.
    load: RefCell<Option<Result<LoadWindow, Halt>>>,
    /// The server is gone after the middle step.
    gone: bool,
    /// Ctrl-C comes during the middle step.
    interrupt: bool,
}

struct FakeServer {
    log: Log,
    target: String,
    footprints: VecDeque<Option<Footprint>>,
    gone: bool,
}

impl Server for FakeServer {
    fn host(&self) -> &str {
        "ssh://s"
    }

    fn footprint(&mut self) -> Result<Footprint, Unreadable> {
        self.log.borrow_mut().push("footprint".into());
        self.footprints
            .pop_front()
            .flatten()
            .ok_or_else(|| Unreadable("no answer".to_owned()))
    }

    fn is_gone(&mut self) -> bool {
        self.gone
    }

    fn explain(&mut self, why: &str) -> String {
        format!("{why} (it exited 1)")
    }

    fn attached_url(&self) -> Option<&str> {
        None
    }

    fn stop(self) -> ServerStopped {
        self.log.borrow_mut().push(format!("stop {}", self.target));
        let samples = vec![ResourceSample::default(); 3];
        ServerStopped {
            series: Some(ResourceSeries {
                summary: corobench_sampler::summarize(&samples),
                samples,
                target_vanished: false,
            }),
            flag: Some(TrialFlag::Leak {
                what: "it did not stop cleanly".into(),
            }),
        }
    }
}

impl Scripted {
    fn new() -> Self {
        let cpus = CpuSet::parse("0").unwrap();
        Self {
            env: TrialEnvironment {
                built: BTreeMap::new(),
                data_dir: "/nonexistent".into(),
                work_root: "/nonexistent".into(),
                database_url: None,
                bodies: BTreeMap::new(),
                server_cpus: cpus.clone(),
                generator_cpus: vec![0],
                generator_set: cpus,
                tls: None,
                backend: corobench_model::Backend::Epoll,
                machine_probe: true,
                stop: Arc::new(AtomicBool::new(false)),
            },
            log: Log::default(),
            footprints: RefCell::new(VecDeque::from([Some(footprint(3)), Some(footprint(5))])),
            load: RefCell::new(Some(Ok(window()))),
            gone: false,
            interrupt: false,
        }
    }

    fn say(&self, what: String) {
        self.log.borrow_mut().push(what);
    }

    fn lines(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    fn middle_step(&self, what: &str) {
        self.say(what.to_owned());
        if self.interrupt {
            self.env.stop.store(true, Ordering::Relaxed);
        }
    }
}

impl Place for Scripted {
    type Server = FakeServer;

    fn env(&self) -> &TrialEnvironment {
        &self.env
    }

    fn probe(&self, _observer: &dyn RunObserver) -> Option<MachineProbe> {
        self.say("probe".into());
        Some(MachineProbe {
            server_mb_per_s: 1.0,
            generator_mb_per_s: 2.0,
        })
    }

    fn start_server(&self, server: ServerToStart<'_>) -> Result<FakeServer, Halt> {
        self.say(format!("start {} fresh={}", server.target, server.fresh));
        Ok(FakeServer {
            log: Rc::clone(&self.log),
            target: server.target.to_owned(),
            footprints: self.footprints.take(),
            gone: self.gone,
        })
    }

    fn load(
        &self,
        _scenario: &PlannedScenario,
        _server: &mut FakeServer,
        _observer: &dyn RunObserver,
    ) -> Result<LoadWindow, Halt> {
        self.middle_step("load");
        self.load.take().expect("one load a trial")
    }

    fn hold_idle(
        &self,
        scenario: &PlannedScenario,
        _server: &mut FakeServer,
    ) -> Result<IdleMeasurement, Halt> {
        self.middle_step("hold idle");
        Ok(IdleMeasurement {
            connections: scenario.schedule.connections,
            rss_bytes: 1 << 20,
            settled: true,
            waited_s: 1.0,
        })
    }

    fn run_program(
        &self,
        _scenario: &PlannedScenario,
        server: Option<&mut FakeServer>,
    ) -> Result<ProgramResult, Halt> {
        self.middle_step(&format!(
            "program beside {:?}",
            server.map(|s| s.target.clone())
        ));
        Ok(ProgramResult {
            metrics: Vec::new(),
            lines: Vec::new(),
            elapsed_s: 1.0,
            resources: None,
        })
    }

    fn profile(
        &self,
        _scenario: &PlannedScenario,
        _server: &mut FakeServer,
        _observer: &dyn RunObserver,
    ) -> Result<ProfileOutcome, Halt> {
        self.middle_step("profile");
        Err(Halt::Failed("the load could not start".into()))
    }
}

fn footprint(tasks: u64) -> Footprint {
    Footprint {
        tasks: Some(tasks),
        processes: 1,
        threads: 4,
        rss_bytes: 64 << 20,
        pool: None,
    }
}

fn window() -> LoadWindow {
    let mut report = load(1000.0, &[100; 100]);
    report.status = StatusCounts {
        success: report.requests,
        ..StatusCounts::default()
    };
    LoadWindow {
        report,
        peak_tasks: Some(80),
        counters: TrialCounters::default(),
        probe: None,
    }
}

fn scenario() -> PlannedScenario {
    crate::fakes::plan(1, 1, None, 1).scenarios[0].clone()
}

fn blank() -> TrialRecord {
    TrialRecord::started(0, 0, 0, 0)
}

#[test]
fn a_load_trial_starts_takes_its_baseline_loads_settles_and_stops_in_that_order() {
    let place = Scripted::new();
    let observer = Recorder::default();
    let measured = run(&place, &scenario(), Step::Load, &observer).unwrap();
    assert_eq!(
        place.lines(),
        [
            "probe",
            "start t0 fresh=false",
            "footprint",
            "load",
            "footprint",
            "stop t0"
        ]
    );
    let trial = measured.record(blank(), &scenario(), &observer);
    assert_eq!(trial.status, TrialStatus::Ok);
    assert_eq!(
        (trial.tasks.before, trial.tasks.peak, trial.tasks.after),
        (Some(3), Some(80), Some(5))
    );
    assert_eq!(trial.resource_series.len(), 3, "the server's samples");
    assert!(trial.resources.is_some() && trial.counters.is_some() && trial.load.is_some());
    assert_eq!(trial.probe.map(|p| p.generator_mb_per_s), Some(2.0));
    assert_eq!(
        trial.flags,
        [TrialFlag::Leak {
            what: "it did not stop cleanly".into()
        }]
    );
    let phases: Vec<String> = observer.0.borrow().clone();
    assert_eq!(
        phases,
        ["TrialPhase(Starting)", "TrialPhase(Stopping)"],
        "the place tells the phases of its own step"
    );
}

#[test]
fn the_idle_time_is_patience_the_trial_ends_at_the_first_footprint_back_at_its_baseline() {
    let place = Scripted::new();
    // Still busy at the first reading after the load, back at the second.
    place.footprints.replace(VecDeque::from([
        Some(footprint(3)),
        Some(footprint(900)),
        Some(footprint(5)),
    ]));
    let mut scenario = scenario();
    // An hour of idle time that a fixed pause would spend in full.
    scenario.measurement.idle = std::time::Duration::from_secs(3600);
    let observer = Recorder::default();
    let trial = run(&place, &scenario, Step::Load, &observer)
        .unwrap()
        .record(blank(), &scenario, &observer);
    assert_eq!(
        place.lines(),
        [
            "probe",
            "start t0 fresh=false",
            "footprint",
            "load",
            "footprint",
            "footprint",
            "stop t0"
        ]
    );
    assert_eq!((trial.tasks.before, trial.tasks.after), (Some(3), Some(5)));
    assert!(
        !trial
            .flags
            .iter()
            .any(|f| matches!(f, TrialFlag::Leak { what } if what.contains("task"))),
        "{:?}",
        trial.flags
    );
}

#[test]
fn a_footprint_that_cannot_be_read_skips_the_leak_check_and_says_so() {
    let place = Scripted::new();
    place.footprints.replace(VecDeque::from([None]));
    let observer = Recorder::default();
    let trial = run(&place, &scenario(), Step::Load, &observer)
        .unwrap()
        .record(blank(), &scenario(), &observer);
    assert_eq!(trial.tasks.before, None);
    let notices = observer.0.borrow();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("leak check skipped") && n.contains("ssh://s")),
        "{notices:?}"
    );
}

#[test]
fn the_expected_status_of_the_workload_counts_other_answers_as_errors_wherever_it_ran() {
    let place = Scripted::new();
    let mut scenario = scenario();
    scenario.workload.expect.status = Some(404);
    let observer = Recorder::default();
    let trial = run(&place, &scenario, Step::Load, &observer)
        .unwrap()
        .record(blank(), &scenario, &observer);
    let load = trial.load.unwrap();
    assert!(load.requests > 0);
    assert_eq!(load.errors.unexpected_status, load.requests);
}

#[test]
fn a_server_gone_after_its_load_fails_the_trial_with_what_is_known_of_it() {
    let mut place = Scripted::new();
    place.gone = true;
    let halt = run(&place, &scenario(), Step::Load, &Recorder::default()).unwrap_err();
    assert_eq!(
        halt,
        Halt::Failed("the target exited during the measurement (it exited 1)".into())
    );
}

#[test]
fn a_failure_that_comes_with_ctrl_c_is_an_interruption() {
    let mut place = Scripted::new();
    place.interrupt = true;
    place
        .load
        .replace(Some(Err(Halt::Failed("connection reset".into()))));
    let halt = run(&place, &scenario(), Step::Load, &Recorder::default()).unwrap_err();
    assert_eq!(halt, Halt::Interrupted);
    assert_eq!(
        place.lines(),
        ["probe", "start t0 fresh=false", "footprint", "load"],
        "nothing after the step that was interrupted"
    );
}

#[test]
fn an_idle_trial_needs_a_fresh_server_and_keeps_its_samples_without_a_leak_check() {
    let place = Scripted::new();
    let mut scenario = scenario();
    scenario.workload.idle = true;
    let observer = Recorder::default();
    let measured = run(&place, &scenario, Step::of(&scenario), &observer).unwrap();
    assert_eq!(
        place.lines(),
        ["probe", "start t0 fresh=true", "hold idle", "stop t0"]
    );
    let trial = measured.record(blank(), &scenario, &observer);
    assert!(trial.idle.is_some() && trial.load.is_none());
    assert_eq!(trial.resource_series.len(), 3);
}

#[test]
fn a_program_starts_the_server_it_talks_to_and_keeps_its_summary_only() {
    let place = Scripted::new();
    let mut scenario = scenario();
    let server = ServerChoice {
        target: "srv".into(),
        parameters: BTreeMap::new(),
    };
    scenario.program = Some(corobench_model::ProgramScenario {
        server: Some(server),
    });
    let observer = Recorder::default();
    let trial = run(&place, &scenario, Step::of(&scenario), &observer)
        .unwrap()
        .record(blank(), &scenario, &observer);
    assert_eq!(
        place.lines(),
        [
            "probe",
            "start srv fresh=true",
            "program beside Some(\"srv\")",
            "stop srv"
        ]
    );
    assert!(trial.program.is_some() && trial.resources.is_some());
    assert!(trial.resource_series.is_empty());
    scenario.program = Some(corobench_model::ProgramScenario { server: None });
    let alone = Scripted::new();
    run(&alone, &scenario, Step::Program, &observer).unwrap();
    assert_eq!(alone.lines(), ["probe", "program beside None"]);
}

#[test]
fn a_profile_that_fails_is_kept_with_its_reason_and_a_program_is_not_profiled() {
    let place = Scripted::new();
    let observer = Recorder::default();
    let record = profile(&place, &scenario(), &observer).expect("not interrupted");
    assert_eq!(
        record.outcome,
        ProfileOutcome::Skipped {
            reason: "the profile trial failed: the load could not start".into()
        }
    );
    assert_eq!(
        place.lines(),
        ["start t0 fresh=true", "profile"],
        "no probe before a profile"
    );
    let mut program = scenario();
    program.program = Some(corobench_model::ProgramScenario { server: None });
    let skipped = profile(&Scripted::new(), &program, &observer).unwrap();
    assert!(
        matches!(&skipped.outcome, ProfileOutcome::Skipped { reason } if reason.contains("program target")),
        "{skipped:?}"
    );
}
