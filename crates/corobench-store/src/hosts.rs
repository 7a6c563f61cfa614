//! The hosts of a run, added to as it is resumed: a run resumed on other
//! machines (a new set of pods) keeps the hosts of every session in its
//! provenance, not only the first; a host met again is kept once.

use corobench_model::HostProvenance;
use rusqlite::params;

use crate::error::StoreError;
use crate::rows::to_json;
use crate::store::Store;

impl Store {
    /// Adds to the run's provenance each of `hosts` it does not hold yet.
    ///
    /// # Errors
    /// When the run is unknown or the database cannot be written.
    pub fn add_run_hosts(
        &mut self,
        run_id: &str,
        hosts: &[HostProvenance],
    ) -> Result<(), StoreError> {
        let (run, _) = self.run_record(run_id)?;
        let mut provenance = run.provenance;
        for host in hosts {
            if !provenance.hosts.iter().any(|known| same_host(known, host)) {
                provenance.hosts.push(host.clone());
            }
        }
        let text = to_json(&provenance, "provenance", &self.path)?;
        self.conn
            .execute(
                "UPDATE runs SET provenance_json = ?2 WHERE id = ?1",
                params![run_id, text],
            )
            .map_err(|e| self.fail(e, "recording the run's hosts", Some(run_id)))?;
        Ok(())
    }
}

/// The same host in the same role: its clock, read again by each session,
/// does not make it another.
fn same_host(a: &HostProvenance, b: &HostProvenance) -> bool {
    let unclocked = |h: &HostProvenance| HostProvenance {
        clock_offset_us: None,
        clock_uncertainty_us: None,
        ..h.clone()
    };
    unclocked(a) == unclocked(b)
}
