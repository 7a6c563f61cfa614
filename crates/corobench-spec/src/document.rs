//! The spec's TOML as tables whose every key and value keeps its position,
//! and readers that turn one value into what its key needs, or into an error
//! in the spec's own words (never the TOML library's).

use std::ops::{Range, RangeInclusive};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::error::{Locator, SpecError, excerpt, shown};
use crate::keys;

/// A value as parsed, with its byte span in the spec text.
pub(crate) type Value<'d> = Spanned<DeValue<'d>>;

/// Parses the spec text; a syntax error names its place and what TOML wants.
pub(crate) fn parse<'d>(at: &Locator<'d>) -> Result<Spanned<DeTable<'d>>, SpecError> {
    DeTable::parse(at.text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let message = if e.message() == "duplicate key" {
            let key = at.text.get(span.clone()).unwrap_or_default();
            format!(
                "{} is defined twice (as a key or a table); keep one, holding what both held",
                shown(key)
            )
        } else {
            format!(
                "this is not valid TOML ({}); see docs/spec.md for the syntax of a spec",
                e.message().trim()
            )
        };
        at.syntax(span, message)
    })
}

/// One `key = value` of a table, named by its dotted path (`run.trials`).
#[derive(Debug)]
pub(crate) struct Field<'d> {
    pub path: String,
    pub name: &'d str,
    pub key_span: Range<usize>,
    pub value: &'d Value<'d>,
}

/// A table's fields in the order they appear in the file.
#[derive(Debug)]
pub(crate) struct Table<'d> {
    pub path: String,
    pub span: Range<usize>,
    pub fields: Vec<Field<'d>>,
}

impl<'d> Table<'d> {
    /// Reads `value` as a table whose keys must be among `known` (any key
    /// when `known` is empty).
    pub fn read(
        value: &'d Value<'d>,
        path: &str,
        known: &[&str],
        at: &Locator<'_>,
    ) -> Result<Self, SpecError> {
        let DeValue::Table(table) = value.get_ref() else {
            let header = if path.is_empty() { "the spec" } else { path };
            return Err(mismatch(
                value,
                path,
                &format!("a table such as [{header}]"),
                at,
            ));
        };
        Self::of(table, path, value.span(), known, at)
    }

    /// The whole document, read like any other table.
    pub fn document(
        table: &'d DeTable<'d>,
        known: &[&str],
        at: &Locator<'_>,
    ) -> Result<Self, SpecError> {
        Self::of(table, "", 0..0, known, at)
    }

    fn of(
        table: &'d DeTable<'d>,
        path: &str,
        span: Range<usize>,
        known: &[&str],
        at: &Locator<'_>,
    ) -> Result<Self, SpecError> {
        let mut fields: Vec<Field<'d>> = table
            .iter()
            .map(|(key, value)| Field {
                path: join(path, key.get_ref()),
                name: key.get_ref(),
                key_span: key.span(),
                value,
            })
            .collect();
        fields.sort_by_key(|f| f.key_span.start);
        if let Some(unknown) = fields
            .iter()
            .find(|f| !known.is_empty() && !known.contains(&f.name))
        {
            return Err(at.at(
                unknown.key_span.clone(),
                &unknown.path,
                unknown_key(unknown.name, path, known),
            ));
        }
        Ok(Self {
            path: path.to_string(),
            span,
            fields,
        })
    }

    pub fn get(&self, name: &str) -> Option<&Field<'d>> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The field `name`, which this table must have.
    pub fn require(
        &self,
        name: &str,
        example: &str,
        at: &Locator<'_>,
    ) -> Result<&Field<'d>, SpecError> {
        self.get(name).ok_or_else(|| {
            at.at(
                self.span.clone(),
                join(&self.path, name),
                format!("missing: add {example}"),
            )
        })
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn unknown_key(name: &str, table: &str, known: &[&str]) -> String {
    let place = if table.is_empty() {
        "the top level".to_string()
    } else if table.starts_with("workloads[") {
        "[[workloads]]".to_string()
    } else if table.starts_with("claims[") {
        "[[claims]]".to_string()
    } else {
        format!("[{table}]")
    };
    let hint = if let Some(home) = keys::home_elsewhere(name, known) {
        format!("it belongs in {home}; ")
    } else if let Some(key) = closest(name, known) {
        format!("did you mean `{key}`? ")
    } else {
        String::new()
    };
    format!("unknown key; {hint}{place} takes: {}", known.join(", "))
}

/// The known key a typo most likely meant: at most two edits away.
fn closest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    const MOST_EDITS: usize = 2;
    if name.len() > 64 {
        return None;
    }
    known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(distance, _)| *distance <= MOST_EDITS)
        .min()
        .map(|(_, k)| k)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// What a value is, for "expected X, found Y" messages; echoes at most a
/// short excerpt of what was written.
pub(crate) fn describe(value: &Value<'_>, at: &Locator<'_>) -> String {
    let written = || shown_source(value, at);
    match value.get_ref() {
        DeValue::String(text) => format!("the text {}", shown(text)),
        DeValue::Integer(_) => format!("the integer {}", written()),
        DeValue::Float(_) => format!("the number {}", written()),
        DeValue::Boolean(b) => format!("`{b}`"),
        DeValue::Datetime(_) => format!("the date {}", written()),
        DeValue::Array(_) => "a list".to_string(),
        DeValue::Table(_) => "a table".to_string(),
    }
}

