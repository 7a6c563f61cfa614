//! One line per finished trial, the same wherever it is shown: in plain
//! progress lines, above the terminal's bars, and in the log the live view
//! leaves behind when it closes.

use corobench_model::{TrialRecord, TrialStatus};
use corobench_report::units::{bytes, latency_us, thousands};
use corobench_spec::PlannedScenario;

/// `[3/12] go-nethttp/plaintext/c=64 trial 1: 50,100 req/s, p99 2.9ms`,
/// or why it failed, on one line.
#[must_use]
pub fn trial_line(
    scenario: &PlannedScenario,
    record: &TrialRecord,
    done: u64,
    total: u64,
) -> String {
    format!(
        "{} {} trial {}: {}",
        counter(done, total),
        scenario.key,
        record.trial_index + 1,
        trial_summary(record)
    )
}

/// What a trial measured, or why it failed: `50,100 req/s, p99 2.9ms`.
#[must_use]
pub fn trial_summary(record: &TrialRecord) -> String {
    match (&record.status, &record.load) {
        (TrialStatus::Ok, Some(load)) => {
            let p99 = load.latency.summary.percentile_us(99.0).unwrap_or(0);
            let flags: Vec<String> = record.flags.iter().map(ToString::to_string).collect();
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", flags.join("; "))
            };
            format!(
                "{} req/s, p99 {}{flags}",
                thousands(load.requests_per_s.round().max(0.0)),
                latency_us(p99 as f64)
            )
        }
        (TrialStatus::Ok, None) if record.idle.is_some() => idle_summary(record),
        (TrialStatus::Ok, None) => record.program.as_ref().map_or_else(String::new, |p| {
            let figures: Vec<String> = p
                .metrics
                .iter()
                .take(3)
                .map(|m| format!("{} {}", thousands(m.value.round().max(0.0)), m.unit))
                .collect();
            figures.join(", ")
        }),
        _ => format!(
            "FAILED: {}",
            corobench_model::failure_line(
                record.failure.as_deref().unwrap_or("no reason recorded")
            )
        ),
    }
}

/// `RSS 46.4MiB with 2000 idle connections (settled in 1.3 s)`.
fn idle_summary(record: &TrialRecord) -> String {
    let Some(idle) = record.idle else {
        return String::new();
    };
    let settled = if idle.settled {
        format!("settled in {:.1} s", idle.waited_s)
    } else {
        format!("still changing after {:.0} s", idle.waited_s)
    };
    format!(
        "RSS {} with {} idle connections ({settled})",
        bytes(idle.rss_bytes as f64),
        idle.connections
    )
}

/// `[3/12]`. The total is what was planned when the run (or its resume)
/// began plus what a search added since; it never reads below the trials
/// done (`[1/0]` on a resume whose stored trials met the first estimate).
fn counter(done: u64, total: u64) -> String {
    format!("[{done}/{}]", total.max(done))
}

#[cfg(test)]
mod tests {
    use super::{counter, idle_summary};
    use corobench_model::{IdleMeasurement, TrialRecord};

    #[test]
    fn an_idle_trial_s_line_gives_its_settled_rss() {
        let mut record = TrialRecord::started(0, 0, 0, 0);
        record.idle = Some(IdleMeasurement {
            connections: 2000,
            rss_bytes: 48_653_926,
            settled: true,
            waited_s: 1.34,
        });
        assert_eq!(
            idle_summary(&record),
            "RSS 46.4MiB with 2000 idle connections (settled in 1.3 s)"
        );
    }

    /// Issue "wrong successes", item 13: a resumed run printed `[1/0]`.
    #[test]
    fn the_counter_never_reads_more_done_than_planned() {
        assert_eq!(counter(1, 0), "[1/1]");
        assert_eq!(counter(3, 12), "[3/12]");
    }
}
