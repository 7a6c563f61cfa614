//! The verifier against the testkit's contract server: the correct server
//! passes every rule, and each fault fails exactly the rule it breaks.

use std::collections::BTreeSet;
use std::sync::Arc;

use corobench_target::ensure_payload;
use corobench_testkit::{ContractConfig, ContractServer, Fault, MemoryWorld};
use corobench_verify::{
    DatabaseProbe, Outcome, ProbeError, RULES, RuleResult, VerifyConfig, verify,
};

const NAME: &str = "kit";
const MODEL: &str = "worker-pool";

/// Plays the database: reads the same table the server answers from.
#[derive(Debug)]
struct MemoryProbe(Arc<MemoryWorld>);

impl DatabaseProbe for MemoryProbe {
    fn random_number(&self, id: i32) -> Result<Option<i32>, ProbeError> {
        Ok(self.0.random_number(id))
    }

    fn world_reads(&self) -> Result<u64, ProbeError> {
        Ok(self.0.reads())
    }
}

/// Runs the verifier against a contract server with `faults` (and a
/// database unless `with_database` is false).
fn verify_with(faults: &[Fault], with_database: bool) -> Vec<RuleResult> {
    let dir = tempfile::tempdir().unwrap();
    ensure_payload(dir.path()).unwrap();
    let world = Arc::new(MemoryWorld::new(7));
    let config = ContractConfig {
        target_name: NAME.to_owned(),
        model: MODEL.to_owned(),
        data_dir: Some(dir.path().to_owned()),
        upload_dir: Some(dir.path().to_owned()),
        world: with_database.then(|| Arc::clone(&world) as _),
        faults: faults.iter().copied().collect(),
        max_rate: None,
        burst_s: 0.02,
        alloc_per_conn: 0,
        tls: None,
    };
    let server = ContractServer::start(config).unwrap();
    let probe = MemoryProbe(world);
    let mut verify_config = VerifyConfig::new(server.addr(), NAME, MODEL);
    if with_database {
        verify_config.database = Some(&probe);
    }
    verify(&verify_config)
}

fn failures(results: &[RuleResult]) -> Vec<&'static str> {
    results
        .iter()
        .filter(|r| r.is_fail())
        .map(|r| r.rule)
        .collect()
}

#[test]
fn the_correct_server_passes_every_rule() {
    let results = verify_with(&[], true);
    let rules: Vec<&str> = results.iter().map(|r| r.rule).collect();
    assert_eq!(rules, RULES);
    let not_passed: Vec<&RuleResult> = results.iter().filter(|r| !r.is_pass()).collect();
    assert!(not_passed.is_empty(), "{not_passed:#?}");
}

#[test]
fn without_a_database_db_must_answer_503() {
    let results = verify_with(&[], false);
    let not_passed: Vec<&RuleResult> = results.iter().filter(|r| !r.is_pass()).collect();
    assert!(not_passed.is_empty(), "{not_passed:#?}");
}

#[test]
fn a_database_that_is_read_once_then_repeated_fails_db() {
    let results = verify_with(&[Fault::DbSkipsQuery], true);
    assert_eq!(failures(&results), ["db"]);
    let message = results
        .iter()
        .find(|r| r.rule == "db")
        .unwrap()
        .message()
        .unwrap();
    assert!(
        message.starts_with("db: GET /db × 20: expected world to be read at least 20 times"),
        "{message}"
    );
}

#[test]
fn a_pool_that_does_not_count_select1_fails_select1() {
    let results = verify_with(&[Fault::PoolNotCounted], true);
    assert_eq!(failures(&results), ["select1"], "{results:#?}");
    let message = results.iter().find(|r| r.rule == "select1").unwrap();
    let message = message.message().unwrap();
    assert!(
        message.starts_with("select1: GET /select1 × 20: /stats pool.acquires went from 0 to 0"),
        "{message}"
    );
}

