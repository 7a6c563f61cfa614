//! A sweep runs each value once: a list that repeats one is refused.

use std::collections::HashSet;
use std::hash::Hash;

use crate::document::{self, Value};
use crate::error::{Locator, SpecError};

/// Refuses `list` when two of its `values` are equal (as `same` compares
/// them: `0x10` and `16` are one integer), pointing at the second one.
/// `shown(i)` is value `i` as the message names it. Linear in the list.
pub(super) fn refuse_repeats<T: Eq + Hash>(
    list: &Value<'_>,
    items: &[&Value<'_>],
    same: &[T],
    key: &str,
    shown: impl Fn(usize) -> String,
    at: &Locator<'_>,
) -> Result<(), SpecError> {
    let mut seen = HashSet::with_capacity(same.len());
    let Some(repeat) = same.iter().position(|value| !seen.insert(value)) else {
        return Ok(());
    };
    let message = format!(
        "{} = {} repeats {}: each value is a scenario of its own; list it once",
        document::last(key),
        document::shown_source(list, at),
        shown(repeat),
    );
    let span = items
        .get(repeat)
        .map_or_else(|| list.span(), |item| item.span());
    Err(at.at(span, key, message))
}
