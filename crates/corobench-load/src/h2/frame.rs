//! HTTP/2 frames as RFC 9113 §4 and §6 lay them out: the 9-byte header, the
//! frame types and flags the generator meets, and writers for the frames a
//! client sends. Written beside the engine (no crate frames bytes without
//! owning the socket): every writer appends to a buffer the connection
//! keeps, so no frame allocates once the buffer has grown.

/// What a client sends first on every HTTP/2 connection (§3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Bytes of a frame header.
pub(crate) const HEAD_BYTES: usize = 9;

/// The smallest (and initial) SETTINGS_MAX_FRAME_SIZE.
pub(crate) const MIN_MAX_FRAME: u32 = 16_384;
/// The largest SETTINGS_MAX_FRAME_SIZE (2^24 - 1).
pub(crate) const MAX_MAX_FRAME: u32 = (1 << 24) - 1;
/// The largest flow-control window (2^31 - 1).
pub(crate) const MAX_WINDOW: u32 = (1 << 31) - 1;
/// Every window's size before SETTINGS or WINDOW_UPDATE change it.
pub(crate) const DEFAULT_WINDOW: u32 = 65_535;
/// The highest stream identifier.
pub(crate) const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// Frame types (§6).
pub(crate) mod kind {
    pub(crate) const DATA: u8 = 0x0;
    pub(crate) const HEADERS: u8 = 0x1;
    pub(crate) const PRIORITY: u8 = 0x2;
    pub(crate) const RST_STREAM: u8 = 0x3;
    pub(crate) const SETTINGS: u8 = 0x4;
    pub(crate) const PUSH_PROMISE: u8 = 0x5;
    pub(crate) const PING: u8 = 0x6;
    pub(crate) const GOAWAY: u8 = 0x7;
    pub(crate) const WINDOW_UPDATE: u8 = 0x8;
    pub(crate) const CONTINUATION: u8 = 0x9;
}

/// Frame flags (§6).
pub(crate) mod flag {
    pub(crate) const END_STREAM: u8 = 0x1;
    /// SETTINGS and PING: this frame acknowledges the peer's.
    pub(crate) const ACK: u8 = 0x1;
    pub(crate) const END_HEADERS: u8 = 0x4;
    pub(crate) const PADDED: u8 = 0x8;
    pub(crate) const PRIORITY: u8 = 0x20;
}

/// SETTINGS parameters (§6.5.2).
pub(crate) mod setting {
    pub(crate) const ENABLE_PUSH: u16 = 0x2;
    pub(crate) const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub(crate) const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub(crate) const MAX_FRAME_SIZE: u16 = 0x5;
}

/// Error codes (§7) the generator sends or tells apart.
pub(crate) mod code {
    pub(crate) const PROTOCOL_ERROR: u32 = 0x1;
    pub(crate) const FLOW_CONTROL_ERROR: u32 = 0x3;
    pub(crate) const FRAME_SIZE_ERROR: u32 = 0x6;
    pub(crate) const REFUSED_STREAM: u32 = 0x7;
    pub(crate) const CANCEL: u32 = 0x8;
    pub(crate) const COMPRESSION_ERROR: u32 = 0x9;
    pub(crate) const ENHANCE_YOUR_CALM: u32 = 0xb;
}

/// A frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    /// Payload bytes that follow the header.
    pub(crate) len: u32,
    pub(crate) kind: u8,
    pub(crate) flags: u8,
    /// The stream (0: the connection); the reserved bit is dropped.
    pub(crate) stream: u32,
}

impl Head {
    pub(crate) fn parse(bytes: &[u8; HEAD_BYTES]) -> Self {
        Self {
            len: u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]),
            kind: bytes[3],
            flags: bytes[4],
            stream: u32_at(bytes, 5) & MAX_STREAM_ID,
        }
    }

    pub(crate) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Appends the header (the payload follows it).
    pub(crate) fn write(self, out: &mut Vec<u8>) {
        let len = self.len.to_be_bytes();
        out.extend_from_slice(&[len[1], len[2], len[3], self.kind, self.flags]);
        out.extend_from_slice(&(self.stream & MAX_STREAM_ID).to_be_bytes());
    }
}

