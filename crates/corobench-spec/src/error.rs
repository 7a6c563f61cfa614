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
            write!(f, ": `{}`", excerpt(key, 80))?;
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
        message: impl fmt::Display,
    ) -> SpecError {
        SpecError {
            file: self.file.clone(),
            position: Some(line_column(self.text, span.start)),
            key: Some(key.into()),
            message: message.to_string(),
        }
    }

    /// An error about the TOML syntax itself, where no key is known yet.
    pub(crate) fn syntax(&self, span: std::ops::Range<usize>, message: String) -> SpecError {
        SpecError {
            file: self.file.clone(),
            position: Some(line_column(self.text, span.start)),
            key: None,
            message,
        }
    }

    /// Where the text ends: the place to add what is missing.
    pub(crate) fn end(&self) -> std::ops::Range<usize> {
        self.text.len()..self.text.len()
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |nl| nl + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// At most `most` characters of `text`, control characters escaped and a
/// cut marked: how a message may echo what a spec holds (keys, values as
/// written) without flooding the terminal or moving its cursor.
pub(crate) fn excerpt(text: &str, most: usize) -> String {
    let mut shown = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == most {
            shown.push('…');
            break;
        }
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
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
    fn positions_count_characters_and_survive_odd_offsets() {
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("é = 1", 2), (1, 2));
        assert_eq!(line_column("é", 1), (1, 1));
        assert_eq!(line_column("x", 99), (1, 2));
    }

    #[test]
    fn long_and_control_text_is_shown_escaped_and_short() {
        assert_eq!(shown("a\u{1b}[2J"), "\"a\\u{1b}[2J\"");
        assert!(shown(&"x".repeat(10_000)).len() < 50);
    }
}
