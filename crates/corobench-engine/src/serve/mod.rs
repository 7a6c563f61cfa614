//! `corobench serve`'s side of a trial on hosts: the lines it prints (the
//! ready line, a sample a second, the probe) and the coordinator's
//! [`Order`]s, read from stdin (whose end of file is still the lifeline),
//! kept until they are due, and answered on stdout beside the samples;
//! and before all that, getting the target ready to announce ([`start`]).
//! The command owns stdin, stdout and the signals; this is the rest.

mod start;

pub use start::{
    Placement, STDERR_TAIL_LINES, ServeError, build, runs_here, servable, start, still_running,
    verify_running,
};

use std::io::BufRead;
use std::net::{IpAddr, SocketAddr};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use corobench_model::{ResourceSample, Side, SideCounters};
use corobench_sampler::{SamplerError, ThreadCounters};
use corobench_target::{BuiltTarget, CpuSet, RunningTarget, StopReport, StopSignal};

use crate::protocol::{
    self, Certificates, Counters, Footprint, KilledAtStop, Order, Probe, Ready, Sample, ServeEvent,
    Stopped,
};
use crate::stats_probe::StatsRoute;
use crate::wall_clock::unix_ms;

/// How often the loop looks at the orders, the lifeline and the target
/// between samples.
const POLL: Duration = Duration::from_millis(50);

/// Why serving ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streamed<E> {
    /// The lifeline was cut, for this reason.
    Cut(E),
    /// The target exited by itself.
    TargetExited,
    /// Nobody takes the lines any more.
    OutputClosed,
}

