//! `--format` of `report` and `compare`: the report crate's formats as
//! clap values, named, aliased and described as the report crate does, so
//! that a new format is one variant there and nothing here.

use std::sync::LazyLock;

use clap::ValueEnum;
use clap::builder::PossibleValue;
use corobench_report::{Format, GateFormat};

/// A `--format` of `corobench report`: any format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportFormat(pub Format);

/// A `--format` of `corobench compare`: the comparison, in a format that
/// has one, or the verdicts of the regression gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareFormat {
    Comparison(Format),
    Gate(GateFormat),
}

static REPORT_FORMATS: LazyLock<Vec<ReportFormat>> =
    LazyLock::new(|| Format::ALL.map(ReportFormat).to_vec());

static COMPARE_FORMATS: LazyLock<Vec<CompareFormat>> = LazyLock::new(|| {
    Format::comparison_formats()
        .map(CompareFormat::Comparison)
        .chain(GateFormat::ALL.map(CompareFormat::Gate))
        .collect()
});

impl ValueEnum for ReportFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &REPORT_FORMATS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(format_value(self.0))
    }
}

impl ValueEnum for CompareFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &COMPARE_FORMATS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match *self {
            Self::Comparison(format) => format_value(format),
            Self::Gate(format) => PossibleValue::new(format.name())
                .help(format!("{} (needs --fail-on)", format.description())),
        })
    }
}

fn format_value(format: Format) -> PossibleValue {
    PossibleValue::new(format.name())
        .aliases(format.aliases().iter().copied())
        .help(format.description())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_report_format_is_a_value_by_its_name_and_aliases() {
        for format in Format::ALL {
            let names = std::iter::once(format.name()).chain(format.aliases().iter().copied());
            for name in names {
                assert_eq!(
                    ReportFormat::from_str(name, false),
                    Ok(ReportFormat(format)),
                    "{name}"
                );
            }
        }
        assert_eq!(
            ReportFormat::from_str("markdown", false),
            Ok(ReportFormat(Format::Markdown))
        );
    }

    #[test]
    fn compare_takes_the_comparison_formats_and_the_gate_formats() {
        let names: Vec<String> = CompareFormat::value_variants()
            .iter()
            .filter_map(|value| Some(value.to_possible_value()?.get_name().to_owned()))
            .collect();
        assert_eq!(names, ["table", "md", "json", "csv", "junit", "github"]);
        assert!(CompareFormat::from_str("csv-trials", false).is_err());
        let junit = CompareFormat::Gate(GateFormat::Junit)
            .to_possible_value()
            .and_then(|value| value.get_help().map(ToString::to_string));
        assert_eq!(
            junit.as_deref(),
            Some("The gate's verdicts as JUnit XML (needs --fail-on)")
        );
    }
}
