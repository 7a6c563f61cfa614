//! The knob server in a process of its own, for tests whose client side
//! needs most of this process's file descriptors (ten thousand connections
//! need twenty thousand descriptors when both ends live in one process).

use std::io::{self, BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::binary::binary_path;
use crate::knobs::{H2Knobs, Knobs, SlowAccept, SlowRead, Stall};

/// A knob server running as `corobench-testkit knobs …`; dropping it kills
/// and reaps the process.
#[derive(Debug)]
pub struct TestProcess {
    child: Child,
    addr: SocketAddr,
}

impl TestProcess {
    /// Starts the binary (see [`binary_path`]) with `knobs` on a free port
    /// and waits until it listens.
    ///
    /// # Errors
    /// The process could not start or did not say where it listens.
    pub fn start(knobs: &Knobs) -> io::Result<Self> {
        let mut child = Command::new(binary_path())
            .arg("knobs")
            .args(knob_args(knobs))
            .env("PORT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|addr| addr.parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other(format!(
                "corobench-testkit knobs printed {line:?} instead of `listening on ADDR`"
            )));
        };
        Ok(Self { child, addr })
    }

    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The process id, e.g. to read its `/proc` entries.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for TestProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `corobench-testkit knobs` flags that reproduce `knobs`.
#[must_use]
pub fn knob_args(knobs: &Knobs) -> Vec<String> {
    let mut args = Vec::new();
    let mut flag = |name: &str, value: String| {
        args.push(format!("--{name}"));
        args.push(value);
    };
    if !knobs.response_delay.is_zero() {
        flag("delay-us", knobs.response_delay.as_micros().to_string());
    }
    if let Some(stall) = knobs.stall {
        flag("stall-after-us", stall.after.as_micros().to_string());
        flag("stall-us", stall.length.as_micros().to_string());
    }
    if let Some(k) = knobs.close_after_requests {
        flag("close-after", k.to_string());
    }
    if knobs.status != 200 {
        flag("status", knobs.status.to_string());
    }
    if let Some(slow) = knobs.slow_read {
        flag("slow-read-bytes", slow.bytes_per_read.to_string());
        flag("slow-read-pause-us", slow.pause.as_micros().to_string());
        if let Some(bytes) = slow.receive_buffer_bytes {
            flag("receive-buffer-bytes", bytes.to_string());
        }
    }
    if let Some(bytes) = knobs.body_bytes {
        flag("body-bytes", bytes.to_string());
    }
    if let Some(slow) = knobs.slow_accept {
        flag("slow-accept-connections", slow.connections.to_string());
        flag("slow-accept-pause-us", slow.pause.as_micros().to_string());
    }
    let switches = [
        (knobs.close_on_accept, "--close-on-accept"),
        (knobs.chunked, "--chunked"),
        (knobs.garbage, "--garbage"),
        (knobs.truncate, "--truncate"),
    ];
    args.extend(
        switches
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| (*name).to_owned()),
    );
    // A well-behaved h2c server only: the hostile HTTP/2 knobs are for the
    // in-process tests, which read what the server did.
    if knobs.http2 == Some(H2Knobs::default()) {
        args.push("--h2c".to_owned());
    }
    args
}

/// A knob flag [`parse_knob_args`] refuses, named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnobError {
    #[error("unknown flag {0:?}")]
    Unknown(String),
    #[error("{0} needs a value")]
    NoValue(String),
    #[error("{flag} {value:?}: expected a non-negative integer")]
    NotANumber { flag: String, value: String },
    #[error("{flag} {number}: too large")]
    TooLarge { flag: String, number: u64 },
    #[error("--status {0}: expected 100..=999")]
    Status(u64),
}

/// Parses what [`knob_args`] writes.
///
/// # Errors
/// An unknown flag, a missing value or a value that is not a number.
pub fn parse_knob_args(args: impl IntoIterator<Item = String>) -> Result<Knobs, KnobError> {
    let mut knobs = Knobs::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if apply_switch(&mut knobs, &arg) {
            continue;
        }
        let Some(value) = args.next() else {
            return Err(KnobError::NoValue(arg));
        };
        let Ok(number) = value.parse::<u64>() else {
            return Err(KnobError::NotANumber { flag: arg, value });
        };
        if !apply_slow_accept(&mut knobs, &arg, number)? {
            apply_valued(&mut knobs, &arg, number)?;
        }
    }
    Ok(knobs)
}

