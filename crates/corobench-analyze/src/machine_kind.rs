//! The machine kind of a run, read from its provenance: its CPU model, its
//! number of CPUs and its kernel family (major.minor). Runs of one kind
//! are judged together; runs of different kinds side by side, never pooled.
//!
//! The rule, as docs/methodology.md states it: the CPU model as the
//! kernel names it, with `(R)`, `(TM)` and repeated spaces left out; the
//! machine's CPU count; the kernel release up to its second number
//! (`6.18.44-fc-v509` → `6.18`). A run on hosts is of its server's kind.
//! The newest complete run of each suite on each kind is the one judged.

use std::collections::BTreeMap;

use corobench_model::{MachineKind, Provenance, RunRecord, RunStatus};

/// The kind of the machine `provenance` describes (its server's, on hosts).
#[must_use]
pub fn machine_kind(provenance: &Provenance) -> MachineKind {
    match provenance.hosts.iter().find(|h| h.role == "server") {
        Some(server) => kind(&server.cpu_model, server.cpu_count, &server.kernel),
        None => kind(
            &provenance.cpu_model,
            provenance.cpu_count,
            &provenance.kernel,
        ),
    }
}

/// The kind of a machine with this CPU model, CPU count and kernel release.
#[must_use]
pub fn kind(cpu_model: &str, cpus: u32, kernel: &str) -> MachineKind {
    let cpu_model = cpu_name(cpu_model);
    let kernel_family = kernel_family(kernel);
    let plural = if cpus == 1 { "" } else { "s" };
    let label = format!("{cpu_model}, {cpus} CPU{plural}, Linux {kernel_family}");
    MachineKind {
        slug: slug(&label),
        cpu_model,
        cpus,
        kernel_family,
        label,
    }
}

/// For each suite and machine kind, the newest complete run, ordered by
/// suite, then by the kind's label.
#[must_use]
pub fn newest_per_machine(runs: &[RunRecord]) -> Vec<&RunRecord> {
    let mut newest: BTreeMap<(&str, String), &RunRecord> = BTreeMap::new();
    for run in runs.iter().filter(|r| r.status == RunStatus::Complete) {
        let key = (run.suite.as_str(), machine_kind(&run.provenance).label);
        let slot = newest.entry(key).or_insert(run);
        if (run.started_at_unix_ms, &run.id) > (slot.started_at_unix_ms, &slot.id) {
            *slot = run;
        }
    }
    newest.into_values().collect()
}

/// `Intel(R) Xeon(R)  Processor` → `Intel Xeon Processor`.
fn cpu_name(model: &str) -> String {
    let mut name = model.to_owned();
    for mark in ["(R)", "(r)", "(TM)", "(tm)"] {
        name = name.replace(mark, " ");
    }
    let words: Vec<&str> = name.split_whitespace().collect();
    if words.is_empty() {
        "unknown CPU".to_owned()
    } else {
        words.join(" ")
    }
}

/// `6.18.44-fc-v509` → `6.18`; a release that does not start with two
/// numbers is its own family.
fn kernel_family(release: &str) -> String {
    let release = release.trim();
    let numbers: Vec<&str> = release
        .split(['.', '-'])
        .take(2)
        .take_while(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    match numbers.as_slice() {
        [major, minor] => format!("{major}.{minor}"),
        _ if release.is_empty() => "unknown".to_owned(),
        _ => release.to_owned(),
    }
}

/// A label as a file name: lower case, words joined by `-`.
fn slug(label: &str) -> String {
    let mut slug = String::with_capacity(label.len());
    for c in label.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || c == '.' {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use corobench_model::HostProvenance;

    use super::*;

    #[test]
    fn a_kind_is_the_cpu_model_its_count_and_the_kernel_family() {
        let intel = kind("Intel(R) Xeon(R) Processor", 2, "6.18.44-fc-v657");
        assert_eq!(intel.label, "Intel Xeon Processor, 2 CPUs, Linux 6.18");
        assert_eq!(intel.slug, "intel-xeon-processor-2-cpus-linux-6.18");
        // Another build of the same kernel family is the same kind.
        assert_eq!(
            kind("Intel(R) Xeon(R) Processor", 2, "6.18.44-fc-v595"),
            intel
        );
        assert_ne!(kind("Intel(R) Xeon(R) Processor", 4, "6.18.44"), intel);
        assert_ne!(
            kind("Intel(R) Xeon(R) Processor", 2, "6.1.0-18-amd64"),
            intel
        );
        let amd = kind("AMD EPYC", 1, "6.1.0-18-amd64");
        assert_eq!(amd.label, "AMD EPYC, 1 CPU, Linux 6.1");
    }

    #[test]
    fn odd_provenance_still_names_a_kind() {
        assert_eq!(kind("", 0, "").label, "unknown CPU, 0 CPUs, Linux unknown");
        assert_eq!(kind("X", 8, "rolling").kernel_family, "rolling");
        assert_eq!(kind("X", 8, "6").kernel_family, "6");
    }

    #[test]
    fn a_run_on_hosts_is_of_its_servers_kind() {
        let provenance = Provenance {
            cpu_model: "laptop".to_owned(),
            cpu_count: 8,
            kernel: "6.8.0".to_owned(),
            hosts: vec![
                HostProvenance {
                    role: "generator".to_owned(),
                    cpu_model: "AMD EPYC".to_owned(),
                    cpu_count: 4,
                    kernel: "6.1.0".to_owned(),
                    ..HostProvenance::default()
                },
                HostProvenance {
                    role: "server".to_owned(),
                    cpu_model: "Ampere Altra".to_owned(),
                    cpu_count: 16,
                    kernel: "6.12.3".to_owned(),
                    ..HostProvenance::default()
                },
            ],
            ..Provenance::default()
        };
        assert_eq!(
            machine_kind(&provenance).label,
            "Ampere Altra, 16 CPUs, Linux 6.12"
        );
    }
}
