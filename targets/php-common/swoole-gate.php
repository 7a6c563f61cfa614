<?php
// Why the Swoole targets accept connections themselves.
//
// The contract answers a Content-Length above 64 MiB with its JSON 413
// before the body is read. Swoole's coroutine HTTP server (6.2) cannot:
// its handler runs only once the whole body is in memory, and the only
// refusal it makes before that is its own, when head + Content-Length
// exceed package_max_length, answered with an empty text/html 413 from
// "swoole-http-server". So the targets accept each connection on a socket
// of their own, peek at the first request's head (nothing is read), refuse
// an oversized one here, and hand every other connection, untouched, to
// the server's own connection loop: the private onAccept() its start()
// runs for each connection it accepts. Requests after the first on a
// keep-alive connection are left to package_max_length.

declare(strict_types=1);

namespace Corobench\Swoole;

use Closure;
use Corobench\Contract as C;
use Swoole\Coroutine;
use Swoole\Coroutine\Http\Server;
use Swoole\Coroutine\Socket;
use Swoole\Coroutine\System;

// A head longer than this is left to Swoole (which refuses heads that do
// not fit its own buffer).
const HEAD_PEEK_BYTES = 8192;
// What the C accept loop does when the process runs out of descriptors.
const ACCEPT_RETRY_S = 1.0;

/** The first request's head in $bytes (through its blank line), or null when it is not all there. */
function first_head(string $bytes): ?string
{
    $end = strpos($bytes, "\r\n\r\n");
    return $end === false ? null : substr($bytes, 0, $end + 4);
}

/** The Content-Length a head declares (PHP_INT_MAX when too long for an int), or null without one. */
function head_content_length(string $head): ?int
{
    if (preg_match('/^content-length[ \t]*:[ \t]*([0-9]+)[ \t]*\r$/mi', $head, $m) !== 1) {
        return null;
    }
    return strlen($m[1]) > 15 ? PHP_INT_MAX : (int) $m[1];
}

/** The contract's 413, as bytes on the wire, closing the connection. */
function too_large_response(string $serverName): string
{
    $body = C\error_body(C\too_large_message());
    return "HTTP/1.1 413 Payload Too Large\r\n"
        . "Server: $serverName\r\n"
        . 'Date: ' . gmdate('D, d M Y H:i:s') . " GMT\r\n"
        . "Content-Type: application/json\r\n"
        . 'Content-Length: ' . strlen($body) . "\r\n"
        . "Connection: close\r\n\r\n"
        . $body;
}

final class Gate
{
    private readonly Closure $serveConnection;
    private bool $running = true;

    /** $server must be started (start() applies its settings); its own socket gets no connection. */
    public function __construct(
        Server $server,
        private readonly string $serverName,
        private readonly bool $checkFirstHead = true,
    ) {
        $this->serveConnection = (new \ReflectionMethod(Server::class, 'onAccept'))->getClosure($server);
    }

    /** Accepts until stop() or a fatal accept error; returns that error, or null. */
    public function acceptLoop(Socket $listener): ?string
    {
        while ($this->running) {
            $connection = $listener->accept(-1);
            if ($connection !== false) {
                Coroutine::create($this->serve(...), $connection);
                continue;
            }
            if (!$this->running || $listener->errCode === SOCKET_ECANCELED) {
                return null;
            }
            if (!in_array($listener->errCode, [SOCKET_EMFILE, SOCKET_ENFILE], true)) {
                return "accept failed: {$listener->errMsg}";
            }
            Coroutine::sleep(ACCEPT_RETRY_S);
        }
        return null;
    }

    public function stop(): void
    {
        $this->running = false;
    }

    private function serve(Socket $connection): void
    {
        $head = $this->checkFirstHead ? $this->peekFirstHead($connection) : null;
        if ($head !== null && (head_content_length($head) ?? 0) > C\MAX_UPLOAD_BYTES) {
            $this->refuse($connection, strlen($head));
            return;
        }
        ($this->serveConnection)($connection);
    }

    /** Waits for the connection's first bytes; the first request's head if it came whole. */
    private function peekFirstHead(Socket $connection): ?string
    {
        if (System::waitEvent($connection->fd, SWOOLE_EVENT_READ) === false) {
            return null;
        }
        $bytes = $connection->peek(HEAD_PEEK_BYTES);
        return is_string($bytes) ? first_head($bytes) : null;
    }

    /** Reads the head (so closing sends FIN, not a reset that could lose the answer), answers, closes. */
    private function refuse(Socket $connection, int $headBytes): void
    {
        $connection->recvAll($headBytes, 1.0);
        $connection->sendAll(too_large_response($this->serverName));
        $connection->shutdown(STREAM_SHUT_WR);
        $connection->close();
    }
}
