//! The terminal the view borrows, and how it is given back. The view draws
//! on stderr's alternate screen with the cursor hidden; typed keys are not
//! echoed over it, but Ctrl-C still raises SIGINT (the terminal is not put
//! in raw mode), so interrupting behaves as it does without the view.
//! Dropping the [`Screen`] gives the terminal back as it was; a process
//! that must end at once (a second Ctrl-C) calls [`restore_for_exit`] from
//! its signal handler first.

use std::io::{self, IsTerminal as _, Stderr, Write as _};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::{cursor, execute, terminal};

/// Leaves the alternate screen and shows the cursor again: what
/// `LeaveAlternateScreen` and `Show` write, kept as bytes for the signal handler.
const GIVE_BACK: &[u8] = b"\x1b[?1049l\x1b[?25h";

/// Whether a [`Screen`] holds the terminal now.
static HELD: AtomicBool = AtomicBool::new(false);

/// The input terminal's settings before the first view changed them.
static FIRST_SETTINGS: OnceLock<libc::termios> = OnceLock::new();

/// Whether a live view can be shown: stdout and stderr are both terminals,
/// and the terminal is not a dumb one.
#[must_use]
pub fn available() -> bool {
    io::stdout().is_terminal()
        && io::stderr().is_terminal()
        && std::env::var("TERM").as_deref() != Ok("dumb")
}

/// The terminal while the view holds it.
pub struct Screen {
    terminal: Terminal<CrosstermBackend<Stderr>>,
    /// stdin's settings to put back, when stdin is a terminal.
    input: Option<libc::termios>,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen").finish_non_exhaustive()
    }
}

impl Screen {
    /// Takes the terminal: the alternate screen, no cursor, no echo.
    ///
    /// # Errors
    /// When the terminal refuses any of it; what was changed is put back.
    pub fn open() -> io::Result<Self> {
        let terminal = Terminal::new(CrosstermBackend::new(io::stderr()))?;
        HELD.store(true, Ordering::SeqCst);
        let mut screen = Self {
            terminal,
            input: quiet_input(),
        };
        execute!(
            screen.terminal.backend_mut(),
            terminal::EnterAlternateScreen,
            cursor::Hide
        )?;
        screen.terminal.clear()?;
        Ok(screen)
    }

    /// Draws one frame (only the cells that changed reach the terminal).
    ///
    /// # Errors
    /// When the terminal cannot be written.
    pub fn draw(&mut self, render: impl FnOnce(&mut ratatui::Frame<'_>)) -> io::Result<()> {
        self.terminal.draw(render).map(|_| ())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        if HELD.swap(false, Ordering::SeqCst) {
            let mut err = io::stderr();
            let _ = err.write_all(GIVE_BACK);
            let _ = err.flush();
        }
        if let Some(settings) = self.input {
            set_input(&settings);
        }
    }
}

/// Gives the terminal back from a signal handler, just before the process
/// exits: writes the bytes that leave the alternate screen and show the
/// cursor, and puts the input settings back. Does nothing when no view
/// holds the terminal.
///
/// Async-signal-safe: atomics, `write(2)` and `tcsetattr(3)` only.
pub fn restore_for_exit() {
    if !HELD.swap(false, Ordering::SeqCst) {
        return;
    }
    // SAFETY: GIVE_BACK is a valid buffer of GIVE_BACK.len() bytes; a short
    // or failed write leaves nothing unsafe behind.
    let _ = unsafe {
        libc::write(
            libc::STDERR_FILENO,
            GIVE_BACK.as_ptr().cast(),
            GIVE_BACK.len(),
        )
    };
    if let Some(settings) = FIRST_SETTINGS.get() {
        set_input(settings);
    }
}

/// Turns off echo and line editing on stdin's terminal, keeping signals;
/// returns the settings to put back, or `None` when stdin is no terminal.
fn quiet_input() -> Option<libc::termios> {
    // SAFETY: termios is plain data; tcgetattr fills it or fails.
    let mut settings: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a termios, on the process's own stdin.
    if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &raw mut settings) } != 0 {
        return None;
    }
    let _ = FIRST_SETTINGS.set(settings);
    let mut quiet = settings;
    quiet.c_lflag &= !(libc::ECHO | libc::ICANON);
    set_input(&quiet);
    Some(settings)
}

fn set_input(settings: &libc::termios) {
    // SAFETY: a valid termios, on the process's own stdin; failure changes nothing.
    unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, settings) };
}
