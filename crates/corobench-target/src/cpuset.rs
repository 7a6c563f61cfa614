//! CPU sets such as `0`, `0-1` or `0,2-3`: parsed, checked against the CPUs
//! this process may use, and applied with `sched_setaffinity`.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::error::TargetError;

/// CPU numbers must stay below this (the size of a `cpu_set_t`).
const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// A non-empty set of CPU numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CpuSet(BTreeSet<usize>);

impl CpuSet {
    /// Parses a CPU list (`0`, `0-1`, `0,2-3`).
    ///
    /// # Errors
    /// An empty list, a part that is not a number or range, a reversed range,
    /// or a CPU number beyond what Linux can address.
    pub fn parse(spec: &str) -> Result<Self, TargetError> {
        let error = |message: String| TargetError::CpuSet {
            spec: spec.to_string(),
            message,
        };
        let mut cpus = BTreeSet::new();
        for part in spec.split(',').map(str::trim) {
            let (low, high) = match part.split_once('-') {
                Some((low, high)) => (low.trim(), high.trim()),
                None => (part, part),
            };
            let number = |text: &str| {
                text.parse::<usize>().map_err(|_| {
                    error(format!(
                        "{part:?} is not a CPU number or range: write e.g. 0, 0-1 or 0,2-3"
                    ))
                })
            };
            let (low, high) = (number(low)?, number(high)?);
            if low > high {
                return Err(error(format!(
                    "{part:?} is a reversed range: write {high}-{low}"
                )));
            }
            if high >= MAX_CPUS {
                return Err(error(format!(
                    "CPU {high} is beyond the {MAX_CPUS} CPUs Linux can address"
                )));
            }
            cpus.extend(low..=high);
        }
        Ok(Self(cpus))
    }

    /// The CPUs this process may run on now (its own affinity mask).
    ///
    /// # Errors
    /// `sched_getaffinity` failed.
    pub fn allowed() -> Result<Self, TargetError> {
        // SAFETY: a zeroed cpu_set_t is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid cpu_set_t of the size passed.
        if unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &raw mut set) } != 0 {
            return Err(TargetError::last_os("sched_getaffinity"));
        }
        // SAFETY: CPU_ISSET reads the set within its bounds.
        Ok(Self(
            (0..MAX_CPUS)
                .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
                .collect(),
        ))
    }

    /// Checks that this process may use every CPU of the set.
    ///
    /// # Errors
    /// A CPU outside this process's affinity mask, naming the usable ones.
    pub fn validate(&self) -> Result<(), TargetError> {
        let allowed = Self::allowed()?;
        let missing: Vec<String> = self
            .0
            .difference(&allowed.0)
            .map(ToString::to_string)
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let plural = if missing.len() == 1 { "CPU" } else { "CPUs" };
        Err(TargetError::CpuSet {
            spec: self.to_string(),
            message: format!(
                "{plural} {} not available: corobench may use CPUs {allowed} on this machine",
                missing.join(",")
            ),
        })
    }

    /// The CPU numbers, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    #[must_use]
    pub fn contains(&self, cpu: usize) -> bool {
        self.0.contains(&cpu)
    }

    /// The set as a `cpu_set_t`, built before a `fork` so that the child only
    /// has to make the system call.
    #[must_use]
    pub fn to_libc(&self) -> libc::cpu_set_t {
        // SAFETY: a zeroed cpu_set_t is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for cpu in self.iter() {
            // SAFETY: `cpu` < CPU_SETSIZE, checked when parsing.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        set
    }

    /// Pins the calling thread to the set.
    ///
    /// # Errors
    /// `sched_setaffinity` refused the set.
    pub fn apply_to_current_thread(&self) -> Result<(), TargetError> {
        let set = self.to_libc();
        // SAFETY: `set` is a valid cpu_set_t of the size passed.
        if unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &raw const set) } != 0
        {
            return Err(TargetError::last_os("sched_setaffinity"));
        }
        Ok(())
    }
}

impl FromStr for CpuSet {
    type Err = TargetError;

    fn from_str(spec: &str) -> Result<Self, TargetError> {
        Self::parse(spec)
    }
}

/// The shortest list form: `0-3,6`.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for cpu in self.iter() {
            match ranges.last_mut() {
                Some((_, high)) if *high + 1 == cpu => *high = cpu,
                _ => ranges.push((cpu, cpu)),
            }
        }
        let parts: Vec<String> = ranges
            .iter()
            .map(|&(low, high)| {
                if low == high {
                    low.to_string()
                } else {
                    format!("{low}-{high}")
                }
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpus(spec: &str) -> Vec<usize> {
        CpuSet::parse(spec).unwrap().iter().collect()
    }

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!(cpus("0"), [0]);
        assert_eq!(cpus("0-1"), [0, 1]);
        assert_eq!(cpus("0,2-3"), [0, 2, 3]);
        assert_eq!(cpus(" 3 , 1-2 ,1"), [1, 2, 3]);
        assert_eq!(CpuSet::parse("3,0-1,2,6").unwrap().to_string(), "0-3,6");
    }

    #[test]
    fn bad_lists_say_what_to_write() {
        let message = |spec: &str| CpuSet::parse(spec).unwrap_err().to_string();
        assert_eq!(
            message(""),
            "CPU list \"\": \"\" is not a CPU number or range: write e.g. 0, 0-1 or 0,2-3"
        );
        assert!(message("a").contains("\"a\" is not a CPU number"));
        assert!(message("0,").contains("\"\" is not a CPU number"));
        assert!(message("-1").contains("is not a CPU number"));
        assert_eq!(
            message("3-1"),
            "CPU list \"3-1\": \"3-1\" is a reversed range: write 1-3"
        );
        assert!(message("5000").contains("beyond the 1024 CPUs"));
    }

    #[test]
    fn validation_names_the_usable_cpus() {
        let allowed = CpuSet::allowed().unwrap();
        assert!(!allowed.is_empty());
        allowed.validate().unwrap();
        let error = CpuSet::parse("1000")
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            format!(
                "CPU list \"1000\": CPU 1000 not available: corobench may use CPUs {allowed} on this machine"
            )
        );
    }

    #[test]
    fn applying_the_allowed_set_to_a_thread_works() {
        let first = CpuSet::allowed().unwrap().iter().next().unwrap();
        let set = CpuSet::parse(&first.to_string()).unwrap();
        std::thread::spawn(move || {
            set.apply_to_current_thread().unwrap();
            assert_eq!(CpuSet::allowed().unwrap(), set);
        })
        .join()
        .unwrap();
    }
}
