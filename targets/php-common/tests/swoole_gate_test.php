<?php
// The Swoole targets' accept gate (swoole-gate.php) on the loaded Swoole
// build, over loopback: an oversized first request gets the contract's 413
// with its body never sent; everything else reaches the server's handler,
// on kept-alive connections too. Run through swoole-php.sh with the build
// to test: sh ../swoole-php.sh epoll tests/swoole_gate_test.php

declare(strict_types=1);

require __DIR__ . '/../contract.php';
require __DIR__ . '/../swoole-gate.php';

use Corobench\Swoole\Gate;
use Swoole\Coroutine;
use Swoole\Coroutine\Http\Server;
use Swoole\Coroutine\Socket;
use Swoole\Event;

if (!extension_loaded('swoole')) {
    fwrite(STDERR, "swoole_gate_test: the swoole extension is not loaded\n");
    exit(2);
}

$failed = 0;

function check(string $name, bool $ok, string $detail = ''): void
{
    global $failed;
    if (!$ok) {
        $failed++;
        fwrite(STDERR, "FAIL: $name" . ($detail === '' ? '' : ": $detail") . "\n");
    }
}

/** One response read from $socket: [status, head, body], or null when the connection ended first. */
function read_response(Socket $socket): ?array
{
    $bytes = '';
    while (($end = strpos($bytes, "\r\n\r\n")) === false) {
        $chunk = $socket->recv(65536, 5.0);
        if ($chunk === '' || $chunk === false) {
            return null;
        }
        $bytes .= $chunk;
    }
    $head = substr($bytes, 0, $end);
    $length = preg_match('/^content-length: *([0-9]+)\r?$/mi', $head, $m) === 1 ? (int) $m[1] : 0;
    $body = substr($bytes, $end + 4);
    while (strlen($body) < $length) {
        $chunk = $socket->recv(65536, 5.0);
        if ($chunk === '' || $chunk === false) {
            return null;
        }
        $body .= $chunk;
    }
    return [(int) substr($head, 9, 3), $head, $body];
}

function connect(int $port): Socket
{
    $socket = new Socket(AF_INET, SOCK_STREAM, 0);
    $socket->connect('127.0.0.1', $port, 5.0);
    return $socket;
}

function exercise(int $port): void
{
    $client = connect($port);
    $client->sendAll("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " . (Corobench\Contract\MAX_UPLOAD_BYTES + 1) . "\r\n\r\n");
    $response = read_response($client);
    check('an oversized first request is refused unread', $response !== null && $response[0] === 413
        && str_contains($response[1], "\r\nServer: gate-test\r\n")
        && json_decode($response[2], true) === ['error' => Corobench\Contract\too_large_message()], var_export($response, true));
    check('and the connection is closed', $client->recv(1, 5.0) === '');

    $client = connect($port);
    $client->sendAll("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello");
    $response = read_response($client);
    check('a small upload reaches the handler', $response !== null && $response[2] === 'POST /upload 5', var_export($response, true));
    $client->sendAll("GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    $response = read_response($client);
    check('the connection is kept alive by the server', $response !== null && $response[2] === 'GET /plaintext 0', var_export($response, true));

    $client = connect($port);
    $client->sendAll("GET /json HTTP/1.1\r\nHo");
    Coroutine::sleep(0.05);
    $client->sendAll("st: 127.0.0.1\r\n\r\n");
    $response = read_response($client);
    check('a head that comes in pieces is served', $response !== null && $response[2] === 'GET /json 0', var_export($response, true));
}

$privateSocket = sys_get_temp_dir() . '/swoole-gate-test-' . getmypid() . '.sock';
// Nothing here blocks: no runtime hooks (nor their warnings for missing extensions).
Coroutine::set(['hook_flags' => 0]);
Co\run(static function () use ($privateSocket): void {
    $listener = new Socket(AF_INET, SOCK_STREAM, 0);
    check('listen on a free port', $listener->bind('127.0.0.1', 0) && $listener->listen());
    $port = $listener->getsockname()['port'];
    $server = new Server("unix:$privateSocket");
    $server->set(['http_compression' => false]);
    $server->handle('/', static function ($request, $response): void {
        $body = $request->getContent();
        $response->end("{$request->server['request_method']} {$request->server['request_uri']} " . strlen($body === false ? '' : $body));
    });
    Coroutine::create([$server, 'start']);
    $gate = new Gate($server, 'gate-test');
    Coroutine::create(static function () use ($gate, $port): void {
        exercise($port);
        $gate->stop();
        Coroutine::set(['enable_deadlock_check' => false]);
        Event::exit();
    });
    $gate->acceptLoop($listener);
});
@unlink($privateSocket);

if ($failed > 0) {
    exit(1);
}
echo 'swoole_gate_test: ok (Swoole ' . SWOOLE_VERSION . ")\n";
