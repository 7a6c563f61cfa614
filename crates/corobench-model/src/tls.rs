//! What a load run over TLS adds to its report: the session it negotiated
//! and its handshakes, kept apart from request latency.

use serde::{Deserialize, Serialize};

use crate::histogram::{LatencyHistogram, LatencyReport};

/// How the generator spoke TLS, and how its handshakes went.
///
/// The handshake figures cover the measured window, like every other
/// figure: with kept-alive connections opened during a warm-up they are
/// empty, because no connection was opened while the window was open.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TlsReport {
    /// The protocol version the server chose (`TLSv1.3`); absent when no
    /// handshake completed. Merged: every distinct value, comma-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The cipher suite the server chose (`TLS13_AES_128_GCM_SHA256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    /// The key exchange group (`X25519`); absent after a TLS 1.2 resumption.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_exchange: Option<String>,
    /// The application protocol the server chose by ALPN (`http/1.1`);
    /// absent when it chose none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpn: Option<String>,
    /// The name sent in SNI and checked against the certificate; absent
    /// for an IP address, which TLS clients do not send as SNI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// Whether the server's certificate was checked (not with `--insecure`).
    pub verified: bool,
    /// Whether sessions were resumed when the server allowed it.
    pub resumption: bool,
    /// Whether the kernel encrypted and decrypted after the handshake (kTLS).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ktls: bool,
    /// The crypto library behind the TLS code (`aws-lc-rs` or `ring`).
    pub provider: String,
    /// Handshakes completed in the window without resuming a session.
    pub full_handshakes: u64,
    /// Handshakes completed in the window that resumed an earlier session.
    pub resumed_handshakes: u64,
    /// From the TCP connection being established to the TLS session being
    /// ready for requests, of every handshake completed in the window.
    pub handshake: LatencyReport,
}

impl TlsReport {
    /// Handshakes completed in the window, full and resumed.
    #[must_use]
    pub fn handshakes(&self) -> u64 {
        self.full_handshakes + self.resumed_handshakes
    }

    /// Adds `other`'s handshakes to these (exactly: histograms bucket by
    /// bucket); negotiated values that differ are listed together.
    pub fn add(&mut self, other: &Self) {
        self.full_handshakes += other.full_handshakes;
        self.resumed_handshakes += other.resumed_handshakes;
        let mut handshake: LatencyHistogram = self.handshake.histogram.clone();
        handshake.add(&other.handshake.histogram);
        self.handshake = handshake.report();
        for (mine, theirs) in [
            (&mut self.version, &other.version),
            (&mut self.cipher, &other.cipher),
            (&mut self.key_exchange, &other.key_exchange),
            (&mut self.alpn, &other.alpn),
        ] {
            *mine = union(mine.as_deref(), theirs.as_deref());
        }
    }
}

/// Both values' distinct comma-separated parts, sorted, so that any order
/// of merging gives the same text.
fn union(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut parts: Vec<&str> = [a, b]
        .into_iter()
        .flatten()
        .flat_map(|text| text.split(','))
        .collect();
    parts.sort_unstable();
    parts.dedup();
    (!parts.is_empty()).then(|| parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(full: u64, resumed: u64, version: &str, handshake_us: &[u64]) -> TlsReport {
        let mut histogram = LatencyHistogram::new();
        for &us in handshake_us {
            histogram.record_us(us);
        }
        TlsReport {
            version: Some(version.to_owned()),
            cipher: Some("TLS13_AES_128_GCM_SHA256".to_owned()),
            key_exchange: None,
            alpn: Some("http/1.1".to_owned()),
            server_name: None,
            verified: true,
            resumption: true,
            ktls: false,
            provider: "aws-lc-rs".to_owned(),
            full_handshakes: full,
            resumed_handshakes: resumed,
            handshake: histogram.report(),
        }
    }

    #[test]
    fn adding_sums_counts_and_histograms_and_lists_differing_values() {
        let mut a = report(2, 3, "TLSv1.3", &[100, 200]);
        let b = report(1, 4, "TLSv1.2", &[300]);
        a.add(&b);
        assert_eq!((a.full_handshakes, a.resumed_handshakes), (3, 7));
        assert_eq!(a.handshake.summary.count, 3);
        assert_eq!(a.version.as_deref(), Some("TLSv1.2,TLSv1.3"));
        assert_eq!(a.cipher.as_deref(), Some("TLS13_AES_128_GCM_SHA256"));
        assert_eq!(a.key_exchange, None);
        let mut c = report(0, 0, "TLSv1.3", &[]);
        c.add(&a);
        assert_eq!(c.version, a.version, "merging in any order gives one text");
    }
}
