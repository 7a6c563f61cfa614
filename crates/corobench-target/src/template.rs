//! `{name}` placeholders in manifest commands and environments.
//!
//! `{name}` is replaced by a value; `{{` and `}}` stand for literal braces
//! (so a shell's `${HOME}` is written `${{HOME}}`). Anything else with a brace
//! is an error, so a typo never reaches a command line unexpanded.

use std::collections::BTreeMap;

/// Placeholders every `[run]` may use, besides the target's parameters.
pub const RUN_PLACEHOLDERS: &[&str] = &[
    "out",
    "dir",
    "port",
    "listen_addr",
    "work",
    "data_dir",
    "upload_dir",
    "database_url",
    "cache",
    "tls_cert",
    "tls_key",
];

/// Placeholders a program's `[run]` may use, besides its parameters; the
/// last, `server_url`, only when its `[program]` has `server = "required"`.
/// A program serves nothing, so it has no port and no contract directories.
pub const PROGRAM_PLACEHOLDERS: &[&str] = &["out", "dir", "work", "cache", SERVER_URL];

/// The placeholder that carries the base URL of the server a program talks to.
pub const SERVER_URL: &str = "server_url";

/// Placeholders a `[build]` may use.
pub const BUILD_PLACEHOLDERS: &[&str] = &["out", "dir", "cache"];

/// A malformed brace, or a placeholder nobody gives a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("a lone '}}': write '}}}}' for a literal brace")]
    LoneClose,
    #[error("an unclosed '{{': write '{{{{' for a literal brace")]
    Unclosed,
    /// `{name}` whose name is no identifier (shown cut to 30 characters).
    #[error(
        "{{{shown}}} is not a placeholder name (letters, digits, _): write '{{{{' for a literal brace"
    )]
    NotAName { shown: String },
    /// A placeholder that is not known, with the known ones when listed.
    #[error("unknown placeholder {{{name}}}{}", .known.as_ref().map(|k| format!("; known: {k}")).unwrap_or_default())]
    Unknown { name: String, known: Option<String> },
}

#[derive(Debug, PartialEq, Eq)]
enum Segment<'a> {
    Literal(&'a str),
    Placeholder(&'a str),
}

/// Splits `text` into literals and placeholders, or says what is malformed.
fn parse(text: &str) -> Result<Vec<Segment<'_>>, TemplateError> {
    let mut segments = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(['{', '}']) {
        if at > 0 {
            segments.push(Segment::Literal(&rest[..at]));
        }
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            segments.push(Segment::Literal(&tail[..1]));
            rest = &tail[2..];
        } else if tail.starts_with('}') {
            return Err(TemplateError::LoneClose);
        } else {
            let close = tail.find('}').ok_or(TemplateError::Unclosed)?;
            let name = &tail[1..close];
            if !is_identifier(name) {
                let mut shown: String = name.chars().take(30).collect();
                if shown.len() < name.len() {
                    shown.push_str("...");
                }
                return Err(TemplateError::NotAName { shown });
            }
            segments.push(Segment::Placeholder(name));
            rest = &tail[close + 1..];
        }
    }
    if !rest.is_empty() {
        segments.push(Segment::Literal(rest));
    }
    Ok(segments)
}

/// True for a name that may be a placeholder or a parameter: `[A-Za-z_][A-Za-z0-9_]*`.
#[must_use]
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks that `text` is well formed and uses only `known` placeholders.
///
/// # Errors
/// A message naming the malformed brace or the unknown placeholder and the known ones.
pub fn check(
    text: &str,
    known: &dyn Fn(&str) -> bool,
    known_list: &str,
) -> Result<(), TemplateError> {
    for segment in parse(text)? {
        if let Segment::Placeholder(name) = segment
            && !known(name)
        {
            return Err(TemplateError::Unknown {
                name: name.to_owned(),
                known: Some(known_list.to_owned()),
            });
        }
    }
    Ok(())
}

/// True when `text` is well formed and uses the placeholder `name`.
#[must_use]
pub fn mentions(text: &str, name: &str) -> bool {
    parse(text).is_ok_and(|segments| segments.contains(&Segment::Placeholder(name)))
}

/// Replaces every placeholder in `text` by its value.
///
/// # Errors
/// A malformed brace, or a placeholder without a value (named in the message).
pub fn expand(text: &str, values: &BTreeMap<String, String>) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(text.len());
    for segment in parse(text)? {
        match segment {
            Segment::Literal(literal) => out.push_str(literal),
            Segment::Placeholder(name) => match values.get(name) {
                Some(value) => out.push_str(value),
                None => {
                    return Err(TemplateError::Unknown {
                        name: name.to_owned(),
                        known: None,
                    });
                }
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn expands_placeholders_and_escaped_braces() {
        let v = values(&[("out", "/c/x"), ("port", "8080")]);
        assert_eq!(expand("{out}/server", &v).unwrap(), "/c/x/server");
        assert_eq!(expand("--port={port}", &v).unwrap(), "--port=8080");
        assert_eq!(expand("${{HOME}} {{}}", &v).unwrap(), "${HOME} {}");
        assert_eq!(expand("{port}{port}", &v).unwrap(), "80808080");
        assert_eq!(expand("plain", &v).unwrap(), "plain");
        assert_eq!(expand("", &v).unwrap(), "");
    }

    #[test]
    fn unknown_and_malformed_placeholders_are_named() {
        let v = values(&[("out", "/c")]);
        let error = |text| expand(text, &v).unwrap_err().to_string();
        assert_eq!(error("{outt}/server"), "unknown placeholder {outt}");
        assert!(error("{out").contains("unclosed '{'"));
        assert!(error("a}b").contains("lone '}'"));
        assert!(error("${HOME-x}").contains("{HOME-x}"));
        assert!(error("{}").contains("not a placeholder name"));
    }

    #[test]
    fn check_lists_the_known_placeholders() {
        let known = |name: &str| BUILD_PLACEHOLDERS.contains(&name);
        assert!(check("{out}/bin {cache}", &known, "out, dir, cache").is_ok());
        let error = check("{port}", &known, "out, dir, cache").unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown placeholder {port}; known: out, dir, cache"
        );
    }

    #[test]
    fn mentions_finds_placeholders_not_literals() {
        assert!(mentions("{server_url}/db", "server_url"));
        assert!(!mentions("{{server_url}}", "server_url"));
        assert!(!mentions("{server_url", "server_url"));
        assert!(!mentions("{out}", "server_url"));
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("db_pool"));
        assert!(is_identifier("_x1"));
        assert!(!is_identifier("1x"));
        assert!(!is_identifier("db-pool"));
        assert!(!is_identifier(""));
    }
}
