//! `payload.bin`, the file `/file` serves (docs/contract.md).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::TargetError;

/// The payload's name inside `DATA_DIR`.
pub const PAYLOAD_FILE: &str = "payload.bin";
/// 10 MiB.
pub const PAYLOAD_BYTES: u64 = 10 * 1024 * 1024;
/// Byte `i` of the payload is `i mod PAYLOAD_MODULUS`.
pub const PAYLOAD_MODULUS: u64 = 251;

/// The byte at `offset` of the payload.
#[must_use]
pub fn payload_byte(offset: u64) -> u8 {
    (offset % PAYLOAD_MODULUS) as u8
}

/// Makes sure `<data_dir>/payload.bin` exists with the contract's size,
/// (re)writing it atomically (temporary file, then rename) when it does not.
///
/// # Errors
/// The directory or the file cannot be written.
pub fn ensure_payload(data_dir: &Path) -> Result<PathBuf, TargetError> {
    std::fs::create_dir_all(data_dir).map_err(|e| TargetError::io("create", data_dir, e))?;
    let path = data_dir.join(PAYLOAD_FILE);
    if path
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() == PAYLOAD_BYTES)
    {
        return Ok(path);
    }
    let temporary = data_dir.join(format!(".{PAYLOAD_FILE}.{}", std::process::id()));
    write_payload(&temporary).map_err(|e| TargetError::io("write", &temporary, e))?;
    std::fs::rename(&temporary, &path)
        .map_err(|e| TargetError::io("rename into place", &path, e))?;
    Ok(path)
}

fn write_payload(path: &Path) -> std::io::Result<()> {
    // One period of the pattern repeated: 251 does not divide the chunk size,
    // so each chunk starts where the previous one left off.
    let chunk: Vec<u8> = (0..64 * 1024).map(payload_byte).collect();
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut written = 0u64;
    while written < PAYLOAD_BYTES {
        let start = (written % PAYLOAD_MODULUS) as usize;
        let len = (PAYLOAD_BYTES - written).min(chunk.len() as u64 - PAYLOAD_MODULUS) as usize;
        file.write_all(&chunk[start..start + len])?;
        written += len as u64;
    }
    file.into_inner()
        .map_err(std::io::IntoInnerError::into_error)?
        .sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_contract_payload_and_repairs_a_wrong_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = ensure_payload(dir.path()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, PAYLOAD_BYTES);
        assert!(bytes.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
        assert_eq!(bytes[250], 250);
        assert_eq!(bytes[251], 0);

        std::fs::write(&path, b"short").unwrap();
        ensure_payload(dir.path()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "only payload.bin remains");
    }
}
