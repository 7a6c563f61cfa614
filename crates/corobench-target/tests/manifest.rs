//! `target.toml` parsing and validation, on the small fixture targets and on
//! bad manifests whose errors must name the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use corobench_target::{
    Availability, Manifest, ParameterSpec, ProgramServer, Readiness, StopSignal, TargetError,
    TargetKind, discover, find_targets_dir,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/targets")
}

/// A valid manifest; each bad case changes one part of it.
const GOOD: &str = r#"name = "probe"
model = "worker-pool"
summary = "a probe"
language = "sh"

[run]
command = ["sh", "-c", "exec server --port {port} --threads {threads}"]

[parameters.threads]
default = 1
min = 1
max = 8
"#;

/// Parses `text` as `<tmp>/probe/target.toml` and returns the error's line and text.
fn error_of(text: &str) -> (Option<usize>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probe").join("target.toml");
    let error = Manifest::parse(text, &path).expect_err("the manifest is invalid");
    let TargetError::Manifest { line, .. } = &error else {
        panic!("not a manifest error: {error}");
    };
    let message = error.to_string();
    assert!(
        message.starts_with(&path.display().to_string()),
        "names the file: {message}"
    );
    (*line, message)
}

#[test]
fn the_good_manifest_parses() {
    let manifest = Manifest::parse(GOOD, Path::new("/t/probe/target.toml")).unwrap();
    assert_eq!(manifest.name, "probe");
    assert_eq!(manifest.dir, Path::new("/t/probe"));
    assert_eq!(manifest.run.ready_timeout_s, 30, "the documented default");
    assert_eq!(manifest.run.stop_timeout_s, 5, "the documented default");
    assert_eq!(manifest.run.min_warmup_s, 0, "no minimum unless asked for");
    assert_eq!(manifest.build, None);
    assert_eq!(manifest.hint, None);
}

#[test]
fn fixture_manifests_parse_with_every_section() {
    let web = Manifest::load(&fixtures().join("web")).unwrap();
    assert_eq!(web.model, "worker-pool");
    assert_eq!(web.requires, ["python3"]);
    assert_eq!(web.hint.as_deref(), Some("install Python 3"));
    assert_eq!(
        web.versions,
        [vec!["python3".to_string(), "--version".to_string()]]
    );
    assert_eq!(web.run.ready_timeout_s, 20);
    assert_eq!(web.run.env["WEB_THREADS"], "{threads}");
    assert_eq!(
        web.parameters["mode"],
        ParameterSpec::Choice {
            default: "blocking".into(),
            choices: vec!["blocking".into(), "nonblocking".into()],
            help: "also unused; a parameter with named values".into(),
        }
    );
    let built = Manifest::load(&fixtures().join("built")).unwrap();
    let build = built.build.unwrap();
    assert_eq!(build.exclude, ["*.tmp", "notes"]);
    assert_eq!(build.inputs, [PathBuf::from("../shared")]);
    assert_eq!(build.env["BUILD_FLAVOUR"], "plain {cache}");
}

#[test]
fn discovery_finds_every_target_sorted_and_skips_shared_code() {
    let names: Vec<String> = discover(&fixtures())
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(
        names,
        [
            "built",
            "crasher",
            "deaf",
            "env-dump",
            "flaky-port",
            "forker",
            "silent",
            "stubborn",
            "web",
            "web-tls"
        ],
        "shared/ has no target.toml"
    );
}

#[test]
fn discovery_lists_every_invalid_manifest() {
    let root = tempfile::tempdir().unwrap();
    for (name, text) in [("a", "name = \"a\""), ("b", GOOD), ("c", "name = ")] {
        std::fs::create_dir(root.path().join(name)).unwrap();
        std::fs::write(root.path().join(name).join("target.toml"), text).unwrap();
    }
    let message = discover(root.path()).unwrap_err().to_string();
    assert!(
        message.starts_with("3 target manifests are invalid:"),
        "{message}"
    );
    assert!(
        message.contains("a/target.toml:1: run: missing field `run`"),
        "{message}"
    );
    assert!(
        message.contains("b/target.toml:1: name: \"probe\" must equal the folder name \"b\""),
        "{message}"
    );
    assert!(message.contains("c/target.toml:1:"), "{message}");
}

