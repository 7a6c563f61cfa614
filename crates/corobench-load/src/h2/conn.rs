//! One HTTP/2 connection of the generator, without I/O: its streams (a fixed
//! table of slots, one per stream it may keep open), its flow-control
//! windows both ways, the settings each side announced, and the frames it
//! owes the server. The driver hands it the plaintext read and takes the
//! frames to write and the streams' outcomes ([`Event`]s) back.
//!
//! Nothing here allocates once the connection's buffers have grown to their
//! working size: a stream is a slot, a request a copy of a block made before
//! the run, an outcome an entry of a vector that is emptied, not dropped.

use super::frame::{self, code, setting};
use super::{H2Request, Http2Options};
use crate::core::InFlight;

/// How a stream ended without a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// The server reset it (RST_STREAM other than REFUSED_STREAM).
    Reset,
    /// The server refused it unprocessed: RST_STREAM REFUSED_STREAM, or
    /// above the last stream a GOAWAY let finish.
    Refused,
    /// Its body could not go out: the server's windows stayed closed.
    Stalled,
    /// No complete response within the timeout.
    Timeout,
    /// The response broke HTTP/2's rules for one stream (no `:status`).
    Malformed,
    /// The connection failed (see [`ConnError`]) or was lost under it.
    Connection,
}

/// What happened on the connection, for the driver to record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A stream's response is complete.
    Response { request: InFlight, status: u16 },
    /// A stream ended without one.
    Failed { request: InFlight, end: StreamEnd },
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS.
    Limit(u32),
    /// The server sent GOAWAY.
    GoAway,
    /// A background stream ended: its outcome is not the measured load's.
    Background {
        request: InFlight,
        outcome: Result<u16, StreamEnd>,
    },
}

/// Why the connection must close: an error of the whole connection (RFC
/// 9113 §5.4.1); the driver sends GOAWAY with `code` and reconnects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConnError {
    Protocol {
        code: u32,
        why: &'static str,
    },
    /// The server answered the preface in HTTP/1.1: it does not speak h2c.
    Http1Answer,
    /// The server answered with TLS records: the port speaks TLS.
    TlsAnswer,
}

impl ConnError {
    pub(super) fn protocol(why: &'static str) -> Self {
        Self::Protocol {
            code: code::PROTOCOL_ERROR,
            why,
        }
    }

    /// The code a GOAWAY for this error carries.
    pub(crate) fn code(self) -> u32 {
        match self {
            Self::Protocol { code, .. } => code,
            Self::Http1Answer | Self::TlsAnswer => code::PROTOCOL_ERROR,
        }
    }
}

/// One slot of the stream table; `id` 0 marks it free.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stream {
    pub(super) id: u32,
    pub(super) request: InFlight,
    /// The final status, once its response headers arrived (0 before).
    pub(super) status: u16,
    /// Bytes the server may still send on it.
    pub(super) recv_window: i64,
    /// Bytes received and not yet given back.
    pub(super) recv_unacked: u32,
    /// Bytes of body the server lets it send.
    pub(super) send_window: i64,
    pub(super) body_sent: usize,
    /// It carries the background request, not a measured one.
    pub(super) background: bool,
}

/// A closed loop refills a connection's streams once this share of them
/// (one in this many) is free: see [`H2Conn::refill_due`].
const REFILL_SHARE: u32 = 8;

/// An HTTP/2 connection's state.
#[derive(Debug)]
pub(crate) struct H2Conn {
    pub(super) options: Http2Options,
    pub(super) streams: Box<[Stream]>,
    /// Streams open now, background ones included.
    pub(super) open: u32,
    /// Background streams to keep open, and those open now.
    background_slots: u32,
    background_open: u32,
    pub(super) next_id: u32,
    /// The server's settings, once its first SETTINGS arrived.
    pub(super) settings_seen: bool,
    pub(super) peer_max_streams: u32,
    pub(super) peer_initial_window: u32,
    pub(super) peer_max_frame: u32,
    /// The connection's send window (request bodies).
    pub(super) send_window: i64,
    /// The connection's receive window and what was consumed of it.
    pub(super) recv_window: i64,
    pub(super) recv_unacked: u32,
    /// No new streams: the server sent GOAWAY, or stream ids ran out.
    pub(super) retiring: bool,
    pub(super) read: super::read::ReadState,
    /// Frames owed to the server, not yet handed to a write.
    pending: Vec<u8>,
    /// Frames being written (cleartext and kTLS write from here).
    writing: Vec<u8>,
    pub(super) events: Vec<Event>,
}

