//! The request's header block, HPACK-encoded once for the whole run.
//!
//! Every stream of every connection sends the same request, so the block is
//! encoded with static-table indexes and literals *without indexing* only
//! (RFC 7541 §6.1, §6.2.2): it never adds an entry to the server's dynamic
//! table, so the same bytes mean the same headers on every stream, whatever
//! the connection sent before and whatever HEADER_TABLE_SIZE the server
//! allows. The cost is a few bytes per request over an indexed encoding; the
//! gain is that a request is a memcpy of a block made before the run.

use crate::config::{Endpoint, RequestTemplate};
use crate::error::{LoadError, Setting};

/// Headers HTTP/2 forbids (RFC 9113 §8.2.2): the connection is the protocol's.
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// Static-table entries (RFC 7541 Appendix A) the block refers to.
mod index {
    pub(super) const AUTHORITY: usize = 1;
    pub(super) const METHOD_GET: usize = 2;
    pub(super) const METHOD_POST: usize = 3;
    pub(super) const METHOD: usize = 2;
    pub(super) const PATH_ROOT: usize = 4;
    pub(super) const PATH: usize = 4;
    pub(super) const SCHEME_HTTP: usize = 6;
    pub(super) const SCHEME_HTTPS: usize = 7;
    pub(super) const CONTENT_LENGTH: usize = 28;
}

/// What every stream sends: the header block and the body (DATA frames).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct H2Request {
    pub(crate) block: Vec<u8>,
    pub(crate) body: Vec<u8>,
}

impl H2Request {
    /// Encodes the request of `template` to `endpoint` (`:scheme` from `tls`).
    ///
    /// # Errors
    /// A header HTTP/2 forbids (connection-specific), or a `TE` other than
    /// `trailers`. Names and values were checked by the HTTP/1.1 serialiser.
    pub(crate) fn encode(
        template: &RequestTemplate,
        endpoint: &Endpoint,
        tls: bool,
    ) -> Result<Self, LoadError> {
        let mut block = Vec::with_capacity(64);
        match template.method.as_str() {
            "GET" => indexed(&mut block, index::METHOD_GET),
            "POST" => indexed(&mut block, index::METHOD_POST),
            other => literal_indexed_name(&mut block, index::METHOD, other.as_bytes()),
        }
        indexed(
            &mut block,
            if tls {
                index::SCHEME_HTTPS
            } else {
                index::SCHEME_HTTP
            },
        );
        let host = template
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("host"))
            .map_or(endpoint.host.as_str(), |(_, value)| value.as_str());
        literal_indexed_name(&mut block, index::AUTHORITY, host.as_bytes());
        if endpoint.path == "/" {
            indexed(&mut block, index::PATH_ROOT);
        } else {
            literal_indexed_name(&mut block, index::PATH, endpoint.path.as_bytes());
        }
        let mut has_length = false;
        for (name, value) in &template.headers {
            let name = name.to_ascii_lowercase();
            if name == "host" {
                continue;
            }
            refuse_forbidden(&name, value)?;
            has_length |= name == "content-length";
            literal_new_name(&mut block, name.as_bytes(), value.as_bytes());
        }
        let body = &template.body;
        let needs_length =
            !body.is_empty() || template.method == "POST" || template.method == "PUT";
        if needs_length && !has_length {
            let length = body.len().to_string();
            literal_indexed_name(&mut block, index::CONTENT_LENGTH, length.as_bytes());
        }
        Ok(Self {
            block,
            body: body.clone(),
        })
    }
}

fn refuse_forbidden(name: &str, value: &str) -> Result<(), LoadError> {
    if CONNECTION_SPECIFIC.contains(&name) {
        return Err(LoadError::config(
            &[Setting::Header],
            format!(
                "the header {name:?} is connection-specific, which HTTP/2 forbids (RFC 9113 \
                 §8.2.2): leave it out when loading over HTTP/2"
            ),
        ));
    }
    if name == "te" && !value.eq_ignore_ascii_case("trailers") {
        return Err(LoadError::config(
            &[Setting::Header],
            format!(
                "HTTP/2 allows the header \"te\" only as \"trailers\", not {value:?} (RFC 9113 \
                 §8.2.2)"
            ),
        ));
    }
    Ok(())
}

/// An indexed header field (§6.1).
fn indexed(out: &mut Vec<u8>, index: usize) {
    integer(out, index, 7, 0x80);
}

