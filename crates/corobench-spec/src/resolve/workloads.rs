//! `[[workloads]]`: what each scenario sends, checked so that every request
//! corobench builds from it is well-formed HTTP/1.1.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

use corobench_model::Schedule;

use crate::document::{self, Field, Table, Value};
use crate::error::{Locator, SpecError, shown};
use crate::keys;
use crate::limits::{Limits, MAX_BODY_FILE, MAX_BODY_TEXT, MAX_SCENARIOS};
use crate::plan::{Body, Workload};

use super::expectations;
use super::schedule::{Bounds, Sweep};
use super::settings::Settings;

/// The longest workload name; it is part of every scenario key.
const MAX_NAME_CHARS: usize = 64;

/// Headers corobench writes itself from the body: a spec's own would
/// contradict the bytes sent and stall every request.
const FRAMING_HEADERS: &[&str] = &["content-length", "transfer-encoding"];

/// A workload with the schedules it runs under and what it costs to hold.
#[derive(Debug)]
pub(super) struct PlannedWorkload {
    pub workload: Workload,
    pub schedules: Vec<Schedule>,
    /// `workloads[i]`, for messages.
    pub key: String,
    pub name_span: Range<usize>,
    /// Bytes copied into each of its scenarios (name, path, headers, text body).
    pub inline_bytes: u64,
    /// The size of its body file, held once.
    pub file_bytes: u64,
}

pub(super) fn read(
    spec: &Table<'_>,
    path: Option<&Path>,
    settings: &Settings,
    limits: &Limits,
    at: &Locator<'_>,
) -> Result<Vec<PlannedWorkload>, SpecError> {
    let bounds = Bounds {
        limits,
        generator_threads: settings.measurement.generator_threads,
        threads_span: &settings.threads_span,
    };
    let schedule = spec
        .get("schedule")
        .map(|f| Table::read(f.value, "schedule", keys::SCHEDULE, at))
        .transpose()?;
    let defaults = Sweep::defaults(schedule.as_ref(), bounds, at)?;
    let items = items(spec.get("workloads"), at)?;
    let mut names = HashSet::with_capacity(items.len());
    let mut planned = Vec::with_capacity(items.len());
    let mut schedules: usize = 0;
    for (i, item) in items.iter().enumerate() {
        let key = format!("workloads[{i}]");
        if !item.get_ref().is_table() {
            return Err(document::mismatch(item, &key, "a [[workloads]] table", at));
        }
        let table = Table::read(item, &key, keys::WORKLOAD, at)?;
        let name = table.require("name", "name = \"plaintext\"", at)?;
        let mut workload = workload(&table, name, path, at)?;
        if !names.insert(workload.workload.name.clone()) {
            let message = "this name is already used by another workload; names must be unique";
            return Err(at.at(name.value.span(), &name.path, message));
        }
        let sweep = defaults.overridden_by(&table, bounds, at)?;
        // Counted before the schedules are built: a sweep of rates ×
        // connections could otherwise fill memory before any check.
        schedules = schedules.saturating_add(sweep.count());
        if schedules > MAX_SCENARIOS {
            return Err(at.at(name.value.span(), &key, super::too_many_scenarios()));
        }
        workload.schedules = match super::idle::schedules(&table, limits, at)? {
            Some(idle) => {
                workload.workload.idle = true;
                idle
            }
            None => sweep.schedules_for(bounds, at)?,
        };
        workload.workload.background = super::background::read(&table, &workload.schedules, at)?;
        workload.key = key;
        planned.push(workload);
    }
    Ok(planned)
}

/// The `[[workloads]]` tables: at least one.
fn items<'d>(field: Option<&Field<'d>>, at: &Locator<'_>) -> Result<&'d [Value<'d>], SpecError> {
    let missing = "no workload: add at least one [[workloads]] with a name and a path, e.g. [[workloads]] name = \"plaintext\" path = \"/plaintext\"";
    let Some(field) = field else {
        return Err(at.at(at.end(), "workloads", missing));
    };
    let items = document::list(field.value, "workloads", "[[workloads]] tables", at)?;
    if items.is_empty() {
        return Err(at.at(field.value.span(), "workloads", missing));
    }
    Ok(items)
}

/// One workload, checked; the caller adds its schedules and key.
fn workload(
    table: &Table<'_>,
    name: &Field<'_>,
    spec_path: Option<&Path>,
    at: &Locator<'_>,
) -> Result<PlannedWorkload, SpecError> {
    let workload_name = workload_name(name, at)?;
    let path_field = table.require("path", "path = \"/plaintext\"", at)?;
    let path = request_path(path_field, at)?;
    let method = match table.get("method") {
        None => "GET".to_string(),
        Some(field) => method(field, at)?,
    };
    let headers = match table.get("headers") {
        None => Vec::new(),
        Some(field) => headers(field, at)?,
    };
    let (body, file_bytes) = body(table, spec_path, at)?;
    let text_bytes = match &body {
        Body::Text(text) => text.len(),
        _ => 0,
    };
    let header_bytes: usize = headers.iter().map(|(n, v)| n.len() + v.len()).sum();
    let inline = [
        workload_name.len(),
        method.len(),
        path.len(),
        header_bytes,
        text_bytes,
    ];
    Ok(PlannedWorkload {
        workload: Workload {
            name: workload_name,
            method,
            path,
            headers,
            body,
            expect: expectations::expectation(table, at)?,
            idle: false,
            background: None,
        },
        schedules: Vec::new(),
        key: String::new(),
        name_span: name.value.span(),
        inline_bytes: inline
            .iter()
            .map(|&n| n as u64)
            .fold(0, u64::saturating_add),
        file_bytes,
    })
}

