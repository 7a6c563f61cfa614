//! Kernel TLS (kTLS): once rustls has done the handshake, the session's
//! keys go to the kernel (`TCP_ULP` "tls", then `SOL_TLS` `TLS_RX` and
//! `TLS_TX`), and the engine's sends and receives carry plaintext. Records
//! that are not application data (TLS 1.3 session tickets, alerts) arrive
//! with their type in a control message; tickets go back to rustls so that
//! later connections can resume.

use std::io;
use std::mem;
use std::os::fd::RawFd;

use rustls::client::ClientConnectionData;
use rustls::kernel::KernelConnection;
use rustls::{ConnectionTrafficSecrets, ProtocolVersion};

use super::TlsError;
use crate::cmsg;

/// Where the kernel lists the upper-layer protocols it has loaded.
const AVAILABLE_ULP: &str = "/proc/sys/net/ipv4/tcp_available_ulp";
/// TLS record types (RFC 8446 §5.1).
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
pub(crate) const APPLICATION_DATA: u8 = 23;
/// Handshake message types (RFC 8446 §4).
const NEW_SESSION_TICKET: u8 = 4;
const KEY_UPDATE: u8 = 24;
/// Room for the one control message that carries a record's type.
pub(crate) const CONTROL_BYTES: usize = 64;

/// Which way a key works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Transmit,
    Receive,
}

/// Whether this kernel has the `tls` upper-layer protocol (loaded, or
/// loadable on first use); the error says what it has instead.
pub(crate) fn check_available() -> Result<(), TlsError> {
    let listed = std::fs::read_to_string(AVAILABLE_ULP).unwrap_or_default();
    if listed.split_whitespace().any(|ulp| ulp == "tls") {
        return Ok(());
    }
    // Asking an unconnected socket for the ULP loads its module if the
    // kernel can: "not connected" then means it exists.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
        .map_err(|e| TlsError::KtlsUnavailable(format!("no socket to test it on ({e})")))?;
    match install_ulp(std::os::fd::AsRawFd::as_raw_fd(&socket)) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => Ok(()),
        Err(e) => Err(TlsError::KtlsUnavailable(format!(
            "the kernel has no `tls` upper-layer protocol ({AVAILABLE_ULP} lists {:?}; \
             asking for it: {e})",
            listed.trim()
        ))),
    }
}

/// Puts the `tls` upper-layer protocol on a socket.
fn install_ulp(fd: RawFd) -> io::Result<()> {
    let name = b"tls";
    // SAFETY: the option value is a byte string alive across the call, its
    // length passed with it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_TCP,
            libc::TCP_ULP,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Gives the kernel one direction's key; the first call (receive) also
/// puts the `tls` protocol on the socket.
pub(crate) fn enable(
    fd: RawFd,
    version: ProtocolVersion,
    (sequence, secrets): &(u64, ConnectionTrafficSecrets),
    direction: Direction,
) -> Result<(), String> {
    if direction == Direction::Receive {
        install_ulp(fd).map_err(|e| format!("the socket refused the tls protocol: {e}"))?;
    }
    let version = match version {
        ProtocolVersion::TLSv1_2 => libc::TLS_1_2_VERSION,
        ProtocolVersion::TLSv1_3 => libc::TLS_1_3_VERSION,
        other => return Err(format!("the kernel does not do {other:?}")),
    };
    let info = CryptoInfo::new(version, *sequence, secrets)?;
    let option = match direction {
        Direction::Transmit => libc::TLS_TX,
        Direction::Receive => libc::TLS_RX,
    };
    let (pointer, length) = info.as_option();
    // SAFETY: `pointer` points at `length` bytes of a crypto-info struct
    // owned by `info`, alive across the call.
    let rc = unsafe { libc::setsockopt(fd, libc::SOL_TLS, option, pointer, length) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "the kernel refused the {direction:?} key: {}",
            io::Error::last_os_error()
        ))
    }
}

/// The kernel's description of one direction's key.
enum CryptoInfo {
    Aes128(libc::tls12_crypto_info_aes_gcm_128),
    Aes256(libc::tls12_crypto_info_aes_gcm_256),
    Chacha(libc::tls12_crypto_info_chacha20_poly1305),
}

impl CryptoInfo {
    fn new(
        version: u16,
        sequence: u64,
        secrets: &ConnectionTrafficSecrets,
    ) -> Result<Self, String> {
        let rec_seq = sequence.to_be_bytes();
        let info = |cipher_type| libc::tls_crypto_info {
            version,
            cipher_type,
        };
        Ok(match secrets {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } => {
                let (salt, nonce) = iv.as_ref().split_at(4);
                Self::Aes128(libc::tls12_crypto_info_aes_gcm_128 {
                    info: info(libc::TLS_CIPHER_AES_GCM_128),
                    iv: copied(nonce)?,
                    key: copied(key.as_ref())?,
                    salt: copied(salt)?,
                    rec_seq,
                })
            }
            ConnectionTrafficSecrets::Aes256Gcm { key, iv } => {
                let (salt, nonce) = iv.as_ref().split_at(4);
                Self::Aes256(libc::tls12_crypto_info_aes_gcm_256 {
                    info: info(libc::TLS_CIPHER_AES_GCM_256),
                    iv: copied(nonce)?,
                    key: copied(key.as_ref())?,
                    salt: copied(salt)?,
                    rec_seq,
                })
            }
            ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
                Self::Chacha(libc::tls12_crypto_info_chacha20_poly1305 {
                    info: info(libc::TLS_CIPHER_CHACHA20_POLY1305),
                    iv: copied(iv.as_ref())?,
                    key: copied(key.as_ref())?,
                    salt: [],
                    rec_seq,
                })
            }
            _ => return Err("the kernel does not do this cipher suite".into()),
        })
    }

    fn as_option(&self) -> (*const libc::c_void, libc::socklen_t) {
        fn of<T>(value: &T) -> (*const libc::c_void, libc::socklen_t) {
            (
                (value as *const T).cast(),
                mem::size_of::<T>() as libc::socklen_t,
            )
        }
        match self {
            Self::Aes128(info) => of(info),
            Self::Aes256(info) => of(info),
            Self::Chacha(info) => of(info),
        }
    }
}

