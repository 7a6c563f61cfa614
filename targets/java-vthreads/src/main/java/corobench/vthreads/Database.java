package corobench.vthreads;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One random row of the contract's `world` table through a HikariCP pool of
 * pgjdbc connections. The pool is made on first use and opens connections on
 * demand, so the server starts and serves everything else when PostgreSQL is
 * absent; every failure to reach it is a {@link Unavailable} that says why.
 */
final class Database implements AutoCloseable {
    private static final String SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = ?";
    private static final int CONNECT_TIMEOUT_S = 2;
    private static final long BORROW_TIMEOUT_MS = 5_000;

    /** The row /db answers with; `randomNumber` is camel case in the JSON. */
    record World(int id, int randomNumber) {}

    /** The database cannot answer: a 503 carrying the reason. */
    static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String message) {
            super(message, null, false, false);
        }
    }

    private final String databaseUrl;
    private final int poolSize;
    private volatile HikariDataSource pool;

    Database(String databaseUrl, int poolSize) {
        this.databaseUrl = databaseUrl;
        this.poolSize = poolSize;
    }

    World randomWorld() throws Unavailable {
        int id = ThreadLocalRandom.current().nextInt(1, Contract.WORLD_ROWS + 1);
        try (Connection connection = pool().getConnection();
                PreparedStatement select = connection.prepareStatement(SELECT_WORLD)) {
            select.setInt(1, id);
            try (ResultSet row = select.executeQuery()) {
                if (!row.next()) {
                    throw new Unavailable("database unavailable: world has no row " + id);
                }
                return new World(row.getInt(1), row.getInt(2));
            }
        } catch (SQLException e) {
            throw new Unavailable("database unavailable: " + e.getMessage());
        }
    }

    private HikariDataSource pool() throws Unavailable {
        HikariDataSource current = pool;
        if (current != null) {
            return current;
        }
        synchronized (this) {
            if (pool == null) {
                pool = newPool();
            }
            return pool;
        }
    }

    private HikariDataSource newPool() throws Unavailable {
        if (databaseUrl == null || databaseUrl.isEmpty()) {
            throw new Unavailable("no database: DATABASE_URL is not set");
        }
        Contract.JdbcTarget target;
        try {
            target = Contract.jdbcTarget(databaseUrl);
        } catch (IllegalArgumentException e) {
            throw new Unavailable("database unavailable: " + e.getMessage());
        }
        HikariConfig config = new HikariConfig();
        config.setPoolName("world");
        config.setJdbcUrl(target.url());
        config.setUsername(target.user());
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(0);
        // Start without the database; connections are made when asked for.
        config.setInitializationFailTimeout(-1);
        config.setConnectionTimeout(BORROW_TIMEOUT_MS);
        config.addDataSourceProperty("connectTimeout", CONNECT_TIMEOUT_S);
        return new HikariDataSource(config);
    }

    @Override
    public void close() {
        HikariDataSource current = pool;
        if (current != null) {
            current.close();
        }
    }
}
