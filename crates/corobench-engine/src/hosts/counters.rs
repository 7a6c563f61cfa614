//! The kernel counters of a trial on hosts, as a local trial has them:
//! the server's side counted by `corobench serve` on the server host over
//! the window by that host's clock ([`Order::Count`]), the generators' side
//! by each `corobench load --json` over its own window, summed. A counter
//! refused anywhere is missing with the reason, named by host.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use corobench_model::{
    KernelCounter, KernelCounts, MissingCounter, Side, SideCounters, TrialCounters,
};

use super::asks::{self, Asks};
use crate::protocol::Order;

/// Each generator host's own counters (`None`: its report had none), by host.
pub(super) type ByGenerator = Vec<(String, Option<SideCounters>)>;

/// How long after the generators reported the server's counts may take:
/// they are sent when the window ends, so they are normally there already.
const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// Orders the server host to count over the window that opens at
/// `start_at`; the instant it counts from, when the order went out.
pub(super) fn order(server: &mut impl Asks, start_at: SystemTime, window: Duration) -> Option<i64> {
    let from_unix_ms = unix_ms(start_at);
    let to_unix_ms = unix_ms(start_at + window);
    server
        .send(&Order::Count {
            from_unix_ms,
            to_unix_ms,
        })
        .then_some(from_unix_ms)
}

/// The trial's counters: the server's answer to the order that counts
/// from `ordered`, and the generators' own, each named by its host.
pub(super) fn collect(
    server: &mut impl Asks,
    server_host: &str,
    ordered: Option<i64>,
    generators: &[(String, Option<SideCounters>)],
) -> TrialCounters {
    let answer = ordered.and_then(|from| asks::counters(server, from, ANSWER_LIMIT));
    let server = answer.map_or_else(
        || {
            let why = format!("corobench serve on {server_host} sent no counts for the window");
            SideCounters::refused(Side::Server, &why)
        },
        |answer| answer.counted,
    );
    join(server, generators)
}

/// One trial's counters from the server's side and every generator's.
/// The divisor of their per-request figures is the merged window's
/// requests: each side counted over the window by its own clock.
fn join(server: SideCounters, generators: &[(String, Option<SideCounters>)]) -> TrialCounters {
    let (generator, generator_missing) = sum_generators(generators);
    let mut missing = server.missing;
    missing.extend(generator_missing);
    TrialCounters {
        server: server.counts,
        generator,
        missing,
        responses: None,
    }
}

/// Every generator's counts added up; a kind any generator lacks is
/// missing, with each one's reason.
fn sum_generators(parts: &[(String, Option<SideCounters>)]) -> (KernelCounts, Vec<MissingCounter>) {
    // A part without counts has every kind lacking (`None`), so the sum too.
    let total = parts
        .iter()
        .map(|(_, part)| {
            part.as_ref()
                .map_or_else(KernelCounts::default, |p| p.counts)
        })
        .reduce(KernelCounts::plus)
        .unwrap_or_default();
    let mut missing = Vec::new();
    for counter in KernelCounter::ALL {
        let reasons: Vec<String> = parts
            .iter()
            .filter(|(_, part)| part.as_ref().and_then(|p| p.counts.get(counter)).is_none())
            .map(|(host, part)| format!("on {host}: {}", reason(part.as_ref(), counter)))
            .collect();
        if !reasons.is_empty() {
            missing.push(MissingCounter {
                side: Side::Generator,
                counter,
                reason: reasons.join("; "),
            });
        }
    }
    (total, missing)
}

fn reason(part: Option<&SideCounters>, counter: KernelCounter) -> String {
    let Some(part) = part else {
        return "its load report carries no counters".to_owned();
    };
    part.missing
        .iter()
        .find(|m| m.counter == counter)
        .map_or_else(|| "not counted".to_owned(), |m| m.reason.clone())
}

/// `instant` in Unix milliseconds, as the protocol's times are.
pub(super) fn unix_ms(instant: SystemTime) -> i64 {
    instant
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(side: Side, syscalls: Option<u64>, threads: u32) -> SideCounters {
        let mut part = SideCounters::of(
            side,
            (
                KernelCounts {
                    syscalls,
                    ctx_switches: Some(10),
                    minor_faults: Some(1),
                    threads,
                },
                Vec::new(),
            ),
        );
        if syscalls.is_none() {
            part.missing.push(MissingCounter {
                side,
                counter: KernelCounter::Syscalls,
                reason: "perf_event_paranoid is 2".into(),
            });
        }
        part
    }

    #[test]
    fn the_generators_counts_add_up_beside_the_server_s() {
        let generators = [
            (
                "ssh://g1".to_owned(),
                Some(counted(Side::Generator, Some(100), 2)),
            ),
            (
                "ssh://g2".to_owned(),
                Some(counted(Side::Generator, Some(50), 3)),
            ),
        ];
        let trial = join(counted(Side::Server, Some(7), 9), &generators);
        assert_eq!(trial.server.syscalls, Some(7));
        assert_eq!(
            (
                trial.generator.syscalls,
                trial.generator.ctx_switches,
                trial.generator.threads
            ),
            (Some(150), Some(20), 5)
        );
        assert!(trial.missing.is_empty(), "{:?}", trial.missing);
        assert_eq!(trial.responses, None, "divided by the window's requests");
    }

    #[test]
    fn a_counter_refused_on_one_generator_is_missing_naming_the_host_and_why() {
        let generators = [
            (
                "ssh://g1".to_owned(),
                Some(counted(Side::Generator, Some(100), 2)),
            ),
            (
                "ssh://g2".to_owned(),
                Some(counted(Side::Generator, None, 3)),
            ),
            ("ssh://g3".to_owned(), None),
        ];
        let server = SideCounters::refused(Side::Server, "no tracefs");
        let trial = join(server, &generators);
        assert_eq!(trial.generator.syscalls, None);
        assert_eq!(trial.generator.ctx_switches, None, "g3 counted nothing");
        let syscalls: Vec<&MissingCounter> = trial
            .missing
            .iter()
            .filter(|m| m.counter == KernelCounter::Syscalls)
            .collect();
        assert_eq!(syscalls.len(), 2, "one per side: {syscalls:?}");
        assert_eq!(
            (syscalls[0].side, syscalls[0].reason.as_str()),
            (Side::Server, "no tracefs")
        );
        assert_eq!(
            syscalls[1].reason,
            "on ssh://g2: perf_event_paranoid is 2; on ssh://g3: its load report carries no counters"
        );
    }
}
