//! The `/mixed` CPU work: a SHA-256 chain from 32 zero bytes.

use sha2::{Digest, Sha256};

/// `h_iters` where `h_0` is 32 zero bytes and `h_(k+1) = SHA-256(h_k)`.
pub fn sha256_chain(iters: u32) -> [u8; 32] {
    let mut state = [0u8; 32];
    for _ in 0..iters {
        state = Sha256::digest(state).into();
    }
    state
}

/// Lower-case hex of a byte string.
pub fn hex_lower(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_rounds_is_the_zero_state() {
        assert_eq!(hex_lower(&sha256_chain(0)), "0".repeat(64));
    }

    #[test]
    fn matches_the_contract_reference_digests() {
        assert_eq!(
            hex_lower(&sha256_chain(1)),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
        assert_eq!(
            hex_lower(&sha256_chain(1000)),
            "36c1cb4f826ae42ceba848227e0c5f786178ca9dceca6772e5d728d09c30a2f6"
        );
    }

    #[test]
    fn hex_of_known_bytes() {
        assert_eq!(hex_lower(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
    }
}
