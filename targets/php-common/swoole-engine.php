<?php
// Which socket engine the loaded Swoole extension was built with. io_uring
// sockets are a build option (--enable-uring-socket), not a runtime switch,
// so one extension can serve only one of the two Swoole targets.

declare(strict_types=1);

namespace Corobench\Swoole;

/** 'io_uring', 'epoll', or null when the swoole extension is not loaded. */
function socket_engine(): ?string
{
    if (!extension_loaded('swoole')) {
        return null;
    }
    ob_start();
    (new \ReflectionExtension('swoole'))->info();
    $info = (string) ob_get_clean();
    return engine_from_info($info);
}

/** The engine named by the text of `php --ri swoole`. */
function engine_from_info(string $info): string
{
    $uring = preg_match('/^io_uring => enabled$/m', $info) === 1
        && preg_match('/^uring_socket => enabled$/m', $info) === 1;
    return $uring ? 'io_uring' : 'epoll';
}

/** Why this process cannot serve as the $expected engine's target, or null when it can. */
function engine_mismatch(string $expected): ?string
{
    $actual = socket_engine();
    if ($actual === null) {
        return 'the swoole extension is not loaded (php --ri swoole fails)';
    }
    if ($actual !== $expected) {
        return "this target measures Swoole with $expected sockets, but the loaded extension was built with $actual sockets";
    }
    return null;
}
