//! Where a run was measured: machine, kernel, pinning, versions. Read once
//! per run and stored with it.

use std::collections::BTreeMap;

use corobench_model::Provenance;

/// The machine's description and the pinning; the runner adds the load
/// backend and the tool versions once it has resolved and built them.
#[must_use]
pub fn collect(server_cpus: &[usize], generator_cpus: &[usize]) -> Provenance {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    Provenance {
        corobench_version: env!("CARGO_PKG_VERSION").to_string(),
        corobench_commit: option_env!("COROBENCH_COMMIT")
            .filter(|c| !c.is_empty())
            .map(str::to_string),
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
        os: field(&os_release, "PRETTY_NAME", '=')
            .trim_matches('"')
            .to_string(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        cpu_model: field(&cpuinfo, "model name", ':').to_string(),
        cpu_count: u32::try_from(std::thread::available_parallelism().map_or(1, usize::from))
            .unwrap_or(1),
        memory_bytes: field(&meminfo, "MemTotal", ':')
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .map_or(0, |kib| kib * 1024),
        server_cpus: cpu_list(server_cpus),
        generator_cpus: cpu_list(generator_cpus),
        load_backend: String::new(),
        tool_versions: BTreeMap::new(),
        target_sources: BTreeMap::new(),
        spec_path: None,
        hosts: Vec::new(),
    }
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The value of the first `key<sep>value` line.
fn field<'a>(text: &'a str, key: &str, separator: char) -> &'a str {
    text.lines()
        .filter_map(|line| line.split_once(separator))
        .find(|(k, _)| k.trim() == key)
        .map_or("", |(_, v)| v.trim())
}

/// `[0, 2, 3]` → `0,2,3`.
#[must_use]
pub fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_machine() {
        let p = collect(&[0], &[1]);
        assert!(!p.kernel.is_empty());
        assert!(p.cpu_count >= 1);
        assert_eq!(
            (p.server_cpus.as_str(), p.generator_cpus.as_str()),
            ("0", "1")
        );
        assert_eq!(field("a: 1\nmodel name\t: X Y\n", "model name", ':'), "X Y");
    }
}
