<?php
// Checks the pure helpers shared by the php-fpm and Swoole targets: the
// contract's parameters, routes and digests, and the Swoole engine probe.
// Run: php targets/php-common/tests/contract_test.php (exits 1 on a failure).

declare(strict_types=1);

require __DIR__ . '/../contract.php';
require __DIR__ . '/../swoole-engine.php';
require __DIR__ . '/../swoole-gate.php';
require __DIR__ . '/../swoole-protocols.php';

use Corobench\Contract as C;

$passed = 0;
$failed = 0;

function check(string $name, bool $ok): void
{
    global $passed, $failed;
    $ok ? $passed++ : $failed++;
    if (!$ok) {
        fwrite(STDERR, "FAIL: $name\n");
    }
}

function bad_parameter_message(array $query, string $name): ?string
{
    try {
        C\int_param($query, $name);
        return null;
    } catch (C\BadParameter $e) {
        return $e->getMessage();
    }
}

check('digest of 0 iterations is 64 zeros', C\digest_chain(0) === str_repeat('0', 64));
check('digest of 1', C\digest_chain(1) === '66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925');
check('digest of 1000', C\digest_chain(1000) === '36c1cb4f826ae42ceba848227e0c5f786178ca9dceca6772e5d728d09c30a2f6');

check('ms defaults to 10', C\int_param([], 'ms') === 10);
check('kb defaults to 1', C\int_param(['other' => 'x'], 'kb') === 1);
check('iters defaults to 1000', C\int_param([], 'iters') === 1000);
check('ms bounds are inclusive', C\int_param(['ms' => '0'], 'ms') === 0 && C\int_param(['ms' => '10000'], 'ms') === 10000);
foreach (['10001', '-1', '', '1.5', 'abc', '1e3', ' 5', '0x10', '9999999999999'] as $bad) {
    check("ms=$bad is rejected naming ms", bad_parameter_message(['ms' => $bad], 'ms') === 'ms must be an integer in 0..=10000');
}
check('ms[]=1 (an array) is rejected', bad_parameter_message(['ms' => ['1']], 'ms') !== null);
check('kb=0 is rejected naming kb', bad_parameter_message(['kb' => '0'], 'kb') === 'kb must be an integer in 1..=10240');

check('known path and method', C\route_verdict('GET', '/plaintext') === 'ok' && C\route_verdict('POST', '/upload') === 'ok');
check('wrong method', C\route_verdict('POST', '/plaintext') === 'method-not-allowed' && C\route_verdict('GET', '/upload') === 'method-not-allowed');
check('unknown path', C\route_verdict('GET', '/nope') === 'not-found' && C\route_verdict('GET', '/json/') === 'not-found');
check('request path drops the query', C\request_path('/io?ms=5') === '/io' && C\request_path('/json') === '/json');

check('no Content-Length means chunked', C\declared_length(null) === null);
check('Content-Length parsed', C\declared_length('67108865') === 67108865);
check('malformed Content-Length', C\declared_length('-5') === false && C\declared_length('12abc') === false);

check('threads parsed', C\threads_from_status("Name:\tphp\nThreads:\t3\nSigQ:\t0/1\n") === 3);
check('threads missing', C\threads_from_status("Name:\tphp\n") === null);

[$dsn, $user, $password] = C\pdo_target('postgres://bench@127.0.0.1:5433/world_db');
check('DATABASE_URL to a PDO dsn', $dsn === 'pgsql:host=127.0.0.1;port=5433;dbname=world_db;connect_timeout=5');
check('DATABASE_URL user, no password', $user === 'bench' && $password === null);
[, $user, $password] = C\pdo_target('postgresql://a%40b:s3cret@localhost/db');
check('DATABASE_URL decodes user and password', $user === 'a@b' && $password === 's3cret');
try {
    C\pdo_target('mysql://x@h/db');
    check('a non-postgres URL is rejected', false);
} catch (InvalidArgumentException $e) {
    check('a non-postgres URL is rejected', str_contains($e->getMessage(), 'DATABASE_URL'));
}

check('error body', C\error_body('ms must be an integer') === '{"error":"ms must be an integer"}');
check('error body survives invalid UTF-8', is_string(C\error_body("no such path: /\xff")));
check('world body is camel case', C\world_body(['id' => '7', 'randomnumber' => '42']) === '{"id":7,"randomNumber":42}');
$stats = json_decode(C\stats_body('coroutine', 3, null), true);
check('stats body', $stats['model'] === 'coroutine' && $stats['tasks'] === 3 && $stats['heap_bytes'] === null && $stats['threads'] >= 1);

$epollInfo = "swoole\n\nSwoole => enabled\nVersion => 6.2.2\nepoll => enabled\ncoroutine_pgsql => enabled\n";
$uringInfo = "swoole\n\nSwoole => enabled\nio_uring => enabled\nuring_socket => enabled\n";
$fileOnlyUring = "swoole\n\nSwoole => enabled\nio_uring => enabled\n";
check('an epoll build is epoll', Corobench\Swoole\engine_from_info($epollInfo) === 'epoll');
check('io_uring with uring sockets is io_uring', Corobench\Swoole\engine_from_info($uringInfo) === 'io_uring');
check('io_uring for files only still has epoll sockets', Corobench\Swoole\engine_from_info($fileOnlyUring) === 'epoll');
if (!extension_loaded('swoole')) {
    check('without the extension there is no engine', Corobench\Swoole\socket_engine() === null);
    check('without the extension no target can run', str_contains((string) Corobench\Swoole\engine_mismatch('epoll'), 'not loaded'));
}

