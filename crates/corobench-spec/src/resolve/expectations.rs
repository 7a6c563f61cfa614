//! A workload's `expect_status`, `expect_body` and `expect_header`: what a
//! correct answer looks like, for servers that serve no contract. Checked
//! on one request before the first trial; during trials the status class
//! of every response is checked too.

use crate::document::{self, Table};
use crate::error::{Locator, SpecError};
use crate::plan::Expectation;

/// The workload's expectations; each, when given, must be able to match.
pub(super) fn expectation(table: &Table<'_>, at: &Locator<'_>) -> Result<Expectation, SpecError> {
    let status = match table.get("expect_status") {
        None => None,
        Some(field) => {
            let code = document::integer(field.value, &field.path, 100..=599, at)?;
            Some(u16::try_from(code).expect("within 100 to 599"))
        }
    };
    let body = match table.get("expect_body") {
        None => None,
        Some(field) => {
            let text = document::text(field.value, &field.path, "\"\\\"id\\\":\"", at)?;
            if text.is_empty() {
                let message = "an empty text is in every body and checks nothing: give a piece \
                               of a correct answer, or leave the key out";
                return Err(at.at(field.value.span(), &field.path, message));
            }
            Some(text.to_owned())
        }
    };
    let header = match table.get("expect_header") {
        None => None,
        Some(field) => {
            let text = document::text(
                field.value,
                &field.path,
                "\"Content-Type: application/json\"",
                at,
            )?;
            match text.split_once(':') {
                Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => {
                    Some((name.trim().to_owned(), value.trim().to_owned()))
                }
                _ => {
                    let message = "write NAME: VALUE, e.g. \"Content-Type: application/json\" \
                                   (the value must be in the header's value)";
                    return Err(at.at(field.value.span(), &field.path, message));
                }
            }
        }
    };
    Ok(Expectation {
        status,
        body,
        header,
    })
}
