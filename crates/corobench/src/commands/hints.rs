//! The flags and commands that fix an error. Library errors say what went
//! wrong in their own words, with the facts; which flag or command would
//! help is the command line's to say, here, once for each kind of error.

use std::path::Path;

use corobench_analyze::AnalyzeError;
use corobench_analyze::gate::{self, GateSyntaxError};
use corobench_engine::EngineError;
use corobench_engine::k8s::KubectlError;
use corobench_engine::serve::ServeError;
use corobench_load::{HandshakeRefusal, LoadError, MergeError, ProtocolFix, Setting, TlsError};
use corobench_report::ReportError;
use corobench_store::StoreError;
use corobench_target::TargetError;

use crate::commands::shared::DbArg;
use crate::exit::{self, Exit};

/// What to add after `error`'s message: the flag or command that helps,
/// from the first cause in its chain that has one; empty when its own
/// words say all.
#[must_use]
pub fn hint(error: &anyhow::Error) -> String {
    error
        .chain()
        .find_map(|cause| {
            if let Some(error) = cause.downcast_ref::<EngineError>() {
                return engine(error);
            }
            if let Some(error) = cause.downcast_ref::<StoreError>() {
                return store(error);
            }
            if let Some(error) = cause.downcast_ref::<TargetError>() {
                return target(error);
            }
            if let Some(error) = cause.downcast_ref::<MergeError>() {
                return merge(error);
            }
            if let Some(error) = cause.downcast_ref::<KubectlError>() {
                return kubectl(error);
            }
            cause.downcast_ref::<ReportError>().and_then(report)
        })
        .unwrap_or_default()
}

fn engine(error: &EngineError) -> Option<String> {
    match error {
        EngineError::Store { source, .. } => store(source),
        EngineError::Target(source) | EngineError::Preparing { source, .. } => target(source),
        _ => None,
    }
}

/// Another database (`--db`), or the command that makes or resumes a run.
fn store(error: &StoreError) -> Option<String> {
    Some(match error {
        StoreError::Missing { .. } => {
            ": run `corobench run` first, or pass --db PATH to read another one".to_owned()
        }
        StoreError::CannotOpen { .. } | StoreError::ReadOnly { .. } | StoreError::Locked { .. } => {
            ", or pass --db PATH".to_owned()
        }
        StoreError::Foreign { .. } => "; pass --db PATH to use another file".to_owned(),
        StoreError::Corrupt { .. } => " or pass --db PATH".to_owned(),
        StoreError::DiskFull {
            path,
            run_id: Some(id),
        } => format!(" with `{}`", resume_command(id, path)),
        StoreError::NoRuns { .. } => "; `corobench run` makes one".to_owned(),
        _ => return None,
    })
}

/// The command that finishes run `id` stored in `db`, naming the database
/// unless it is the default one (run as printed, it must not start a new
/// `./corobench.db`).
#[must_use]
pub fn resume_command(id: &str, db: &Path) -> String {
    let db = DbArg {
        db: db.to_path_buf(),
    };
    format!("corobench run --resume {id}{}", db.as_flag())
}

fn target(error: &TargetError) -> Option<String> {
    match error {
        TargetError::TargetsDirNotFound { .. } => Some(" or pass --targets-dir DIR".to_owned()),
        _ => None,
    }
}

/// An unreachable cluster: how to see the contexts and pick another.
fn kubectl(error: &KubectlError) -> Option<String> {
    match error {
        KubectlError::Unreachable { .. } => Some(
            "\nhint: check `kubectl config get-contexts` and pick a reachable one with \
             --context NAME (or `kubectl config use-context`)"
                .to_owned(),
        ),
        _ => None,
    }
}

fn report(error: &ReportError) -> Option<String> {
    match error {
        ReportError::UnsupportedForClaims(_) => Some(" (--format)".to_owned()),
        _ => None,
    }
}

/// Reports that cannot be merged because of how their loads were run.
fn merge(error: &MergeError) -> Option<String> {
    match error {
        MergeError::NoOverlap { .. } => Some(" (--start-at and -d of each load)".to_owned()),
        MergeError::Impossible { .. } | MergeError::Implausible { .. } => {
            Some(" (`corobench load --json`)".to_owned())
        }
        _ => None,
    }
}

/// A load that could not start, told with the flags that change what went
/// wrong: a setting is a usage error; a server that does not speak the
/// protocol asked for, or whose TLS handshake fails, has failed.
#[must_use]
pub fn load(error: LoadError) -> anyhow::Error {
    let (exit, hint) = match &error {
        LoadError::Config { settings, .. } => (Exit::Usage, load_flags(settings)),
        LoadError::FdLimit { .. } => (Exit::Usage, load_flags(&[Setting::Connections])),
        LoadError::Protocol { asked, fix, .. } => {
            let hint = match fix {
                Some(ProtocolFix::Http1) => format!(" (without {})", load_flag(*asked)),
                Some(ProtocolFix::OverTls) => " (an https:// URL and --h2)".to_owned(),
                None => String::new(),
            };
            (Exit::TargetFailed, hint)
        }
        LoadError::Tls(tls) if tls.is_setting() => (Exit::Usage, tls_hint(tls).to_owned()),
        LoadError::Tls(tls) => (Exit::TargetFailed, tls_hint(tls).to_owned()),
        _ => return error.into(),
    };
    exit::Failure {
        exit,
        message: format!("{error}{hint}"),
    }
    .into()
}