#[test]
fn unknown_keys_are_named_with_their_line() {
    let (line, message) = error_of(&GOOD.replace(
        "language = \"sh\"",
        "language = \"sh\"\nlanguages = [\"sh\"]",
    ));
    assert_eq!(line, Some(5));
    assert!(
        message.contains(": languages: unknown field `languages`"),
        "{message}"
    );

    let (line, message) = error_of(&format!("{GOOD}help = \"x\"\nmax_value = 3\n"));
    assert_eq!(line, Some(14));
    assert!(message.contains("unknown field `max_value`"), "{message}");

    let (line, message) = error_of(&GOOD.replace("[run]", "[run]\nstop_timeout = 5"));
    assert_eq!(line, Some(7));
    assert!(
        message.contains("stop_timeout: unknown field `stop_timeout`"),
        "{message}"
    );
}

#[test]
fn shape_errors_are_named() {
    let (line, message) = error_of(&GOOD.replace("[run]", "[run]\nstop_timeout_s = \"5\""));
    assert_eq!(line, Some(7));
    assert!(
        message.contains(": stop_timeout_s: invalid type: string \"5\""),
        "{message}"
    );

    let (_, message) = error_of(&GOOD.replace("model = \"worker-pool\"\n", ""));
    assert!(
        message.contains("model: missing: a contract target names its concurrency model"),
        "{message}"
    );

    let (line, message) = error_of(&GOOD.replace("summary = \"a probe\"", "summary = \"a probe"));
    assert_eq!(line, Some(3));
    assert!(
        message.contains(":3: summary: invalid basic string"),
        "{message}"
    );
}

#[test]
fn values_are_validated() {
    let cases: &[(&str, &str, usize, &str)] = &[
        (
            "name = \"probe\"",
            "name = \"Probe!\"",
            1,
            "name: use lower-case letters",
        ),
        (
            "model = \"worker-pool\"",
            "model = \"threads\"",
            2,
            "model: \"threads\" is not a model id; use one of goroutine-per-connection",
        ),
        (
            "{port}",
            "{prot}",
            7,
            "run.command[2]: unknown placeholder {prot}; known: out, dir, port",
        ),
        ("{threads}", "{{threads}", 7, "run.command[2]: a lone '}'"),
        (
            "[\"sh\", \"-c\", \"exec server --port {port} --threads {threads}\"]",
            "[]",
            7,
            "run.command: a command needs at least the program name",
        ),
        (
            "default = 1\n",
            "default = 9\n",
            9,
            "parameters.threads: default 9 must lie in min..=max (1..=8)",
        ),
        (
            "max = 8\n",
            "",
            9,
            "parameters.threads: an integer parameter needs both min and max",
        ),
        (
            "default = 1\n",
            "default = \"one\"\n",
            9,
            "a string parameter needs choices = [...]",
        ),
        (
            "default = 1\n",
            "default = 1.5\n",
            9,
            "default must be an integer or a string, not a float",
        ),
        (
            "[parameters.threads]",
            "[parameters.port]",
            9,
            "\"port\" cannot name a parameter",
        ),
        (
            "[parameters.threads]",
            "min_warmup_s = 600\n\n[parameters.threads]",
            9,
            "run.min_warmup_s: must be at most 120 seconds",
        ),
    ];
    assert_refused(GOOD, cases);
}

#[test]
fn a_minimum_warm_up_is_read() {
    let text = GOOD.replace(
        "[parameters.threads]",
        "min_warmup_s = 8\n\n[parameters.threads]",
    );
    let manifest = Manifest::parse(&text, Path::new("/t/probe/target.toml")).unwrap();
    assert_eq!(manifest.run.min_warmup_s, 8);
    assert_eq!(manifest.run.min_warmup(), std::time::Duration::from_secs(8));
}

#[test]
fn choices_are_validated() {
    let text = GOOD.replace(
        "default = 1\nmin = 1\nmax = 8\n",
        "default = \"fast\"\nchoices = [\"slow\", \"steady\"]\n",
    );
    let (_, message) = error_of(&text);
    assert!(
        message.contains("default \"fast\" must be one of the choices (slow, steady)"),
        "{message}"
    );
}

