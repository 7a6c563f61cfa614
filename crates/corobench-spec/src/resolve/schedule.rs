//! `connections`, `rates`, `keepalive`, `pipeline`, `tls` and `protocol`,
//! in `[schedule]` or a workload: the counts, rates and protocols a
//! workload is swept over, each within bounds and none twice, and how its
//! connections carry requests.

use std::ops::Range;

use corobench_model::{CapacitySettings, MAX_PIPELINE, MAX_STREAMS, Schedule};

use crate::defaults::DEFAULT_CONNECTIONS;
use crate::document::{self, Table, Value};
use crate::error::{Locator, SpecError};
use crate::limits::{Limits, MAX_CONNECTIONS, MAX_RATE, MIN_RATE};
use crate::plan::PlannedScenario;

use super::protocol::ProtocolSweep;
use super::repeats::refuse_repeats;

/// Checked `connections` and `rates` lists, before a workload's own replace them.
#[derive(Clone, Debug)]
pub(super) struct Sweep {
    pub connections: Vec<u32>,
    pub rates: Option<Vec<f64>>,
    /// `connections` was given, rather than left at its default.
    pub connections_given: bool,
    /// `keepalive`, where it was written.
    pub keepalive: Option<(bool, Range<usize>)>,
    /// `pipeline`, where it was written and under which key.
    pub pipeline: Option<(u32, Range<usize>, String)>,
    /// `tls` and `protocol`, where they were written.
    pub protocols: ProtocolSweep,
    /// `streams` (HTTP/2 streams per connection), where it was written.
    pub streams: Option<(u32, Range<usize>, String)>,
    /// `tls_resume`, where it was written.
    pub tls_resume: Option<(bool, Range<usize>, String)>,
}

/// What the checks of a schedule need besides the spec.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds<'l> {
    pub limits: &'l Limits,
    pub generator_threads: u32,
    /// Where the thread count was set, for a default count too small for it.
    pub threads_span: &'l Range<usize>,
}

impl Sweep {
    /// `[schedule]`, or the defaults.
    pub fn defaults(
        schedule: Option<&Table<'_>>,
        bounds: Bounds<'_>,
        at: &Locator<'_>,
    ) -> Result<Self, SpecError> {
        let base = Self {
            connections: vec![DEFAULT_CONNECTIONS],
            rates: None,
            connections_given: false,
            keepalive: None,
            pipeline: None,
            protocols: ProtocolSweep::default(),
            streams: None,
            tls_resume: None,
        };
        match schedule {
            None => Ok(base),
            Some(table) => base.overridden_by(table, bounds, at),
        }
    }

    /// This sweep with the lists `table` sets replacing ours.
    pub fn overridden_by(
        &self,
        table: &Table<'_>,
        bounds: Bounds<'_>,
        at: &Locator<'_>,
    ) -> Result<Self, SpecError> {
        let mut sweep = self.clone();
        if let Some(field) = table.get("connections") {
            sweep.connections = connections(field.value, &field.path, bounds, at)?;
            sweep.connections_given = true;
        }
        if let Some(field) = table.get("rates") {
            sweep.rates = Some(rates(field.value, &field.path, at)?);
        }
        if let Some(field) = table.get("keepalive") {
            let keepalive = document::boolean(field.value, &field.path, at)?;
            sweep.keepalive = Some((keepalive, field.value.span()));
        }
        if let Some(field) = table.get("pipeline") {
            let range = 1..=i64::from(MAX_PIPELINE);
            let depth = document::integer(field.value, &field.path, range, at)?;
            let depth = u32::try_from(depth).unwrap_or(1);
            sweep.pipeline = Some((depth, field.value.span(), field.path.clone()));
        }
        if let Some(field) = table.get("tls") {
            sweep.protocols.read_tls(field.value, &field.path, at)?;
        }
        if let Some(field) = table.get("protocol") {
            sweep
                .protocols
                .read_protocol(field.value, &field.path, at)?;
        }
        if let Some(field) = table.get("streams") {
            let range = 1..=i64::from(MAX_STREAMS);
            let streams = document::integer(field.value, &field.path, range, at)?;
            let streams = u32::try_from(streams).unwrap_or(1);
            sweep.streams = Some((streams, field.value.span(), field.path.clone()));
        }
        if let Some(field) = table.get("tls_resume") {
            let resume = document::boolean(field.value, &field.path, at)?;
            sweep.tls_resume = Some((resume, field.value.span(), field.path.clone()));
        }
        Ok(sweep)
    }

