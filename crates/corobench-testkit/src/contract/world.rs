//! Where `/db` reads the `world` table from: memory (tests) or PostgreSQL
//! through `psql` (the binary).

use std::fmt;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use corobench_target::WORLD_ROWS;

/// A source of `world` rows for `/db`.
pub trait WorldSource: Send + Sync + fmt::Debug {
    /// The `randomnumber` of row `id`, read from the table for this call;
    /// `Ok(None)` when no such row exists.
    ///
    /// # Errors
    /// The database could not be reached or queried; the text says why.
    fn read_row(&self, id: i32) -> Result<Option<i32>, String>;
}

/// An in-memory `world` table that counts its reads, so a test can play
/// the database and check `/db` against it.
#[derive(Debug)]
pub struct MemoryWorld {
    random_numbers: Vec<i32>,
    reads: AtomicU64,
}

impl MemoryWorld {
    /// [`WORLD_ROWS`] rows with random numbers in `1..=WORLD_ROWS` drawn from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        let mut state = seed | 1;
        let random_numbers = (0..WORLD_ROWS)
            .map(|_| {
                state = xorshift(state);
                world_number(state)
            })
            .collect();
        Self {
            random_numbers,
            reads: AtomicU64::new(0),
        }
    }

    /// The row's value, without counting a read (for the checking side).
    #[must_use]
    pub fn random_number(&self, id: i32) -> Option<i32> {
        let index = usize::try_from(id.checked_sub(1)?).ok()?;
        self.random_numbers.get(index).copied()
    }

    /// Reads served through [`WorldSource::read_row`] so far.
    #[must_use]
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }
}

impl WorldSource for MemoryWorld {
    fn read_row(&self, id: i32) -> Result<Option<i32>, String> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        Ok(self.random_number(id))
    }
}

/// Reads rows with one `psql` process per request: slow, but a real query
/// through PostgreSQL, which is all a verification fixture needs.
#[derive(Debug, Clone)]
pub struct PsqlWorld {
    database_url: String,
}

impl PsqlWorld {
    #[must_use]
    pub fn new(database_url: impl Into<String>) -> Self {
        Self {
            database_url: database_url.into(),
        }
    }
}

impl WorldSource for PsqlWorld {
    fn read_row(&self, id: i32) -> Result<Option<i32>, String> {
        let sql = format!("SELECT randomnumber FROM world WHERE id = {id}");
        let output = Command::new("psql")
            .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-d"])
            .arg(&self.database_url)
            .args(["-c", &sql])
            .output()
            .map_err(|e| format!("cannot run psql: {e}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!(
                "psql failed ({}): {}",
                output.status,
                stderr.trim()
            ));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let value = stdout.trim();
        if value.is_empty() {
            return Ok(None);
        }
        value
            .parse()
            .map(Some)
            .map_err(|_| format!("psql printed {value:?}, not an integer"))
    }
}

/// A number in `1..=WORLD_ROWS` (a row id or a random number) from a
/// [`xorshift`] state.
pub(crate) fn world_number(state: u64) -> i32 {
    i32::try_from(state % u64::from(WORLD_ROWS)).map_or(1, |n| n + 1)
}

/// One step of a xorshift64 generator (`state` must not be 0).
pub(crate) fn xorshift(mut state: u64) -> u64 {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    state
}
