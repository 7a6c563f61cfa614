//! `[[claims]]`: figures a published report gives, which a run puts to the
//! test. Each side names one scenario of the plan (a target, optionally with
//! parameters and a schedule), resolved here to its key, so that the run can
//! store its claims and any machine can judge them later. A side whose
//! target cannot run here is not an error: the claim is then not measured
//! here, for the target's reason. Claims never change how trials run.

use corobench_model::{
    ClaimDirection, ClaimExpectation, ClaimRecord, ClaimScenario, ClaimSide, Metric, ProgramUnit,
    PublishedValues,
};
use toml::de::DeValue;

use crate::catalog::{Catalog, CatalogTarget};
use crate::document::{self, Field, Table, Value};
use crate::error::{Locator, SpecError, shown};
use crate::keys;
use crate::plan::{PlannedClaim, PlannedScenario, SkippedProtocol};

use super::protocol::{ProtocolChoice, choice_word};
use super::settings::{fraction, one_line};
use super::targets::Selection;

/// The longest `source` or `says`: one line of a report each.
const MAX_TEXT_CHARS: usize = 500;
/// The largest ratio a claim may state; a claim beyond it is a typo.
const MAX_RATIO: f64 = 1.0e6;
/// How a claim's tolerance defaults: 10% either way.
const DEFAULT_TOLERANCE: f64 = 0.10;
/// How many workloads or scenario keys an error lists before it says how
/// many more there are.
const ITEMS_LISTED: usize = 8;

/// What a claim is checked against: the catalog and the plan built so far.
#[derive(Debug)]
pub(super) struct Context<'p> {
    pub catalog: &'p Catalog,
    pub selection: &'p Selection,
    /// The spec's workload names, in order.
    pub workloads: &'p [String],
    pub scenarios: &'p [PlannedScenario],
    /// Scenarios left out because their target does not serve their protocol.
    pub skipped_protocols: &'p [SkippedProtocol],
}

/// Every `[[claims]]` table, resolved; none when the spec has no claims.
pub(super) fn read(
    field: Option<&Field<'_>>,
    context: &Context<'_>,
    at: &Locator<'_>,
) -> Result<Vec<PlannedClaim>, SpecError> {
    let Some(field) = field else {
        return Ok(Vec::new());
    };
    let items = document::list(field.value, "claims", "[[claims]] tables", at)?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| claim(item, &format!("claims[{i}]"), context, at))
        .collect()
}

fn claim(
    item: &Value<'_>,
    key: &str,
    context: &Context<'_>,
    at: &Locator<'_>,
) -> Result<PlannedClaim, SpecError> {
    if !item.get_ref().is_table() {
        return Err(document::mismatch(item, key, "a [[claims]] table", at));
    }
    let table = Table::read(item, key, keys::CLAIM, at)?;
    let source = text_line(
        &table,
        "source",
        "\"a blog post, Jan 2026 (wrk -c200)\"",
        at,
    )?;
    let says = text_line(&table, "says", "\"A serves 3x the req/s of B\"", at)?;
    let a = Selector::read(table.require("a", "a = \"go-gnet\"", at)?, context, at)?;
    let b = Selector::read(table.require("b", "b = \"go-nethttp\"", at)?, context, at)?;
    if a.program != b.program {
        let (program, server) = if a.program { ("a", "b") } else { ("b", "a") };
        let message = format!(
            "{program} names a program target and {server} a server target; a claim compares two scenarios of one kind"
        );
        return Err(at.at(b.field.value.span(), &b.field.path, message));
    }
    let workload = workload(&table, a.program, context, at)?;
    let metric = metric(
        table.require("metric", "metric = \"rps\"", at)?,
        [&a, &b],
        context.catalog,
        at,
    )?;
    let expectation = expectation(&table, at)?;
    let published = table
        .get("published")
        .map(|field| published(field, at))
        .transpose()?;
    Ok(ClaimRecord {
        source,
        says,
        metric,
        a: a.resolve(workload.as_deref(), context, at)?,
        b: b.resolve(workload.as_deref(), context, at)?,
        workload,
        expectation,
        published,
    })
}

/// A required line of text for people.
fn text_line(
    table: &Table<'_>,
    name: &str,
    example: &str,
    at: &Locator<'_>,
) -> Result<String, SpecError> {
    let field = table.require(name, &format!("{name} = {example}"), at)?;
    let text = one_line(field, example, MAX_TEXT_CHARS, at)?;
    if text.trim().is_empty() {
        let message = format!("is empty: write e.g. {name} = {example}");
        return Err(at.at(field.value.span(), &field.path, message));
    }
    Ok(text.to_string())
}

