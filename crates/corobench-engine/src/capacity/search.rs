//! Where a capacity search goes next, from the trials it has: a pure
//! function of what is stored, so a resumed run picks up exactly where it
//! stopped and the walk is tested without running anything.
//!
//! Each rate gets `trials_per_rate` judged trials and passes when more of
//! them pass than fail (a tie fails, as in the estimate), so one noisy
//! trial cannot end the search. While every rate
//! passes, the next is `growth` times the highest; once a rate fails, the
//! search bisects (geometrically) between the highest passing and the
//! lowest failing rate until they are within `precision`. A rate the
//! generator could not drive stops the search: the server was not tested
//! there, and higher rates would not be either.

pub use corobench_analyze::{Judged, RateTally, judge};
use corobench_model::{CapacitySettings, RateVerdict};

/// Why a scenario's search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The highest passing and lowest failing rates are within `precision`.
    Converged,
    /// Every rate passed up to `max_rate`.
    MaxRate,
    /// Every rate failed down to `min_rate`.
    MinRate,
    /// The generator could not drive a rate.
    GeneratorLimit,
    /// A rate's trials measured nothing, again and again.
    Broken,
    /// `max_rates` rates were tried.
    MaxRates,
}

impl Finish {
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Converged => "converged",
            Self::MaxRate => "every rate passed up to max_rate",
            Self::MinRate => "every rate failed down to min_rate",
            Self::GeneratorLimit => "the generator could not offer a higher rate",
            Self::Broken => "the target kept failing to measure at one rate",
            Self::MaxRates => "tried max_rates rates",
        }
    }
}

/// What a scenario's search does next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// One more trial at this rate (a new rate, or one short of trials).
    Trial(f64),
    Done(Finish),
}

/// The next step of a search that has tried `tried` (in any order).
#[must_use]
pub fn next(tried: &[RateTally], settings: &CapacitySettings) -> Next {
    let per_rate = settings.trials_per_rate;
    if let Some(open) = tried.iter().find(|t| !t.complete(per_rate)) {
        return Next::Trial(open.rate);
    }
    let verdicts: Vec<(f64, RateVerdict)> = tried
        .iter()
        .map(|t| (t.rate, t.verdict(per_rate)))
        .collect();
    if verdicts
        .iter()
        .any(|(_, v)| *v == RateVerdict::GeneratorLimit)
    {
        return Next::Done(Finish::GeneratorLimit);
    }
    if verdicts.iter().any(|(_, v)| *v == RateVerdict::Undecided) {
        return Next::Done(Finish::Broken);
    }
    if tried.len() >= settings.max_rates as usize {
        return Next::Done(Finish::MaxRates);
    }
    let highest_pass = verdicts
        .iter()
        .filter(|(_, v)| *v == RateVerdict::Pass)
        .map(|(r, _)| *r)
        .max_by(f64::total_cmp);
    let lowest_fail_above = verdicts
        .iter()
        .filter(|(r, v)| *v == RateVerdict::Fail && highest_pass.is_none_or(|p| *r > p))
        .map(|(r, _)| *r)
        .min_by(f64::total_cmp);
    let step = match (highest_pass, lowest_fail_above) {
        (None, None) => Ok(settings.start_rate),
        (None, Some(fail)) => downward(fail, settings),
        (Some(pass), None) => upward(pass, settings),
        (Some(pass), Some(fail)) => between(pass, fail, settings),
    };
    match step {
        Ok(rate) if tried.iter().any(|t| t.rate == rate) => Next::Done(Finish::Converged),
        Ok(rate) => Next::Trial(rate),
        Err(finish) => Next::Done(finish),
    }
}

fn downward(lowest_fail: f64, settings: &CapacitySettings) -> Result<f64, Finish> {
    if lowest_fail <= settings.min_rate {
        return Err(Finish::MinRate);
    }
    Ok(round_rate(lowest_fail / settings.growth).max(settings.min_rate))
}

fn upward(highest_pass: f64, settings: &CapacitySettings) -> Result<f64, Finish> {
    if highest_pass >= settings.max_rate {
        return Err(Finish::MaxRate);
    }
    Ok(round_rate(highest_pass * settings.growth).min(settings.max_rate))
}

fn between(pass: f64, fail: f64, settings: &CapacitySettings) -> Result<f64, Finish> {
    if fail <= pass * (1.0 + settings.precision) {
        return Err(Finish::Converged);
    }
    Ok(round_rate((pass * fail).sqrt()))
}

/// Three significant figures, so rates (and the scenario keys that hold
/// them) read well: 1414.21 → 1410.
#[must_use]
pub fn round_rate(rate: f64) -> f64 {
    if !(rate.is_finite() && rate > 0.0) {
        return rate;
    }
    // Through decimal text, so 62.5 stays 62.5 rather than 62.50000000000001.
    format!("{rate:.2e}").parse().unwrap_or(rate)
}

#[cfg(test)]
mod tests;
