<?php
// The pure parts of the HTTP contract (docs/contract.md), shared by the
// php-fpm and Swoole targets: parameter parsing, routes, the /mixed digest
// chain, DATABASE_URL parsing. No I/O here, so tests/contract_test.php can
// check it without a server.

declare(strict_types=1);

namespace Corobench\Contract;

const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;
const WORLD_ROWS = 10000;
const WORLD_QUERY = 'SELECT id, randomnumber FROM world WHERE id = ?';

// name => [min, max, default] for every query parameter the contract knows.
const PARAMETERS = [
    'ms' => [0, 10000, 10],
    'kb' => [1, 10240, 1],
    'iters' => [0, 1000000, 1000],
];

// path => the one method it answers.
const ROUTES = [
    '/healthz' => 'GET',
    '/plaintext' => 'GET',
    '/json' => 'GET',
    '/io' => 'GET',
    '/db' => 'GET',
    '/file' => 'GET',
    '/upload' => 'POST',
    '/mixed' => 'GET',
    '/stats' => 'GET',
];

/** A query parameter that is not an integer in its range; the message names it. */
final class BadParameter extends \InvalidArgumentException
{
}

/** The value of parameter $name in $query (as PHP parsed it), its default when absent. */
function int_param(array $query, string $name): int
{
    [$min, $max, $default] = PARAMETERS[$name];
    if (!array_key_exists($name, $query)) {
        return $default;
    }
    $raw = $query[$name];
    if (!is_string($raw) || preg_match('/\A-?[0-9]{1,12}\z/', $raw) !== 1
        || (int) $raw < $min || (int) $raw > $max) {
        throw new BadParameter("$name must be an integer in $min..=$max");
    }
    return (int) $raw;
}

/** h0 = 32 zero bytes, h(k+1) = SHA-256(h(k)); the lower-case hex of h(iters). */
function digest_chain(int $iters): string
{
    $digest = str_repeat("\0", 32);
    for ($i = 0; $i < $iters; $i++) {
        $digest = hash('sha256', $digest, true);
    }
    return bin2hex($digest);
}

/** 'ok', 'not-found' or 'method-not-allowed' for a request of $method on $path. */
function route_verdict(string $method, string $path): string
{
    $allowed = ROUTES[$path] ?? null;
    if ($allowed === null) {
        return 'not-found';
    }
    return $allowed === $method ? 'ok' : 'method-not-allowed';
}

/** The path of a request target, without its query string. */
function request_path(string $target): string
{
    $at = strpos($target, '?');
    return $at === false ? $target : substr($target, 0, $at);
}

/**
 * The declared length of an upload: an int, null when absent (chunked);
 * false when the header is malformed.
 */
function declared_length(?string $header): int|null|false
{
    if ($header === null || $header === '') {
        return null;
    }
    return preg_match('/\A[0-9]{1,15}\z/', $header) === 1 ? (int) $header : false;
}

/** Why an upload above MAX_UPLOAD_BYTES is refused (the 413's message). */
function too_large_message(): string
{
    return 'the body must be at most ' . MAX_UPLOAD_BYTES . ' bytes';
}

/** Threads of a process from the text of /proc/<pid>/status. */
function threads_from_status(string $status): ?int
{
    return preg_match('/^Threads:\s+([0-9]+)$/m', $status, $m) === 1 ? (int) $m[1] : null;
}

/** Threads of this process. */
function current_threads(): ?int
{
    $status = @file_get_contents('/proc/self/status');
    return $status === false ? null : threads_from_status($status);
}

/**
 * [dsn, user, password] for PDO from postgres://USER[:PASSWORD]@HOST[:PORT]/DB.
 * @throws \InvalidArgumentException naming what is wrong.
 */
function pdo_target(string $url): array
{
    $parts = parse_url($url);
    if ($parts === false || !in_array($parts['scheme'] ?? '', ['postgres', 'postgresql'], true)
        || !isset($parts['host'])) {
        throw new \InvalidArgumentException(
            'DATABASE_URL must look like postgres://USER@HOST:PORT/DB'
        );
    }
    $database = ltrim($parts['path'] ?? '', '/');
    $dsn = sprintf(
        'pgsql:host=%s;port=%d;dbname=%s;connect_timeout=5',
        $parts['host'],
        $parts['port'] ?? 5432,
        $database === '' ? 'postgres' : rawurldecode($database)
    );
    $user = isset($parts['user']) ? rawurldecode($parts['user']) : null;
    $password = isset($parts['pass']) ? rawurldecode($parts['pass']) : null;
    return [$dsn, $user, $password];
}

/** A JSON error body: {"error":"..."}. */
function error_body(string $message): string
{
    return json_encode(['error' => $message], JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE);
}

/** The body of /stats. */
function stats_body(string $model, ?int $tasks, ?int $heapBytes): string
{
    return json_encode([
        'model' => $model,
        'threads' => current_threads(),
        'tasks' => $tasks,
        'heap_bytes' => $heapBytes,
    ]);
}

/** A uniformly random id of a world row. */
function random_world_id(): int
{
    return random_int(1, WORLD_ROWS);
}

/** The /db body for a fetched row, camel case as the contract spells it. */
function world_body(array $row): string
{
    return json_encode(['id' => (int) $row['id'], 'randomNumber' => (int) $row['randomnumber']]);
}