/// A literal without indexing whose name is a static-table entry (§6.2.2).
fn literal_indexed_name(out: &mut Vec<u8>, name_index: usize, value: &[u8]) {
    integer(out, name_index, 4, 0x00);
    string(out, value);
}

/// A literal without indexing with a literal name (§6.2.2).
fn literal_new_name(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x00);
    string(out, name);
    string(out, value);
}

/// A string literal, not Huffman-coded (§5.2: Huffman coding is optional).
fn string(out: &mut Vec<u8>, bytes: &[u8]) {
    integer(out, bytes.len(), 7, 0x00);
    out.extend_from_slice(bytes);
}

/// An integer with an N-bit prefix (§5.1); `first` holds the bits above it.
fn integer(out: &mut Vec<u8>, value: usize, prefix_bits: u8, first: u8) {
    let max = (1usize << prefix_bits) - 1;
    if value < max {
        out.push(first | u8::try_from(value).unwrap_or(u8::MAX));
        return;
    }
    out.push(first | u8::try_from(max).unwrap_or(u8::MAX));
    let mut rest = value - max;
    while rest >= 128 {
        out.push(u8::try_from(rest % 128).unwrap_or(0) | 0x80);
        rest /= 128;
    }
    out.push(u8::try_from(rest).unwrap_or(0));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(request: &H2Request) -> Vec<(String, String)> {
        let mut decoder = loona_hpack::Decoder::new();
        let mut headers = Vec::new();
        decoder
            .decode_with_cb(&request.block, |name, value| {
                headers.push((
                    String::from_utf8_lossy(&name).into_owned(),
                    String::from_utf8_lossy(&value).into_owned(),
                ));
            })
            .unwrap();
        headers
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_block_decodes_to_the_request_and_never_indexes() {
        let endpoint = Endpoint::from_url("http://127.0.0.1:8080/io?ms=5").unwrap();
        let template = RequestTemplate {
            method: "POST".into(),
            headers: vec![("X-Trace".into(), "abc".into())],
            body: b"hello".to_vec(),
        };
        let request = H2Request::encode(&template, &endpoint, false).unwrap();
        let expected = pairs(&[
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", "127.0.0.1:8080"),
            (":path", "/io?ms=5"),
            ("x-trace", "abc"),
            ("content-length", "5"),
        ]);
        assert_eq!(decoded(&request), expected);
        // The same bytes decode the same on a decoder that saw them before:
        // nothing entered its dynamic table.
        let mut decoder = loona_hpack::Decoder::new();
        for _ in 0..3 {
            let list = decoder.decode(&request.block).unwrap();
            assert_eq!(list.len(), 6);
            assert_eq!(list[3].1, b"/io?ms=5");
        }
        assert_eq!(request.body, b"hello");
    }

    #[test]
    fn a_host_header_becomes_the_authority_and_long_values_encode() {
        let endpoint = Endpoint::from_url("https://127.0.0.1:8443/").unwrap();
        let long = "v".repeat(300);
        let template = RequestTemplate {
            headers: vec![
                ("Host".into(), "example.com".into()),
                ("x-long".into(), long.clone()),
            ],
            ..RequestTemplate::default()
        };
        let request = H2Request::encode(&template, &endpoint, true).unwrap();
        let headers = decoded(&request);
        assert_eq!(
            headers[..4],
            pairs(&[
                (":method", "GET"),
                (":scheme", "https"),
                (":authority", "example.com"),
                (":path", "/"),
            ])[..]
        );
        assert_eq!(headers[4], ("x-long".to_owned(), long));
        assert_eq!(headers.len(), 5, "a GET without a body has no length");
    }

    #[test]
    fn connection_specific_headers_are_refused_with_the_rule() {
        let endpoint = Endpoint::from_url("http://127.0.0.1:1/").unwrap();
        for (name, value) in [("Connection", "close"), ("Upgrade", "h2c"), ("TE", "gzip")] {
            let template = RequestTemplate {
                headers: vec![(name.into(), value.into())],
                ..RequestTemplate::default()
            };
            let error = H2Request::encode(&template, &endpoint, false)
                .unwrap_err()
                .to_string();
            assert!(error.contains("RFC 9113"), "{name}: {error}");
        }
        let trailers = RequestTemplate {
            headers: vec![("te".into(), "trailers".into())],
            ..RequestTemplate::default()
        };
        assert!(H2Request::encode(&trailers, &endpoint, false).is_ok());
    }
}
