//! One connection's TLS session, without I/O: the backend hands it the
//! bytes it read from the socket and writes the bytes it leaves in
//! [`TlsSession::outgoing`]; the HTTP framing above sees plaintext only.
//!
//! It drives rustls's unbuffered client (`process_tls_records`), which
//! encrypts into and decrypts from buffers the session owns: they are kept
//! across the connection's reconnects, so a steady connection allocates
//! only what rustls itself allocates per record. With kTLS the kernel takes
//! the keys after the handshake, and rustls keeps only what it needs for
//! the session tickets that follow.

use rustls::client::{ClientConnectionData, UnbufferedClientConnection};
use rustls::kernel::KernelConnection;
use rustls::unbuffered::{
    ConnectionState, EncodeError, EncodeTlsData, EncryptError, InsufficientSizeError,
    UnbufferedStatus,
};
use rustls::{HandshakeKind, ProtocolVersion};

use super::ThreadTls;
use super::ktls;

/// What rustls needs above one record of payload: a header, a nonce and a tag.
const RECORD_OVERHEAD_BYTES: usize = 64;
/// The most plaintext one record carries.
const RECORD_PAYLOAD_BYTES: usize = 16 * 1024;

/// A connection's TLS state and its buffers.
#[derive(Default)]
pub(crate) struct TlsSession {
    state: State,
    /// Received ciphertext not processed yet (the start of a record).
    incoming: Vec<u8>,
    /// Ciphertext to write, in order: handshake records, then requests.
    outgoing: Vec<u8>,
    /// Records made while a write of `outgoing` was under way: they go out
    /// once it is done (a completion-based backend may still be reading it).
    later: Vec<u8>,
}

#[derive(Default)]
enum State {
    /// No connection yet (closed, or connecting).
    #[default]
    Idle,
    Rustls(Box<UnbufferedClientConnection>),
    /// kTLS: the kernel encrypts and decrypts; rustls keeps the session's
    /// keys to store its tickets.
    Kernel(Box<KernelConnection<ClientConnectionData>>),
}

impl std::fmt::Debug for TlsSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Idle => "idle",
            State::Rustls(_) => "rustls",
            State::Kernel(_) => "kernel",
        };
        f.debug_struct("TlsSession")
            .field("state", &state)
            .field("incoming", &self.incoming.len())
            .field("outgoing", &self.outgoing.len())
            .finish_non_exhaustive()
    }
}

/// What bytes received did to the session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Received {
    /// The handshake completed with these bytes.
    pub(crate) established: bool,
    /// The server closed the session (close_notify).
    pub(crate) peer_closed: bool,
}

/// What the server agreed to, read once a handshake completed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Negotiated {
    pub(crate) version: Option<String>,
    pub(crate) cipher: Option<String>,
    pub(crate) key_exchange: Option<String>,
    pub(crate) alpn: Option<String>,
}

/// Why the session failed.
pub(crate) type Failure = rustls::Error;

impl TlsSession {
    /// Starts a handshake on a freshly connected socket: the ClientHello
    /// waits in [`Self::outgoing`].
    pub(crate) fn begin(&mut self, tls: &ThreadTls) -> Result<(), Failure> {
        self.reset();
        let conn = UnbufferedClientConnection::new(
            std::sync::Arc::clone(&tls.config),
            tls.server_name.clone(),
        )?;
        self.state = State::Rustls(Box::new(conn));
        self.receive(&[], &mut Vec::new(), false).map(drop)
    }

    /// Forgets the connection (its socket is closed), keeping the buffers.
    pub(crate) fn reset(&mut self) {
        self.state = State::Idle;
        self.incoming.clear();
        self.outgoing.clear();
        self.later.clear();
    }

    /// Whether bytes written must come from [`Self::outgoing`]: false once
    /// the kernel encrypts (the plaintext then goes to the socket as it is).
    pub(crate) fn encrypts(&self) -> bool {
        !matches!(self.state, State::Kernel(_))
    }

    /// The ciphertext to write.
    pub(crate) fn outgoing(&self) -> &[u8] {
        &self.outgoing
    }

    /// Everything in [`Self::outgoing`] was written. Returns whether
    /// records made meanwhile now wait there.
    pub(crate) fn sent(&mut self) -> bool {
        self.outgoing.clear();
        std::mem::swap(&mut self.outgoing, &mut self.later);
        !self.outgoing.is_empty()
    }

    /// Takes bytes read from the socket: appends the application data
    /// they complete to `plain` and any records to answer with to the
    /// outgoing bytes (to those sent later if `writing`: a write is under way).
    pub(crate) fn receive(
        &mut self,
        bytes: &[u8],
        plain: &mut Vec<u8>,
        writing: bool,
    ) -> Result<Received, Failure> {
        let Self {
            state,
            incoming,
            outgoing,
            later,
        } = self;
        let State::Rustls(conn) = state else {
            return Ok(Received::default());
        };
        let was_handshaking = conn.is_handshaking();
        incoming.extend_from_slice(bytes);
        let out = if writing { later } else { outgoing };
        let mut start = 0;
        let mut peer_closed = false;
        loop {
            let UnbufferedStatus { mut discard, state } =
                conn.process_tls_records(&mut incoming[start..]);
            let done = match state? {
                ConnectionState::ReadTraffic(mut traffic) => {
                    while let Some(record) = traffic.next_record() {
                        let record = record?;
                        discard += record.discard;
                        plain.extend_from_slice(record.payload);
                    }
                    false
                }
                ConnectionState::EncodeTlsData(mut encode) => {
                    encode_into(&mut encode, out);
                    false
                }
                ConnectionState::TransmitTlsData(transmit) => {
                    // The bytes wait in `out`, written in order before anything else.
                    transmit.done();
                    false
                }
                ConnectionState::PeerClosed | ConnectionState::Closed => {
                    peer_closed = true;
                    true
                }
                ConnectionState::BlockedHandshake | ConnectionState::WriteTraffic(_) => true,
                _ => return Err(unexpected("an early-data state on a client")),
            };
            start += discard;
            if done {
                break;
            }
        }
        incoming.drain(..start.min(incoming.len()));
        Ok(Received {
            established: was_handshaking && !conn.is_handshaking(),
            peer_closed,
        })
    }