/// The workload both sides were measured with: required for server
/// targets, refused for program targets (they run none).
fn workload(
    table: &Table<'_>,
    program: bool,
    context: &Context<'_>,
    at: &Locator<'_>,
) -> Result<Option<String>, SpecError> {
    let listed = listed(context.workloads.iter().map(String::as_str));
    let field = match (table.get("workload"), program) {
        (None, true) => return Ok(None),
        (Some(field), true) => {
            let message = "program targets run no workload; remove `workload`";
            return Err(at.at(field.key_span.clone(), &field.path, message));
        }
        (None, false) => {
            let example = context
                .workloads
                .first()
                .map_or("plaintext", String::as_str);
            let message =
                format!("missing: add workload = \"{example}\" (this spec's workloads: {listed})");
            return Err(at.at(
                table.span.clone(),
                format!("{}.workload", table.path),
                message,
            ));
        }
        (Some(field), false) => field,
    };
    let name = document::text(field.value, &field.path, "\"plaintext\"", at)?;
    if !context.workloads.iter().any(|w| w == name) {
        let message = format!(
            "no workload {} in this spec; its workloads: {listed}",
            shown(name)
        );
        return Err(at.at(field.value.span(), &field.path, message));
    }
    Ok(Some(name.to_string()))
}

/// The metric word of a server claim, or a unit both program targets declare.
fn metric(
    field: &Field<'_>,
    sides: [&Selector<'_>; 2],
    catalog: &Catalog,
    at: &Locator<'_>,
) -> Result<Metric, SpecError> {
    let word = document::text(field.value, &field.path, "\"rps\"", at)?;
    let fail = |message: String| at.at(field.value.span(), &field.path, message);
    if sides[0].program {
        for side in sides {
            let declared = catalog
                .get(side.target)
                .and_then(|t| t.program.as_ref())
                .map_or(&[][..], |p| p.metrics.as_slice());
            if !declared.iter().any(|unit| unit == word) {
                return Err(fail(format!(
                    "{} reports no figure in {}; its manifest declares: {}",
                    side.target,
                    shown(word),
                    declared.join(", ")
                )));
            }
        }
        return Ok(Metric::Program(ProgramUnit::new(word)));
    }
    Metric::from_word(word).ok_or_else(|| {
        fail(format!(
            "{} is not a figure corobench measures for a server; use one of: {}",
            shown(word),
            Metric::words().join(", ")
        ))
    })
}

/// `ratio = 3.06` (with an optional `tolerance`) or `direction = "a>b"`
/// (also `"a<b"`, and `"a>0, b=0"` for a figure only a has).
fn expectation(table: &Table<'_>, at: &Locator<'_>) -> Result<ClaimExpectation, SpecError> {
    match (table.get("ratio"), table.get("direction")) {
        (Some(_), Some(direction)) => Err(at.at(
            direction.key_span.clone(),
            &direction.path,
            "give either ratio (the published a/b) or direction, not both",
        )),
        (None, None) => Err(at.at(
            table.span.clone(),
            format!("{}.ratio", table.path),
            "missing: add ratio = 3.06 (the published a/b) or direction = \"a>b\"",
        )),
        (None, Some(field)) => {
            if let Some(tolerance) = table.get("tolerance") {
                let message = "a direction has no tolerance; remove it, or state a ratio";
                return Err(at.at(tolerance.key_span.clone(), &tolerance.path, message));
            }
            let word = document::text(field.value, &field.path, "\"a>b\"", at)?;
            let Some(direction) = ClaimDirection::from_word(word) else {
                let message = format!(
                    "{} must be \"a>b\", \"a<b\" or \"a>0, b=0\" (a above zero, b zero)",
                    shown(word)
                );
                return Err(at.at(field.value.span(), &field.path, message));
            };
            Ok(ClaimExpectation::Direction { direction })
        }
        (Some(field), None) => {
            let ratio = finite_number(field.value, &field.path, "3.06", at)?;
            if ratio <= 0.0 || ratio > MAX_RATIO {
                let message = format!(
                    "{} is not a ratio: the published a/b is greater than 0 and at most {MAX_RATIO}, e.g. 3.06",
                    document::shown_source(field.value, at)
                );
                return Err(at.at(field.value.span(), &field.path, message));
            }
            let tolerance = table
                .get("tolerance")
                .map(|f| fraction(f.value, &f.path, at))
                .transpose()?
                .unwrap_or(DEFAULT_TOLERANCE);
            Ok(ClaimExpectation::Ratio { ratio, tolerance })
        }
    }
}

/// `published = [146873, 48009]`: the report's figures for a and b.
fn published(field: &Field<'_>, at: &Locator<'_>) -> Result<PublishedValues, SpecError> {
    let expected = "a list of the two published figures, a's then b's: [146873, 48009]";
    let items = document::list(field.value, &field.path, expected, at)?;
    let [a, b] = items else {
        return Err(document::mismatch(field.value, &field.path, expected, at));
    };
    let [a, b] = [a, b].map(|item| {
        let value = finite_number(item, &field.path, "146873", at)?;
        if value < 0.0 {
            let message = "a published figure is 0 or more";
            return Err(at.at(item.span(), &field.path, message));
        }
        Ok(value)
    });
    Ok(PublishedValues { a: a?, b: b? })
}

/// A finite number, whole or not.
fn finite_number(
    value: &Value<'_>,
    key: &str,
    example: &str,
    at: &Locator<'_>,
) -> Result<f64, SpecError> {
    let any_finite = (f64::MIN..=f64::MAX, "");
    match value.get_ref() {
        DeValue::Integer(_) | DeValue::Float(_) => document::number(value, key, any_finite, at)
            .map_err(|_| {
                let message = format!(
                    "{} is not a finite number: write e.g. {example}",
                    document::shown_source(value, at)
                );
                at.at(value.span(), key, message)
            }),
        // The document's reader says to write it without quotes.
        DeValue::String(text) if text.trim().parse::<f64>().is_ok() => {
            document::number(value, key, any_finite, at)
        }
        _ => Err(document::mismatch(
            value,
            key,
            &format!("a number such as {example}"),
            at,
        )),
    }
}

/// The first few of `items`, and how many more there are: a message names
/// what is there without flooding the terminal.
fn listed<'i>(items: impl ExactSizeIterator<Item = &'i str>) -> String {
    let more = items.len().saturating_sub(ITEMS_LISTED);
    let first: Vec<&str> = items.take(ITEMS_LISTED).collect();
    if more > 0 {
        format!("{} and {more} more", first.join(", "))
    } else {
        first.join(", ")
    }
}

