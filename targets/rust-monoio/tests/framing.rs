//! The monoio target in-process against `rust-common`'s raw suite, in
//! cleartext and over TLS: pipelining, split heads, bodies across reads,
//! oversized heads, garbage, and the TLS port's ALPN and certificate.

use std::sync::OnceLock;

use rust_common::raw_suite::{TestServer, test_server_config, test_tls_server_config};
use rust_common::testing_tls::TestCerts;

const TARGET_NAME: &str = "rust-monoio";

fn start(
    config: rust_monoio::Config,
    listener: std::net::TcpListener,
    tls: Option<&'static TestCerts>,
) -> TestServer {
    let address = listener.local_addr().expect("address");
    rust_monoio::start_on(config, vec![listener]).expect("start");
    TestServer { address, tls }
}

fn server() -> TestServer {
    static SERVER: OnceLock<TestServer> = OnceLock::new();
    *SERVER.get_or_init(|| {
        let (config, listener) = test_server_config(TARGET_NAME);
        start(config, listener, None)
    })
}

fn tls_server() -> TestServer {
    static CERTS: OnceLock<TestCerts> = OnceLock::new();
    static SERVER: OnceLock<TestServer> = OnceLock::new();
    *SERVER.get_or_init(|| {
        let certs = CERTS.get_or_init(TestCerts::new);
        let (config, listener) = test_tls_server_config(TARGET_NAME, certs);
        start(config, listener, Some(certs))
    })
}

rust_common::raw_target_tests!(server(), TARGET_NAME);

mod over_tls {
    use super::{TARGET_NAME, tls_server};

    rust_common::raw_target_tests!(tls_server(), TARGET_NAME);
    rust_common::raw_tls_target_tests!(tls_server(), TARGET_NAME);
}