fn workload_name(field: &Field<'_>, at: &Locator<'_>) -> Result<String, SpecError> {
    let name = document::text(field.value, &field.path, "\"plaintext\"", at)?;
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
    if name.is_empty() || name.len() > MAX_NAME_CHARS || !name.chars().all(allowed) {
        let message = format!("use 1 to {MAX_NAME_CHARS} letters, digits, '-', '_' and '.' only");
        return Err(at.at(field.value.span(), &field.path, message));
    }
    Ok(name.to_string())
}

/// A request target: a path and query of visible ASCII characters.
pub(super) fn request_path(field: &Field<'_>, at: &Locator<'_>) -> Result<String, SpecError> {
    let path = document::text(field.value, &field.path, "\"/io?ms=10\"", at)?;
    if !path.starts_with('/') || !path.bytes().all(|b| b.is_ascii_graphic()) {
        let message = "must start with / and hold only visible ASCII characters (percent-encode spaces, control characters and other bytes), e.g. \"/io?ms=10\"";
        return Err(at.at(field.value.span(), &field.path, message));
    }
    Ok(path.to_string())
}

fn method(field: &Field<'_>, at: &Locator<'_>) -> Result<String, SpecError> {
    let method = document::text(field.value, &field.path, "\"POST\"", at)?;
    if method.is_empty() || !method.chars().all(|c| c.is_ascii_uppercase()) {
        let message = "must be an upper-case HTTP method such as GET or POST";
        return Err(at.at(field.value.span(), &field.path, message));
    }
    Ok(method.to_string())
}

/// Extra request headers: token names, one-line values, each name once.
fn headers(field: &Field<'_>, at: &Locator<'_>) -> Result<Vec<(String, String)>, SpecError> {
    let table = Table::read(field.value, &field.path, &[], at)?;
    let mut seen = HashSet::with_capacity(table.fields.len());
    let mut headers = Vec::with_capacity(table.fields.len());
    for header in &table.fields {
        let value = document::text(header.value, &header.path, "\"text/plain\"", at)?;
        let lower = header.name.to_ascii_lowercase();
        let problem = if header.name.is_empty() || !header.name.bytes().all(is_token_byte) {
            Some(format!(
                "{} is not a header name: use letters, digits and !#$%&'*+-.^_`|~ only",
                shown(header.name)
            ))
        } else if FRAMING_HEADERS.contains(&lower.as_str()) {
            Some(format!(
                "{} is set by corobench from the body; remove it",
                header.name
            ))
        } else if !seen.insert(lower) {
            Some(format!(
                "{} is given twice (header names ignore case); keep one",
                header.name
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            return Err(at.at(header.key_span.clone(), &header.path, message));
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            let message = "the value holds a line break or another control character, which would end or forge header lines; write it on one line";
            return Err(at.at(header.value.span(), &header.path, message));
        }
        headers.push((header.name.to_string(), value.to_string()));
    }
    Ok(headers)
}

/// RFC 9110's `tchar`: the bytes of a header name.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The body, and the size of its file when it is read from one.
fn body(
    table: &Table<'_>,
    spec_path: Option<&Path>,
    at: &Locator<'_>,
) -> Result<(Body, u64), SpecError> {
    match (table.get("body"), table.get("body_file")) {
        (Some(_), Some(file)) => Err(at.at(
            file.key_span.clone(),
            &file.path,
            "give either body or body_file, not both",
        )),
        (Some(text), None) => {
            let body = document::text(text.value, &text.path, "\"{\\\"id\\\": 1}\"", at)?;
            if body.len() > MAX_BODY_TEXT {
                let message = format!(
                    "the body is longer than {} KiB; put it in a file and name it with body_file",
                    MAX_BODY_TEXT >> 10
                );
                return Err(at.at(text.value.span(), &text.path, message));
            }
            Ok((Body::Text(body.to_string()), 0))
        }
        (None, Some(file)) => body_file(file, spec_path, at),
        (None, None) => Ok((Body::Empty, 0)),
    }
}

fn body_file(
    field: &Field<'_>,
    spec_path: Option<&Path>,
    at: &Locator<'_>,
) -> Result<(Body, u64), SpecError> {
    let name = document::text(field.value, &field.path, "\"body.json\"", at)?;
    let base = spec_path
        .and_then(Path::parent)
        .unwrap_or_else(|| Path::new("."));
    let resolved = base.join(name);
    let shown_path = shown(&resolved.display().to_string());
    let size = match std::fs::metadata(&resolved) {
        Ok(meta) if meta.is_file() => meta.len(),
        _ => {
            let message =
                format!("{shown_path} is not a readable file (paths are relative to the spec)");
            return Err(at.at(field.value.span(), &field.path, message));
        }
    };
    if size > MAX_BODY_FILE {
        let message = format!(
            "{shown_path} holds {size} bytes; a body file may hold at most {} MiB",
            MAX_BODY_FILE >> 20
        );
        return Err(at.at(field.value.span(), &field.path, message));
    }
    Ok((Body::File(resolved), size))
}
