//! The frames the server sends, parsed as bytes arrive in whatever pieces
//! the socket hands over. DATA payloads are counted, never copied; other
//! frames are handed over whole (from the read itself when they fit in it,
//! else from a buffer the connection keeps). Response header blocks are
//! decoded by `hpack`.

use super::conn::{ConnError, Event, H2Conn, StreamEnd};
use super::frame::{self, Head, code, flag, kind, setting};
use super::hpack::HpackDecoder;
use super::{H2Request, frame::HEAD_BYTES};

/// The largest response header block the generator decodes: a megabyte,
/// far beyond any server's own limit (nginx: 32 KiB of fields by default).
/// A larger one closes the connection as a protocol error (ENHANCE_YOUR_CALM).
pub(crate) const MAX_HEADER_BLOCK_BYTES: usize = 1 << 20;

/// The HPACK dynamic table size the generator allows the server (the default).
const HEADER_TABLE_BYTES: usize = 4096;

/// Where the reading of the server's frames stands.
pub(crate) struct ReadState {
    /// The header of the frame being read, as far as it arrived.
    head: [u8; HEAD_BYTES],
    head_len: usize,
    /// The frame whose payload is arriving, and the bytes of it still due.
    frame: Option<Head>,
    left: usize,
    /// A non-DATA payload split over reads.
    payload: Vec<u8>,
    /// A header block split over HEADERS and CONTINUATION frames.
    block: Vec<u8>,
    block_stream: u32,
    block_end_stream: bool,
    in_block: bool,
    /// Whether the server's first frame (which must be SETTINGS) arrived.
    greeted: bool,
    decoder: HpackDecoder,
}

impl std::fmt::Debug for ReadState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadState")
            .field("frame", &self.frame)
            .field("left", &self.left)
            .field("in_block", &self.in_block)
            .finish_non_exhaustive()
    }
}

impl ReadState {
    pub(crate) fn new() -> Self {
        let decoder = HpackDecoder::new(HEADER_TABLE_BYTES);
        Self {
            head: [0; HEAD_BYTES],
            head_len: 0,
            frame: None,
            left: 0,
            payload: Vec::new(),
            block: Vec::with_capacity(1024),
            block_stream: 0,
            block_end_stream: false,
            in_block: false,
            greeted: false,
            decoder,
        }
    }

    pub(crate) fn reset(&mut self) {
        let (payload, block) = (
            std::mem::take(&mut self.payload),
            std::mem::take(&mut self.block),
        );
        *self = Self::new();
        (self.payload, self.block) = (payload, block);
        self.payload.clear();
        self.block.clear();
    }
}

impl H2Conn {
    /// Takes plaintext the server sent: outcomes join the events, frames
    /// owed (acknowledgements, window updates, request bodies) the pending
    /// bytes.
    ///
    /// # Errors
    /// A connection error: the driver closes the connection with GOAWAY.
    pub(crate) fn receive(
        &mut self,
        mut bytes: &[u8],
        message: &H2Request,
    ) -> Result<(), ConnError> {
        if !self.read.greeted && self.read.head_len == 0 {
            check_greeting(bytes)?;
        }
        while !bytes.is_empty() {
            let Some(head) = self.read.frame else {
                let have = self.read.head_len;
                let take = (HEAD_BYTES - have).min(bytes.len());
                self.read.head[have..have + take].copy_from_slice(&bytes[..take]);
                self.read.head_len += take;
                bytes = &bytes[take..];
                if self.read.head_len == HEAD_BYTES {
                    self.read.head_len = 0;
                    let head = Head::parse(&self.read.head);
                    self.begin_frame(head)?;
                    if head.len == 0 {
                        self.finish_frame(head, &[], message)?;
                    }
                }
                continue;
            };
            let take = self.read.left.min(bytes.len());
            let (chunk, rest) = bytes.split_at(take);
            bytes = rest;
            self.read.left -= take;
            let done = self.read.left == 0;
            if head.kind == kind::DATA {
                if done {
                    self.read.frame = None;
                    self.finish_frame(head, &[], message)?;
                }
            } else if done && self.read.payload.is_empty() {
                // The whole payload is in this read: no copy.
                self.read.frame = None;
                self.finish_frame(head, chunk, message)?;
            } else {
                self.read.payload.extend_from_slice(chunk);
                if done {
                    self.read.frame = None;
                    let payload = std::mem::take(&mut self.read.payload);
                    let outcome = self.finish_frame(head, &payload, message);
                    self.read.payload = payload;
                    self.read.payload.clear();
                    outcome?;
                }
            }
        }
        Ok(())
    }

