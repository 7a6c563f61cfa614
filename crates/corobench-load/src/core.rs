//! What a generator thread does, independent of how it does I/O: which
//! connection sends when, when the measured window opens and closes, and
//! what gets recorded. Both backends drive one `Core` per thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::clock::{Clock, NS_PER_MS};
use crate::live::LIVE_INTERVAL_NS;
use crate::os::CpuTime;
use crate::pacer::Pacer;
use crate::progress::Progress;
use crate::ready::{READY_POLL_NS, ReadyGate};
use crate::recorder::{ErrorKind, Recorder};

/// Read-only facts every thread of a run shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) clock: Clock,
    /// The request, serialised once and repeated `pipeline` times, so that
    /// any number of pipelined requests up to the depth go out in one write.
    pub(crate) requests: Vec<u8>,
    /// Bytes of one request.
    pub(crate) request_len: usize,
    /// `false`: every request opens its own connection.
    pub(crate) keepalive: bool,
    /// Requests in flight per connection (1 without pipelining).
    pub(crate) pipeline: u32,
    pub(crate) head_request: bool,
    pub(crate) addr: std::net::SocketAddr,
    pub(crate) timeout_ns: u64,
    /// When the warm-up ends and the measured window opens at the earliest
    /// (a closed loop: exactly then).
    pub(crate) window_start_ns: u64,
    /// Open loop: the warm-up after the schedule's time zero; the window
    /// opens at the later of that and `window_start_ns`.
    pub(crate) warmup_after_ready_ns: u64,
    /// The measured window's length (duration runs).
    pub(crate) duration_ns: Option<u64>,
    /// Open loop: where the threads wait for each other to be ready.
    pub(crate) ready: ReadyGate,
    /// Open loop: every connection has one request answered before the
    /// schedule begins.
    pub(crate) prime: bool,
    /// Responses are stamped when the kernel received them (epoll only).
    pub(crate) kernel_stamps: bool,
    /// Requests are stamped when the kernel sent them (epoll only).
    /// An open loop stamped by the kernel whose reads may wait for its next
    /// send (see `stamps::reads_can_wait`).
    pub(crate) reads_can_wait: bool,
    pub(crate) send_stamps: bool,
    /// Open loop: requests due within this many ns of a send leave with it.
    pub(crate) tick_ns: u64,
    /// `https://`: the TLS configuration every thread copies.
    pub(crate) tls: Option<crate::tls::TlsSetup>,
    /// HTTP/2: the request's header block and body, and the settings.
    pub(crate) h2: Option<crate::h2::H2Setup>,
    /// The run's clock zero by the wall clock, in ns since the Unix epoch.
    pub(crate) base_unix_ns: u64,
    pub(crate) cancel: Arc<AtomicBool>,
    pub(crate) progress: Arc<Progress>,
}

/// One thread's share of the run.
#[derive(Clone, Debug)]
pub(crate) struct ThreadPlan {
    pub(crate) index: usize,
    pub(crate) connections: u32,
    /// Requests this thread must bring to an outcome (`-n` runs).
    pub(crate) requests: Option<u64>,
    /// Open loop: this thread's share of the rate.
    pub(crate) pace: Option<ThreadPace>,
    pub(crate) cpu: Option<usize>,
    pub(crate) expected_seconds: usize,
}

/// One thread's share of an open loop: its rate, and where in the common
/// send interval its sends fall, so that the threads' sends interleave.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadPace {
    pub(crate) rate_per_s: f64,
    /// A fraction of one interval, in [0, 1).
    pub(crate) phase: f64,
}

/// The request a connection has in flight, as the core handed it out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct InFlight {
    /// When the schedule wanted it sent (the actual send in a closed loop).
    pub(crate) intended_ns: u64,
    pub(crate) sent_ns: u64,
    /// Sent while the window was open: its outcome belongs to the window.
    pub(crate) in_window: bool,
}

/// Whether the thread goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    Continue,
    Finish,
}

/// What a thread hands back when it is done.
#[derive(Debug)]
pub(crate) struct ThreadResult {
    pub(crate) recorder: Recorder,
    pub(crate) cpu: CpuTime,
    pub(crate) window_start_ns: u64,
    pub(crate) window_end_ns: u64,
    /// Open loop: requests whose intended time fell inside the window.
    pub(crate) scheduled: u64,
    /// Timed windows: the answers collected after the window closed.
    pub(crate) drain: Option<Drain>,
    /// Open loop: the schedule's time zero.
    pub(crate) ready_ns: Option<u64>,
}

