//! Per-thread recording of outcomes. Nothing here locks or allocates per
//! request: histograms are fixed-size and the timeline grows at most once a second.

use corobench_model::{ErrorCounts, LatencyHistogram, StatusCounts};

use crate::clock::{NS_PER_S, NS_PER_US};
use crate::timeline::SecondTotals;
use crate::tls::session::Negotiated;

mod streams;

pub(crate) use streams::StreamTotals;

/// Seconds of timeline reserved before the run: an hour.
const MAX_RESERVED_SECONDS: usize = 3600;

/// What went wrong with a request that got no usable response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    Connect,
    FdExhausted,
    PortsExhausted,
    Handshake,
    Write,
    Read,
    Timeout,
    Malformed,
    /// HTTP/2: the server reset the stream.
    RstStream,
    /// HTTP/2: the server refused the stream unprocessed.
    RefusedStream,
    /// HTTP/2: the body could not go out, the server's windows stayed closed.
    FlowControlStall,
    /// HTTP/2: the connection broke the protocol and was closed.
    Protocol,
}

/// One thread's measurements of the window.
#[derive(Debug)]
pub(crate) struct Recorder {
    measuring: bool,
    window_start_ns: u64,
    pub(crate) latency: LatencyHistogram,
    pub(crate) uncorrected: Option<LatencyHistogram>,
    /// Connection per request, and TLS: how long each connect took.
    pub(crate) connect: Option<LatencyHistogram>,
    /// TLS: the window's handshakes.
    pub(crate) tls: Option<TlsTotals>,
    /// Plaintext requests answered with TLS records (the port speaks TLS).
    pub(crate) tls_answers: u64,
    /// Kept-alive connections opened again in the window (see
    /// [`corobench_model::LoadReport::reconnects`]).
    pub(crate) reconnects: u64,
    /// HTTP/2: streams in flight, limits, GOAWAYs.
    pub(crate) streams: Option<StreamTotals>,
    pub(crate) status: StatusCounts,
    pub(crate) errors: ErrorCounts,
    pub(crate) responses: u64,
    pub(crate) bytes_read: u64,
    pub(crate) bytes_written: u64,
    pub(crate) timeline: Vec<SecondTotals>,
    /// Once the window has closed: its last second, where anything that
    /// happens while draining and belongs to no request's send is put.
    last_second: Option<usize>,
    pub(crate) send_lag: LagTotals,
    /// Kernel stamps: how long after the kernel's receipt responses were read.
    pub(crate) read_delay: LagTotals,
}

/// One thread's TLS handshakes in the window, and what the server agreed to.
#[derive(Debug, Default)]
pub(crate) struct TlsTotals {
    /// From the TCP connection being established to the session being ready.
    pub(crate) handshake: LatencyHistogram,
    pub(crate) full: u64,
    pub(crate) resumed: u64,
    /// What the thread's first completed handshake agreed (warm-up included).
    pub(crate) negotiated: Option<Negotiated>,
}

/// How late open-loop requests left (or stamped responses were read).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LagTotals {
    pub(crate) sent: u64,
    pub(crate) sum_us: u64,
    pub(crate) max_us: u64,
}

impl LagTotals {
    /// The threads' totals together.
    pub(crate) fn total<'a>(all: impl Iterator<Item = &'a Self>) -> Self {
        all.fold(Self::default(), |a, b| Self {
            sent: a.sent + b.sent,
            sum_us: a.sum_us.saturating_add(b.sum_us),
            max_us: a.max_us.max(b.max_us),
        })
    }

    /// The mean in µs; 0 without any.
    pub(crate) fn mean_us(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.sum_us as f64 / self.sent as f64
        }
    }

    #[inline]
    fn add(&mut self, lag_ns: u64) {
        let lag_us = lag_ns / NS_PER_US;
        self.sent += 1;
        self.sum_us = self.sum_us.saturating_add(lag_us);
        self.max_us = self.max_us.max(lag_us);
    }
}

impl Recorder {
    pub(crate) fn new(
        open_loop: bool,
        (connect_per_request, tls, http2): (bool, bool, bool),
        expected_seconds: usize,
    ) -> Self {
        Self {
            measuring: false,
            window_start_ns: 0,
            latency: LatencyHistogram::new(),
            uncorrected: open_loop.then(LatencyHistogram::new),
            connect: (connect_per_request || tls).then(LatencyHistogram::new),
            tls: tls.then(TlsTotals::default),
            tls_answers: 0,
            reconnects: 0,
            streams: http2.then(StreamTotals::default),
            status: StatusCounts::default(),
            errors: ErrorCounts::default(),
            responses: 0,
            bytes_read: 0,
            bytes_written: 0,
            // Reserve for the usual window only: a duration of years must not
            // allocate its whole series up front; longer ones grow as they go.
            timeline: Vec::with_capacity(expected_seconds.min(MAX_RESERVED_SECONDS) + 2),
            last_second: None,
            send_lag: LagTotals::default(),
            read_delay: LagTotals::default(),
        }
    }