/// Emits a sample line per sample of `target`'s process group, taken every
/// `interval`, and the answers to `orders` as they fall due, until `cut`
/// gives a reason to end, the target exits, or `emit` cannot write.
///
/// # Errors
/// The target's process group cannot be sampled.
pub fn stream<E>(
    target: &mut RunningTarget,
    interval: Duration,
    (orders, answerer): (&Receiver<Order>, &mut Answerer),
    cut: impl Fn() -> Option<E>,
    mut emit: impl FnMut(&ServeEvent) -> bool,
) -> Result<Streamed<E>, SamplerError> {
    let (sampler, samples) = corobench_sampler::Sampler::stream(target.pgid(), interval)?;
    let end = loop {
        match samples.recv_timeout(POLL) {
            Ok(sample) => {
                if !emit(&sample_line(&sample)) {
                    break Streamed::OutputClosed;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            // The group is gone: the target's exit is noticed below.
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(POLL),
        }
        let answers = answerer.due(orders, unix_ms());
        if !answers.iter().all(&mut emit) {
            break Streamed::OutputClosed;
        }
        if let Some(reason) = cut() {
            break Streamed::Cut(reason);
        }
        if target.exit_status().is_some() {
            break Streamed::TargetExited;
        }
    };
    // A sampler error now says nothing the end does not.
    let _ = sampler.stop();
    Ok(end)
}

/// The ready line: where the target listens (`listen`, or loopback) and
/// what exactly runs.
#[must_use]
pub fn ready_line(
    target: &RunningTarget,
    built: &BuiltTarget,
    (listen, cpus): (Option<IpAddr>, Option<String>),
    verified: bool,
) -> ServeEvent {
    ServeEvent::Ready(Box::new(Ready {
        target: target.name().to_owned(),
        url: format!("http://{}", target.addr()),
        addr: target.addr().to_string(),
        port: target.port(),
        listen: listen.map_or_else(|| "127.0.0.1".to_string(), |ip| ip.to_string()),
        pid: target.pid(),
        pgid: target.pgid(),
        model: built.manifest.model.clone(),
        source_hash: built.source_hash.clone(),
        tool_versions: built.manifest.tool_versions(),
        parameters: target.parameters().clone(),
        cpus,
        verified,
        corobench_version: env!("CARGO_PKG_VERSION").to_owned(),
        unix_ms: unix_ms(),
    }))
}

/// The last line: why serving ended (`reason`), the target's own exit
/// status when it `exited` first, and, from the `stop` report, whether it
/// ignored its stop `signal` until SIGKILL, and for how long: the trial
/// on hosts keeps that as its `killed_at_stop` flag, as a local one does.
#[must_use]
pub fn stopped_line(
    reason: &str,
    exited: Option<std::process::ExitStatus>,
    signal: StopSignal,
    stop: Option<&StopReport>,
) -> ServeEvent {
    let killed = stop.filter(|r| r.needed_sigkill && !r.exited_before_stop);
    ServeEvent::Stopped(Stopped {
        reason: reason.to_owned(),
        exit_status: exited.map(|s| s.to_string()),
        needed_sigkill: stop.is_some_and(|r| r.needed_sigkill),
        killed_at_stop: killed.map(|r| KilledAtStop {
            signal: signal.name().to_owned(),
            waited_ms: u64::try_from(r.elapsed.as_millis()).unwrap_or(u64::MAX),
        }),
        unix_ms: unix_ms(),
    })
}

/// The machine-speed probe on `cpus` (every CPU when none are given).
#[must_use]
pub fn probe_line(cpus: Option<&CpuSet>) -> ServeEvent {
    let speed = crate::machine_probe::on_host(cpus);
    ServeEvent::Probe(Probe {
        mb_per_s: speed.as_ref().ok().copied(),
        error: speed.err().map(|why| why.to_string()),
    })
}

fn sample_line(sample: &ResourceSample) -> ServeEvent {
    ServeEvent::Sample(Sample {
        unix_ms: unix_ms(),
        sample: *sample,
    })
}

/// The longest line kept as a possible order; a longer one is skipped.
const MAX_ORDER_BYTES: usize = 64 * 1024;
/// How much of a line that is no order is quoted.
const QUOTED_CHARS: usize = 120;

/// Reads orders from `input` (`serve`'s stdin) until end of file or a read
/// error; a line that is no order (not text, too long, not an order) is
/// described to `ignored`, briefly, and skipped.
pub fn read_orders(mut input: impl BufRead, orders: &Sender<Order>, ignored: impl Fn(&str)) {
    let mut line = Vec::new();
    loop {
        line.clear();
        let Ok(Some(length)) = read_line_within(&mut input, &mut line, MAX_ORDER_BYTES) else {
            return;
        };
        if length > MAX_ORDER_BYTES {
            ignored(&format!("a line of {length} bytes, longer than any order"));
            continue;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            ignored(&format!("a line of {length} bytes that is not UTF-8 text"));
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        match protocol::from_line::<Order>(text) {
            // Nobody takes orders any more: read on, for the end of file.
            Some(order) => drop(orders.send(order)),
            None => ignored(&quoted(text)),
        }
    }
}

/// Reads one line (its newline left out), keeping at most `limit` bytes of
/// it in `line`; its whole length, or `None` at end of file.
fn read_line_within(
    input: &mut impl BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Option<usize>> {
    let mut length = 0;
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok((length > 0).then_some(length));
        }
        let (chunk, ends) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (&available[..at], Some(at + 1)),
            None => (available, None),
        };
        let room = limit.saturating_sub(line.len()).min(chunk.len());
        line.extend_from_slice(&chunk[..room]);
        length += chunk.len();
        let consumed = ends.unwrap_or(available.len());
        input.consume(consumed);
        if ends.is_some() {
            return Ok(Some(length));
        }
    }
}

/// `text` as quoted in a message: its start, and how long it was.
fn quoted(text: &str) -> String {
    if text.chars().count() <= QUOTED_CHARS {
        return format!("{text:?}");
    }
    let start: String = text.chars().take(QUOTED_CHARS).collect();
    format!("{start:?}… ({} bytes)", text.len())
}

/// Why the run's certificates could not be read: what came instead of
/// `{"ca":…,"cert":…,"key":…}` (PEM text) as the first line.
#[derive(Debug, thiserror::Error)]
#[error(
    "the run's certificates are expected as the first line of stdin, \
     {{\"ca\":…,\"cert\":…,\"key\":…}} (PEM text; the coordinator of a run on hosts \
     writes it); {got}"
)]
pub struct CertificatesError {
    /// What came instead.
    pub got: String,
}

/// Reads the run's certificates, the first line of `input` (before any
/// order).
///
/// # Errors
/// End of file, a read error, or a first line that is not the
/// certificates, saying which.
pub fn read_certificates(mut input: impl BufRead) -> Result<Certificates, CertificatesError> {
    let mut line = Vec::new();
    let got = match read_line_within(&mut input, &mut line, MAX_ORDER_BYTES) {
        Ok(Some(length)) if length <= MAX_ORDER_BYTES => None,
        Ok(Some(length)) => Some(format!("got a line of {length} bytes")),
        Ok(None) => Some("stdin ended first".to_owned()),
        Err(e) => Some(format!("stdin could not be read: {e}")),
    };
    if let Some(got) = got {
        return Err(CertificatesError { got });
    }
    std::str::from_utf8(&line)
        .ok()
        .and_then(protocol::from_line::<Certificates>)
        .ok_or_else(|| CertificatesError {
            got: format!("got {}", quoted(&String::from_utf8_lossy(&line))),
        })
}

