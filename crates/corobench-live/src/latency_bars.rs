//! The latency histogram so far, as a few bars a person can read: bucket
//! edges on the 1-2-5 series (`≤ 500µs`, `≤ 1ms`, `≤ 2ms`, ...) spanning the
//! latencies recorded, each bar the responses that took that long.

use corobench_model::LatencyHistogram;

/// One bar: the responses above the previous edge and up to `upto_us`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub upto_us: u64,
    pub count: u64,
}

/// The 1-2-5 edges from 1 µs to 100 s, past the histogram's 60 s.
fn edges() -> impl Iterator<Item = u64> {
    let mut decade = 1_u64;
    std::iter::from_fn(move || {
        let three = [decade, decade * 2, decade * 5];
        decade *= 10;
        Some(three)
    })
    .flatten()
    .take_while(|&edge| edge <= 100_000_000)
}

/// At most `rows` buckets covering every recorded latency; the first
/// bucket also holds everything below it. Empty for an empty histogram.
#[must_use]
pub fn buckets(histogram: &LatencyHistogram, rows: usize) -> Vec<Bucket> {
    let inner = histogram.inner();
    if histogram.count() == 0 || rows == 0 {
        return Vec::new();
    }
    let (min, max) = (inner.min(), inner.max());
    let all: Vec<u64> = edges().collect();
    // The edge at or above the largest latency, and the one below the smallest.
    let last = all.iter().position(|&e| e >= max).unwrap_or(all.len() - 1);
    let first = all.iter().rposition(|&e| e < min).map_or(0, |i| i + 1);
    let first = first.max((last + 1).saturating_sub(rows));
    let mut bars: Vec<Bucket> = all[first..=last]
        .iter()
        .map(|&upto_us| Bucket { upto_us, count: 0 })
        .collect();
    for value in inner.iter_recorded() {
        let latency = value.value_iterated_to();
        let at = bars
            .iter()
            .position(|bar| latency <= bar.upto_us)
            .unwrap_or(bars.len() - 1);
        bars[at].count += value.count_at_value();
    }
    bars
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(latencies_us: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &us in latencies_us {
            h.record_us(us);
        }
        h
    }

    #[test]
    fn buckets_span_the_latencies_on_the_1_2_5_series() {
        let bars = buckets(&histogram(&[300, 400, 900, 1500, 1800, 4000]), 10);
        let edges: Vec<u64> = bars.iter().map(|b| b.upto_us).collect();
        assert_eq!(edges, [500, 1000, 2000, 5000]);
        let counts: Vec<u64> = bars.iter().map(|b| b.count).collect();
        assert_eq!(counts, [2, 1, 2, 1]);
    }

    #[test]
    fn too_many_buckets_fold_the_fastest_into_the_first() {
        let bars = buckets(&histogram(&[3, 40, 900, 15_000, 250_000]), 3);
        let edges: Vec<u64> = bars.iter().map(|b| b.upto_us).collect();
        assert_eq!(edges, [100_000, 200_000, 500_000]);
        assert_eq!(bars[0].count, 4, "everything up to 100ms");
        assert_eq!(bars.iter().map(|b| b.count).sum::<u64>(), 5);
    }

    #[test]
    fn an_empty_histogram_has_no_bars() {
        assert!(buckets(&LatencyHistogram::new(), 8).is_empty());
    }
}
