//! The machine-speed probe: before each trial, a fixed SHA-256 job runs on
//! every CPU of the server's set, then of the generator's, each CPU with a
//! thread of its own pinned to it. The speeds, stored with the trial, tell
//! how much the machine's own speed moved between trials
//! (`docs/methodology.md`).

use std::time::Instant;

use corobench_model::MachineProbe;
use corobench_target::{CpuSet, TargetError};
use sha2::{Digest as _, Sha256};

/// Why the probe could not run.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("the machine-speed probe was given no CPU")]
    NoCpu,
    #[error("the CPUs to probe: {0}")]
    Allowed(Box<TargetError>),
    #[error("pinning the machine-speed probe to CPU {cpu}: {source}")]
    Pin {
        cpu: usize,
        source: Box<TargetError>,
    },
    #[error("a probe thread panicked")]
    Panicked,
}

/// What each CPU hashes: 32 MiB, about 70 ms on a core without SHA
/// instructions and about 20 ms on one with them.
pub(crate) const PROBE_BYTES: usize = 32 << 20;

/// Hashed in blocks of this size, so the data stays in the core's cache and
/// the probe measures the core, not memory.
const BLOCK: usize = 64 << 10;

/// The probe on the server's CPUs, then on the generator's.
///
/// # Errors
/// A set that is empty, a CPU this process may not run on, or a probe
/// thread that could not run.
pub(crate) fn measure(server: &CpuSet, generator: &CpuSet) -> Result<MachineProbe, ProbeError> {
    Ok(MachineProbe {
        server_mb_per_s: set_speed(server, PROBE_BYTES)?,
        generator_mb_per_s: set_speed(generator, PROBE_BYTES)?,
    })
}

/// The probe on one host's CPUs: `cpus`, or every CPU this process may use.
///
/// # Errors
/// As [`measure`].
pub fn on_host(cpus: Option<&CpuSet>) -> Result<f64, ProbeError> {
    let allowed;
    let set = match cpus {
        Some(set) => set,
        None => {
            allowed = CpuSet::allowed().map_err(|e| ProbeError::Allowed(Box::new(e)))?;
            &allowed
        }
    };
    set_speed(set, PROBE_BYTES)
}

/// The mean MB/s of the set's CPUs, all hashing `bytes` at once.
fn set_speed(set: &CpuSet, bytes: usize) -> Result<f64, ProbeError> {
    let cpus: Vec<usize> = set.iter().collect();
    if cpus.is_empty() {
        return Err(ProbeError::NoCpu);
    }
    let speeds = std::thread::scope(|scope| {
        let threads: Vec<_> = cpus
            .iter()
            .map(|&cpu| scope.spawn(move || cpu_speed(cpu, bytes)))
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap_or(Err(ProbeError::Panicked)))
            .collect::<Result<Vec<f64>, ProbeError>>()
    })?;
    Ok(speeds.iter().sum::<f64>() / speeds.len() as f64)
}

/// MB/s of SHA-256 over `bytes` on `cpu`, pinned there.
fn cpu_speed(cpu: usize, bytes: usize) -> Result<f64, ProbeError> {
    let pin = |source| ProbeError::Pin {
        cpu,
        source: Box::new(source),
    };
    let one = CpuSet::parse(&cpu.to_string()).map_err(pin)?;
    one.apply_to_current_thread().map_err(pin)?;
    let block = vec![0x5a_u8; BLOCK];
    // One untimed block brings the code and the data into the cache.
    std::hint::black_box(Sha256::digest(&block));
    let start = Instant::now();
    let mut hasher = Sha256::new();
    for _ in 0..bytes.div_ceil(BLOCK) {
        hasher.update(&block);
    }
    std::hint::black_box(hasher.finalize());
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    Ok((bytes.div_ceil(BLOCK) * BLOCK) as f64 / 1e6 / seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_set_gets_a_speed_of_its_own() {
        let cpu = CpuSet::allowed().unwrap().iter().next().unwrap();
        let set = CpuSet::parse(&cpu.to_string()).unwrap();
        let speed = set_speed(&set, BLOCK * 4).unwrap();
        assert!(speed.is_finite() && speed > 0.0, "{speed}");
        let probe = measure(&set, &set).unwrap();
        assert!(probe.server_mb_per_s > 0.0 && probe.generator_mb_per_s > 0.0);
    }

    #[test]
    fn a_cpu_this_process_may_not_use_is_an_error_not_a_speed() {
        let missing = CpuSet::parse("1023").unwrap();
        let error = set_speed(&missing, BLOCK).unwrap_err().to_string();
        assert!(error.contains("CPU 1023"), "{error}");
    }
}