/// The big-endian `u32` at `at` (the caller checked the length).
pub(crate) fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// Appends a SETTINGS frame with these parameters.
pub(crate) fn write_settings(out: &mut Vec<u8>, parameters: &[(u16, u32)]) {
    let len = u32::try_from(parameters.len() * 6).unwrap_or(u32::MAX);
    Head {
        len,
        kind: kind::SETTINGS,
        flags: 0,
        stream: 0,
    }
    .write(out);
    for (id, value) in parameters {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends an empty frame with only flags: a SETTINGS acknowledgement.
pub(crate) fn write_settings_ack(out: &mut Vec<u8>) {
    Head {
        len: 0,
        kind: kind::SETTINGS,
        flags: flag::ACK,
        stream: 0,
    }
    .write(out);
}

/// Appends a PING acknowledgement echoing the peer's 8 bytes.
pub(crate) fn write_ping_ack(out: &mut Vec<u8>, opaque: &[u8]) {
    Head {
        len: 8,
        kind: kind::PING,
        flags: flag::ACK,
        stream: 0,
    }
    .write(out);
    out.extend_from_slice(opaque);
}

/// Appends a WINDOW_UPDATE of `increment` bytes for `stream` (0: the connection).
pub(crate) fn write_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    Head {
        len: 4,
        kind: kind::WINDOW_UPDATE,
        flags: 0,
        stream,
    }
    .write(out);
    out.extend_from_slice(&(increment & MAX_WINDOW).to_be_bytes());
}

/// Appends an RST_STREAM ending `stream` with `error`.
pub(crate) fn write_rst_stream(out: &mut Vec<u8>, stream: u32, error: u32) {
    Head {
        len: 4,
        kind: kind::RST_STREAM,
        flags: 0,
        stream,
    }
    .write(out);
    out.extend_from_slice(&error.to_be_bytes());
}

/// Appends a GOAWAY: the last stream the peer opened (none: 0) and why.
pub(crate) fn write_goaway(out: &mut Vec<u8>, last_stream: u32, error: u32) {
    Head {
        len: 8,
        kind: kind::GOAWAY,
        flags: 0,
        stream: 0,
    }
    .write(out);
    out.extend_from_slice(&(last_stream & MAX_STREAM_ID).to_be_bytes());
    out.extend_from_slice(&error.to_be_bytes());
}

/// Appends a header block as one HEADERS frame and as many CONTINUATION
/// frames as `max_frame` asks.
pub(crate) fn write_headers(
    out: &mut Vec<u8>,
    stream: u32,
    block: &[u8],
    end_stream: bool,
    max_frame: usize,
) {
    let max_frame = max_frame.max(1);
    let mut chunks = block.chunks(max_frame).peekable();
    let mut kind = kind::HEADERS;
    let mut flags = if end_stream { flag::END_STREAM } else { 0 };
    if chunks.peek().is_none() {
        // An empty block (never from the generator) still needs its frame.
        Head {
            len: 0,
            kind,
            flags: flags | flag::END_HEADERS,
            stream,
        }
        .write(out);
        return;
    }
    while let Some(chunk) = chunks.next() {
        if chunks.peek().is_none() {
            flags |= flag::END_HEADERS;
        }
        Head {
            len: u32::try_from(chunk.len()).unwrap_or(u32::MAX),
            kind,
            flags,
            stream,
        }
        .write(out);
        out.extend_from_slice(chunk);
        kind = kind::CONTINUATION;
        flags = 0;
    }
}

/// Appends one DATA frame carrying `payload`.
pub(crate) fn write_data(out: &mut Vec<u8>, stream: u32, payload: &[u8], end_stream: bool) {
    Head {
        len: u32::try_from(payload.len()).unwrap_or(u32::MAX),
        kind: kind::DATA,
        flags: if end_stream { flag::END_STREAM } else { 0 },
        stream,
    }
    .write(out);
    out.extend_from_slice(payload);
}

/// The padding a PADDED frame declares in its first payload byte, checked
/// against the payload's length (§6.1: padding as long as the payload or
/// longer is a protocol error).
pub(crate) fn padding(head: &Head, payload: &[u8]) -> Option<usize> {
    if !head.has(flag::PADDED) {
        return Some(0);
    }
    let pad = usize::from(*payload.first()?);
    (pad < payload.len()).then_some(pad)
}

/// The header block fragment of a HEADERS frame's payload: without its
/// padding and its priority fields.
pub(crate) fn headers_fragment<'a>(head: &Head, payload: &'a [u8]) -> Option<&'a [u8]> {
    let pad = padding(head, payload)?;
    let start = usize::from(head.has(flag::PADDED)) + if head.has(flag::PRIORITY) { 5 } else { 0 };
    let end = payload.len().checked_sub(pad)?;
    payload.get(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_drops_the_reserved_bit() {
        let mut out = Vec::new();
        Head {
            len: 0x01_02_03,
            kind: kind::HEADERS,
            flags: flag::END_HEADERS,
            stream: 7,
        }
        .write(&mut out);
        assert_eq!(out, [1, 2, 3, 1, 4, 0, 0, 0, 7]);
        out[5] |= 0x80;
        let head = Head::parse(out[..9].try_into().unwrap());
        assert_eq!((head.len, head.stream), (0x01_02_03, 7));
        assert!(head.has(flag::END_HEADERS) && !head.has(flag::END_STREAM));
    }

    #[test]
    fn a_large_block_goes_out_as_headers_and_continuations() {
        let mut out = Vec::new();
        write_headers(&mut out, 3, &[7u8; 25], true, 10);
        let first = Head::parse(out[..9].try_into().unwrap());
        assert_eq!((first.kind, first.len), (kind::HEADERS, 10));
        assert!(first.has(flag::END_STREAM) && !first.has(flag::END_HEADERS));
        let second = Head::parse(out[19..28].try_into().unwrap());
        assert_eq!((second.kind, second.flags), (kind::CONTINUATION, 0));
        let last = Head::parse(out[38..47].try_into().unwrap());
        assert_eq!((last.kind, last.len), (kind::CONTINUATION, 5));
        assert!(last.has(flag::END_HEADERS));
        assert_eq!(out.len(), 3 * 9 + 25);
    }

    #[test]
    fn padding_and_priority_are_cut_from_a_fragment() {
        let head = Head {
            len: 0,
            kind: kind::HEADERS,
            flags: flag::PADDED | flag::PRIORITY,
            stream: 1,
        };
        let payload = [2, 0, 0, 0, 0, 16, 0x88, 0x89, 0, 0];
        assert_eq!(headers_fragment(&head, &payload), Some(&[0x88, 0x89][..]));
        // Padding longer than what is left is malformed.
        assert_eq!(headers_fragment(&head, &[9, 0, 0, 0, 0, 16, 0x88]), None);
        assert_eq!(headers_fragment(&head, &[]), None);
    }
}
