//! The footprints of a target on the server host, for the leak check every
//! trial gets ([`crate::leak::LeakCheck`]): `corobench serve` takes one
//! when told to ([`Order::Footprint`]), at once (the baseline, and after
//! the idle time as many as it takes to settle) or at an instant (halfway
//! through the window: the peak of tasks).

use std::time::Duration;

use super::asks::{self, Asks};
use crate::leak::{Footprint, Unreadable};
use crate::protocol::{self, Order};

/// How long one footprint may take: `/stats` alone may take 2 s.
const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// A footprint as the leak check reads it; why not, when `serve` could
/// not read the process group.
fn read(answer: protocol::Footprint) -> Result<Footprint, Unreadable> {
    match answer.error {
        Some(why) => Err(Unreadable(why)),
        None => Ok(Footprint {
            tasks: answer.tasks,
            processes: answer.processes,
            threads: answer.threads,
            rss_bytes: answer.rss_bytes,
            pool: answer.pool,
        }),
    }
}

/// The footprint orders of one session, each with an id of its own.
#[derive(Debug, Default)]
pub(super) struct Footprints {
    next_id: u32,
}

impl Footprints {
    /// The target's footprint now.
    pub(super) fn now(&mut self, server: &mut impl Asks) -> Result<Footprint, Unreadable> {
        let id = self.id();
        if !server.send(&Order::Footprint {
            id,
            at_unix_ms: None,
        }) {
            return Err(Unreadable("the session no longer takes orders".to_owned()));
        }
        let answer = asks::footprint(server, id, ANSWER_LIMIT)
            .ok_or_else(|| Unreadable(format!("no answer within {} s", ANSWER_LIMIT.as_secs())))?;
        read(answer)
    }

    /// Orders the footprint at `at_unix_ms` by the server host's clock;
    /// the id to take it by, when the order went out.
    pub(super) fn order_at(&mut self, server: &mut impl Asks, at_unix_ms: i64) -> Option<u32> {
        let id = self.id();
        let order = Order::Footprint {
            id,
            at_unix_ms: Some(at_unix_ms),
        };
        server.send(&order).then_some(id)
    }

    /// The tasks of footprint `id`, ordered earlier, if it has come.
    pub(super) fn tasks_of(server: &mut impl Asks, id: u32) -> Option<u64> {
        asks::footprint(server, id, Duration::ZERO)
            .and_then(|answer| read(answer).ok())
            .and_then(|f| f.tasks)
    }

    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::leak::{self, LeakCheck, Settled};
    use crate::protocol::ServeEvent;

    /// A server host that answers from a script, in order.
    #[derive(Default)]
    struct Scripted {
        answers: VecDeque<Option<Footprint>>,
        orders: Vec<Order>,
        peak_tasks: Option<u64>,
    }

    impl Asks for Scripted {
        fn send(&mut self, order: &Order) -> bool {
            self.orders.push(order.clone());
            true
        }

        fn answer(
            &mut self,
            wanted: &dyn Fn(&ServeEvent) -> bool,
            _: Duration,
        ) -> Option<ServeEvent> {
            let id = (1..=self.orders.len() as u32)
                .find(|id| wanted(&ServeEvent::Footprint(answer(*id, None))))?;
            let scheduled = self
                .orders
                .iter()
                .any(|o| matches!(o, Order::Footprint { id: i, at_unix_ms: Some(_) } if *i == id));
            let footprint = if scheduled {
                Some(footprint(self.peak_tasks?, 1, 4))
            } else {
                self.answers.pop_front().flatten()
            };
            Some(ServeEvent::Footprint(answer(id, footprint)))
        }
    }

    fn answer(id: u32, footprint: Option<Footprint>) -> protocol::Footprint {
        protocol::Footprint {
            id,
            unix_ms: 0,
            tasks: footprint.and_then(|f| f.tasks),
            processes: footprint.map_or(0, |f| f.processes),
            threads: footprint.map_or(0, |f| f.threads),
            rss_bytes: footprint.map_or(0, |f| f.rss_bytes),
            pool: footprint.and_then(|f| f.pool),
            error: footprint.is_none().then(|| "group 42 is gone".to_owned()),
        }
    }

