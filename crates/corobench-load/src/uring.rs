//! The io_uring backend: one ring per thread. Sends are queued and submitted
//! in one `io_uring_enter` per loop turn, together with the wait; each
//! connection has one multishot receive whose data lands in a shared ring of
//! provided buffers, so 10,000 idle connections hold no buffer of their own.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd as _;

use io_uring::{IoUring, cqueue, opcode, squeue, types};
use socket2::SockAddr;

use crate::conn::{self, Conn, Phase};
use crate::core::{SWEEP_INTERVAL_NS, Shared, ThreadPlan, ThreadResult, Turn};
use crate::driver::{Driver, Io, Write};
use crate::error::{LoadError, Setting};
use crate::stamps;

mod buffers;

use buffers::BufRing;

const SUBMISSION_ENTRIES: u32 = 1024;
const COMPLETION_ENTRIES: u32 = 8 * SUBMISSION_ENTRIES;
const BUFFER_GROUP: u16 = 0;

/// What a submission was, packed into its `user_data` with the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Connect = 1,
    Send = 2,
    Recv = 3,
}

fn user_data(op: Op, index: usize, generation: u32) -> u64 {
    ((op as u64) << 56) | ((u64::from(generation) & 0xff_ffff) << 32) | (index as u64 & 0xffff_ffff)
}

fn decode(data: u64) -> (u64, usize, u32) {
    (
        data >> 56,
        (data & 0xffff_ffff) as usize,
        ((data >> 32) & 0xff_ffff) as u32,
    )
}

