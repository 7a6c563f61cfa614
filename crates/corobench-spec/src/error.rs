//! Spec errors that name the file, the line and the key.

use std::fmt;
use std::path::Path;

/// What is wrong with a spec, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The spec file (or `<default suite>`).
    pub file: String,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// The offending key, e.g. `run.trials` or `workloads[2].path`.
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((line, column)) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SpecError {}

/// Builds errors against one spec text.
#[derive(Debug)]
pub(crate) struct Locator<'a> {
    pub(crate) file: String,
    pub(crate) text: &'a str,
}

impl<'a> Locator<'a> {
    pub(crate) fn new(path: Option<&Path>, text: &'a str) -> Self {
        let file = path.map_or_else(
            || "<default suite>".to_string(),
            |p| p.display().to_string(),
        );
        Self { file, text }
    }

    /// An error at a byte span of the text.
    pub(crate) fn at(
        &self,
        span: std::ops::Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> SpecError {
        SpecError {
            file: self.file.clone(),
            position: Some(line_column(self.text, span.start)),
            key: Some(key.into()),
            message: message.into(),
        }
    }

    /// The span of `needle` inside `span` (or `span` itself when absent):
    /// points an error at one element of an array.
    pub(crate) fn find_within(
        &self,
        span: std::ops::Range<usize>,
        needle: &str,
    ) -> std::ops::Range<usize> {
        self.text
            .get(span.clone())
            .and_then(|inside| inside.find(needle))
            .map_or(span.clone(), |at| {
                span.start + at..span.start + at + needle.len()
            })
    }

    /// An error about the spec as a whole.
    pub(crate) fn whole(&self, key: Option<&str>, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.clone(),
            position: None,
            key: key.map(str::to_string),
            message: message.into(),
        }
    }
}

/// 1-based line and column of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, column)
}

/// A user's text as a message quotes it: escaped, and cut short when long,
/// so that a hostile value cannot flood the terminal or move its cursor.
pub(crate) fn shown(text: &str) -> String {
    const MOST_CHARS: usize = 40;
    let excerpt: String = text.chars().take(MOST_CHARS).collect();
    if excerpt.len() < text.len() {
        format!("{excerpt:?}…")
    } else {
        format!("{excerpt:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_control_text_is_shown_escaped_and_short() {
        assert_eq!(shown("a\u{1b}[2J"), "\"a\\u{1b}[2J\"");
        assert!(shown(&"x".repeat(10_000)).len() < 50);
    }
}