    /// Starts the measured window: everything before it was warm-up.
    pub(crate) fn begin_window(&mut self, now_ns: u64) {
        self.measuring = true;
        self.window_start_ns = now_ns;
        self.latency.reset();
        for h in [self.uncorrected.as_mut(), self.connect.as_mut()]
            .into_iter()
            .flatten()
        {
            h.reset();
        }
        if let Some(tls) = self.tls.as_mut() {
            tls.handshake.reset();
            (tls.full, tls.resumed) = (0, 0);
        }
        self.tls_answers = 0;
        if let Some(streams) = self.streams.as_mut() {
            streams.begin_window(now_ns);
        }
        self.status = StatusCounts::default();
        self.errors = ErrorCounts::default();
        self.responses = 0;
        self.bytes_read = 0;
        self.bytes_written = 0;
        self.timeline.clear();
        self.send_lag = LagTotals::default();
        self.read_delay = LagTotals::default();
    }

    /// The window has closed at `now_ns`: outcomes may still be recorded
    /// (the drain), but the timeline ends with the second that holds `now_ns`.
    pub(crate) fn end_window(&mut self, now_ns: u64) {
        if let Some(streams) = self.streams.as_mut() {
            streams.end_window(now_ns);
        }
        self.last_second = Some(self.index_of(now_ns.saturating_sub(1)));
    }

    #[inline]
    pub(crate) fn measuring(&self) -> bool {
        self.measuring
    }

    /// A complete response. `intended_ns` equals `sent_ns` in a closed loop.
    /// The timeline puts it in the second its request was sent in (the
    /// window's first for a request sent before it opened), so that an
    /// answer collected after the window closed still lands in the window.
    #[inline]
    pub(crate) fn response(&mut self, status: u16, intended_ns: u64, sent_ns: u64, now_ns: u64) {
        if !self.measuring {
            return;
        }
        let latency_us = now_ns.saturating_sub(intended_ns) / NS_PER_US;
        self.latency.record_us(latency_us);
        if let Some(h) = self.uncorrected.as_mut() {
            h.record_us(now_ns.saturating_sub(sent_ns) / NS_PER_US);
        }
        self.status.count(status);
        match status {
            400..=499 => self.errors.status_4xx += 1,
            500..=599 => self.errors.status_5xx += 1,
            _ => {}
        }
        self.responses += 1;
        let second = self.second(sent_ns);
        second.requests += 1;
        second.latency_sum_us = second.latency_sum_us.saturating_add(latency_us);
        second.max_latency_us = second.max_latency_us.max(latency_us);
        if (400..=599).contains(&status) {
            second.errors += 1;
        }
    }

    /// A request (or connection attempt) that ended without a usable
    /// response; the timeline counts it in the second that holds `at_ns`
    /// (the request's send, or the failed attempt's end).
    #[inline]
    pub(crate) fn error(&mut self, kind: ErrorKind, at_ns: u64) {
        if !self.measuring {
            return;
        }
        let counter = match kind {
            ErrorKind::Connect => &mut self.errors.connect,
            ErrorKind::FdExhausted => &mut self.errors.fd_exhausted,
            ErrorKind::PortsExhausted => &mut self.errors.ports_exhausted,
            ErrorKind::Handshake => &mut self.errors.handshake,
            ErrorKind::Write => &mut self.errors.write,
            ErrorKind::Read => &mut self.errors.read,
            ErrorKind::Timeout => &mut self.errors.timeout,
            ErrorKind::Malformed => &mut self.errors.malformed,
            ErrorKind::RstStream => &mut self.errors.rst_stream,
            ErrorKind::RefusedStream => &mut self.errors.refused_stream,
            ErrorKind::FlowControlStall => &mut self.errors.flow_control_stall,
            ErrorKind::Protocol => &mut self.errors.protocol,
        };
        *counter += 1;
        self.second(at_ns).errors += 1;
    }

    /// A connection whose opening counts (the driver decides) was
    /// established `connect_ns` after its socket was created.
    #[inline]
    /// A kept-alive connection the server had closed was opened again.
    pub(crate) fn reconnected(&mut self) {
        if self.measuring {
            self.reconnects += 1;
        }
    }

    pub(crate) fn connected(&mut self, connect_ns: u64) {
        if let (true, Some(h)) = (self.measuring, self.connect.as_mut()) {
            h.record_us(connect_ns / NS_PER_US);
        }
    }

    /// A TLS handshake completed `handshake_ns` after its TCP connection;
    /// `negotiated` is asked for once per thread.
    pub(crate) fn handshake(
        &mut self,
        counted: bool,
        resumed: bool,
        handshake_ns: u64,
        negotiated: impl FnOnce() -> Negotiated,
    ) {
        let measuring = self.measuring;
        let Some(tls) = self.tls.as_mut() else {
            return;
        };
        if tls.negotiated.is_none() {
            tls.negotiated = Some(negotiated());
        }
        if !(measuring && counted) {
            return;
        }
        tls.handshake.record_us(handshake_ns / NS_PER_US);
        if resumed {
            tls.resumed += 1;
        } else {
            tls.full += 1;
        }
    }

