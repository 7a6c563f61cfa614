//! HPACK (RFC 7541) decoding of response header blocks.
//!
//! Written here because the crates measured did not do: `loona-hpack` (a
//! fork of hpack-rs) builds a hash map of the Huffman code for every
//! Huffman-coded string, 77% of the generator's CPU against nginx over h2c
//! (perf, cpu-clock); `httlib-hpack` is fast but panics on some malformed
//! blocks (an index out of bounds), and a server may send anything. The
//! Huffman code itself is `httlib-huffman`'s table-driven decoder. The
//! decoder is checked against loona-hpack on encoded blocks and run on
//! arbitrary bytes by property tests (`conn/tests.rs`).

use std::collections::VecDeque;

/// Why a header block cannot be decoded: a connection error
/// (COMPRESSION_ERROR), since the dynamic table can no longer be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HpackError(pub(crate) &'static str);

/// What every field of the dynamic table costs beyond its bytes (RFC 7541, 4.1).
const ENTRY_OVERHEAD: usize = 32;

/// Fields newest first, as HPACK indexes them.
type DynamicTable = VecDeque<(Box<[u8]>, Box<[u8]>)>;

/// The decoder of one connection: the dynamic table the server's blocks fill.
#[derive(Debug)]
pub(crate) struct HpackDecoder {
    dynamic: DynamicTable,
    size: usize,
    /// The size the server last set, and the most the generator allows.
    max_size: usize,
    allowed: usize,
    /// Huffman-decoded name and value of the field at hand.
    name: Vec<u8>,
    value: Vec<u8>,
    /// The last Huffman-coded values and what they decoded to.
    memo: HuffmanMemo,
}

/// How many Huffman-coded strings the decoder remembers.
const MEMO_ENTRIES: usize = 8;

/// A server repeats most of its response headers byte for byte (nginx
/// sends `server`, `content-type` and a `date` that changes once a second,
/// each Huffman-coded and indexed, on every response); their decoding is
/// remembered, so a repeat is a comparison and a copy, not a decode.
#[derive(Debug, Default)]
struct HuffmanMemo {
    /// (coded, decoded), the oldest replaced first.
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    next: usize,
}

impl HuffmanMemo {
    /// Decodes `coded` into `out`, from memory when it was seen lately.
    fn decode(&mut self, coded: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
        if let Some((_, decoded)) = self.entries.iter().find(|(c, _)| c == coded) {
            out.extend_from_slice(decoded);
            return Ok(());
        }
        httlib_huffman::decode(coded, out, httlib_huffman::DecoderSpeed::FiveBits)
            .map_err(|_| HpackError("a malformed Huffman string"))?;
        let entry = (coded.to_vec(), out.clone());
        if self.entries.len() < MEMO_ENTRIES {
            self.entries.push(entry);
        } else {
            self.entries[self.next] = entry;
            self.next = (self.next + 1) % MEMO_ENTRIES;
        }
        Ok(())
    }
}

impl HpackDecoder {
    /// A decoder allowing the server a dynamic table of `allowed` bytes
    /// (what the generator's SETTINGS_HEADER_TABLE_SIZE says).
    pub(crate) fn new(allowed: usize) -> Self {
        Self {
            dynamic: VecDeque::new(),
            size: 0,
            max_size: allowed,
            allowed,
            name: Vec::new(),
            value: Vec::new(),
            memo: HuffmanMemo::default(),
        }
    }

    /// Decodes a whole block, calling `on_field` with each field in order.
    pub(crate) fn decode(
        &mut self,
        block: &[u8],
        mut on_field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut rest = block;
        let mut fields_seen = false;
        while let Some(&first) = rest.first() {
            if first & 0x80 != 0 {
                let index = integer(&mut rest, 7)?;
                let (name, value) = self.entry(index)?;
                on_field(name, value);
            } else if first & 0xe0 == 0x20 {
                if fields_seen {
                    return Err(HpackError("a table size update after a field"));
                }
                let size = integer(&mut rest, 5)?;
                self.resize(size)?;
                continue;
            } else {
                // 01: indexed from now on; 0000 and 0001: not indexed.
                let indexing = first & 0x40 != 0;
                let prefix = if indexing { 6 } else { 4 };
                self.literal(&mut rest, prefix)?;
                on_field(&self.name, &self.value);
                if indexing {
                    self.insert();
                }
            }
            fields_seen = true;
        }
        Ok(())
    }

