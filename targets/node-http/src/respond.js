'use strict';
// Writing responses the contract's way: every response carries Server,
// Content-Type and Content-Length (Node adds Date and never chunks a body
// whose length is declared), over HTTP/1.1 and HTTP/2 alike.

const { isHttp2 } = require('./protocol');

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';

function responder(serverName) {
  function send(res, status, contentType, body, extraHeaders) {
    const headers = {
      Server: serverName,
      'Content-Type': contentType,
      'Content-Length': Buffer.byteLength(body),
      ...extraHeaders,
    };
    // HTTP/2 has no Connection header: a stream ends by itself.
    if (isHttp2(res)) delete headers.Connection;
    res.writeHead(status, headers);
    res.end(body);
  }
  return {
    text: (res, body) => send(res, 200, TEXT, body),
    json: (res, value) => send(res, 200, JSON_TYPE, JSON.stringify(value)),
    error: (res, status, message, extraHeaders) =>
      send(res, status, JSON_TYPE, JSON.stringify({ error: message }), extraHeaders),
    // The head of a body that the caller streams itself.
    head: (res, contentType, length) =>
      res.writeHead(200, { Server: serverName, 'Content-Type': contentType, 'Content-Length': length }),
  };
}

// A raw 400 for a request Node's parser rejected, before any `res` exists.
function rawBadRequest(serverName, message) {
  const body = JSON.stringify({ error: message });
  return (
    'HTTP/1.1 400 Bad Request\r\n' +
    `Server: ${serverName}\r\n` +
    `Date: ${new Date().toUTCString()}\r\n` +
    `Content-Type: ${JSON_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

module.exports = { responder, rawBadRequest };
