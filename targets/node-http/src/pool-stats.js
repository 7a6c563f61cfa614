'use strict';
// The database pool's account of itself for /stats (docs/contract.md). Kept
// apart from db.js so that `node --test` can check it without pg installed.

// pg's Pool keeps no counters, but says what happens: 'connect' for each
// new connection, 'acquire' for each checkout. Counted here since creation.
function countEvents(pool) {
  const counted = { acquires: 0, newConnections: 0 };
  pool.on('acquire', () => { counted.acquires += 1; });
  pool.on('connect', () => { counted.newConnections += 1; });
  return counted;
}

// The pool as /stats reports it: pg tells open, idle and waiting clients and
// (through its events) acquires and new connections; it does not say which
// acquires waited, or for how long, so those are null.
function poolStats(pool, max, counted) {
  return {
    max,
    open: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
    acquires: counted.acquires,
    new_connections: counted.newConnections,
    empty_acquires: null,
    acquire_wait_us: null,
  };
}

module.exports = { countEvents, poolStats };
