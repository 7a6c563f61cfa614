<?php
// /db for the Swoole targets: a pool of coroutine PDO pgsql connections
// (Swoole\Database\PDOPool). With SWOOLE_HOOK_PDO_PGSQL a query yields the
// coroutine while PostgreSQL answers. A build without coroutine pgsql would
// block the whole thread on every query, so /db refuses (503) instead.

declare(strict_types=1);

use Corobench\Contract as C;
use Swoole\Database\PDOConfig;
use Swoole\Database\PDOPool;

final class DatabaseUnavailable extends \RuntimeException
{
}

final class World
{
    // How long a request waits for a free connection.
    private const ACQUIRE_TIMEOUT_S = 5.0;

    private ?PDOPool $pool = null;
    private string $unavailable = '';

    public function __construct(string $databaseUrl, int $poolSize)
    {
        if ($databaseUrl === '') {
            $this->unavailable = 'no database: DATABASE_URL is not set';
        } elseif (!defined('SWOOLE_HOOK_PDO_PGSQL')) {
            $this->unavailable = 'this Swoole build has no coroutine pgsql (build it with --enable-swoole-pgsql)';
        } else {
            try {
                $this->pool = new PDOPool(self::config($databaseUrl), $poolSize);
            } catch (\InvalidArgumentException $e) {
                $this->unavailable = 'no database: ' . $e->getMessage();
            }
        }
    }

    private static function config(string $databaseUrl): PDOConfig
    {
        $parts = parse_url($databaseUrl);
        C\pdo_target($databaseUrl); // validates, throwing a message naming DATABASE_URL
        return (new PDOConfig())
            ->withDriver('pgsql')
            ->withHost($parts['host'])
            ->withPort((int) ($parts['port'] ?? 5432))
            ->withDbName(ltrim(rawurldecode($parts['path'] ?? ''), '/') ?: 'postgres')
            ->withUsername(rawurldecode($parts['user'] ?? ''))
            ->withPassword(rawurldecode($parts['pass'] ?? ''))
            ->withOptions([PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
    }

    /** @return array{id: int|string, randomnumber: int|string} */
    public function randomRow(): array
    {
        if ($this->pool === null) {
            throw new DatabaseUnavailable($this->unavailable);
        }
        try {
            // Connections open lazily, on the first requests that need them.
            $pdo = $this->pool->get(self::ACQUIRE_TIMEOUT_S);
        } catch (\PDOException $e) {
            throw new DatabaseUnavailable('database unavailable: ' . $e->getMessage());
        }
        if ($pdo === false) {
            throw new DatabaseUnavailable('database unavailable: no free connection within 5 s');
        }
        try {
            // One round trip (PQexecParams), as the php-fpm target does.
            $statement = $pdo->prepare(C\WORLD_QUERY, [PDO::PGSQL_ATTR_DISABLE_PREPARES => true]);
            $statement->execute([C\random_world_id()]);
            $row = $statement->fetch(PDO::FETCH_ASSOC);
        } catch (\Throwable $e) {
            // PDOException, or an Error from Swoole's own lost-connection
            // check (it calls mb_strpos, so without mbstring it fails).
            $this->discard();
            $why = $e instanceof \PDOException ? $e->getMessage() : 'the connection broke';
            throw new DatabaseUnavailable("database unavailable: $why");
        }
        $this->pool->put($pdo);
        if ($row === false) {
            throw new DatabaseUnavailable('database unavailable: the world row is missing');
        }
        return $row;
    }

    /** Drops a broken connection; the pool opens a new one when it can. */
    private function discard(): void
    {
        try {
            $this->pool->put(null);
        } catch (\Throwable) {
            // The database is still down: the next request tries again.
        }
    }

    public function close(): void
    {
        $this->pool?->close();
    }
}