    /// Encrypts `plaintext` into the outgoing bytes, after any records
    /// waiting there, so that one write sends them all.
    pub(crate) fn seal(&mut self, plaintext: &[u8]) -> Result<(), Failure> {
        let Self {
            state,
            incoming,
            outgoing,
            ..
        } = self;
        let State::Rustls(conn) = state else {
            return Err(unexpected("sealing without a session"));
        };
        loop {
            let UnbufferedStatus { discard, state } = conn.process_tls_records(incoming);
            match state? {
                ConnectionState::WriteTraffic(mut traffic) => {
                    encrypt_into(plaintext, outgoing, |data, out| traffic.encrypt(data, out))?;
                    return Ok(());
                }
                ConnectionState::EncodeTlsData(mut encode) => encode_into(&mut encode, outgoing),
                ConnectionState::TransmitTlsData(transmit) => transmit.done(),
                _ => return Err(unexpected("a request before the session was ready")),
            }
            incoming.drain(..discard.min(incoming.len()));
        }
    }

    /// Whether the handshake resumed an earlier session.
    pub(crate) fn resumed(&self) -> bool {
        matches!(&self.state, State::Rustls(conn) if conn.handshake_kind() == Some(HandshakeKind::Resumed))
    }

    /// What the server agreed to (right after the handshake).
    pub(crate) fn negotiated(&self) -> Negotiated {
        let State::Rustls(conn) = &self.state else {
            return Negotiated::default();
        };
        Negotiated {
            version: conn.protocol_version().map(version_name),
            cipher: conn
                .negotiated_cipher_suite()
                .map(|suite| format!("{:?}", suite.suite())),
            key_exchange: conn
                .negotiated_key_exchange_group()
                .map(|group| format!("{:?}", group.name())),
            alpn: conn
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
        }
    }

    /// Hands the established session to the kernel on socket `fd`: the
    /// receive keys first, then the records still owed (the client's
    /// Finished) go out as they are, then the send keys. From then on
    /// plaintext is written and read.
    pub(crate) fn hand_to_kernel(&mut self, fd: std::os::fd::RawFd) -> Result<(), String> {
        if !self.incoming.is_empty() {
            return Err("bytes of a record arrived before the kernel could take the keys".into());
        }
        let State::Rustls(conn) = std::mem::take(&mut self.state) else {
            return Err("no established session to hand over".into());
        };
        let version = conn.protocol_version();
        let (secrets, kernel) = conn
            .dangerous_into_kernel_connection()
            .map_err(|e| e.to_string())?;
        let version = version.ok_or("no protocol version was agreed")?;
        ktls::enable(fd, version, &secrets.rx, ktls::Direction::Receive)?;
        ktls::send_all(fd, &self.outgoing)?;
        self.outgoing.clear();
        ktls::enable(fd, version, &secrets.tx, ktls::Direction::Transmit)?;
        self.state = State::Kernel(Box::new(kernel));
        Ok(())
    }

    /// kTLS: a record that is not application data, which the kernel
    /// decrypted and handed over with its type. Returns whether the
    /// server closed the session.
    pub(crate) fn kernel_record(&mut self, record_type: u8, data: &[u8]) -> Result<bool, String> {
        let State::Kernel(kernel) = &mut self.state else {
            return Err("a control record without a kernel session".into());
        };
        ktls::control_record(kernel, record_type, data)
    }
}

/// Appends one handshake record to `out`, growing it to the size rustls asks.
fn encode_into(encode: &mut EncodeTlsData<'_, ClientConnectionData>, out: &mut Vec<u8>) {
    let at = out.len();
    let mut room = 1024;
    loop {
        out.resize(at + room, 0);
        match encode.encode(&mut out[at..]) {
            Ok(written) => {
                out.truncate(at + written);
                return;
            }
            Err(EncodeError::InsufficientSize(InsufficientSizeError { required_size })) => {
                room = required_size;
            }
            Err(EncodeError::AlreadyEncoded) => {
                out.truncate(at);
                return;
            }
        }
    }
}

/// Appends `plaintext`, encrypted by `encrypt`, to `out`.
fn encrypt_into(
    plaintext: &[u8],
    out: &mut Vec<u8>,
    mut encrypt: impl FnMut(&[u8], &mut [u8]) -> Result<usize, EncryptError>,
) -> Result<(), Failure> {
    let at = out.len();
    let records = plaintext.len() / RECORD_PAYLOAD_BYTES + 1;
    let mut room = plaintext.len() + records * RECORD_OVERHEAD_BYTES;
    loop {
        out.resize(at + room, 0);
        match encrypt(plaintext, &mut out[at..]) {
            Ok(written) => {
                out.truncate(at + written);
                return Ok(());
            }
            Err(EncryptError::InsufficientSize(InsufficientSizeError { required_size })) => {
                room = required_size;
            }
            Err(EncryptError::EncryptExhausted) => {
                out.truncate(at);
                return Err(unexpected("the session's keys are used up"));
            }
        }
    }
}

fn unexpected(what: &str) -> Failure {
    rustls::Error::General(what.to_owned())
}

/// `TLSv1.3` rather than rustls's `TLSv1_3`.
fn version_name(version: ProtocolVersion) -> String {
    format!("{version:?}").replace('_', ".")
}
