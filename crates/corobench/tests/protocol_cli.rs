//! The protocol as a dimension of a run, end to end: one test-kit target
//! measured in cleartext and over TLS (the run's own certificates handed to
//! it, the generator trusting only that authority), its `/stats` read over
//! TLS, the TLS figures stored and shown; a target that does not declare
//! TLS left out over TLS with its manifest's reason; and `bench --tls`.

mod lab;

use corobench_model::Protocol;
use corobench_store::Store;
use lab::{Lab, text};

/// A test-kit target that declares TLS, and one that does not.
fn lab_with_targets() -> Lab {
    let lab = Lab::new();
    lab.kit_target_serving("kit-tls", &["tls"]);
    lab.kit_target("kit-plain");
    lab
}

const SPEC: &str = "name = \"tls\"\ntargets = [\"kit-tls\", \"kit-plain\"]\n\
    [run]\ntrials = 1\nduration = \"0.3s\"\nwarmup = \"0.1s\"\nidle = \"0.1s\"\n\
    [schedule]\nconnections = 2\nkeepalive = false\ntls = [false, true]\n\
    [[workloads]]\nname = \"json\"\npath = \"/json\"\n";

#[test]
fn a_run_measures_cleartext_and_tls_and_skips_a_target_without_tls() {
    let lab = lab_with_targets();
    let spec = lab.write("spec.toml", SPEC);
    let output = lab.run(&["run", spec.to_str().unwrap()]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("skipped kit-plain over tls (1 scenario): target.toml does not declare it"),
        "{stderr}"
    );
    assert!(stderr.contains("verifying kit-tls over tls"), "{stderr}");
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    let keys: Vec<&str> = run.scenarios.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "kit-tls/json/c=2/no-keepalive",
            "kit-tls/json/c=2/no-keepalive/tls",
            "kit-plain/json/c=2/no-keepalive"
        ]
    );
    assert_eq!(run.scenarios[1].protocol, Protocol::TLS);
    for trial in &run.trials {
        let load = lab::load_of(trial);
        assert!(load.requests > 0);
        let over_tls = trial.scenario_index == 1;
        assert_eq!(load.tls.is_some(), over_tls, "{}", load.url);
        assert_eq!(load.url.starts_with("https://"), over_tls, "{}", load.url);
        assert!(
            trial.tasks.before.is_some(),
            "/stats read in every protocol"
        );
    }
    let tls = run.trials.iter().find_map(|t| t.load.as_ref()?.tls.clone());
    let tls = tls.expect("the TLS trial stored its TLS block");
    assert!(tls.verified, "the run's certificate was checked");
    assert_eq!(tls.alpn.as_deref(), Some("http/1.1"));
    let report = lab.run(&["report", "latest"]);
    let report = text(&report.stdout);
    assert!(
        report.contains("handshake p50") || report.contains("connect p50"),
        "the text report shows the TLS figures:\n{report}"
    );
    let leftovers: Vec<String> = std::fs::read_dir(lab.path("tmp"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        // The CPU locks stay for every run to share; nothing else may.
        .filter(|name| !name.starts_with("corobench-cpu-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "the run's scratch folder and certificates are gone: {leftovers:?}"
    );
}

/// `bench` of the test kit (started by corobench) with `protocol_flags`,
/// one short trial; the run it stored.
fn bench_kit(lab: &Lab, protocol_flags: &[&str]) -> corobench_model::StoredRun {
    let kit = corobench_testkit::binary_path().display().to_string();
    let server = format!("api={kit}");
    let mut args = vec!["bench"];
    args.extend(protocol_flags);
    args.extend([
        "--server", &server, "--path", "/json", "-c", "2", "--trials", "1", "-d", "0.3s",
        "--warmup", "0.1s", "--idle", "0.1s",
    ]);
    let output = lab.run(&args);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let store = Store::open_existing(lab.db()).unwrap();
    store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap()
}

#[test]
fn bench_tls_starts_each_server_with_the_runs_certificate() {
    let lab = Lab::new();
    let run = bench_kit(&lab, &["--tls"]);
    assert_eq!(run.scenarios[0].key.as_str(), "api/request/c=2/tls");
    let load = run.trials[0].load.as_ref().expect("the trial measured");
    assert!(load.tls.is_some() && load.requests > 0);
}

#[test]
fn bench_tls_refuses_a_server_already_running_in_cleartext() {
    let lab = Lab::new();
    let output = lab.run(&[
        "bench",
        "--tls",
        "--server",
        "live=http://127.0.0.1:9",
        "--path",
        "/",
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--tls: live already running at http://"),
        "{stderr}"
    );
}

#[test]
fn bench_h2c_measures_streams_on_each_connection() {
    let lab = Lab::new();
    let run = bench_kit(&lab, &["--h2c", "-m", "4"]);
    assert_eq!(run.scenarios[0].key.as_str(), "api/request/c=2/h2c/m=4");
    assert_eq!(run.scenarios[0].protocol, Protocol::H2C);
    assert_eq!(run.scenarios[0].wire.streams, 4);
    let load = run.trials[0].load.as_ref().expect("the trial measured");
    let http2 = load.http2.as_ref().expect("the HTTP/2 block is stored");
    assert!(
        load.requests > 0 && http2.streams_effective == 4,
        "{http2:?}"
    );
}

/// The test kit serving HTTPS with `certificates`, started by the test as
/// a user starts a server before measuring it; killed and reaped on drop.
struct HttpsKit {
    child: std::process::Child,
    url: String,
}

impl HttpsKit {
    fn start(certificates: &corobench_target::RunCertificates) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let files = certificates.files();
        let child = std::process::Command::new(corobench_testkit::binary_path())
            .env("PORT", port.to_string())
            .env("TLS_CERT", &files.cert)
            .env("TLS_KEY", &files.key)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        for _ in 0..500 {
            if std::net::TcpStream::connect(addr).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Self {
            child,
            url: format!("https://{addr}"),
        }
    }
}

impl Drop for HttpsKit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_server_already_running_at_https_is_measured_over_tls_trusting_its_ca() {
    let lab = Lab::new();
    let certificates = corobench_target::RunCertificates::create(&lab.path("own-ca"), &[]).unwrap();
    let kit = HttpsKit::start(&certificates);
    let server = format!("live={}", kit.url);
    let ca = certificates.files().ca.display().to_string();
    let flags = [
        "--path", "/json", "-c", "2", "--trials", "1", "-d", "0.3s", "--warmup", "0.1s",
    ];
    let mut trusted = vec!["bench", "--server", &server, "--ca", &ca];
    trusted.extend(flags);
    let output = lab.run(&trusted);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    assert_eq!(run.scenarios[0].key.as_str(), "live/request/c=2/tls");
    let load = run.trials[0].load.as_ref().expect("the trial measured");
    let tls = load.tls.as_ref().expect("the TLS block is stored");
    assert!(tls.verified && load.requests > 0);
    let mut untrusted = vec!["bench", "--server", &server];
    untrusted.extend(flags);
    let output = lab.run(&untrusted);
    let stderr = text(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("live") && stderr.to_lowercase().contains("certificate"),
        "an unknown issuer stops the run before any trial, saying why:\n{stderr}"
    );
    let mut missing = vec!["bench", "--server", &server, "--ca", "/nonexistent/ca.pem"];
    missing.extend(flags);
    let output = lab.run(&missing);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--ca") && stderr.contains("/nonexistent/ca.pem is not a file"),
        "{stderr}"
    );
}

#[test]
fn a_spec_whose_every_scenario_speaks_an_unserved_protocol_fails_saying_why() {
    let lab = Lab::new();
    lab.kit_target("kit-plain");
    let spec = lab.write(
        "spec.toml",
        "name = \"nothing\"\ntargets = [\"kit-plain\"]\n[run]\ntrials = 1\n\
         duration = \"0.3s\"\n[schedule]\ntls = true\n\
         [[workloads]]\nname = \"json\"\npath = \"/json\"\n",
    );
    let output = lab.run(&["run", spec.to_str().unwrap()]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("no target of this spec can run here")
            && stderr.contains("kit-plain over tls (1 scenario): target.toml does not declare it"),
        "{stderr}"
    );
}
