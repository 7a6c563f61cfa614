<?php
// The Swoole targets (swoole-epoll, swoole-uring): one process, one thread,
// Swoole\Coroutine\Http\Server inside Co\run(). Every connection is a
// coroutine; waits (Coroutine::sleep, hooked PDO pgsql, hooked file I/O)
// yield to the scheduler instead of blocking the thread. Which I/O engine
// serves the sockets is decided when the extension is built: epoll, or
// io_uring with --enable-iouring --enable-uring-socket. This script is the
// same for both. Connections are accepted by swoole-gate.php, which hands
// them to the server's own connection loop.

declare(strict_types=1);

require __DIR__ . '/contract.php';
require __DIR__ . '/swoole-world.php';
require __DIR__ . '/swoole-engine.php';
require __DIR__ . '/swoole-gate.php';
require __DIR__ . '/swoole-protocols.php';

use Corobench\Contract as C;
use Corobench\Swoole\Gate;
use Corobench\Swoole\ProtocolError;
use Corobench\Swoole\Protocols;
use Swoole\Coroutine;
use Swoole\Coroutine\Http\Server;
use Swoole\Coroutine\Socket;
use Swoole\Event;
use Swoole\Http\Request;
use Swoole\Http\Response;
use Swoole\Process;
use Swoole\Timer;

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';
// How long requests in flight may run on after SIGTERM.
const STOP_GRACE_S = 3.0;
// Swoole compares package_max_length with head + body, and refuses larger
// requests itself (a bare 413) before reading the body: room for the head.
// The first request of a connection is checked exactly by swoole-gate.php.
const HEAD_ALLOWANCE_BYTES = 8192;

final class App
{
    private int $inFlight = 0;

    public function __construct(
        private readonly string $serverName,
        private readonly string $payloadPath,
        private readonly string $uploadDir,
        private readonly World $world,
    ) {
    }

    public function inFlight(): int
    {
        return $this->inFlight;
    }

    public function handle(Request $request, Response $response): void
    {
        $this->inFlight++;
        try {
            $this->dispatch($request, $response);
        } catch (C\BadParameter $e) {
            $this->fail($response, 400, $e->getMessage());
        } catch (\Throwable $e) {
            fwrite(STDERR, "swoole: {$request->server['request_uri']} failed: $e\n");
            $this->fail($response, 500, 'internal error: ' . $e->getMessage());
        } finally {
            $this->inFlight--;
        }
    }

    private function respond(Response $response, int $status, string $contentType, string $body, array $headers = []): void
    {
        $response->status($status);
        $response->header('Server', $this->serverName);
        $response->header('Content-Type', $contentType);
        foreach ($headers as $name => $value) {
            $response->header($name, $value);
        }
        // Swoole adds Date (cached per second) and Content-Length.
        $response->end($body);
    }

    private function fail(Response $response, int $status, string $message, array $headers = []): void
    {
        $this->respond($response, $status, JSON_TYPE, C\error_body($message), $headers);
    }

    private function json(Response $response, array $value): void
    {
        $this->respond($response, 200, JSON_TYPE, json_encode($value));
    }

    private function dispatch(Request $request, Response $response): void
    {
        $path = $request->server['request_uri'] ?? '/';
        $method = $request->server['request_method'] ?? 'GET';
        $query = $request->get ?? [];
        switch (C\route_verdict($method, $path)) {
            case 'not-found':
                $this->fail($response, 404, "no such path: $path");
                return;
            case 'method-not-allowed':
                $allowed = C\ROUTES[$path];
                $this->fail($response, 405, "$path answers $allowed only", ['Allow' => $allowed]);
                return;
        }
        match ($path) {
            '/healthz' => $this->respond($response, 200, TEXT, 'ok'),
            '/plaintext' => $this->respond($response, 200, TEXT, 'Hello, World!'),
            '/json' => $this->json($response, ['message' => 'Hello, World!']),
            '/io' => $this->io($response, $query),
            '/db' => $this->db($response),
            '/file' => $this->file($response, $query),
            '/upload' => $this->upload($request, $response),
            '/mixed' => $this->mixed($response, $query),
            default => $this->respond($response, 200, JSON_TYPE, C\stats_body(
                'coroutine',
                Coroutine::stats()['coroutine_num'],
                memory_get_usage()
            )),
        };
    }

    private function io(Response $response, array $query): void
    {
        $ms = C\int_param($query, 'ms');
        wait_ms($ms);
        $this->json($response, ['message' => 'Hello, World!', 'waited_ms' => $ms]);
    }

