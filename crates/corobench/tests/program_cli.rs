//! A program target end to end: the test kit's tiny client run beside a
//! test-kit server, stored, reported in every format, and a client that
//! fails, stored as a failed trial with its reason while the run goes on.

mod lab;

use corobench_store::Store;
use lab::{Lab, text};

/// A lab with a server target, the tiny client and a spec whose client
/// asks for `paths`.
fn program_lab(paths: &str) -> Lab {
    let lab = Lab::new();
    let binary = corobench_testkit::binary_path();
    lab.kit_target("kit");
    corobench_testkit::write_program_target(&lab.targets(), "tiny-client", binary).unwrap();
    let spec = format!(
        "name = \"programs\"\ntargets = [\"tiny-client\"]\n[run]\ntrials = 2\n\
         [parameters.tiny-client]\nrequests = [5, 20]\npath = {paths}\n\
         [program]\nserver = \"kit\"\n"
    );
    lab.write("spec.toml", &spec);
    lab
}

/// `corobench report latest --format FORMAT`, which must succeed.
fn report(lab: &Lab, format: &str) -> String {
    let output = lab.run(&["report", "latest", "--format", format]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
}

#[test]
fn a_program_runs_beside_its_server_and_its_figures_are_reported() {
    let lab = program_lab("\"plaintext\"");
    let spec = lab.path("spec.toml");
    let output = lab.run(&["run", spec.to_str().unwrap()]);
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let table = text(&output.stdout);
    assert!(
        table.contains("tiny-client · program beside kit"),
        "{table}"
    );
    assert!(
        table.contains("req/s") && table.contains("mean-ms"),
        "{table}"
    );
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    assert_eq!(run.trials.len(), 4, "2 parameter sets × 2 trials");
    for trial in &run.trials {
        let program = trial
            .program
            .as_ref()
            .unwrap_or_else(|| panic!("{:?}", trial.failure));
        let requests = if run.scenarios[trial.scenario_index as usize]
            .key
            .as_str()
            .contains("=20")
        {
            20.0
        } else {
            5.0
        };
        assert_eq!(program.value("ok"), Some(requests), "every GET answered");
        assert_eq!(program.value("errors"), Some(0.0));
        assert!(
            trial.resources.is_some_and(|r| r.samples > 0),
            "the server was sampled"
        );
    }
    let json = report(&lab, "json");
    assert!(json.contains("\"program:req/s\""), "{json}");
    let gobench = report(&lab, "gobench");
    assert!(gobench.contains("Unit req/s better=higher"), "{gobench}");
    assert!(
        gobench.contains(" ok ") || gobench.contains(" ok\n"),
        "{gobench}"
    );
    for format in ["md", "csv", "html"] {
        assert!(report(&lab, format).contains("req/s"), "{format}");
    }
}

#[test]
fn a_failing_program_fails_its_trials_with_the_reason_and_the_run_goes_on() {
    let lab = program_lab("[\"plaintext\", \"missing\"]");
    let spec = lab.path("spec.toml");
    let output = lab.run(&["run", spec.to_str().unwrap()]);
    assert!(output.status.success(), "stderr:\n{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("4 of 8 trials failed"), "{stderr}");
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    let failures: Vec<&str> = run
        .trials
        .iter()
        .filter_map(|t| t.failure.as_deref())
        .collect();
    assert_eq!(failures.len(), 4);
    for failure in failures {
        assert!(
            failure.contains("the program failed (exit status: 1)"),
            "{failure}"
        );
        assert!(
            failure.contains("no request to"),
            "the stderr tail: {failure}"
        );
    }
}

#[test]
fn corobench_program_prints_the_figures_or_fails_with_the_reason() {
    let lab = program_lab("\"plaintext\"");
    let server = corobench_testkit::TestServer::start(corobench_testkit::Knobs::default());
    let url = server.url("");
    let to_server = ["tiny-client", "--server-url", url.as_str()];
    let ran = program(&lab, &[&to_server[..], &["--param", "requests=7"]].concat());
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    let result: corobench_model::ProgramResult =
        serde_json::from_str(text(&ran.stdout).trim()).expect("one JSON line of figures");
    assert_eq!(result.value("ok"), Some(7.0), "{result:?}");
    assert!(
        result.lines.iter().all(|l| l.starts_with("Benchmark")),
        "{result:?}"
    );
    // Port 1: nothing listens there, every request fails.
    let nowhere = ["tiny-client", "--server-url", "http://127.0.0.1:1"];
    let failed = program(&lab, &nowhere);
    assert_eq!(failed.status.code(), Some(3), "{}", text(&failed.stderr));
    let stderr = text(&failed.stderr);
    assert!(
        stderr.contains("the program failed") && stderr.contains("no request to"),
        "{stderr}"
    );
    let server_target = program(&lab, &["kit"]);
    assert_eq!(server_target.status.code(), Some(2));
    assert!(text(&server_target.stderr).contains("kit is a server target"));
}

/// `corobench program ARGS` in the lab, to its end.
fn program(lab: &Lab, args: &[&str]) -> std::process::Output {
    lab.command(&[&["program"], args].concat())
        .output()
        .unwrap()
}