/// ` (FLAG, FLAG)` for the settings a load error is about.
fn load_flags(settings: &[Setting]) -> String {
    let flags: Vec<&str> = settings
        .iter()
        .map(|s| load_flag(*s))
        .filter(|f| !f.is_empty())
        .collect();
    if flags.is_empty() {
        String::new()
    } else {
        format!(" ({})", flags.join(", "))
    }
}

/// The `corobench load` flag of a setting; empty for one it has no flag
/// for (the URL is its argument).
fn load_flag(setting: Setting) -> &'static str {
    match setting {
        Setting::Method => "-X",
        Setting::Header => "-H",
        Setting::Body => "--body, --body-file",
        Setting::Connections => "-c",
        Setting::Threads => "-t",
        Setting::Rate => "-R",
        Setting::Requests => "-n",
        Setting::Duration => "-d",
        Setting::Warmup => "--warmup",
        Setting::Timeout => "--timeout",
        Setting::Pipeline => "--pipeline",
        Setting::NoKeepalive => "--no-keepalive",
        Setting::Cpus => "--cpus",
        Setting::Backend => "--backend",
        Setting::H2 => "--h2",
        Setting::H2c => "--h2c",
        Setting::Streams => "-m",
        Setting::StreamWindow => "--h2-stream-window",
        Setting::ConnectionWindow => "--h2-connection-window",
        Setting::MaxFrame => "--h2-max-frame",
        Setting::Ktls => "--ktls",
        Setting::KernelStamps => "--kernel-stamps",
        Setting::Tick => "--tick",
        Setting::KernelSendStamps => "--kernel-send-stamps",
        Setting::StartAt => "--start-at",
        Setting::Background => "--background",
        Setting::BackgroundStreams => "--background-streams",
        _ => "",
    }
}

/// The flags that change a TLS setting or handshake that went wrong.
fn tls_hint(error: &TlsError) -> &'static str {
    match error {
        TlsError::Handshake { refusal, .. } => match refusal {
            HandshakeRefusal::UntrustedCertificate => " (--ca FILE, or --insecure)",
            HandshakeRefusal::WrongName { .. } => " (--sni NAME, or --insecure)",
            HandshakeRefusal::Expired
            | HandshakeRefusal::NotValidYet
            | HandshakeRefusal::Certificate(_) => " (--insecure)",
            HandshakeRefusal::NoAlpn { .. } => " (--alpn)",
            HandshakeRefusal::Version | HandshakeRefusal::Closed => {
                " (--tls-version, --tls-ciphers)"
            }
            HandshakeRefusal::Timeout => " (--timeout)",
            _ => "",
        },
        TlsError::UnknownVersion(_) => " (--tls-version)",
        TlsError::UnknownCipher { .. } | TlsError::NoCipherForVersions { .. } => {
            " (--tls-ciphers, --tls-version)"
        }
        TlsError::CaFileUnreadable { .. }
        | TlsError::CaFileNotPem { .. }
        | TlsError::CaFileInvalid { .. } => " (--ca)",
        TlsError::ServerName(_) => " (--sni)",
        TlsError::KtlsUnavailable(_) | TlsError::KtlsRefused(_) => {
            "; or run without --ktls, encrypting in corobench"
        }
        TlsError::UnknownProvider(_) | TlsError::ProviderNotBuilt(_) => " (--tls-provider)",
        _ => "",
    }
}

/// A target `serve` could not start, naming `--port` when the port asked
/// for is taken.
#[must_use]
pub fn serve(error: ServeError) -> anyhow::Error {
    match &error {
        ServeError::PortTaken { port, .. } => exit::target_failed(format!(
            "--port {port}: {error}: pick another --port, or leave it out for a free one"
        )),
        _ => error.into(),
    }
}

/// A `--fail-on` that is no list of rules, with an example of one.
#[must_use]
pub fn fail_on(error: &GateSyntaxError) -> anyhow::Error {
    exit::usage(format!(
        "--fail-on {error}\nexample: --fail-on \"{}\"",
        gate::EXAMPLE
    ))
}

