//! What a scenario speaks to its target (docs/contract.md, "Protocols"):
//! HTTP/1.1 or HTTP/2, over TCP or over TLS. A dimension of a scenario like
//! its connections: the spec sweeps it, the target is told it, the
//! generator speaks it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The HTTP version a trial speaks.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum HttpVersion {
    #[default]
    #[serde(rename = "http/1.1")]
    Http1,
    #[serde(rename = "h2")]
    H2,
}

/// One of the contract's four protocols: HTTP/1.1 or HTTP/2, with or without
/// TLS. HTTP/2 without TLS is h2c by prior knowledge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Protocol {
    pub http: HttpVersion,
    pub tls: bool,
}

impl Protocol {
    /// HTTP/1.1 over TCP: what every target serves.
    pub const HTTP1: Self = Self {
        http: HttpVersion::Http1,
        tls: false,
    };
    /// HTTP/1.1 over TLS.
    pub const TLS: Self = Self {
        http: HttpVersion::Http1,
        tls: true,
    };
    /// HTTP/2 over TLS, chosen by ALPN.
    pub const H2: Self = Self {
        http: HttpVersion::H2,
        tls: true,
    };
    /// Cleartext HTTP/2 by prior knowledge.
    pub const H2C: Self = Self {
        http: HttpVersion::H2,
        tls: false,
    };
    /// Every protocol, cleartext HTTP/1.1 first.
    pub const ALL: [Self; 4] = [Self::HTTP1, Self::TLS, Self::H2, Self::H2C];

    /// `http/1.1`, `tls`, `h2` or `h2c`: the protocol's name in manifests,
    /// specs and output.
    #[must_use]
    pub fn name(self) -> &'static str {
        match (self.http, self.tls) {
            (HttpVersion::Http1, false) => "http/1.1",
            (HttpVersion::Http1, true) => "tls",
            (HttpVersion::H2, true) => "h2",
            (HttpVersion::H2, false) => "h2c",
        }
    }

    /// The value of `HTTP_PROTOCOL` for the target.
    #[must_use]
    pub fn env_value(self) -> &'static str {
        match self.http {
            HttpVersion::Http1 => "http/1.1",
            HttpVersion::H2 if self.tls => "h2",
            HttpVersion::H2 => "h2c",
        }
    }

    /// The ALPN protocol id a client offers over TLS.
    #[must_use]
    pub fn alpn(self) -> &'static [u8] {
        match self.http {
            HttpVersion::Http1 => b"http/1.1",
            HttpVersion::H2 => b"h2",
        }
    }

    /// Whether this is HTTP/2 (over TLS or not).
    #[must_use]
    pub fn is_h2(self) -> bool {
        self.http == HttpVersion::H2
    }

    /// Whether this is cleartext HTTP/1.1, the protocol of every scenario
    /// that names none (scenario keys and records leave it out).
    #[must_use]
    pub fn is_http1(&self) -> bool {
        *self == Self::HTTP1
    }

    /// `/tls`, `/h2` or `/h2c` as scenario keys end; empty for cleartext
    /// HTTP/1.1, so that keys of earlier runs stay the same.
    #[must_use]
    pub fn key_suffix(self) -> String {
        if self.is_http1() {
            String::new()
        } else {
            format!("/{}", self.name())
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A protocol name that is none of the four.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownProtocol {
    pub given: String,
}

impl fmt::Display for UnknownProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a protocol: use http/1.1, tls (HTTP/1.1 over TLS), h2 (HTTP/2 over TLS) \
             or h2c (cleartext HTTP/2)",
            self.given
        )
    }
}

impl std::error::Error for UnknownProtocol {}

impl FromStr for Protocol {
    type Err = UnknownProtocol;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "http/1.1" | "http1" | "h1" => Ok(Self::HTTP1),
            "tls" | "https" => Ok(Self::TLS),
            "h2" => Ok(Self::H2),
            "h2c" => Ok(Self::H2C),
            _ => Err(UnknownProtocol {
                given: text.to_owned(),
            }),
        }
    }
}

impl Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Protocol {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for protocol in Protocol::ALL {
            assert_eq!(protocol.name().parse::<Protocol>(), Ok(protocol));
        }
        assert_eq!("HTTPS".parse::<Protocol>(), Ok(Protocol::TLS));
        let error = "h3".parse::<Protocol>().unwrap_err();
        assert!(
            error.to_string().contains("\"h3\" is not a protocol"),
            "{error}"
        );
    }

    #[test]
    fn the_environment_says_the_http_version_and_tls_says_the_rest() {
        assert_eq!(Protocol::HTTP1.env_value(), "http/1.1");
        assert_eq!(Protocol::TLS.env_value(), "http/1.1");
        assert_eq!(Protocol::H2.env_value(), "h2");
        assert_eq!(Protocol::H2C.env_value(), "h2c");
        assert_eq!(Protocol::H2.alpn(), b"h2");
        assert_eq!(Protocol::TLS.alpn(), b"http/1.1");
    }
}
