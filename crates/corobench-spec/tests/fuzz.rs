//! Property test over TOML-shaped input: keys and values from the spec's
//! vocabulary and beyond, random nesting, numbers at and past every limit,
//! text with control characters, and byte-level damage. Whatever the input,
//! the resolver must not panic, and every error must say where it is.

mod common;

use std::path::Path;
use std::time::Duration;

use common::catalog;
use corobench_spec::{MAX_SCENARIOS, resolve};
use proptest::prelude::*;

/// The tables of a spec (the top level first) with the keys each takes;
/// others come as strays.
const TABLES: &[(&str, &str)] = &[
    ("", "name description targets baseline"),
    (
        "[run]",
        "trials until_ci max_trials duration warmup idle timeout server_cpus generator_cpus generator_threads backend seed profile machine_probe",
    ),
    ("[schedule]", "connections rates"),
    ("[parameters.go-ants]", "pool_size queue_length nonblocking"),
    ("[parameters.swoole-epoll]", "workers"),
];

/// The keys one `[[workloads]]` may have besides `name` and `path`.
const WORKLOAD: &str = "method headers body body_file connections rates";

/// The keys one `[[claims]]` may have besides the required ones.
const CLAIM: &str = "workload ratio direction tolerance published";
const CLAIM_REQUIRED: &[&str] = &["source", "says", "metric", "a", "b"];

/// Text values a spec uses, and some that are almost right.
const WORDS: &str = "available all go-ants go-nethttp swoole-epoll 10s 500ms 24h 25h 0s \
    5124095576030431h 18446744073709551615s 3% 0.03 300% 0 1 0-1 1-0 0,1 7 auto epoll \
    io_uring /plaintext /db /io?ms=10 plaintext GET POST get true 64 -1 nan body.bin \
    /dev/zero /etc/hostname";

/// Numbers as TOML writes them, at and beyond every bound.
const NUMBERS: &str = "0 1 -1 8 64 65535 65536 10000 10001 86400 86401 9223372036854775807 \
    -9223372036854775808 18446744073709551615 99999999999999999999999999 0x10 0o17 0b101 \
    1_000 2.5 0.001 1e-300 1e300 1e400 -0.0 nan +inf -inf 1e7 10000000.5";

fn words(list: &'static str) -> Vec<&'static str> {
    list.split_whitespace().collect()
}

/// A TOML basic string holding `text`.
fn quoted(text: &str) -> String {
    let escaped: String = text
        .chars()
        .map(|c| match c {
            '"' | '\\' => format!("\\{c}"),
            c if c.is_control() => format!("\\u{:04X}", u32::from(c)),
            c => c.to_string(),
        })
        .collect();
    format!("\"{escaped}\"")
}

/// Any key: a word, or anything quoted.
fn stray_key() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z_-]{1,12}", any::<String>().prop_map(|k| quoted(&k))]
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(words(NUMBERS)).prop_map(str::to_string),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => (1u32..100_000).prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_map(|x| format!("{x:?}")).prop_filter("TOML float", |x| !x.contains("inf") && !x.contains("NaN")),
        3 => prop::sample::select(words(WORDS)).prop_map(quoted),
        1 => "[\\x00-\\x1f\\x7f a-z/%\\\\\"]{0,20}".prop_map(|s| quoted(&s)),
        1 => any::<String>().prop_map(|s| quoted(&s)),
        1 => any::<bool>().prop_map(|b| b.to_string()),
        1 => Just("1979-05-27T07:32:00Z".to_string()),
    ]
}

/// A value: a scalar, or lists and inline tables of values, nested.
fn value() -> impl Strategy<Value = String> {
    let nested = scalar().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6)
                .prop_map(|items| format!("[{}]", items.join(", "))),
            prop::collection::btree_map(
                prop::sample::select(&["X-A", "a", "name", "\"X B\""][..]),
                inner,
                0..4
            )
            .prop_map(|pairs| {
                let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                format!("{{ {} }}", pairs.join(", "))
            }),
        ]
    });
    let list =
        prop::collection::vec(scalar(), 1..5).prop_map(|items| format!("[{}]", items.join(", ")));
    // Mostly the plain values a spec holds, so that the resolver reads on
    // past the first key; lists and nesting less often.
    prop_oneof![6 => scalar(), 2 => list, 1 => nested]
}

