'use strict';
// /db's connection pool (pg's Pool). Connections open lazily, so a database
// that is down at start-up, or goes down later, only fails /db (with 503).

const { Pool } = require('pg');

const { countEvents, poolStats } = require('./pool-stats');

const WORLD_ROWS = 10000;

function createDb(databaseUrl, poolSize) {
  if (!databaseUrl) return null;
  const pool = new Pool({
    connectionString: databaseUrl,
    max: poolSize,
    // Fail fast instead of queueing forever when the database is gone.
    connectionTimeoutMillis: 5000,
    // Keep connections for the whole run: reconnecting would be measured.
    idleTimeoutMillis: 0,
  });
  // An idle connection that dies (database stopped) must not crash the process.
  pool.on('error', (err) => console.error(`node-http: idle database connection lost: ${err.message}`));
  const counted = countEvents(pool);
  return {
    async selectOne() {
      const result = await pool.query({ text: 'SELECT 1 AS one', rowMode: 'array' });
      return { select: result.rows[0][0] };
    },
    stats: () => poolStats(pool, poolSize, counted),
    async randomWorld() {
      const id = 1 + Math.floor(Math.random() * WORLD_ROWS);
      const result = await pool.query({
        name: 'world-by-id',
        text: 'SELECT id, randomnumber FROM world WHERE id = $1',
        values: [id],
      });
      if (result.rows.length !== 1) throw new Error(`world has no row with id ${id}`);
      const row = result.rows[0];
      return { id: row.id, randomNumber: row.randomnumber };
    },
    end: () => pool.end(),
  };
}

module.exports = { createDb };