/// How `/stats` of a target serving `protocol` at `addr` is read, in that
/// protocol: over TLS trusting the run's authority (`tls`); `None` when it
/// cannot be, so a footprint has no tasks, as a local trial's has none.
#[must_use]
pub fn stats_reach(
    protocol: corobench_model::Protocol,
    tls: Option<&corobench_target::TlsFiles>,
    addr: SocketAddr,
) -> Option<StatsRoute> {
    let trust = crate::connection::Trust::of_started(protocol, tls);
    StatsRoute::new(protocol, &trust, addr)
}

/// Carries out the orders of one served target.
#[derive(Debug)]
pub struct Answerer {
    pgid: i32,
    /// Where `/stats` answers and how it is reached (over TLS when the
    /// target serves TLS), for a target that serves the contract.
    stats: Option<StatsRoute>,
    pending: Vec<Order>,
    counting: Vec<Counting>,
}

/// A `count` order under way: counters attached when its span began.
#[derive(Debug)]
struct Counting {
    from_unix_ms: i64,
    to_unix_ms: i64,
    counters: Result<ThreadCounters, String>,
}

impl Counting {
    fn read(self) -> ServeEvent {
        let counted = match self.counters {
            Ok(counters) => SideCounters::of(Side::Server, counters.read()),
            Err(why) => SideCounters::refused(Side::Server, &why),
        };
        ServeEvent::Counters(Counters {
            from_unix_ms: self.from_unix_ms,
            to_unix_ms: self.to_unix_ms,
            counted,
        })
    }
}