    fn footprint(tasks: u64, processes: u32, threads: u32) -> Footprint {
        Footprint {
            tasks: Some(tasks),
            processes,
            threads,
            rss_bytes: 64 << 20,
            pool: None,
        }
    }

    /// A trial's leak check against the scripted host: the baseline, the
    /// peak ordered for halfway, the settled footprint; and the peak's tasks.
    fn trial(script: Vec<Option<Footprint>>, peak: Option<u64>) -> (Settled, Option<u64>) {
        let mut host = Scripted {
            answers: script.into(),
            peak_tasks: peak,
            ..Scripted::default()
        };
        let mut footprints = Footprints::default();
        let check = LeakCheck::before("ssh://s", footprints.now(&mut host));
        let peak_id = footprints.order_at(&mut host, 1_000);
        let peak = peak_id.and_then(|id| Footprints::tasks_of(&mut host, id));
        let running = std::sync::atomic::AtomicBool::new(false);
        let settled = check.settle(std::time::Duration::ZERO, &running, || {
            footprints.now(&mut host)
        });
        (settled, peak)
    }

    #[test]
    fn a_target_back_at_its_baseline_is_clean_with_its_tasks_recorded() {
        let (settled, peak) = trial(
            vec![Some(footprint(3, 1, 4)), Some(footprint(5, 1, 6))],
            Some(80),
        );
        let (tasks, flags, skipped) = settled.verdict(peak, &[]);
        assert_eq!((flags, skipped), (vec![], None));
        assert_eq!(
            (tasks.before, tasks.peak, tasks.after),
            (Some(3), Some(80), Some(5))
        );
    }

    #[test]
    fn tasks_and_processes_left_behind_are_flagged_as_a_local_trial_flags_them() {
        let leaking = footprint(900, 2, 4);
        // After the idle time the target never comes back: the last
        // footprint of the grace period is the one judged.
        let mut script = vec![Some(footprint(3, 1, 4))];
        script.resize(64, Some(leaking));
        let (settled, peak) = trial(script, None);
        let (tasks, flags, skipped) = settled.verdict(peak, &[]);
        assert_eq!(skipped, None);
        let local = leak::check(&footprint(3, 1, 4), &leaking, &[]);
        assert_eq!(flags, local);
        assert_eq!(flags.len(), 2, "{flags:?}");
        assert_eq!((tasks.peak, tasks.after), (None, Some(900)));
    }

    #[test]
    fn a_baseline_that_cannot_be_read_skips_the_check_and_says_why() {
        let (settled, peak) = trial(vec![None], None);
        let (tasks, flags, skipped) = settled.verdict(peak, &[]);
        assert!(flags.is_empty());
        assert_eq!(tasks.before, None);
        let why = skipped.expect("the reason");
        assert!(
            why.contains("ssh://s") && why.contains("group 42 is gone"),
            "{why}"
        );
    }

    /// The pool a target reports in its `/stats` crosses from the server
    /// host with its footprints: a trial on hosts gets the pool's window
    /// before and after the load, as a local trial does.
    #[test]
    fn the_pool_counters_before_and_after_the_load_come_with_the_footprints() {
        let pool = |acquires: u64, new_connections: u64| corobench_model::PoolCounters {
            acquires: Some(acquires),
            new_connections: Some(new_connections),
            ..corobench_model::PoolCounters::default()
        };
        let with_pool = |tasks, counters| Footprint {
            pool: Some(counters),
            ..footprint(tasks, 1, 4)
        };
        let (settled, _) = trial(
            vec![
                Some(with_pool(3, pool(1, 1))),
                Some(with_pool(3, pool(901, 10))),
            ],
            None,
        );
        let window = settled.pool().expect("both footprints carried the pool");
        assert_eq!(window.before, pool(1, 1));
        assert_eq!(window.after, pool(901, 10));
        let (without, _) = trial(
            vec![Some(footprint(3, 1, 4)), Some(footprint(3, 1, 4))],
            None,
        );
        assert_eq!(without.pool(), None, "no pool reported, none stored");
    }
}
