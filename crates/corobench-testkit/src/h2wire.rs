//! HTTP/2 on the wire for the test servers (RFC 9113 frames, RFC 7541
//! literals): what both the knob server and the contract server write and
//! parse. Header blocks are written with literals without indexing only, so
//! they never touch the client's dynamic table.

/// What a client sends first (§3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Bytes of a frame header.
pub(crate) const HEAD: usize = 9;
pub(crate) const DEFAULT_WINDOW: i64 = 65_535;
pub(crate) const DEFAULT_FRAME: usize = 16_384;

/// Frame types.
pub(crate) mod kind {
    pub(crate) const DATA: u8 = 0;
    pub(crate) const HEADERS: u8 = 1;
    pub(crate) const RST_STREAM: u8 = 3;
    pub(crate) const SETTINGS: u8 = 4;
    pub(crate) const PING: u8 = 6;
    pub(crate) const GOAWAY: u8 = 7;
    pub(crate) const WINDOW_UPDATE: u8 = 8;
    pub(crate) const CONTINUATION: u8 = 9;
}

pub(crate) const END_STREAM: u8 = 0x1;
pub(crate) const ACK: u8 = 0x1;
pub(crate) const END_HEADERS: u8 = 0x4;
pub(crate) const REFUSED_STREAM: u32 = 0x7;

/// A frame header's length, type, flags and stream.
pub(crate) fn parse_head(head: &[u8]) -> (usize, u8, u8, u32) {
    let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    (len, head[3], head[4], stream)
}

/// The whole frame of `inbound` at `*at` (type, flags, stream, payload),
/// moving `at` past it; `None` while the frame has not all arrived.
pub(crate) fn next_frame<'a>(inbound: &'a [u8], at: &mut usize) -> Option<(u8, u8, u32, &'a [u8])> {
    let head = inbound.get(*at..*at + HEAD)?;
    let (len, frame_kind, flags, stream) = parse_head(head);
    let payload = inbound.get(*at + HEAD..*at + HEAD + len)?;
    *at += HEAD + len;
    Some((frame_kind, flags, stream, payload))
}

pub(crate) fn write_frame(
    out: &mut Vec<u8>,
    frame_kind: u8,
    flags: u8,
    stream: u32,
    payload: &[u8],
) {
    let len = u32::try_from(payload.len()).unwrap_or(0).to_be_bytes();
    out.extend_from_slice(&[len[1], len[2], len[3], frame_kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// HEADERS, then CONTINUATION frames for a block larger than a frame.
pub(crate) fn write_headers(out: &mut Vec<u8>, stream: u32, block: &[u8], max_frame: usize) {
    let mut chunks = block.chunks(max_frame.max(1)).peekable();
    let mut frame_kind = kind::HEADERS;
    while let Some(chunk) = chunks.next() {
        let flags = if chunks.peek().is_none() {
            END_HEADERS
        } else {
            0
        };
        write_frame(out, frame_kind, flags, stream, chunk);
        frame_kind = kind::CONTINUATION;
    }
}

/// A HEADERS payload without padding or priority fields.
pub(crate) fn headers_fragment(flags: u8, payload: &[u8]) -> &[u8] {
    let padded = flags & 0x8 != 0;
    let pad = if padded {
        payload.first().map_or(0, |p| usize::from(*p))
    } else {
        0
    };
    let start = usize::from(padded) + if flags & 0x20 != 0 { 5 } else { 0 };
    payload
        .get(start..payload.len().saturating_sub(pad))
        .unwrap_or(&[])
}

/// A header field as a literal without indexing, with a literal name.
pub(crate) fn literal(block: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    block.push(0);
    string(block, name);
    string(block, value);
}

/// An HPACK string literal without Huffman coding (RFC 7541 §5.2).
fn string(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = bytes.len();
    if len < 127 {
        out.push(u8::try_from(len).unwrap_or(0));
    } else {
        out.push(127);
        let mut rest = len - 127;
        while rest >= 128 {
            out.push(u8::try_from(rest % 128).unwrap_or(0) | 0x80);
            rest /= 128;
        }
        out.push(u8::try_from(rest).unwrap_or(0));
    }
    out.extend_from_slice(bytes);
}
