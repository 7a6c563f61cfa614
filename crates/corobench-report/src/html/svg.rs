//! Inline SVG: scales (linear and logarithmic), tick positions a person
//! reads easily (1, 2, 5 × 10ⁿ) and a small builder for the elements the
//! charts draw. Pure presentation: values in, pixels out.

use std::fmt::Write as _;

/// Colours for series, distinguishable and readable on white (Tableau 10).
pub(crate) const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b07aa1", "#edc948", "#ff9da7",
    "#9c755f", "#79706e",
];

/// The dash pattern of a dashed line.
pub(crate) const DASHED: &str = "6 4";

/// The colour of series number `i`.
pub(crate) fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Maps a data interval onto a pixel interval, linearly or on a log scale.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scale {
    lo: f64,
    hi: f64,
    from_px: f64,
    to_px: f64,
    log: bool,
}

impl Scale {
    pub(crate) fn linear(lo: f64, hi: f64, from_px: f64, to_px: f64) -> Self {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        Self {
            lo,
            hi,
            from_px,
            to_px,
            log: false,
        }
    }

    /// A log scale; `lo` and `hi` must be positive.
    pub(crate) fn log(lo: f64, hi: f64, from_px: f64, to_px: f64) -> Self {
        let lo = lo.max(f64::MIN_POSITIVE);
        let hi = if hi > lo { hi } else { lo * 10.0 };
        Self {
            lo: lo.log10(),
            hi: hi.log10(),
            from_px,
            to_px,
            log: true,
        }
    }

    pub(crate) fn px(&self, v: f64) -> f64 {
        let v = if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        };
        let t = (v - self.lo) / (self.hi - self.lo);
        self.from_px + t * (self.to_px - self.from_px)
    }
}

/// A round step (1, 2 or 5 × 10ⁿ) giving about `count` ticks over `span`.
pub(crate) fn nice_step(span: f64, count: usize) -> f64 {
    let raw = span / count.max(1) as f64;
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// The upper end of an axis from 0: `max` rounded up to a whole step.
pub(crate) fn nice_max(max: f64, count: usize) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let step = nice_step(max, count);
    (max / step).ceil() * step
}

/// Ticks every `step` from `lo` to `hi` (both inclusive, within rounding).
pub(crate) fn linear_ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// 1, 2 and 5 × 10ⁿ within [lo, hi], or only powers of ten when the range
/// spans many decades.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (lo_exp, hi_exp) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades = (hi / lo).log10();
    let multiples: &[f64] = if decades > 4.0 {
        &[1.0]
    } else if decades > 1.5 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
    };
    let mut ticks = Vec::new();
    for exp in lo_exp..=hi_exp {
        for m in multiples {
            let v = m * 10f64.powi(exp);
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                ticks.push(v);
            }
        }
    }
    ticks
}

/// Text safe inside SVG and HTML elements and attributes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Pixel coordinates with one decimal: enough for a crisp chart.
pub(crate) fn px(v: f64) -> String {
    let rounded = (v * 10.0).round() / 10.0;
    if rounded == rounded.trunc() {
        format!("{rounded:.0}")
    } else {
        format!("{rounded:.1}")
    }
}

/// An SVG document under construction.
#[derive(Debug)]
pub(crate) struct Svg {
    width: f64,
    height: f64,
    body: String,
}

impl Svg {
    pub(crate) fn new(width: f64, height: f64) -> Self {
        Self {
            width,
            height,
            body: String::new(),
        }
    }

