//! A server that closes kept-alive connections: each trial's generator
//! counts the connections it had to open again inside the window, and a
//! scenario that asked for kept-alive connections but got more than a few
//! such reconnects is named, since its figures then include a connect (and
//! a TLS handshake) every few requests: not what the scenario says.

use corobench_model::{ScenarioRecord, TrialRecord, WarningKind};

use crate::warnings::Found;

/// Reconnects per request above which the scenario is named: one per 100
/// requests changes what is measured; a rare GOAWAY or idle-timeout close
/// does not.
const SHARE: f64 = 0.01;

/// The warning for a kept-alive scenario whose server closed its
/// connections in some trial, with how often.
pub(crate) fn closed_connections(scenario: &ScenarioRecord, ok: &[&TrialRecord]) -> Option<Found> {
    if !scenario.wire.keepalive || scenario.program.is_some() {
        return None;
    }
    let shares: Vec<f64> = ok
        .iter()
        .filter_map(|t| t.load.as_ref())
        .filter(|load| load.requests > 0)
        .map(|load| load.reconnects as f64 / load.requests as f64)
        .filter(|share| *share > SHARE)
        .collect();
    let most = shares.iter().copied().fold(0.0, f64::max);
    (!shares.is_empty()).then(|| {
        Found::new(
            WarningKind::Reconnects,
            "the server closed kept-alive connections (HTTP/1.0, `Connection: close`, or a \
             limit of requests per connection), so the generator connected again inside the \
             window: its figures include those connects and handshakes, which a kept-alive \
             scenario does not measure; let the server keep connections open, or measure it \
             with keepalive = false"
                .to_owned(),
        )
        .detail(format!(
            "in {} of {} trials, up to one reconnect per {:.0} requests",
            shares.len(),
            ok.len(),
            1.0 / most
        ))
    })
}

#[cfg(test)]
mod tests {
    use corobench_model::WarningKind;

    use crate::fixtures::RunBuilder;
    use crate::{AnalyzeOptions, analyze_run};

    const RATES: [f64; 6] = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0];

    fn warnings_with(reconnects: u64) -> Vec<(WarningKind, String)> {
        let mut builder = RunBuilder::new("r1", 6)
            .scenario("api", &[], "json", 4)
            .rates(&RATES);
        builder = builder.edit_last(|trial| {
            if let Some(load) = trial.load.as_mut() {
                load.reconnects = reconnects;
            }
        });
        let analysis = analyze_run(&builder.build(), &AnalyzeOptions::default()).unwrap();
        analysis
            .warnings
            .into_iter()
            .map(|w| {
                let detail = w.details.values().cloned().collect::<Vec<_>>().join(";");
                (w.kind, format!("{} {detail}", w.message))
            })
            .collect()
    }

    #[test]
    fn a_server_that_closes_kept_alive_connections_is_named_with_how_often() {
        let requests = crate::fixtures::load(105.0, &[1_000]).requests;
        let found = warnings_with(requests / 2);
        let (_, text) = found
            .iter()
            .find(|(kind, _)| *kind == WarningKind::Reconnects)
            .expect("a reconnects warning");
        assert!(
            text.contains("closed kept-alive connections")
                && text.contains("one reconnect per 2 requests"),
            "{text}"
        );
        assert!(
            !warnings_with(0)
                .iter()
                .any(|(kind, _)| *kind == WarningKind::Reconnects),
            "a server that keeps its connections open is not named"
        );
    }
}