fn apply_switch(knobs: &mut Knobs, arg: &str) -> bool {
    if arg == "--h2c" {
        knobs.http2 = Some(H2Knobs::default());
        return true;
    }
    let switch = match arg {
        "--close-on-accept" => &mut knobs.close_on_accept,
        "--chunked" => &mut knobs.chunked,
        "--garbage" => &mut knobs.garbage,
        "--truncate" => &mut knobs.truncate,
        _ => return false,
    };
    *switch = true;
    true
}

/// The slow-accept flags; returns whether `arg` was one.
fn apply_slow_accept(knobs: &mut Knobs, arg: &str, number: u64) -> Result<bool, KnobError> {
    let slow = knobs.slow_accept.unwrap_or(SlowAccept {
        connections: 0,
        pause: Duration::ZERO,
    });
    knobs.slow_accept = Some(match arg {
        "--slow-accept-connections" => SlowAccept {
            connections: u32::try_from(number).map_err(|_| too_large(arg, number))?,
            ..slow
        },
        "--slow-accept-pause-us" => SlowAccept {
            pause: Duration::from_micros(number),
            ..slow
        },
        _ => return Ok(false),
    });
    Ok(true)
}

fn too_large(flag: &str, number: u64) -> KnobError {
    KnobError::TooLarge {
        flag: flag.to_owned(),
        number,
    }
}

fn apply_valued(knobs: &mut Knobs, arg: &str, number: u64) -> Result<(), KnobError> {
    let micros = Duration::from_micros(number);
    let size = usize::try_from(number).map_err(|_| too_large(arg, number))?;
    let slow = || {
        knobs.slow_read.unwrap_or(SlowRead {
            bytes_per_read: 1,
            pause: Duration::ZERO,
            receive_buffer_bytes: None,
        })
    };
    let stall = knobs.stall.unwrap_or(Stall {
        after: Duration::ZERO,
        length: Duration::ZERO,
    });
    match arg {
        "--delay-us" => knobs.response_delay = micros,
        "--stall-after-us" => {
            knobs.stall = Some(Stall {
                after: micros,
                ..stall
            })
        }
        "--stall-us" => {
            knobs.stall = Some(Stall {
                length: micros,
                ..stall
            })
        }
        "--close-after" => knobs.close_after_requests = Some(number),
        "--status" => {
            knobs.status = u16::try_from(number)
                .ok()
                .filter(|s| (100..=999).contains(s))
                .ok_or(KnobError::Status(number))?;
        }
        "--slow-read-bytes" => {
            knobs.slow_read = Some(SlowRead {
                bytes_per_read: size,
                ..slow()
            })
        }
        "--slow-read-pause-us" => {
            knobs.slow_read = Some(SlowRead {
                pause: micros,
                ..slow()
            })
        }
        "--receive-buffer-bytes" => {
            knobs.slow_read = Some(SlowRead {
                receive_buffer_bytes: Some(size),
                ..slow()
            });
        }
        "--body-bytes" => knobs.body_bytes = Some(size),
        other => return Err(KnobError::Unknown(other.to_owned())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_survives_the_round_trip_through_flags() {
        let knobs = Knobs {
            response_delay: Duration::from_millis(50),
            stall: Some(Stall {
                after: Duration::from_secs(1),
                length: Duration::from_millis(300),
            }),
            close_after_requests: Some(3),
            close_on_accept: true,
            chunked: true,
            garbage: true,
            truncate: true,
            status: 503,
            slow_read: Some(SlowRead {
                bytes_per_read: 7,
                pause: Duration::from_millis(2),
                receive_buffer_bytes: Some(4096),
            }),
            slow_accept: Some(SlowAccept {
                connections: 20,
                pause: Duration::from_millis(20),
            }),
            body_bytes: Some(1 << 20),
            // TLS knobs stay in-process: the client needs the CA the server made.
            tls: None,
            // So do the hostile HTTP/2 knobs; `--h2c` is a well-behaved server.
            http2: Some(H2Knobs::default()),
        };
        assert_eq!(parse_knob_args(knob_args(&knobs)), Ok(knobs));
        assert_eq!(parse_knob_args(Vec::new()), Ok(Knobs::default()));
    }

    #[test]
    fn bad_flags_are_named() {
        let parse = |args: &[&str]| {
            parse_knob_args(args.iter().map(|a| (*a).to_owned()))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(parse(&["--wat", "1"]), "unknown flag \"--wat\"");
        assert_eq!(parse(&["--status"]), "--status needs a value");
        assert_eq!(
            parse(&["--delay-us", "soon"]),
            "--delay-us \"soon\": expected a non-negative integer"
        );
        assert_eq!(
            parse(&["--status", "42"]),
            "--status 42: expected 100..=999"
        );
    }
}
