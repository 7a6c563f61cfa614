//! A ring of provided buffers (`IORING_REGISTER_PBUF_RING`): the kernel picks
//! a free buffer when data arrives for any connection, and the generator
//! hands it back once the bytes are framed.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::IoUring;
use io_uring::types::BufRingEntry;

/// Buffers in the ring (a power of two).
pub(super) const BUFFERS: u16 = 1024;
/// Bytes per buffer: a whole small response fits, larger ones take several.
const BUFFER_BYTES: usize = 16 * 1024;
const PAGE_BYTES: usize = 4096;

pub(super) struct BufRing {
    entries: *mut BufRingEntry,
    entries_layout: Layout,
    /// The buffers themselves. A raw allocation, not a slice we own, because
    /// the kernel writes into buffers we have lent it at any time.
    memory: *mut u8,
    memory_layout: Layout,
    /// Our copy of the tail; published to the kernel once per loop turn.
    tail: u16,
    published: u16,
}

impl BufRing {
    /// Allocates the ring and its buffers and registers them as group `group`.
    pub(super) fn register(ring: &IoUring, group: u16) -> io::Result<Self> {
        let entries_layout = page_aligned(usize::from(BUFFERS) * size_of::<BufRingEntry>())?;
        let memory_layout = page_aligned(usize::from(BUFFERS) * BUFFER_BYTES)?;
        // SAFETY: both layouts have a non-zero size. Zeroed large allocations
        // are fresh mappings, so untouched buffers cost no resident memory.
        let (entries, memory) = unsafe {
            (
                alloc_zeroed(entries_layout).cast::<BufRingEntry>(),
                alloc_zeroed(memory_layout),
            )
        };
        let mut ring_buffers = Self {
            entries,
            entries_layout,
            memory,
            memory_layout,
            tail: 0,
            published: 0,
        };
        if entries.is_null() || memory.is_null() {
            return Err(io::Error::from(io::ErrorKind::OutOfMemory));
        }
        // SAFETY: the entries and the memory live until `self` is dropped,
        // which happens after the ring they are registered with (see run_thread).
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(entries as u64, BUFFERS, group, 0)?
        };
        for bid in 0..BUFFERS {
            ring_buffers.recycle(bid);
        }
        ring_buffers.publish();
        Ok(ring_buffers)
    }

    /// The first `len` bytes of buffer `bid`, as the kernel filled them.
    pub(super) fn slice(&self, bid: u16, len: usize) -> &[u8] {
        let start = usize::from(bid % BUFFERS) * BUFFER_BYTES;
        // SAFETY: the range lies inside the allocation, and the kernel has
        // finished writing this buffer: it reported it in a completion and
        // will not reuse it until we recycle it.
        unsafe { std::slice::from_raw_parts(self.memory.add(start), len.min(BUFFER_BYTES)) }
    }

    /// Gives buffer `bid` back to the kernel (visible after [`Self::publish`]).
    pub(super) fn recycle(&mut self, bid: u16) {
        let index = usize::from(self.tail & (BUFFERS - 1));
        let addr = self.memory as u64 + (usize::from(bid % BUFFERS) * BUFFER_BYTES) as u64;
        // SAFETY: index < BUFFERS, inside the allocation; only this thread writes entries.
        let entry = unsafe { &mut *self.entries.add(index) };
        entry.set_addr(addr);
        entry.set_len(BUFFER_BYTES as u32);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Publishes recycled buffers to the kernel with one release store.
    pub(super) fn publish(&mut self) {
        if self.tail == self.published {
            return;
        }
        // SAFETY: the tail field lives in the first entry of our allocation and
        // is only written by this thread; the kernel reads it with acquire ordering.
        unsafe {
            let tail = BufRingEntry::tail(self.entries)
                .cast::<AtomicU16>()
                .cast_mut();
            (*tail).store(self.tail, Ordering::Release);
        }
        self.published = self.tail;
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `register` with these layouts (null when that
        // allocation failed); the ring that referenced them is already dropped.
        unsafe {
            if !self.entries.is_null() {
                dealloc(self.entries.cast(), self.entries_layout);
            }
            if !self.memory.is_null() {
                dealloc(self.memory, self.memory_layout);
            }
        }
    }
}

fn page_aligned(bytes: usize) -> io::Result<Layout> {
    Layout::from_size_align(bytes, PAGE_BYTES)
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}