#[test]
fn a_target_without_select1_is_warned_about_not_failed() {
    for with_database in [true, false] {
        let results = verify_with(&[Fault::NoSelect1], with_database);
        assert!(failures(&results).is_empty(), "{results:#?}");
        let select1 = results.iter().find(|r| r.rule == "select1").unwrap();
        assert!(
            matches!(&select1.outcome, Outcome::Warn(m) if m.contains("not served")),
            "{select1:?}"
        );
    }
}

#[test]
fn messages_name_the_rule_the_request_the_expectation_and_the_answer() {
    let results = verify_with(&[Fault::WrongBody], false);
    let json = results.iter().find(|r| r.rule == "json").unwrap();
    assert_eq!(
        json.outcome,
        Outcome::Fail(
            r#"json: GET /json: expected body {"message":"Hello, World!"}, got {"msg":"hi"}"#
                .to_owned()
        )
    );
}

/// One test per fault: exactly the rule it breaks fails, and its message
/// starts with the rule's name.
macro_rules! each_fault_fails_its_rule {
    ($($test:ident: $fault:expr => $rule:literal,)*) => {$(
        #[test]
        fn $test() {
            let results = verify_with(&[$fault], false);
            assert_eq!(failures(&results), [$rule], "{results:#?}");
            let failed = results.iter().find(|r| r.rule == $rule).unwrap();
            let message = failed.message().unwrap();
            assert!(message.starts_with(concat!($rule, ": ")), "{message}");
        }
    )*};
}

each_fault_fails_its_rule! {
    wrong_body_fails_json: Fault::WrongBody => "json",
    a_missing_server_header_fails_header_server: Fault::MissingServer => "header-server",
    a_missing_date_fails_header_date: Fault::MissingDate => "header-date",
    a_frozen_date_fails_date_not_cached: Fault::FrozenDate => "date-not-cached",
    a_missing_content_type_fails_header_content_type: Fault::MissingContentType => "header-content-type",
    a_missing_content_length_fails_header_content_length: Fault::MissingContentLength => "header-content-length",
    chunked_bodies_fail_header_content_length: Fault::Chunked => "header-content-length",
    closing_every_connection_fails_keep_alive: Fault::NoKeepAlive => "keep-alive",
    dropping_pipelined_requests_fails_pipelining: Fault::NoPipelining => "pipelining",
    an_io_that_does_not_wait_fails_io: Fault::IoNoWait => "io",
    a_truncated_file_fails_file: Fault::TruncatedFile => "file",
    a_wrong_upload_hash_fails_upload: Fault::WrongUploadHash => "upload",
    a_wrong_mixed_digest_fails_mixed: Fault::WrongMixedDigest => "mixed",
    a_wrong_model_fails_stats: Fault::WrongStatsModel => "stats",
    ok_on_an_unknown_path_fails_not_found: Fault::UnknownPathOk => "not-found",
    ok_for_a_bad_parameter_fails_bad_parameter: Fault::BadParameterOk => "bad-parameter",
    ok_for_a_wrong_method_fails_method_not_allowed: Fault::WrongMethodOk => "method-not-allowed",
}

#[test]
fn every_server_fault_is_in_the_table() {
    // IgnoreSigterm and IgnoreListenAddr concern the process, checked by
    // whoever starts and stops it (`corobench verify`: tests/verify.rs);
    // LeakTasks breaks no rule: the leak check after a trial catches it.
    let source = include_str!("contract.rs");
    let exempt = [
        Fault::IgnoreSigterm,
        Fault::IgnoreListenAddr,
        Fault::LeakTasks,
    ];
    let untested: BTreeSet<Fault> = Fault::ALL
        .into_iter()
        .filter(|fault| !exempt.contains(fault))
        .filter(|fault| {
            !source.contains(&format!("&[Fault::{fault:?}]"))
                && !source.contains(&format!("Fault::{fault:?} =>"))
        })
        .collect();
    assert!(untested.is_empty(), "faults without a row: {untested:?}");
}