/// Runs one generator thread until its share of the run is done.
pub(crate) fn run_thread(shared: &Shared, plan: &ThreadPlan) -> Result<ThreadResult, LoadError> {
    let ring = new_ring()?;
    // Declared before the driver so it is dropped after the ring it is registered with.
    let mut buffers = BufRing::register(&ring, BUFFER_GROUP).map_err(|e| {
        LoadError::os(
            "cannot register io_uring provided buffers (Linux 5.19 or newer is needed)",
            e,
        )
    })?;
    let io = UringIo {
        ring,
        addr: Box::new(SockAddr::from(shared.addr)),
        armed_receives: 0,
        // TLS records and HTTP/2 frames are written from a connection's
        // buffer, which must not change under a send the kernel is still
        // reading; HTTP/2 also writes with no response in between.
        confirm_sends: shared.pipeline > 1 || shared.tls.is_some() || shared.h2.is_some(),
        stamps: shared.kernel_stamps.then(stamps::multishot_template),
    };
    let mut driver = Driver::new(shared, plan, io);
    let mut completions: Vec<(u64, i32, u32)> = Vec::with_capacity(COMPLETION_ENTRIES as usize);
    let start = shared.clock.now_ns();
    driver.open_all(start);
    let mut next_sweep = start.saturating_add(SWEEP_INTERVAL_NS);
    loop {
        let now = shared.clock.now_ns();
        if driver.turn(now) == Turn::Finish {
            break;
        }
        buffers.publish();
        let timeout = driver.core.wait_ns(now, driver.can_send());
        driver
            .io
            .submit_and_wait(timeout, completions_wanted(&driver))?;
        completions.clear();
        completions.extend(
            driver
                .io
                .ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
        let ended = completions
            .iter()
            .filter(|&&(data, _, flags)| is_last_receive(data, flags))
            .count();
        driver.io.armed_receives = driver.io.armed_receives.saturating_sub(ended);
        let now = shared.clock.now_ns();
        for &(data, result, flags) in &completions {
            on_completion(&mut driver, &mut buffers, data, result, flags, now);
        }
        if driver.core.open_loop() {
            driver.dispatch_due(now);
        }
        if now >= next_sweep {
            driver.sweep(now);
            next_sweep = now.saturating_add(SWEEP_INTERVAL_NS);
        }
    }
    let end = shared.clock.now_ns();
    driver.close_all();
    if !drain(&mut driver) {
        // The kernel may still write into the buffers: never free them under it.
        std::mem::forget(buffers);
    }
    Ok(driver.core.finish(end))
}

/// Waits (briefly) until every receive has ended, so the buffers they write
/// into can be freed. Returns whether all ended.
fn drain(driver: &mut Driver<'_, UringIo>) -> bool {
    const MAX_TURNS: u32 = 50;
    for _ in 0..MAX_TURNS {
        if driver.io.armed_receives == 0 {
            return true;
        }
        if driver.io.submit_and_wait(2_000_000, 1).is_err() {
            return false;
        }
        let io = &mut driver.io;
        let ended = io
            .ring
            .completion()
            .filter(|c| is_last_receive(c.user_data(), c.flags()))
            .count();
        io.armed_receives = io.armed_receives.saturating_sub(ended);
    }
    driver.io.armed_receives == 0
}

/// How many completions end a wait before its timeout: one, unless the
/// thread may sleep through responses until its next send (see
/// `Driver::responses_can_wait`). Even then a quarter of the provided
/// buffers wakes it, so that responses piling up never run the ring dry.
fn completions_wanted(driver: &Driver<'_, UringIo>) -> u32 {
    if driver.responses_can_wait() {
        u32::from(buffers::BUFFERS / 4)
    } else {
        1
    }
}

/// The completion that ends a multishot receive (no more will follow).
fn is_last_receive(data: u64, flags: u32) -> bool {
    decode(data).0 == Op::Recv as u64 && !cqueue::more(flags)
}

/// Whether this kernel gives the io_uring backend everything it needs (a
/// ring that waits with a timeout, and a ring of provided buffers); the
/// error says what is missing.
pub(crate) fn probe() -> Result<(), LoadError> {
    let ring = new_ring()?;
    BufRing::register(&ring, BUFFER_GROUP)
        .map(drop)
        .map_err(|e| {
            LoadError::os(
                "cannot register io_uring provided buffers (Linux 5.19 or newer is needed)",
                e,
            )
        })
}

/// A ring that runs completion work only when this thread asks for it
/// (fewer interruptions), falling back to plain set-up on older kernels.
fn new_ring() -> Result<IoUring, LoadError> {
    let tuned = IoUring::builder()
        .setup_cqsize(COMPLETION_ENTRIES)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(SUBMISSION_ENTRIES);
    let ring = match tuned {
        Ok(ring) => ring,
        Err(_) => IoUring::builder()
            .setup_cqsize(COMPLETION_ENTRIES)
            .build(SUBMISSION_ENTRIES)
            .map_err(|e| {
                LoadError::os(
                    "cannot create an io_uring (is io_uring disabled on this kernel?)",
                    e,
                )
            })?,
    };
    if !ring.params().is_feature_ext_arg() {
        return Err(LoadError::config(
            &[Setting::Backend],
            "this kernel's io_uring cannot wait with a timeout (Linux 5.11 or newer is needed); \
             the epoll backend runs on any",
        ));
    }
    Ok(ring)
}

fn on_completion(
    driver: &mut Driver<'_, UringIo>,
    buffers: &mut BufRing,
    data: u64,
    result: i32,
    flags: u32,
    now: u64,
) {
    let (op, i, generation) = decode(data);
    let buffer = cqueue::buffer_select(flags);
    let current = driver
        .conns
        .get(i)
        .is_some_and(|c| c.generation & 0xff_ffff == generation && c.socket.is_some());
    if current {
        match op {
            x if x == Op::Connect as u64 => on_connect(driver, i, result, now),
            // A send posts a completion when it failed, or when it was
            // asked to confirm success (see `write`).
            x if x == Op::Send as u64 && result < 0 => driver.write_failed(i, now),
            x if x == Op::Send as u64 => driver.write_completed(i, now),
            _ => on_recv(driver, buffers, i, result, buffer, now),
        }
        if op == Op::Recv as u64 && !cqueue::more(flags) {
            rearm_recv(driver, i);
        }
    }
    if let Some(bid) = buffer {
        buffers.recycle(bid);
    }
}

fn on_connect(driver: &mut Driver<'_, UringIo>, i: usize, result: i32, now: u64) {
    if driver.conns[i].phase != Phase::Connecting {
        return;
    }
    if result < 0 {
        return driver.connect_failed(i, &io::Error::from_raw_os_error(-result), now);
    }
    driver.connected(i, now);
    rearm_recv(driver, i);
}

fn on_recv(
    driver: &mut Driver<'_, UringIo>,
    buffers: &BufRing,
    i: usize,
    result: i32,
    buffer: Option<u16>,
    now: u64,
) {
    match (result, buffer) {
        (n, Some(bid)) if n > 0 => {
            let data = buffers.slice(bid, usize::try_from(n).unwrap_or(0));
            match driver.io.stamps.as_deref().copied() {
                None => {
                    driver.bytes(i, data, now, now);
                }
                Some(template) => on_stamped_recv(driver, i, data, &template, now),
            }
        }
        (0, _) => driver.eof(i, now),
        // Out of buffers: the receive ended and is re-armed once buffers are back.
        (n, _) if n == -libc::ENOBUFS => {}
        _ => driver.read_failed(i, now),
    }
}

/// A multishot `recvmsg`'s buffer: a header, the control messages (the
/// kernel's stamp), then the bytes received.
fn on_stamped_recv(
    driver: &mut Driver<'_, UringIo>,
    i: usize,
    data: &[u8],
    template: &libc::msghdr,
    now: u64,
) {
    let Ok(out) = types::RecvMsgOut::parse(data, template) else {
        return driver.read_failed(i, now);
    };
    let payload = out.payload_data();
    if payload.is_empty() {
        return driver.eof(i, now);
    }
    let base = driver.shared.base_unix_ns;
    let received =
        stamps::stamp_in(out.control_data()).map_or(now, |at| stamps::on_run_clock(at, base, now));
    driver.bytes(i, payload, received, now);
}

/// Arms a multishot receive on a connected socket (again, when one ended).
fn rearm_recv(driver: &mut Driver<'_, UringIo>, i: usize) {
    let conn = &driver.conns[i];
    if matches!(conn.phase, Phase::Closed | Phase::Connecting) {
        return;
    }
    let Some(socket) = conn.socket.as_ref() else {
        return;
    };
    let fd = types::Fd(socket.as_raw_fd());
    let entry = match driver.io.stamps.as_deref() {
        None => opcode::RecvMulti::new(fd, BUFFER_GROUP).build(),
        Some(template) => opcode::RecvMsgMulti::new(fd, template, BUFFER_GROUP).build(),
    }
    .user_data(user_data(Op::Recv, i, conn.generation));
    driver.io.push(&entry);
    driver.io.armed_receives += 1;
}

/// The io_uring side of the I/O.
struct UringIo {
    ring: IoUring,
    /// The server's address, boxed because a queued connect points at it.
    addr: Box<SockAddr>,
    /// Multishot receives armed whose last completion has not arrived: the
    /// only operations that write into the provided buffers.
    armed_receives: usize,
    /// Pipelining: a send reports its success, and the connection's next
    /// send waits for it, so that two sends never interleave their bytes.
    confirm_sends: bool,
    /// With kernel receive stamps: the template of the multishot
    /// `recvmsg`s, boxed because queued receives point at it.
    stamps: Option<Box<libc::msghdr>>,
}

impl std::fmt::Debug for UringIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringIo").finish_non_exhaustive()
    }
}

