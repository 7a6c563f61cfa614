//! `idle_connections` on a workload: memory per connection. Each value is
//! a scenario whose trials open that many keep-alive connections, each
//! answered once, then hold them idle while the server's RSS settles; no
//! load is sent, so the workload takes no schedule of its own, except
//! `tls`: `tls = true` holds the connections over TLS (each one's session
//! set up and answered once), `tls = [false, true]` measures both.

use corobench_model::{Protocol, Schedule};

use crate::document::{self, Table};
use crate::error::{Locator, SpecError};
use crate::limits::{Limits, MAX_CONNECTIONS};

use super::protocol::ProtocolSweep;
use super::repeats::refuse_repeats;

/// The one schedule key an idle workload takes.
const IDLE_TAKES: &str = "tls";

/// One closed schedule per `idle_connections` value, or `None` for a
/// workload that sends load.
pub(super) fn schedules(
    table: &Table<'_>,
    limits: &Limits,
    at: &Locator<'_>,
) -> Result<Option<Vec<Schedule>>, SpecError> {
    let Some(field) = table.get("idle_connections") else {
        return Ok(None);
    };
    let other = crate::keys::SCHEDULE
        .iter()
        .filter(|&&k| k != IDLE_TAKES)
        .find_map(|k| table.get(k));
    if let Some(other) = other {
        let message = format!(
            "an idle workload (idle_connections) sends no load, so it takes no {}: drop it, \
             or measure load in a workload of its own (`tls` is the one connection setting \
             it takes)",
            document::last(&other.path)
        );
        return Err(at.at(other.value.span(), &other.path, message));
    }
    let mut sweep = ProtocolSweep::default();
    if let Some(tls) = table.get(IDLE_TAKES) {
        sweep.read_tls(tls.value, &tls.path, at)?;
    }
    let protocols: Vec<Protocol> = sweep.protocols(at)?;
    let key = field.path.as_str();
    let items = document::one_or_many(field.value, key, at)?;
    let mut counts = Vec::with_capacity(items.len());
    for item in &items {
        let n = document::integer(item, key, 1..=i64::from(MAX_CONNECTIONS), at)?;
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        if n > limits.max_connections {
            let message = format!(
                "{n} idle connections are more than this process can open ({}): {}",
                limits.max_connections, limits.max_connections_reason
            );
            return Err(at.at(item.span(), key, message));
        }
        counts.push(n);
    }
    refuse_repeats(
        field.value,
        &items,
        &counts,
        key,
        |i| counts[i].to_string(),
        at,
    )?;
    // Each protocol (cleartext first) at every count.
    let schedules = protocols
        .iter()
        .flat_map(|&protocol| {
            counts.iter().map(move |&n| Schedule {
                protocol,
                ..Schedule::closed(n)
            })
        })
        .collect();
    Ok(Some(schedules))
}
