//! The notes under a report: which of the analysis' warnings a view shows,
//! the numbers its rows are marked with, and each note as one line that
//! names the rows it concerns with what was found in each.
//!
//! A view notes only what it shows: the compact first look leaves out the
//! warnings about figures it does not show (the intervals of secondary
//! metrics, counters of the generator), which `--detail` keeps.

use corobench_model::{Metric, Warning, WarningKind};

use crate::units;

/// The warnings a view shows, in the analysis' order, numbered from 1.
#[derive(Clone, Debug)]
pub(crate) struct Notes<'a> {
    warnings: &'a [Warning],
    /// Indices into `warnings`, in order; a note's number is its position + 1.
    shown: Vec<usize>,
}

impl<'a> Notes<'a> {
    /// Every warning.
    pub(crate) fn all(warnings: &'a [Warning]) -> Self {
        Self {
            warnings,
            shown: (0..warnings.len()).collect(),
        }
    }

    /// The warnings about the scenarios or the run as a whole, those about
    /// a metric `shows` keeps, and those of the `kinds` given.
    pub(crate) fn about(
        warnings: &'a [Warning],
        shows: impl Fn(Metric) -> bool,
        kinds: &[WarningKind],
    ) -> Self {
        let shown = warnings
            .iter()
            .enumerate()
            .filter(|(_, w)| {
                w.metrics.is_empty()
                    || w.metrics.iter().any(|&m| shows(m))
                    || kinds.contains(&w.kind)
            })
            .map(|(i, _)| i)
            .collect();
        Self { warnings, shown }
    }

    /// The number a view gives warning `index`, if it shows it.
    fn number(&self, index: usize) -> Option<usize> {
        self.shown.iter().position(|&i| i == index).map(|p| p + 1)
    }