/// `go-ants pool_size=64 c=256`: a target, then `name=value` words that
/// pick among its scenarios: its parameters, `c` (connections), `rate`.
#[derive(Debug)]
struct Selector<'d> {
    field: &'d Field<'d>,
    text: &'d str,
    target: &'d str,
    program: bool,
    /// Parameter values in their canonical spelling.
    parameters: Vec<(String, String)>,
    connections: Option<u32>,
    rate: Option<f64>,
    protocol: ProtocolChoice,
}

impl<'d> Selector<'d> {
    fn read(
        field: &'d Field<'d>,
        context: &Context<'_>,
        at: &Locator<'_>,
    ) -> Result<Self, SpecError> {
        let text = document::text(field.value, &field.path, "\"go-nethttp\"", at)?;
        let fail = |message: String| at.at(field.value.span(), &field.path, message);
        let mut words = text.split_whitespace();
        let target = words
            .next()
            .ok_or_else(|| fail("is empty; name a target, e.g. \"go-nethttp\"".into()))?;
        let known = context.catalog.get(target).ok_or_else(|| {
            fail(format!(
                "unknown target {}; known targets: {}",
                shown(target),
                context.catalog.names()
            ))
        })?;
        if !context.selection.requested.contains(target) {
            return Err(fail(format!(
                "{} is not among this spec's targets; add it to `targets`",
                shown(target)
            )));
        }
        if let Some(message) = crate::values::repeated_word(words.clone()) {
            return Err(fail(format!("{} {message}", shown(text))));
        }
        let mut selector = Self {
            field,
            text,
            target,
            program: known.program.is_some(),
            parameters: Vec::new(),
            connections: None,
            rate: None,
            protocol: ProtocolChoice::default(),
        };
        for word in words {
            selector.add(word, known).map_err(fail)?;
        }
        Ok(selector)
    }

    /// One `name=value` word.
    fn add(&mut self, word: &str, known: &CatalogTarget) -> Result<(), String> {
        let (name, value) = word
            .split_once('=')
            .ok_or_else(|| format!("{} is not name=value", shown(word)))?;
        if let Some(taken) = self.protocol.take(name, value) {
            return taken.map_err(|refused| refused.to_string());
        }
        match name {
            "c" => {
                let connections = value.parse::<u32>().ok().filter(|c| *c > 0);
                self.connections =
                    Some(connections.ok_or_else(|| {
                        format!("c={} is not a number of connections", shown(value))
                    })?);
            }
            "rate" => {
                let rate = value.parse::<f64>().ok().filter(|r| r.is_finite());
                self.rate =
                    Some(rate.ok_or_else(|| format!("rate={} is not a rate", shown(value)))?);
            }
            _ => {
                let domain = known.parameters.get(name).ok_or_else(|| {
                    let names: Vec<&str> = known.parameters.keys().map(String::as_str).collect();
                    format!(
                        "{} has no parameter {}; its parameters: {} (and c=, rate=, tls=, \
                         protocol= pick a schedule)",
                        self.target,
                        shown(name),
                        names.join(", ")
                    )
                })?;
                let canonical = domain
                    .canonical(value)
                    .map_err(|why| format!("{name}={} {why}", shown(value)))?;
                self.parameters.push((name.to_string(), canonical));
            }
        }
        Ok(())
    }

