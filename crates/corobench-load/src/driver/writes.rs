//! The driver's write path: requests (sealed into TLS records when the
//! session encrypts) and the session's own records, one write at a time.

use super::{Driver, Io, Write};
use crate::conn::Phase;
use crate::recorder::ErrorKind;
use crate::session::Session;

impl<I: Io> Driver<'_, I> {
    /// Writes the newest `requests` requests in flight, as one write
    /// (sealed into TLS records after any the session still owes).
    pub(super) fn start_write(&mut self, i: usize, requests: usize, now: u64) {
        let shared = self.shared;
        let conn = &mut self.conns[i];
        let plaintext = requests.saturating_mul(shared.request_len);
        conn.written = 0;
        conn.write_end = plaintext;
        conn.phase = Phase::Writing;
        if let Session::Tls(tls) = &mut conn.session {
            if tls.encrypts() {
                if tls.seal(&shared.requests[..plaintext]).is_err() {
                    return self.abandon(i, ErrorKind::Write, now);
                }
                conn.write_end = tls.outgoing().len();
            }
        }
        self.writable(i, now);
    }

    /// Writes what is left of the current write: request bytes as they
    /// are, or the session's records.
    pub(crate) fn writable(&mut self, i: usize, now: u64) {
        let conn = &self.conns[i];
        if !matches!(conn.phase, Phase::Writing | Phase::Handshaking) || !conn.writing() {
            return;
        }
        let source = match &conn.session {
            Session::Tls(tls) if tls.encrypts() => tls.outgoing(),
            _ => &self.shared.requests[..],
        };
        match self
            .io
            .write(i, conn, &source[conn.written..conn.write_end])
        {
            // A partial write waits for the backend to report writability.
            Write::Wrote(n) => {
                if self.account_written(i, n) {
                    self.wrote_all(i, now);
                }
            }
            Write::Pending => {}
            Write::Failed => self.write_failed(i, now),
        }
    }

    /// A write the backend queued whole is done.
    pub(crate) fn write_completed(&mut self, i: usize, now: u64) {
        let conn = &self.conns[i];
        if conn.writing() && self.account_written(i, conn.write_end - conn.written) {
            self.wrote_all(i, now);
        }
    }

    /// A write the backend reported as done (or queued) failed after all.
    pub(crate) fn write_failed(&mut self, i: usize, now: u64) {
        if self.conns[i].phase == Phase::Handshaking {
            self.opening_failed(i, ErrorKind::Handshake, now);
        } else {
            self.abandon(i, ErrorKind::Write, now);
        }
    }

    /// Counts written bytes; returns whether the whole write is out.
    fn account_written(&mut self, i: usize, n: usize) -> bool {
        let conn = &mut self.conns[i];
        conn.written += n;
        self.core.recorder.wrote_bytes(n);
        conn.written >= conn.write_end
    }

    /// A write is out whole. Records the session made meanwhile go next;
    /// otherwise the connection waits for its answers (or, during the
    /// handshake, for the server's next flight) and takes more requests.
    fn wrote_all(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        (conn.written, conn.write_end) = (0, 0);
        if let Session::Tls(tls) = &mut conn.session {
            if tls.encrypts() && tls.sent() {
                conn.write_end = tls.outgoing().len();
                return self.writable(i, now);
            }
        }
        if conn.phase == Phase::Handshaking {
            return;
        }
        conn.phase = if conn.in_flight.is_empty() {
            Phase::Idle
        } else {
            Phase::Reading
        };
        self.top_up(i, now);
    }
}