/// One thread's drain after its timed window closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Drain {
    /// Responses recorded after the window closed.
    pub(crate) responses: u64,
    /// Requests still unanswered when it gave up.
    pub(crate) timeouts: u64,
    pub(crate) elapsed_ns: u64,
}

/// The per-thread decision maker.
#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) recorder: Recorder,
    /// Open loop: this thread's share of the rate.
    pace: Option<ThreadPace>,
    /// Open loop, once every thread is ready: the schedule.
    pacer: Option<Pacer>,
    /// When the window opens and closes: set at the start in a closed
    /// loop, once the schedule begins in an open one.
    window_open_ns: u64,
    deadline_ns: Option<u64>,
    /// Requests that may still be started (`-n` runs).
    budget: Option<u64>,
    in_flight: u64,
    index: usize,
    cpu_at_start: CpuTime,
    window_start_ns: u64,
    window_end_ns: Option<u64>,
    /// Timed windows, once closed: until when answers are awaited, and
    /// what arrived since.
    drain_until_ns: Option<u64>,
    drain: Drain,
    cpu_at_end: Option<CpuTime>,
    /// Open loop: the schedule's time zero, once it began.
    ready_ns: Option<u64>,
    /// Open loop: requests due by the time the window opened.
    scheduled_before_window: u64,
    published_outcomes: u64,
    /// When this thread next copies its window for a live view, if one asked.
    next_live_ns: u64,
}

/// How often a thread wakes up at the latest, to sweep timeouts and reconnects.
pub(crate) const SWEEP_INTERVAL_NS: u64 = 10 * NS_PER_MS;

impl Core {
    pub(crate) fn new(shared: &Shared, plan: &ThreadPlan) -> Self {
        let open = plan.pace.is_some();
        let window_open_ns = if open {
            u64::MAX
        } else {
            shared.window_start_ns
        };
        Self {
            recorder: Recorder::new(
                open,
                (!shared.keepalive, shared.tls.is_some(), shared.h2.is_some()),
                plan.expected_seconds,
            ),
            pace: plan.pace,
            pacer: None,
            window_open_ns,
            deadline_ns: deadline(window_open_ns, shared.duration_ns, open),
            budget: plan.requests,
            in_flight: 0,
            index: plan.index,
            cpu_at_start: CpuTime::default(),
            window_start_ns: 0,
            window_end_ns: None,
            drain_until_ns: None,
            drain: Drain::default(),
            ready_ns: None,
            cpu_at_end: None,
            scheduled_before_window: 0,
            published_outcomes: 0,
            next_live_ns: 0,
        }
    }

    /// Whether the schedule is open (fixed rate) rather than closed.
    pub(crate) fn open_loop(&self) -> bool {
        self.pace.is_some()
    }

    /// Open loop: whether the schedule has begun (every thread was ready).
    pub(crate) fn scheduling(&self) -> bool {
        self.pacer.is_some()
    }

    /// Open loop: begins the schedule at `zero_ns`, when every thread got
    /// ready; the window opens after the warm-up that follows.
    pub(crate) fn start_schedule(&mut self, shared: &Shared, zero_ns: u64) {
        let Some(pace) = self.pace else {
            return;
        };
        self.pacer = Some(Pacer::new(
            zero_ns,
            pace.rate_per_s,
            pace.phase,
            shared.tick_ns,
        ));
        self.window_open_ns = shared
            .window_start_ns
            .max(zero_ns.saturating_add(shared.warmup_after_ready_ns));
        self.deadline_ns = deadline(self.window_open_ns, shared.duration_ns, false);
        self.ready_ns = Some(zero_ns);
    }

    /// Open loop, before the schedule: a request that readies a connection
    /// (answered, it is not recorded).
    pub(crate) fn priming_request(&mut self, now_ns: u64) -> InFlight {
        self.in_flight += 1;
        InFlight {
            intended_ns: now_ns,
            sent_ns: now_ns,
            in_window: false,
        }
    }

