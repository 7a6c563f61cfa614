//! Latency histograms: HDR histograms in microseconds, serialisable in the
//! HdrHistogram V2 format so trials and generator threads merge exactly.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{
    Deserializer, Serializer as _, V2DeflateSerializer, V2Serializer,
};
use serde::{Deserialize, Serialize};

/// Smallest latency the histogram resolves: 1 µs.
pub const LATENCY_LOWEST_US: u64 = 1;
/// Largest latency recorded: 60 s. Larger values are clamped to it.
pub const LATENCY_HIGHEST_US: u64 = 60_000_000;
/// Significant decimal digits kept for every value.
pub const LATENCY_SIGNIFICANT_DIGITS: u8 = 3;

/// The percentiles every summary reports, in percent.
pub const REPORTED_PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0];

/// An HDR histogram of latencies in microseconds (1 µs to 60 s, 3 digits).
#[derive(Clone)]
pub struct LatencyHistogram(Histogram<u64>);

/// A histogram could not be decoded from its serialised form.
#[derive(Debug)]
pub struct HistogramDecodeError(String);

impl fmt::Display for HistogramDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid HDR histogram: {}", self.0)
    }
}

impl std::error::Error for HistogramDecodeError {}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("count", &self.0.len())
            .field("max_us", &self.0.max())
            .finish()
    }
}

impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl LatencyHistogram {
    /// An empty histogram with the standard bounds.
    #[must_use]
    pub fn new() -> Self {
        let histogram = Histogram::new_with_bounds(
            LATENCY_LOWEST_US,
            LATENCY_HIGHEST_US,
            LATENCY_SIGNIFICANT_DIGITS,
        )
        .expect("constant histogram bounds are valid");
        Self(histogram)
    }

    /// Records one latency; values outside 1 µs..60 s are clamped.
    #[inline]
    pub fn record_us(&mut self, latency_us: u64) {
        let clamped = latency_us.clamp(LATENCY_LOWEST_US, LATENCY_HIGHEST_US);
        // Cannot fail: the value is within the bounds the histogram was built with.
        let _ = self.0.record(clamped);
    }

    /// Adds every count of `other` into `self` (exact merge).
    pub fn add(&mut self, other: &Self) {
        // Both histograms share the same bounds, so adding cannot overflow the range.
        let _ = self.0.add(&other.0);
    }

    /// Forgets every recorded value (used when a warm-up ends).
    pub fn reset(&mut self) {
        self.0.reset();
    }

    /// Number of recorded values.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// The underlying HDR histogram, for callers that need more than the summary.
    #[must_use]
    pub fn inner(&self) -> &Histogram<u64> {
        &self.0
    }

    /// The latency at `percentile` (0..=100) in microseconds; 0 when empty.
    #[must_use]
    pub fn value_at_percentile_us(&self, percentile: f64) -> u64 {
        if self.0.is_empty() {
            return 0;
        }
        self.0.value_at_percentile(percentile)
    }

    /// Encodes the histogram in the HdrHistogram V2 format (uncompressed).
    #[must_use]
    pub fn to_v2_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(&self.0, &mut bytes)
            .expect("serialising into a Vec cannot fail");
        bytes
    }

    /// Encodes the histogram in the HdrHistogram V2 format wrapped in
    /// DEFLATE: the compact form that exported runs carry.
    #[must_use]
    pub fn to_v2_deflate_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.0, &mut bytes)
            .expect("serialising into a Vec cannot fail");
        bytes
    }

    /// Decodes a histogram written by [`Self::to_v2_bytes`] (or any V2 / V2+DEFLATE encoder).
    ///
    /// # Errors
    /// When the bytes are not a valid HdrHistogram encoding, or the
    /// histogram was made with other bounds or precision: its buckets would
    /// not line up with corobench's, so adding it could not be exact.
    pub fn from_v2_bytes(bytes: &[u8]) -> Result<Self, HistogramDecodeError> {
        let inflated;
        let bytes = match read_u32(bytes, 0) {
            Some(V2_DEFLATE_COOKIE) => {
                inflated = inflate(bytes)?;
                &inflated[..]
            }
            _ => bytes,
        };
        check_v2_header(bytes)?;
        let mut cursor = std::io::Cursor::new(bytes);
        let decoded: Histogram<u64> = Deserializer::new()
            .deserialize(&mut cursor)
            .map_err(|e| HistogramDecodeError(format!("{e:?}")))?;
        check_settings(&decoded)?;
        let mut histogram = Self::new();
        histogram
            .0
            .add(&decoded)
            .map_err(|e| HistogramDecodeError(format!("{e:?}")))?;
        Ok(histogram)
    }

    /// The V2 encoding as standard base64, as it appears in JSON output.
    #[must_use]
    pub fn to_base64(&self) -> String {
        BASE64.encode(self.to_v2_bytes())
    }

    /// The V2 + DEFLATE encoding as standard base64, as exported runs hold it.
    #[must_use]
    pub fn to_compact_base64(&self) -> String {
        BASE64.encode(self.to_v2_deflate_bytes())
    }

    /// Decodes the base64 form produced by [`Self::to_base64`] (or
    /// [`Self::to_compact_base64`]).
    ///
    /// # Errors
    /// When the text is not base64 or not a valid histogram.
    pub fn from_base64(text: &str) -> Result<Self, HistogramDecodeError> {
        let bytes = BASE64
            .decode(text.trim())
            .map_err(|e| HistogramDecodeError(format!("not base64: {e}")))?;
        Self::from_v2_bytes(&bytes)
    }

    /// Count, extremes, mean, standard deviation and the reported percentiles.
    #[must_use]
    pub fn summary(&self) -> LatencySummary {
        let h = &self.0;
        let empty = h.is_empty();
        LatencySummary {
            count: h.len(),
            min_us: if empty { 0 } else { h.min() },
            mean_us: if empty { 0.0 } else { h.mean() },
            stdev_us: if empty { 0.0 } else { h.stdev() },
            max_us: if empty { 0 } else { h.max() },
            percentiles: REPORTED_PERCENTILES
                .iter()
                .map(|&percentile| PercentileValue {
                    percentile,
                    latency_us: self.value_at_percentile_us(percentile),
                })
                .collect(),
        }
    }

    /// The summary plus the encoded histogram, as written to JSON.
    #[must_use]
    pub fn report(&self) -> LatencyReport {
        LatencyReport {
            summary: self.summary(),
            histogram: self.clone(),
        }
    }
}

