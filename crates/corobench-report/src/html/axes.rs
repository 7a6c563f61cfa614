//! Plot frames: the drawing area of a chart, its grid lines, tick labels,
//! axis titles and legend, shared by every chart of the page.

use super::svg::{Scale, Svg, color};

/// The plot area inside a chart, in pixels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub(crate) left: f64,
    pub(crate) right: f64,
    pub(crate) top: f64,
    pub(crate) bottom: f64,
}

impl Frame {
    pub(crate) fn x_scale_linear(&self, lo: f64, hi: f64) -> Scale {
        Scale::linear(lo, hi, self.left, self.right)
    }

    pub(crate) fn y_scale_linear(&self, lo: f64, hi: f64) -> Scale {
        Scale::linear(lo, hi, self.bottom, self.top)
    }
}

/// Vertical grid lines and labels under the plot; `title` below them.
pub(crate) fn x_axis(
    svg: &mut Svg,
    frame: &Frame,
    scale: &Scale,
    ticks: &[(f64, String)],
    title: &str,
) {
    for (value, label) in ticks {
        let x = scale.px(*value);
        svg.line((x, frame.top), (x, frame.bottom), "grid");
        svg.text((x, frame.bottom + 16.0), "middle", "tick", label);
    }
    svg.line(
        (frame.left, frame.bottom),
        (frame.right, frame.bottom),
        "axis",
    );
    let middle = (frame.left + frame.right) / 2.0;
    svg.text((middle, frame.bottom + 36.0), "middle", "axis-title", title);
}

/// Horizontal grid lines and labels left of the plot; `title` rotated beside them.
pub(crate) fn y_axis(
    svg: &mut Svg,
    frame: &Frame,
    scale: &Scale,
    ticks: &[(f64, String)],
    title: &str,
) {
    for (value, label) in ticks {
        let y = scale.px(*value);
        svg.line((frame.left, y), (frame.right, y), "grid");
        svg.text((frame.left - 6.0, y + 4.0), "end", "tick", label);
    }
    svg.line((frame.left, frame.top), (frame.left, frame.bottom), "axis");
    let middle = (frame.top + frame.bottom) / 2.0;
    svg.vertical_text((frame.left - 58.0, middle), "axis-title", title);
}

/// A legend right of the plot: one swatch and label per entry.
pub(crate) fn legend(svg: &mut Svg, frame: &Frame, entries: &[(usize, String, bool)]) {
    let x = frame.right + 18.0;
    for (row, (colour_index, label, dashed)) in entries.iter().enumerate() {
        let y = frame.top + 6.0 + row as f64 * 20.0;
        let c = color(*colour_index);
        svg.polyline(&[(x, y), (x + 22.0, y)], c, *dashed, label);
        svg.text((x + 28.0, y + 4.0), "start", "legend", label);
    }
}

/// The width in pixels `text` needs at the page's 12 px font (about 7 px a character).
pub(crate) fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * 7.0
}