    private function mixed(Response $response, array $query): void
    {
        $iters = C\int_param($query, 'iters');
        $ms = C\int_param($query, 'ms');
        // CPU work runs on the one thread and holds every other coroutine back.
        $digest = C\digest_chain($iters);
        wait_ms($ms);
        $this->json($response, ['digest' => $digest, 'iters' => $iters, 'waited_ms' => $ms]);
    }

    private function db(Response $response): void
    {
        try {
            $this->respond($response, 200, JSON_TYPE, C\world_body($this->world->randomRow()));
        } catch (DatabaseUnavailable $e) {
            $this->fail($response, 503, $e->getMessage());
        }
    }

    private function file(Response $response, array $query): void
    {
        $length = C\int_param($query, 'kb') * 1024;
        // A hooked read: the coroutine yields while the file is read.
        $data = @file_get_contents($this->payloadPath, false, null, 0, $length);
        if ($data === false || strlen($data) < $length) {
            $this->fail($response, 500, "cannot read $length bytes of {$this->payloadPath}");
            return;
        }
        $this->respond($response, 200, 'application/octet-stream', $data);
    }

    private function upload(Request $request, Response $response): void
    {
        $declared = C\declared_length($request->header['content-length'] ?? null);
        if ($declared === false) {
            $this->fail($response, 400, 'Content-Length must be a non-negative integer');
            return;
        }
        // Swoole has received the whole body into memory before this runs.
        $body = $request->getContent();
        $body = $body === false ? '' : $body;
        if (($declared ?? 0) > C\MAX_UPLOAD_BYTES || strlen($body) > C\MAX_UPLOAD_BYTES) {
            $this->fail($response, 413, C\too_large_message(), ['Connection' => 'close']);
            return;
        }
        $path = tempnam($this->uploadDir, 'upload-');
        try {
            if (file_put_contents($path, $body) !== strlen($body)) {
                throw new \RuntimeException("cannot write the upload to $path");
            }
            $this->json($response, ['bytes' => strlen($body), 'sha256' => hash('sha256', $body)]);
        } finally {
            @unlink($path);
        }
    }
}

function env_positive_int(string $name, int $default, int $max): int
{
    $raw = getenv($name);
    if ($raw === false || $raw === '') {
        return $default;
    }
    if (preg_match('/\A[0-9]{1,6}\z/', $raw) !== 1 || (int) $raw < 1 || (int) $raw > $max) {
        fwrite(STDERR, "swoole: $name must be an integer in 1..=$max, got '$raw'\n");
        exit(2);
    }
    return (int) $raw;
}

/** LISTEN_ADDR: the IP address to listen on, 127.0.0.1 when unset. */
function env_listen_addr(): string
{
    $raw = trim((string) getenv('LISTEN_ADDR'));
    if ($raw === '') {
        return '127.0.0.1';
    }
    if (filter_var($raw, FILTER_VALIDATE_IP) === false) {
        fwrite(STDERR, "swoole: LISTEN_ADDR must be an IP address such as 127.0.0.1 or 0.0.0.0, got '$raw'\n");
        exit(2);
    }
    return $raw;
}

/** The blocking calls this script makes, turned into coroutine yields. */
function hook_flags(): int
{
    $flags = SWOOLE_HOOK_FILE | SWOOLE_HOOK_SLEEP;
    return defined('SWOOLE_HOOK_PDO_PGSQL') ? $flags | SWOOLE_HOOK_PDO_PGSQL : $flags;
}

/**
 * A coroutine wait of at least $ms; Swoole's timers start at 1 ms, so 0 ms
 * does not wait. A timer can fire some microseconds early by the monotonic
 * clock (seen: 199.97 ms for 200), so the rest is waited for once more.
 */
function wait_ms(int $ms): void
{
    if ($ms <= 0) {
        return;
    }
    $until = hrtime(true) + $ms * 1_000_000;
    Coroutine::sleep($ms / 1000);
    $left = $until - hrtime(true);
    if ($left > 0) {
        Coroutine::sleep(max($left / 1e9, 0.001));
    }
}

/** The socket clients connect to: LISTEN_ADDR:PORT, or why it cannot be had. */
function listen_socket(string $listen, int $port, Protocols $protocols): Socket|string
{
    $domain = filter_var($listen, FILTER_VALIDATE_IP, FILTER_FLAG_IPV6) !== false ? AF_INET6 : AF_INET;
    $socket = new Socket($domain, SOCK_STREAM, 0);
    if (!$socket->bind($listen, $port) || !$socket->listen()) {
        return "cannot serve on $listen:$port: {$socket->errMsg}";
    }
    // Accepted connections inherit these. The body limit is Swoole's own,
    // for the requests the gate does not see.
    $settings = ['package_max_length' => C\MAX_UPLOAD_BYTES + HEAD_ALLOWANCE_BYTES]
        + $protocols->socketSettings(SWOOLE_SSL_TLSv1_2 | SWOOLE_SSL_TLSv1_3);
    if (!$socket->setProtocol($settings)) {
        return "cannot set up $listen:$port for {$protocols->describe()}";
    }
    return $socket;
}

