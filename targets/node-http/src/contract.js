'use strict';
// The pure parts of the HTTP contract (docs/contract.md): parameter parsing,
// the /mixed digest chain, the route table. No I/O here, so `node --test`
// can check it without a server.

const crypto = require('node:crypto');

const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

// name -> [min, max, default] for every query parameter the contract knows.
const PARAMETERS = {
  ms: [0, 10000, 10],
  kb: [1, 10240, 1],
  iters: [0, 1000000, 1000],
};

// path -> the one method it answers.
const ROUTES = {
  '/healthz': 'GET',
  '/plaintext': 'GET',
  '/json': 'GET',
  '/io': 'GET',
  '/db': 'GET',
  '/file': 'GET',
  '/upload': 'POST',
  '/mixed': 'GET',
  '/stats': 'GET',
  '/select1': 'GET',
};

class BadParameter extends Error {}

// Splits a request target into its path and raw query string.
function splitTarget(target) {
  const at = target.indexOf('?');
  return at < 0 ? [target, ''] : [target.slice(0, at), target.slice(at + 1)];
}

// The integer value of parameter `name` in `query` (a URLSearchParams), its
// default when absent; throws BadParameter naming it when malformed.
function intParam(query, name) {
  const [min, max, fallback] = PARAMETERS[name];
  const raw = query.get(name);
  if (raw === null) return fallback;
  const value = /^-?\d{1,12}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new BadParameter(`${name} must be an integer in ${min}..=${max}`);
  }
  return value;
}

// h0 = 32 zero bytes, h(k+1) = SHA-256(h(k)); the lower-case hex of h(iters).
function digestChain(iters) {
  let digest = Buffer.alloc(32);
  for (let i = 0; i < iters; i += 1) {
    digest = crypto.createHash('sha256').update(digest).digest();
  }
  return digest.toString('hex');
}

// What a request for `method` `path` resolves to: 'ok', 'not-found' or
// 'method-not-allowed'.
function classify(method, path) {
  const allowed = ROUTES[path];
  if (allowed === undefined) return 'not-found';
  return allowed === method ? 'ok' : 'method-not-allowed';
}

// The declared body length of an upload: a number, null when the body is
// chunked, or NaN when the header is malformed.
function declaredLength(header) {
  if (header === undefined) return null;
  return /^\d{1,15}$/.test(header) ? Number(header) : NaN;
}

// Threads of this process from the text of /proc/self/status.
function threadsFromStatus(statusText) {
  const match = /^Threads:\s+(\d+)$/m.exec(statusText);
  return match ? Number(match[1]) : null;
}

// A positive integer from the environment, or `fallback` when unset; throws
// naming the variable when it is set to anything else.
function envInt(env, name, fallback) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1) {
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

// LISTEN_ADDR: the IP address to listen on, 127.0.0.1 when unset.
function listenAddr(env) {
  const raw = (env.LISTEN_ADDR || '').trim();
  if (raw === '') return '127.0.0.1';
  if (require('node:net').isIP(raw) === 0) {
    throw new Error(`LISTEN_ADDR must be an IP address such as 127.0.0.1 or 0.0.0.0, got ${JSON.stringify(raw)}`);
  }
  return raw;
}

module.exports = {
  MAX_UPLOAD_BYTES,
  listenAddr,
  ROUTES,
  BadParameter,
  splitTarget,
  intParam,
  digestChain,
  classify,
  declaredLength,
  threadsFromStatus,
  envInt,
};
