//! What `--format json` says of each scenario's connections: the protocol,
//! the HTTP/2 streams per connection and full TLS handshakes, each key
//! present only where it is not the default (cleartext HTTP/1.1, one
//! stream, resumed sessions), as the stored scenario keeps them.

use corobench_model::{Protocol, RunAnalysis};
use corobench_report::{Format, RenderOptions, render_with};
use serde_json::Value;

/// The fixture run with its first three scenarios over h2 (10 streams),
/// TLS without resumption, and h2c (4 streams), as JSON.
fn scenarios_as_json() -> Vec<Value> {
    let mut analysis: RunAnalysis =
        serde_json::from_str(include_str!("fixtures/run-analysis.json")).unwrap();
    for (scenario, (protocol, streams, tls_resume)) in analysis.scenarios.iter_mut().zip([
        (Protocol::H2, 10, true),
        (Protocol::TLS, 1, false),
        (Protocol::H2C, 4, true),
    ]) {
        scenario.scenario.protocol = protocol;
        scenario.scenario.wire.streams = streams;
        scenario.scenario.wire.tls_resume = tls_resume;
    }
    let mut out = Vec::new();
    render_with(Format::Json, &analysis, RenderOptions::default(), &mut out).unwrap();
    let document: Value = serde_json::from_slice(&out).unwrap();
    document["scenarios"].as_array().unwrap().clone()
}

/// The keys of `scenario` that say what its connections spoke.
fn spoken(scenario: &Value) -> [Option<&Value>; 3] {
    ["protocol", "streams", "tls_resume"].map(|key| scenario.get(key))
}

#[test]
fn each_scenario_names_its_protocol_streams_and_handshakes() {
    let scenarios = scenarios_as_json();
    let (h2, tls, h2c) = (&scenarios[0], &scenarios[1], &scenarios[2]);
    assert_eq!(
        spoken(h2),
        [Some(&"h2".into()), Some(&10.into()), None],
        "{h2:#}"
    );
    assert_eq!(
        spoken(tls),
        [Some(&"tls".into()), None, Some(&false.into())],
        "{tls:#}"
    );
    assert_eq!(
        spoken(h2c),
        [Some(&"h2c".into()), Some(&4.into()), None],
        "{h2c:#}"
    );
    assert_eq!(spoken(&scenarios[3]), [None; 3], "cleartext HTTP/1.1");
}
