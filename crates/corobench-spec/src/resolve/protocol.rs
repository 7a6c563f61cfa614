//! `tls` and `protocol`, in `[schedule]` or a workload: what the
//! connections speak, a dimension swept like connections. `tls = [false,
//! true]` measures every schedule in cleartext and over TLS; `protocol`
//! names the HTTP version (`"h2"` is HTTP/2 over TLS, `"h2c"` cleartext
//! HTTP/2), and a `tls` value that contradicts it is refused.

use std::ops::Range;

use corobench_model::{HttpVersion, Protocol};

use crate::document::{self, Value};
use crate::error::{Locator, SpecError};
use crate::values::ValueError;

use super::repeats::refuse_repeats;

/// The HTTP versions the load generator speaks.
const GENERATOR_SPEAKS: [HttpVersion; 2] = [HttpVersion::Http1, HttpVersion::H2];

/// A checked list of one key, with where it was written.
#[derive(Clone, Debug)]
pub(super) struct Given<T> {
    pub values: Vec<T>,
    pub span: Range<usize>,
    pub key: String,
}

/// `tls` and `protocol` as a spec or workload set them.
#[derive(Clone, Debug, Default)]
pub(super) struct ProtocolSweep {
    pub tls: Option<Given<bool>>,
    /// `protocol`: HTTP/1.1 (in cleartext, until `tls` says), h2 or h2c.
    pub named: Option<Given<Protocol>>,
}

impl ProtocolSweep {
    /// `tls = true | false | [false, true]`.
    pub fn read_tls(
        &mut self,
        value: &Value<'_>,
        key: &str,
        at: &Locator<'_>,
    ) -> Result<(), SpecError> {
        let items = document::one_or_many(value, key, at)?;
        let values = items
            .iter()
            .map(|item| document::boolean(item, key, at))
            .collect::<Result<Vec<bool>, _>>()?;
        refuse_repeats(value, &items, &values, key, |i| values[i].to_string(), at)?;
        self.tls = Some(Given {
            values,
            span: value.span(),
            key: key.to_owned(),
        });
        Ok(())
    }

    /// `protocol = "http/1.1" | "h2" | "h2c"`, or a list of them.
    pub fn read_protocol(
        &mut self,
        value: &Value<'_>,
        key: &str,
        at: &Locator<'_>,
    ) -> Result<(), SpecError> {
        let items = document::one_or_many(value, key, at)?;
        let values = items
            .iter()
            .map(|item| named_protocol(item, key, at))
            .collect::<Result<Vec<Protocol>, _>>()?;
        refuse_repeats(
            value,
            &items,
            &values,
            key,
            |i| values[i].env_value().to_owned(),
            at,
        )?;
        self.named = Some(Given {
            values,
            span: value.span(),
            key: key.to_owned(),
        });
        Ok(())
    }

    /// How many protocols this sweep gives (an upper bound where `tls`
    /// contradicts `protocol`, which [`Self::protocols`] refuses).
    pub fn count(&self) -> usize {
        let tls = self.tls.as_ref().map_or(1, |t| t.values.len());
        self.named.as_ref().map_or(tls, |named| {
            named
                .values
                .iter()
                .map(|p| if p.is_h2() { 1 } else { tls })
                .sum()
        })
    }

    /// Every protocol swept, cleartext first: each HTTP version over each
    /// `tls` value it allows. HTTP/2 decides TLS itself (`h2` over TLS,
    /// `h2c` without), so a `tls` value saying otherwise is refused.
    pub fn protocols(&self, at: &Locator<'_>) -> Result<Vec<Protocol>, SpecError> {
        let named = self
            .named
            .as_ref()
            .map_or(vec![Protocol::HTTP1], |n| n.values.clone());
        let tls_values = self.tls.as_ref().map_or(vec![false], |t| t.values.clone());
        let mut protocols = Vec::new();
        for protocol in named {
            if protocol.is_h2() {
                self.refuse_contradiction(protocol, at)?;
                protocols.push(protocol);
            } else {
                protocols.extend(tls_values.iter().map(|&tls| Protocol { tls, ..protocol }));
            }
        }
        Ok(protocols)
    }

    /// `protocol = "h2"` with `tls = false` (or `"h2c"` with `tls = true`).
    fn refuse_contradiction(&self, protocol: Protocol, at: &Locator<'_>) -> Result<(), SpecError> {
        let Some(tls) = &self.tls else {
            return Ok(());
        };
        if tls.values.iter().all(|&t| t == protocol.tls) {
            return Ok(());
        }
        let message = format!(
            "protocol \"{}\" is {}, so tls = {} contradicts it: drop tls, or sweep HTTP/1.1 \
             over TLS with protocol = \"http/1.1\"",
            protocol.name(),
            if protocol.tls {
                "HTTP/2 over TLS"
            } else {
                "cleartext HTTP/2"
            },
            !protocol.tls,
        );
        Err(at.at(tls.span.clone(), &tls.key, message))
    }
}

