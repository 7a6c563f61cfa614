//! Pieces both views draw alike.

use std::time::Duration;

use corobench_report::units::si3;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Bar, BarChart, BarGroup};

/// Columns of one bar of a per-second chart, and the gap between bars.
const BAR_WIDTH: u16 = 6;
const BAR_GAP: u16 = 1;

/// The last seconds of `seconds` that fit `width` columns, one bar each,
/// labelled by the second's number from 1 and its count written on it.
#[must_use]
pub fn second_bars(seconds: &[u64], width: u16) -> BarChart<'static> {
    let fit = usize::from((width + BAR_GAP) / (BAR_WIDTH + BAR_GAP)).max(1);
    let first = seconds.len().saturating_sub(fit);
    let bars: Vec<Bar<'static>> = seconds[first..]
        .iter()
        .enumerate()
        .map(|(i, &count)| {
            Bar::default()
                .value(count)
                .label(Line::from(format!("{}s", first + i + 1)))
                .text_value(si3(count as f64))
        })
        .collect();
    BarChart::default()
        .data(BarGroup::default().bars(&bars))
        .bar_width(BAR_WIDTH)
        .bar_gap(BAR_GAP)
        .bar_style(Style::new().fg(Color::Cyan))
        .value_style(Style::new().fg(Color::Black).bg(Color::Cyan))
}

/// A span of time as a clock shows it briefly: `8s`, `1m02s`, `2h05m`.
#[must_use]
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// `part` of `whole` in [0, 1]; 1 for an empty whole.
#[must_use]
pub fn ratio(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        return 1.0;
    }
    (part / whole).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks() {
        assert_eq!(clock(Duration::from_millis(8_900)), "8s");
        assert_eq!(clock(Duration::from_secs(62)), "1m02s");
        assert_eq!(clock(Duration::from_secs(2 * 3600 + 5 * 60 + 9)), "2h05m");
    }
}
