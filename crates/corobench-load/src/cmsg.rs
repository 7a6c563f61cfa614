//! Reading with control messages (`recvmsg`): kernel receive stamps and
//! kTLS record types both come that way.

use std::io;
use std::mem;
use std::os::fd::RawFd;

/// Reads into `buf` like `recv`, with room for control messages in
/// `control`; returns the bytes read and the header that describes the
/// control messages (it points into `control`).
pub(crate) fn recv_with_control(
    fd: RawFd,
    buf: &mut [u8],
    control: &mut [u8],
) -> io::Result<(usize, libc::msghdr)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: an all-zero msghdr is valid (no name, no buffers).
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control.len();
    // SAFETY: msg points at `iov` (over `buf`) and `control`, all alive
    // and exclusively borrowed for the call.
    let n = unsafe { libc::recvmsg(fd, &raw mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // The iovec dies here: nothing after this reads through msg_iov.
    msg.msg_iov = std::ptr::null_mut();
    msg.msg_iovlen = 0;
    Ok((n.unsigned_abs(), msg))
}

/// Where the data of the first control message of `level` and `kind`
/// among `msg`'s begins (it may be unaligned).
pub(crate) fn find(msg: &libc::msghdr, level: libc::c_int, kind: libc::c_int) -> Option<*const u8> {
    // SAFETY: `msg` was filled by recvmsg (or describes a buffer laid out
    // as it lays it out), so its control buffer holds well-formed control
    // messages up to msg_controllen.
    let mut header = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !header.is_null() {
        // SAFETY: non-null headers from CMSG_FIRSTHDR/NXTHDR lie inside the buffer.
        let h = unsafe { &*header };
        if h.cmsg_level == level && h.cmsg_type == kind {
            // SAFETY: as above; the data follows its header in the buffer.
            return Some(unsafe { libc::CMSG_DATA(header) }.cast_const());
        }
        // SAFETY: as above; returns null after the last message.
        header = unsafe { libc::CMSG_NXTHDR(msg, header) };
    }
    None
}
