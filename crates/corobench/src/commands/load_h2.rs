//! The HTTP/2 flags of `corobench load`: `--h2` (over TLS, ALPN h2) and
//! `--h2c` (cleartext, by prior knowledge), the streams per connection and
//! the settings the generator announces.

use clap::Args;
use corobench_load::{BackgroundRecord, Endpoint, Http2Options, MAX_STREAMS};

use crate::exit;

/// How `corobench load` speaks HTTP/2.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "HTTP/2")]
pub struct H2Args {
    /// Speak HTTP/2 over TLS to an https:// URL; the server must agree on
    /// h2 by ALPN (no fallback to HTTP/1.1)
    #[arg(long, conflicts_with = "h2c")]
    pub h2: bool,

    /// Speak cleartext HTTP/2 (h2c, by prior knowledge, as h2load does)
    /// to an http:// URL
    #[arg(long)]
    pub h2c: bool,

    /// HTTP/2: streams kept open on each connection (h2load's -m); a
    /// server's lower SETTINGS_MAX_CONCURRENT_STREAMS lowers it [default: 1]
    #[arg(short = 'm', long, value_name = "STREAMS", value_parser = parse_streams)]
    pub streams: Option<u32>,

    /// HTTP/2: SETTINGS_INITIAL_WINDOW_SIZE announced, the bytes a response
    /// stream may send before corobench gives them back [default: 2^30-1]
    #[arg(long, value_name = "BYTES", value_parser = parse_window)]
    pub h2_stream_window: Option<u32>,

    /// HTTP/2: the connection's receive window [default: 2^30-1]
    #[arg(long, value_name = "BYTES", value_parser = parse_window)]
    pub h2_connection_window: Option<u32>,

    /// HTTP/2: SETTINGS_MAX_FRAME_SIZE announced, 16384 to 16777215 [default: 16384]
    #[arg(long, value_name = "BYTES")]
    pub h2_max_frame: Option<u32>,

    /// HTTP/2: keep GET PATH (e.g. /io?ms=200) in flight on background
    /// streams of every connection beside the measured ones, reopened as
    /// each ends; its outcomes are counted apart (head-of-line blocking)
    #[arg(long, value_name = "PATH")]
    pub background: Option<String>,

    /// HTTP/2: background streams on each connection [default: 1]
    #[arg(long, value_name = "STREAMS", value_parser = parse_streams, requires = "background")]
    pub background_streams: Option<u32>,
}

impl H2Args {
    /// The HTTP/2 options for `endpoint`, `None` for HTTP/1.1.
    ///
    /// # Errors
    /// `--h2` with an http:// URL, `--h2c` with an https:// one, or an
    /// HTTP/2 setting without either.
    pub fn resolve(&self, endpoint: &Endpoint) -> anyhow::Result<Option<Http2Options>> {
        let tls = endpoint.tls.is_some();
        if self.h2 && !tls {
            return Err(exit::usage(format!(
                "--h2 is HTTP/2 over TLS, and {} is plain http://: use an https:// URL, or \
                 --h2c for cleartext HTTP/2",
                endpoint.url
            )));
        }
        if self.h2c && tls {
            return Err(exit::usage(format!(
                "--h2c is cleartext HTTP/2, and {} is https://: use --h2 for HTTP/2 over TLS",
                endpoint.url
            )));
        }
        let settings_given = self.streams.is_some()
            || self.background.is_some()
            || self.h2_stream_window.is_some()
            || self.h2_connection_window.is_some()
            || self.h2_max_frame.is_some();
        if !self.h2 && !self.h2c {
            if settings_given {
                return Err(exit::usage(
                    "-m, --background and the --h2-* settings are HTTP/2's: add --h2 \
                     (https://) or --h2c (http://); the HTTP method is -X/--method",
                ));
            }
            return Ok(None);
        }
        let defaults = Http2Options::default();
        let options = Http2Options {
            streams: self.streams.unwrap_or(defaults.streams),
            stream_window: self.h2_stream_window.unwrap_or(defaults.stream_window),
            connection_window: self
                .h2_connection_window
                .unwrap_or(defaults.connection_window),
            max_frame: self.h2_max_frame.unwrap_or(defaults.max_frame),
        };
        options.validate().map_err(crate::commands::hints::load)?;
        Ok(Some(options))
    }

    /// The background request of `--background`, if any (checked with the
    /// rest of the configuration).
    #[must_use]
    pub fn background(&self) -> Option<BackgroundRecord> {
        self.background.as_ref().map(|path| BackgroundRecord {
            path: path.clone(),
            streams: self.background_streams.unwrap_or(1),
        })
    }
}

/// `-m`: streams in `1..=MAX_STREAMS`; a method name says where the method went.
fn parse_streams(text: &str) -> Result<u32, String> {
    let Ok(streams) = text.trim().parse::<u32>() else {
        return Err(format!(
            "{text:?} is not a number of streams: -m is HTTP/2's streams per connection \
             (1 to {MAX_STREAMS}); the HTTP method is -X/--method"
        ));
    };
    if !(1..=MAX_STREAMS).contains(&streams) {
        return Err(format!(
            "streams per connection must be from 1 to {MAX_STREAMS}"
        ));
    }
    Ok(streams)
}

/// A window in bytes, `1..=2^31 - 1`.
fn parse_window(text: &str) -> Result<u32, String> {
    const MAX_WINDOW: u32 = (1 << 31) - 1;
    match text.trim().parse::<u32>() {
        Ok(window) if (1..=MAX_WINDOW).contains(&window) => Ok(window),
        _ => Err(format!(
            "{text:?} is not a window: use a number of bytes from 1 to {MAX_WINDOW} (2^31 - 1)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_decides_which_http2_flag_fits() {
        let http = Endpoint::from_url("http://127.0.0.1:1/").unwrap();
        let https = Endpoint::from_url("https://127.0.0.1:1/").unwrap();
        let h2 = H2Args {
            h2: true,
            streams: Some(10),
            ..H2Args::default()
        };
        assert_eq!(h2.resolve(&https).unwrap().map(|o| o.streams), Some(10));
        assert!(
            h2.resolve(&http)
                .unwrap_err()
                .to_string()
                .contains("https://")
        );
        let h2c = H2Args {
            h2c: true,
            ..H2Args::default()
        };
        assert_eq!(h2c.resolve(&http).unwrap().map(|o| o.streams), Some(1));
        assert!(
            h2c.resolve(&https)
                .unwrap_err()
                .to_string()
                .contains("--h2 ")
        );
        let alone = H2Args {
            streams: Some(4),
            ..H2Args::default()
        };
        assert!(
            alone
                .resolve(&http)
                .unwrap_err()
                .to_string()
                .contains("--h2c")
        );
        assert_eq!(H2Args::default().resolve(&http).unwrap(), None);
    }

    #[test]
    fn a_method_after_m_says_where_the_method_went() {
        assert!(parse_streams("POST").unwrap_err().contains("-X/--method"));
        assert!(parse_streams("0").is_err());
        assert_eq!(parse_streams("100"), Ok(100));
        assert!(parse_window("0").is_err());
        assert_eq!(parse_window("65535"), Ok(65_535));
    }
}
