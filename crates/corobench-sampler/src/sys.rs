//! The few system constants the sampler needs to turn `/proc` figures into units.

use std::io;

use crate::error::SamplerError;

fn sysconf(name: libc::c_int, what: &'static str) -> Result<u64, SamplerError> {
    // SAFETY: sysconf has no preconditions; it only returns a configuration value.
    let value = unsafe { libc::sysconf(name) };
    match u64::try_from(value) {
        Ok(value) if value > 0 => Ok(value),
        _ => Err(SamplerError::System {
            what,
            source: io::Error::last_os_error(),
        }),
    }
}

/// Clock ticks per second, the unit of CPU times in `/proc/<pid>/stat`.
pub(crate) fn clock_ticks_per_s() -> Result<u64, SamplerError> {
    sysconf(
        libc::_SC_CLK_TCK,
        "its clock ticks per second (sysconf _SC_CLK_TCK)",
    )
}

/// Bytes per memory page, the unit of `rss` in `/proc/<pid>/stat`.
pub(crate) fn page_size_bytes() -> Result<u64, SamplerError> {
    sysconf(libc::_SC_PAGESIZE, "its page size (sysconf _SC_PAGESIZE)")
}

/// Time since boot in clock ticks, the clock of `starttime` in `/proc/<pid>/stat`
/// (the kernel derives `starttime` from the boot-time clock, suspend included).
pub(crate) fn boot_time_ticks(clock_ticks_per_s: u64) -> Result<u64, SamplerError> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &raw mut now) };
    if rc != 0 {
        return Err(SamplerError::System {
            what: "the time since boot (clock_gettime CLOCK_BOOTTIME)",
            source: io::Error::last_os_error(),
        });
    }
    let secs = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(now.tv_nsec).unwrap_or(0);
    Ok(secs * clock_ticks_per_s + nanos * clock_ticks_per_s / 1_000_000_000)
}
