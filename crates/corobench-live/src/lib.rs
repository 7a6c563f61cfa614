//! What a terminal shows while a corobench load or run goes on: a live view
//! drawn with ratatui on stderr's alternate screen.
//!
//! A view is state plus drawing. [`LoadView`] reads the generator's
//! snapshots ([`corobench_load::Progress`]) at the frame rate; [`RunView`]
//! takes the runner's events ([`corobench_engine::RunEvent`]), the same
//! events the plain progress lines are made from. Neither touches the
//! generator's request loop. A [`Painter`] owns the terminal and draws a
//! view four times a second from a thread of its own; dropping it gives
//! the terminal back. The observers that feed these views, and the choice
//! between them and plain lines, are the binary's.

mod latency_bars;
mod load_view;
mod painter;
mod protocol_lines;
mod rates;
mod run_panes;
mod run_view;
mod terminal;
mod trial_line;
mod widgets;

pub use latency_bars::{Bucket, buckets};
pub use load_view::LoadView;
pub use painter::{FRAME_INTERVAL, Painter, View};
pub use rates::SecondRates;
pub use run_view::{Cell, Current, CurrentPhase, RunView, ScenarioRow};
pub use terminal::{Screen, available, restore_for_exit};
pub use trial_line::{trial_line, trial_summary};