/** Where the HTTP server's own socket goes: a Unix socket nobody connects to. */
function private_socket_path(): string
{
    $dir = getenv('WORK_DIR') ?: sys_get_temp_dir();
    $path = "$dir/swoole-http-" . getmypid() . '.sock';
    // A Unix socket's path is limited to 107 bytes.
    return strlen($path) < 100 ? $path : sys_get_temp_dir() . '/swoole-http-' . getmypid() . '.sock';
}

function serve(Server $server, Gate $gate, Socket $listener, App $app, World $world): ?string
{
    // Server::shutdown() would stop accepting first, but with io_uring
    // sockets (Swoole 6.2.2) the cancelled accept crashes the process. So
    // both engines stop alike: requests in flight get the grace period,
    // then the event loop ends and Co\run() returns.
    $stop = static function () use ($app, $world, $gate): void {
        Process::signal(SIGTERM, null);
        Process::signal(SIGINT, null);
        $gate->stop();
        Coroutine::create(static function () use ($app, $world): void {
            $deadline = microtime(true) + STOP_GRACE_S;
            while ($app->inFlight() > 0 && microtime(true) < $deadline) {
                Coroutine::sleep(0.01);
            }
            $world->close();
            Timer::clearAll();
            // The accept loops are left suspended on purpose: no deadlock report.
            Coroutine::set(['enable_deadlock_check' => false]);
            Event::exit();
        });
    };
    Process::signal(SIGTERM, $stop);
    Process::signal(SIGINT, $stop);
    // start() applies the settings, then waits on the private socket.
    Coroutine::create([$server, 'start']);
    $failure = $gate->acceptLoop($listener);
    if ($failure !== null) {
        // Nothing more can be accepted: end the loop the server waits in too.
        Coroutine::set(['enable_deadlock_check' => false]);
        Event::exit();
    }
    return $failure;
}

function main(): void
{
    // The target's manifest names the socket engine it measures; a build
    // with the other engine would mislabel every figure, so refuse.
    $expected = getenv('SWOOLE_SOCKETS') ?: '';
    $mismatch = $expected === '' ? null : Corobench\Swoole\engine_mismatch($expected);
    if ($mismatch !== null) {
        fwrite(STDERR, "swoole: $mismatch\n");
        exit(2);
    }
    $port = env_positive_int('PORT', 8080, 65535);
    $listen = env_listen_addr();
    try {
        $protocols = Protocols::fromEnvironment(
            getenv('TLS_CERT') ?: null,
            getenv('TLS_KEY') ?: null,
            getenv('HTTP_PROTOCOL') ?: null,
        );
    } catch (ProtocolError $e) {
        fwrite(STDERR, "swoole: {$e->getMessage()}\n");
        exit(2);
    }
    $name = getenv('TARGET_NAME') ?: 'swoole';
    $world = new World(getenv('DATABASE_URL') ?: '', env_positive_int('DB_POOL', 16, 1024));
    $app = new App(
        $name,
        (getenv('DATA_DIR') ?: '.') . '/payload.bin',
        getenv('UPLOAD_DIR') ?: sys_get_temp_dir(),
        $world,
    );
    Coroutine::set(['hook_flags' => hook_flags()]);
    $failure = null;
    $privateSocket = private_socket_path();
    Co\run(static function () use ($listen, $port, $protocols, $name, $app, $world, $privateSocket, &$failure): void {
        $listener = listen_socket($listen, $port, $protocols);
        if (is_string($listener)) {
            $failure = $listener;
            return;
        }
        try {
            @unlink($privateSocket);
            $server = new Server("unix:$privateSocket");
        } catch (\Throwable $e) {
            $failure = "cannot open the HTTP server's private socket $privateSocket: {$e->getMessage()}";
            return;
        }
        $server->set([
            'http_compression' => false,
            'http_parse_post' => false,
            'http_parse_files' => false,
            'http_parse_cookie' => false,
        ]);
        $server->handle('/', [$app, 'handle']);
        fwrite(STDERR, "swoole: $name (Swoole " . SWOOLE_VERSION . ") listening on $listen:$port ({$protocols->describe()})\n");
        // Over TLS the first head is not in the clear before the server's
        // own loop makes the handshake: those connections are not checked.
        $gate = new Gate($server, $name, checkFirstHead: !$protocols->tls());
        $failure = serve($server, $gate, $listener, $app, $world);
    });
    @unlink($privateSocket);
    if ($failure !== null) {
        fwrite(STDERR, "swoole: $failure\n");
        exit(1);
    }
}

main();
