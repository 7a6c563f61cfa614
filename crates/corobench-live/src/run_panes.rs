//! How a [`RunView`] is drawn: progress and time left on top, the current
//! trial beside the machine probe, the strip of every scenario's trials,
//! and the notices and warnings at the bottom.

use std::time::Duration;

use corobench_report::units::{si3, thousands};
use corobench_stats::median;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Gauge, Paragraph};

use crate::painter::View;
use crate::run_view::{Cell, Current, CurrentPhase, RunView, ScenarioRow};
use crate::widgets::{clock, ratio, second_bars};

/// Eighths of a block, for a trial's figure against its scenario's best.
const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Lines of notices and warnings shown at most.
const WARNING_LINES: u16 = 6;

impl View for RunView {
    fn render(&self, frame: &mut Frame<'_>, now: Duration) {
        let warnings = u16::try_from(self.warnings.len())
            .unwrap_or(u16::MAX)
            .clamp(1, WARNING_LINES);
        let [top, middle, strip, bottom, footer] = Layout::vertical([
            Constraint::Length(3),
            Constraint::Length(6),
            Constraint::Min(3),
            Constraint::Length(warnings + 2),
            Constraint::Length(1),
        ])
        .areas(frame.area());
        self.render_progress(frame, top, now);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(64), Constraint::Percentage(36)])
                .areas(middle);
        self.render_current(frame, left, now);
        self.render_probe(frame, right);
        self.render_strip(frame, strip);
        self.render_warnings(frame, bottom);
        let hint =
            "Ctrl-C stops the run; its stored trials are kept (corobench run --resume finishes it)";
        frame.render_widget(
            Paragraph::new(hint).style(Style::new().fg(Color::DarkGray)),
            footer,
        );
    }
}

impl RunView {
    fn render_progress(&self, frame: &mut Frame<'_>, area: Rect, now: Duration) {
        let block = Block::bordered().title(" corobench run ");
        let total = self.total.max(self.done);
        let left = match self.time_left(now) {
            Some((left, true)) => format!(" · left ~{} (planned)", clock(left)),
            Some((left, false)) => format!(" · left ~{}", clock(left)),
            None => String::new(),
        };
        let label = format!(
            "{}/{} trials · elapsed {}{left}",
            self.done,
            total,
            clock(now)
        );
        let gauge = Gauge::default()
            .block(block)
            .ratio(ratio(self.done as f64, total as f64))
            .label(label)
            .gauge_style(Style::new().fg(Color::Green).bg(Color::Black));
        frame.render_widget(gauge, area);
    }

    fn render_current(&self, frame: &mut Frame<'_>, area: Rect, now: Duration) {
        let Some(current) = &self.current else {
            let text = match (&self.preparing, self.finished) {
                (_, true) => "done".to_owned(),
                (Some(step), false) => step.clone(),
                (None, false) => "between trials".to_owned(),
            };
            let block = Block::bordered().title(" now ");
            frame.render_widget(Paragraph::new(text).block(block), area);
            return;
        };
        let block = Block::bordered().title(format!(
            " now: {} · trial {} ",
            current.key,
            current.trial + 1
        ));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let [line, chart] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
        frame.render_widget(Paragraph::new(phase_text(current, now)), line);
        if current.phase == CurrentPhase::Measuring && !current.rates.seconds().is_empty() {
            frame.render_widget(second_bars(current.rates.seconds(), chart.width), chart);
        }
    }

