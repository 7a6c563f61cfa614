//! The catalog the shipped suites resolve against: every target they
//! name, the program targets among them with the figures their claims use,
//! and the parameters they sweep.

use std::time::Duration;

use corobench_spec::{Catalog, CatalogProgram, CatalogTarget, Domain};

/// A program target of the shipped suites, with the figures their claims use.
fn program(name: &str, needs_server: bool, parameters: Vec<(&str, Domain)>) -> CatalogTarget {
    CatalogTarget {
        name: name.into(),
        available: Ok(()),
        parameters: parameters
            .into_iter()
            .map(|(n, d)| (n.to_string(), d))
            .collect(),
        min_warmup: Duration::ZERO,
        program: Some(CatalogProgram {
            needs_server,
            metrics: [
                "tasks/s",
                "req/s",
                "p50-ms",
                "p99-ms",
                "B/op",
                "peak-heap-MB",
                "short-mean-ms",
                "short-p95-ms",
                "heap-MiB",
            ]
            .map(String::from)
            .to_vec(),
        }),
        unserved: std::collections::BTreeMap::new(),
    }
}

/// Integer parameters of the given names.
fn counts<'a>(names: &[&'a str]) -> Vec<(&'a str, Domain)> {
    let count = Domain::Integer {
        min: 0,
        max: 1_000_000,
    };
    names.iter().map(|name| (*name, count.clone())).collect()
}

/// The catalog with every target the shipped suites name (the program
/// targets among them) and the parameters they sweep.
pub fn with_programs(mut catalog: Catalog) -> Catalog {
    let choice = |c: &[&str]| Domain::Choice(c.iter().map(|s| (*s).to_string()).collect());
    let mut ants = counts(&["pool_size", "queue_length"]);
    ants.push(("mode", choice(&["pool", "goroutines"])));
    let mut fanout = counts(&["goroutines"]);
    fanout.push(("mode", choice(&["fresh", "pooled"])));
    let fairness = counts(&[
        "short_tasks",
        "long_tasks",
        "short_ms",
        "long_ms",
        "short_interval_ms",
        "gomaxprocs",
    ]);
    catalog.targets.extend([
        program("go-ants-tasks", false, ants),
        program("go-fanout-client", true, fanout),
        program("go-fairness", false, fairness),
        program(
            "go-idle-goroutines",
            false,
            counts(&["goroutines", "wait_ms", "gomaxprocs"]),
        ),
    ]);
    for name in [
        "rust-axum",
        "python-fastapi",
        "php-fpm",
        "node-http",
        "swoole-uring",
        "java-vthreads",
    ] {
        catalog.targets.push(CatalogTarget {
            name: name.into(),
            available: Ok(()),
            parameters: std::collections::BTreeMap::new(),
            min_warmup: Duration::ZERO,
            program: None,
            unserved: std::collections::BTreeMap::new(),
        });
    }
    if let Some(server) = catalog.targets.iter_mut().find(|t| t.name == "go-nethttp") {
        let gomaxprocs = Domain::Integer { min: 1, max: 256 };
        server.parameters.insert("gomaxprocs".into(), gomaxprocs);
    }
    // The pool size database-pool sweeps, as both manifests declare it.
    for server in catalog
        .targets
        .iter_mut()
        .filter(|t| ["go-nethttp", "node-http"].contains(&t.name.as_str()))
    {
        let db_pool = Domain::Integer { min: 1, max: 1024 };
        server.parameters.insert("db_pool".into(), db_pool);
    }
    catalog
}