    /// A plaintext request was answered with a TLS record.
    pub(crate) fn tls_answer(&mut self) {
        if self.measuring {
            self.tls_answers += 1;
        }
    }

    #[inline]
    pub(crate) fn read_bytes(&mut self, n: usize, now_ns: u64) {
        if self.measuring {
            self.bytes_read += n as u64;
            self.second(now_ns).bytes_read += n as u64;
        }
    }

    #[inline]
    pub(crate) fn wrote_bytes(&mut self, n: usize) {
        if self.measuring {
            self.bytes_written += n as u64;
        }
    }

    /// An open-loop request left `lag_ns` after its intended time.
    #[inline]
    pub(crate) fn sent_late(&mut self, lag_ns: u64) {
        if self.measuring {
            self.send_lag.add(lag_ns);
        }
    }

    /// A stamped response was read `delay_ns` after the kernel received it.
    #[inline]
    pub(crate) fn read_late(&mut self, delay_ns: u64) {
        if self.measuring {
            self.read_delay.add(delay_ns);
        }
    }

    /// Outcomes so far: responses plus errors that ended a request.
    pub(crate) fn outcomes(&self) -> u64 {
        self.responses + self.errors.transport()
    }

    #[inline]
    fn index_of(&self, at_ns: u64) -> usize {
        usize::try_from(at_ns.saturating_sub(self.window_start_ns) / NS_PER_S).unwrap_or(0)
    }

    #[inline]
    fn second(&mut self, at_ns: u64) -> &mut SecondTotals {
        let mut index = self.index_of(at_ns);
        if let Some(last) = self.last_second {
            index = index.min(last);
        }
        if index >= self.timeline.len() {
            self.timeline.resize(index + 1, SecondTotals::default());
        }
        &mut self.timeline[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_is_not_recorded() {
        let mut r = Recorder::new(false, (false, false, false), 1);
        r.response(200, 0, 0, 1_000_000);
        r.error(ErrorKind::Timeout, 1);
        assert_eq!(r.outcomes(), 0);
        r.begin_window(2 * NS_PER_S);
        r.response(200, 2 * NS_PER_S, 2 * NS_PER_S, 2 * NS_PER_S + 5_000_000);
        r.response(503, 2 * NS_PER_S, 2 * NS_PER_S, 3 * NS_PER_S + 1);
        r.error(ErrorKind::Read, 3 * NS_PER_S + 2);
        assert_eq!((r.responses, r.errors.status_5xx, r.errors.read), (2, 1, 1));
        assert_eq!(r.outcomes(), 3);
        assert_eq!(r.timeline.len(), 2);
        assert_eq!(
            (r.timeline[0].errors, r.timeline[1].errors),
            (1, 1),
            "the 503 belongs to the second its request was sent in"
        );
        assert_eq!(r.latency.count(), 2);
    }

    #[test]
    fn open_loop_records_both_latencies() {
        let mut r = Recorder::new(true, (false, false, false), 1);
        r.begin_window(0);
        // Intended at 0, sent 900 ms late, answered 1 ms after sending.
        r.response(200, 0, 900_000_000, 901_000_000);
        assert_eq!(r.latency.summary().max_us / 1000, 901);
        assert_eq!(r.uncorrected.as_ref().unwrap().summary().max_us / 100, 10);
    }

    #[test]
    fn answers_after_the_window_land_in_the_second_they_were_sent_in() {
        let mut r = Recorder::new(false, (false, false, false), 2);
        r.begin_window(0);
        r.response(200, NS_PER_S, NS_PER_S, NS_PER_S + 10);
        r.end_window(2 * NS_PER_S);
        // Sent in the last second, answered 300 ms after the window closed.
        r.response(200, 1_900_000_000, 1_900_000_000, 2_200_000_000);
        r.read_bytes(100, 2_200_000_000);
        r.error(ErrorKind::Connect, 2_300_000_000);
        assert_eq!(r.timeline.len(), 2, "the drain adds no second");
        assert_eq!(r.timeline[1].requests, 2);
        assert_eq!(r.timeline[1].max_latency_us, 300_000);
        assert_eq!((r.timeline[1].bytes_read, r.timeline[1].errors), (100, 1));
    }

    #[test]
    fn handshakes_count_in_the_window_and_the_session_from_the_first() {
        let mut r = Recorder::new(false, (false, true, false), 1);
        let agreed = || Negotiated {
            version: Some("TLSv1.3".into()),
            ..Negotiated::default()
        };
        r.handshake(true, false, 5_000_000, agreed);
        r.begin_window(NS_PER_S);
        r.handshake(true, true, 1_000_000, || unreachable!("asked once"));
        r.handshake(true, false, 3_000_000, || unreachable!("asked once"));
        let tls = r.tls.as_ref().unwrap();
        assert_eq!((tls.full, tls.resumed, tls.handshake.count()), (1, 1, 2));
        assert_eq!(
            tls.negotiated.as_ref().unwrap().version.as_deref(),
            Some("TLSv1.3")
        );
        assert!(r.connect.is_some(), "TLS records every connect");
    }
}
