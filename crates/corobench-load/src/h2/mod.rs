//! HTTP/2 (RFC 9113) as the generator speaks it: the framing that sits on a
//! connection's session (cleartext h2c by prior knowledge, or TLS with ALPN
//! `h2`) in place of HTTP/1.1's, with many requests in flight as streams.
//!
//! - `frame`: the wire layout and the writers of the frames a client sends.
//! - `request`: the request's header block, HPACK-encoded once for the run.
//! - `conn`: one connection's streams, windows and settings, without I/O
//!   (the backends' bytes go in, frames to write and stream outcomes come out).
//! - `read`: the frames the server sends, parsed as they arrive.
//!
//! Response header blocks are decoded by `hpack`.

mod conn;
pub(crate) mod frame;
mod hpack;
pub(crate) mod probe;
mod read;
pub(crate) mod request;

pub(crate) use conn::{ConnError, Event, H2Conn, StreamEnd};
pub(crate) use request::H2Request;

use crate::error::Setting;

/// What every thread of an HTTP/2 run shares: the request, encoded once,
/// and the settings.
#[derive(Debug)]
pub(crate) struct H2Setup {
    pub(crate) request: H2Request,
    pub(crate) options: Http2Options,
    /// `h2` over TLS, `h2c` in cleartext.
    pub(crate) protocol: &'static str,
    pub(crate) background: Option<Background>,
}

/// The request background streams carry beside the measured ones.
#[derive(Debug)]
pub(crate) struct Background {
    pub(crate) request: H2Request,
    /// As the configuration gave it, for the report.
    pub(crate) path: String,
    /// Kept open on each connection.
    pub(crate) streams: u32,
}

impl H2Setup {
    /// Background streams per connection (0 without a background request).
    pub(crate) fn background_streams(&self) -> u32 {
        self.background.as_ref().map_or(0, |b| b.streams)
    }
}

/// How the generator speaks HTTP/2: the streams it keeps open on each
/// connection and the settings it announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Http2Options {
    /// Streams open at once on each connection (`-m`); a server's lower
    /// SETTINGS_MAX_CONCURRENT_STREAMS lowers it.
    pub streams: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE: the bytes each response stream may
    /// send before the generator gives them back with WINDOW_UPDATE.
    pub stream_window: u32,
    /// The connection's receive window (raised from 65,535 by a
    /// WINDOW_UPDATE right after the preface).
    pub connection_window: u32,
    /// SETTINGS_MAX_FRAME_SIZE: the largest frame the server may send.
    pub max_frame: u32,
}

impl Default for Http2Options {
    /// One stream, and windows as large as h2load's defaults (2^30 - 1), so
    /// that flow control never holds a response back unless asked to.
    fn default() -> Self {
        Self {
            streams: 1,
            stream_window: (1 << 30) - 1,
            connection_window: (1 << 30) - 1,
            max_frame: frame::MIN_MAX_FRAME,
        }
    }
}

pub use corobench_model::MAX_STREAMS;

impl Http2Options {
    /// Checks every value against the protocol's bounds.
    ///
    /// # Errors
    /// Streams out of `1..=MAX_STREAMS`, a window of 0 or above 2^31 - 1, a
    /// frame size outside 16,384..=2^24 - 1.
    pub fn validate(&self) -> Result<(), crate::LoadError> {
        let refuse = |setting, message: String| Err(crate::LoadError::config(&[setting], message));
        if !(1..=MAX_STREAMS).contains(&self.streams) {
            return refuse(
                Setting::Streams,
                format!(
                    "streams per connection must be from 1 to {MAX_STREAMS}, got {}",
                    self.streams
                ),
            );
        }
        for (setting, what, window) in [
            (
                Setting::StreamWindow,
                "the stream window",
                self.stream_window,
            ),
            (
                Setting::ConnectionWindow,
                "the connection window",
                self.connection_window,
            ),
        ] {
            if !(1..=frame::MAX_WINDOW).contains(&window) {
                return refuse(
                    setting,
                    format!(
                        "{what} must be from 1 to {} bytes (2^31 - 1), got {window}",
                        frame::MAX_WINDOW
                    ),
                );
            }
        }
        if !(frame::MIN_MAX_FRAME..=frame::MAX_MAX_FRAME).contains(&self.max_frame) {
            return refuse(
                Setting::MaxFrame,
                format!(
                    "the largest frame must be from {} to {} bytes, got {}",
                    frame::MIN_MAX_FRAME,
                    frame::MAX_MAX_FRAME,
                    self.max_frame
                ),
            );
        }
        Ok(())
    }
}
