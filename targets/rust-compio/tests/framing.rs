//! The compio target in-process against `rust-common`'s raw suite:
//! pipelining, split heads, bodies across reads, oversized heads, garbage.

use std::net::SocketAddr;
use std::sync::OnceLock;

const TARGET_NAME: &str = "rust-compio";

fn server() -> SocketAddr {
    static ADDRESS: OnceLock<SocketAddr> = OnceLock::new();
    *ADDRESS.get_or_init(|| {
        let (config, listener) = rust_common::raw_suite::test_server_config(TARGET_NAME);
        let address = listener.local_addr().expect("address");
        rust_compio::start_on(config, vec![listener]).expect("start");
        address
    })
}

rust_common::raw_target_tests!(server(), TARGET_NAME);