#[test]
fn run_env_may_not_override_the_contract() {
    let (line, message) = error_of(&GOOD.replace("[run]", "[run]\nenv = { PORT = \"80\" }"));
    assert_eq!(line, Some(7));
    assert!(
        message.contains("run.env.PORT: corobench sets PORT itself"),
        "{message}"
    );
    let (_, message) = error_of(&GOOD.replace("[run]", "[run]\nenv = { X = \"{nope}\" }"));
    assert!(
        message.contains("run.env.X: unknown placeholder {nope}"),
        "{message}"
    );
}

#[test]
fn build_uses_only_build_placeholders() {
    let text = GOOD.replace(
        "[run]",
        "[build]\ncommand = [\"make\", \"PORT={port}\"]\n\n[run]",
    );
    let (line, message) = error_of(&text);
    assert_eq!(line, Some(7));
    assert!(
        message.contains("build.command[1]: unknown placeholder {port}; known: out, dir, cache"),
        "{message}"
    );
    let text = GOOD.replace(
        "[run]",
        "[build]\ncommand = [\"make\"]\ninputs = [\"/abs\"]\n\n[run]",
    );
    let (_, message) = error_of(&text);
    assert!(
        message.contains("build.inputs: \"/abs\" must be a path relative"),
        "{message}"
    );
}

#[test]
fn parameters_resolve_through_the_manifest() {
    let manifest = Manifest::load(&fixtures().join("web")).unwrap();
    let given = BTreeMap::from([("threads".to_string(), "4".to_string())]);
    let resolved = manifest.resolve_parameters(&given).unwrap();
    assert_eq!(resolved["threads"], "4");
    assert_eq!(resolved["mode"], "blocking");
    let bad = BTreeMap::from([("threads".to_string(), "65".to_string())]);
    let message = manifest.resolve_parameters(&bad).unwrap_err().to_string();
    assert_eq!(
        message,
        "target web: parameter threads: \"65\" is not allowed: use an integer in 1..=64"
    );
}

#[test]
fn availability_names_the_missing_command_and_the_hint() {
    let text = GOOD.replace("language = \"sh\"", "language = \"sh\"\nrequires = [\"sh\", \"corobench-no-such-tool\"]\nhint = \"apt-get install it\"");
    let manifest = Manifest::parse(&text, Path::new("/t/probe/target.toml")).unwrap();
    assert_eq!(
        manifest.availability(),
        Availability::Unavailable {
            reason: "`corobench-no-such-tool` is not on PATH".into(),
            hint: Some("apt-get install it".into()),
        }
    );
    let web = Manifest::load(&fixtures().join("web")).unwrap();
    assert_eq!(web.availability(), Availability::Available);
    let versions = web.tool_versions();
    assert!(
        versions["python3 --version"].starts_with("Python 3."),
        "{versions:?}"
    );
}

#[test]
fn an_explicit_targets_dir_must_exist() {
    assert_eq!(find_targets_dir(Some(&fixtures())).unwrap(), fixtures());
    let message = find_targets_dir(Some(Path::new("/nonexistent/targets")))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("/nonexistent/targets (asked for), which is not a directory"),
        "{message}"
    );
    assert!(message.contains("set COROBENCH_TARGETS"), "{message}");
}

/// A valid program manifest; each bad case changes one part of it.
const PROGRAM: &str = r#"name = "probe"
model = "goroutine-fan-out"
summary = "a client that fans requests out over goroutines"
language = "sh"
kind = "program"

[run]
command = ["sh", "-c", "exec client {server_url} --workers {workers}"]
env = { OUT = "{work}/out" }

[program]
server = "required"
metrics = ["req/s", "p50-ms"]

[parameters.workers]
default = 4
min = 1
max = 64
"#;

#[test]
fn a_server_is_the_default_kind() {
    let manifest = Manifest::parse(GOOD, Path::new("/t/probe/target.toml")).unwrap();
    assert_eq!(manifest.kind, TargetKind::Server);
    assert_eq!(manifest.program(), None);
    let explicit = GOOD.replace("language = \"sh\"", "language = \"sh\"\nkind = \"server\"");
    let manifest = Manifest::parse(&explicit, Path::new("/t/probe/target.toml")).unwrap();
    assert_eq!(manifest.kind.name(), "server");
}