    fn render_probe(&self, frame: &mut Frame<'_>, area: Rect) {
        let block = Block::bordered().title(" machine probe (MB/s) ");
        let lines: Vec<Line<'_>> = match self.probes.last() {
            None if self.done > 0 => vec![Line::from("not run in this run's trials")],
            None => vec![Line::from("before each trial; none yet")],
            Some(last) => {
                let server: Vec<f64> = self.probes.iter().map(|p| p.server_mb_per_s).collect();
                let generator: Vec<f64> =
                    self.probes.iter().map(|p| p.generator_mb_per_s).collect();
                vec![
                    Line::from(format!(
                        "server    {:>6}  {}",
                        si3(last.server_mb_per_s),
                        spread(&server)
                    )),
                    Line::from(format!(
                        "generator {:>6}  {}",
                        si3(last.generator_mb_per_s),
                        spread(&generator)
                    )),
                    Line::from(format!("latest of {} probes", self.probes.len())),
                ]
            }
        };
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }

    fn render_strip(&self, frame: &mut Frame<'_>, area: Rect) {
        let block = Block::bordered()
            .title(" trials so far: req/s of each, ▁…█ up to the scenario's best ");
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let height = usize::from(inner.height);
        let running = self
            .rows
            .iter()
            .position(|r| r.cells.contains(&Cell::Running))
            .unwrap_or(0);
        let first = running
            .saturating_sub(height / 2)
            .min(self.rows.len().saturating_sub(height));
        let key_width = self
            .rows
            .iter()
            .map(|r| r.key.chars().count())
            .max()
            .unwrap_or(0)
            .min(usize::from(inner.width) / 2);
        let lines: Vec<Line<'_>> = self.rows[first..]
            .iter()
            .take(height)
            .map(|row| strip_line(row, key_width))
            .collect();
        frame.render_widget(Paragraph::new(lines), inner);
    }

    fn render_warnings(&self, frame: &mut Frame<'_>, area: Rect) {
        let block =
            Block::bordered().title(format!(" notices and warnings ({}) ", self.warnings.len()));
        let shown = usize::from(area.height.saturating_sub(2));
        let lines: Vec<Line<'_>> = if self.warnings.is_empty() {
            vec![Line::from("none")]
        } else {
            self.warnings[self.warnings.len().saturating_sub(shown)..]
                .iter()
                .map(|w| Line::from(w.as_str()))
                .collect()
        };
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}

/// The current trial's phase and, while measuring, its live figures.
fn phase_text(current: &Current, now: Duration) -> String {
    let spent = now.saturating_sub(current.phase_started).as_secs_f64();
    match current.phase {
        CurrentPhase::Starting => format!("probe, start the server, check it: {spent:.1} s"),
        CurrentPhase::WarmingUp => format!("warming up, not recorded: {spent:.1} s"),
        CurrentPhase::RunningProgram => format!("running the program: {spent:.1} s"),
        CurrentPhase::Stopping => format!("idle, leak check, stop: {spent:.1} s"),
        CurrentPhase::Measuring => {
            let rate = current
                .rates
                .current()
                .map_or_else(|| "…".to_owned(), |r| thousands(r.round()));
            format!(
                "measuring: {spent:.1} s of {:.1} s · {rate} req/s · {} errors",
                current.window.as_secs_f64(),
                thousands(current.errors as f64)
            )
        }
    }
}

/// `go-nethttp/plaintext/c=64   ▇█▇··· 48.1k  3/6`.
fn strip_line(row: &ScenarioRow, key_width: usize) -> Line<'static> {
    let best = row
        .cells
        .iter()
        .filter_map(|c| {
            if let Cell::Done(Some(v)) = c {
                Some(*v)
            } else {
                None
            }
        })
        .fold(0.0_f64, f64::max);
    let done: Vec<f64> = row
        .cells
        .iter()
        .filter_map(|c| if let Cell::Done(v) = c { *v } else { None })
        .collect();
    let measured = row
        .cells
        .iter()
        .filter(|c| matches!(c, Cell::Done(_) | Cell::Failed | Cell::Stored))
        .count();
    let cells: String = row.cells.iter().map(|c| glyph(*c, best)).collect();
    let median = median(&done).map_or_else(|_| String::new(), si3);
    let key: String = row.key.chars().take(key_width).collect();
    Line::from(format!(
        "{key:<key_width$}  {cells}  {median:>6}  {measured}/{}",
        row.cells.len()
    ))
}

fn glyph(cell: Cell, best: f64) -> char {
    match cell {
        Cell::Pending => '·',
        Cell::Stored => '○',
        Cell::Running => '▸',
        Cell::Failed => '✗',
        Cell::Done(None) => '●',
        Cell::Done(Some(v)) => {
            let level = (v / best.max(f64::MIN_POSITIVE) * 8.0)
                .ceil()
                .clamp(1.0, 8.0);
            LEVELS[level as usize - 1]
        }
    }
}

/// `±2.1% of the median`, the widest a probe strayed; empty for one probe.
fn spread(values: &[f64]) -> String {
    let Some(middle) = median(values).ok().filter(|m| *m > 0.0 && values.len() > 1) else {
        return String::new();
    };
    let widest = values
        .iter()
        .map(|v| (v - middle).abs())
        .fold(0.0, f64::max);
    format!("±{:.1}% of median", widest / middle * 100.0)
}