    /// A frame header arrived: it is checked, and a DATA frame's length is
    /// counted against the windows (its payload is never kept).
    fn begin_frame(&mut self, head: Head) -> Result<(), ConnError> {
        if !self.read.greeted {
            if head.kind != kind::SETTINGS || head.has(flag::ACK) {
                return Err(ConnError::protocol(
                    "the server's first frame is not SETTINGS",
                ));
            }
            self.read.greeted = true;
        }
        if head.len > self.options.max_frame {
            return Err(ConnError::Protocol {
                code: code::FRAME_SIZE_ERROR,
                why: "a frame larger than SETTINGS_MAX_FRAME_SIZE",
            });
        }
        if self.read.in_block && head.kind != kind::CONTINUATION {
            return Err(ConnError::protocol(
                "a header block interrupted by another frame",
            ));
        }
        if head.kind == kind::DATA {
            self.count_data(head)?;
        }
        self.read.frame = (head.len > 0).then_some(head);
        self.read.left = head.len as usize;
        Ok(())
    }

    /// A DATA frame's bytes are taken from the windows and given back
    /// once half a window was used (the generator consumes them at once).
    fn count_data(&mut self, head: Head) -> Result<(), ConnError> {
        if head.stream == 0 {
            return Err(ConnError::protocol("DATA on stream 0"));
        }
        let len = i64::from(head.len);
        self.recv_window -= len;
        if self.recv_window < 0 {
            return Err(ConnError::Protocol {
                code: code::FLOW_CONTROL_ERROR,
                why: "DATA beyond the connection's window",
            });
        }
        self.recv_unacked += head.len;
        if self.recv_unacked >= self.options.connection_window / 2 {
            let unacked = self.recv_unacked;
            frame::write_window_update(self.pending_mut(), 0, unacked);
            self.recv_window += i64::from(unacked);
            self.recv_unacked = 0;
        }
        let Some(slot) = self.slot_of(head.stream) else {
            // A stream already cancelled: the connection's window counted it.
            return Ok(());
        };
        let half_window = self.options.stream_window / 2;
        let stream = &mut self.streams[slot];
        stream.recv_window -= len;
        if stream.recv_window < 0 {
            return Err(ConnError::Protocol {
                code: code::FLOW_CONTROL_ERROR,
                why: "DATA beyond a stream's window",
            });
        }
        stream.recv_unacked += head.len;
        if !head.has(flag::END_STREAM) && stream.recv_unacked >= half_window {
            let (id, unacked) = (stream.id, stream.recv_unacked);
            stream.recv_window += i64::from(unacked);
            stream.recv_unacked = 0;
            frame::write_window_update(self.pending_mut(), id, unacked);
        }
        Ok(())
    }

    /// A whole frame arrived.
    fn finish_frame(
        &mut self,
        head: Head,
        payload: &[u8],
        message: &H2Request,
    ) -> Result<(), ConnError> {
        match head.kind {
            kind::DATA => {
                if head.has(flag::END_STREAM) {
                    self.end_of_stream(head.stream)?;
                }
                Ok(())
            }
            kind::HEADERS => self.headers(head, payload),
            kind::CONTINUATION => self.continuation(head, payload),
            kind::SETTINGS => self.settings(head, payload, message),
            kind::WINDOW_UPDATE => self.window_update(head, payload, message),
            kind::PING => self.ping(head, payload),
            kind::RST_STREAM => self.rst_stream(head, payload),
            kind::GOAWAY => self.goaway_received(head, payload),
            kind::PUSH_PROMISE => Err(ConnError::protocol("PUSH_PROMISE after push was disabled")),
            kind::PRIORITY if head.len != 5 => Err(frame_size("a PRIORITY frame not 5 bytes long")),
            // PRIORITY and unknown types are ignored (§5.5).
            _ => Ok(()),
        }
    }

    /// The stream's response is complete (its last frame had END_STREAM).
    fn end_of_stream(&mut self, id: u32) -> Result<(), ConnError> {
        let Some(slot) = self.slot_of(id) else {
            return Ok(());
        };
        match self.streams[slot].status {
            0 => Err(ConnError::protocol("a response ended before its headers")),
            status => {
                self.close_stream(slot, Ok(status));
                Ok(())
            }
        }
    }

