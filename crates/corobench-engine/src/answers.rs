//! Which answers of a trial count. A user's server is measured doing what
//! its workload expects (`expect_status`, or any answer below 400): its
//! req/s counts only the answers that meet that, the others show as errors,
//! and a trial whose answers mostly break it measured something else and
//! fails, saying so. (Its one answer before the first trial was checked
//! whole; under load only the status class can be, and is, checked.)

use corobench_model::LoadReport;
use corobench_spec::Expectation;

/// A trial in which more than this share of the outcomes broke the
/// workload's expectations fails.
const MOST: f64 = 0.5;

/// For a user's server (`user_server`): keeps req/s to the answers that
/// meet the expectations, and refuses a trial whose answers mostly break
/// them. (The record counts the others as errors.)
///
/// # Errors
/// The trial's failure reason.
pub(crate) fn judge(
    report: &mut LoadReport,
    expect: &Expectation,
    user_server: bool,
) -> Result<(), String> {
    if !user_server {
        return Ok(());
    }
    let met = report.status.meeting(expect.status);
    if report.elapsed_s > 0.0 {
        report.requests_per_s = met as f64 / report.elapsed_s;
    }
    let outcomes = report.requests + report.errors.transport() + report.errors.malformed;
    let broken = outcomes.saturating_sub(met);
    if outcomes == 0 || (broken as f64) <= MOST * outcomes as f64 {
        return Ok(());
    }
    let wanted = expect.status.map_or_else(
        || "an answer below 400".to_owned(),
        |code| format!("status {code} ({}xx)", code / 100),
    );
    Err(format!(
        "{broken} of the trial's {outcomes} requests ({:.0}%) did not get {wanted}, as the \
         workload expects (got {}): the server was checked before the first trial but did \
         something else under load, so this trial measured no answer it was asked for",
        100.0 * broken as f64 / outcomes as f64,
        got(report)
    ))
}

/// What came back instead, by status class and error kind.
fn got(report: &LoadReport) -> String {
    let failed = [
        ("no answer", report.errors.transport()),
        ("malformed", report.errors.malformed),
    ];
    report
        .status
        .by_class()
        .iter()
        .chain(&failed)
        .filter(|(_, count)| *count > 0)
        .map(|(what, count)| format!("{what} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use corobench_analyze::fixtures::load;
    use corobench_model::StatusCounts;
    use corobench_spec::Expectation;

    use super::judge;

    fn answered(status: StatusCounts) -> corobench_model::LoadReport {
        let mut report = load(100.0, &[100; 100]);
        report.requests = status.total();
        report.elapsed_s = 1.0;
        report.status = status;
        report
    }

    fn expecting(status: Option<u16>) -> Expectation {
        Expectation {
            status,
            ..Expectation::default()
        }
    }

    /// Issue "hostile input, third round", wrong result 4: 57k req/s of
    /// 500s, run "complete". Such a trial fails with the reason.
    #[test]
    fn a_trial_of_errors_fails_with_what_came_back() {
        let mut report = answered(StatusCounts {
            server_error: 900,
            success: 100,
            ..StatusCounts::default()
        });
        let why = judge(&mut report, &expecting(Some(200)), true).unwrap_err();
        assert!(
            why.contains("900 of the trial's 1000 requests (90%)"),
            "{why}"
        );
        assert!(why.contains("did not get status 200 (2xx)"), "{why}");
        assert!(why.contains("2xx 100, 5xx 900"), "{why}");
        let mut redirects = answered(StatusCounts {
            redirection: 1000,
            ..StatusCounts::default()
        });
        let why = judge(&mut redirects, &expecting(Some(200)), true).unwrap_err();
        assert!(why.contains("3xx 1000"), "{why}");
        let mut not_found = answered(StatusCounts {
            client_error: 1000,
            ..StatusCounts::default()
        });
        let why = judge(&mut not_found, &expecting(None), true).unwrap_err();
        assert!(why.contains("did not get an answer below 400"), "{why}");
    }

    /// Whatever the share, req/s counts only the answers that meet the
    /// expectations; the error rate still shows the rest.
    #[test]
    fn req_per_s_counts_only_the_answers_that_meet_the_expectations() {
        let mut report = answered(StatusCounts {
            success: 900,
            redirection: 100,
            ..StatusCounts::default()
        });
        judge(&mut report, &expecting(Some(200)), true).unwrap();
        assert!((report.requests_per_s - 900.0).abs() < 1e-9);
        let mut expected_error = answered(StatusCounts {
            client_error: 1000,
            ..StatusCounts::default()
        });
        judge(&mut expected_error, &expecting(Some(404)), true).unwrap();
        assert!((expected_error.requests_per_s - 1000.0).abs() < 1e-9);
    }

    /// A reference target keeps counting every answer: its contract, not a
    /// workload's expectations, says what it must answer.
    #[test]
    fn a_reference_target_is_left_as_measured() {
        let mut report = answered(StatusCounts {
            server_error: 1000,
            ..StatusCounts::default()
        });
        judge(&mut report, &expecting(None), false).unwrap();
        assert!((report.requests_per_s - 100.0).abs() < 1e-9);
    }
}
