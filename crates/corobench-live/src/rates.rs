//! Requests per second, second by second, from a running total read a few
//! times a second at moments of the reader's choosing. Each whole second's
//! count is the total's rise across it, the total at the second's edges
//! interpolated between the readings on either side.

use std::collections::VecDeque;
use std::time::Duration;

/// How far back the current rate looks.
const CURRENT_SPAN: Duration = Duration::from_secs(1);

/// The seconds so far and the rate of the last moment.
#[derive(Clone, Debug, Default)]
pub struct SecondRates {
    /// When the series began, and the total then.
    origin: Option<(Duration, u64)>,
    /// The latest readings, oldest first, spanning at least [`CURRENT_SPAN`].
    recent: VecDeque<(Duration, u64)>,
    /// The (interpolated) total at the end of the last whole second.
    edge_total: f64,
    seconds: Vec<u64>,
}

impl SecondRates {
    /// `total` as read at `at` (any clock, as long as it only goes
    /// forward). The first reading starts the series.
    pub fn observe(&mut self, at: Duration, total: u64) {
        let Some((start, _)) = self.origin else {
            self.origin = Some((at, total));
            self.edge_total = total as f64;
            self.recent.push_back((at, total));
            return;
        };
        let Some(&(last_at, last_total)) = self.recent.back() else {
            return;
        };
        if at <= last_at || total < last_total {
            return;
        }
        loop {
            let edge = start + Duration::from_secs(self.seconds.len() as u64 + 1);
            if edge > at {
                break;
            }
            let share = (edge - last_at).as_secs_f64() / (at - last_at).as_secs_f64();
            let at_edge = last_total as f64 + (total - last_total) as f64 * share;
            self.seconds
                .push((at_edge - self.edge_total).round().max(0.0) as u64);
            self.edge_total = at_edge;
        }
        self.recent.push_back((at, total));
        while self.recent.len() > 2 && at - self.recent[1].0 >= CURRENT_SPAN {
            self.recent.pop_front();
        }
    }

    /// The count of each whole second since the first reading.
    #[must_use]
    pub fn seconds(&self) -> &[u64] {
        &self.seconds
    }

    /// The rate over about the last second; `None` before two readings.
    #[must_use]
    pub fn current(&self) -> Option<f64> {
        let (first, last) = (self.recent.front()?, self.recent.back()?);
        let span = last.0.checked_sub(first.0)?.as_secs_f64();
        (span > 0.0).then(|| (last.1 - first.1) as f64 / span)
    }

    /// The total at the last reading, counted from the first.
    #[must_use]
    pub fn total(&self) -> u64 {
        match (self.origin, self.recent.back()) {
            (Some((_, start)), Some(&(_, last))) => last - start,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_steady_rate_gives_equal_seconds_whatever_the_reading_moments() {
        let mut rates = SecondRates::default();
        // 1,000 per second, read at uneven moments.
        for at in [0, 230, 480, 760, 1010, 1300, 1740, 2020, 2260, 3100] {
            rates.observe(ms(at), at);
        }
        assert_eq!(rates.seconds(), &[1000, 1000, 1000]);
        assert_eq!(rates.total(), 3100);
        let current = rates.current().unwrap();
        assert!((current - 1000.0).abs() < 1e-6, "{current}");
    }

    #[test]
    fn a_second_without_readings_is_filled_between_its_neighbours() {
        let mut rates = SecondRates::default();
        rates.observe(ms(0), 0);
        rates.observe(ms(500), 100);
        // A pause of the reader: 2.5 s later, 500 more.
        rates.observe(ms(3000), 600);
        assert_eq!(rates.seconds(), &[200, 200, 200]);
    }

    #[test]
    fn readings_that_go_backwards_are_ignored() {
        let mut rates = SecondRates::default();
        rates.observe(ms(0), 10);
        rates.observe(ms(500), 5);
        rates.observe(ms(400), 20);
        rates.observe(ms(1000), 110);
        assert_eq!(rates.seconds(), &[100]);
        assert_eq!(rates.current(), Some(100.0));
    }
}