#[test]
fn a_program_manifest_parses_with_its_defaults() {
    let manifest = Manifest::parse(PROGRAM, Path::new("/t/probe/target.toml")).unwrap();
    assert_eq!(manifest.model, "goroutine-fan-out");
    assert_eq!(manifest.kind.name(), "program");
    let spec = manifest.program().unwrap();
    assert_eq!(spec.server, ProgramServer::Required);
    assert!(spec.needs_server());
    assert_eq!(spec.metrics, ["req/s", "p50-ms"]);
    assert_eq!(spec.time_limit_s, 300, "the documented default");
    assert_eq!(manifest.run.stop_timeout_s, 5, "the documented default");
    let serialized = toml::Value::try_from(&manifest).unwrap();
    assert_eq!(
        serialized["kind"].as_str(),
        Some("program"),
        "as the manifest spells it"
    );
    assert_eq!(serialized["program"]["server"].as_str(), Some("required"));

    let text = PROGRAM
        .replace("server = \"required\"", "server = \"none\"")
        .replace("{server_url} ", "")
        .replace("[program]", "time_limit_s = 3600\n\n[program]");
    let manifest = Manifest::parse(&text, Path::new("/t/probe/target.toml")).unwrap();
    let spec = manifest.program().unwrap();
    assert_eq!(spec.server, ProgramServer::None);
    assert_eq!(spec.time_limit(), std::time::Duration::from_secs(3600));
}

/// Each case: the text replaced in `base`, its replacement, the line and
/// the message the error must carry.
fn assert_refused(base: &str, cases: &[(&str, &str, usize, &str)]) {
    for (from, to, expected_line, expected) in cases {
        assert!(base.contains(from), "case {from:?} changes nothing");
        let (line, message) = error_of(&base.replacen(from, to, 1));
        assert!(
            message.contains(expected),
            "expected {expected:?} in {message}"
        );
        assert_eq!(line, Some(*expected_line), "{message}");
    }
}

#[test]
fn kind_and_program_must_agree() {
    assert_refused(
        PROGRAM,
        &[
            (
                "kind = \"program\"",
                "kind = \"daemon\"",
                5,
                "kind: unknown variant `daemon`, expected `server` or `program`",
            ),
            (
                "kind = \"program\"\n",
                "",
                10,
                "program: [program] is only for kind = \"program\": add that, or remove the table",
            ),
            (
                "kind = \"program\"",
                "kind = \"server\"",
                11,
                "program: [program] is only for kind = \"program\"",
            ),
            (
                "[program]\nserver = \"required\"\nmetrics = [\"req/s\", \"p50-ms\"]\n",
                "",
                5,
                "kind: a program needs a [program] table with server and metrics",
            ),
        ],
    );
}

#[test]
fn program_tables_are_validated() {
    assert_refused(
        PROGRAM,
        &[
            (
                "server = \"required\"",
                "server = \"maybe\"",
                12,
                "server: unknown variant `maybe`, expected `required` or `none`",
            ),
            (
                "server = \"required\"\n",
                "",
                11,
                "server: missing field `server`",
            ),
            (
                "[\"req/s\", \"p50-ms\"]",
                "[]",
                13,
                "program.metrics: name at least one unit that every result line carries",
            ),
            (
                "\"p50-ms\"]",
                "\"p50 ms\"]",
                13,
                "program.metrics: \"p50 ms\" is not a unit: a unit is one word without spaces",
            ),
            (
                "\"p50-ms\"]",
                "\"\"]",
                13,
                "program.metrics: \"\" is not a unit",
            ),
            (
                "\"p50-ms\"]",
                "\"req/s\"]",
                13,
                "program.metrics: \"req/s\" is listed twice",
            ),
            (
                "metrics = ",
                "units = [\"x\"]\nmetrics = ",
                13,
                "units: unknown field `units`",
            ),
        ],
    );
}

