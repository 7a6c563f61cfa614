//! The contract over HTTP/2 (`HTTP_PROTOCOL=h2` or `h2c`): one thread reads
//! a connection's frames and writes its replies; each request, once whole,
//! runs on a thread of its own, so a slow `/io` stream never holds up a
//! `/plaintext` stream beside it. Replies carry the contract's headers in
//! lower case, and `content-length` (never the connection-specific ones).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, SystemTime};

use super::conn::{Body, Reply, Wire};
use super::{Fault, Shared, routes};
use crate::h2flow::FlowControl;
use crate::h2wire::{
    ACK, END_HEADERS, END_STREAM, PREFACE, headers_fragment, kind, literal, next_frame,
    write_frame, write_headers,
};
use crate::http::{RequestHead, http_date};

/// How long a read waits before the replies ready are written.
const POLL: Duration = Duration::from_millis(2);
/// Streams a client may open at once.
const MAX_STREAMS: u32 = 256;

/// A stream's reply, from the thread that ran its route.
type StreamReply = (u32, Reply);

/// A request whose headers arrived, its body still arriving.
#[derive(Debug, Default)]
struct Arriving {
    method: String,
    target: String,
    body: Vec<u8>,
    /// Its `content-length`, when it declared one.
    declared: Option<u64>,
    /// Routed on its headers alone: it declared more than any upload may
    /// be, which is refused (413) without waiting for the body, as over
    /// HTTP/1.1.
    too_large: bool,
}

/// A reply's body still to send, as the client's windows allow.
#[derive(Debug)]
struct Sending {
    stream: u32,
    body: Vec<u8>,
    sent: usize,
}

struct H2Conn {
    decoder: loona_hpack::Decoder<'static>,
    arriving: HashMap<u32, Arriving>,
    /// A header block continued in CONTINUATION frames.
    block: Option<(u32, bool, Vec<u8>)>,
    sending: VecDeque<Sending>,
    flow: FlowControl,
    /// Streams handed to a thread and not yet replied to.
    working: usize,
    replies: (Sender<StreamReply>, Receiver<StreamReply>),
    frozen_date: Option<String>,
    out: Vec<u8>,
}

/// Serves HTTP/2 on `wire` until the client closes or says GOAWAY.
pub(super) fn serve(wire: &mut dyn Wire, shared: &Arc<Shared>) -> io::Result<()> {
    let mut inbound = Vec::new();
    let mut conn = H2Conn {
        decoder: loona_hpack::Decoder::new(),
        arriving: HashMap::new(),
        block: None,
        sending: VecDeque::new(),
        flow: FlowControl::default(),
        working: 0,
        replies: mpsc::channel(),
        frozen_date: None,
        out: Vec::new(),
    };
    wire.socket().set_read_timeout(Some(POLL))?;
    let mut settings = 3u16.to_be_bytes().to_vec();
    settings.extend_from_slice(&MAX_STREAMS.to_be_bytes());
    write_frame(&mut conn.out, kind::SETTINGS, 0, 0, &settings);
    let mut greeted = false;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let open = match wire.read(&mut chunk) {
            Ok(0) => false,
            Ok(n) => {
                inbound.extend_from_slice(&chunk[..n]);
                true
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                true
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => true,
            Err(e) => return Err(e),
        };
        if !greeted && inbound.len() >= PREFACE.len() {
            if !inbound.starts_with(PREFACE) {
                return Ok(());
            }
            inbound.drain(..PREFACE.len());
            greeted = true;
        }
        let goaway = greeted && conn.take_frames(&mut inbound, shared)?;
        conn.collect_replies(shared);
        conn.send_bodies();
        if !conn.out.is_empty() {
            wire.write_all(&conn.out)?;
            wire.flush()?;
            conn.out.clear();
        }
        let idle = conn.working == 0 && conn.sending.is_empty();
        if (!open || goaway) && idle || shared.is_stopping() {
            return Ok(());
        }
    }
}

impl H2Conn {
    /// Takes every whole frame out of `inbound`; returns whether the client
    /// said GOAWAY.
    fn take_frames(&mut self, inbound: &mut Vec<u8>, shared: &Arc<Shared>) -> io::Result<bool> {
        let mut at = 0;
        let mut goaway = false;
        while let Some((frame_kind, flags, stream, payload)) = next_frame(inbound, &mut at) {
            goaway |= frame_kind == kind::GOAWAY;
            self.frame(frame_kind, flags, stream, payload, shared)?;
        }
        inbound.drain(..at);
        Ok(goaway)
    }

    fn frame(
        &mut self,
        frame_kind: u8,
        flags: u8,
        stream: u32,
        payload: &[u8],
        shared: &Arc<Shared>,
    ) -> io::Result<()> {
        match frame_kind {
            kind::SETTINGS if flags & ACK == 0 => {
                self.flow.settings(payload);
                write_frame(&mut self.out, kind::SETTINGS, ACK, 0, &[]);
            }
            kind::PING if flags & ACK == 0 => {
                write_frame(&mut self.out, kind::PING, ACK, 0, payload)
            }
            kind::WINDOW_UPDATE => self.flow.window_update(stream, payload),
            kind::HEADERS => {
                self.block = Some((stream, flags & END_STREAM != 0, Vec::new()));
                self.fragment(flags, headers_fragment(flags, payload), shared)?;
            }
            kind::CONTINUATION => self.fragment(flags, payload, shared)?,
            kind::DATA => self.data(flags, stream, payload, shared),
            kind::RST_STREAM => {
                self.arriving.remove(&stream);
                self.sending.retain(|s| s.stream != stream);
            }
            _ => {}
        }
        Ok(())
    }

