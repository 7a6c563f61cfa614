//! The knob server's single-threaded epoll loop: accepts, readiness events
//! and timers (response delays, stalls, slow-read pauses, lingering closes).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};

use super::conn::{Conn, Next};
use super::wire::Wire;
use super::{Command, Context, Control, Counters, Responses, ServerTls, Stalls, Window};
use crate::knobs::Knobs;

const LISTENER: Token = Token(usize::MAX - 1);
const WAKER: Token = Token(usize::MAX - 2);
/// The timer slot of the next slow accept.
const ACCEPT_TIMER: usize = usize::MAX - 3;

#[derive(Debug)]
pub(super) struct EventLoop {
    poll: Poll,
    listener: TcpListener,
    control: Arc<Control>,
    ctx: Context,
    /// Connections by token; `None` marks a free slot.
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    next_generation: u64,
    /// Wake-ups: (when, slot, generation).
    timers: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    /// Slow accepts: how many were accepted, and when the next may be.
    slow_accepted: u32,
    next_accept_at: Option<Instant>,
}

impl EventLoop {
    pub fn new(
        port: u16,
        knobs: Knobs,
        (counters, tls): (Arc<Counters>, Option<ServerTls>),
    ) -> io::Result<(Self, Arc<Control>)> {
        let poll = Poll::new()?;
        let mut listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
        if let Some(bytes) = knobs.slow_read.and_then(|s| s.receive_buffer_bytes) {
            // Accepted sockets inherit it, and it must precede the handshake
            // to shape the advertised window.
            socket2::SockRef::from(&listener).set_recv_buffer_size(bytes)?;
        }
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let control = Arc::new(Control {
            waker: Waker::new(poll.registry(), WAKER)?,
            commands: std::sync::Mutex::new(Vec::new()),
        });
        let mut stalls = Stalls::default();
        if let Some(stall) = knobs.stall {
            let from = Instant::now() + stall.after;
            stalls.windows.push(Window {
                from,
                until: from + stall.length,
            });
        }
        let ctx = Context {
            responses: Responses::new(&knobs),
            knobs,
            counters,
            stalls,
            tls,
        };
        let event_loop = Self {
            poll,
            listener,
            control: Arc::clone(&control),
            ctx,
            conns: Vec::new(),
            free: Vec::new(),
            next_generation: 0,
            timers: BinaryHeap::new(),
            slow_accepted: 0,
            next_accept_at: None,
        };
        Ok((event_loop, control))
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Runs until the owner asks it to stop; every connection closes then.
    pub fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = self
                .timers
                .peek()
                .map(|Reverse((at, _, _))| at.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
            for event in &events {
                match event.token() {
                    LISTENER => self.accept_all(),
                    WAKER => {
                        if self.obey_commands() {
                            return;
                        }
                    }
                    Token(slot) => self.serve(slot),
                }
            }
            self.fire_timers();
        }
    }

    /// Applies the owner's commands; true when it asked to shut down.
    fn obey_commands(&mut self) -> bool {
        let mut shutdown = false;
        for command in self.control.take() {
            match command {
                Command::Stall(window) => self.ctx.stalls.windows.push(window),
                Command::Shutdown => shutdown = true,
            }
        }
        let now = Instant::now();
        self.ctx.stalls.windows.retain(|w| w.until > now);
        shutdown
    }

    fn accept_all(&mut self) {
        if self.accept_slowly() {
            return;
        }
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => self.adopt(stream),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Out of descriptors and the like: try again on the next event.
                Err(_) => return,
            }
        }
    }

    /// With [`Knobs::slow_accept`]: accepts at most one connection, once its
    /// pause has passed, and sets a timer for the next. Returns whether
    /// accepting is still slow (the caller then accepts nothing more).
    fn accept_slowly(&mut self) -> bool {
        let Some(slow) = self.ctx.knobs.slow_accept else {
            return false;
        };
        if self.slow_accepted >= slow.connections {
            return false;
        }
        let now = Instant::now();
        let due = *self.next_accept_at.get_or_insert(now + slow.pause);
        if due > now {
            self.timers.push(Reverse((due, ACCEPT_TIMER, 0)));
            return true;
        }
        if let Ok((stream, _)) = self.listener.accept() {
            self.slow_accepted += 1;
            self.adopt(stream);
            self.next_accept_at = Some(now + slow.pause);
        }
        // Whether or not one was waiting, look again after the pause: the
        // listener's readiness is edge-triggered.
        self.timers
            .push(Reverse((now + slow.pause, ACCEPT_TIMER, 0)));
        true
    }

    fn adopt(&mut self, mut stream: mio::net::TcpStream) {
        self.ctx
            .counters
            .connections
            .fetch_add(1, Ordering::Relaxed);
        if self.ctx.knobs.close_on_accept {
            return;
        }
        let _ = stream.set_nodelay(true);
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self
            .poll
            .registry()
            .register(&mut stream, Token(slot), interest)
            .is_err()
        {
            self.free.push(slot);
            return;
        }
        self.next_generation += 1;
        let wire = self.wire_for(self.ctx.counters.connections.load(Ordering::Relaxed));
        self.conns[slot] = Some(Conn::new(stream, wire, self.next_generation));
        self.ctx.counters.open.fetch_add(1, Ordering::Relaxed);
    }

    /// What the `accepted`th connection (from 1) speaks, as the TLS knobs ask.
    fn wire_for(&self, accepted: u64) -> Wire {
        let Some(tls) = &self.ctx.tls else {
            return Wire::Plain;
        };
        let knobs = &tls.knobs;
        let drop_it = knobs
            .drop_handshake_every
            .is_some_and(|n| n > 0 && accepted % u64::from(n) == 0);
        if knobs.plaintext_answer {
            Wire::PlaintextAnswer
        } else if drop_it {
            Wire::DropInHandshake
        } else {
            Wire::tls(&tls.config)
        }
    }

    fn serve(&mut self, slot: usize) {
        let Some(conn) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        match conn.serve(&self.ctx, Instant::now()) {
            Next::Close => self.close(slot),
            Next::Open(None) => {}
            Next::Open(Some(at)) => {
                if conn.timer_at.is_none_or(|scheduled| at < scheduled) {
                    conn.timer_at = Some(at);
                    self.timers.push(Reverse((at, slot, conn.generation)));
                }
            }
        }
    }

    fn fire_timers(&mut self) {
        let now = Instant::now();
        while let Some(&Reverse((at, slot, generation))) = self.timers.peek() {
            if at > now {
                return;
            }
            self.timers.pop();
            if slot == ACCEPT_TIMER {
                self.accept_all();
                continue;
            }
            let Some(conn) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
                continue;
            };
            if conn.generation == generation && conn.timer_at == Some(at) {
                conn.timer_at = None;
                self.serve(slot);
            }
        }
    }

    fn close(&mut self, slot: usize) {
        if let Some(mut conn) = self.conns[slot].take() {
            let _ = self.poll.registry().deregister(&mut conn.stream);
            self.free.push(slot);
            self.ctx.counters.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