    /// Footnote markers for warning indices, in ascending order of the
    /// numbers shown: `¹ ³`; warnings the view leaves out get none.
    pub(crate) fn markers(&self, indices: &[usize]) -> String {
        let mut numbers: Vec<usize> = indices.iter().filter_map(|&i| self.number(i)).collect();
        numbers.sort_unstable();
        numbers.dedup();
        numbers
            .iter()
            .map(|&n| units::superscript(n))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The markers of the warnings that name scenario `key` and are about
    /// `metric` or about the scenario as a whole.
    pub(crate) fn markers_for(&self, key: &str, metric: Metric) -> String {
        let indices: Vec<usize> = self
            .warnings
            .iter()
            .enumerate()
            .filter(|(_, w)| w.scenarios.iter().any(|s| s == key))
            .filter(|(_, w)| w.metrics.is_empty() || w.metrics.contains(&metric))
            .map(|(i, _)| i)
            .collect();
        self.markers(&indices)
    }

    /// Each note shown, with its number: the message, then the rows it
    /// concerns as `rows` names them.
    pub(crate) fn lines(&self, rows: &dyn Fn(&Warning) -> Option<String>) -> Vec<(usize, String)> {
        self.shown
            .iter()
            .enumerate()
            .map(|(position, &i)| {
                let warning = &self.warnings[i];
                let text = match rows(warning) {
                    Some(named) => format!("{} — {named}", warning.message),
                    None => warning.message.clone(),
                };
                (position + 1, text)
            })
            .collect()
    }
}

/// How a note names a row: the table it is in (when a report has more
/// than one) and its label there.
pub(crate) struct RowName {
    /// The table's name and its place in the report.
    pub(crate) table: Option<(usize, String)>,
    pub(crate) label: String,
}

/// The rows of one warning, named by `name` and grouped by table, rows
/// with the same finding sharing it: `plaintext c=8: go-ants, node-http in
/// 6 of 6 trials; io-5ms: php-fpm in 2 of 6 trials`; `every scenario` when
/// it concerns all `rows` of the report alike. `None` for a run-wide
/// warning.
pub(crate) fn named_rows(
    warning: &Warning,
    rows: usize,
    name: impl Fn(&str) -> RowName,
) -> Option<String> {
    if warning.scenarios.is_empty() {
        return None;
    }
    let details: Vec<Option<&String>> = warning
        .scenarios
        .iter()
        .map(|key| warning.details.get(key))
        .collect();
    if rows > 1 && warning.scenarios.len() == rows && details.iter().all(|d| *d == details[0]) {
        return Some(match details[0] {
            Some(detail) => format!("every scenario, {detail}"),
            None => "every scenario".to_owned(),
        });
    }
    // (table, [(finding, labels)]) in the order met.
    type Findings<'a> = Vec<(Option<&'a String>, Vec<String>)>;
    let mut tables: Vec<(Option<(usize, String)>, Findings<'_>)> = Vec::new();
    for (key, detail) in warning.scenarios.iter().zip(details) {
        let RowName { table, label } = name(key);
        let findings = match tables.iter_mut().position(|(t, _)| *t == table) {
            Some(index) => &mut tables[index].1,
            None => {
                tables.push((table, Vec::new()));
                &mut tables.last_mut().expect("just pushed").1
            }
        };
        match findings.iter_mut().find(|(d, _)| *d == detail) {
            Some((_, labels)) => labels.push(label),
            None => findings.push((detail, vec![label])),
        }
    }
    tables.sort_by_key(|(table, _)| table.as_ref().map(|(place, _)| *place));
    let parts: Vec<String> = tables
        .into_iter()
        .map(|(table, findings)| {
            let rows: Vec<String> = findings
                .into_iter()
                .map(|(detail, labels)| match detail {
                    Some(detail) => format!("{} {detail}", labels.join(", ")),
                    None => labels.join(", "),
                })
                .collect();
            match table {
                Some((_, table)) => format!("{table}: {}", rows.join("; ")),
                None => rows.join("; "),
            }
        })
        .collect();
    Some(parts.join("; "))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use corobench_model::{Metric, Warning, WarningKind};

    use super::{Notes, RowName, named_rows};

    fn warning(message: &str, rows: &[(&str, Option<&str>)], metrics: Vec<Metric>) -> Warning {
        Warning {
            kind: WarningKind::GeneratorBound,
            message: message.to_owned(),
            scenarios: rows.iter().map(|(k, _)| (*k).to_owned()).collect(),
            details: rows
                .iter()
                .filter_map(|(k, d)| Some(((*k).to_owned(), (*d)?.to_owned())))
                .collect::<BTreeMap<_, _>>(),
            metrics,
        }
    }

    #[test]
    fn a_view_numbers_only_the_notes_it_shows_and_marks_rows_with_those_numbers() {
        let warnings = vec![
            warning("about mean", &[("a", None)], vec![Metric::LatencyMeanUs]),
            warning("about req/s", &[("a", None)], vec![Metric::RequestsPerS]),
            warning("about the scenario", &[("b", None)], vec![]),
        ];
        let notes = Notes::about(&warnings, |m| m == Metric::RequestsPerS, &[]);
        assert_eq!(notes.markers(&[0, 1, 2]), "¹ ²");
        assert_eq!(notes.markers_for("a", Metric::RequestsPerS), "¹");
        assert_eq!(notes.markers_for("a", Metric::LatencyP99Us), "");
        let lines = notes.lines(&|_| None);
        assert_eq!(
            lines,
            vec![
                (1, "about req/s".to_owned()),
                (2, "about the scenario".to_owned())
            ]
        );
        assert_eq!(Notes::all(&warnings).markers(&[2, 0]), "¹ ³");
        // A kind the view asks for is shown whatever its metrics.
        let kinds = Notes::about(&warnings, |_| false, &[WarningKind::GeneratorBound]);
        assert_eq!(kinds.markers(&[0, 1, 2]), "¹ ² ³");
    }

    #[test]
    fn rows_are_named_by_table_with_their_findings() {
        let w = warning(
            "generator-bound",
            &[
                ("x/plaintext", Some("in 6 of 6 trials")),
                ("y/plaintext", Some("in 2 of 6 trials")),
                ("w/plaintext", Some("in 6 of 6 trials")),
                ("z/io", None),
            ],
            vec![],
        );
        let name = |key: &str| {
            let (label, table) = key.split_once('/').unwrap();
            RowName {
                table: Some((usize::from(table != "plaintext"), table.to_owned())),
                label: label.to_owned(),
            }
        };
        assert_eq!(
            named_rows(&w, 5, name).as_deref(),
            Some("plaintext: x, w in 6 of 6 trials; y in 2 of 6 trials; io: z")
        );
        let everywhere = warning("wide", &[("x/a", None), ("y/a", None)], vec![]);
        assert_eq!(
            named_rows(&everywhere, 2, name).as_deref(),
            Some("every scenario")
        );
        let alike = warning(
            "few",
            &[("x/a", Some("5 trials")), ("y/a", Some("5 trials"))],
            vec![],
        );
        assert_eq!(
            named_rows(&alike, 2, name).as_deref(),
            Some("every scenario, 5 trials")
        );
        let run_wide = Warning::new(WarningKind::MachineSpeed, "steady");
        assert_eq!(named_rows(&run_wide, 2, name), None);
    }
}