/// Refuses a histogram whose settings differ from [`LatencyHistogram::new`]'s.
/// The cookies of the V2 encoding and of V2 wrapped in DEFLATE (with the
/// 0x10 flag of 8-byte words, as every V2 encoder writes them).
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;
/// Bytes of a V2 header before its payload.
const V2_HEADER_BYTES: usize = 40;
/// The most an encoding of corobench's histogram can take (each of its
/// about 17,000 counts in at most 9 bytes, with room to spare): a deflated
/// one that inflates beyond it was not made by corobench.
const MAX_V2_BYTES: usize = 1 << 20;

/// The big-endian `u32` at `at`, if the bytes reach that far.
fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let word = bytes.get(at..at + 4)?;
    Some(u32::from_be_bytes(word.try_into().ok()?))
}

/// The V2 encoding inside a DEFLATE one, at most [`MAX_V2_BYTES`] of it.
fn inflate(bytes: &[u8]) -> Result<Vec<u8>, HistogramDecodeError> {
    use std::io::Read as _;
    let length = read_u32(bytes, 4).map_or(usize::MAX, |n| n as usize);
    let payload = bytes
        .get(8..)
        .filter(|rest| rest.len() >= length)
        .ok_or_else(|| HistogramDecodeError("its length exceeds its bytes".to_owned()))?;
    let mut inflated = Vec::new();
    flate2::read::ZlibDecoder::new(&payload[..length])
        .take(MAX_V2_BYTES as u64 + 1)
        .read_to_end(&mut inflated)
        .map_err(|e| HistogramDecodeError(format!("its compressed payload: {e}")))?;
    if inflated.len() > MAX_V2_BYTES {
        return Err(HistogramDecodeError(format!(
            "it inflates beyond {MAX_V2_BYTES} bytes, more than any corobench histogram"
        )));
    }
    Ok(inflated)
}

