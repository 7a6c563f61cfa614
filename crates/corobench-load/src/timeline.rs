//! The per-second timeline in integers: one generator thread records it,
//! and the threads of a run, or the reports of several generators, are
//! added second by second before it becomes report rows. Sums of integers
//! add up the same in any grouping, so merged means do not depend on how
//! the seconds were grouped.

use corobench_model::TimelineSecond;

/// Sums for one second of the timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SecondTotals {
    pub(crate) requests: u64,
    pub(crate) errors: u64,
    pub(crate) bytes_read: u64,
    pub(crate) latency_sum_us: u64,
    pub(crate) max_latency_us: u64,
}

impl SecondTotals {
    /// The sums behind a report row. The row's mean was made as sum /
    /// requests; the product gives the integer sum back.
    pub(crate) fn of_row(row: &TimelineSecond) -> Self {
        Self {
            requests: row.requests,
            errors: row.errors,
            bytes_read: row.bytes_read,
            latency_sum_us: (row.mean_latency_us * row.requests as f64).round() as u64,
            max_latency_us: row.max_latency_us,
        }
    }

    fn add(&mut self, other: &Self) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.bytes_read += other.bytes_read;
        self.latency_sum_us = self.latency_sum_us.saturating_add(other.latency_sum_us);
        self.max_latency_us = self.max_latency_us.max(other.max_latency_us);
    }

    fn row(&self, second: usize) -> TimelineSecond {
        TimelineSecond {
            second: u32::try_from(second).unwrap_or(u32::MAX),
            requests: self.requests,
            errors: self.errors,
            bytes_read: self.bytes_read,
            mean_latency_us: if self.requests == 0 {
                0.0
            } else {
                self.latency_sum_us as f64 / self.requests as f64
            },
            max_latency_us: self.max_latency_us,
        }
    }
}

/// Timelines being added up, second by second.
#[derive(Debug, Default)]
pub(crate) struct TimelineSum {
    seconds: Vec<SecondTotals>,
}

impl TimelineSum {
    /// Adds `timeline`, whose first second is second `first` of the sum.
    pub(crate) fn add(&mut self, first: usize, timeline: impl IntoIterator<Item = SecondTotals>) {
        for (i, totals) in timeline.into_iter().enumerate() {
            let index = first.saturating_add(i);
            if index >= self.seconds.len() {
                self.seconds.resize(index + 1, SecondTotals::default());
            }
            self.seconds[index].add(&totals);
        }
    }

    /// The report rows, second 0 first.
    pub(crate) fn rows(&self) -> Vec<TimelineSecond> {
        self.seconds
            .iter()
            .enumerate()
            .map(|(second, totals)| totals.row(second))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timelines_add_by_second() {
        let a = vec![SecondTotals {
            requests: 2,
            latency_sum_us: 20,
            max_latency_us: 15,
            ..Default::default()
        }];
        let b = vec![
            SecondTotals {
                requests: 2,
                latency_sum_us: 40,
                max_latency_us: 30,
                ..Default::default()
            },
            SecondTotals {
                requests: 1,
                errors: 1,
                ..Default::default()
            },
        ];
        let mut sum = TimelineSum::default();
        sum.add(0, a);
        sum.add(0, b);
        let merged = sum.rows();
        assert_eq!(merged.len(), 2);
        assert_eq!(
            (
                merged[0].requests,
                merged[0].mean_latency_us,
                merged[0].max_latency_us
            ),
            (4, 15.0, 30)
        );
        assert_eq!(merged[1].errors, 1);
    }

    #[test]
    fn a_row_gives_its_sums_back() {
        let totals = SecondTotals {
            requests: 3,
            errors: 1,
            bytes_read: 300,
            latency_sum_us: 1_000,
            max_latency_us: 700,
        };
        assert_eq!(SecondTotals::of_row(&totals.row(4)), totals);
        assert_eq!(totals.row(4).second, 4);
    }

    #[test]
    fn a_later_start_leaves_earlier_seconds_empty() {
        let one = SecondTotals {
            requests: 1,
            ..Default::default()
        };
        let mut sum = TimelineSum::default();
        sum.add(2, [one]);
        let rows = sum.rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows.iter().map(|r| r.requests).collect::<Vec<_>>(),
            [0, 0, 1]
        );
        assert_eq!(rows[0].mean_latency_us, 0.0);
    }
}