impl H2Conn {
    #[cfg(test)]
    pub(crate) fn new(options: Http2Options) -> Self {
        Self::with_background(options, 0)
    }

    /// A connection with room for `background` streams beside the
    /// measured ones.
    pub(crate) fn with_background(options: Http2Options, background: u32) -> Self {
        let slots = usize::try_from(options.streams.saturating_add(background))
            .unwrap_or(1)
            .max(1);
        Self {
            options,
            streams: vec![Stream::default(); slots].into_boxed_slice(),
            open: 0,
            background_slots: background,
            background_open: 0,
            next_id: 1,
            settings_seen: false,
            peer_max_streams: u32::MAX,
            peer_initial_window: frame::DEFAULT_WINDOW,
            peer_max_frame: frame::MIN_MAX_FRAME,
            send_window: i64::from(frame::DEFAULT_WINDOW),
            recv_window: i64::from(frame::DEFAULT_WINDOW),
            recv_unacked: 0,
            retiring: false,
            read: super::read::ReadState::new(),
            pending: Vec::with_capacity(4096),
            writing: Vec::with_capacity(4096),
            events: Vec::with_capacity(slots + 4),
        }
    }

    /// The socket is gone: back to a fresh connection (the caller has
    /// taken every stream's outcome), keeping the buffers.
    pub(crate) fn reset(&mut self) {
        for stream in self.streams.iter_mut() {
            *stream = Stream::default();
        }
        self.open = 0;
        self.background_open = 0;
        self.next_id = 1;
        self.settings_seen = false;
        self.peer_max_streams = u32::MAX;
        self.peer_initial_window = frame::DEFAULT_WINDOW;
        self.peer_max_frame = frame::MIN_MAX_FRAME;
        self.send_window = i64::from(frame::DEFAULT_WINDOW);
        self.recv_window = i64::from(frame::DEFAULT_WINDOW);
        self.recv_unacked = 0;
        self.retiring = false;
        self.read.reset();
        self.pending.clear();
        self.writing.clear();
        self.events.clear();
    }

    /// The connection is established: the preface, our SETTINGS and the
    /// connection window's growth go out first.
    pub(crate) fn start(&mut self) {
        let options = self.options;
        self.pending.extend_from_slice(frame::PREFACE);
        let mut settings = [(setting::ENABLE_PUSH, 0), (0, 0), (0, 0)];
        let mut count = 1;
        if options.stream_window != frame::DEFAULT_WINDOW {
            settings[count] = (setting::INITIAL_WINDOW_SIZE, options.stream_window);
            count += 1;
        }
        if options.max_frame != frame::MIN_MAX_FRAME {
            settings[count] = (setting::MAX_FRAME_SIZE, options.max_frame);
            count += 1;
        }
        frame::write_settings(&mut self.pending, &settings[..count]);
        if options.connection_window > frame::DEFAULT_WINDOW {
            let growth = options.connection_window - frame::DEFAULT_WINDOW;
            frame::write_window_update(&mut self.pending, 0, growth);
            self.recv_window += i64::from(growth);
        }
    }

    /// Measured streams open now.
    pub(crate) fn open(&self) -> u32 {
        self.open - self.background_open
    }

    /// Streams open now, background ones included.
    pub(crate) fn open_with_background(&self) -> u32 {
        self.open
    }

    /// Whether no new stream may start here (GOAWAY, ids used up).
    pub(crate) fn retiring(&self) -> bool {
        self.retiring
    }

    /// How many more streams may open now: up to the streams asked for
    /// and the server's limit; one until the server's SETTINGS arrived
    /// (any server allows one, and it need not be waited for).
    pub(crate) fn room(&self) -> u32 {
        let measured = self.options.streams.saturating_sub(self.open());
        measured.min(self.total_room())
    }

