//! The shared vocabulary of corobench: what a load run, a resource sampler and a
//! trial produce. Only plain data and its serialisation live here.

pub mod histogram;
pub mod load;
pub mod resource;
pub mod run;

pub use histogram::{LatencyHistogram, LatencyReport, LatencySummary, PercentileValue};
pub use load::{
    ErrorCounts, GeneratorUsage, LoadReport, LoadWarning, OpenLoopReport, ScheduleKind,
    StatusCounts, TimelineSecond,
};
pub use resource::{ResourceSample, ResourceSummary};
pub use run::{
    Provenance, RunRecord, RunStatus, ScenarioRecord, TaskCounts, TrialFlag, TrialRecord,
    TrialStatus, WorkloadRecord,
};