fn copied<const N: usize>(bytes: &[u8]) -> Result<[u8; N], String> {
    bytes.try_into().map_err(|_| {
        format!(
            "a key part of {} bytes where the kernel takes {N}",
            bytes.len()
        )
    })
}

/// Writes all of `bytes` before the kernel takes the send key (they are
/// records rustls already encrypted).
pub(crate) fn send_all(fd: RawFd, mut bytes: &[u8]) -> Result<(), String> {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe `bytes`, alive across the call.
        let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n >= 0 {
            bytes = &bytes[n.unsigned_abs()..];
            continue;
        }
        let error = io::Error::last_os_error();
        match error.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => wait_writable(fd)?,
            _ => {
                return Err(format!(
                    "sending the last handshake records failed: {error}"
                ));
            }
        }
    }
    Ok(())
}

fn wait_writable(fd: RawFd) -> Result<(), String> {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one pollfd, alive across the call.
    let rc = unsafe { libc::poll(&raw mut poll, 1, 1000) };
    if rc > 0 {
        Ok(())
    } else {
        Err("the socket did not take the last handshake records within a second".into())
    }
}

/// Reads one record's plaintext into `buf` like `recv`, with its type
/// (application data unless a control message says otherwise).
pub(crate) fn recv(
    fd: RawFd,
    buf: &mut [u8],
    control: &mut [u8; CONTROL_BYTES],
) -> io::Result<(usize, u8)> {
    let (n, msg) = cmsg::recv_with_control(fd, buf, control)?;
    let record_type = cmsg::find(&msg, libc::SOL_TLS, libc::TLS_GET_RECORD_TYPE)
        // SAFETY: this control message's data is the one-byte record type.
        .map_or(APPLICATION_DATA, |data| unsafe { *data });
    Ok((n, record_type))
}

/// Handles a record that is not application data. Returns whether the
/// server closed the session (close_notify).
pub(crate) fn control_record(
    kernel: &mut KernelConnection<ClientConnectionData>,
    record_type: u8,
    data: &[u8],
) -> Result<bool, String> {
    match record_type {
        ALERT => match data {
            [_, 0] => Ok(true),
            [_, description] => Err(format!("the server sent the TLS alert {description}")),
            _ => Err("a malformed TLS alert".into()),
        },
        HANDSHAKE => handshake_messages(kernel, data).map(|()| false),
        other => Err(format!("a TLS record of unknown type {other}")),
    }
}

/// Session tickets are stored for resumption; a key update cannot be
/// followed once the kernel holds the keys.
fn handshake_messages(
    kernel: &mut KernelConnection<ClientConnectionData>,
    mut data: &[u8],
) -> Result<(), String> {
    while let [kind, a, b, c, rest @ ..] = data {
        let length = u32::from_be_bytes([0, *a, *b, *c]) as usize;
        if rest.len() < length {
            return Err("a handshake message cut short".into());
        }
        let (payload, next) = rest.split_at(length);
        match *kind {
            NEW_SESSION_TICKET => kernel
                .handle_new_session_ticket(payload)
                .map_err(|e| format!("a session ticket was refused: {e}"))?,
            KEY_UPDATE => {
                return Err(
                    "the server updated its keys (KeyUpdate), which kTLS here does not \
                            follow"
                        .into(),
                );
            }
            other => return Err(format!("an unexpected handshake message {other}")),
        }
        data = next;
    }
    if data.is_empty() {
        Ok(())
    } else {
        Err("a handshake message cut short".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crypto_info_lays_out_the_keys_as_the_kernel_reads_them() {
        let key = rustls::crypto::cipher::AeadKey::from([7u8; 32]);
        let iv = rustls::crypto::cipher::Iv::new([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        let secrets = ConnectionTrafficSecrets::Aes256Gcm { key, iv };
        let Ok(CryptoInfo::Aes256(info)) = CryptoInfo::new(libc::TLS_1_3_VERSION, 5, &secrets)
        else {
            panic!("AES-256-GCM has a kernel layout");
        };
        assert_eq!(info.salt, [1, 2, 3, 4]);
        assert_eq!(info.iv, [5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!(info.rec_seq, 5u64.to_be_bytes());
        assert_eq!(info.info.cipher_type, libc::TLS_CIPHER_AES_GCM_256);
        assert_eq!(CryptoInfo::Aes256(info).as_option().1, 56);
    }

    #[test]
    fn an_unavailable_kernel_module_is_named() {
        match check_available() {
            Ok(()) => {}
            Err(error) => {
                let text = error.to_string();
                assert!(
                    text.contains("tcp_available_ulp") && text.contains("modprobe tls"),
                    "{text}"
                );
            }
        }
    }
}
