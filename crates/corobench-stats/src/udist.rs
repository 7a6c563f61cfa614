//! The exact null distribution of the Mann–Whitney U statistic, with or
//! without ties.
//!
//! Under the null hypothesis every way of choosing which n1 of the N = n1 + n2
//! pooled values belong to the first sample is equally likely, C(N, n1) in
//! all. With ties, U counts a tied cross-sample pair as ½, so U depends only on
//! how many first-sample values fall into each tie group: r of a group of t
//! values, chosen in C(t, r) ways. Walking the groups in ascending order, each
//! of those r values beats every second-sample value below the group and ties
//! with the t − r second-sample values inside it, adding r·(2·below + t − r) to
//! 2U. A table indexed by (first-sample values placed so far, 2U so far) is
//! carried from group to group; 2U never decreases, so entries past the
//! threshold of interest are dropped. This is the same distribution go-moremath
//! obtains with the Cheung–Klotz recursion, built by a plain forward pass.
//! Without ties every group has size 1 and the pass is the classic Mann–Whitney
//! recursion.

use crate::special::{choose, ln_choose};

/// P(2·U₁ ≤ `twice_u_max`) where U₁ is the U statistic of a first sample of
/// size `n1` against a second of size `n2`, given the pooled tie groups
/// `tie_groups` (sizes in ascending value order, summing to n1 + n2).
///
/// Cost: about (n1 + n2) · (n1 + 1) · (`twice_u_max` + 1) multiply-adds.
pub(crate) fn u_lower_tail(n1: usize, n2: usize, tie_groups: &[usize], twice_u_max: usize) -> f64 {
    if twice_u_max >= 2 * n1 * n2 {
        return 1.0;
    }
    let favourable: f64 = twice_u_counts(n1, n2, tie_groups, twice_u_max).iter().sum();
    favourable / total_arrangements(n1, n2)
}

/// P(U ≤ u) for u = 0, 1, …, `u_max`, for samples of sizes `n1` and `n2`
/// without ties (the distribution behind the Hodges–Lehmann interval).
pub(crate) fn u_cdf_without_ties(n1: usize, n2: usize, u_max: usize) -> Vec<f64> {
    let singles = vec![1; n1 + n2];
    let counts = twice_u_counts(n1, n2, &singles, 2 * u_max);
    let total = total_arrangements(n1, n2);
    let mut running = 0.0;
    // Without ties 2U is always even.
    counts
        .iter()
        .step_by(2)
        .map(|count| {
            running += count;
            running / total
        })
        .collect()
}

/// How many of the C(n1 + n2, n1) arrangements give each 2U = 0, 1, …,
/// `twice_u_max`: the forward pass over the tie groups described above.
fn twice_u_counts(n1: usize, n2: usize, tie_groups: &[usize], twice_u_max: usize) -> Vec<f64> {
    debug_assert_eq!(tie_groups.iter().sum::<usize>(), n1 + n2);
    let width = twice_u_max + 1;
    let mut counts = vec![0.0_f64; (n1 + 1) * width];
    let mut next = counts.clone();
    counts[0] = 1.0;
    let mut placed = 0;
    for &group in tie_groups {
        next.fill(0.0);
        let ways: Vec<f64> = (0..=group).map(|r| choose(group, r)).collect();
        for first_so_far in 0..=n1.min(placed) {
            let second_below = placed - first_so_far;
            if second_below > n2 {
                continue;
            }
            let row = &counts[first_so_far * width..(first_so_far + 1) * width];
            // r first-sample values in this group, the rest must fit in sample two.
            let r_min = group.saturating_sub(n2 - second_below);
            let r_max = group.min(n1 - first_so_far);
            for (twice_u, &count) in row.iter().enumerate() {
                if count == 0.0 {
                    continue;
                }
                for r in r_min..=r_max {
                    let reached = twice_u + r * (2 * second_below + group - r);
                    if reached <= twice_u_max {
                        next[(first_so_far + r) * width + reached] += count * ways[r];
                    }
                }
            }
        }
        std::mem::swap(&mut counts, &mut next);
        placed += group;
    }
    counts.split_off(n1 * width)
}

/// C(n1 + n2, n1), through logarithms once it no longer fits a float exactly.
fn total_arrangements(n1: usize, n2: usize) -> f64 {
    let exact = choose(n1 + n2, n1);
    if exact < 9.0e15 {
        exact
    } else {
        ln_choose(n1 + n2, n1).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_against_five_without_ties() {
        let singles = [1; 10];
        // Only the fully separated arrangement has U = 0: 1 of C(10, 5) = 252.
        assert_eq!(u_lower_tail(5, 5, &singles, 0), 1.0 / 252.0);
        // U ≤ 1: U = 0 or a single swap at the boundary.
        assert_eq!(u_lower_tail(5, 5, &singles, 2), 2.0 / 252.0);
        assert_eq!(u_lower_tail(5, 5, &singles, 50), 1.0);
    }

    #[test]
    fn whole_distribution_sums_to_one_with_ties() {
        let groups = [2, 1, 3, 1, 1];
        assert!((u_lower_tail(3, 5, &groups, 29) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn cdf_without_ties_by_hand() {
        // 2 against 2: U = 0, 1, 2, 2, 3, 4 over the C(4, 2) = 6 splits.
        let cdf = u_cdf_without_ties(2, 2, 4);
        let expected = [1.0, 2.0, 4.0, 5.0, 6.0].map(|count| count / 6.0);
        assert_eq!(cdf, expected);
        assert_eq!(u_cdf_without_ties(5, 5, 0), vec![1.0 / 252.0]);
    }

    #[test]
    fn tie_case_by_hand() {
        // Values {a, a, b} with a < b, one value in sample one: it is an `a`
        // with probability 2/3 (U = ½) or the `b` with probability 1/3 (U = 2).
        assert!((u_lower_tail(1, 2, &[2, 1], 1) - 2.0 / 3.0).abs() < 1e-15);
        assert!((u_lower_tail(1, 2, &[2, 1], 0)).abs() < 1e-15);
        // Two values in sample one: {a, a} gives U = 0, {a, b} gives U = 1.5.
        assert!((u_lower_tail(2, 1, &[2, 1], 1) - 1.0 / 3.0).abs() < 1e-15);
    }
}