impl UringIo {
    /// Queues a submission, submitting first if the queue is full.
    fn push(&mut self, entry: &squeue::Entry) {
        loop {
            // SAFETY: every pointer an entry carries (the request bytes, the
            // server address, the provided buffers) outlives the ring.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return;
            }
            if self.ring.submit().is_err() {
                return;
            }
        }
    }

    /// Submits what is queued and waits up to `timeout_ns` for `wanted`
    /// completions.
    fn submit_and_wait(&mut self, timeout_ns: u64, wanted: u32) -> Result<(), LoadError> {
        let ts = types::Timespec::new()
            .sec(timeout_ns / 1_000_000_000)
            .nsec((timeout_ns % 1_000_000_000) as u32);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self
            .ring
            .submitter()
            .submit_with_args(wanted as usize, &args)
        {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(LoadError::os("io_uring_enter failed", e)),
        }
    }
}

impl Io for UringIo {
    fn connect(&mut self, i: usize, conn: &mut Conn, addr: SocketAddr) -> io::Result<()> {
        // A blocking socket: io_uring waits for readiness itself.
        let socket = conn::new_socket(addr, false)?;
        if self.stamps.is_some() {
            stamps::enable(&socket, false)?;
        }
        let entry = opcode::Connect::new(
            types::Fd(socket.as_raw_fd()),
            self.addr.as_ptr().cast(),
            self.addr.len(),
        )
        .build()
        .user_data(user_data(Op::Connect, i, conn.generation));
        conn.socket = Some(socket);
        self.push(&entry);
        Ok(())
    }

    fn write(&mut self, i: usize, conn: &Conn, bytes: &[u8]) -> Write {
        let Some(socket) = conn.socket.as_ref() else {
            return Write::Failed;
        };
        let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        // MSG_WAITALL: the kernel finishes a short send itself, so a send
        // that succeeds is complete. One request at a time, it needs no
        // completion at all (the next send follows a response, so the
        // previous one is over); only a failure posts one. Pipelined sends
        // can follow each other with no response between them: a short send
        // still being finished by the kernel must not be overtaken, so each
        // confirms its success and the next waits for that.
        let confirm = self.confirm_sends;
        let entry = opcode::Send::new(types::Fd(socket.as_raw_fd()), bytes.as_ptr(), len)
            .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
            .build()
            .flags(if confirm {
                squeue::Flags::empty()
            } else {
                squeue::Flags::SKIP_SUCCESS
            })
            .user_data(user_data(Op::Send, i, conn.generation));
        self.push(&entry);
        if confirm {
            Write::Pending
        } else {
            Write::Wrote(bytes.len())
        }
    }

    fn closing(&mut self, _i: usize, conn: &mut Conn) {
        // Operations in flight hold the socket open; shutting it down ends them,
        // and their completions (of an old generation) are then ignored.
        if let Some(socket) = conn.socket.as_ref() {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }
}