    /// How many schedules this sweep gives.
    pub fn count(&self) -> usize {
        let rates = self.rates.as_ref().map_or(1, Vec::len);
        self.connections
            .len()
            .saturating_mul(rates)
            .saturating_mul(self.protocols.count())
    }

    /// The schedules of a workload under this sweep; a default count too
    /// small for the generator threads is refused where the threads are set.
    pub fn schedules_for(
        &self,
        bounds: Bounds<'_>,
        at: &Locator<'_>,
    ) -> Result<Vec<Schedule>, SpecError> {
        if !self.connections_given && DEFAULT_CONNECTIONS < bounds.generator_threads {
            let message = format!(
                "{} generator threads need as many connections, more than the default {DEFAULT_CONNECTIONS}: set connections in [schedule]",
                bounds.generator_threads
            );
            return Err(at.at(
                bounds.threads_span.clone(),
                "run.generator_threads",
                message,
            ));
        }
        let (keepalive, pipeline) = self.wire_mode(at)?;
        let protocols = self.protocols.protocols(at)?;
        let (streams, resume) = self.protocol_options(&protocols, at)?;
        Ok(self
            .schedules()
            .into_iter()
            .map(|s| s.with_keepalive(keepalive).with_pipeline(pipeline))
            .flat_map(|s| protocols.iter().map(move |p| s.with_protocol(*p)))
            .map(|s| {
                let s = if s.protocol.is_h2() {
                    s.with_streams(streams)
                } else {
                    s
                };
                if s.protocol.tls {
                    s.with_tls_resume(resume)
                } else {
                    s
                }
            })
            .collect())
    }

    /// `streams` and `tls_resume`, when the sweep has a protocol they
    /// apply to (HTTP/2; TLS) and go with its other keys: HTTP/2 carries
    /// requests on streams, never pipelined.
    fn protocol_options(
        &self,
        protocols: &[corobench_model::Protocol],
        at: &Locator<'_>,
    ) -> Result<(u32, bool), SpecError> {
        let http2 = protocols.iter().any(|p| p.is_h2());
        if let Some((_, span, key)) = self.pipeline.as_ref().filter(|(d, _, _)| *d > 1)
            && http2
        {
            let message = "pipelining is HTTP/1.1's: HTTP/2 has requests in flight on streams \
                           instead (streams = N)";
            return Err(at.at(span.clone(), key, message));
        }
        let streams = match &self.streams {
            Some((n, span, key)) if *n > 1 && !http2 => {
                let message = format!(
                    "streams = {n} is HTTP/2's (streams per connection): set protocol = \"h2\" \
                     or \"h2c\", or pipeline = {n} for HTTP/1.1"
                );
                return Err(at.at(span.clone(), key, message));
            }
            Some((n, _, _)) => *n,
            None => 1,
        };
        let resume = match &self.tls_resume {
            Some((false, span, key)) if !protocols.iter().any(|p| p.tls) => {
                let message = "tls_resume = false is about TLS handshakes, and no protocol of \
                               this schedule speaks TLS: add tls = true (or protocol = \"h2\")";
                return Err(at.at(span.clone(), key, message));
            }
            Some((resume, _, _)) => *resume,
            None => true,
        };
        Ok((streams, resume))
    }

