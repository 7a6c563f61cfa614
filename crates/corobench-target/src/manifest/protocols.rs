//! `[protocols]`: which of TLS, h2 and h2c a target serves, and why not
//! where it does not (docs/contract.md, "Declaring protocols").

use std::collections::BTreeMap;

use serde::Serialize;
use toml::Spanned;

use crate::protocol::Protocol;

/// The keys of `[protocols]`.
pub const PROTOCOL_KEYS: [&str; 3] = ["tls", "h2", "h2c"];

/// The reason a protocol is not served when the manifest says nothing.
pub const UNDECLARED: &str = "target.toml does not declare it";

/// Whether a target serves one protocol.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Support {
    /// `true`: served.
    Served,
    /// Not served, and why (the manifest's words, or [`UNDECLARED`]).
    NotServed(String),
}

impl Default for Support {
    fn default() -> Self {
        Self::NotServed(UNDECLARED.to_owned())
    }
}

/// A validated `[protocols]` table. Cleartext HTTP/1.1 is always served.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Protocols {
    pub tls: Support,
    pub h2: Support,
    pub h2c: Support,
}

impl Protocols {
    /// Every protocol served: what a test's own server declares.
    #[must_use]
    pub fn all() -> Self {
        Self {
            tls: Support::Served,
            h2: Support::Served,
            h2c: Support::Served,
        }
    }

    /// `Ok` when `protocol` is served, else the reason it is not.
    ///
    /// # Errors
    /// The reason the target does not serve `protocol`.
    pub fn supports(&self, protocol: Protocol) -> Result<(), &str> {
        let support = match protocol.name() {
            "tls" => &self.tls,
            "h2" => &self.h2,
            "h2c" => &self.h2c,
            _ => return Ok(()),
        };
        match support {
            Support::Served => Ok(()),
            Support::NotServed(reason) => Err(reason),
        }
    }

    /// Says where a spec's server would declare what its table leaves
    /// out: a server of a spec has no `target.toml` to point at.
    pub fn undeclared_in_spec(&mut self, server: &str) {
        for (key, support) in [
            ("tls", &mut self.tls),
            ("h2", &mut self.h2),
            ("h2c", &mut self.h2c),
        ] {
            if *support == Support::default() {
                *support = Support::NotServed(format!(
                    "the spec does not declare it (add {key} = true under \
                     [servers.{server}.protocols] if the server speaks it)"
                ));
            }
        }
    }

    /// The protocols served, cleartext HTTP/1.1 first.
    #[must_use]
    pub fn served(&self) -> Vec<Protocol> {
        Protocol::ALL
            .into_iter()
            .filter(|p| self.supports(*p).is_ok())
            .collect()
    }
}

/// The raw table: every key with its span, so that errors name the line.
pub(super) type RawProtocols = BTreeMap<String, Spanned<toml::Value>>;

/// A protocol key at fault and what is wrong with it.
pub(super) struct ProtocolError {
    pub key: String,
    pub span: std::ops::Range<usize>,
    pub message: String,
}

/// Validates `[protocols]`; `table_span` is where the table is, for errors
/// about the table as a whole.
pub(super) fn protocols(
    raw: RawProtocols,
    table_span: std::ops::Range<usize>,
) -> Result<Protocols, ProtocolError> {
    let mut protocols = Protocols::default();
    for (key, value) in raw {
        let at = |message: String| ProtocolError {
            key: format!("protocols.{key}"),
            span: value.span(),
            message,
        };
        let support = support(value.get_ref()).map_err(at)?;
        match key.as_str() {
            "tls" => protocols.tls = support,
            "h2" => protocols.h2 = support,
            "h2c" => protocols.h2c = support,
            _ => {
                return Err(at(format!(
                    "unknown protocol; declare one of {} (cleartext HTTP/1.1 is always served)",
                    PROTOCOL_KEYS.join(", ")
                )));
            }
        }
    }
    if protocols.h2 == Support::Served && protocols.tls != Support::Served {
        return Err(ProtocolError {
            key: "protocols.h2".to_owned(),
            span: table_span,
            message: "h2 is HTTP/2 over TLS: declare tls = true too, or say why h2 is not served"
                .to_owned(),
        });
    }
    Ok(protocols)
}

fn support(value: &toml::Value) -> Result<Support, String> {
    match value {
        toml::Value::Boolean(true) => Ok(Support::Served),
        toml::Value::String(reason) if !reason.trim().is_empty() => {
            Ok(Support::NotServed(reason.trim().to_owned()))
        }
        toml::Value::Boolean(false) | toml::Value::String(_) => Err(
            "say why it is not served, as text (e.g. \"gnet has no TLS\"), or true when it is"
                .to_owned(),
        ),
        other => Err(format!(
            "must be true (served) or a reason it is not, as text; not a {}",
            other.type_str()
        )),
    }
}
