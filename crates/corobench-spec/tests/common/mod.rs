//! What the spec tests share: a catalog of three targets.

// Not every test file resolves the shipped suites.
#[allow(dead_code)]
pub mod shipped;

use std::collections::BTreeMap;
use std::time::Duration;

use corobench_spec::{Catalog, CatalogTarget, Domain};

/// go-ants with parameters, go-nethttp without, and swoole-epoll, which
/// cannot run here; two CPUs.
pub fn catalog() -> Catalog {
    let pool = BTreeMap::from([
        (
            "pool_size".to_string(),
            Domain::Integer {
                min: 1,
                max: 100_000,
            },
        ),
        (
            "queue_length".to_string(),
            Domain::Integer {
                min: 0,
                max: 1_000_000,
            },
        ),
        (
            "nonblocking".to_string(),
            Domain::Choice(vec!["false".into(), "true".into()]),
        ),
    ]);
    Catalog {
        targets: vec![
            CatalogTarget {
                name: "go-ants".into(),
                available: Ok(()),
                parameters: pool,
                min_warmup: Duration::ZERO,
                program: None,
                unserved: BTreeMap::new(),
            },
            CatalogTarget {
                name: "go-nethttp".into(),
                available: Ok(()),
                parameters: BTreeMap::new(),
                min_warmup: Duration::ZERO,
                program: None,
                unserved: BTreeMap::new(),
            },
            CatalogTarget {
                name: "swoole-epoll".into(),
                available: Err("php --ri swoole failed: the swoole extension is not loaded".into()),
                parameters: BTreeMap::from([(
                    "workers".to_string(),
                    Domain::Integer { min: 1, max: 64 },
                )]),
                min_warmup: Duration::ZERO,
                program: None,
                unserved: BTreeMap::new(),
            },
        ],
        cpus: 2,
    }
}
