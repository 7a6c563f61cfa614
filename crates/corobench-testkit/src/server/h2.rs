//! The knob server's HTTP/2 side: one connection's frames (RFC 9113) as a
//! small server sends and reads them, with the hostile behaviours of
//! [`H2Knobs`]. Requests are read whole (headers, then any body) and
//! answered with the knobs' status and body after their delay; bodies are
//! sent as the client's flow-control windows allow.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use super::Context;
use crate::h2flow::FlowControl;
use crate::h2wire::{
    ACK, END_HEADERS, END_STREAM, PREFACE, REFUSED_STREAM, headers_fragment, kind, literal,
    next_frame, write_frame, write_headers,
};
use crate::knobs::H2Knobs;

/// Why a connection is closed at once.
#[derive(Debug)]
pub(crate) struct Broken;

/// A response's body still to send, as windows allow.
#[derive(Debug)]
struct Sending {
    stream: u32,
    sent: usize,
}

/// One HTTP/2 connection of the knob server.
pub(crate) struct H2Serve {
    knobs: H2Knobs,
    greeted: bool,
    decoder: loona_hpack::Decoder<'static>,
    /// Streams whose request is still arriving (the body after HEADERS).
    arriving: HashMap<u32, ()>,
    /// A header block continued in CONTINUATION frames.
    block: Option<(u32, bool, Vec<u8>)>,
    /// Responses owed: when each may go, and its stream.
    owed: VecDeque<(Instant, u32)>,
    /// With `serial`: when the stream being served is done.
    busy_until: Option<Instant>,
    sending: VecDeque<Sending>,
    /// The client's windows for our DATA, and its largest frame.
    flow: FlowControl,
    /// Requests taken on this connection, and the GOAWAY sent after them.
    taken: u64,
    goaway_last: Option<u32>,
    malformed_sent: bool,
    /// The response header block (`:status`, type, length, padding).
    block_bytes: Vec<u8>,
}

impl H2Serve {
    pub(crate) fn new(knobs: &H2Knobs, status: u16, body_len: usize) -> Self {
        Self {
            knobs: knobs.clone(),
            greeted: false,
            decoder: loona_hpack::Decoder::new(),
            arriving: HashMap::new(),
            block: None,
            owed: VecDeque::new(),
            busy_until: None,
            sending: VecDeque::new(),
            flow: FlowControl::default(),
            taken: 0,
            goaway_last: None,
            malformed_sent: false,
            block_bytes: response_block(status, body_len, knobs.header_bytes),
        }
    }

    /// Takes every complete frame (the preface first) out of `inbound`,
    /// appending what it answers at once to `out`.
    pub(crate) fn take(
        &mut self,
        inbound: &mut Vec<u8>,
        ctx: &Context,
        now: Instant,
        out: &mut Vec<u8>,
    ) -> Result<(), Broken> {
        if !self.greeted {
            if inbound.len() < PREFACE.len() {
                return if PREFACE.starts_with(inbound) {
                    Ok(())
                } else {
                    Err(Broken)
                };
            }
            if !inbound.starts_with(PREFACE) {
                return Err(Broken);
            }
            inbound.drain(..PREFACE.len());
            self.greeted = true;
            self.send_settings(out);
        }
        let mut at = 0;
        while let Some((frame_kind, flags, stream, payload)) = next_frame(inbound, &mut at) {
            self.frame(frame_kind, flags, stream, payload, (ctx, now), out)?;
        }
        inbound.drain(..at);
        Ok(())
    }

    fn send_settings(&self, out: &mut Vec<u8>) {
        let mut settings = Vec::new();
        if let Some(max) = self.knobs.max_concurrent_streams {
            settings.extend_from_slice(&3u16.to_be_bytes());
            settings.extend_from_slice(&max.to_be_bytes());
        }
        if self.knobs.closed_window {
            settings.extend_from_slice(&4u16.to_be_bytes());
            settings.extend_from_slice(&0u32.to_be_bytes());
        }
        write_frame(out, kind::SETTINGS, 0, 0, &settings);
    }

    fn frame(
        &mut self,
        frame_kind: u8,
        flags: u8,
        stream: u32,
        payload: &[u8],
        (ctx, now): (&Context, Instant),
        out: &mut Vec<u8>,
    ) -> Result<(), Broken> {
        match frame_kind {
            kind::SETTINGS if flags & ACK == 0 => {
                self.flow.settings(payload);
                write_frame(out, kind::SETTINGS, ACK, 0, &[]);
            }
            kind::PING if flags & ACK == 0 => write_frame(out, kind::PING, ACK, 0, payload),
            kind::WINDOW_UPDATE => self.flow.window_update(stream, payload),
            kind::HEADERS => {
                self.block = Some((stream, flags & END_STREAM != 0, Vec::new()));
                self.fragment(flags, headers_fragment(flags, payload), (ctx, now), out)?;
            }
            kind::CONTINUATION => self.fragment(flags, payload, (ctx, now), out)?,
            kind::DATA => {
                if flags & END_STREAM != 0 && self.arriving.remove(&stream).is_some() {
                    self.request_complete(stream, ctx, now, out);
                }
                if !self.knobs.closed_window && !payload.is_empty() {
                    let n = u32::try_from(payload.len()).unwrap_or(u32::MAX);
                    write_frame(out, kind::WINDOW_UPDATE, 0, 0, &n.to_be_bytes());
                }
            }
            kind::RST_STREAM => {
                self.arriving.remove(&stream);
                self.owed.retain(|(_, id)| *id != stream);
                self.sending.retain(|s| s.stream != stream);
            }
            kind::GOAWAY => return Err(Broken),
            _ => {}
        }
        Ok(())
    }

