'use strict';
// What a trial speaks (docs/contract.md, "Protocols"): HTTP_PROTOCOL, and
// TLS_CERT/TLS_KEY when it runs over TLS; and the node server for each.

const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const http2 = require('node:http2');

const PROTOCOLS = ['http/1.1', 'h2', 'h2c'];

// { name, tls: { cert, key } | null, label } from the environment; throws
// with a message saying what to fix.
function readProtocol(env) {
  const name = (env.HTTP_PROTOCOL || '').trim() || 'http/1.1';
  if (!PROTOCOLS.includes(name)) {
    throw new Error(`HTTP_PROTOCOL must be one of ${PROTOCOLS.join(', ')}, got ${JSON.stringify(name)}`);
  }
  const certFile = env.TLS_CERT || '';
  const keyFile = env.TLS_KEY || '';
  if (Boolean(certFile) !== Boolean(keyFile)) {
    throw new Error('TLS_CERT and TLS_KEY go together: set both to serve HTTPS, or neither');
  }
  const tls = certFile ? { certFile, keyFile } : null;
  if (name === 'h2' && !tls) {
    throw new Error('HTTP_PROTOCOL=h2 is HTTP/2 over TLS: set TLS_CERT and TLS_KEY, or use h2c for cleartext HTTP/2');
  }
  if (name === 'h2c' && tls) {
    throw new Error('HTTP_PROTOCOL=h2c is cleartext HTTP/2: unset TLS_CERT and TLS_KEY, or use h2 over TLS');
  }
  const label = name === 'http/1.1' && tls ? 'tls' : name;
  return { name, tls, label };
}

// The key pair's PEM text, read once at start so that a bad file stops the
// process before it listens.
function readKeyPair(tls) {
  const read = (what, file) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new Error(`${what} ${JSON.stringify(file)}: ${err.message}`);
    }
  };
  return { cert: read('TLS_CERT', tls.certFile), key: read('TLS_KEY', tls.keyFile), minVersion: 'TLSv1.2' };
}

// The server for `protocol`: node:http in cleartext, node:https offering
// only http/1.1 by ALPN (a TLS trial measures HTTP/1.1), node:http2 over TLS
// with HTTP/1.1 allowed beside h2, node:http2 for h2c by prior knowledge.
// All of them call `handler(req, res)` with the same request/response API.
function createServer(protocol, handler) {
  if (protocol.name === 'h2c') return http2.createServer({}, handler);
  if (!protocol.tls) return http.createServer(handler);
  const pair = readKeyPair(protocol.tls);
  if (protocol.name === 'h2') return http2.createSecureServer({ ...pair, allowHTTP1: true }, handler);
  return https.createServer({ ...pair, ALPNProtocols: ['http/1.1'] }, handler);
}

// Whether `res` answers an HTTP/2 stream, where connection-specific
// headers are forbidden.
function isHttp2(res) {
  return res instanceof http2.Http2ServerResponse;
}

module.exports = { readProtocol, createServer, isHttp2 };
