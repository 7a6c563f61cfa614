//! Program targets in a spec. A program target runs to completion and
//! reports its own figures, so it has no workloads: it gets one scenario
//! per combination of its parameters. A program that talks to a server is
//! given the server the spec names in `[program] server = "…"` (a target
//! name, optionally followed by `name=value` parameters).

use std::collections::BTreeMap;
use std::ops::Range;

use corobench_model::{ProgramScenario, ServerChoice};

use crate::catalog::Catalog;
use crate::document::{self, Field, Table};
use crate::error::{Locator, SpecError, shown};
use crate::keys;

/// Whether `target` is a program target.
pub(crate) fn is_program(catalog: &Catalog, target: &str) -> bool {
    catalog.get(target).is_some_and(|t| t.program.is_some())
}

/// What the program scenarios of `targets` run beside their program: the
/// server the spec names, checked against what the programs need.
///
/// # Errors
/// A program that needs a server and none named, a server named that no
/// program needs, or a server that is unknown, a program, unavailable here,
/// or given parameters it does not take.
pub(crate) fn program_scenario(
    field: Option<&Field<'_>>,
    targets: &[String],
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<ProgramScenario, SpecError> {
    let needing: Vec<&str> = targets
        .iter()
        .filter(|t| {
            catalog
                .get(t)
                .and_then(|c| c.program.as_ref())
                .is_some_and(|p| p.needs_server)
        })
        .map(String::as_str)
        .collect();
    let named = server_text(field, at)?;
    match (needing.is_empty(), named) {
        (true, None) => Ok(ProgramScenario { server: None }),
        (true, Some((_, span))) => Err(at.at(
            span,
            "program.server",
            "no program target of this spec talks to a server; remove the key, or name a \
             program whose manifest says server = \"required\"",
        )),
        (false, None) => Err(at.at(
            at.end(),
            "program.server",
            format!(
                "{} needs a server: add [program] server = \"go-nethttp\" (any server target, \
                 optionally with parameters: \"go-nethttp gomaxprocs=2\")",
                needing.join(", ")
            ),
        )),
        (false, Some((text, span))) => Ok(ProgramScenario {
            server: Some(server_choice(text, span, catalog, at)?),
        }),
    }
}

/// `"go-nethttp gomaxprocs=2"` as a server target with checked parameters.
fn server_choice(
    text: &str,
    span: Range<usize>,
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<ServerChoice, SpecError> {
    let fail = |message: String| at.at(span.clone(), "program.server", message);
    let mut words = text.split_whitespace();
    let target = words
        .next()
        .ok_or_else(|| fail("is empty; name a server target, e.g. \"go-nethttp\"".into()))?;
    let known = catalog.get(target).ok_or_else(|| {
        fail(format!(
            "unknown target {target:?}; known targets: {}",
            catalog.names()
        ))
    })?;
    if known.program.is_some() {
        return Err(fail(format!(
            "{target} is a program target; the server must be a server target"
        )));
    }
    if let Err(reason) = &known.available {
        return Err(fail(format!("{target} cannot run here: {reason}")));
    }
    if let Some(message) = crate::values::repeated_word(words.clone()) {
        return Err(fail(format!("{} {message}", shown(text))));
    }
    let mut parameters = BTreeMap::new();
    for word in words {
        let (name, value) = word
            .split_once('=')
            .ok_or_else(|| fail(format!("{word:?} is not name=value")))?;
        let domain = known.parameters.get(name).ok_or_else(|| {
            let names: Vec<&str> = known.parameters.keys().map(String::as_str).collect();
            fail(format!(
                "{target} has no parameter {name:?}; its parameters: {}",
                names.join(", ")
            ))
        })?;
        domain
            .check(value)
            .map_err(|why| fail(format!("{name}={value:?} {why}")))?;
        parameters.insert(name.to_string(), value.to_string());
    }
    Ok(ServerChoice {
        target: target.to_string(),
        parameters,
    })
}

/// `[program] server = "…"`, with where it is written.
fn server_text<'d>(
    field: Option<&Field<'d>>,
    at: &Locator<'_>,
) -> Result<Option<(&'d str, Range<usize>)>, SpecError> {
    let Some(field) = field else {
        return Ok(None);
    };
    let table = Table::read(field.value, "program", keys::PROGRAM, at)?;
    let Some(server) = table.get("server") else {
        return Ok(None);
    };
    let text = document::text(server.value, "program.server", "\"go-nethttp\"", at)?;
    Ok(Some((text, server.value.span())))
}