    /// A literal field: its name (indexed or literal) and value into
    /// `self.name` and `self.value`.
    fn literal(&mut self, rest: &mut &[u8], prefix: u8) -> Result<(), HpackError> {
        let index = integer(rest, prefix)?;
        if index == 0 {
            string(rest, &mut self.name, &mut self.memo)?;
        } else {
            let (name, _) = entry(&self.dynamic, index)?;
            self.name.clear();
            self.name.extend_from_slice(name);
        }
        string(rest, &mut self.value, &mut self.memo)
    }

    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        entry(&self.dynamic, index)
    }

    /// Adds the field at hand to the dynamic table, evicting the oldest.
    fn insert(&mut self) {
        let cost = self.name.len() + self.value.len() + ENTRY_OVERHEAD;
        if cost > self.max_size {
            // Larger than the table: it empties it (RFC 7541, 4.4).
            self.dynamic.clear();
            self.size = 0;
            return;
        }
        self.evict_to(self.max_size - cost);
        let entry = (self.name[..].into(), self.value[..].into());
        self.dynamic.push_front(entry);
        self.size += cost;
    }

    fn resize(&mut self, size: usize) -> Result<(), HpackError> {
        if size > self.allowed {
            return Err(HpackError("a table size above the one allowed"));
        }
        self.max_size = size;
        self.evict_to(size);
        Ok(())
    }

    fn evict_to(&mut self, size: usize) {
        while self.size > size {
            let Some((name, value)) = self.dynamic.pop_back() else {
                break;
            };
            self.size -= name.len() + value.len() + ENTRY_OVERHEAD;
        }
    }
}

/// The field at a 1-based index: the static table, then the dynamic one.
fn entry(dynamic: &DynamicTable, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
    match index {
        0 => Err(HpackError("index 0")),
        1..=STATIC_ENTRIES => {
            let (name, value) = STATIC_TABLE[index - 1];
            Ok((name.as_bytes(), value.as_bytes()))
        }
        _ => dynamic
            .get(index - STATIC_ENTRIES - 1)
            .map(|(name, value)| (&name[..], &value[..]))
            .ok_or(HpackError("an index beyond the dynamic table")),
    }
}

/// The largest integer a block may carry: more than any size or index a
/// table of the allowed size could need, far below overflow.
const MAX_INTEGER: usize = 1 << 24;

