//! The client's flow control as both test servers obey it (RFC 9113 §6.9):
//! a window for the connection and one per stream, changed by SETTINGS
//! and WINDOW_UPDATE and spent by DATA, and the largest frame the client
//! takes.

use std::collections::HashMap;

use crate::h2wire::{DEFAULT_FRAME, DEFAULT_WINDOW, END_STREAM, kind, write_frame};

/// What the client lets a server send.
#[derive(Debug)]
pub(crate) struct FlowControl {
    connection: i64,
    streams: HashMap<u32, i64>,
    initial: i64,
    pub(crate) max_frame: usize,
}

impl Default for FlowControl {
    fn default() -> Self {
        Self {
            connection: DEFAULT_WINDOW,
            streams: HashMap::new(),
            initial: DEFAULT_WINDOW,
            max_frame: DEFAULT_FRAME,
        }
    }
}

impl FlowControl {
    /// Takes the client's SETTINGS that concern sending: the initial
    /// window (which moves every open stream's window by the difference)
    /// and the largest frame.
    pub(crate) fn settings(&mut self, payload: &[u8]) {
        for setting in payload.chunks_exact(6) {
            let value = u32::from_be_bytes([setting[2], setting[3], setting[4], setting[5]]);
            match u16::from_be_bytes([setting[0], setting[1]]) {
                4 => {
                    let delta = i64::from(value) - self.initial;
                    self.initial = i64::from(value);
                    self.streams.values_mut().for_each(|w| *w += delta);
                }
                5 => self.max_frame = usize::try_from(value).unwrap_or(DEFAULT_FRAME),
                _ => {}
            }
        }
    }

    /// Takes a WINDOW_UPDATE of `stream` (0: the connection); a payload
    /// of another length than 4 is ignored.
    pub(crate) fn window_update(&mut self, stream: u32, payload: &[u8]) {
        let Ok(bytes) = <[u8; 4]>::try_from(payload) else {
            return;
        };
        let increment = i64::from(u32::from_be_bytes(bytes) & 0x7fff_ffff);
        if stream == 0 {
            self.connection += increment;
        } else if let Some(window) = self.streams.get_mut(&stream) {
            *window += increment;
        }
    }

    /// A new stream, with the client's initial window.
    pub(crate) fn open(&mut self, stream: u32) {
        self.streams.insert(stream, self.initial);
    }

    /// Writes as much of `body` after its first `sent` bytes as the
    /// windows and the frame size allow, as one DATA frame (END_STREAM on
    /// the last); returns whether the body is all sent.
    pub(crate) fn send(
        &mut self,
        out: &mut Vec<u8>,
        stream: u32,
        body: &[u8],
        sent: &mut usize,
    ) -> bool {
        let window = self.streams.get(&stream).copied().unwrap_or(0);
        let allowed = usize::try_from(window.min(self.connection).max(0)).unwrap_or(0);
        let left = body.len() - *sent;
        let n = allowed.min(left).min(self.max_frame);
        if n == 0 && left > 0 {
            return false;
        }
        let end = n == left;
        let flags = if end { END_STREAM } else { 0 };
        write_frame(out, kind::DATA, flags, stream, &body[*sent..*sent + n]);
        *sent += n;
        let used = i64::try_from(n).unwrap_or(0);
        self.connection -= used;
        if let Some(window) = self.streams.get_mut(&stream) {
            *window -= used;
        }
        if end {
            self.streams.remove(&stream);
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h2wire::parse_head;

    fn update(increment: u32) -> [u8; 4] {
        increment.to_be_bytes()
    }

    #[test]
    fn a_body_goes_as_the_windows_and_the_frame_size_allow() {
        let mut flow = FlowControl::default();
        // Initial window 10, largest frame 4.
        flow.settings(&[0, 4, 0, 0, 0, 10, 0, 5, 0, 0, 0, 4]);
        flow.open(1);
        let body = [7u8; 12];
        let (mut out, mut sent) = (Vec::new(), 0);
        let mut frames = 0;
        while !flow.send(&mut out, 1, &body, &mut sent) {
            frames += 1;
            if sent == 10 {
                break;
            }
        }
        // 4 + 4 + 2 bytes, then the stream's window of 10 is spent.
        assert_eq!((sent, frames), (10, 3));
        assert!(!flow.send(&mut out, 1, &body, &mut sent), "no window left");
        flow.window_update(1, &update(100));
        assert!(flow.send(&mut out, 1, &body, &mut sent), "the last 2 bytes");
        let (len, frame_kind, flags, stream) = parse_head(&out[out.len() - 9 - 2..]);
        assert_eq!(
            (len, frame_kind, flags, stream),
            (2, kind::DATA, END_STREAM, 1)
        );
    }

    #[test]
    fn a_new_initial_window_moves_open_streams_and_an_empty_body_ends_at_once() {
        let mut flow = FlowControl::default();
        flow.open(3);
        // Initial window 0: the open stream's window falls to 0 as well.
        flow.settings(&[0, 4, 0, 0, 0, 0]);
        let (mut out, mut sent) = (Vec::new(), 0);
        assert!(!flow.send(&mut out, 3, b"x", &mut sent));
        assert!(out.is_empty());
        flow.open(5);
        assert!(flow.send(&mut out, 5, b"", &mut sent), "END_STREAM alone");
    }
}
