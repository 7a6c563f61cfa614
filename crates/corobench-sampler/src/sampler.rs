//! The sampling thread: reads the target's process group at a fixed interval
//! while the measured window is open.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use corobench_model::ResourceSample;

use crate::error::SamplerError;
use crate::ledger::IntervalUsage;
use crate::reader::PROC_ROOT;
use crate::series::ResourceSeries;
use crate::sys;
use crate::tree::TreeReader;

/// 10 Hz: fine enough to see a warm-up ramp or a stall, cheap enough to
/// leave the target's cores alone.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);

/// Starts sampling a process group.
#[derive(Debug)]
pub struct Sampler;

/// A running sampler; [`SamplerHandle::stop`] ends the window. Dropping the
/// handle also stops the thread (its samples are then discarded).
#[derive(Debug)]
pub struct SamplerHandle {
    stop: Sender<()>,
    thread: JoinHandle<Result<ResourceSeries, SamplerError>>,
}

impl Sampler {
    /// Reads the group once as the baseline (time zero of the window), then
    /// samples it every `interval` on its own thread until stopped.
    ///
    /// A round reads one `stat` per process and one `status` per thread
    /// (about 1.3 ms for 5 processes and 55 threads on a busy 2-core
    /// machine), so a target with thousands of threads costs the sampler a
    /// noticeable share of a core. The thread inherits the caller's CPU
    /// affinity: call this from a thread pinned away from the target's CPUs.
    ///
    /// `pgid` may come as libc's `pid_t` (`i32`) or as
    /// `std::process::Child::id` (`u32`).
    ///
    /// # Errors
    /// When `pgid` is not a valid group, `interval` is under 1 ms, the group
    /// has no live process, `/proc` cannot be read, or the thread cannot be
    /// started.
    pub fn start(pgid: impl Into<i64>, interval: Duration) -> Result<SamplerHandle, SamplerError> {
        Self::start_at(PROC_ROOT, check_group(pgid.into())?, interval)
    }

    /// Like [`Sampler::start`], but hands each sample over as soon as it is
    /// taken instead of keeping the series, so that a process watched for
    /// hours costs no memory; [`SamplerHandle::stop`] then returns an empty
    /// series. The receiver disconnects when the group vanishes.
    ///
    /// # Errors
    /// As [`Sampler::start`].
    pub fn stream(
        pgid: impl Into<i64>,
        interval: Duration,
    ) -> Result<(SamplerHandle, Receiver<ResourceSample>), SamplerError> {
        let (live, samples) = mpsc::channel();
        let handle = Self::start_with(PROC_ROOT, check_group(pgid.into())?, interval, Some(live))?;
        Ok((handle, samples))
    }

    pub(crate) fn start_at(
        proc_root: &str,
        pgid: i32,
        interval: Duration,
    ) -> Result<SamplerHandle, SamplerError> {
        Self::start_with(proc_root, pgid, interval, None)
    }

    fn start_with(
        proc_root: &str,
        pgid: i32,
        interval: Duration,
        live: Option<Sender<ResourceSample>>,
    ) -> Result<SamplerHandle, SamplerError> {
        if interval < Duration::from_millis(1) {
            return Err(SamplerError::InvalidInterval { interval });
        }
        let mut window = Window::open(proc_root, pgid, interval)?;
        window.live = live;
        let (stop, stop_requests) = mpsc::channel();
        let thread = thread::Builder::new()
            .name(format!("sampler-{pgid}"))
            .spawn(move || window.run(&stop_requests))
            .map_err(SamplerError::Spawn)?;
        Ok(SamplerHandle { stop, thread })
    }
}

/// A process group id as the kernel has it: `pid_t`, an `i32`, and
/// positive. Callers hold group ids as `i32` (libc) or `u32` (std), so the
/// entry points take either, widened to `i64`.
///
/// # Errors
/// [`SamplerError::InvalidGroup`] outside `1..=i32::MAX`: group 0 is what
/// kernel threads report, never a target, and no pid is negative.
pub(crate) fn check_group(pgid: i64) -> Result<i32, SamplerError> {
    i32::try_from(pgid)
        .ok()
        .filter(|pgid| *pgid > 0)
        .ok_or(SamplerError::InvalidGroup { pgid })
}

impl SamplerHandle {
    /// Ends the window: takes a last reading and returns the series.
    ///
    /// # Errors
    /// When `/proc` could not be read or parsed during the window.
    pub fn stop(self) -> Result<ResourceSeries, SamplerError> {
        // The thread may already have ended (the group vanished); then
        // nobody listens and the send fails harmlessly.
        let _ = self.stop.send(());
        self.thread
            .join()
            .map_err(|_| SamplerError::ThreadPanicked)?
    }