$head = "POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 67108865\r\n\r\n";
check('the first head ends at its blank line', Corobench\Swoole\first_head($head . 'body bytes') === $head);
check('a head not all there is no head', Corobench\Swoole\first_head("POST /upload HTTP/1.1\r\nContent-Le") === null);
check('Content-Length from a head', Corobench\Swoole\head_content_length($head) === 67108865);
check('Content-Length in any case and spacing', Corobench\Swoole\head_content_length("POST / HTTP/1.1\r\ncontent-length:\t12 \r\n\r\n") === 12);
check('no Content-Length', Corobench\Swoole\head_content_length("GET / HTTP/1.1\r\nX-Content-Length: 9\r\n\r\n") === null);
check('a Content-Length too long for an int is huge', Corobench\Swoole\head_content_length("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n") === PHP_INT_MAX);
$refusal = Corobench\Swoole\too_large_response('swoole-epoll');
[$refusalHead, $refusalBody] = explode("\r\n\r\n", $refusal, 2);
check('the gate\'s 413 is the contract\'s', str_starts_with($refusal, "HTTP/1.1 413 ") && str_contains($refusalHead, "\r\nServer: swoole-epoll\r\n")
    && str_contains($refusalHead, "\r\nContent-Type: application/json\r\n") && str_contains($refusalHead, "\r\nContent-Length: " . strlen($refusalBody) . "\r\n")
    && preg_match('/\r\nDate: [A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT\r\n/', $refusalHead) === 1
    && json_decode($refusalBody, true) === ['error' => C\too_large_message()]);

/** The ProtocolError message for this environment, or null when it is served. */
function protocol_error(?string $cert, ?string $key, ?string $protocol): ?string
{
    try {
        Corobench\Swoole\Protocols::fromEnvironment($cert, $key, $protocol);
        return null;
    } catch (Corobench\Swoole\ProtocolError $e) {
        return $e->getMessage();
    }
}

$plain = Corobench\Swoole\Protocols::fromEnvironment(null, '', null);
check('nothing set is cleartext HTTP/1.1', $plain->protocol === 'http/1.1' && !$plain->tls() && $plain->socketSettings(0) === []);
check('h2c is cleartext HTTP/2', Corobench\Swoole\Protocols::fromEnvironment(null, null, 'h2c')->socketSettings(0) === ['open_http2_protocol' => true]);
check('an unknown protocol names HTTP_PROTOCOL', str_contains((string) protocol_error(null, null, 'h3'), 'HTTP_PROTOCOL'));
check('h2 needs TLS', str_contains((string) protocol_error(null, null, 'h2'), 'TLS_CERT and TLS_KEY'));
check('a certificate without a key', str_contains((string) protocol_error('/etc/hostname', null, null), 'go together'));
check('an unreadable certificate names it', str_contains((string) protocol_error('/nonexistent/cert.pem', '/nonexistent/key.pem', null), '/nonexistent/cert.pem'));
if (function_exists('openssl_pkey_new')) {
    $pem = sys_get_temp_dir() . '/contract-test-' . getmypid();
    $key = openssl_pkey_new(['private_key_type' => OPENSSL_KEYTYPE_EC, 'curve_name' => 'prime256v1']);
    $otherKey = openssl_pkey_new(['private_key_type' => OPENSSL_KEYTYPE_EC, 'curve_name' => 'prime256v1']);
    $certificate = openssl_csr_sign(openssl_csr_new(['commonName' => 'localhost'], $key), null, $key, 1);
    openssl_x509_export_to_file($certificate, "$pem.cert");
    openssl_pkey_export_to_file($key, "$pem.key");
    openssl_pkey_export_to_file($otherKey, "$pem.other");
    $tls = Corobench\Swoole\Protocols::fromEnvironment("$pem.cert", "$pem.key", 'h2');
    $settings = $tls->socketSettings(12);
    check('TLS serves h2 beside http/1.1', $tls->tls() && $settings['open_ssl'] === true && $settings['open_http2_protocol'] === true
        && $settings['ssl_cert_file'] === "$pem.cert" && $settings['ssl_key_file'] === "$pem.key" && $settings['ssl_protocols'] === 12);
    check('h2c over TLS is refused', str_contains((string) protocol_error("$pem.cert", "$pem.key", 'h2c'), 'unset TLS_CERT'));
    check('a key that is not the certificate\'s', str_contains((string) protocol_error("$pem.cert", "$pem.other", null), 'is not the key'));
    check('a key file that holds a certificate', str_contains((string) protocol_error("$pem.cert", "$pem.cert", null), 'no PEM private key'));
    array_map('unlink', ["$pem.cert", "$pem.key", "$pem.other"]);
}

echo "$passed passed, $failed failed\n";
exit($failed === 0 ? 0 : 1);