    /// The one scenario of the plan this side names, or the reason its
    /// target cannot run here.
    fn resolve(
        &self,
        workload: Option<&str>,
        context: &Context<'_>,
        at: &Locator<'_>,
    ) -> Result<ClaimSide, SpecError> {
        let side = |resolved| ClaimSide {
            selector: self.text.to_string(),
            target: self.target.to_string(),
            resolved,
        };
        let skipped = context
            .selection
            .skipped
            .iter()
            .find(|s| s.target == self.target);
        if let Some(skipped) = skipped {
            return Ok(side(ClaimScenario::Unavailable(skipped.reason.clone())));
        }
        let fail = |message: String| at.at(self.field.value.span(), &self.field.path, message);
        let own: Vec<&PlannedScenario> = context
            .scenarios
            .iter()
            .filter(|s| s.target == self.target)
            .collect();
        if let Some((name, _)) = self
            .parameters
            .iter()
            .find(|(name, _)| own.iter().all(|s| !s.parameters.contains_key(name)))
        {
            return Err(fail(format!(
                "the spec does not set {name} for {}, so its scenarios run the manifest's default; leave {name} out, or set it in [parameters.{}]",
                self.target, self.target
            )));
        }
        let matching: Vec<&PlannedScenario> = own
            .iter()
            .copied()
            .filter(|s| self.matches(s, workload))
            .collect();
        let unserved = context
            .skipped_protocols
            .iter()
            .find(|s| s.target == self.target && self.protocol.matches(s.protocol));
        match (matching.as_slice(), unserved) {
            ([only], _) => Ok(side(ClaimScenario::Scenario(only.key.clone()))),
            ([], Some(skipped)) => Ok(side(ClaimScenario::Unavailable(format!(
                "{} does not serve {}: {}",
                self.target, skipped.protocol, skipped.reason
            )))),
            ([], None) => Err(fail(self.none_message(workload, &own))),
            (several, _) => Err(fail(self.several_message(several))),
        }
    }

    fn matches(&self, scenario: &PlannedScenario, workload: Option<&str>) -> bool {
        workload.is_none_or(|w| scenario.workload.name == w)
            && self
                .parameters
                .iter()
                .all(|(name, value)| scenario.parameters.get(name) == Some(value))
            && self
                .connections
                .is_none_or(|c| scenario.schedule.connections == c)
            && self
                .rate
                .is_none_or(|r| scenario.schedule.rate_per_s() == Some(r))
            && self.protocol.matches(scenario.schedule.protocol)
    }

    /// "no scenario of go-nethttp with workload plaintext; the plan has: …"
    fn none_message(&self, workload: Option<&str>, own: &[&PlannedScenario]) -> String {
        let with = workload.map_or(String::new(), |w| format!(" with workload {w}"));
        let keys = if own.is_empty() {
            "none of it".to_string()
        } else {
            listed(own.iter().map(|s| s.key.as_str()))
        };
        format!(
            "no scenario of {}{with}; the plan has: {keys}",
            shown(self.text)
        )
    }

    /// "matches 3 scenarios; add parameters, e.g. \"go-ants pool_size=64\"":
    /// the example is the first match, told apart by what differs.
    fn several_message(&self, several: &[&PlannedScenario]) -> String {
        let first = several[0];
        let mut example = self.target.to_string();
        for (name, value) in &first.parameters {
            if several
                .iter()
                .any(|s| s.parameters.get(name) != Some(value))
            {
                example.push_str(&format!(" {name}={value}"));
            }
        }
        let schedule = first.schedule;
        if let Some(rate) = schedule.rate_per_s() {
            if several
                .iter()
                .any(|s| s.schedule.rate_per_s() != Some(rate))
            {
                example.push_str(&format!(" rate={rate}"));
            }
        }
        if several
            .iter()
            .any(|s| s.schedule.connections != schedule.connections)
        {
            example.push_str(&format!(" c={}", schedule.connections));
        }
        if several
            .iter()
            .any(|s| s.schedule.protocol != schedule.protocol)
        {
            example.push_str(&format!(" {}", choice_word(schedule.protocol)));
        }
        format!(
            "{} matches {} scenarios; add parameters, e.g. {}",
            shown(self.text),
            several.len(),
            shown(&example)
        )
    }
}