    /// Keep-alive and pipelining, when they go together with each other and
    /// with the loop: a pipeline needs kept-alive connections and a closed
    /// loop (an open loop sends one request at a time per connection).
    fn wire_mode(&self, at: &Locator<'_>) -> Result<(bool, u32), SpecError> {
        let keepalive = self.keepalive.as_ref().is_none_or(|(k, _)| *k);
        let Some((depth, span, key)) = self.pipeline.as_ref().filter(|(d, _, _)| *d > 1) else {
            return Ok((keepalive, 1));
        };
        if !keepalive {
            let message = "pipelining needs kept-alive connections: drop keepalive = false";
            return Err(at.at(span.clone(), key, message));
        }
        if self.rates.is_some() {
            let message = "pipelining is for closed loops: an open loop (rates) sends one \
                           request at a time per connection";
            return Err(at.at(span.clone(), key, message));
        }
        Ok((true, *depth))
    }

    /// Closed loop: one schedule per count. Open loop: one per rate × count.
    fn schedules(&self) -> Vec<Schedule> {
        match &self.rates {
            None => self
                .connections
                .iter()
                .copied()
                .map(Schedule::closed)
                .collect(),
            Some(rates) => rates
                .iter()
                .flat_map(|&rate| {
                    self.connections
                        .iter()
                        .map(move |&c| Schedule::open(rate, c))
                })
                .collect(),
        }
    }
}

/// An open-loop rate so low that not one request falls in the measured
/// window makes every trial fail with nothing measured: refused here, for
/// `rates` and for the lowest rate a capacity search may try.
pub(super) fn refuse_empty_windows(
    scenarios: &[PlannedScenario],
    capacity: Option<&CapacitySettings>,
    spec: &Table<'_>,
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    for scenario in scenarios {
        let lowest = capacity.map_or(scenario.schedule.rate_per_s(), |c| Some(c.min_rate));
        let Some(rate) = lowest else { continue };
        let window_s = scenario.measurement.duration.as_secs_f64();
        if rate * window_s >= 1.0 {
            continue;
        }
        let (key, span) = match capacity {
            Some(_) => (
                "capacity.min_rate",
                spec.get("capacity").map(|f| f.key_span.clone()),
            ),
            None => ("rates", super::capacity::schedule_key(spec, "rates")),
        };
        let message = format!(
            "{key} {rate} req/s sends no request in a {window_s}s window ({}): raise the rate \
             to at least {:.3} req/s or lengthen run.duration",
            scenario.key.as_str(),
            1.0 / window_s
        );
        return Err(at.at(span.unwrap_or(0..0), key, message));
    }
    Ok(())
}

fn connections(
    value: &Value<'_>,
    key: &str,
    bounds: Bounds<'_>,
    at: &Locator<'_>,
) -> Result<Vec<u32>, SpecError> {
    let items = document::one_or_many(value, key, at)?;
    let mut counts = Vec::with_capacity(items.len());
    for item in &items {
        let n = document::integer(item, key, 1..=i64::from(MAX_CONNECTIONS), at)?;
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        if n > bounds.limits.max_connections {
            let message = format!(
                "{n} connections are more than this process can open ({}): {}",
                bounds.limits.max_connections, bounds.limits.max_connections_reason
            );
            return Err(at.at(item.span(), key, message));
        }
        if n < bounds.generator_threads {
            let message = format!(
                "{n} connections cannot be split over {} generator threads: use at least {} connections, or set run.generator_threads lower",
                bounds.generator_threads, bounds.generator_threads
            );
            return Err(at.at(item.span(), key, message));
        }
        counts.push(n);
    }
    refuse_repeats(value, &items, &counts, key, |i| counts[i].to_string(), at)?;
    Ok(counts)
}

fn rates(value: &Value<'_>, key: &str, at: &Locator<'_>) -> Result<Vec<f64>, SpecError> {
    let items = document::one_or_many(value, key, at)?;
    let mut rates = Vec::with_capacity(items.len());
    for item in &items {
        rates.push(document::number(
            item,
            key,
            (MIN_RATE..=MAX_RATE, "requests/s"),
            at,
        )?);
    }
    let bits: Vec<u64> = rates.iter().map(|r| r.to_bits()).collect();
    refuse_repeats(value, &items, &bits, key, |i| rates[i].to_string(), at)?;
    Ok(rates)
}
