//! `$DATA_DIR/payload.bin`: 10 MiB whose byte at offset `i` is `i mod 251`.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::ContractError;

pub const PAYLOAD_FILE_NAME: &str = "payload.bin";
pub const PAYLOAD_LEN_BYTES: u64 = 10 * 1024 * 1024;
const PATTERN_MODULUS: u64 = 251;

/// The byte the contract puts at `offset`.
pub fn pattern_byte(offset: u64) -> u8 {
    u8::try_from(offset % PATTERN_MODULUS).expect("below 251")
}

pub fn payload_path(data_dir: &Path) -> PathBuf {
    data_dir.join(PAYLOAD_FILE_NAME)
}

/// Bytes `/file?kb=` sends.
pub fn prefix_len_bytes(kb: u32) -> usize {
    usize::try_from(kb).expect("kb fits usize") * 1024
}

/// Reads the first `len_bytes` of the payload with blocking file I/O, for
/// runtimes that move blocking work to a thread pool.
pub fn read_prefix_blocking(path: &Path, len_bytes: usize) -> Result<Vec<u8>, ContractError> {
    let mut bytes = vec![0u8; len_bytes];
    File::open(path)
        .and_then(|mut file| file.read_exact(&mut bytes))
        .map_err(|source| unreadable(path, &source))?;
    Ok(bytes)
}

/// The 500 a target answers when the payload cannot be read.
pub fn unreadable(path: &Path, source: &io::Error) -> ContractError {
    ContractError::Internal {
        message: format!(
            "cannot read {}: {source} (corobench writes it into DATA_DIR)",
            path.display()
        ),
    }
}

/// Writes a payload file of `len_bytes` (tests and manual runs).
pub fn write_payload(path: &Path, len_bytes: u64) -> io::Result<()> {
    let mut file = io::BufWriter::new(File::create(path)?);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut offset = 0u64;
    while offset < len_bytes {
        let take = chunk
            .len()
            .min(usize::try_from(len_bytes - offset).unwrap_or(usize::MAX));
        for (i, byte) in chunk[..take].iter_mut().enumerate() {
            *byte = pattern_byte(offset + i as u64);
        }
        file.write_all(&chunk[..take])?;
        offset += take as u64;
    }
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_wraps_at_251() {
        assert_eq!(pattern_byte(0), 0);
        assert_eq!(pattern_byte(250), 250);
        assert_eq!(pattern_byte(251), 0);
        assert_eq!(pattern_byte(1024), (1024 % 251) as u8);
    }

    #[test]
    fn written_payload_reads_back_with_the_pattern() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = payload_path(dir.path());
        write_payload(&path, 200_000).expect("write payload");
        assert_eq!(std::fs::metadata(&path).expect("stat").len(), 200_000);
        let bytes = read_prefix_blocking(&path, prefix_len_bytes(3)).expect("read");
        assert_eq!(bytes.len(), 3072);
        assert!(
            bytes
                .iter()
                .enumerate()
                .all(|(i, b)| *b == pattern_byte(i as u64))
        );
    }

    #[test]
    fn missing_or_short_file_is_an_internal_error_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = payload_path(dir.path());
        let error = read_prefix_blocking(&path, 10).unwrap_err();
        assert_eq!(error.status(), 500);
        assert!(error.to_string().contains("payload.bin"));
        write_payload(&path, 5).expect("write");
        assert_eq!(read_prefix_blocking(&path, 10).unwrap_err().status(), 500);
    }
}
