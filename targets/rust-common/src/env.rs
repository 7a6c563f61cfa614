//! The environment a target is started with (`docs/contract.md`).

use std::net::{IpAddr, Ipv4Addr};
use std::ops::RangeInclusive;
use std::path::PathBuf;

use crate::protocol::Protocols;

/// A variable that is missing or malformed, with what to set instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvError(pub String);

impl std::fmt::Display for EnvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EnvError {}

/// The contract's variables, read once at start.
#[derive(Debug, Clone)]
pub struct ServerEnv {
    /// `LISTEN_ADDR`: where to listen, 127.0.0.1 unless told otherwise.
    pub listen: IpAddr,
    pub port: u16,
    pub target_name: String,
    pub data_dir: PathBuf,
    pub upload_dir: PathBuf,
    /// `None` (or empty) means no database runs: `/db` answers 503.
    pub database_url: Option<String>,
    /// `HTTP_PROTOCOL`, `TLS_CERT`, `TLS_KEY`.
    pub protocols: Protocols,
}

impl ServerEnv {
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
        let required = |name: &str| {
            lookup(name)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| EnvError(format!("{name} is not set; see docs/contract.md")))
        };
        let port_raw = required("PORT")?;
        let port = port_raw
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| {
                EnvError(format!(
                    "PORT must be a TCP port in 1..=65535, got {port_raw:?}"
                ))
            })?;
        let listen = match lookup("LISTEN_ADDR").filter(|v| !v.trim().is_empty()) {
            None => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Some(raw) => raw.trim().parse().map_err(|_| {
                EnvError(format!(
                    "LISTEN_ADDR must be an IP address such as 127.0.0.1 or 0.0.0.0, got {raw:?}"
                ))
            })?,
        };
        Ok(Self {
            listen,
            port,
            target_name: required("TARGET_NAME")?,
            data_dir: PathBuf::from(required("DATA_DIR")?),
            upload_dir: PathBuf::from(required("UPLOAD_DIR")?),
            database_url: lookup("DATABASE_URL").filter(|v| !v.is_empty()),
            protocols: Protocols::from_lookup(&lookup)?,
        })
    }
}

/// An integer parameter from the environment (`target.toml` maps each
/// parameter to one variable); absent or empty means `default`.
pub fn int_param(name: &str, default: u32, range: RangeInclusive<u32>) -> Result<u32, EnvError> {
    parse_int_param(name, std::env::var(name).ok(), default, range)
}

fn parse_int_param(
    name: &str,
    raw: Option<String>,
    default: u32,
    range: RangeInclusive<u32>,
) -> Result<u32, EnvError> {
    let Some(raw) = raw.filter(|v| !v.is_empty()) else {
        return Ok(default);
    };
    raw.trim()
        .parse::<u32>()
        .ok()
        .filter(|v| range.contains(v))
        .ok_or_else(|| {
            EnvError(format!(
                "{name} must be an integer in {}..={}, got {raw:?}",
                range.start(),
                range.end()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    const FULL: [(&str, &str); 4] = [
        ("PORT", "8080"),
        ("TARGET_NAME", "rust-x"),
        ("DATA_DIR", "/d"),
        ("UPLOAD_DIR", "/u"),
    ];

    #[test]
    fn reads_a_complete_environment() {
        let env = ServerEnv::from_lookup(lookup(&FULL)).expect("valid");
        assert_eq!(env.port, 8080);
        assert_eq!(env.target_name, "rust-x");
        assert_eq!(env.database_url, None);
    }

    #[test]
    fn missing_or_bad_port_says_which_variable() {
        let error = ServerEnv::from_lookup(lookup(&FULL[1..])).unwrap_err();
        assert!(error.0.starts_with("PORT is not set"), "{error}");
        let mut bad = FULL;
        bad[0] = ("PORT", "http");
        let error = ServerEnv::from_lookup(lookup(&bad)).unwrap_err();
        assert_eq!(
            error.0,
            r#"PORT must be a TCP port in 1..=65535, got "http""#
        );
    }

    #[test]
    fn listens_on_loopback_unless_told_otherwise() {
        let env = ServerEnv::from_lookup(lookup(&FULL)).expect("valid");
        assert_eq!(env.listen, IpAddr::V4(Ipv4Addr::LOCALHOST));
        let mut pairs = FULL.to_vec();
        pairs.push(("LISTEN_ADDR", "127.0.0.2"));
        let env = ServerEnv::from_lookup(lookup(&pairs)).expect("valid");
        assert_eq!(env.listen, IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)));
        pairs.pop();
        pairs.push(("LISTEN_ADDR", "localhost"));
        let error = ServerEnv::from_lookup(lookup(&pairs)).unwrap_err();
        assert!(
            error.0.starts_with("LISTEN_ADDR must be an IP address"),
            "{error}"
        );
    }

    #[test]
    fn empty_database_url_means_none() {
        let mut pairs = FULL.to_vec();
        pairs.push(("DATABASE_URL", ""));
        assert_eq!(
            ServerEnv::from_lookup(lookup(&pairs))
                .expect("valid")
                .database_url,
            None
        );
    }

    #[test]
    fn int_params_default_and_validate() {
        assert_eq!(parse_int_param("N", None, 1, 1..=256), Ok(1));
        assert_eq!(parse_int_param("N", Some("4".into()), 1, 1..=256), Ok(4));
        let error = parse_int_param("WORKER_THREADS", Some("0".into()), 1, 1..=256).unwrap_err();
        assert_eq!(
            error.0,
            r#"WORKER_THREADS must be an integer in 1..=256, got "0""#
        );
    }
}