/// The value as written in the spec, cut short when long.
pub(crate) fn shown_source(value: &Value<'_>, at: &Locator<'_>) -> String {
    excerpt(at.text.get(value.span()).unwrap_or_default(), 40)
}

/// "expected X, found Y" at the value.
pub(crate) fn mismatch(
    value: &Value<'_>,
    key: &str,
    expected: &str,
    at: &Locator<'_>,
) -> SpecError {
    at.at(
        value.span(),
        key,
        format!("expected {expected}, found {}", describe(value, at)),
    )
}

/// A text value.
pub(crate) fn text<'d>(
    value: &'d Value<'d>,
    key: &str,
    example: &str,
    at: &Locator<'_>,
) -> Result<&'d str, SpecError> {
    match value.get_ref() {
        DeValue::String(text) => Ok(text),
        _ => Err(mismatch(
            value,
            key,
            &format!("text in quotes such as {example}"),
            at,
        )),
    }
}

/// `true` or `false`.
pub(crate) fn boolean(value: &Value<'_>, key: &str, at: &Locator<'_>) -> Result<bool, SpecError> {
    match value.get_ref() {
        DeValue::Boolean(b) => Ok(*b),
        _ => Err(mismatch(value, key, "true or false, without quotes", at)),
    }
}

/// A whole number within `range`.
pub(crate) fn integer(
    value: &Value<'_>,
    key: &str,
    range: RangeInclusive<i64>,
    at: &Locator<'_>,
) -> Result<i64, SpecError> {
    let allowed = format!("{} to {}", range.start(), range.end());
    let out_of_range = || {
        at.at(
            value.span(),
            key,
            format!("{} is out of range: use {allowed}", shown_source(value, at)),
        )
    };
    match value.get_ref() {
        DeValue::Integer(n) => match i64::from_str_radix(n.as_str(), n.radix()) {
            Ok(n) if range.contains(&n) => Ok(n),
            Ok(_) => Err(out_of_range()),
            Err(e) if is_overflow(&e) => Err(out_of_range()),
            Err(_) => Err(mismatch(
                value,
                key,
                &format!("a whole number ({allowed})"),
                at,
            )),
        },
        DeValue::Float(_) => Err(at.at(
            value.span(),
            key,
            format!(
                "{} is not a whole number: use {allowed}",
                shown_source(value, at)
            ),
        )),
        DeValue::String(text) if text.trim().parse::<i64>().is_ok() => Err(at.at(
            value.span(),
            key,
            format!(
                "write the number without quotes: {key_name} = {}",
                text.trim(),
                key_name = last(key)
            ),
        )),
        _ => Err(mismatch(
            value,
            key,
            &format!("a whole number ({allowed})"),
            at,
        )),
    }
}

fn is_overflow(error: &std::num::ParseIntError) -> bool {
    matches!(
        error.kind(),
        std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow
    )
}

/// A number of `unit`s, whole or not, within `range` (which excludes NaN
/// and infinities).
pub(crate) fn number(
    value: &Value<'_>,
    key: &str,
    (range, unit): (RangeInclusive<f64>, &str),
    at: &Locator<'_>,
) -> Result<f64, SpecError> {
    let parsed = match value.get_ref() {
        // Whole numbers too large for i64 are still numbers: out of range below.
        DeValue::Integer(n) => i64::from_str_radix(n.as_str(), n.radix())
            .map(|n| n as f64)
            .or_else(|_| n.as_str().parse::<f64>()),
        DeValue::Float(f) => f.as_str().parse::<f64>(),
        DeValue::String(text) if text.trim().parse::<f64>().is_ok() => {
            return Err(at.at(
                value.span(),
                key,
                format!(
                    "write the number without quotes: {} = {}",
                    last(key),
                    text.trim()
                ),
            ));
        }
        _ => return Err(mismatch(value, key, &format!("a number of {unit}"), at)),
    };
    match parsed {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(at.at(
            value.span(),
            key,
            format!(
                "{} is out of range: use {} to {} {unit}",
                shown_source(value, at),
                range.start(),
                range.end()
            ),
        )),
    }
}

/// The last segment of a dotted key, as a spec would write it.
pub(crate) fn last(key: &str) -> &str {
    let name = key.rsplit('.').next().unwrap_or(key);
    name.split('[').next().unwrap_or(name)
}

/// A value or a list of values: the items a sweep runs over. An empty
/// list is refused, since it would sweep nothing.
pub(crate) fn one_or_many<'d>(
    value: &'d Value<'d>,
    key: &str,
    at: &Locator<'_>,
) -> Result<Vec<&'d Value<'d>>, SpecError> {
    match value.get_ref() {
        DeValue::Array(items) if items.is_empty() => Err(at.at(
            value.span(),
            key,
            "an empty list sweeps nothing; give at least one value",
        )),
        DeValue::Array(items) => Ok(items.iter().collect()),
        _ => Ok(vec![value]),
    }
}

/// The items of a list.
pub(crate) fn list<'d>(
    value: &'d Value<'d>,
    key: &str,
    expected: &str,
    at: &Locator<'_>,
) -> Result<&'d [Value<'d>], SpecError> {
    match value.get_ref() {
        DeValue::Array(items) => Ok(items),
        _ => Err(mismatch(value, key, expected, at)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_key() {
        let known = ["trials", "duration", "warmup"];
        assert_eq!(closest("trails", &known), Some("trials"));
        assert_eq!(closest("durration", &known), Some("duration"));
        assert_eq!(closest("nothing-like-it", &known), None);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
