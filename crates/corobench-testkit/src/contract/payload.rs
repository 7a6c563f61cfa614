//! `payload.bin`, the file `/file` serves: 10 MiB whose byte at offset `i`
//! is `i mod 251`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Bytes in `payload.bin`.
pub const PAYLOAD_BYTES: usize = 10 * 1024 * 1024;

/// The byte `payload.bin` holds at `offset`.
#[must_use]
pub fn payload_byte(offset: usize) -> u8 {
    u8::try_from(offset % 251).unwrap_or(0)
}

/// Writes `payload.bin` into `dir` and returns its path.
///
/// # Errors
/// The file could not be written.
pub fn write_payload(dir: &Path) -> io::Result<PathBuf> {
    let path = dir.join("payload.bin");
    let bytes: Vec<u8> = (0..PAYLOAD_BYTES).map(payload_byte).collect();
    fs::write(&path, bytes)?;
    Ok(path)
}