/// Values that suit `key`, as TOML, at and beyond its bounds: most inputs
/// then get past the first key, to the checks behind it.
fn plausible(key: &str) -> &'static [&'static str] {
    match key {
        "name" => &[
            "\"p\"",
            "\"io-10ms\"",
            "\"json\"",
            "\"a b\"",
            "\"\"",
            "\"x\\u001b[2J\"",
        ],
        "description" => &["\"a suite\"", "\"two\\nlines\""],
        "targets" => &[
            "\"available\"",
            "[\"go-ants\"]",
            "[\"go-nethttp\", \"swoole-epoll\"]",
            "[\"go-ants\", \"go-nethttp\"]",
            "[]",
            "[\"go-ants\", \"go-ants\"]",
        ],
        "duration" | "warmup" | "idle" | "timeout" => &[
            "\"1s\"",
            "\"500ms\"",
            "\"24h\"",
            "\"24h 1s\"",
            "0",
            "0.5",
            "86400",
            "86401",
            "\"0s\"",
            "1e400",
        ],
        "until_ci" => &["\"3%\"", "0.03", "\"150%\"", "1.0", "0"],
        "server_cpus" => &["\"0\"", "0", "\"0-1\""],
        "generator_cpus" => &["\"1\"", "1", "\"0-1\"", "\"5\""],
        "backend" => &["\"auto\"", "\"epoll\"", "\"kqueue\""],
        "machine_probe" => &["true", "false", "\"false\"", "1"],
        "path" => &["\"/plaintext\"", "\"/db\"", "\"/a b\"", "\"plaintext\""],
        "method" => &["\"GET\"", "\"POST\"", "\"get\""],
        "headers" => &[
            "{ X-A = \"1\" }",
            "{ \"X B\" = \"1\" }",
            "{ Content-Length = \"5\" }",
            "{ X = \"a\\r\\nb\" }",
            "{ a = \"1\", A = \"2\" }",
        ],
        "body" => &["\"{}\"", "\"\""],
        "body_file" => &["\"Cargo.toml\"", "\"missing.bin\"", "\"/dev/zero\""],
        "nonblocking" => &["true", "\"false\"", "[true, false]", "\"maybe\""],
        "rates" => &["1000", "2.5", "[1, 2.5]", "[2.5, 2.50]", "0", "1e30", "nan"],
        "connections" => &["8", "[8, 64]", "[8, 8]", "0", "65536", "2.5"],
        "baseline" => &["\"go-nethttp\"", "\"swoole-epoll\"", "\"nope\"", "1"],
        "source" | "says" => &["\"a report\"", "\"\"", "\"two\\nlines\""],
        "a" | "b" => &[
            "\"go-ants\"",
            "\"go-nethttp c=64\"",
            "\"go-ants pool_size=64\"",
            "\"swoole-epoll workers=2\"",
            "\"go-ants pool=1\"",
            "\"nope\"",
            "\"\"",
        ],
        "metric" => &["\"rps\"", "\"p99.9\"", "\"p90\"", "\"tasks/s\""],
        "workload" => &["\"fuzz\"", "\"p\"", "\"nope\""],
        "ratio" => &["3.06", "0", "-1", "nan", "inf", "1e7", "\"2\""],
        "direction" => &["\"a>b\"", "\"a < b\"", "\"up\""],
        "tolerance" => &["\"10%\"", "0.1", "\"150%\"", "0"],
        "published" => &[
            "[146873, 48009]",
            "[1]",
            "[-1, 2]",
            "[nan, 1]",
            "[\"1\", 2]",
        ],
        _ => &["3", "1", "6", "64", "[1, 2]", "[2, 2]", "0", "10001", "-1"],
    }
}

