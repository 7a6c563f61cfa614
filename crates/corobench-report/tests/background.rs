//! A scenario with a background request (a slow stream beside the measured
//! ones) says so in its heading, and the JSON keeps it with the workload.

use corobench_model::{BackgroundRecord, Protocol, RunAnalysis};
use corobench_report::{Format, RenderOptions, render_with};

fn render(format: Format) -> String {
    let mut analysis: RunAnalysis =
        serde_json::from_str(include_str!("fixtures/run-analysis.json")).unwrap();
    let scenario = &mut analysis.scenarios[0].scenario;
    scenario.protocol = Protocol::H2C;
    scenario.wire.streams = 10;
    scenario.workload.background = Some(BackgroundRecord {
        path: "/io?ms=200".to_owned(),
        streams: 1,
    });
    let mut out = Vec::new();
    render_with(format, &analysis, RenderOptions::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_heading_names_the_slow_stream_beside_and_json_keeps_it() {
    let text = render(Format::Table);
    assert!(
        text.contains("h2c, 10 streams · beside GET /io?ms=200 on 1 stream per connection"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&render(Format::Json)).unwrap();
    let first = &json["scenarios"][0];
    assert_eq!(
        first["workload"]["background"],
        serde_json::json!({"path": "/io?ms=200", "streams": 1}),
        "{first:#}"
    );
}