/// The protocol a `protocol` value names (HTTP/1.1 in cleartext: `tls`
/// decides the rest); HTTP/2 is refused until the load generator speaks it.
fn named_protocol(item: &Value<'_>, key: &str, at: &Locator<'_>) -> Result<Protocol, SpecError> {
    let text = document::text(item, key, "\"http/1.1\"", at)?;
    let protocol = match text {
        "http/1.1" => Protocol::HTTP1,
        "h2" => Protocol::H2,
        "h2c" => Protocol::H2C,
        "tls" | "https" => {
            let message = "TLS is its own key: write tls = true (with protocol = \"http/1.1\", \
                           the default)";
            return Err(at.at(item.span(), key, message));
        }
        other => {
            let message = format!(
                "{} is not a protocol: use \"http/1.1\", \"h2\" (HTTP/2 over TLS) or \"h2c\" \
                 (cleartext HTTP/2)",
                crate::error::shown(other)
            );
            return Err(at.at(item.span(), key, message));
        }
    };
    if !GENERATOR_SPEAKS.contains(&protocol.http) {
        let message = format!(
            "protocol \"{text}\": the load generator does not speak HTTP/2 yet; measure \
             HTTP/1.1 (protocol = \"http/1.1\", with tls = true for TLS)"
        );
        return Err(at.at(item.span(), key, message));
    }
    Ok(protocol)
}

/// The words of a claim's side that pick a protocol: `tls=true|false`,
/// `protocol=http/1.1|h2|h2c`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ProtocolChoice {
    tls: Option<bool>,
    named: Option<Protocol>,
}

impl ProtocolChoice {
    /// Takes `name=value` if it is a protocol word: `None` when it is not
    /// one, else whether its value is one.
    pub fn take(&mut self, name: &str, value: &str) -> Option<Result<(), ValueError>> {
        let refused = |name, expected| ValueError::Word {
            name,
            value: value.to_owned(),
            expected,
        };
        match name {
            "tls" => Some(match value {
                "true" | "false" => {
                    self.tls = Some(value == "true");
                    Ok(())
                }
                _ => Err(refused("tls", "true or false")),
            }),
            "protocol" => Some(match value {
                "http/1.1" | "h2" | "h2c" => {
                    self.named = value.parse().ok();
                    Ok(())
                }
                _ => Err(refused("protocol", "http/1.1, h2 or h2c")),
            }),
            _ => None,
        }
    }

    /// Whether a scenario speaking `protocol` is one this choice picks.
    pub fn matches(self, protocol: Protocol) -> bool {
        self.tls.is_none_or(|tls| protocol.tls == tls)
            && self.named.is_none_or(|named| {
                if named.is_h2() {
                    protocol == named
                } else {
                    protocol.http == HttpVersion::Http1
                }
            })
    }
}

/// The word that tells `protocol` apart in a claim's side: `tls=true` for
/// HTTP/1.1, `protocol=h2` for HTTP/2.
pub(super) fn choice_word(protocol: Protocol) -> String {
    if protocol.is_h2() {
        format!("protocol={}", protocol.name())
    } else {
        format!("tls={}", protocol.tls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(tls: Option<Vec<bool>>, named: Option<Vec<Protocol>>) -> ProtocolSweep {
        let given = |values| Given {
            values,
            span: 0..0,
            key: "schedule.tls".to_owned(),
        };
        ProtocolSweep {
            tls: tls.map(given),
            named: named.map(|values| Given {
                values,
                span: 0..0,
                key: "schedule.protocol".to_owned(),
            }),
        }
    }

    #[test]
    fn tls_sweeps_http1_cleartext_first() {
        let at = Locator::new(None, "");
        let both = sweep(Some(vec![false, true]), None);
        assert_eq!(
            both.protocols(&at).unwrap(),
            [Protocol::HTTP1, Protocol::TLS]
        );
        assert_eq!(both.count(), 2);
        let none = sweep(None, None);
        assert_eq!(none.protocols(&at).unwrap(), [Protocol::HTTP1]);
    }

    #[test]
    fn http2_decides_tls_and_a_contradicting_tls_is_refused() {
        let at = Locator::new(None, "");
        let h2 = sweep(Some(vec![true]), Some(vec![Protocol::H2]));
        assert_eq!(h2.protocols(&at).unwrap(), [Protocol::H2]);
        let wrong = sweep(Some(vec![false, true]), Some(vec![Protocol::H2]));
        let error = wrong.protocols(&at).unwrap_err().to_string();
        assert!(error.contains("contradicts"), "{error}");
        let h2c = sweep(Some(vec![true]), Some(vec![Protocol::H2C]));
        let error = h2c.protocols(&at).unwrap_err().to_string();
        assert!(error.contains("cleartext HTTP/2"), "{error}");
        let mixed = sweep(Some(vec![false, true]), Some(vec![Protocol::HTTP1]));
        assert_eq!(mixed.count(), 2);
    }

    #[test]
    fn claim_words_pick_protocols() {
        let mut choice = ProtocolChoice::default();
        assert!(choice.take("c", "64").is_none());
        assert_eq!(choice.take("tls", "true"), Some(Ok(())));
        assert!(choice.matches(Protocol::TLS));
        assert!(!choice.matches(Protocol::HTTP1));
        assert!(
            choice.matches(Protocol::H2),
            "tls=true picks HTTP/1.1 and h2 alike"
        );
        let mut h2 = ProtocolChoice::default();
        assert_eq!(h2.take("protocol", "h2"), Some(Ok(())));
        assert!(h2.matches(Protocol::H2) && !h2.matches(Protocol::TLS));
        assert!(h2.take("tls", "yes").unwrap().is_err());
        assert_eq!(choice_word(Protocol::TLS), "tls=true");
        assert_eq!(choice_word(Protocol::H2C), "protocol=h2c");
    }
}