/// A value for `key`: mostly one that suits it (the first of its list is
/// valid), sometimes anything.
fn value_for(key: &'static str) -> impl Strategy<Value = String> {
    let values = plausible(key);
    prop_oneof![
        6 => Just(values[0].to_string()),
        3 => prop::sample::select(values).prop_map(str::to_string),
        1 => value(),
    ]
}

/// A table header (empty for the top level), its `required` keys, some of
/// its other `keys`, each once, with values, and now and then a stray key.
fn table(
    header: &'static str,
    required: &'static [&'static str],
    keys: &'static str,
) -> impl Strategy<Value = String> {
    let chosen = prop::sample::subsequence(words(keys), 0..=words(keys).len());
    let stray = prop::option::weighted(0.05, (stray_key(), value()));
    (chosen, stray).prop_flat_map(move |(chosen, stray)| {
        let keys: Vec<&str> = required.iter().copied().chain(chosen).collect();
        let values: Vec<_> = keys.iter().map(|key| value_for(key)).collect();
        values.prop_map(move |values| {
            let mut text = if header.is_empty() {
                String::new()
            } else {
                format!("{header}\n")
            };
            for (key, value) in keys.iter().zip(&values) {
                text.push_str(&format!("{key} = {value}\n"));
            }
            if let Some((key, value)) = &stray {
                text.push_str(&format!("{key} = {value}\n"));
            }
            text
        })
    })
}

/// The top level, some of the tables in order, then some workloads.
fn tables() -> impl Strategy<Value = String> {
    let (top, rest) = (TABLES[0], &TABLES[1..]);
    let some = prop::sample::subsequence(rest, 0..=rest.len()).prop_flat_map(|some| {
        let each: Vec<_> = some
            .iter()
            .map(|(header, keys)| table(header, &[], keys))
            .collect();
        each.prop_map(|texts| texts.concat())
    });
    let workloads =
        prop::collection::vec(table("[[workloads]]", &["name", "path"], WORKLOAD), 0..3);
    let claims = prop::collection::vec(table("[[claims]]", CLAIM_REQUIRED, CLAIM), 0..3);
    (table(top.0, &[], top.1), some, workloads, claims).prop_map(
        |(top, some, workloads, claims)| {
            format!("{top}{some}{}{}", workloads.concat(), claims.concat())
        },
    )
}

/// A whole spec text, often ending in a valid workload (so that the rest is
/// read past it), sometimes damaged by one stray character.
fn spec() -> impl Strategy<Value = String> {
    let workload = "[[workloads]]\nname = \"fuzz\"\npath = \"/plaintext\"\n";
    let damage = prop::option::weighted(0.2, (any::<prop::sample::Index>(), any::<char>()));
    (any::<bool>(), tables(), damage).prop_map(move |(add_workload, tables, damage)| {
        let text = if add_workload {
            format!("{tables}{workload}")
        } else {
            tables
        };
        let Some((at, c)) = damage else {
            return text;
        };
        let mut chars: Vec<char> = text.chars().collect();
        let i = at.index(chars.len() + 1);
        chars.insert(i, c);
        chars.into_iter().collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn the_resolver_never_panics_and_every_error_has_a_place(text in spec()) {
        match resolve(&text, Some(Path::new("fuzz.toml")), &catalog()) {
            Ok(plan) => {
                eprintln!("FUZZOK {}", plan.scenarios.len());
                prop_assert!(plan.scenarios.len() <= MAX_SCENARIOS);
                let _ = plan.estimated_duration(Duration::from_secs(1));
            }
            Err(error) => {
                let message = error.to_string();
                eprintln!("FUZZERR {message}");
                prop_assert!(error.position.is_some(), "no place: {message}");
                prop_assert!(message.starts_with("fuzz.toml:"), "{message}");
                prop_assert!(!message.chars().any(char::is_control), "{message:?}");
                prop_assert!(message.len() < 1_000, "{message}");
            }
        }
    }
}
