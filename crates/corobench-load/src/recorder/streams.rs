//! One thread's HTTP/2 streams over the window: how many were in flight
//! (time-weighted, so that a mean over the window reads like a level), the
//! most on one connection, the server's lowest stream limit, GOAWAYs, and
//! the background streams' outcomes.

use crate::core::InFlight;

/// HTTP/2 stream figures of one thread.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StreamTotals {
    /// Streams in flight now, over all the thread's connections.
    open: u64,
    /// When `open` last changed (or the window opened).
    since_ns: u64,
    /// ∫ open dt over the window, in stream-nanoseconds.
    pub(crate) area_ns: u128,
    /// The most streams in flight on one connection in the window.
    pub(crate) max_per_connection: u32,
    pub(crate) goaways: u64,
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS seen (warm-up included).
    pub(crate) server_limit: Option<u32>,
    /// Connections whose preface was answered in HTTP/1.1.
    pub(crate) http1_answers: u64,
    /// Background streams sent in the window: answered below 400, failed,
    /// and the answered ones' summed and longest latency.
    pub(crate) background_answered: u64,
    pub(crate) background_failed: u64,
    pub(crate) background_ns: u128,
    pub(crate) background_max_ns: u64,
    measuring: bool,
    /// When the window opened, and closed (0 until then).
    window_ns: (u64, u64),
}

impl StreamTotals {
    /// Accumulates the time `open` streams spent in flight up to `now_ns`.
    fn advance(&mut self, now_ns: u64) {
        if self.measuring {
            let span = u128::from(now_ns.saturating_sub(self.since_ns));
            self.area_ns += u128::from(self.open) * span;
        }
        self.since_ns = self.since_ns.max(now_ns);
    }

    pub(crate) fn begin_window(&mut self, now_ns: u64) {
        let open = self.open;
        *self = Self {
            open,
            since_ns: now_ns,
            server_limit: self.server_limit,
            measuring: true,
            window_ns: (now_ns, 0),
            ..Self::default()
        };
    }

    pub(crate) fn end_window(&mut self, now_ns: u64) {
        self.advance(now_ns);
        self.measuring = false;
        self.window_ns.1 = now_ns;
    }

    /// ∫ open dt over the window up to `now_ns` (or its close), and how
    /// long the window has lasted by then: a live view's mean so far.
    pub(crate) fn area_so_far(&self, now_ns: u64) -> (u128, u64) {
        let (start_ns, end_ns) = self.window_ns;
        if !self.measuring {
            return (self.area_ns, end_ns.saturating_sub(start_ns));
        }
        let until_ns = now_ns.max(self.since_ns);
        let pending = u128::from(self.open) * u128::from(until_ns - self.since_ns);
        (self.area_ns + pending, until_ns.saturating_sub(start_ns))
    }

    /// A stream opened on a connection that now has `on_connection` open.
    #[inline]
    pub(crate) fn opened(&mut self, now_ns: u64, on_connection: u32) {
        self.advance(now_ns);
        self.open += 1;
        if self.measuring {
            self.max_per_connection = self.max_per_connection.max(on_connection);
        }
    }

    /// A stream ended (answered or not).
    #[inline]
    pub(crate) fn closed(&mut self, now_ns: u64) {
        self.advance(now_ns);
        self.open = self.open.saturating_sub(1);
    }

    pub(crate) fn goaway(&mut self) {
        if self.measuring {
            self.goaways += 1;
        }
    }

    pub(crate) fn server_limit(&mut self, limit: u32) {
        self.server_limit = Some(self.server_limit.map_or(limit, |seen| seen.min(limit)));
    }

    /// A background stream sent as `request` ended at `at_ns`; only those
    /// sent inside the window and ended before it closed count.
    pub(crate) fn background_done(&mut self, request: InFlight, answered: bool, at_ns: u64) {
        if !self.measuring || !request.in_window {
            return;
        }
        if answered {
            let took = at_ns.saturating_sub(request.sent_ns);
            self.background_answered += 1;
            self.background_ns += u128::from(took);
            self.background_max_ns = self.background_max_ns.max(took);
        } else {
            self.background_failed += 1;
        }
    }

    pub(crate) fn http1_answer(&mut self) {
        if self.measuring {
            self.http1_answers += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_area_counts_only_the_window() {
        let mut t = StreamTotals::default();
        t.opened(0, 1);
        t.opened(10, 2);
        t.begin_window(100);
        t.closed(150);
        t.opened(200, 2);
        t.end_window(300);
        t.closed(400);
        // 2 streams for 50 ns, 1 for 50 ns, 2 for 100 ns.
        assert_eq!(t.area_ns, 2 * 50 + 50 + 2 * 100);
        assert_eq!(t.max_per_connection, 2, "only the window's peak");
        t.server_limit(100);
        t.server_limit(1);
        t.server_limit(5);
        assert_eq!(t.server_limit, Some(1));
    }

    #[test]
    fn the_area_so_far_counts_the_streams_still_open() {
        let mut t = StreamTotals::default();
        t.opened(0, 1);
        assert_eq!(t.area_so_far(50), (0, 0), "no window yet");
        t.begin_window(100);
        t.opened(150, 2);
        // 1 stream for 50 ns, then 2 for 50 ns not yet accounted.
        assert_eq!(t.area_so_far(200), (50 + 2 * 50, 100));
        t.end_window(300);
        t.closed(400);
        assert_eq!(t.area_so_far(500), (50 + 2 * 150, 200), "up to the close");
    }
}