    pub(crate) fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), class: &str) {
        let _ = write!(
            self.body,
            r#"<line class="{class}" x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
            px(x1),
            px(y1),
            px(x2),
            px(y2)
        );
    }

    /// Text at (x, y); `anchor` is start, middle or end.
    pub(crate) fn text(&mut self, (x, y): (f64, f64), anchor: &str, class: &str, text: &str) {
        let _ = write!(
            self.body,
            r#"<text class="{class}" x="{}" y="{}" text-anchor="{anchor}">{}</text>"#,
            px(x),
            px(y),
            escape(text)
        );
    }

    /// Text rotated a quarter turn anticlockwise (a vertical axis title).
    pub(crate) fn vertical_text(&mut self, (x, y): (f64, f64), class: &str, text: &str) {
        let _ = write!(
            self.body,
            r#"<text class="{class}" transform="translate({},{}) rotate(-90)" text-anchor="middle">{}</text>"#,
            px(x),
            px(y),
            escape(text)
        );
    }

    /// A rectangle with a tooltip.
    pub(crate) fn rect(&mut self, (x, y, w, h): (f64, f64, f64, f64), fill: &str, tip: &str) {
        let _ = write!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"><title>{}</title></rect>"#,
            px(x),
            px(y),
            px(w.max(0.0)),
            px(h.max(0.0)),
            escape(tip)
        );
    }

    pub(crate) fn circle(&mut self, (x, y): (f64, f64), r: f64, fill: &str, tip: &str) {
        let _ = write!(
            self.body,
            r#"<circle cx="{}" cy="{}" r="{}" fill="{fill}"><title>{}</title></circle>"#,
            px(x),
            px(y),
            px(r),
            escape(tip)
        );
    }

    /// A polyline through `points`; `dash` adds a dash pattern.
    pub(crate) fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, dash: bool, tip: &str) {
        let pattern = if dash { Some(DASHED) } else { None };
        self.patterned_polyline(points, stroke, pattern, tip);
    }

    /// A polyline with a dash pattern of its own (`2 3`: dotted), so that
    /// lines of one colour can still be told apart.
    pub(crate) fn patterned_polyline(
        &mut self,
        points: &[(f64, f64)],
        stroke: &str,
        pattern: Option<&str>,
        tip: &str,
    ) {
        if points.is_empty() {
            return;
        }
        let coords: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{},{}", px(x), px(y)))
            .collect();
        let dash = pattern
            .map(|p| format!(r#" stroke-dasharray="{p}""#))
            .unwrap_or_default();
        let _ = write!(
            self.body,
            r#"<polyline class="series" points="{}" stroke="{stroke}"{dash}><title>{}</title></polyline>"#,
            coords.join(" "),
            escape(tip)
        );
    }

    /// A hollow circle: white inside, `stroke` around.
    pub(crate) fn ring(&mut self, (x, y): (f64, f64), r: f64, stroke: &str, tip: &str) {
        let _ = write!(
            self.body,
            r##"<circle cx="{}" cy="{}" r="{}" fill="#fff" stroke="{stroke}" stroke-width="1.5"><title>{}</title></circle>"##,
            px(x),
            px(y),
            px(r),
            escape(tip)
        );
    }

    /// A hollow square centred on (x, y), `half` its half-width.
    pub(crate) fn square(&mut self, (x, y): (f64, f64), half: f64, stroke: &str, tip: &str) {
        let _ = write!(
            self.body,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#fff" stroke="{stroke}" stroke-width="1.5"><title>{}</title></rect>"##,
            px(x - half),
            px(y - half),
            px(2.0 * half),
            px(2.0 * half),
            escape(tip)
        );
    }

    /// A see-through rectangle: a band that lets what lies under it show.
    pub(crate) fn shade(
        &mut self,
        (x, y, w, h): (f64, f64, f64, f64),
        fill: &str,
        opacity: f64,
        tip: &str,
    ) {
        let _ = write!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" fill-opacity="{opacity}"><title>{}</title></rect>"#,
            px(x),
            px(y),
            px(w.max(0.0)),
            px(h.max(0.0)),
            escape(tip)
        );
    }

    /// A whisker from (x, y1) to (x, y2), or horizontal when `horizontal`.
    pub(crate) fn whisker(&mut self, at: f64, from: f64, to: f64, horizontal: bool, stroke: &str) {
        let cap = 4.0;
        let (a, b, c1, c2) = if horizontal {
            (
                (from, at),
                (to, at),
                ((from, at - cap), (from, at + cap)),
                ((to, at - cap), (to, at + cap)),
            )
        } else {
            (
                (at, from),
                (at, to),
                ((at - cap, from), (at + cap, from)),
                ((at - cap, to), (at + cap, to)),
            )
        };
        let mut segment = |p: (f64, f64), q: (f64, f64)| {
            let _ = write!(
                self.body,
                r#"<line class="whisker" stroke="{stroke}" x1="{}" y1="{}" x2="{}" y2="{}"/>"#,
                px(p.0),
                px(p.1),
                px(q.0),
                px(q.1)
            );
        };
        segment(a, b);
        segment(c1.0, c1.1);
        segment(c2.0, c2.1);
    }

    /// The finished element; `label` is its accessible name.
    pub(crate) fn finish(self, label: &str) -> String {
        format!(
            r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{}">{}</svg>"#,
            escape(label),
            self.body,
            w = px(self.width),
            h = px(self.height),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_map_both_ways() {
        let s = Scale::linear(0.0, 10.0, 100.0, 200.0);
        assert_eq!(s.px(5.0), 150.0);
        let l = Scale::log(1.0, 100.0, 0.0, 200.0);
        assert!((l.px(10.0) - 100.0).abs() < 1e-9);
        assert!((l.px(100.0) - 200.0).abs() < 1e-9);
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(nice_step(100.0, 5), 20.0);
        assert_eq!(nice_max(23_400.0, 5), 25_000.0);
        assert_eq!(linear_ticks(0.0, 25_000.0, 5_000.0).len(), 6);
        assert_eq!(
            log_ticks(1.0, 100.0),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        assert_eq!(log_ticks(1.0, 1e6).len(), 7);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(px(1.25), "1.3");
        assert_eq!(px(2.0), "2");
    }
}