    /// A connection is free: returns the request it should send now, or
    /// `None` if it should stay idle.
    ///
    /// A request belongs to the window when it is *sent* inside it, whenever
    /// the schedule wanted it: a generator that fell behind during the
    /// warm-up still owes those requests, and counting them by their intended
    /// time would never let a `-n` run end (its budget is spent only by
    /// requests of the window) and would report fewer sent than answered.
    #[inline]
    pub(crate) fn next_request(&mut self, now_ns: u64) -> Option<InFlight> {
        if self.window_end_ns.is_some() || self.budget == Some(0) {
            return None;
        }
        let intended_ns = match (self.pace, self.pacer.as_mut()) {
            (None, _) => now_ns,
            (Some(_), Some(pacer)) => pacer.take_due(now_ns)?,
            (Some(_), None) => return None,
        };
        let in_window = self.recorder.measuring();
        if in_window {
            if self.pace.is_some() {
                self.recorder.sent_late(now_ns.saturating_sub(intended_ns));
            }
            if let Some(budget) = self.budget.as_mut() {
                *budget = budget.saturating_sub(1);
            }
        }
        self.in_flight += 1;
        Some(InFlight {
            intended_ns,
            sent_ns: now_ns,
            in_window,
        })
    }

    /// When the next open-loop request is due, if the schedule has one.
    pub(crate) fn next_due_ns(&self) -> Option<u64> {
        match (&self.pacer, self.budget) {
            (_, Some(0)) => None,
            (Some(pacer), _) => Some(pacer.next_due_ns()),
            (None, _) => None,
        }
    }

    /// Whether the outcome (response or error) of `request`, arriving now, is recorded.
    ///
    /// Every schedule records the requests it sent in the window, answered
    /// in it or in the drain after it, and no others: an answer that arrives
    /// in the window to a request of the warm-up is left out. Counting both
    /// it and the drain would count about one request per connection too
    /// many, and a closed loop would report more than its connections allow
    /// (connections ÷ latency, Little's law): 44 req/s from 4 connections to
    /// a server that takes 100 ms. An open loop thereby never reports more
    /// answers than requests sent; a `-n` run records exactly the n requests
    /// sent in the window.
    #[inline]
    pub(crate) fn outcome_counts(&self, request: InFlight) -> bool {
        request.in_window && self.recorder.measuring()
    }

    #[inline]
    pub(crate) fn response(&mut self, status: u16, request: InFlight, now_ns: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.outcome_counts(request) {
            self.recorder
                .response(status, request.intended_ns, request.sent_ns, now_ns);
            if self.draining() {
                self.drain.responses += 1;
            }
        }
    }

    /// A request that was in flight failed; the timeline puts the error
    /// in the second the request was sent in.
    pub(crate) fn request_failed(&mut self, kind: ErrorKind, request: InFlight, _now_ns: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.outcome_counts(request) {
            self.recorder.error(kind, request.sent_ns);
            if self.draining() && kind == ErrorKind::Timeout {
                self.drain.timeouts += 1;
            }
        }
    }

    /// Whether the measured window has closed (nothing new is sent).
    #[inline]
    pub(crate) fn window_closed(&self) -> bool {
        self.window_end_ns.is_some()
    }

    /// Whether the timed window has closed and answers owed are awaited.
    #[inline]
    pub(crate) fn draining(&self) -> bool {
        self.drain_until_ns.is_some()
    }

    /// An error no request in flight owns: a connection that could not be
    /// opened, bytes nobody asked for. In `-n` runs it uses up one request,
    /// so a dead server cannot keep the run alive forever, and once the
    /// budget is spent it is no longer recorded: the run ends with exactly
    /// n outcomes.
    pub(crate) fn error_without_request(&mut self, kind: ErrorKind, now_ns: u64) {
        if !self.recorder.measuring() || self.budget == Some(0) {
            return;
        }
        if let Some(budget) = self.budget.as_mut() {
            *budget = budget.saturating_sub(1);
        }
        self.recorder.error(kind, now_ns);
    }

    /// Opens the window when the warm-up ends, closes it at the deadline,
    /// and decides whether to go on. A timed window that closes with
    /// requests in flight drains: nothing more is sent, and the thread goes
    /// on reading until every request is answered or the timeout has passed
    /// since the window closed (the requests still unanswered then are for
    /// the driver to time out).
    pub(crate) fn turn(&mut self, shared: &Shared, now_ns: u64) -> Turn {
        if !self.recorder.measuring() && now_ns >= self.window_open_ns {
            self.begin_window(now_ns);
        }
        let cancelled = shared.cancel.load(Ordering::Relaxed);
        self.publish(shared);
        if let Some(until) = self.drain_until_ns {
            return self.drain_turn(until, cancelled, now_ns);
        }
        let out_of_time = self.deadline_ns.is_some_and(|deadline| now_ns >= deadline);
        let all_done = self.budget == Some(0) && self.in_flight == 0 && self.recorder.measuring();
        if out_of_time || all_done || cancelled {
            self.window_end_ns = Some(now_ns);
            self.cpu_at_end = Some(CpuTime::of_this_thread());
            self.recorder.end_window(now_ns);
        }
        if out_of_time && !all_done && !cancelled && self.recorder.measuring() {
            self.drain_until_ns = Some(now_ns.saturating_add(shared.timeout_ns));
            return self.drain_turn(now_ns.saturating_add(shared.timeout_ns), false, now_ns);
        }
        if out_of_time || all_done || cancelled {
            Turn::Finish
        } else {
            Turn::Continue
        }
    }

