<?php
// The front controller: nginx hands every request to this one script, so
// 404, 405 and 400 come from PHP with the contract's headers. Each request
// runs start to finish in one FPM child process; /io's usleep blocks that
// child, which is this model's truth.

declare(strict_types=1);

require __DIR__ . '/../../php-common/contract.php';

use Corobench\Contract as C;

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';

function respond(int $status, string $contentType, string $body, array $headers = []): void
{
    http_response_code($status);
    header('Server: ' . (getenv('TARGET_NAME') ?: 'php-fpm'));
    header('Content-Type: ' . $contentType);
    // Without it PHP answers chunked.
    header('Content-Length: ' . strlen($body));
    foreach ($headers as $header) {
        header($header);
    }
    echo $body;
}

function fail(int $status, string $message, array $headers = []): void
{
    respond($status, JSON_TYPE, C\error_body($message), $headers);
}

function too_large(): void
{
    fail(413, C\too_large_message(), ['Connection: close']);
}

/** An error nginx detected itself and passed here (see run.sh) to answer the contract's way. */
function nginx_error(int $status): void
{
    if ($status === 413) {
        too_large();
        return;
    }
    $status = $status >= 400 && $status <= 499 ? $status : 400;
    fail($status, "malformed request (nginx answered $status)", ['Connection: close']);
}

function world(): void
{
    $url = getenv('DATABASE_URL');
    if ($url === false || $url === '') {
        fail(503, 'no database: DATABASE_URL is not set');
        return;
    }
    try {
        [$dsn, $user, $password] = C\pdo_target($url);
        // Persistent: each FPM child keeps one connection, so the pool is the children.
        $pdo = new PDO($dsn, $user, $password, [
            PDO::ATTR_PERSISTENT => true,
            PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        ]);
        // One round trip (PQexecParams) instead of prepare, execute, deallocate per request.
        $statement = $pdo->prepare(C\WORLD_QUERY, [PDO::PGSQL_ATTR_DISABLE_PREPARES => true]);
        $statement->execute([C\random_world_id()]);
        $row = $statement->fetch(PDO::FETCH_ASSOC);
    } catch (PDOException | InvalidArgumentException $e) {
        fail(503, 'database unavailable: ' . $e->getMessage());
        return;
    }
    if ($row === false) {
        fail(503, 'database unavailable: the world row is missing');
        return;
    }
    respond(200, JSON_TYPE, C\world_body($row));
}

function file_download(array $query): void
{
    $length = C\int_param($query, 'kb') * 1024;
    $path = (getenv('DATA_DIR') ?: '.') . '/payload.bin';
    $in = @fopen($path, 'rb');
    if ($in === false) {
        fail(500, "cannot open $path");
        return;
    }
    $size = fstat($in)['size'];
    if ($size < $length) {
        fclose($in);
        fail(500, "payload.bin holds $size bytes, fewer than kb asks for");
        return;
    }
    http_response_code(200);
    header('Server: ' . (getenv('TARGET_NAME') ?: 'php-fpm'));
    header('Content-Type: application/octet-stream');
    header('Content-Length: ' . $length);
    $out = fopen('php://output', 'wb');
    stream_copy_to_stream($in, $out, $length);
    fclose($in);
}

function upload(): void
{
    $declared = C\declared_length($_SERVER['CONTENT_LENGTH'] ?? null);
    if ($declared === false) {
        fail(400, 'Content-Length must be a non-negative integer');
        return;
    }
    if ($declared !== null && $declared > C\MAX_UPLOAD_BYTES) {
        too_large();
        return;
    }
    $path = tempnam(getenv('UPLOAD_DIR') ?: sys_get_temp_dir(), 'upload-');
    register_shutdown_function(static fn () => @unlink($path));
    $in = fopen('php://input', 'rb');
    $out = fopen($path, 'wb');
    $hash = hash_init('sha256');
    $bytes = 0;
    while (($chunk = fread($in, 65536)) !== false && $chunk !== '') {
        $bytes += strlen($chunk);
        if ($bytes > C\MAX_UPLOAD_BYTES) {
            too_large();
            return;
        }
        hash_update($hash, $chunk);
        fwrite($out, $chunk);
    }
    fclose($out);
    respond(200, JSON_TYPE, json_encode(['bytes' => $bytes, 'sha256' => hash_final($hash)]));
    // The client has its answer; the file is removed after it (shutdown function).
    fastcgi_finish_request();
}

function route(string $path, array $query): void
{
    switch ($path) {
        case '/healthz':
            respond(200, TEXT, 'ok');
            return;
        case '/plaintext':
            respond(200, TEXT, 'Hello, World!');
            return;
        case '/json':
            respond(200, JSON_TYPE, json_encode(['message' => 'Hello, World!']));
            return;
        case '/io':
            $ms = C\int_param($query, 'ms');
            usleep($ms * 1000);
            respond(200, JSON_TYPE, json_encode(['message' => 'Hello, World!', 'waited_ms' => $ms]));
            return;
        case '/db':
            world();
            return;
        case '/file':
            file_download($query);
            return;
        case '/upload':
            upload();
            return;
        case '/mixed':
            $iters = C\int_param($query, 'iters');
            $ms = C\int_param($query, 'ms');
            $digest = C\digest_chain($iters);
            usleep($ms * 1000);
            respond(200, JSON_TYPE, json_encode(['digest' => $digest, 'iters' => $iters, 'waited_ms' => $ms]));
            return;
        default:
            // One request at a time per process: the request in flight is the only task.
            respond(200, JSON_TYPE, C\stats_body('process-per-request', 1, memory_get_usage()));
    }
}

function main(): void
{
    $path = C\request_path($_SERVER['REQUEST_URI'] ?? '/');
    // Set by nginx's error_page redirect only; a client asking for that URI itself gets a 404.
    if (isset($_SERVER['COROBENCH_NGINX_STATUS']) && $path !== ($_SERVER['DOCUMENT_URI'] ?? '')) {
        nginx_error((int) $_SERVER['COROBENCH_NGINX_STATUS']);
        return;
    }
    $method = $_SERVER['REQUEST_METHOD'] ?? 'GET';
    switch (C\route_verdict($method, $path)) {
        case 'not-found':
            fail(404, "no such path: $path");
            return;
        case 'method-not-allowed':
            $allowed = C\ROUTES[$path];
            fail(405, "$path answers $allowed only", ["Allow: $allowed"]);
            return;
    }
    try {
        route($path, $_GET);
    } catch (C\BadParameter $e) {
        fail(400, $e->getMessage());
    }
}

main();