/// A V2 header whose payload length fits the bytes there are and whose
/// bounds and precision are corobench's, checked before the decoder
/// allocates anything from them (a crafted header asked for gigabytes).
fn check_v2_header(bytes: &[u8]) -> Result<(), HistogramDecodeError> {
    let fail = |why: &str| Err(HistogramDecodeError(why.to_owned()));
    if bytes.len() < V2_HEADER_BYTES || read_u32(bytes, 0) != Some(V2_COOKIE) {
        return fail("it is not an HdrHistogram V2 encoding");
    }
    let payload = read_u32(bytes, 4).map_or(usize::MAX, |n| n as usize);
    if payload > bytes.len() - V2_HEADER_BYTES {
        return fail("its payload length exceeds its bytes");
    }
    let word = |at: usize| bytes.get(at..at + 8).and_then(|w| w.try_into().ok());
    let (digits, low, high) = (
        read_u32(bytes, 12),
        word(16).map(u64::from_be_bytes),
        word(24).map(u64::from_be_bytes),
    );
    let ours = (
        Some(u32::from(LATENCY_SIGNIFICANT_DIGITS)),
        Some(LATENCY_LOWEST_US),
        Some(LATENCY_HIGHEST_US),
    );
    if (digits, low, high) == ours {
        return Ok(());
    }
    Err(settings_differ(
        low.unwrap_or_default(),
        high.unwrap_or_default(),
        u64::from(digits.unwrap_or_default()),
    ))
}

fn check_settings(histogram: &Histogram<u64>) -> Result<(), HistogramDecodeError> {
    let settings = (histogram.low(), histogram.high(), histogram.sigfig());
    let ours = (
        LATENCY_LOWEST_US,
        LATENCY_HIGHEST_US,
        LATENCY_SIGNIFICANT_DIGITS,
    );
    if settings == ours {
        return Ok(());
    }
    Err(settings_differ(
        settings.0,
        settings.1,
        u64::from(settings.2),
    ))
}

fn settings_differ(low: u64, high: u64, digits: u64) -> HistogramDecodeError {
    HistogramDecodeError(format!(
        "its settings differ from corobench's (lowest {low} µs, highest {high} µs, {digits} \
         significant digits where corobench uses {LATENCY_LOWEST_US} µs, \
         {LATENCY_HIGHEST_US} µs, {LATENCY_SIGNIFICANT_DIGITS}), so it cannot be added \
         exactly; record it with corobench's settings"
    ))
}

impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// One point of the percentile spectrum.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PercentileValue {
    /// In percent, 0..=100.
    pub percentile: f64,
    pub latency_us: u64,
}

/// What a histogram says, in numbers a person reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_us: u64,
    pub mean_us: f64,
    pub stdev_us: f64,
    pub max_us: u64,
    pub percentiles: Vec<PercentileValue>,
}

impl LatencySummary {
    /// The value at one of the [`REPORTED_PERCENTILES`], if it was reported.
    #[must_use]
    pub fn percentile_us(&self, percentile: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|p| (p.percentile - percentile).abs() < 1e-9)
            .map(|p| p.latency_us)
    }
}

