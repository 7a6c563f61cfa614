//! `corobench serve`'s side of the coordinator's [`Order`]s: read from
//! stdin (whose end of file is still the lifeline), kept until they are
//! due, and answered on stdout beside the samples.

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::sync::mpsc::{Receiver, Sender};

use super::protocol::{self, Footprint, Order, ServeEvent};
use crate::runner::stats_probe;

/// Reads orders from stdin until end of file or a read error; a line that
/// is no order is said on stderr and skipped.
pub fn read_orders(orders: &Sender<Order>) {
    let stdin = std::io::stdin().lock();
    for line in stdin.lines().map_while(Result::ok) {
        if line.trim().is_empty() {
            continue;
        }
        match protocol::from_line::<Order>(&line) {
            // Nobody takes orders any more: read on, for the end of file.
            Some(order) => drop(orders.send(order)),
            None => eprintln!("serve: ignored a line on stdin that is no order: {line:?}"),
        }
    }
}

/// Carries out the orders of one served target.
#[derive(Debug)]
pub struct Answerer {
    pgid: i32,
    /// Where `/stats` answers, for a target that serves the contract.
    stats: Option<SocketAddr>,
    pending: Vec<Order>,
}

impl Answerer {
    #[must_use]
    pub fn new(pgid: i32, stats: Option<SocketAddr>) -> Self {
        Self {
            pgid,
            stats,
            pending: Vec::new(),
        }
    }

    /// Takes the orders that arrived and answers those due at `now_ms`.
    pub fn due(&mut self, incoming: &Receiver<Order>, now_ms: i64) -> Vec<ServeEvent> {
        self.pending.extend(incoming.try_iter());
        let (due, later): (Vec<Order>, Vec<Order>) = self
            .pending
            .drain(..)
            .partition(|order| order.due_unix_ms().is_none_or(|at| at <= now_ms));
        self.pending = later;
        due.into_iter().map(|order| self.answer(&order)).collect()
    }

    fn answer(&self, order: &Order) -> ServeEvent {
        match order {
            Order::Footprint { id, .. } => ServeEvent::Footprint(self.footprint(*id)),
        }
    }

    fn footprint(&self, id: u32) -> Footprint {
        let tasks = self.stats.and_then(stats_probe::tasks);
        let tree = corobench_sampler::snapshot(self.pgid);
        let (processes, threads, rss_bytes) = tree
            .as_ref()
            .map_or((0, 0, 0), |t| (t.processes, t.threads, t.rss_bytes));
        Footprint {
            id,
            unix_ms: crate::wall_clock::unix_ms(),
            tasks,
            processes,
            threads,
            rss_bytes,
            error: tree.err().map(|e| e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_waits_until_it_is_due_and_is_answered_once() {
        let (sender, receiver) = std::sync::mpsc::channel();
        // SAFETY: getpgrp has no preconditions and cannot fail.
        let pgid = unsafe { libc::getpgrp() };
        let mut answerer = Answerer::new(pgid, None);
        sender
            .send(Order::Footprint {
                id: 1,
                at_unix_ms: Some(1_000),
            })
            .unwrap();
        sender
            .send(Order::Footprint {
                id: 2,
                at_unix_ms: None,
            })
            .unwrap();
        let now = answerer.due(&receiver, 999);
        let [ServeEvent::Footprint(first)] = now.as_slice() else {
            panic!("{now:?}")
        };
        assert_eq!(first.id, 2);
        assert!(first.processes >= 1 && first.threads >= 1 && first.rss_bytes > 0);
        assert_eq!((first.tasks, &first.error), (None, &None));
        let later = answerer.due(&receiver, 1_000);
        assert!(matches!(later.as_slice(), [ServeEvent::Footprint(f)] if f.id == 1));
        assert!(answerer.due(&receiver, 5_000).is_empty());
    }

    #[test]
    fn a_group_that_is_gone_is_said() {
        let (_sender, receiver) = std::sync::mpsc::channel();
        let mut answerer = Answerer::new(i32::MAX - 1, None);
        answerer.pending.push(Order::Footprint {
            id: 7,
            at_unix_ms: None,
        });
        let answered = answerer.due(&receiver, 0);
        let [ServeEvent::Footprint(footprint)] = answered.as_slice() else {
            panic!("{answered:?}")
        };
        assert!(footprint.error.is_some(), "{footprint:?}");
        assert_eq!(footprint.processes, 0);
    }
}
