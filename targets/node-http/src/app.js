'use strict';
// The request handler: one function per endpoint, all on this process's
// single event loop. Waits are timers; CPU work (/mixed) runs on the loop and
// blocks it, which is this model's truth.

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { Transform, pipeline } = require('node:stream');
const { setTimeout: sleep } = require('node:timers/promises');

const contract = require('./contract');
const { responder } = require('./respond');

class TooLarge extends Error {}

// Counts and hashes what flows through; fails once more than the limit passed.
function hashingCounter() {
  const hash = crypto.createHash('sha256');
  const counter = new Transform({
    transform(chunk, _encoding, done) {
      counter.bytes += chunk.length;
      if (counter.bytes > contract.MAX_UPLOAD_BYTES) return done(new TooLarge());
      hash.update(chunk);
      return done(null, chunk);
    },
  });
  counter.bytes = 0;
  counter.hexDigest = () => hash.digest('hex');
  return counter;
}

function createApp({ serverName, dataDir, uploadDir, db }) {
  const reply = responder(serverName);
  const payloadPath = path.join(dataDir, 'payload.bin');
  let inFlight = 0;
  const tooLarge = (res) =>
    reply.error(res, 413, `the body must be at most ${contract.MAX_UPLOAD_BYTES} bytes`, { Connection: 'close' });

  async function io(res, query) {
    const ms = contract.intParam(query, 'ms');
    await sleep(ms);
    reply.json(res, { message: 'Hello, World!', waited_ms: ms });
  }

  async function mixed(res, query) {
    const iters = contract.intParam(query, 'iters');
    const ms = contract.intParam(query, 'ms');
    const digest = contract.digestChain(iters);
    await sleep(ms);
    reply.json(res, { digest, iters, waited_ms: ms });
  }

  // Answers with what `query` reads from the database, or 503 saying why not.
  async function fromDb(res, query, what) {
    if (db === null) return reply.error(res, 503, 'no database: DATABASE_URL is not set');
    let row;
    try {
      row = await query();
    } catch (err) {
      return reply.error(res, 503, `database unavailable: ${what}${err.message}`);
    }
    return reply.json(res, row);
  }

  async function file(res, query) {
    const length = contract.intParam(query, 'kb') * 1024;
    const handle = await fs.promises.open(payloadPath, 'r');
    const { size } = await handle.stat();
    if (size < length) {
      await handle.close();
      return reply.error(res, 500, `payload.bin holds ${size} bytes, fewer than kb asks for`);
    }
    reply.head(res, 'application/octet-stream', length);
    pipeline(handle.createReadStream({ start: 0, end: length - 1 }), res, () => {});
    return undefined;
  }

  function upload(req, res) {
    const declared = contract.declaredLength(req.headers['content-length']);
    if (Number.isNaN(declared)) return reply.error(res, 400, 'Content-Length must be a non-negative integer');
    if (declared !== null && declared > contract.MAX_UPLOAD_BYTES) return tooLarge(res);
    if (req.expectsContinue) res.writeContinue();
    const tempPath = path.join(uploadDir, `upload-${process.pid}-${crypto.randomUUID()}`);
    res.on('close', () => fs.unlink(tempPath, () => {}));
    const counter = hashingCounter();
    pipeline(req, counter, fs.createWriteStream(tempPath), (err) => {
      if (err instanceof TooLarge) return tooLarge(res);
      if (err) return res.headersSent ? res.destroy() : reply.error(res, 500, `upload failed: ${err.message}`);
      return reply.json(res, { bytes: counter.bytes, sha256: counter.hexDigest() });
    });
    return undefined;
  }

  function stats(res) {
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    reply.json(res, {
      model: 'event-loop',
      threads: contract.threadsFromStatus(status),
      tasks: inFlight,
      heap_bytes: process.memoryUsage().heapUsed,
      ...(db === null ? {} : { pool: db.stats() }),
    });
  }

  function route(req, res, pathname, query) {
    switch (pathname) {
      case '/healthz': return reply.text(res, 'ok');
      case '/plaintext': return reply.text(res, 'Hello, World!');
      case '/json': return reply.json(res, { message: 'Hello, World!' });
      case '/io': return io(res, query);
      case '/db': return fromDb(res, () => db.randomWorld(), '');
      case '/file': return file(res, query);
      case '/upload': return upload(req, res);
      case '/mixed': return mixed(res, query);
      case '/select1': return fromDb(res, () => db.selectOne(), 'SELECT 1: ');
      default: return stats(res);
    }
  }

  async function dispatch(req, res) {
    const [pathname, rawQuery] = contract.splitTarget(req.url);
    const verdict = contract.classify(req.method, pathname);
    if (verdict === 'not-found') return reply.error(res, 404, `no such path: ${pathname}`);
    if (verdict === 'method-not-allowed') {
      const allowed = contract.ROUTES[pathname];
      return reply.error(res, 405, `${pathname} answers ${allowed} only`, { Allow: allowed });
    }
    try {
      return await route(req, res, pathname, new URLSearchParams(rawQuery));
    } catch (err) {
      if (res.headersSent) return res.destroy();
      if (err instanceof contract.BadParameter) return reply.error(res, 400, err.message);
      console.error(`node-http: ${req.method} ${req.url} failed:`, err);
      return reply.error(res, 500, `internal error: ${err.message}`);
    }
  }

  function handle(req, res) {
    inFlight += 1;
    res.on('close', () => { inFlight -= 1; });
    dispatch(req, res);
  }

  return { handle };
}

module.exports = { createApp };