impl Answerer {
    #[must_use]
    pub fn new(pgid: i32, stats: Option<StatsRoute>) -> Self {
        Self {
            pgid,
            stats,
            pending: Vec::new(),
            counting: Vec::new(),
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
        let mut answers: Vec<ServeEvent> = due
            .into_iter()
            .filter_map(|order| self.carry_out(&order))
            .collect();
        let (ended, running) = self
            .counting
            .drain(..)
            .partition(|c| c.to_unix_ms <= now_ms);
        self.counting = running;
        answers.extend(ended.into_iter().map(Counting::read));
        answers
    }

    /// The answer to `order` when it has one now.
    fn carry_out(&mut self, order: &Order) -> Option<ServeEvent> {
        match order {
            Order::Footprint { id, .. } => Some(ServeEvent::Footprint(self.footprint(*id))),
            Order::Count {
                from_unix_ms,
                to_unix_ms,
            } => {
                let counters = corobench_sampler::group_counters(self.pgid)
                    .map_err(|e| format!("the target's threads could not be listed: {e}"));
                self.counting.push(Counting {
                    from_unix_ms: *from_unix_ms,
                    to_unix_ms: *to_unix_ms,
                    counters,
                });
                None
            }
        }
    }

    fn footprint(&self, id: u32) -> Footprint {
        // One reading of `/stats` gives both: the tasks and the pool.
        let stats = self.stats.as_ref().and_then(StatsRoute::read);
        let tasks = stats.as_ref().and_then(|s| s.tasks);
        let pool = stats.and_then(|s| s.pool);
        let tree = corobench_sampler::snapshot(self.pgid);
        let (processes, threads, rss_bytes) = tree
            .as_ref()
            .map_or((0, 0, 0), |t| (t.processes, t.threads, t.rss_bytes));
        Footprint {
            id,
            unix_ms: unix_ms(),
            tasks,
            processes,
            threads,
            rss_bytes,
            pool,
            error: tree.err().map(|e| e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(needed_sigkill: bool, exited_before_stop: bool) -> StopReport {
        StopReport {
            status: None,
            needed_sigkill,
            exited_before_stop,
            elapsed: Duration::from_millis(5020),
            survivors: Vec::new(),
        }
    }

    fn killed(stop: Option<&StopReport>) -> Option<KilledAtStop> {
        match stopped_line("stdin closed", None, StopSignal::Int, stop) {
            ServeEvent::Stopped(stopped) => stopped.killed_at_stop,
            other => panic!("not a stopped line: {other:?}"),
        }
    }

    #[test]
    fn the_stopped_line_says_which_signal_was_ignored_until_sigkill_and_how_long() {
        let ignored = killed(Some(&report(true, false))).expect("killed at its stop");
        assert_eq!(
            (ignored.signal.as_str(), ignored.waited_ms),
            ("SIGINT", 5020)
        );
        // A clean stop, a crash before it, an unknown stop: nothing to say.
        assert_eq!(killed(Some(&report(false, false))), None);
        assert_eq!(killed(Some(&report(true, true))), None);
        assert_eq!(killed(None), None);
    }

    /// Issue "hostile input, third round", message 5: a line of binary
    /// bytes on `serve`'s stdin ended it as if stdin had closed, and a 10 MB
    /// line was echoed whole. Both are skipped, briefly described, and the
    /// orders after them are read.
    #[test]
    fn binary_and_huge_lines_are_skipped_and_orders_after_them_read() {
        let order = protocol::to_line(&Order::Footprint {
            id: 7,
            at_unix_ms: None,
        });
        let mut input = b"\xff\xfe\x00binary\n".to_vec();
        input.extend(vec![b'x'; 10 * 1024 * 1024]);
        input.extend(b"\n{\"not\": \"an order\"}\n");
        input.extend(order.as_bytes());
        input.push(b'\n');
        let (sender, receiver) = std::sync::mpsc::channel();
        let said = std::cell::RefCell::new(Vec::new());
        read_orders(&input[..], &sender, |line| {
            said.borrow_mut().push(line.to_owned())
        });
        let said = said.into_inner();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(said[0].contains("not UTF-8"), "{}", said[0]);
        assert!(
            said[1].contains("10485760 bytes, longer than any order"),
            "{}",
            said[1]
        );
        assert!(said.iter().all(|s| s.len() < 300), "{said:?}");
        assert!(matches!(
            receiver.try_recv(),
            Ok(Order::Footprint { id: 7, .. })
        ));
    }

    #[test]
    fn the_certificates_come_first_and_the_orders_after_them() {
        let certificates = Certificates {
            ca: "CA".into(),
            cert: "CERT".into(),
            key: "KEY".into(),
        };
        let order = protocol::to_line(&Order::Footprint {
            id: 3,
            at_unix_ms: None,
        });
        let input = format!("{}\n{order}\n", protocol::to_line(&certificates));
        let mut input = std::io::BufReader::new(input.as_bytes());
        assert_eq!(read_certificates(&mut input).unwrap(), certificates);
        assert!(
            !format!("{certificates:?}").contains("KEY"),
            "no key in messages"
        );
        let (sender, receiver) = std::sync::mpsc::channel();
        read_orders(input, &sender, |line| panic!("{line}"));
        assert!(matches!(
            receiver.try_recv(),
            Ok(Order::Footprint { id: 3, .. })
        ));
        let error = read_certificates(&b"{\"order\":\"count\"}\n"[..])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("first line of stdin") && error.contains("count"),
            "{error}"
        );
        let error = read_certificates(&b""[..]).unwrap_err();
        assert_eq!(error.got, "stdin ended first");
    }

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
    fn a_count_attaches_when_its_span_begins_and_answers_when_it_ends() {
        let (sender, receiver) = std::sync::mpsc::channel();
        // SAFETY: getpgrp has no preconditions and cannot fail.
        let mut answerer = Answerer::new(unsafe { libc::getpgrp() }, None);
        let count = Order::Count {
            from_unix_ms: 100,
            to_unix_ms: 200,
        };
        sender.send(count).unwrap();
        assert!(answerer.due(&receiver, 99).is_empty());
        assert!(answerer.due(&receiver, 100).is_empty());
        assert_eq!(answerer.counting.len(), 1);
        // Work of this group inside the span: system calls and faults.
        let pages: Vec<Vec<u8>> = (0..64).map(|_| vec![1_u8; 1 << 16]).collect();
        for _ in 0..100 {
            let _ = std::fs::metadata("/proc/self/stat");
        }
        let answers = answerer.due(&receiver, 250);
        let [ServeEvent::Counters(counters)] = answers.as_slice() else {
            panic!("{answers:?}")
        };
        assert_eq!((counters.from_unix_ms, counters.to_unix_ms), (100, 200));
        let counted = &counters.counted;
        assert!(counted.counts.threads >= 1, "{counted:?}");
        // Each kind was counted or is missing with its reason, never both.
        for kind in corobench_model::KernelCounter::ALL {
            let missing = counted.missing.iter().any(|m| m.counter == kind);
            assert_ne!(counted.counts.get(kind).is_some(), missing, "{counted:?}");
        }
        if let Some(syscalls) = counted.counts.syscalls {
            assert!(syscalls >= 100, "{syscalls}");
        }
        drop(pages);
        assert!(answerer.due(&receiver, 300).is_empty());
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
