//! CA certificates handed over on a stream rather than in a file (how a
//! run on hosts gives a generator host its authority): read whole, kept in
//! a private temporary file for as long as the load needs it.

use std::io::{Read, Write as _};

/// The most read: certificates, not a stream.
pub const CA_INPUT_LIMIT: u64 = 1 << 20;

/// Why CA certificates could not be taken from a stream.
#[derive(Debug, thiserror::Error)]
pub enum CaInputError {
    #[error("it could not be read: {0}")]
    Read(std::io::Error),
    #[error("it held nothing")]
    Empty,
    #[error("it held more than 1 MiB")]
    TooLong,
    #[error("the temporary file for them could not be written: {0}")]
    Write(std::io::Error),
}

/// The PEM text of `input`, read to its end, in a private temporary file
/// (mode 0600, removed when dropped).
///
/// # Errors
/// The stream cannot be read, is empty or longer than [`CA_INPUT_LIMIT`],
/// or the file cannot be written.
pub fn ca_file_from(input: impl Read) -> Result<tempfile::NamedTempFile, CaInputError> {
    let mut pem = Vec::new();
    input
        .take(CA_INPUT_LIMIT + 1)
        .read_to_end(&mut pem)
        .map_err(CaInputError::Read)?;
    if pem.is_empty() {
        return Err(CaInputError::Empty);
    }
    if pem.len() as u64 > CA_INPUT_LIMIT {
        return Err(CaInputError::TooLong);
    }
    let mut file = tempfile::Builder::new()
        .prefix("corobench-ca-")
        .suffix(".pem")
        .tempfile()
        .map_err(CaInputError::Write)?;
    file.write_all(&pem)
        .and_then(|()| file.flush())
        .map_err(CaInputError::Write)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_on_a_stream_become_a_file_and_nothing_or_too_much_is_refused() {
        let file = ca_file_from(&b"-----BEGIN CERTIFICATE-----\n"[..]).unwrap();
        let text = std::fs::read_to_string(file.path()).unwrap();
        assert!(text.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(matches!(ca_file_from(&b""[..]), Err(CaInputError::Empty)));
        let huge = vec![b'x'; usize::try_from(CA_INPUT_LIMIT).unwrap() + 1];
        assert!(matches!(
            ca_file_from(&huge[..]),
            Err(CaInputError::TooLong)
        ));
    }
}
