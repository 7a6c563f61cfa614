//! What the live load view says of the protocol: its name on the shape
//! line, and under the gauge the window's TLS handshakes and HTTP/2
//! streams so far, each only when the run speaks it. Stream resets and
//! refusals are errors and show with them, not here.

use corobench_load::{LiveSnapshot, LoadConfig};
use corobench_model::Protocol;
use corobench_report::units::thousands;

/// What a load run speaks, as its configuration says.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spoken {
    protocol: Protocol,
    /// HTTP/2: the streams asked for per connection.
    streams: Option<u32>,
    /// TLS: new connections resume an earlier session.
    resumption: bool,
    connections: u32,
}

impl Spoken {
    pub(crate) fn of(config: &LoadConfig) -> Self {
        Self {
            protocol: config.protocol(),
            streams: config.http2.map(|h2| h2.streams),
            resumption: config.endpoint.tls.as_ref().is_some_and(|t| t.resumption),
            connections: config.schedule.connections,
        }
    }

    /// `h2c, 10 streams per connection`; `None` for cleartext HTTP/1.1.
    pub(crate) fn name(&self) -> Option<String> {
        let mut name = match (self.protocol.is_h2(), self.protocol.tls) {
            (false, false) => return None,
            (false, true) => "HTTP/1.1 over TLS".to_owned(),
            (true, true) => "h2 over TLS".to_owned(),
            (true, false) => "h2c".to_owned(),
        };
        if let Some(streams) = self.streams {
            let plural = if streams == 1 { "" } else { "s" };
            name.push_str(&format!(", {streams} stream{plural} per connection"));
        }
        if self.protocol.tls && !self.resumption {
            name.push_str(", full handshakes");
        }
        Some(name)
    }

    /// How many lines [`Self::lines`] gives: one for TLS, one for HTTP/2.
    pub(crate) fn line_count(&self) -> u16 {
        u16::from(self.protocol.tls) + u16::from(self.protocol.is_h2())
    }

    /// The window's handshakes over TLS, its streams over HTTP/2.
    pub(crate) fn lines(&self, live: &LiveSnapshot) -> Vec<String> {
        let mut lines = Vec::new();
        if self.protocol.tls {
            lines.push(self.tls_line(live));
        }
        if self.protocol.is_h2() {
            lines.push(self.http2_line(live));
        }
        lines
    }

    /// `TLS     1,234 handshakes in the window: 1,000 full, 234 resumed (19.0%)`.
    fn tls_line(&self, live: &LiveSnapshot) -> String {
        let handshakes = live.tls.unwrap_or_default();
        let mut line = match handshakes.resumed_share() {
            None => "TLS     no handshake in the window so far".to_owned(),
            Some(share) => format!(
                "TLS     {} handshakes in the window: {} full, {} resumed ({:.1}%)",
                thousands(handshakes.total() as f64),
                thousands(handshakes.full as f64),
                thousands(handshakes.resumed as f64),
                share * 100.0
            ),
        };
        if !self.resumption {
            line.push_str("; resumption off");
        }
        line
    }

    /// `HTTP/2  streams per connection: 3.9 in flight (mean), 10 asked, server limit 4 · 0 GOAWAY`.
    fn http2_line(&self, live: &LiveSnapshot) -> String {
        let streams = live.http2.unwrap_or_default();
        let asked = self.streams.unwrap_or(1);
        let limit = streams
            .server_limit
            .filter(|&limit| limit < asked)
            .map_or_else(String::new, |limit| format!(", server limit {limit}"));
        format!(
            "HTTP/2  streams per connection: {:.1} in flight (mean), {asked} asked{limit} · {} GOAWAY",
            streams.in_flight_mean / f64::from(self.connections.max(1)),
            thousands(streams.goaways as f64)
        )
    }
}
