//! Memory per connection as lines of text: per target and idle workload,
//! the slope of settled RSS against idle connections with its interval.

use corobench_model::{MemoryPerConnection, RunAnalysis};

use super::Block;
use crate::units;

/// A heading and a line per fit; nothing for a run without idle workloads.
pub(crate) fn memory_blocks(analysis: &RunAnalysis) -> Vec<Block> {
    if analysis.memory_per_connection.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::Heading(format!(
        "memory per connection · settled RSS against idle keep-alive connections (least \
         squares over the trials, {} intervals)",
        units::whole_pct(analysis.settings.confidence)
    ))];
    blocks.extend(
        analysis
            .memory_per_connection
            .iter()
            .map(|fit| Block::Line(memory_line(fit))),
    );
    blocks
}

/// `go-nethttp · idle: 8.1 KiB per connection [7.9 KiB, 8.3 KiB] · 9 trials at 1000, 5000, 10000 connections`.
pub(crate) fn memory_line(fit: &MemoryPerConnection) -> String {
    let mut line = format!("{} · {}: ", fit.label, fit.workload);
    match fit.bytes_per_connection {
        Some(slope) => line.push_str(&format!("{} per connection", signed_bytes(slope))),
        None => line.push_str("no slope"),
    }
    if let Some((lo, hi)) = fit.interval {
        line.push_str(&format!(" [{}, {}]", signed_bytes(lo), signed_bytes(hi)));
    }
    let levels: Vec<String> = fit.connections.iter().map(u32::to_string).collect();
    line.push_str(&format!(
        " · {} trials at {} connections",
        fit.trials,
        levels.join(", ")
    ));
    if let Some(intercept) = fit.intercept_bytes {
        line.push_str(&format!(
            " · RSS {} at 0 connections",
            signed_bytes(intercept)
        ));
    }
    if let Some(note) = &fit.note {
        line.push_str(&format!(" ({note})"));
    }
    line
}

/// Bytes with a binary unit, negative ones too (a slope can dip below 0
/// within its noise).
fn signed_bytes(n: f64) -> String {
    if n < 0.0 {
        format!("-{}", units::bytes(-n))
    } else {
        units::bytes(n)
    }
}