#[test]
fn run_keys_are_checked_against_the_kind() {
    let with_run_key = |key: &str| format!("[run]\n{key}\n");
    assert_refused(
        PROGRAM,
        &[
            (
                "[run]\n",
                &with_run_key("time_limit_s = 0"),
                8,
                "run.time_limit_s: must be between 1 and 3600 seconds",
            ),
            (
                "[run]\n",
                &with_run_key("time_limit_s = 3601"),
                8,
                "run.time_limit_s: must be between 1 and 3600 seconds",
            ),
            (
                "[run]\n",
                &with_run_key("ready_timeout_s = 30"),
                8,
                "run.ready_timeout_s: a program has no health check to wait for: remove it",
            ),
            (
                "[run]\n",
                &with_run_key("min_warmup_s = 5"),
                8,
                "run.min_warmup_s: a program warms up on its own before it measures: remove it",
            ),
        ],
    );
    assert_refused(
        GOOD,
        &[(
            "[run]\n",
            &with_run_key("time_limit_s = 60"),
            7,
            "run.time_limit_s: only a program has a time limit: a server runs until corobench stops it",
        )],
    );
}

#[test]
fn server_url_is_only_for_programs_that_need_a_server() {
    assert_refused(
        PROGRAM,
        &[
            (
                "server = \"required\"",
                "server = \"none\"",
                8,
                "run.command[2]: {server_url} needs [program] server = \"required\"",
            ),
            (
                "{work}/out",
                "{port}",
                9,
                "run.env.OUT: unknown placeholder {port}; known: out, dir, work, cache, server_url, workers",
            ),
        ],
    );
    let no_server = PROGRAM
        .replace("server = \"required\"", "server = \"none\"")
        .replace("{server_url} ", "");
    assert_refused(
        &no_server,
        &[
            (
                "{work}/out",
                "{server_url}/db",
                9,
                "run.env.OUT: {server_url} needs [program] server = \"required\"",
            ),
            (
                "{work}/out",
                "{data_dir}",
                9,
                "run.env.OUT: unknown placeholder {data_dir}; known: out, dir, work, cache, workers",
            ),
        ],
    );
    assert_refused(
        GOOD,
        &[
            (
                "--port {port}",
                "--url {server_url}",
                7,
                "run.command[2]: {server_url} is for programs (kind = \"program\"); a server has none to use",
            ),
            (
                "[parameters.threads]",
                "[parameters.server_url]",
                9,
                "\"server_url\" cannot name a parameter",
            ),
        ],
    );
}

#[test]
fn a_user_server_needs_no_model_is_ready_on_its_port_and_names_its_stop_signal() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("api");
    std::fs::create_dir(&folder).unwrap();
    let text =
        "name = \"api\"\ncontract = false\n[run]\ncommand = [\"./api\", \"--port\", \"{port}\"]\n";
    let manifest = Manifest::parse(
        &format!("{text}stop_signal = \"SIGINT\"\n"),
        &folder.join("target.toml"),
    )
    .unwrap();
    assert!(!manifest.contract);
    assert_eq!(manifest.model, "user-server");
    assert_eq!(manifest.run.ready, Readiness::Port);
    assert_eq!(manifest.run.stop_signal, StopSignal::Int);
    let with_path = text.replace("[run]\n", "[run]\nready = \"/health\"\n");
    let manifest = Manifest::parse(&with_path, &folder.join("target.toml")).unwrap();
    assert_eq!(manifest.run.ready, Readiness::Http("/health".to_owned()));
    let contract = Manifest::parse(GOOD, &dir.path().join("probe").join("target.toml")).unwrap();
    assert_eq!(contract.run.ready, Readiness::Http("/healthz".to_owned()));
    assert_eq!(contract.run.stop_signal, StopSignal::Term);
    for (bad, expected) in [
        (
            "ready = \"health\"",
            "run.ready: \"health\" is neither a path",
        ),
        (
            "stop_signal = \"SIGSTOP\"",
            "run.stop_signal: \"SIGSTOP\": use one of SIGTERM",
        ),
    ] {
        let text = text.replace("[run]\n", &format!("[run]\n{bad}\n"));
        let message = Manifest::parse(&text, &folder.join("target.toml"))
            .unwrap_err()
            .to_string();
        assert!(message.contains(expected), "{message}");
    }
}
