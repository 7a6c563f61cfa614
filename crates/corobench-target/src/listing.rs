//! What targets exist, as a person reads them: each target's model,
//! language, whether it can run here and is built, and its parameters
//! with their defaults; a table of them, with the reasons behind every
//! "no" and "error" under it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::{Availability, BuildCache, Manifest, ParameterSpec};

/// One target as a listing shows it.
#[derive(Debug, Serialize)]
pub struct Listing {
    pub name: String,
    pub model: String,
    pub language: String,
    pub summary: String,
    pub dir: PathBuf,
    pub available: bool,
    pub unavailable_reason: Option<String>,
    pub hint: Option<String>,
    /// `None` when the target has no `[build]`.
    pub built: Option<bool>,
    /// Why the build state could not be determined (e.g. a missing input).
    pub build_error: Option<String>,
    pub parameters: BTreeMap<String, ParameterSpec>,
}

impl Listing {
    /// The listing of `manifest`, its build state looked up in `cache`.
    #[must_use]
    pub fn new(manifest: &Manifest, cache: &BuildCache) -> Self {
        let (unavailable_reason, hint) = match manifest.availability() {
            Availability::Available => (None, None),
            Availability::Unavailable { reason, hint } => (Some(reason), hint),
        };
        let (built, build_error) = match (&manifest.build, cache.is_built(manifest)) {
            (None, _) => (None, None),
            (Some(_), Ok(built)) => (Some(built), None),
            (Some(_), Err(error)) => (Some(false), Some(error.to_string())),
        };
        Self {
            name: manifest.name.clone(),
            model: manifest.model.clone(),
            language: manifest.language.clone(),
            summary: manifest.summary.clone(),
            dir: manifest.dir.clone(),
            available: unavailable_reason.is_none(),
            unavailable_reason,
            hint,
            built,
            build_error,
            parameters: manifest.parameters.clone(),
        }
    }

    fn row(&self) -> [String; 6] {
        let built = match (self.built, &self.build_error) {
            (_, Some(_)) => "error",
            (None, None) => "n/a",
            (Some(true), None) => "yes",
            (Some(false), None) => "no",
        };
        let parameters: Vec<String> = self
            .parameters
            .iter()
            .map(|(name, spec)| format!("{name}={}", spec.default_value()))
            .collect();
        [
            self.name.clone(),
            self.model.clone(),
            self.language.clone(),
            if self.available { "yes" } else { "no" }.to_string(),
            built.to_string(),
            parameters.join(" "),
        ]
    }

    /// The reasons behind a "no" or an "error", for the notes under the table.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(reason) = &self.unavailable_reason {
            let hint = self
                .hint
                .as_deref()
                .map(|h| format!(" (hint: {h})"))
                .unwrap_or_default();
            notes.push(format!("{}: unavailable: {reason}{hint}", self.name));
        }
        if let Some(error) = &self.build_error {
            notes.push(format!("{}: build state unknown: {error}", self.name));
        }
        notes
    }
}

/// The listings of `manifests`, in their order.
#[must_use]
pub fn listings(manifests: &[Manifest], cache: &BuildCache) -> Vec<Listing> {
    manifests.iter().map(|m| Listing::new(m, cache)).collect()
}

/// The listings as a table, then the notes on targets that cannot run or
/// whose build state is unknown.
#[must_use]
pub fn table(listings: &[Listing]) -> String {
    let header = [
        "NAME",
        "MODEL",
        "LANGUAGE",
        "AVAILABLE",
        "BUILT",
        "PARAMETERS (defaults)",
    ]
    .map(String::from);
    let rows: Vec<[String; 6]> = std::iter::once(header)
        .chain(listings.iter().map(Listing::row))
        .collect();
    let mut text = aligned(&rows);
    let notes: Vec<String> = listings.iter().flat_map(Listing::notes).collect();
    if !notes.is_empty() {
        text.push('\n');
        for note in notes {
            text.push_str(&note);
            text.push('\n');
        }
    }
    text
}

/// Rows as columns padded to their widest cell (the last column unpadded).
fn aligned<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, width))| {
                if i + 1 == N {
                    cell.clone()
                } else {
                    format!("{cell:width$}")
                }
            })
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/targets")
    }

    /// The fixtures `names`, in that order.
    fn select(names: &[&str]) -> Vec<Manifest> {
        let all = crate::discover(&fixtures()).unwrap();
        names
            .iter()
            .map(|name| all.iter().find(|m| m.name == *name).unwrap().clone())
            .collect()
    }

    #[test]
    fn the_table_shows_availability_build_state_and_defaults() {
        let scratch = tempfile::tempdir().unwrap();
        let cache = BuildCache::new(scratch.path());
        let manifests = select(&["built", "web"]);
        let mut unavailable = manifests[1].clone();
        unavailable.name = "web-without-tool".into();
        unavailable.requires.push("corobench-no-such-tool".into());
        let all = [manifests[0].clone(), manifests[1].clone(), unavailable];
        let text = table(&listings(&all, &cache));
        let expected = "\
NAME              MODEL        LANGUAGE  AVAILABLE  BUILT  PARAMETERS (defaults)
built             worker-pool  sh        yes        no
web               worker-pool  Python    yes        n/a    mode=blocking threads=1
web-without-tool  worker-pool  Python    no         n/a    mode=blocking threads=1

web-without-tool: unavailable: `corobench-no-such-tool` is not on PATH (hint: install Python 3)
";
        assert_eq!(text, expected);
    }
}
