//! Runs of the same suites from several kinds of machine, and what each
//! published claim comes to on each: the machine is a dimension of the
//! evidence, as a target or a workload is of a run.

use serde::{Deserialize, Serialize};

use crate::claim::{ClaimRecord, ClaimVerdict};

/// Version of the `corobench claims --format json` document; bumped on
/// incompatible change.
pub const EVIDENCE_SCHEMA_VERSION: u32 = 1;

/// Machines whose runs are judged together: the same CPU model, the same
/// number of CPUs and the same kernel family (docs/methodology.md).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MachineKind {
    /// The CPU model as the kernel names it, trademark signs left out.
    pub cpu_model: String,
    /// CPUs the machine had (the server's machine, for a run on hosts).
    pub cpus: u32,
    /// The kernel's major.minor version, e.g. `6.18`.
    pub kernel_family: String,
    /// How reports name it: `AMD EPYC, 2 CPUs, Linux 6.18`.
    pub label: String,
    /// The label as a file name: `amd-epyc-2-cpus-linux-6.18`.
    pub slug: String,
}

/// The run a suite is judged by on one machine kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineRun {
    pub machine: MachineKind,
    pub run_id: String,
    pub started_at_unix_ms: i64,
}

/// What one machine kind's run says of a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineVerdict {
    pub machine: MachineKind,
    pub run_id: String,
    /// `None` when that run's spec did not state this claim (another
    /// version of the suite).
    pub verdict: Option<ClaimVerdict>,
}

/// A claim with its verdict on every machine kind that ran its suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimAcrossMachines {
    /// As the newest run stating it has it.
    pub claim: ClaimRecord,
    /// What was claimed, as reports show it: `3.06× ±10%`, `a>b`.
    pub claimed_text: String,
    /// One per machine kind of the suite, in the suite's order of kinds.
    pub verdicts: Vec<MachineVerdict>,
    /// Machine kinds whose run stated the claim.
    pub stated: usize,
    /// Of those, the kinds where it was consistent.
    pub consistent: usize,
    /// Whether two kinds that measured it reached different verdicts.
    pub differs: bool,
    /// `consistent on 1 of 2 machine kinds; refuted (higher) on AMD EPYC,
    /// 2 CPUs, Linux 6.18`.
    pub summary: String,
}

/// One suite: the run judged on each machine kind, and its claims across them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteClaims {
    pub suite: String,
    /// The newest complete run of each machine kind, kinds in label order.
    pub runs: Vec<MachineRun>,
    /// In the order the newest run states them; claims only older specs
    /// stated follow.
    pub claims: Vec<ClaimAcrossMachines>,
}

/// Every suite of the stored runs with its claims across machine kinds
/// (`corobench claims --format json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimsAcrossMachines {
    pub schema_version: u32,
    /// Always `claims_across_machines`.
    pub kind: String,
    /// Every machine kind with a run, in label order.
    pub machines: Vec<MachineKind>,
    /// In suite-name order.
    pub suites: Vec<SuiteClaims>,
}
