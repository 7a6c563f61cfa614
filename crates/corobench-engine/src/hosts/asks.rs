//! The server host's `corobench serve`, as a trial talks to it: orders
//! down its stdin, answers picked out of its stdout.

use std::time::Duration;

use crate::protocol::{self, Order, ServeEvent};

/// A session with `corobench serve` that takes orders.
pub(super) trait Asks {
    /// Writes `order` to `serve`'s stdin; `false` when the session cannot
    /// take it any more.
    fn send(&mut self, order: &Order) -> bool;
    /// The first answer `wanted` picks, waiting up to `limit` for it.
    fn answer(
        &mut self,
        wanted: &dyn Fn(&ServeEvent) -> bool,
        limit: Duration,
    ) -> Option<ServeEvent>;
}

/// The answer to footprint order `id`, waiting up to `limit` for it.
pub(super) fn footprint(
    server: &mut impl Asks,
    id: u32,
    limit: Duration,
) -> Option<protocol::Footprint> {
    let wanted = |event: &ServeEvent| matches!(event, ServeEvent::Footprint(f) if f.id == id);
    match server.answer(&wanted, limit)? {
        ServeEvent::Footprint(answer) => Some(answer),
        _ => None,
    }
}

/// The answer to the count order that began at `from_unix_ms`.
pub(super) fn counters(
    server: &mut impl Asks,
    from_unix_ms: i64,
    limit: Duration,
) -> Option<protocol::Counters> {
    let wanted = |event: &ServeEvent| matches!(event, ServeEvent::Counters(c) if c.from_unix_ms == from_unix_ms);
    match server.answer(&wanted, limit)? {
        ServeEvent::Counters(answer) => Some(answer),
        _ => None,
    }
}
