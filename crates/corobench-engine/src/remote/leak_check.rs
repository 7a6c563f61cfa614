//! The leak check of a trial on hosts: the verdict a local trial gets
//! ([`super::leak`]), from footprints `corobench serve` takes on the server
//! host when told to ([`Order::Footprint`]): one before the load, one
//! halfway through the window (the peak of tasks), and after the idle time
//! as many as it takes to settle, as a local trial does.

use std::time::Duration;

use corobench_model::{PoolWindow, ResourceSample, TaskCounts, TrialFlag};

use super::serve_asks::{self, Asks};
use crate::leak::{self, Footprint};
use crate::remote::protocol::{self, Order};

/// How long one footprint may take: `/stats` alone may take 2 s.
const ANSWER_LIMIT: Duration = Duration::from_secs(10);

/// A footprint as the leak check reads it; why not, when `serve` could
/// not read the process group.
fn read(answer: protocol::Footprint) -> Result<Footprint, String> {
    match answer.error {
        Some(why) => Err(why),
        None => Ok(Footprint {
            tasks: answer.tasks,
            processes: answer.processes,
            threads: answer.threads,
            rss_bytes: answer.rss_bytes,
            pool: answer.pool,
        }),
    }
}

/// The leak check of one trial on hosts, from its baseline on.
#[derive(Debug)]
pub(super) struct RemoteLeakCheck {
    host: String,
    before: Result<Footprint, String>,
    next_id: u32,
    peak: Option<u32>,
}

impl RemoteLeakCheck {
    /// Takes the baseline, once the target is ready and before any load.
    pub(super) fn before(server: &mut impl Asks, host: &str) -> Self {
        let mut check = Self {
            host: host.to_owned(),
            before: Err(String::new()),
            next_id: 0,
            peak: None,
        };
        check.before = check.ask(server, None);
        check
    }

    /// Orders the footprint of the middle of the window, at `at_unix_ms`
    /// by the server host's clock: its tasks are the trial's peak.
    pub(super) fn order_peak(&mut self, server: &mut impl Asks, at_unix_ms: i64) {
        let id = self.id();
        let order = Order::Footprint {
            id,
            at_unix_ms: Some(at_unix_ms),
        };
        self.peak = server.send(&order).then_some(id);
    }

    /// After the idle time: the footprint once it settled (or the grace
    /// ran out), and the peak taken during the window.
    pub(super) fn settle(mut self, server: &mut impl Asks) -> Settled {
        let peak = self
            .peak
            .and_then(|id| serve_asks::footprint(server, id, Duration::ZERO))
            .and_then(|answer| read(answer).ok())
            .and_then(|f| f.tasks);
        let after = match &self.before {
            Ok(before) => {
                let before = *before;
                leak::settle(&before, &[], leak::GRACE, || self.ask(server, None).ok())
                    .ok_or_else(|| "no footprint was read after the load".to_owned())
            }
            Err(_) => Err("no baseline".to_owned()),
        };
        Settled {
            host: self.host,
            before: self.before,
            after,
            peak,
        }
    }

    fn ask(
        &mut self,
        server: &mut impl Asks,
        at_unix_ms: Option<i64>,
    ) -> Result<Footprint, String> {
        let id = self.id();
        if !server.send(&Order::Footprint { id, at_unix_ms }) {
            return Err("the session no longer takes orders".to_owned());
        }
        let answer = serve_asks::footprint(server, id, ANSWER_LIMIT)
            .ok_or_else(|| format!("no answer within {} s", ANSWER_LIMIT.as_secs()))?;
        read(answer)
    }

    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }
}

/// The footprints of a trial on hosts, before its window's samples are in.
#[derive(Debug)]
pub(super) struct Settled {
    host: String,
    before: Result<Footprint, String>,
    after: Result<Footprint, String>,
    peak: Option<u64>,
}

impl Settled {
    /// The database pool's counters before the load and once settled after
    /// it, when the target reported its pool both times.
    pub(super) fn pool(&self) -> Option<PoolWindow> {
        let before = self.before.as_ref().ok()?.pool?;
        let after = self.after.as_ref().ok()?.pool?;
        Some(PoolWindow { before, after })
    }

    /// The tasks around the load, the leak flags with the samples of the
    /// `window`, and why the check could not run, if it could not.
    pub(super) fn verdict(
        &self,
        window: &[ResourceSample],
    ) -> (TaskCounts, Vec<TrialFlag>, Option<String>) {
        let tasks = TaskCounts {
            before: self.before.as_ref().ok().and_then(|f| f.tasks),
            peak: self.peak,
            after: self.after.as_ref().ok().and_then(|f| f.tasks),
        };
        match (&self.before, &self.after) {
            (Ok(before), Ok(after)) => (tasks, leak::check(before, after, window), None),
            (Err(why), _) | (_, Err(why)) => {
                let why = format!(
                    "leak check skipped: the footprint of the target on {} could not be read \
                     ({why})",
                    self.host
                );
                (tasks, Vec::new(), Some(why))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::remote::protocol::ServeEvent;

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

    fn trial(script: Vec<Option<Footprint>>, peak: Option<u64>) -> Settled {
        let mut host = Scripted {
            answers: script.into(),
            peak_tasks: peak,
            ..Scripted::default()
        };
        let mut check = RemoteLeakCheck::before(&mut host, "ssh://s");
        check.order_peak(&mut host, 1_000);
        check.settle(&mut host)
    }

    #[test]
    fn a_target_back_at_its_baseline_is_clean_with_its_tasks_recorded() {
        let settled = trial(
            vec![Some(footprint(3, 1, 4)), Some(footprint(5, 1, 6))],
            Some(80),
        );
        let (tasks, flags, skipped) = settled.verdict(&[]);
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
        let (tasks, flags, skipped) = trial(script, None).verdict(&[]);
        assert_eq!(skipped, None);
        let local = leak::check(&footprint(3, 1, 4), &leaking, &[]);
        assert_eq!(flags, local);
        assert_eq!(flags.len(), 2, "{flags:?}");
        assert_eq!((tasks.peak, tasks.after), (None, Some(900)));
    }

    #[test]
    fn a_baseline_that_cannot_be_read_skips_the_check_and_says_why() {
        let (tasks, flags, skipped) = trial(vec![None], None).verdict(&[]);
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
        let settled = trial(
            vec![
                Some(with_pool(3, pool(1, 1))),
                Some(with_pool(3, pool(901, 10))),
            ],
            None,
        );
        let window = settled.pool().expect("both footprints carried the pool");
        assert_eq!(window.before, pool(1, 1));
        assert_eq!(window.after, pool(901, 10));
        let without = trial(
            vec![Some(footprint(3, 1, 4)), Some(footprint(3, 1, 4))],
            None,
        );
        assert_eq!(without.pool(), None, "no pool reported, none stored");
    }
}
