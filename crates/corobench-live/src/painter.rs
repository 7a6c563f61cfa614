//! The thread that draws a view four times a second, whatever the work it
//! shows is doing: a run may spend minutes building or starting a server
//! without an event, and its clock and ETA must still move.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ratatui::Frame;

use crate::terminal::Screen;

/// How often the view is drawn.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(250);

/// What a live view draws. `now` is the time since the view opened.
pub trait View: Send + 'static {
    /// Brings the state up to date just before a frame (a load's view
    /// reads the generator's snapshots here, at the frame rate).
    fn refresh(&mut self, _now: Duration) {}

    /// Draws the state into the frame.
    fn render(&self, frame: &mut Frame<'_>, now: Duration);
}

/// A view on the terminal, drawn by a thread of its own until closed.
#[derive(Debug)]
pub struct Painter<V> {
    view: Arc<Mutex<V>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    opened: Instant,
}

impl<V: View> Painter<V> {
    /// Takes the terminal and starts drawing `view`.
    ///
    /// # Errors
    /// When the terminal cannot be taken (it is then left as it was).
    pub fn start(view: V) -> io::Result<Self> {
        let screen = Screen::open()?;
        let view = Arc::new(Mutex::new(view));
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Instant::now();
        let thread = std::thread::Builder::new()
            .name("corobench-view".to_owned())
            .spawn({
                let (view, stop) = (Arc::clone(&view), Arc::clone(&stop));
                move || paint(screen, &view, &stop, opened)
            })?;
        Ok(Self {
            view,
            stop,
            thread: Some(thread),
            opened,
        })
    }

    /// Changes the view's state; `now` is the time since it opened.
    pub fn update(&self, change: impl FnOnce(&mut V, Duration)) {
        change(&mut lock(&self.view), self.opened.elapsed());
    }

    /// Stops drawing and gives the terminal back (also when dropped).
    pub fn close(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

impl<V> Drop for Painter<V> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

/// Draws until told to stop; a terminal that cannot be written any more
/// (closed, hung up) ends the drawing, not the work. The screen is given
/// back when this returns.
fn paint<V: View>(mut screen: Screen, view: &Mutex<V>, stop: &AtomicBool, opened: Instant) {
    while !stop.load(Ordering::SeqCst) {
        let drawn = {
            let mut view = lock(view);
            let now = opened.elapsed();
            view.refresh(now);
            screen.draw(|frame| view.render(frame, now))
        };
        if drawn.is_err() {
            break;
        }
        std::thread::park_timeout(FRAME_INTERVAL);
    }
}

/// The view, also after a panic elsewhere (a frame of half-updated state
/// is still worth showing).
fn lock<V>(view: &Mutex<V>) -> MutexGuard<'_, V> {
    view.lock().unwrap_or_else(PoisonError::into_inner)
}
