//! Raw HTTP/2 frames (RFC 9113 §4.1), for the one rule that must see the
//! connection preface itself rather than what a client library makes of it.

use std::io::{self, Read, Write};

/// The client's connection preface (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const SETTINGS: u8 = 0x4;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;

/// SETTINGS' acknowledgement flag.
pub const ACK: u8 = 0x1;

/// The largest frame the verifier reads (the protocol's own maximum).
const MAX_FRAME_BYTES: usize = (1 << 24) - 1;

/// One frame as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The frame type's name, for messages.
    #[must_use]
    pub fn kind_name(&self) -> String {
        let name = match self.kind {
            DATA => "DATA",
            HEADERS => "HEADERS",
            0x2 => "PRIORITY",
            0x3 => "RST_STREAM",
            SETTINGS => "SETTINGS",
            0x5 => "PUSH_PROMISE",
            0x6 => "PING",
            GOAWAY => "GOAWAY",
            WINDOW_UPDATE => "WINDOW_UPDATE",
            0x9 => "CONTINUATION",
            other => return format!("a frame of unknown type {other:#04x}"),
        };
        name.to_owned()
    }
}

/// Writes one frame.
///
/// # Errors
/// The connection failed.
pub fn write_frame(
    out: &mut impl Write,
    kind: u8,
    flags: u8,
    stream: u32,
    payload: &[u8],
) -> io::Result<()> {
    let length = u32::try_from(payload.len())
        .ok()
        .filter(|n| (*n as usize) <= MAX_FRAME_BYTES)
        .ok_or_else(|| io::Error::other("a frame payload beyond 16 MiB"))?;
    let mut head = [0u8; 9];
    head[..3].copy_from_slice(&length.to_be_bytes()[1..]);
    head[3] = kind;
    head[4] = flags;
    head[5..].copy_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    out.write_all(&head)?;
    out.write_all(payload)?;
    out.flush()
}

/// Reads one frame.
///
/// # Errors
/// The connection failed or closed mid-frame.
pub fn read_frame(input: &mut impl Read) -> io::Result<Frame> {
    let mut head = [0u8; 9];
    input.read_exact(&mut head)?;
    let length = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0u8; length];
    input.read_exact(&mut payload)?;
    Ok(Frame {
        kind: head[3],
        flags: head[4],
        stream: u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff,
        payload,
    })
}

/// A SETTINGS payload of `(identifier, value)` pairs.
#[must_use]
pub fn settings_payload(settings: &[(u16, u32)]) -> Vec<u8> {
    settings
        .iter()
        .flat_map(|(id, value)| id.to_be_bytes().into_iter().chain(value.to_be_bytes()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let mut wire = Vec::new();
        let payload = settings_payload(&[(0x3, 100), (0x4, 65_535)]);
        write_frame(&mut wire, SETTINGS, 0, 0, &payload).unwrap();
        write_frame(&mut wire, SETTINGS, ACK, 0, &[]).unwrap();
        assert_eq!(&wire[..9], &[0, 0, 12, SETTINGS, 0, 0, 0, 0, 0]);
        let mut input = wire.as_slice();
        let first = read_frame(&mut input).unwrap();
        assert_eq!(first.payload, payload);
        assert_eq!(first.kind_name(), "SETTINGS");
        let ack = read_frame(&mut input).unwrap();
        assert_eq!((ack.kind, ack.flags, ack.payload.len()), (SETTINGS, ACK, 0));
        assert!(read_frame(&mut input).is_err(), "nothing left");
    }
}
