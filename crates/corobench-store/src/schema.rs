//! Opening the database and bringing its schema up to date.
//!
//! The schema version lives in `PRAGMA user_version`. Migration `N` (1-based)
//! is `migrations/000N_*.sql`; opening a database at version `v` applies
//! migrations `v+1..` in one immediate transaction each, so two corobench
//! processes opening the same new file cannot both migrate it.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::error::{StoreError, classify};

/// Every migration, in order; the schema version is their count.
const MIGRATIONS: [&str; 11] = [
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_run_process.sql"),
    include_str!("migrations/0003_capacity.sql"),
    include_str!("migrations/0004_precision_goal.sql"),
    include_str!("migrations/0005_kernel_counters.sql"),
    include_str!("migrations/0006_profiles_idle.sql"),
    include_str!("migrations/0007_machine_probe.sql"),
    include_str!("migrations/0008_pool_counters.sql"),
    include_str!("migrations/0009_protocol.sql"),
    include_str!("migrations/0010_run_reason.sql"),
    include_str!("migrations/0011_background.sql"),
];

/// The schema version this corobench writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long a write waits for another process's transaction (another
/// `corobench report` reading the file) before reporting the file locked.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens `path` (creating it when `create`), configures the connection and
/// migrates the schema.
pub(crate) fn open(path: &Path, create: bool) -> Result<Connection, StoreError> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let mut conn = Connection::open_with_flags(path, flags)
        .map_err(|e| classify(e, path, "opening the database", None))?;
    if !create
        && user_version(&conn).map_err(|e| classify(e, path, "reading the schema", None))? == 0
    {
        // A read command never writes a schema into a file that is not a
        // corobench database yet (an empty file, a mistyped path).
        if has_foreign_tables(&conn).unwrap_or(false) {
            return Err(StoreError::Foreign {
                path: path.to_path_buf(),
            });
        }
        return Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            reason: "it holds no corobench schema".to_owned(),
        });
    }
    configure(&conn).map_err(|e| classify(e, path, "configuring the database", None))?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // WAL lets `corobench report` read while a run writes. The pragma answers
    // with the mode in force; a file that cannot switch keeps working as is.
    let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    // A committed trial survives a power cut, not only a crash of corobench.
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(())
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let fail = |e| classify(e, path, "migrating the schema", None);
    // Up to date: no write lock taken, so a read-only file can be reported on.
    if check_version(user_version(conn).map_err(fail)?, path)? == SCHEMA_VERSION {
        return Ok(());
    }
    // A migration may rebuild a table that others reference: with foreign
    // keys on, dropping the old table would delete every row that points at
    // it. They are off for the migration (the pragma is a no-op inside a
    // transaction, so it is set here) and checked before the commit.
    conn.pragma_update(None, "foreign_keys", false)
        .map_err(fail)?;
    let migrated = apply_migrations(conn, path);
    let restored = conn.pragma_update(None, "foreign_keys", true);
    migrated?;
    restored.map_err(fail)
}

fn apply_migrations(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let fail = |e| classify(e, path, "migrating the schema", None);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(fail)?;
    // Read again under the lock: another process may have migrated meanwhile.
    let found = check_version(user_version(&tx).map_err(fail)?, path)?;
    if found == 0 && has_foreign_tables(&tx).map_err(fail)? {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
        });
    }
    let first_missing = usize::try_from(found).unwrap_or(0);
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(first_missing) {
        tx.execute_batch(sql).map_err(fail)?;
        tx.pragma_update(None, "user_version", index + 1)
            .map_err(fail)?;
    }
    let dangling: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM pragma_foreign_key_check)",
            [],
            |row| row.get(0),
        )
        .map_err(fail)?;
    if dangling {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
        });
    }
    tx.commit().map_err(fail)
}

/// The version, when this corobench can work with it.
fn check_version(found: i64, path: &Path) -> Result<i64, StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    if found < 0 {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
        });
    }
    Ok(found)
}

/// A database at version 0 with tables was made by another program.
fn has_foreign_tables(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%')",
        [],
        |row| row.get(0),
    )
}
