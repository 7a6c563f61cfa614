//! A child's output pipes, read without blocking, so that one thread can
//! watch a child's exit, a deadline and its output at once. Each stream is
//! kept up to a cap; what comes after is read and dropped, so a chatty child
//! neither blocks on a full pipe nor fills corobench's memory.

use std::os::fd::AsRawFd;
use std::process::{ChildStderr, ChildStdout};
use std::time::{Duration, Instant};

/// The bytes of one stream, up to a cap.
#[derive(Debug)]
pub(crate) struct Kept {
    pub bytes: Vec<u8>,
    cap: usize,
    /// More arrived than the cap allowed; it was dropped.
    pub truncated: bool,
}

impl Kept {
    fn new(cap: usize) -> Self {
        Self {
            bytes: Vec::new(),
            cap,
            truncated: false,
        }
    }

    fn push(&mut self, data: &[u8]) {
        let room = self.cap.saturating_sub(self.bytes.len());
        if data.len() > room {
            self.truncated = true;
        }
        self.bytes.extend_from_slice(&data[..data.len().min(room)]);
    }

    /// The bytes as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// A child's stdout and stderr, either of which may be absent (not piped).
#[derive(Debug)]
pub(crate) struct Pipes {
    out: Option<ChildStdout>,
    err: Option<ChildStderr>,
    pub stdout: Kept,
    pub stderr: Kept,
}

impl Pipes {
    /// Keeps at most `cap` bytes of each stream.
    pub fn new(out: Option<ChildStdout>, err: Option<ChildStderr>, cap: usize) -> Self {
        Self {
            out,
            err,
            stdout: Kept::new(cap),
            stderr: Kept::new(cap),
        }
    }

    /// True until every pipe has reached its end.
    pub fn is_open(&self) -> bool {
        self.out.is_some() || self.err.is_some()
    }

    /// Waits up to `wait` for output and reads whatever arrived; with every
    /// pipe closed this only sleeps, so it can pace a polling loop.
    pub fn read_for(&mut self, wait: Duration) {
        if !self.is_open() {
            std::thread::sleep(wait);
            return;
        }
        let mut fds: Vec<libc::pollfd> = [
            self.out.as_ref().map(AsRawFd::as_raw_fd),
            self.err.as_ref().map(AsRawFd::as_raw_fd),
        ]
        .into_iter()
        .flatten()
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
        let wait_ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: `fds` is a valid array of pollfd of the length passed.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if ready <= 0 {
            return;
        }
        if self.out.is_some() {
            read_some(&mut self.out, &mut self.stdout, &fds);
        }
        if self.err.is_some() {
            read_some(&mut self.err, &mut self.stderr, &fds);
        }
    }

    /// Reads until every pipe has closed or `until` has passed: a process
    /// that escaped its group may hold a pipe open forever.
    pub fn drain(&mut self, until: Instant) {
        while self.is_open() && Instant::now() < until {
            self.read_for(Duration::from_millis(20));
        }
    }
}

/// Reads once from a pipe that poll reported readable; closes it at EOF.
fn read_some<R: std::io::Read + AsRawFd>(
    pipe: &mut Option<R>,
    into: &mut Kept,
    fds: &[libc::pollfd],
) {
    let Some(reader) = pipe.as_mut() else { return };
    let fd = reader.as_raw_fd();
    let readable = fds
        .iter()
        .any(|p| p.fd == fd && p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0);
    if !readable {
        return;
    }
    let mut buffer = [0u8; 64 * 1024];
    match reader.read(&mut buffer) {
        Ok(0) | Err(_) => *pipe = None,
        Ok(n) => into.push(&buffer[..n]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_the_cap_and_says_what_it_dropped() {
        let mut kept = Kept::new(5);
        kept.push(b"abc");
        assert!(!kept.truncated);
        kept.push(b"defg");
        assert_eq!(kept.text(), "abcde");
        assert!(kept.truncated);
        kept.push(b"h");
        assert_eq!(kept.bytes, b"abcde");
    }
}
