//! One reading of a whole process group: every member's `stat`, and the
//! context switches and run time (`schedstat`) of every thread.

use corobench_target::procfs::ProcStat;

use crate::error::SamplerError;
use crate::group::GroupScanner;
use crate::ledger::{IntervalUsage, MemberReading, TreeLedger};
use crate::reader::ProcReader;
use crate::sys;

/// Reads a process group round after round, reusing its buffers.
#[derive(Debug)]
pub(crate) struct TreeReader {
    reader: ProcReader,
    scanner: GroupScanner,
    ledger: TreeLedger,
    stats: Vec<ProcStat>,
    readings: Vec<MemberReading>,
    tids: Vec<i32>,
    /// Whether each thread's run time is read (the kernel keeps it).
    schedstat: bool,
}

impl TreeReader {
    /// A reader whose ledger charges processes born after this moment from zero.
    pub(crate) fn new(proc_root: &str, pgid: i32) -> Result<Self, SamplerError> {
        let ticks_per_s = sys::clock_ticks_per_s()?;
        let ledger = TreeLedger::new(sys::boot_time_ticks(ticks_per_s)?, sys::page_size_bytes()?);
        let reader = ProcReader::new(proc_root);
        Ok(Self {
            schedstat: reader.has_schedstat(),
            reader,
            scanner: GroupScanner::new(pgid),
            ledger,
            stats: Vec::new(),
            readings: Vec::new(),
            tids: Vec::new(),
        })
    }

    /// Reads the group once and returns its usage since the previous round.
    pub(crate) fn round(&mut self) -> Result<IntervalUsage, SamplerError> {
        self.scanner.scan(&mut self.reader, &mut self.stats)?;
        // Keep the thread vectors of earlier rounds for reuse.
        self.readings.truncate(self.stats.len());
        for (i, stat) in self.stats.iter().enumerate() {
            if i == self.readings.len() {
                self.readings.push(MemberReading {
                    stat: *stat,
                    threads: Vec::new(),
                });
            }
            let reading = &mut self.readings[i];
            reading.stat = *stat;
            read_threads(&mut self.reader, &mut self.tids, reading, self.schedstat)?;
        }
        Ok(self.ledger.account(&self.readings))
    }
}

/// Fills `reading.threads`; a process that exits meanwhile keeps the threads
/// that could still be read.
fn read_threads(
    reader: &mut ProcReader,
    tids: &mut Vec<i32>,
    reading: &mut MemberReading,
    schedstat: bool,
) -> Result<(), SamplerError> {
    reading.threads.clear();
    let pid = reading.stat.pid;
    if !reader.list_tids(pid, tids)? {
        return Ok(());
    }
    for &tid in tids.iter() {
        if let Some(thread) = reader.thread(pid, tid, schedstat)? {
            reading.threads.push(thread);
        }
    }
    Ok(())
}
