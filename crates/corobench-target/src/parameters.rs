//! Target parameters: integers in a range, or one of named choices.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::TargetError;

/// A parameter value its manifest does not allow, and what it allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not allowed: use {allowed}")]
pub struct NotAllowed {
    pub value: String,
    pub allowed: String,
}

/// One parameter a target declares in `[parameters.<name>]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParameterSpec {
    /// An integer in `min..=max`, and at least the value of the integer
    /// parameter `at_least` names, if any (`max_ms` at least `min_ms`).
    Integer {
        default: i64,
        min: i64,
        max: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        at_least: Option<String>,
        help: String,
    },
    /// One of `choices`.
    Choice {
        default: String,
        choices: Vec<String>,
        help: String,
    },
}

impl ParameterSpec {
    /// The default, as it is substituted into commands.
    #[must_use]
    pub fn default_value(&self) -> String {
        match self {
            Self::Integer { default, .. } => default.to_string(),
            Self::Choice { default, .. } => default.clone(),
        }
    }

    /// What the manifest allows, for messages: `an integer in 1..=256`.
    #[must_use]
    pub fn allowed(&self) -> String {
        match self {
            Self::Integer { min, max, .. } => format!("an integer in {min}..={max}"),
            Self::Choice { choices, .. } => format!("one of {}", choices.join(", ")),
        }
    }

    /// The one-line help text.
    #[must_use]
    pub fn help(&self) -> &str {
        match self {
            Self::Integer { help, .. } | Self::Choice { help, .. } => help,
        }
    }

    /// `value` in canonical form if the manifest allows it, else what is allowed.
    ///
    /// # Errors
    /// A value the manifest does not allow, with the allowed ones.
    pub fn check(&self, value: &str) -> Result<String, NotAllowed> {
        let trimmed = value.trim();
        let accepted = match self {
            Self::Integer { min, max, .. } => trimmed
                .parse::<i64>()
                .ok()
                .filter(|n| (*min..=*max).contains(n))
                .map(|n| n.to_string()),
            Self::Choice { choices, .. } => choices.iter().find(|c| *c == trimmed).cloned(),
        };
        accepted.ok_or_else(|| NotAllowed {
            value: value.to_owned(),
            allowed: self.allowed(),
        })
    }
}

/// Fills defaults into `given` and checks every name and value against `declared`.
///
/// # Errors
/// An unknown parameter (naming the declared ones) or a value out of bounds.
pub fn resolve(
    target: &str,
    declared: &BTreeMap<String, ParameterSpec>,
    given: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, TargetError> {
    let error = |parameter: &str, message: String| TargetError::Parameter {
        target: target.to_string(),
        parameter: parameter.to_string(),
        message,
    };
    for name in given.keys() {
        if !declared.contains_key(name) {
            let known = if declared.is_empty() {
                "it declares no parameters".to_string()
            } else {
                format!(
                    "it declares {}",
                    declared.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            };
            return Err(error(name, format!("unknown parameter: {known}")));
        }
    }
    let values = declared
        .iter()
        .map(|(name, spec)| {
            let value = match given.get(name) {
                Some(value) => spec.check(value).map_err(|e| error(name, e.to_string()))?,
                None => spec.default_value(),
            };
            Ok((name.clone(), value))
        })
        .collect::<Result<BTreeMap<String, String>, TargetError>>()?;
    check_floors(declared, &values).map_err(|(name, message)| error(name, message))?;
    Ok(values)
}

/// Every `at_least` of `declared` holds among `values` (canonical integers).
fn check_floors<'d>(
    declared: &'d BTreeMap<String, ParameterSpec>,
    values: &BTreeMap<String, String>,
) -> Result<(), (&'d str, String)> {
    let number = |name: &str| values.get(name).and_then(|v| v.parse::<i64>().ok());
    for (name, spec) in declared {
        let ParameterSpec::Integer {
            at_least: Some(floor),
            ..
        } = spec
        else {
            continue;
        };
        if let (Some(value), Some(least)) = (number(name), number(floor))
            && value < least
        {
            return Err((
                name,
                format!("{name}={value} is below {floor}={least}: it must be at least {floor}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared() -> BTreeMap<String, ParameterSpec> {
        let mut map = BTreeMap::new();
        map.insert(
            "gomaxprocs".to_string(),
            ParameterSpec::Integer {
                default: 1,
                min: 1,
                max: 256,
                at_least: None,
                help: String::new(),
            },
        );
        map.insert(
            "mode".to_string(),
            ParameterSpec::Choice {
                default: "blocking".into(),
                choices: vec!["blocking".into(), "nonblocking".into()],
                help: String::new(),
            },
        );
        map
    }

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn defaults_fill_what_is_not_given() {
        let resolved = resolve("t", &declared(), &given(&[("gomaxprocs", " 4")])).unwrap();
        assert_eq!(
            resolved,
            given(&[("gomaxprocs", "4"), ("mode", "blocking")])
        );
        let resolved = resolve("t", &declared(), &BTreeMap::new()).unwrap();
        assert_eq!(
            resolved,
            given(&[("gomaxprocs", "1"), ("mode", "blocking")])
        );
    }

    #[test]
    fn resolving_twice_changes_nothing() {
        let once = resolve("t", &declared(), &given(&[("mode", "nonblocking")])).unwrap();
        assert_eq!(resolve("t", &declared(), &once).unwrap(), once);
    }

    #[test]
    fn unknown_names_list_the_declared_ones() {
        let error = resolve("go-x", &declared(), &given(&[("threads", "2")])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "target go-x: parameter threads: unknown parameter: it declares gomaxprocs, mode"
        );
        let error = resolve("plain", &BTreeMap::new(), &given(&[("threads", "2")])).unwrap_err();
        assert!(error.to_string().contains("it declares no parameters"));
    }

    #[test]
    fn bad_values_name_the_allowed_ones() {
        for bad in ["0", "257", "2.5", "four", ""] {
            let error = resolve("go-x", &declared(), &given(&[("gomaxprocs", bad)])).unwrap_err();
            let text = error.to_string();
            assert!(
                text.starts_with("target go-x: parameter gomaxprocs: "),
                "{text}"
            );
            assert!(
                text.ends_with("is not allowed: use an integer in 1..=256"),
                "{text}"
            );
        }
        let error = resolve("go-x", &declared(), &given(&[("mode", "async")])).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("use one of blocking, nonblocking")
        );
    }

    /// Issue "wrong successes", item 5: go-ants-tasks with min_ms above
    /// max_ms failed every trial; the manifest's `at_least` refuses it.
    #[test]
    fn a_value_below_its_floor_is_refused() {
        let mut declared = declared();
        let integer = |default, at_least: Option<&str>| ParameterSpec::Integer {
            default,
            min: 1,
            max: 1000,
            at_least: at_least.map(str::to_owned),
            help: String::new(),
        };
        declared.insert("min_ms".into(), integer(10, None));
        declared.insert("max_ms".into(), integer(59, Some("min_ms")));
        let ok = resolve("t", &declared, &given(&[("min_ms", "59")])).unwrap();
        assert_eq!(ok["max_ms"], "59");
        let error = resolve("t", &declared, &given(&[("min_ms", "60")])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "target t: parameter max_ms: max_ms=59 is below min_ms=60: it must be at least min_ms"
        );
    }
}
