'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');

const contract = require('../src/contract');

test('digest chain matches the reference values of docs/contract.md', () => {
  assert.equal(contract.digestChain(0), '0'.repeat(64));
  assert.equal(contract.digestChain(1), '66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925');
  assert.equal(contract.digestChain(1000), '36c1cb4f826ae42ceba848227e0c5f786178ca9dceca6772e5d728d09c30a2f6');
});

test('intParam takes defaults, bounds and rejects non-integers naming the parameter', () => {
  const q = (s) => new URLSearchParams(s);
  assert.equal(contract.intParam(q(''), 'ms'), 10);
  assert.equal(contract.intParam(q('ms=0'), 'ms'), 0);
  assert.equal(contract.intParam(q('ms=10000'), 'ms'), 10000);
  assert.equal(contract.intParam(q('other=x'), 'kb'), 1);
  assert.equal(contract.intParam(q('iters=1000000'), 'iters'), 1000000);
  for (const bad of ['ms=10001', 'ms=-1', 'ms=', 'ms=1.5', 'ms=abc', 'ms=1e3', 'ms=99999999999999999']) {
    assert.throws(() => contract.intParam(q(bad), 'ms'), { message: 'ms must be an integer in 0..=10000' }, bad);
  }
  assert.throws(() => contract.intParam(q('kb=0'), 'kb'), { message: 'kb must be an integer in 1..=10240' });
});

test('classify tells found, unknown path and wrong method apart', () => {
  assert.equal(contract.classify('GET', '/plaintext'), 'ok');
  assert.equal(contract.classify('POST', '/upload'), 'ok');
  assert.equal(contract.classify('POST', '/plaintext'), 'method-not-allowed');
  assert.equal(contract.classify('GET', '/upload'), 'method-not-allowed');
  assert.equal(contract.classify('GET', '/nope'), 'not-found');
  assert.equal(contract.classify('GET', '/plaintext/'), 'not-found');
});

test('splitTarget separates path and query', () => {
  assert.deepEqual(contract.splitTarget('/io?ms=5&x=1'), ['/io', 'ms=5&x=1']);
  assert.deepEqual(contract.splitTarget('/json'), ['/json', '']);
});

test('declaredLength parses Content-Length or says chunked or malformed', () => {
  assert.equal(contract.declaredLength(undefined), null);
  assert.equal(contract.declaredLength('67108865'), 67108865);
  assert.ok(Number.isNaN(contract.declaredLength('-5')));
  assert.ok(Number.isNaN(contract.declaredLength('12abc')));
});

test('threadsFromStatus reads the Threads line', () => {
  assert.equal(contract.threadsFromStatus('Name:\tnode\nThreads:\t11\nSigQ:\t0/1\n'), 11);
  assert.equal(contract.threadsFromStatus('Name:\tnode\n'), null);
});

test('envInt accepts positive integers and names a bad variable', () => {
  assert.equal(contract.envInt({}, 'WORKERS', 1), 1);
  assert.equal(contract.envInt({ WORKERS: '4' }, 'WORKERS', 1), 4);
  assert.throws(() => contract.envInt({ WORKERS: 'four' }, 'WORKERS', 1), /WORKERS must be a positive integer/);
  assert.throws(() => contract.envInt({ DB_POOL: '0' }, 'DB_POOL', 16), /DB_POOL/);
});

test('listenAddr defaults to loopback and refuses a name', () => {
  assert.equal(contract.listenAddr({}), '127.0.0.1');
  assert.equal(contract.listenAddr({ LISTEN_ADDR: '127.0.0.2' }), '127.0.0.2');
  assert.equal(contract.listenAddr({ LISTEN_ADDR: '0.0.0.0' }), '0.0.0.0');
  assert.throws(() => contract.listenAddr({ LISTEN_ADDR: 'localhost' }), /LISTEN_ADDR must be an IP address/);
});

test('pool stats count the pool\'s acquire and connect events and tell what pg cannot say', () => {
  const { EventEmitter } = require('node:events');
  const { countEvents, poolStats } = require('../src/pool-stats');
  const pool = Object.assign(new EventEmitter(), { totalCount: 2, idleCount: 1, waitingCount: 3 });
  const counted = countEvents(pool);
  pool.emit('connect');
  pool.emit('connect');
  for (let i = 0; i < 5; i += 1) pool.emit('acquire');
  assert.deepEqual(poolStats(pool, 10, counted), {
    max: 10, open: 2, idle: 1, waiting: 3, acquires: 5, new_connections: 2, empty_acquires: null, acquire_wait_us: null,
  });
});

test('/select1 is a GET route', () => {
  assert.equal(contract.classify('GET', '/select1'), 'ok');
  assert.equal(contract.classify('POST', '/select1'), 'method-not-allowed');
});