/// A run that cannot be analysed as the flags ask.
#[must_use]
pub fn analysis(error: AnalyzeError) -> anyhow::Error {
    match &error {
        AnalyzeError::UnknownBaseline { name, .. } => {
            exit::usage(format!("--baseline {name}: {error}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn told(error: impl Into<anyhow::Error>) -> String {
        let error = error.into();
        format!("{error}{}", hint(&error))
    }

    #[test]
    fn store_errors_name_the_flag_or_command_that_helps() {
        let path = PathBuf::from("/data/results.db");
        assert_eq!(
            told(StoreError::Missing { path: path.clone() }),
            "no result database at /data/results.db: run `corobench run` first, or pass --db \
             PATH to read another one"
        );
        assert_eq!(
            told(StoreError::Locked { path: path.clone() }),
            "/data/results.db is locked by another process; wait for the other corobench to \
             finish, or pass --db PATH"
        );
        assert!(
            told(StoreError::NoRuns { path: path.clone() })
                .ends_with("; `corobench run` makes one")
        );
        let full = StoreError::DiskFull {
            path: path.clone(),
            run_id: Some("20261122-063301-3f9a".to_owned()),
        };
        assert_eq!(
            told(full),
            "the disk holding /data/results.db is full; free space and resume the run with \
             `corobench run --resume 20261122-063301-3f9a --db /data/results.db`"
        );
        // Inside the engine's error, the same advice.
        let stored = EngineError::Store {
            what: "storing a trial",
            source: Box::new(StoreError::ReadOnly { path }),
        };
        assert!(told(stored).ends_with("writable, or pass --db PATH"));
    }

    #[test]
    fn the_default_database_is_not_named_in_the_resume_command() {
        assert_eq!(
            resume_command("r1", Path::new(crate::commands::shared::DEFAULT_DB)),
            "corobench run --resume r1"
        );
    }

    #[test]
    fn a_missing_targets_folder_names_the_flag() {
        let error = TargetError::TargetsDirNotFound {
            tried: vec!["/nonexistent/targets (asked for), which is not a directory".to_owned()],
        };
        assert!(told(error).ends_with("; set COROBENCH_TARGETS or pass --targets-dir DIR"),);
    }

    #[test]
    fn an_unreachable_cluster_names_the_flag_that_picks_another() {
        let error = KubectlError::Unreachable {
            context: "kind".to_owned(),
            said: "connection refused".to_owned(),
        };
        assert_eq!(
            told(error),
            "no Kubernetes cluster reachable through kubectl context \"kind\": `kubectl \
             cluster-info` failed: connection refused\nhint: check `kubectl config \
             get-contexts` and pick a reachable one with --context NAME (or `kubectl config \
             use-context`)"
        );
        let gone = KubectlError::Interrupted {
            shown: "kubectl apply -f -".to_owned(),
        };
        assert_eq!(told(gone), "interrupted while kubectl apply -f - ran");
    }

    #[test]
    fn gate_rules_and_baselines_are_told_as_their_flags() {
        let syntax = gate::parse_rules("rps:-5").unwrap_err();
        let shown = fail_on(&syntax).to_string();
        assert!(
            shown.starts_with("--fail-on \"rps:-5\": at column 7"),
            "{shown}"
        );
        assert!(
            shown.ends_with("example: --fail-on \"rps:-5%,p99:+10%\""),
            "{shown}"
        );
        let baseline = analysis(AnalyzeError::UnknownBaseline {
            name: "nginx".to_owned(),
            run_id: "r1".to_owned(),
            targets: vec!["base".to_owned(), "ants".to_owned()],
        });
        assert_eq!(
            baseline.to_string(),
            "--baseline nginx: run r1 has no target nginx to compare with; use one of: base, ants"
        );
        assert_eq!(exit::status_of(&baseline), exit::Exit::Usage);
    }

    #[test]
    fn load_errors_name_the_flags_of_their_settings() {
        let schedule = corobench_model::Schedule::closed(4)
            .with_pipeline(2)
            .with_keepalive(false);
        let refused = corobench_load::limits::check_wire_mode(&schedule).unwrap_err();
        let told = load(refused);
        assert!(
            told.to_string()
                .ends_with("its own (--pipeline, --no-keepalive)"),
            "{told}"
        );
        assert_eq!(exit::status_of(&told), Exit::Usage);
        let rate = corobench_load::limits::check_rate(5e7, 100, 1).unwrap_err();
        assert!(load(rate).to_string().ends_with("(-R, -c, -t)"));
        let fds = LoadError::FdLimit {
            connections: 30_000,
            needed: 30_064,
            limit: 20_000,
            kernel_max: None,
        };
        let fds = load(fds).to_string();
        assert!(
            fds.contains("use at most 19936 connections") && fds.ends_with(" (-c)"),
            "{fds}"
        );
    }

    #[test]
    fn a_server_that_does_not_speak_the_protocol_is_told_which_flag_to_drop() {
        let not_h2 = LoadError::Protocol {
            asked: Setting::H2,
            fix: Some(ProtocolFix::Http1),
            message: "s chose no protocol by ALPN".to_owned(),
        };
        let told = load(not_h2);
        assert_eq!(
            told.to_string(),
            "s chose no protocol by ALPN (without --h2)"
        );
        assert_eq!(exit::status_of(&told), Exit::TargetFailed);
        let tls_port = LoadError::Protocol {
            asked: Setting::H2c,
            fix: Some(ProtocolFix::OverTls),
            message: "this port speaks TLS".to_owned(),
        };
        assert!(
            load(tls_port)
                .to_string()
                .ends_with("(an https:// URL and --h2)")
        );
    }
}
