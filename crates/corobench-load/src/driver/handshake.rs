//! What the driver does for a TLS session: start the handshake once TCP
//! is up, feed it the bytes read and frame the plaintext they hold, record
//! the handshake when it completes (and hand its keys to the kernel with
//! kTLS), count a failed one as a handshake error.

use std::os::fd::AsRawFd as _;

use super::{Driver, Io};
use crate::conn::Phase;
use crate::recorder::ErrorKind;
use crate::session::Session;
use crate::tls::session::Received;

impl<I: Io> Driver<'_, I> {
    /// TCP is up: the ClientHello goes out.
    pub(crate) fn begin_handshake(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        let (Some(tls), Session::Tls(session)) = (self.tls.as_ref(), &mut conn.session) else {
            return self.established(i, now);
        };
        conn.phase = Phase::Handshaking;
        if session.begin(tls).is_err() {
            return self.opening_failed(i, ErrorKind::Handshake, now);
        }
        self.flush(i, now);
    }

    /// Bytes read from a TLS socket: the session takes them; the handshake
    /// moves on, or the plaintext they complete is framed. Returns whether
    /// the connection is still the one they were read from.
    pub(crate) fn tls_bytes(&mut self, i: usize, bytes: &[u8], received: u64, now: u64) -> bool {
        let generation = self.conns[i].generation;
        let mut plain = std::mem::take(&mut self.plain);
        plain.clear();
        let conn = &mut self.conns[i];
        let writing = conn.writing();
        let outcome = match &mut conn.session {
            Session::Tls(session) => session.receive(bytes, &mut plain, writing),
            Session::Plain => Ok(Received::default()),
        };
        match outcome {
            Ok(outcome) => self.after_receive(i, outcome, &plain, received, now),
            Err(_) if self.conns[i].phase == Phase::Handshaking => {
                self.opening_failed(i, ErrorKind::Handshake, now);
            }
            // Records that do not decrypt or parse: the stream is broken.
            Err(_) => self.abandon(i, ErrorKind::Read, now),
        }
        self.plain = plain;
        let conn = &self.conns[i];
        conn.generation == generation && conn.phase != Phase::Closed
    }

    fn after_receive(&mut self, i: usize, outcome: Received, plain: &[u8], at: u64, now: u64) {
        if outcome.established {
            self.handshake_done(i, now);
        } else if self.conns[i].phase == Phase::Handshaking {
            // The handshake's next flight (TLS 1.2), if it has one.
            self.flush(i, now);
        }
        let generation = self.conns[i].generation;
        if !plain.is_empty() && !self.frame(i, plain, at, now) {
            return;
        }
        if outcome.peer_closed && self.conns[i].generation == generation {
            self.eof(i, now);
        }
    }

    /// The handshake completed: it is recorded, the kernel takes the keys
    /// (kTLS), and the connection goes to work; the records it still owes
    /// (the client's Finished) go out with its first request, or alone if
    /// it has none to send yet.
    fn handshake_done(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        let Session::Tls(session) = &mut conn.session else {
            return;
        };
        let took_ns = now.saturating_sub(conn.connected_ns);
        self.core
            .recorder
            .handshake(session.resumed(), took_ns, || session.negotiated());
        if self.tls.as_ref().is_some_and(|tls| tls.ktls) {
            let fd = conn.socket.as_ref().map(|s| s.as_raw_fd());
            if fd.is_none_or(|fd| session.hand_to_kernel(fd).is_err()) {
                return self.opening_failed(i, ErrorKind::Handshake, now);
            }
        }
        let generation = conn.generation;
        self.established(i, now);
        let conn = &self.conns[i];
        if conn.generation == generation && conn.phase == Phase::Idle {
            self.flush(i, now);
        }
    }

    /// Writes the records the session has waiting, if any and no write is
    /// under way: a handshake flight, or the last one when no request follows.
    pub(crate) fn flush(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        let Session::Tls(session) = &conn.session else {
            return;
        };
        if conn.writing() || !session.encrypts() || session.outgoing().is_empty() {
            return;
        }
        conn.written = 0;
        conn.write_end = session.outgoing().len();
        if conn.phase != Phase::Handshaking {
            conn.phase = Phase::Writing;
        }
        self.writable(i, now);
    }

    /// kTLS: a record that is not application data, as the kernel handed
    /// it over (a session ticket, an alert).
    pub(crate) fn kernel_record(&mut self, i: usize, record_type: u8, data: &[u8], now: u64) {
        let Session::Tls(session) = &mut self.conns[i].session else {
            return;
        };
        match session.kernel_record(record_type, data) {
            Ok(false) => {}
            Ok(true) => self.eof(i, now),
            Err(_) => self.abandon(i, ErrorKind::Read, now),
        }
    }
}
