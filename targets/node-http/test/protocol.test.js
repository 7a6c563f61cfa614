'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const http2 = require('node:http2');
const https = require('node:https');
const os = require('node:os');
const path = require('node:path');

const { readProtocol, createServer } = require('../src/protocol');

test('readProtocol reads the four protocols', () => {
  const tls = { TLS_CERT: 'c.pem', TLS_KEY: 'k.pem' };
  assert.equal(readProtocol({}).label, 'http/1.1');
  assert.equal(readProtocol({ HTTP_PROTOCOL: 'http/1.1', ...tls }).label, 'tls');
  assert.equal(readProtocol({ HTTP_PROTOCOL: 'h2', ...tls }).label, 'h2');
  assert.equal(readProtocol({ HTTP_PROTOCOL: 'h2c' }).label, 'h2c');
});

test('readProtocol refuses what cannot be served, saying why', () => {
  assert.throws(() => readProtocol({ HTTP_PROTOCOL: 'h3' }), /HTTP_PROTOCOL must be one of http\/1.1, h2, h2c, got "h3"/);
  assert.throws(() => readProtocol({ TLS_CERT: 'c.pem' }), /TLS_CERT and TLS_KEY go together/);
  assert.throws(() => readProtocol({ HTTP_PROTOCOL: 'h2' }), /HTTP_PROTOCOL=h2 is HTTP\/2 over TLS/);
  assert.throws(() => readProtocol({ HTTP_PROTOCOL: 'h2c', TLS_CERT: 'c', TLS_KEY: 'k' }), /h2c is cleartext/);
  const missing = readProtocol({ TLS_CERT: '/nonexistent/c.pem', TLS_KEY: '/nonexistent/k.pem' });
  assert.throws(() => createServer(missing, () => {}), /TLS_CERT "\/nonexistent\/c.pem"/);
});

// A self-signed certificate for 127.0.0.1, made with the openssl command.
function keyPair() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-http-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { certFile, keyFile, ca: fs.readFileSync(certFile) };
}

function listen(protocol) {
  const server = createServer(protocol, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end(`HTTP/${req.httpVersion}`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// The version an HTTP/2 client speaks with the server, and the ALPN agreed.
function h2Get(url, options) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url, options);
    session.on('error', reject);
    const stream = session.request({ ':path': '/' });
    let body = '';
    stream.on('data', (chunk) => { body += chunk; });
    stream.on('end', () => { resolve({ body, alpn: session.alpnProtocol }); session.close(); });
    stream.end();
  });
}

function h1Get(module, url, options) {
  return new Promise((resolve, reject) => {
    module.get(url, options, (res) => {
      const { alpnProtocol: alpn } = res.socket;
      let body = '';
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve({ body, alpn }));
    }).on('error', reject);
  });
}

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

test('each protocol is served as asked', { skip: !hasOpenssl && 'the openssl command makes its certificate' }, async () => {
  const { certFile, keyFile, ca } = keyPair();
  const tls = { certFile, keyFile };
  const agent = (alpn) => new https.Agent({ ca, ALPNProtocols: alpn });

  const cleartext = await listen({ name: 'http/1.1', tls: null });
  const url = (server, scheme) => `${scheme}://127.0.0.1:${server.address().port}/`;
  assert.equal((await h1Get(http, url(cleartext, 'http'), {})).body, 'HTTP/1.1');

  const overTls = await listen({ name: 'http/1.1', tls });
  const tlsAnswer = await h1Get(https, url(overTls, 'https'), { agent: agent(['h2', 'http/1.1']) });
  assert.deepEqual(tlsAnswer, { body: 'HTTP/1.1', alpn: 'http/1.1' });

  const h2 = await listen({ name: 'h2', tls });
  assert.deepEqual(await h2Get(url(h2, 'https'), { ca }), { body: 'HTTP/2.0', alpn: 'h2' });
  const h1OnH2 = await h1Get(https, url(h2, 'https'), { agent: agent(['http/1.1']) });
  assert.deepEqual(h1OnH2, { body: 'HTTP/1.1', alpn: 'http/1.1' });

  const h2c = await listen({ name: 'h2c', tls: null });
  assert.equal((await h2Get(url(h2c, 'http'), {})).body, 'HTTP/2.0');

  for (const server of [cleartext, overTls, h2, h2c]) server.close();
});
