//! When an open loop's schedule begins: once every generator thread is
//! ready. A thread is ready when each of its connections is established
//! (and, when priming, has had one request answered), or when the request
//! timeout has passed since it began opening them. The schedule's time zero
//! is the moment the last thread got ready, the same for every thread, so
//! that opening hundreds of connections (and a server spawning its first
//! workers) is not charged to the server as the tail latency of a steady rate.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::clock::NS_PER_MS;

/// How often a ready thread looks whether the others are, at the latest.
pub(crate) const READY_POLL_NS: u64 = NS_PER_MS;

/// Not set yet.
const UNSET: u64 = u64::MAX;

/// The threads' meeting point.
#[derive(Debug)]
pub(crate) struct ReadyGate {
    threads: usize,
    arrived: AtomicUsize,
    zero_ns: AtomicU64,
}

impl ReadyGate {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            threads: threads.max(1),
            arrived: AtomicUsize::new(0),
            zero_ns: AtomicU64::new(UNSET),
        }
    }

    /// A thread is ready at `now_ns` (each thread calls this once); the
    /// last one sets the schedule's time zero.
    pub(crate) fn arrive(&self, now_ns: u64) {
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.zero_ns.store(now_ns.min(UNSET - 1), Ordering::Release);
        }
    }

    /// The schedule's time zero, once every thread is ready.
    pub(crate) fn zero_ns(&self) -> Option<u64> {
        let zero = self.zero_ns.load(Ordering::Acquire);
        (zero != UNSET).then_some(zero)
    }
}

/// Open loop, before the schedule: which connections are ready (see
/// [`crate::ready`]) and since when the thread has been opening them.
#[derive(Debug, Default)]
pub(crate) struct Readiness {
    pub(crate) conns: Vec<bool>,
    pub(crate) count: usize,
    pub(crate) opened_ns: u64,
    /// This thread has told the other threads it is ready.
    pub(crate) arrived: bool,
}

impl Readiness {
    /// Connection `i` is ready (established, or primed); once is enough.
    pub(crate) fn mark(&mut self, i: usize) {
        if let Some(ready) = self.conns.get_mut(i) {
            if !*ready {
                *ready = true;
                self.count += 1;
            }
        }
    }

    /// Whether connection `i` was marked ready.
    pub(crate) fn is_ready(&self, i: usize) -> bool {
        self.conns.get(i).copied().unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_zero_is_when_the_last_thread_got_ready() {
        let gate = ReadyGate::new(3);
        gate.arrive(10);
        gate.arrive(30);
        assert_eq!(
            gate.zero_ns(),
            None,
            "one thread is still opening connections"
        );
        gate.arrive(20);
        assert_eq!(gate.zero_ns(), Some(20), "set by the last to arrive");
    }

    #[test]
    fn a_connection_ready_twice_counts_once() {
        let mut ready = Readiness {
            conns: vec![false; 2],
            ..Readiness::default()
        };
        ready.mark(1);
        ready.mark(1);
        assert_eq!(
            ready.count, 1,
            "a reconnect does not ready a second connection"
        );
        assert!(ready.is_ready(1) && !ready.is_ready(0));
    }
}