    fn fragment(&mut self, flags: u8, fragment: &[u8], shared: &Arc<Shared>) -> io::Result<()> {
        let invalid = || io::Error::from(io::ErrorKind::InvalidData);
        let (_, _, block) = self.block.as_mut().ok_or_else(invalid)?;
        block.extend_from_slice(fragment);
        if flags & END_HEADERS == 0 {
            return Ok(());
        }
        let (stream, end_stream, block) = self.block.take().ok_or_else(invalid)?;
        let mut request = Arriving::default();
        self.decoder
            .decode_with_cb(&block, |name, value| {
                let value = String::from_utf8_lossy(&value).into_owned();
                match &name[..] {
                    b":method" => request.method = value,
                    b":path" => request.target = value,
                    b"content-length" => request.declared = value.trim().parse().ok(),
                    _ => {}
                }
            })
            .map_err(|_| invalid())?;
        self.flow.open(stream);
        request.too_large = request
            .declared
            .is_some_and(|n| n > routes::MAX_UPLOAD_BYTES);
        if end_stream || request.too_large {
            self.start(stream, request, shared);
        } else {
            self.arriving.insert(stream, request);
        }
        Ok(())
    }

    /// Body bytes: kept, and given back to the client's windows at once.
    fn data(&mut self, flags: u8, stream: u32, payload: &[u8], shared: &Arc<Shared>) {
        if !payload.is_empty() {
            let n = u32::try_from(payload.len())
                .unwrap_or(u32::MAX)
                .to_be_bytes();
            write_frame(&mut self.out, kind::WINDOW_UPDATE, 0, 0, &n);
            if flags & END_STREAM == 0 {
                write_frame(&mut self.out, kind::WINDOW_UPDATE, 0, stream, &n);
            }
        }
        if let Some(request) = self.arriving.get_mut(&stream) {
            request.body.extend_from_slice(payload);
        }
        if flags & END_STREAM != 0 {
            if let Some(request) = self.arriving.remove(&stream) {
                self.start(stream, request, shared);
            }
        }
    }

    /// A whole request: its route runs on a thread of its own.
    fn start(&mut self, stream: u32, request: Arriving, shared: &Arc<Shared>) {
        self.working += 1;
        let sender = self.replies.0.clone();
        let shared = Arc::clone(shared);
        let worker = std::thread::Builder::new()
            .name("contract-stream".into())
            .spawn(move || {
                shared.wait_turn();
                let head = RequestHead {
                    method: request.method,
                    target: request.target,
                    content_length: match request.declared {
                        Some(declared) if request.too_large => declared,
                        _ => request.body.len() as u64,
                    },
                    connection_close: false,
                    chunked: false,
                    head_bytes: 0,
                };
                let mut buffered = request.body;
                let mut nothing = io::empty();
                let mut body = Body::new(&mut buffered, &mut nothing, head.content_length);
                let reply = routes::route(&head, &mut body, &shared);
                let _ = sender.send((stream, reply));
            });
        if worker.is_err() {
            self.working -= 1;
            let _ = self
                .replies
                .0
                .send((stream, Reply::error(503, "no thread for the stream")));
            self.working += 1;
        }
    }

    /// Writes the HEADERS of every reply ready; their bodies follow as
    /// the windows allow.
    fn collect_replies(&mut self, shared: &Shared) {
        while let Ok((stream, reply)) = self.replies.1.try_recv() {
            self.working -= 1;
            let block = self.reply_block(&reply, shared);
            write_headers(&mut self.out, stream, &block, self.flow.max_frame);
            self.sending.push_back(Sending {
                stream,
                body: reply.body,
                sent: 0,
            });
        }
    }

    fn reply_block(&mut self, reply: &Reply, shared: &Shared) -> Vec<u8> {
        let mut block = Vec::new();
        literal(&mut block, b":status", reply.status.to_string().as_bytes());
        if !shared.has(Fault::MissingServer) {
            literal(&mut block, b"server", shared.config.target_name.as_bytes());
        }
        if !shared.has(Fault::MissingDate) {
            let now = http_date(SystemTime::now());
            let date = if shared.has(Fault::FrozenDate) {
                self.frozen_date.get_or_insert(now).clone()
            } else {
                now
            };
            literal(&mut block, b"date", date.as_bytes());
        }
        if !shared.has(Fault::MissingContentType) {
            literal(&mut block, b"content-type", reply.content_type.as_bytes());
        }
        if !shared.has(Fault::MissingContentLength) {
            literal(
                &mut block,
                b"content-length",
                reply.body.len().to_string().as_bytes(),
            );
        }
        block
    }

    fn send_bodies(&mut self) {
        let mut still = VecDeque::new();
        while let Some(mut sending) = self.sending.pop_front() {
            let body = &sending.body;
            if !self
                .flow
                .send(&mut self.out, sending.stream, body, &mut sending.sent)
            {
                still.push_back(sending);
            }
        }
        self.sending = still;
    }
}

impl std::fmt::Debug for H2Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H2Conn").finish_non_exhaustive()
    }
}
