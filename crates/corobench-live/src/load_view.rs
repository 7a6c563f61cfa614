//! The live view of `corobench load`: where the run is, requests per
//! second second by second, the latency histogram so far, status classes,
//! errors and connections, and over TLS or HTTP/2 the handshakes and
//! streams so far. Its state changes only through
//! [`LoadView::observe`] (fed from the generator's snapshots at the frame
//! rate), so a fixed sequence of snapshots always draws the same screen.

use std::sync::Arc;
use std::time::Duration;

use corobench_load::{LiveSnapshot, LoadConfig, Progress, ProgressSnapshot, StopAfter};
use corobench_model::{Protocol, Schedule, ScheduleKind};
use corobench_report::units::{latency_us, si3, thousands};
use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Gauge, Paragraph};

use crate::latency_bars;
use crate::painter::View;
use crate::protocol_lines::Spoken;
use crate::rates::SecondRates;
use crate::widgets::{self, ratio};

/// The percentiles under the latency bars.
const PERCENTILES: [(f64, &str); 4] =
    [(50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9")];

/// What the view knows of a load run.
#[derive(Debug)]
pub struct LoadView {
    /// `GET http://127.0.0.1:8080/plaintext`.
    title: String,
    /// `1 thread, 64 connections, closed loop, io_uring backend`, after
    /// the protocol unless cleartext HTTP/1.1 (`h2c, 10 streams per connection · `).
    shape: String,
    spoken: Spoken,
    connections: u32,
    stop: StopAfter,
    warmup: Duration,
    /// Read at each frame when the view follows a live run.
    progress: Option<Arc<Progress>>,
    /// When every thread had left its warm-up, since the view opened.
    window_opened: Option<Duration>,
    rates: SecondRates,
    counters: ProgressSnapshot,
    live: LiveSnapshot,
    stopping: bool,
}

impl LoadView {
    /// A view of the load `config` describes, with nothing observed yet.
    #[must_use]
    pub fn new(config: &LoadConfig) -> Self {
        let schedule = config.schedule;
        let loop_text = match schedule.kind {
            ScheduleKind::Closed => "closed loop".to_owned(),
            ScheduleKind::Open { rate_per_s } => {
                format!("open loop at {} req/s", thousands(rate_per_s))
            }
        };
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let spoken = Spoken::of(config);
        // The protocol is named from the configuration (`corobench load`
        // leaves the schedule's at HTTP/1.1), so not again by the schedule.
        let wire = Schedule {
            protocol: Protocol::HTTP1,
            streams: 1,
            tls_resume: true,
            ..schedule
        }
        .wire_text();
        let protocol = spoken.name().map_or_else(String::new, |name| name + " · ");
        Self {
            title: format!("{} {}", config.request.method, config.endpoint.url),
            shape: format!(
                "{protocol}{} thread{}, {} connection{}, {loop_text}{wire}, {} backend",
                config.threads,
                plural(config.threads),
                schedule.connections,
                plural(schedule.connections),
                config.backend
            ),
            spoken,
            connections: schedule.connections,
            stop: config.stop,
            warmup: config.warmup,
            progress: None,
            window_opened: None,
            rates: SecondRates::default(),
            counters: ProgressSnapshot::default(),
            live: LiveSnapshot::default(),
            stopping: false,
        }
    }

    /// Follows a running load: each frame reads its counters and, made
    /// with [`corobench_load::LoadRun::live_view`], its histogram and statuses.
    #[must_use]
    pub fn following(mut self, progress: Arc<Progress>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// What the generator published, as read `now` (since the view opened).
    pub fn observe(
        &mut self,
        now: Duration,
        counters: ProgressSnapshot,
        live: Option<LiveSnapshot>,
    ) {
        if counters.measuring && self.window_opened.is_none() {
            self.window_opened = Some(now);
        }
        if self.window_opened.is_some() {
            self.rates.observe(now, counters.responses);
        }
        self.counters = counters;
        if let Some(live) = live {
            self.live = live;
        }
    }

    /// Ctrl-C was pressed: the load is ending early.
    pub fn stopping(&mut self) {
        self.stopping = true;
    }

    /// Where the run is, in words, and how far along as a fraction.
    fn phase(&self, now: Duration) -> (String, f64) {
        let Some(opened) = self.window_opened else {
            let ratio = ratio(now.as_secs_f64(), self.warmup.as_secs_f64());
            let text = if self.stopping {
                "stopping (Ctrl-C) before the measured window opened".to_owned()
            } else {
                format!(
                    "warming up, not recorded: {:.1} s of {:.1} s",
                    now.as_secs_f64(),
                    self.warmup.as_secs_f64()
                )
            };
            return (text, ratio);
        };
        let (text, ratio) = match self.stop {
            StopAfter::Duration(window) => {
                let measured = now.saturating_sub(opened);
                if measured >= window {
                    (
                        "the window has closed: collecting the answers still owed".to_owned(),
                        1.0,
                    )
                } else {
                    let text = format!(
                        "measuring: {:.1} s of {:.1} s",
                        measured.as_secs_f64(),
                        window.as_secs_f64()
                    );
                    (text, ratio(measured.as_secs_f64(), window.as_secs_f64()))
                }
            }
            StopAfter::Requests(n) => {
                let done = self.counters.responses + self.live.errors.transport();
                let text = format!(
                    "measuring: {} of {} requests",
                    thousands(done as f64),
                    thousands(n as f64)
                );
                (text, ratio(done as f64, n as f64))
            }
        };
        if self.stopping {
            return (
                format!("stopping (Ctrl-C); the report keeps what was measured ({text})"),
                ratio,
            );
        }
        (text, ratio)
    }
}

impl View for LoadView {
    fn refresh(&mut self, now: Duration) {
        if let Some(progress) = &self.progress {
            let (counters, live) = (progress.snapshot(), progress.live());
            self.observe(now, counters, live);
        }
    }

    fn render(&self, frame: &mut Frame<'_>, now: Duration) {
        let [top, middle, bottom, footer] = Layout::vertical([
            Constraint::Length(4 + self.spoken.line_count()),
            Constraint::Min(8),
            Constraint::Length(7),
            Constraint::Length(1),
        ])
        .areas(frame.area());
        self.render_top(frame, top, now);
        let [left, right] = Layout::horizontal([Constraint::Percentage(50); 2]).areas(middle);
        self.render_rates(frame, left);
        self.render_latency(frame, right);
        let [left, right] = Layout::horizontal([Constraint::Percentage(50); 2]).areas(bottom);
        self.render_responses(frame, left);
        self.render_errors(frame, right);
        let hint = if self.stopping {
            "stopping: a second Ctrl-C ends corobench at once, without a report"
        } else {
            "Ctrl-C ends the load early; the report keeps what was measured"
        };
        frame.render_widget(
            Paragraph::new(hint).style(Style::new().fg(Color::DarkGray)),
            footer,
        );
    }
}

impl LoadView {
    fn render_top(&self, frame: &mut Frame<'_>, area: Rect, now: Duration) {
        let block = Block::bordered().title(format!(" corobench load · {} ", self.title));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let [shape, gauge, protocol] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(0),
        ])
        .areas(inner);
        frame.render_widget(Paragraph::new(self.shape.as_str()), shape);
        let (text, ratio) = self.phase(now);
        let gauge_widget = Gauge::default()
            .ratio(ratio)
            .label(text)
            .gauge_style(Style::new().fg(Color::Green).bg(Color::Black));
        frame.render_widget(gauge_widget, gauge);
        let lines: Vec<Line<'_>> = self
            .spoken
            .lines(&self.live)
            .into_iter()
            .map(Line::from)
            .collect();
        frame.render_widget(Paragraph::new(lines), protocol);
    }

    fn render_rates(&self, frame: &mut Frame<'_>, area: Rect) {
        let now = self
            .rates
            .current()
            .map_or_else(String::new, |r| format!(" · now {}", si3(r)));
        let block = Block::bordered().title(format!(" req/s, second by second{now} "));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let seconds = self.rates.seconds();
        if seconds.is_empty() {
            frame.render_widget(
                Paragraph::new("the first whole second of the window is on its way"),
                inner,
            );
            return;
        }
        frame.render_widget(widgets::second_bars(seconds, inner.width), inner);
    }

    fn render_latency(&self, frame: &mut Frame<'_>, area: Rect) {
        let block = Block::bordered().title(" latency so far ");
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let latency = &self.live.latency;
        if latency.count() == 0 {
            frame.render_widget(Paragraph::new("no response in the window yet"), inner);
            return;
        }
        let [bars_area, line] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
        let total = latency.count().max(1) as f64;
        let bars: Vec<Bar<'_>> = latency_bars::buckets(latency, usize::from(bars_area.height))
            .into_iter()
            .map(|bucket| {
                Bar::default()
                    .value(bucket.count)
                    .label(Line::from(format!(
                        "≤ {}",
                        latency_us(bucket.upto_us as f64)
                    )))
                    .text_value(format!("{:.0}%", bucket.count as f64 * 100.0 / total))
            })
            .collect();
        let chart = BarChart::default()
            .direction(Direction::Horizontal)
            .data(BarGroup::default().bars(&bars))
            .bar_width(1)
            .bar_gap(0)
            .bar_style(Style::new().fg(Color::Magenta))
            .value_style(Style::new().fg(Color::Black).bg(Color::Magenta));
        frame.render_widget(chart, bars_area);
        let mut text: Vec<String> = PERCENTILES
            .iter()
            .map(|&(p, label)| {
                format!(
                    "{label} {}",
                    latency_us(latency.value_at_percentile_us(p) as f64)
                )
            })
            .collect();
        text.push(format!("max {}", latency_us(latency.inner().max() as f64)));
        frame.render_widget(Paragraph::new(text.join("  ")), line);
    }

    /// The responses and their classes from one snapshot, so that they
    /// add up (the counters of the req/s chart run up to 250 ms ahead).
    fn render_responses(&self, frame: &mut Frame<'_>, area: Rect) {
        let classes = self.live.status.by_class();
        let mut lines: Vec<Line<'_>> = vec![Line::from(format!(
            "{} responses in the window",
            thousands(self.live.responses as f64)
        ))];
        lines.extend(
            classes
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(class, n)| Line::from(format!("  {class}  {}", thousands(*n as f64)))),
        );
        lines.push(Line::from(format!(
            "connections: {} open of {}",
            self.live.open_connections, self.connections
        )));
        let block = Block::bordered().title(" responses ");
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }

    fn render_errors(&self, frame: &mut Frame<'_>, area: Rect) {
        let errors = &self.live.errors;
        let kinds: Vec<Line<'_>> = errors
            .by_kind()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(kind, n)| Line::from(format!("  {kind}  {}", thousands(*n as f64))))
            .collect();
        let (title, style, lines) = if kinds.is_empty() {
            (" errors ", Style::new(), vec![Line::from("none")])
        } else {
            let requests = self.live.responses + errors.transport();
            let head = Line::from(format!(
                "{} of {} requests",
                thousands(errors.total() as f64),
                thousands(requests as f64)
            ));
            (
                " errors ",
                Style::new().fg(Color::Red),
                std::iter::once(head).chain(kinds).collect(),
            )
        };
        let block = Block::bordered().title(title).border_style(style);
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}