    /// A turn while draining: done when nothing is in flight any more, the
    /// timeout has passed, or the run is cancelled.
    fn drain_turn(&mut self, until_ns: u64, cancelled: bool, now_ns: u64) -> Turn {
        let closed_ns = self.window_end_ns.unwrap_or(now_ns);
        self.drain.elapsed_ns = now_ns.saturating_sub(closed_ns);
        if self.in_flight == 0 || now_ns >= until_ns || cancelled {
            Turn::Finish
        } else {
            Turn::Continue
        }
    }

    fn begin_window(&mut self, now_ns: u64) {
        self.recorder.begin_window(now_ns);
        self.window_start_ns = now_ns;
        self.cpu_at_start = CpuTime::of_this_thread();
        self.scheduled_before_window = self
            .pacer
            .as_ref()
            .map_or(0, |pacer| pacer.scheduled_by(now_ns));
    }

    fn publish(&mut self, shared: &Shared) {
        let outcomes = self.recorder.outcomes();
        if outcomes != self.published_outcomes || !self.recorder.measuring() {
            self.published_outcomes = outcomes;
            shared.progress.publish(
                self.index,
                self.recorder.responses,
                self.recorder.errors.total(),
                self.recorder.measuring(),
            );
        }
    }

    /// When a live view asked for it, copies the window so far for it at
    /// most every [`LIVE_INTERVAL_NS`]; `open_connections` is counted only then.
    #[inline]
    pub(crate) fn publish_live(
        &mut self,
        shared: &Shared,
        now_ns: u64,
        open_connections: impl FnOnce() -> u64,
    ) {
        let Some(live) = shared.progress.live_slots() else {
            return;
        };
        if now_ns >= self.next_live_ns
            && live.try_publish(self.index, &self.recorder, (open_connections(), now_ns))
        {
            self.next_live_ns = now_ns.saturating_add(LIVE_INTERVAL_NS);
        }
    }

    /// How long the thread may sleep before something is due.
    pub(crate) fn wait_ns(&self, now_ns: u64, can_send: bool) -> u64 {
        let mut wake = now_ns.saturating_add(SWEEP_INTERVAL_NS);
        if !self.recorder.measuring() {
            wake = wake.min(self.window_open_ns);
        }
        if self.open_loop() && !self.scheduling() {
            wake = wake.min(now_ns.saturating_add(READY_POLL_NS));
        }
        if let Some(until) = self.drain_until_ns {
            wake = wake.min(until);
        } else if let Some(deadline) = self.deadline_ns {
            wake = wake.min(deadline);
        }
        if can_send {
            if let Some(due) = self.next_due_ns() {
                wake = wake.min(due);
            }
        }
        wake.saturating_sub(now_ns)
    }

    pub(crate) fn finish(self, end_ns: u64) -> ThreadResult {
        let window_end_ns = self.window_end_ns.unwrap_or(end_ns);
        let scheduled = self.pacer.as_ref().map_or(0, |pacer| {
            pacer
                .scheduled_by(window_end_ns)
                .saturating_sub(self.scheduled_before_window)
        });
        let cpu_at_end = self.cpu_at_end.unwrap_or_else(CpuTime::of_this_thread);
        ThreadResult {
            cpu: cpu_at_end.since(self.cpu_at_start),
            recorder: self.recorder,
            window_start_ns: self.window_start_ns,
            window_end_ns,
            scheduled,
            drain: self.drain_until_ns.map(|_| self.drain),
            ready_ns: self.ready_ns,
        }
    }
}

/// When a window opening at `open_ns` closes; `None` for `-n` runs, and
/// while an open loop waits for its schedule (`pending`).
fn deadline(open_ns: u64, duration_ns: Option<u64>, pending: bool) -> Option<u64> {
    if pending {
        return None;
    }
    duration_ns.map(|d| open_ns.saturating_add(d))
}
