//! The one piece of linear algebra the fits need: solving a tiny dense system.

/// Solves `matrix · x = rhs` by Gaussian elimination with partial pivoting.
/// `None` when the matrix is singular to working precision or the answer is
/// not finite; callers treat that as "this step cannot be taken".
pub(crate) fn solve_linear<const N: usize>(
    mut matrix: [[f64; N]; N],
    mut rhs: [f64; N],
) -> Option<[f64; N]> {
    let largest = matrix
        .iter()
        .flatten()
        .fold(0.0_f64, |acc, v| acc.max(v.abs()));
    for column in 0..N {
        let pivot_row = (column..N)
            .max_by(|&i, &j| matrix[i][column].abs().total_cmp(&matrix[j][column].abs()))?;
        // A pivot this small against the largest entry means the system is singular.
        let usable = matrix[pivot_row][column].abs() > largest * 1e-14;
        if !usable {
            return None;
        }
        matrix.swap(column, pivot_row);
        rhs.swap(column, pivot_row);
        let (upper, lower) = matrix.split_at_mut(column + 1);
        let pivot = &upper[column];
        for (offset, row) in lower.iter_mut().enumerate() {
            let factor = row[column] / pivot[column];
            for (entry, &above) in row.iter_mut().zip(pivot).skip(column) {
                *entry -= factor * above;
            }
            rhs[column + 1 + offset] -= factor * rhs[column];
        }
    }
    let mut solution = [0.0; N];
    for row in (0..N).rev() {
        let known: f64 = (row + 1..N).map(|k| matrix[row][k] * solution[k]).sum();
        solution[row] = (rhs[row] - known) / matrix[row][row];
    }
    solution.iter().all(|v| v.is_finite()).then_some(solution)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_system_that_needs_pivoting() {
        // A zero in the first pivot position; the answer is (1, 2, 3).
        let matrix = [[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [2.0, 0.0, 3.0]];
        let x = solve_linear(matrix, [7.0, 3.0, 11.0]).unwrap();
        for (got, want) in x.iter().zip([1.0, 2.0, 3.0]) {
            assert!((got - want).abs() < 1e-12, "{x:?}");
        }
    }

    #[test]
    fn singular_systems_have_no_solution() {
        assert_eq!(solve_linear([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0]), None);
        assert_eq!(solve_linear([[0.0]], [1.0]), None);
        assert_eq!(solve_linear([[f64::NAN]], [1.0]), None);
    }
}