    /// Whether a closed loop opens streams now: at once when no measured
    /// stream is open, otherwise once an eighth of the streams the
    /// connection may keep (rounded up, so at least one) are free.
    ///
    /// Refilling after every read sent one or two requests per write when
    /// a server answers a few streams at a time: each small write is a
    /// packet, a wake-up and a read for the server. Against one nginx
    /// worker at 10 × 100 streams that cost the server a fifth of its
    /// req/s and the generator twice its CPU per request. An eighth keeps
    /// about 95% of the streams in flight (the report's in-flight mean
    /// says what was kept).
    pub(crate) fn refill_due(&self) -> bool {
        let (room, open) = (self.room(), self.open());
        open == 0 || room >= (room + open).div_ceil(REFILL_SHARE)
    }

    /// Streams of any kind the server lets open now.
    fn total_room(&self) -> u32 {
        if self.retiring {
            return 0;
        }
        let slots = u32::try_from(self.streams.len()).unwrap_or(u32::MAX);
        let limit = if self.settings_seen {
            slots.min(self.peer_max_streams)
        } else {
            1
        };
        limit.saturating_sub(self.open)
    }

    /// How many more background streams may open now: none before the
    /// server's SETTINGS, and never so many that the server's stream limit
    /// leaves no room for a measured one.
    pub(crate) fn background_room(&self) -> u32 {
        if !self.settings_seen {
            return 0;
        }
        let allowed = self
            .background_slots
            .min(self.peer_max_streams.saturating_sub(1));
        allowed
            .saturating_sub(self.background_open)
            .min(self.total_room())
    }

    /// Opens a stream for the measured `request`: its HEADERS (and as much
    /// of its body as the windows allow) join the frames owed. Returns
    /// `false` when there is no room.
    pub(crate) fn open_stream(&mut self, request: InFlight, message: &H2Request) -> bool {
        self.room() > 0 && self.open_any(request, message, false)
    }

    /// Opens a background stream (a GET without a body); `false` when
    /// there is no room for one.
    pub(crate) fn open_background(&mut self, request: InFlight, message: &H2Request) -> bool {
        if self.background_room() == 0 || !self.open_any(request, message, true) {
            return false;
        }
        self.background_open += 1;
        true
    }

    fn open_any(&mut self, request: InFlight, message: &H2Request, background: bool) -> bool {
        let id = self.next_id;
        let Some(slot) = self.free_slot(id) else {
            return false;
        };
        self.next_id = id.saturating_add(2);
        if self.next_id > frame::MAX_STREAM_ID {
            self.retiring = true;
        }
        self.streams[slot] = Stream {
            id,
            request,
            status: 0,
            recv_window: i64::from(self.options.stream_window),
            recv_unacked: 0,
            send_window: i64::from(self.peer_initial_window),
            body_sent: 0,
            background,
        };
        self.open += 1;
        let max_frame = usize::try_from(self.peer_max_frame).unwrap_or(usize::MAX);
        let end_stream = message.body.is_empty();
        frame::write_headers(&mut self.pending, id, &message.block, end_stream, max_frame);
        if !end_stream {
            self.send_body(slot, &message.body);
        }
        true
    }

    /// A free slot for stream `id`: its natural one (ids wrap over the
    /// table), else the first free, so a lookup by id is nearly always one probe.
    fn free_slot(&self, id: u32) -> Option<usize> {
        let natural = self.natural_slot(id);
        if self.streams[natural].id == 0 {
            return Some(natural);
        }
        self.streams.iter().position(|s| s.id == 0)
    }

    fn natural_slot(&self, id: u32) -> usize {
        (id as usize / 2) % self.streams.len()
    }

    /// The slot of open stream `id`.
    pub(super) fn slot_of(&self, id: u32) -> Option<usize> {
        if id == 0 {
            return None;
        }
        let natural = self.natural_slot(id);
        if self.streams[natural].id == id {
            return Some(natural);
        }
        self.streams.iter().position(|s| s.id == id)
    }