    fn fragment(
        &mut self,
        flags: u8,
        fragment: &[u8],
        (ctx, now): (&Context, Instant),
        out: &mut Vec<u8>,
    ) -> Result<(), Broken> {
        let Some((_, _, block)) = self.block.as_mut() else {
            return Err(Broken);
        };
        block.extend_from_slice(fragment);
        if flags & END_HEADERS == 0 {
            return Ok(());
        }
        let Some((stream, end_stream, block)) = self.block.take() else {
            return Err(Broken);
        };
        let mut path = None;
        self.decoder
            .decode_with_cb(&block, |name, value| {
                if &name[..] == b":path" {
                    path = Some(String::from_utf8_lossy(&value).into_owned());
                }
            })
            .map_err(|_| Broken)?;
        if let Some(path) = path {
            ctx.counters.saw_target(&path);
        }
        let open = self.arriving.len() + self.owed.len() + self.sending.len();
        let limit = self.knobs.max_concurrent_streams.map(|m| m as usize);
        if limit.is_some_and(|limit| open >= limit) {
            write_frame(
                out,
                kind::RST_STREAM,
                0,
                stream,
                &REFUSED_STREAM.to_be_bytes(),
            );
            return Ok(());
        }
        self.flow.open(stream);
        if end_stream {
            self.request_complete(stream, ctx, now, out);
        } else {
            self.arriving.insert(stream, ());
        }
        Ok(())
    }

    /// A whole request: a response is owed after the delay (after the
    /// previous one's, when streams are served one at a time), unless a
    /// GOAWAY already let no more through.
    fn request_complete(&mut self, stream: u32, ctx: &Context, now: Instant, out: &mut Vec<u8>) {
        ctx.counters.count_request();
        if self.goaway_last.is_some_and(|last| stream > last) {
            return;
        }
        if self.knobs.malformed_frame && !self.malformed_sent {
            // A PING of 3 bytes: a FRAME_SIZE_ERROR for the client.
            self.malformed_sent = true;
            write_frame(out, kind::PING, 0, 0, &[1, 2, 3]);
            return;
        }
        self.taken += 1;
        let delay = ctx.knobs.response_delay;
        let due = if self.knobs.serial {
            let start = self.owed.back().map_or(now, |(due, _)| (*due).max(now));
            let start = self.busy_until.map_or(start, |busy| busy.max(start));
            start + delay
        } else {
            now + delay
        };
        self.owed.push_back((due, stream));
        if self
            .knobs
            .goaway_every
            .is_some_and(|n| n > 0 && self.taken % n == 0)
        {
            self.goaway_last = Some(stream);
            let mut payload = stream.to_be_bytes().to_vec();
            payload.extend_from_slice(&0u32.to_be_bytes());
            write_frame(out, kind::GOAWAY, 0, 0, &payload);
        }
    }

    /// Sends the responses that are due (and the bodies the windows allow).
    pub(crate) fn answer_due(&mut self, ctx: &Context, now: Instant, out: &mut Vec<u8>) {
        if ctx.stalls.held_until(now).is_none() {
            let mut sorted: Vec<(Instant, u32)> = Vec::new();
            while self.owed.front().is_some_and(|(due, _)| *due <= now) {
                if let Some(entry) = self.owed.pop_front() {
                    sorted.push(entry);
                }
            }
            for (due, stream) in sorted {
                self.busy_until = Some(due);
                write_headers(out, stream, &self.block_bytes, self.flow.max_frame);
                ctx.counters.count_response();
                self.sending.push_back(Sending { stream, sent: 0 });
            }
        }
        self.send_bodies(&ctx.knobs.body(), out);
    }

    fn send_bodies(&mut self, body: &[u8], out: &mut Vec<u8>) {
        let mut still = VecDeque::new();
        while let Some(mut sending) = self.sending.pop_front() {
            if !self.flow.send(out, sending.stream, body, &mut sending.sent) {
                still.push_back(sending);
            }
        }
        self.sending = still;
    }

    /// When the next owed response is due.
    pub(crate) fn next_due(&self, ctx: &Context, now: Instant) -> Option<Instant> {
        let (due, _) = self.owed.front()?;
        Some(ctx.stalls.held_until(now).unwrap_or(*due).max(*due))
    }

    /// Whether the connection said GOAWAY and owes nothing more: it closes.
    pub(crate) fn finished(&self) -> bool {
        self.goaway_last.is_some() && self.owed.is_empty() && self.sending.is_empty()
    }
}

/// `:status`, `content-type`, `content-length` and, to make it huge, an
/// `x-padding` of `padding` bytes; literals without indexing.
fn response_block(status: u16, body_len: usize, padding: usize) -> Vec<u8> {
    let mut block = Vec::new();
    if status == 200 {
        block.push(0x88);
    } else {
        literal(&mut block, b":status", status.to_string().as_bytes());
    }
    literal(&mut block, b"server", b"corobench-testkit");
    literal(&mut block, b"content-type", b"text/plain");
    literal(
        &mut block,
        b"content-length",
        body_len.to_string().as_bytes(),
    );
    if padding > 0 {
        literal(&mut block, b"x-padding", &vec![b'p'; padding]);
    }
    block
}

impl std::fmt::Debug for H2Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H2Serve").finish_non_exhaustive()
    }
}