    fn headers(&mut self, head: Head, payload: &[u8]) -> Result<(), ConnError> {
        if head.stream == 0 {
            return Err(ConnError::protocol("HEADERS on stream 0"));
        }
        let fragment = frame::headers_fragment(&head, payload).ok_or(ConnError::protocol(
            "HEADERS with padding longer than the frame",
        ))?;
        self.read.block.clear();
        self.read.block.extend_from_slice(fragment);
        self.read.block_stream = head.stream;
        self.read.block_end_stream = head.has(flag::END_STREAM);
        self.read.in_block = !head.has(flag::END_HEADERS);
        if self.read.in_block {
            return Ok(());
        }
        self.header_block()
    }

    fn continuation(&mut self, head: Head, payload: &[u8]) -> Result<(), ConnError> {
        if !self.read.in_block || head.stream != self.read.block_stream {
            return Err(ConnError::protocol(
                "CONTINUATION without a header block to continue",
            ));
        }
        if self.read.block.len() + payload.len() > MAX_HEADER_BLOCK_BYTES {
            return Err(ConnError::Protocol {
                code: code::ENHANCE_YOUR_CALM,
                why: "a response header block larger than a megabyte",
            });
        }
        self.read.block.extend_from_slice(payload);
        self.read.in_block = !head.has(flag::END_HEADERS);
        if self.read.in_block {
            return Ok(());
        }
        self.header_block()
    }

    /// A whole header block: decoded always (the dynamic table must follow
    /// the server's), applied to its stream if that is still open.
    fn header_block(&mut self) -> Result<(), ConnError> {
        let status = self.decode_block()?;
        let (id, end_stream) = (self.read.block_stream, self.read.block_end_stream);
        let Some(slot) = self.slot_of(id) else {
            return Ok(());
        };
        let stream = &mut self.streams[slot];
        if stream.status == 0 {
            match status {
                // Interim (1xx) responses come before the final one.
                Some(100..=199) if !end_stream => return Ok(()),
                Some(status) => stream.status = status,
                None => {
                    frame::write_rst_stream(self.pending_mut(), id, code::PROTOCOL_ERROR);
                    self.close_stream(slot, Err(StreamEnd::Malformed));
                    return Ok(());
                }
            }
        }
        if end_stream {
            self.end_of_stream(id)?;
        }
        Ok(())
    }

    /// Decodes the whole block (updating the dynamic table): its `:status`.
    fn decode_block(&mut self) -> Result<Option<u16>, ConnError> {
        let mut status = None;
        let read = &mut self.read;
        let decoded = read.decoder.decode(&read.block, |name, value| {
            if name == b":status" {
                status = parse_status(value);
            }
        });
        read.block.clear();
        decoded.map_err(|error| ConnError::Protocol {
            code: code::COMPRESSION_ERROR,
            why: error.0,
        })?;
        Ok(status)
    }