    /// Sends as much of the body of the stream in `slot` as the windows allow.
    fn send_body(&mut self, slot: usize, body: &[u8]) {
        let max_frame = i64::from(self.peer_max_frame);
        loop {
            let stream = &mut self.streams[slot];
            let left = body.len() - stream.body_sent;
            let allowed = stream.send_window.min(self.send_window).min(max_frame);
            if left == 0 || allowed <= 0 {
                return;
            }
            let n = usize::try_from(allowed).map_or(left, |a| a.min(left));
            let chunk = &body[stream.body_sent..stream.body_sent + n];
            frame::write_data(&mut self.pending, stream.id, chunk, n == left);
            stream.body_sent += n;
            let sent = i64::try_from(n).unwrap_or(i64::MAX);
            stream.send_window -= sent;
            self.send_window -= sent;
        }
    }

    /// Windows opened: every stream with body left sends what it may.
    pub(super) fn send_bodies(&mut self, body: &[u8]) {
        if body.is_empty() {
            return;
        }
        for slot in 0..self.streams.len() {
            let stream = &self.streams[slot];
            if stream.id != 0 && !stream.background && stream.body_sent < body.len() {
                self.send_body(slot, body);
            }
        }
    }

    /// Frees the stream in `slot`, reporting how it ended.
    pub(super) fn close_stream(&mut self, slot: usize, outcome: Result<u16, StreamEnd>) {
        let stream = std::mem::take(&mut self.streams[slot]);
        self.open = self.open.saturating_sub(1);
        if stream.background {
            self.background_open = self.background_open.saturating_sub(1);
            self.events.push(Event::Background {
                request: stream.request,
                outcome,
            });
            return;
        }
        self.events.push(match outcome {
            Ok(status) => Event::Response {
                request: stream.request,
                status,
            },
            Err(end) => Event::Failed {
                request: stream.request,
                end,
            },
        });
    }

    /// Ends every open stream as `end` (the connection is lost or over).
    pub(crate) fn fail_all(&mut self, end: StreamEnd) {
        for slot in 0..self.streams.len() {
            if self.streams[slot].id != 0 {
                self.close_stream(slot, Err(end));
            }
        }
    }

    /// Cancels the streams sent longer than `timeout_ns` ago (RST_STREAM
    /// CANCEL): a stream whose body the server's windows kept in stalled,
    /// the others timed out.
    pub(crate) fn expire(&mut self, now_ns: u64, timeout_ns: u64, body_len: usize) {
        for slot in 0..self.streams.len() {
            let stream = self.streams[slot];
            if stream.id == 0 || now_ns.saturating_sub(stream.request.sent_ns) <= timeout_ns {
                continue;
            }
            frame::write_rst_stream(&mut self.pending, stream.id, code::CANCEL);
            let end = if !stream.background && stream.body_sent < body_len {
                StreamEnd::Stalled
            } else {
                StreamEnd::Timeout
            };
            self.close_stream(slot, Err(end));
        }
    }

    /// When the oldest open stream was sent.
    pub(crate) fn oldest_sent_ns(&self) -> Option<u64> {
        self.streams
            .iter()
            .filter(|s| s.id != 0)
            .map(|s| s.request.sent_ns)
            .min()
    }

    /// Appends a GOAWAY for `error`; no stream opens after it (the
    /// connection closes).
    pub(crate) fn goaway(&mut self, error: ConnError) {
        self.retiring = true;
        frame::write_goaway(&mut self.pending, 0, error.code());
    }

    /// The outcomes so far, to be handed back empty with [`Self::give_back`].
    pub(crate) fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    pub(crate) fn give_back(&mut self, mut events: Vec<Event>) {
        events.clear();
        if events.capacity() > self.events.capacity() {
            self.events = events;
        }
    }

    /// Whether frames wait to be written.
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The frames owed, for a TLS session to seal (then [`Self::sealed`]).
    pub(crate) fn pending(&self) -> &[u8] {
        &self.pending
    }

    /// The frames owed went into TLS records.
    pub(crate) fn sealed(&mut self) {
        self.pending.clear();
    }

    /// Moves the frames owed to the write buffer (cleartext, kTLS) and
    /// returns their length; the buffer written before is done with.
    pub(crate) fn begin_write(&mut self) -> usize {
        self.writing.clear();
        std::mem::swap(&mut self.writing, &mut self.pending);
        self.writing.len()
    }

    /// The bytes of the write under way (cleartext, kTLS).
    pub(crate) fn writing(&self) -> &[u8] {
        &self.writing
    }

    pub(super) fn pending_mut(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }
}

#[cfg(test)]
mod tests;