/// An integer with an N-bit prefix (RFC 7541, 5.1), taken off `rest`.
fn integer(rest: &mut &[u8], prefix: u8) -> Result<usize, HpackError> {
    let (&first, mut tail) = rest.split_first().ok_or(HpackError("a block cut short"))?;
    let mask = (1u16 << prefix) - 1;
    let mut value = usize::from(u16::from(first) & mask);
    if value == usize::from(mask) {
        let mut shift = 0;
        loop {
            let (&byte, after) = tail
                .split_first()
                .ok_or(HpackError("an integer cut short"))?;
            tail = after;
            value += usize::from(byte & 0x7f) << shift;
            if value > MAX_INTEGER {
                return Err(HpackError("an integer too large"));
            }
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
    }
    *rest = tail;
    Ok(value)
}

/// A string literal (RFC 7541, 5.2), raw or Huffman-coded, into `out`.
fn string(rest: &mut &[u8], out: &mut Vec<u8>, memo: &mut HuffmanMemo) -> Result<(), HpackError> {
    let huffman = rest.first().is_some_and(|b| b & 0x80 != 0);
    let len = integer(rest, 7)?;
    if len > rest.len() {
        return Err(HpackError("a string longer than its block"));
    }
    let (bytes, tail) = rest.split_at(len);
    *rest = tail;
    out.clear();
    if huffman {
        memo.decode(bytes, out)
    } else {
        out.extend_from_slice(bytes);
        Ok(())
    }
}

const STATIC_ENTRIES: usize = 61;

/// RFC 7541, Appendix A.
const STATIC_TABLE: [(&str, &str); STATIC_ENTRIES] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    fn fields(
        decoder: &mut HpackDecoder,
        block: &[u8],
    ) -> Result<Vec<(String, String)>, HpackError> {
        let mut out = Vec::new();
        decoder.decode(block, |name, value| {
            out.push((
                String::from_utf8_lossy(name).into_owned(),
                String::from_utf8_lossy(value).into_owned(),
            ));
        })?;
        Ok(out)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// RFC 7541, C.4.1: a request with Huffman-coded strings.
    #[test]
    fn the_rfc_huffman_request_example_decodes() {
        let mut decoder = HpackDecoder::new(4096);
        let block = hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff");
        let got = fields(&mut decoder, &block).unwrap();
        let expected = [
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ];
        assert_eq!(got, pairs(&expected));
        assert_eq!(decoder.size, 57);
    }

    /// RFC 7541, C.6.1 and C.6.2: responses filling a 256-byte table,
    /// the second evicting the oldest field and reusing the others.
    #[test]
    fn the_rfc_huffman_response_examples_decode_and_evict() {
        let mut decoder = HpackDecoder::new(256);
        let first = hex(
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        );
        let got = fields(&mut decoder, &first).unwrap();
        let expected = [
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ];
        assert_eq!(got, pairs(&expected));
        assert_eq!(decoder.size, 222);
        let second = hex("4883 640e ffc1 c0bf");
        let got = fields(&mut decoder, &second).unwrap();
        let expected = [
            (":status", "307"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ];
        assert_eq!(got, pairs(&expected));
        assert_eq!(decoder.size, 222);
    }

    /// A Huffman-coded value seen before decodes from memory to the same
    /// bytes; other values, and malformed ones, are decoded as ever.
    #[test]
    fn repeated_huffman_values_decode_from_memory_alike() {
        let mut memo = HuffmanMemo::default();
        // "www.example.com" and "no-cache", Huffman-coded (RFC 7541, C.4).
        let www = hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff");
        let no_cache = hex("a8eb 1064 9cbf");
        for round in 0..3 {
            for (coded, text) in [(&www, "www.example.com"), (&no_cache, "no-cache")] {
                let mut out = Vec::new();
                memo.decode(coded, &mut out).unwrap();
                assert_eq!(out, text.as_bytes(), "round {round}");
            }
        }
        assert_eq!(memo.entries.len(), 2, "each remembered once");
        for n in 0..20u8 {
            let mut out = Vec::new();
            // One byte of five ones and a code: distinct short strings.
            let coded = [n << 3 | 0x07];
            let _ = memo.decode(&coded, &mut out);
        }
        assert_eq!(memo.entries.len(), MEMO_ENTRIES, "the memory stays bounded");
        let mut out = Vec::new();
        assert!(memo.decode(&[0xff, 0xff, 0xff, 0xff], &mut out).is_err());
        assert!(
            memo.decode(&[0xff, 0xff, 0xff, 0xff], &mut out).is_err(),
            "never remembered"
        );
    }

    #[test]
    fn malformed_blocks_are_errors() {
        let cases: [(&[u8], &str); 6] = [
            (&[0x80], "index 0"),
            (&[0xbe], "an index beyond the dynamic table"),
            (&[0x88, 0x20], "a table size update after a field"),
            (&[0x3f, 0xe2, 0x1f], "a table size above the one allowed"),
            (&[0x40, 0x05, b'a'], "a string longer than its block"),
            (
                &[0x7f, 0xff, 0xff, 0xff, 0xff, 0x7f],
                "an integer too large",
            ),
        ];
        for (block, why) in cases {
            let mut decoder = HpackDecoder::new(4096);
            assert_eq!(
                fields(&mut decoder, block),
                Err(HpackError(why)),
                "{block:02x?}"
            );
        }
    }

    #[test]
    fn a_size_update_to_zero_empties_the_table() {
        let mut decoder = HpackDecoder::new(4096);
        fields(&mut decoder, b"\x40\x01a\x01b").unwrap();
        assert_eq!(decoder.dynamic.len(), 1);
        assert_eq!(
            fields(&mut decoder, &[0x20, 0xbe]),
            Err(HpackError("an index beyond the dynamic table"))
        );
        assert_eq!(decoder.size, 0);
    }
}
