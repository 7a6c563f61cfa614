'use strict';
// Entry point: one process serving node:http on one event loop, or with
// WORKERS > 1 a node:cluster primary that forks that many such processes
// sharing the listening socket.

const cluster = require('node:cluster');

const contract = require('./contract');
const { readProtocol, createServer } = require('./protocol');
const { createApp } = require('./app');
const { createDb } = require('./db');
const { rawBadRequest } = require('./respond');

// How long a stopping process waits for requests in flight before it exits.
const STOP_GRACE_MS = 2000;
const KEEP_ALIVE_MS = 75000;

function readConfig(env) {
  const port = contract.envInt(env, 'PORT', 0);
  if (port > 65535) throw new Error(`PORT must be at most 65535, got ${port}`);
  return {
    port,
    listen: contract.listenAddr(env),
    serverName: env.TARGET_NAME || 'node-http',
    dataDir: env.DATA_DIR || '.',
    uploadDir: env.UPLOAD_DIR || require('node:os').tmpdir(),
    databaseUrl: env.DATABASE_URL || '',
    workers: contract.envInt(env, 'WORKERS', 1),
    dbPool: contract.envInt(env, 'DB_POOL', 16),
    protocol: readProtocol(env),
  };
}

function serve(config) {
  const db = createDb(config.databaseUrl, config.dbPool);
  const app = createApp({ ...config, db });
  let server;
  try {
    server = createServer(config.protocol, app.handle);
  } catch (err) {
    console.error(`node-http: ${err.message}`);
    process.exit(2);
  }
  // Idle keep-alive connections stay 75 s, as nginx's do in front of
  // php-fpm: Node's 5 s default closed the first of 5,000 idle TLS
  // connections while the last were still shaking hands, so memory per
  // connection over TLS measured none of them.
  if ('keepAliveTimeout' in server) server.keepAliveTimeout = KEEP_ALIVE_MS;
  // HTTP/2 sessions, closed with a GOAWAY when the process stops.
  const sessions = new Set();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('checkContinue', (req, res) => {
    req.expectsContinue = true;
    app.handle(req, res);
  });
  server.on('clientError', (err, socket) => {
    if (socket.writable && !socket.destroyed) socket.end(rawBadRequest(config.serverName, `malformed request: ${err.code}`));
    else socket.destroy();
  });
  server.on('error', (err) => {
    console.error(`node-http: cannot serve on ${config.listen}:${config.port}: ${err.message}`);
    process.exit(1);
  });
  server.listen(config.port, config.listen, () => {
    const { port } = server.address();
    console.error(`node-http: pid ${process.pid} listening on ${config.listen}:${port} (${config.protocol.label})`);
  });
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    if (server.closeIdleConnections) server.closeIdleConnections();
    for (const session of sessions) session.close();
    if (db) db.end().catch(() => {});
    setTimeout(() => process.exit(0), STOP_GRACE_MS).unref();
  });
}

function supervise(config) {
  let stopping = false;
  for (let i = 0; i < config.workers; i += 1) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
      return;
    }
    console.error(`node-http: worker ${worker.process.pid} died (${signal || code}); starting another`);
    cluster.fork();
  });
  process.once('SIGTERM', () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), STOP_GRACE_MS + 1000).unref();
  });
}

function main() {
  let config;
  try {
    config = readConfig(process.env);
  } catch (err) {
    console.error(`node-http: ${err.message}`);
    process.exit(2);
  }
  if (config.workers > 1 && cluster.isPrimary) supervise(config);
  else serve(config);
}

main();