/// A summary with its full histogram (`hdr_v2_base64` in JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyReport {
    #[serde(flatten)]
    pub summary: LatencySummary,
    #[serde(rename = "hdr_v2_base64")]
    pub histogram: LatencyHistogram,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_base64() {
        let mut h = LatencyHistogram::new();
        for v in [1, 10, 100, 1_000, 10_000, 1_000_000] {
            h.record_us(v);
        }
        let back = LatencyHistogram::from_base64(&h.to_base64()).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.count(), 6);
    }

    #[test]
    fn clamps_out_of_range_values() {
        let mut h = LatencyHistogram::new();
        h.record_us(0);
        h.record_us(u64::MAX);
        assert_eq!(h.count(), 2);
        assert!(h.summary().max_us >= LATENCY_HIGHEST_US);
    }

    #[test]
    fn merge_is_exact() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut both = LatencyHistogram::new();
        for v in 1..=1000 {
            a.record_us(v);
            both.record_us(v);
        }
        for v in 5000..=6000 {
            b.record_us(v);
            both.record_us(v);
        }
        a.add(&b);
        assert_eq!(a, both);
    }

    #[test]
    fn refuses_histograms_with_other_settings() {
        let mut other = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 2).unwrap();
        other.record(1_000).unwrap();
        let mut bytes = Vec::new();
        V2Serializer::new().serialize(&other, &mut bytes).unwrap();
        let error = LatencyHistogram::from_v2_bytes(&bytes).unwrap_err();
        assert!(error.to_string().contains("settings differ"), "{error}");
    }

    /// Issue "wrong successes", item 4: sizes read from a report are bounded
    /// before allocating. A V2 header claiming a 4 GB payload, or a
    /// deflated one inflating past any corobench histogram, is refused.
    #[test]
    fn refuses_sizes_no_corobench_histogram_has() {
        let mut bytes = LatencyHistogram::new().to_v2_bytes();
        bytes[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        let error = LatencyHistogram::from_v2_bytes(&bytes).unwrap_err();
        assert!(
            error.to_string().contains("payload length exceeds"),
            "{error}"
        );
        let mut huge_bounds = LatencyHistogram::new().to_v2_bytes();
        huge_bounds[24..32].copy_from_slice(&u64::MAX.to_be_bytes());
        let error = LatencyHistogram::from_v2_bytes(&huge_bounds).unwrap_err();
        assert!(error.to_string().contains("settings differ"), "{error}");
        // Zeros that inflate to twice the most a corobench histogram takes.
        let mut deflated = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut deflated, &vec![0_u8; 2 * MAX_V2_BYTES]).unwrap();
        let payload = deflated.finish().unwrap();
        let mut bomb = V2_DEFLATE_COOKIE.to_be_bytes().to_vec();
        bomb.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_be_bytes());
        bomb.extend_from_slice(&payload);
        let error = LatencyHistogram::from_v2_bytes(&bomb).unwrap_err();
        assert!(error.to_string().contains("inflates beyond"), "{error}");
    }

    #[test]
    fn the_compact_encoding_decodes_to_the_same_histogram() {
        let mut h = LatencyHistogram::new();
        for v in [3, 250, 250, 9_000, 1_200_000] {
            h.record_us(v);
        }
        let compact = h.to_v2_deflate_bytes();
        assert_eq!(read_u32(&compact, 0), Some(V2_DEFLATE_COOKIE));
        let back = LatencyHistogram::from_v2_bytes(&compact).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.to_v2_bytes(), h.to_v2_bytes());
        assert_eq!(
            LatencyHistogram::from_base64(&h.to_compact_base64()).unwrap(),
            h
        );
    }

    #[test]
    fn compressed_encodings_still_decode() {
        let mut h = LatencyHistogram::new();
        h.record_us(250);
        let mut bytes = Vec::new();
        hdrhistogram::serialization::V2DeflateSerializer::new()
            .serialize(&h.0, &mut bytes)
            .unwrap();
        assert_eq!(LatencyHistogram::from_v2_bytes(&bytes).unwrap(), h);
    }

    #[test]
    fn rejects_garbage() {
        assert!(LatencyHistogram::from_base64("not base64!").is_err());
        assert!(LatencyHistogram::from_v2_bytes(b"garbage").is_err());
    }

    #[test]
    fn empty_summary_is_zero() {
        let s = LatencyHistogram::new().summary();
        assert_eq!(s.count, 0);
        assert_eq!(s.percentile_us(99.0), Some(0));
    }
}
