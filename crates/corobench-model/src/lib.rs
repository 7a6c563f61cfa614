//! The shared vocabulary of corobench: what a load run, a resource sampler and a
//! trial produce. Only plain data and its serialisation live here.

pub mod analysis;
pub mod background;
pub mod capacity;
pub mod claim;
pub mod counters;
pub mod cpu_split;
pub mod evidence;
pub mod histogram;
pub mod http2;
pub mod idle;
pub mod load;
pub mod machine;
pub mod perf_access;
pub mod pool;
pub mod profile;
pub mod protocol;
pub mod resource;
pub mod run;
pub mod schedule;
pub mod tls;
pub mod tls_figure;

pub use analysis::{
    ANALYSIS_SCHEMA_VERSION, AnalysisSettings, Better, ChangeEstimator, CompareRow, CompareSide,
    CompareTable, FittedValue, Gate, GateCheck, GateOutcome, GateRule, Geomean, MergedLatency,
    Metric, MetricComparison, MetricInfo, MetricSummary, MetricUnit, ProgramUnit, RunAnalysis,
    RunComparison, Scalability, ScenarioAnalysis, ScenarioComparison, Sweep, SweepPoint,
    SweepSeries, TrialAnalysis, UslEstimates, Verdict, Warning, WarningKind,
};
pub use background::{BackgroundRecord, BackgroundReport};
pub use capacity::{
    CapacityAnalysis, CapacityComparison, CapacityEstimate, CapacityRate, CapacitySettings,
    RateVerdict, ScenarioCapacity, Slo, SloMeasure, SloParseError,
};
pub use claim::{
    ClaimBand, ClaimDirection, ClaimExpectation, ClaimMeasurement, ClaimOutcome, ClaimRatio,
    ClaimRecord, ClaimScenario, ClaimSide, ClaimVerdict, PublishedValues,
};
pub use counters::{
    Cost, KernelCounter, KernelCounts, MissingCounter, PerRequest, Side, SideCounters,
    TrialCounters,
};
pub use cpu_split::CpuSplit;
pub use evidence::{
    ClaimAcrossMachines, ClaimsAcrossMachines, EVIDENCE_SCHEMA_VERSION, MachineKind, MachineRun,
    MachineVerdict, SuiteClaims,
};
pub use histogram::{LatencyHistogram, LatencyReport, LatencySummary, PercentileValue};
pub use http2::Http2Report;
pub use idle::{IdleMeasurement, MemoryPerConnection};
pub use load::{
    DrainReport, ERROR_KINDS, ErrorCounts, GeneratorPart, GeneratorUsage, KernelStamps, LoadReport,
    LoadWarning, MergeDetail, OpenLoopReport, StatusCounts, TimelineSecond, WindowPlacement,
};
pub use machine::{MachineProbe, MachineVariation, ProbeSet, ProbeSpread, SpreadSource};
pub use perf_access::{PerfAccess, PerfHappened};
pub use pool::{PoolCounters, PoolFigure, PoolWindow};
pub use profile::{ProfileOutcome, ProfileRecord};
pub use protocol::{HttpVersion, Protocol, UnknownProtocol};
pub use resource::{ResourceSample, ResourceSummary};
pub use run::{
    HostProvenance, MAX_TRIALS, PrecisionGoal, ProgramMetric, ProgramResult, ProgramScenario,
    Provenance, RunProcess, RunRecord, RunStatus, ScenarioRecord, ServerChoice, StoredRun,
    TaskCounts, TrialFlag, TrialRecord, TrialStatus, WorkloadRecord, failure_line,
};
pub use schedule::{
    Backend, BackendChoice, MAX_PIPELINE, MAX_STREAMS, ScenarioKey, Schedule, ScheduleKind,
    WireMode,
};
pub use tls::TlsReport;
pub use tls_figure::TlsFigure;