    /// Whether the thread has ended on its own (the group vanished, or
    /// `/proc` failed) before being stopped.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }
}

/// The open measured window, owned by the sampling thread.
#[derive(Debug)]
struct Window {
    tree: TreeReader,
    interval: Duration,
    clock_ticks_per_s: u64,
    started: Instant,
    last_round_at: Instant,
    samples: Vec<ResourceSample>,
    /// The usage and length of the interval behind the last sample, so a
    /// short tail can be folded into it.
    last_interval: Option<(IntervalUsage, Duration)>,
    /// Streaming: where each sample goes instead of `samples`.
    live: Option<Sender<ResourceSample>>,
}

impl Window {
    fn open(proc_root: &str, pgid: i32, interval: Duration) -> Result<Self, SamplerError> {
        let mut tree = TreeReader::new(proc_root, pgid)?;
        let baseline = tree.round()?;
        let started = Instant::now();
        if baseline.processes == 0 {
            return Err(SamplerError::GroupEmpty { pgid });
        }
        Ok(Self {
            tree,
            interval,
            clock_ticks_per_s: sys::clock_ticks_per_s()?,
            started,
            last_round_at: started,
            samples: Vec::new(),
            last_interval: None,
            live: None,
        })
    }

    fn run(mut self, stop_requests: &Receiver<()>) -> Result<ResourceSeries, SamplerError> {
        let mut next_round = self.started + self.interval;
        loop {
            let wait = next_round.saturating_duration_since(Instant::now());
            match stop_requests.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout) => {}
                // Stopped, or the handle was dropped.
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return self.finish(),
            }
            let (usage, elapsed) = self.round()?;
            if usage.processes == 0 {
                return Ok(ResourceSeries::new(self.samples, true));
            }
            self.push(usage, elapsed);
            // After a stall (the machine is busy), skip the missed rounds
            // rather than firing them back to back.
            let now = Instant::now();
            while next_round <= now {
                next_round += self.interval;
            }
        }
    }

    fn round(&mut self) -> Result<(IntervalUsage, Duration), SamplerError> {
        let usage = self.tree.round()?;
        let now = Instant::now();
        let elapsed = now - self.last_round_at;
        self.last_round_at = now;
        Ok((usage, elapsed))
    }

    fn push(&mut self, usage: IntervalUsage, elapsed: Duration) {
        let sample = self.sample(usage, elapsed);
        match &self.live {
            // Nobody listening any more is the listener's business: sampling
            // ends when the handle is stopped or dropped.
            Some(live) => {
                let _ = live.send(sample);
            }
            None => {
                self.samples.push(sample);
                self.last_interval = Some((usage, elapsed));
            }
        }
    }

    /// The last reading when the window closes. A tail shorter than half an
    /// interval is folded into the previous sample: a few milliseconds hold
    /// at most one clock tick of CPU, which would read as a spike.
    fn finish(mut self) -> Result<ResourceSeries, SamplerError> {
        let (tail, tail_elapsed) = self.round()?;
        if tail.processes == 0 {
            return Ok(ResourceSeries::new(self.samples, true));
        }
        match self.last_interval {
            Some((previous, previous_elapsed)) if tail_elapsed < self.interval / 2 => {
                let merged = self.sample(previous.then(tail), previous_elapsed + tail_elapsed);
                *self
                    .samples
                    .last_mut()
                    .expect("last_interval implies a sample") = merged;
            }
            _ => self.push(tail, tail_elapsed),
        }
        Ok(ResourceSeries::new(self.samples, false))
    }

    fn sample(&self, usage: IntervalUsage, elapsed: Duration) -> ResourceSample {
        let ticks_to_pct = |ticks: u64| {
            let cpu_s = ticks as f64 / self.clock_ticks_per_s as f64;
            cpu_s / elapsed.as_secs_f64().max(1e-9) * 100.0
        };
        let since_start = self.last_round_at - self.started;
        ResourceSample {
            t_ms: u64::try_from(since_start.as_millis()).unwrap_or(u64::MAX),
            cpu_user_pct: ticks_to_pct(usage.user_ticks),
            cpu_system_pct: ticks_to_pct(usage.system_ticks),
            cpu_run_pct: usage
                .run_ns
                .map(|ns| ns as f64 / 1e9 / elapsed.as_secs_f64().max(1e-9) * 100.0),
            rss_bytes: usage.rss_bytes,
            threads: usage.threads,
            processes: usage.processes,
            ctx_voluntary: usage.ctx.voluntary,
            ctx_involuntary: usage.ctx.involuntary,
        }
    }
}
