"""/db's connection pool (asyncpg). Connections open lazily, so a database
that is down at start-up, or goes down later, only fails /db (with 503)."""

import random
from typing import Optional

import asyncpg

WORLD_ROWS = 10000
QUERY = "SELECT id, randomnumber FROM world WHERE id = $1"
# Fail fast instead of queueing forever when the database is gone.
TIMEOUT_S = 5


class DatabaseUnavailable(Exception):
    """No database configured, or it could not answer."""


class World:
    def __init__(self, database_url: str, pool_size: int) -> None:
        self._url = database_url
        self._pool_size = pool_size
        self._pool: Optional[asyncpg.Pool] = None

    async def open(self) -> None:
        if self._url:
            # min_size=0: nothing connects before the first /db request.
            self._pool = await asyncpg.create_pool(
                self._url, min_size=0, max_size=self._pool_size, timeout=TIMEOUT_S
            )

    async def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()

    async def random_row(self) -> dict:
        if self._pool is None:
            raise DatabaseUnavailable("no database: DATABASE_URL is not set")
        row_id = random.randint(1, WORLD_ROWS)
        try:
            async with self._pool.acquire(timeout=TIMEOUT_S) as connection:
                row = await connection.fetchrow(QUERY, row_id, timeout=TIMEOUT_S)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            raise DatabaseUnavailable(f"database unavailable: {error}") from error
        if row is None:
            raise DatabaseUnavailable(f"world has no row with id {row_id}")
        return {"id": row["id"], "randomNumber": row["randomnumber"]}