    fn settings(
        &mut self,
        head: Head,
        payload: &[u8],
        message: &H2Request,
    ) -> Result<(), ConnError> {
        if head.stream != 0 {
            return Err(ConnError::protocol("SETTINGS on a stream"));
        }
        if head.has(flag::ACK) {
            return if payload.is_empty() {
                Ok(())
            } else {
                Err(frame_size("a SETTINGS acknowledgement with a payload"))
            };
        }
        if payload.len() % 6 != 0 {
            return Err(frame_size("SETTINGS not a multiple of 6 bytes"));
        }
        for parameter in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([parameter[0], parameter[1]]);
            self.apply_setting(id, frame::u32_at(parameter, 2))?;
        }
        self.settings_seen = true;
        frame::write_settings_ack(self.pending_mut());
        self.send_bodies(&message.body);
        Ok(())
    }

    fn apply_setting(&mut self, id: u16, value: u32) -> Result<(), ConnError> {
        match id {
            setting::MAX_CONCURRENT_STREAMS => {
                self.peer_max_streams = value;
                self.events.push(Event::Limit(value));
            }
            setting::INITIAL_WINDOW_SIZE => {
                if value > frame::MAX_WINDOW {
                    return Err(ConnError::Protocol {
                        code: code::FLOW_CONTROL_ERROR,
                        why: "SETTINGS_INITIAL_WINDOW_SIZE above 2^31 - 1",
                    });
                }
                let delta = i64::from(value) - i64::from(self.peer_initial_window);
                self.peer_initial_window = value;
                for stream in self.streams.iter_mut().filter(|s| s.id != 0) {
                    stream.send_window += delta;
                }
            }
            setting::MAX_FRAME_SIZE => {
                if !(frame::MIN_MAX_FRAME..=frame::MAX_MAX_FRAME).contains(&value) {
                    return Err(ConnError::protocol("SETTINGS_MAX_FRAME_SIZE out of range"));
                }
                self.peer_max_frame = value;
            }
            setting::ENABLE_PUSH if value > 1 => {
                return Err(ConnError::protocol("SETTINGS_ENABLE_PUSH neither 0 nor 1"));
            }
            // HEADER_TABLE_SIZE (0x1): the request block never indexes, so
            // the server's table size does not matter; MAX_HEADER_LIST_SIZE
            // (0x6) is advisory, and unknown settings are ignored (§6.5.2).
            _ => {}
        }
        Ok(())
    }

    fn window_update(
        &mut self,
        head: Head,
        payload: &[u8],
        message: &H2Request,
    ) -> Result<(), ConnError> {
        if payload.len() != 4 {
            return Err(frame_size("a WINDOW_UPDATE not 4 bytes long"));
        }
        let increment = frame::u32_at(payload, 0) & frame::MAX_WINDOW;
        if increment == 0 {
            return Err(ConnError::protocol("a WINDOW_UPDATE of 0"));
        }
        let window = if head.stream == 0 {
            &mut self.send_window
        } else if let Some(slot) = self.slot_of(head.stream) {
            &mut self.streams[slot].send_window
        } else {
            return Ok(());
        };
        *window += i64::from(increment);
        if *window > i64::from(frame::MAX_WINDOW) {
            return Err(ConnError::Protocol {
                code: code::FLOW_CONTROL_ERROR,
                why: "a window grown beyond 2^31 - 1",
            });
        }
        self.send_bodies(&message.body);
        Ok(())
    }

    fn ping(&mut self, head: Head, payload: &[u8]) -> Result<(), ConnError> {
        if head.stream != 0 {
            return Err(ConnError::protocol("PING on a stream"));
        }
        if payload.len() != 8 {
            return Err(frame_size("a PING not 8 bytes long"));
        }
        if !head.has(flag::ACK) {
            frame::write_ping_ack(self.pending_mut(), payload);
        }
        Ok(())
    }

    fn rst_stream(&mut self, head: Head, payload: &[u8]) -> Result<(), ConnError> {
        if payload.len() != 4 {
            return Err(frame_size("an RST_STREAM not 4 bytes long"));
        }
        if head.stream == 0 {
            return Err(ConnError::protocol("RST_STREAM on stream 0"));
        }
        if let Some(slot) = self.slot_of(head.stream) {
            let end = if frame::u32_at(payload, 0) == code::REFUSED_STREAM {
                StreamEnd::Refused
            } else {
                StreamEnd::Reset
            };
            self.close_stream(slot, Err(end));
        }
        Ok(())
    }

    /// GOAWAY: no new streams; those above its last stream were not
    /// processed and end as refused; the rest may still finish.
    fn goaway_received(&mut self, head: Head, payload: &[u8]) -> Result<(), ConnError> {
        if payload.len() < 8 || head.stream != 0 {
            return Err(frame_size("a GOAWAY shorter than 8 bytes, or on a stream"));
        }
        let last = frame::u32_at(payload, 0) & frame::MAX_STREAM_ID;
        self.retiring = true;
        self.events.push(Event::GoAway);
        for slot in 0..self.streams.len() {
            if self.streams[slot].id > last {
                self.close_stream(slot, Err(StreamEnd::Refused));
            }
        }
        Ok(())
    }
}

fn frame_size(why: &'static str) -> ConnError {
    ConnError::Protocol {
        code: code::FRAME_SIZE_ERROR,
        why,
    }
}

/// A `:status` value: three digits.
fn parse_status(value: &[u8]) -> Option<u16> {
    match value {
        [a, b, c] if value.iter().all(u8::is_ascii_digit) => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

/// The server's first bytes: an HTTP/1.1 status line or a TLS record
/// instead of SETTINGS says what the port speaks.
fn check_greeting(bytes: &[u8]) -> Result<(), ConnError> {
    if bytes.starts_with(b"HTTP/") {
        return Err(ConnError::Http1Answer);
    }
    if matches!(bytes, [20..=23, 3, 0..=4, ..]) {
        return Err(ConnError::TlsAnswer);
    }
    Ok(())
}
