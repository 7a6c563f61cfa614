<?php
// Availability check of the Swoole targets: exits 0 when the loaded Swoole
// extension uses the socket engine named by the argument (epoll|io_uring).

declare(strict_types=1);

require __DIR__ . '/swoole-engine.php';

$expected = $argv[1] ?? '';
if (!in_array($expected, ['epoll', 'io_uring'], true)) {
    fwrite(STDERR, "usage: php swoole-probe.php epoll|io_uring\n");
    exit(2);
}
$mismatch = Corobench\Swoole\engine_mismatch($expected);
if ($mismatch !== null) {
    fwrite(STDERR, "$mismatch\n");
    exit(1);
}
echo 'swoole ', phpversion('swoole'), " with $expected sockets\n";
