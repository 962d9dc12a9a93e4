//! Least squares with relative residuals (each row divided by its target), so a 10 µs kernel
//! counts as much as a 10 ms one — the fit minimises percentage error, which is how every
//! predictor here is judged.

use nalgebra::{DMatrix, DVector};

/// Solves min Σ ((x·β − y)/y)² ; returns β (zeros if the system is degenerate).
pub fn relative_least_squares(x: &[Vec<f64>], y: &[f64]) -> Vec<f64> {
    let cols = x.first().map_or(0, |r| r.len());
    if x.is_empty() || cols == 0 {
        return vec![0.0; cols];
    }
    let a = DMatrix::from_fn(x.len(), cols, |i, j| x[i][j] / y[i]);
    let b = DVector::from_element(x.len(), 1.0);
    match a.svd(true, true).solve(&b, 1e-12) {
        Ok(beta) => beta.iter().copied().collect(),
        Err(_) => vec![0.0; cols],
    }
}

/// Least squares on relative error with every coefficient ≥ 0: the most negative coefficient
/// is dropped and the rest refitted until none is negative.
pub fn nonnegative_fit(x: &[Vec<f64>], y: &[f64]) -> Vec<f64> {
    let cols = x.first().map_or(0, Vec::len);
    let mut active: Vec<usize> = (0..cols).collect();
    while !active.is_empty() {
        let sub: Vec<Vec<f64>> = x.iter().map(|r| active.iter().map(|&j| r[j]).collect()).collect();
        let beta = relative_least_squares(&sub, y);
        let worst = (0..active.len()).filter(|&i| beta[i] < 0.0 || !beta[i].is_finite()).min_by(|&a, &b| beta[a].total_cmp(&beta[b]));
        match worst {
            Some(i) => {
                active.remove(i);
            }
            None => {
                let mut full = vec![0.0; cols];
                for (i, &j) in active.iter().enumerate() {
                    full[j] = beta[i];
                }
                return full;
            }
        }
    }
    vec![0.0; cols]
}

/// Ordinary least squares with a small ridge (`ridge` × identity added to XᵀX, so collinear
/// features give small weights instead of none): min Σ (x·β − y)² + ridge·|β|².
pub fn ridge_least_squares(x: &[Vec<f64>], y: &[f64], ridge: f64) -> Vec<f64> {
    let cols = x.first().map_or(0, Vec::len);
    if x.is_empty() || cols == 0 {
        return vec![0.0; cols];
    }
    let a = DMatrix::from_fn(x.len(), cols, |i, j| x[i][j]);
    let b = DVector::from_column_slice(y);
    let normal = a.transpose() * &a + DMatrix::identity(cols, cols) * ridge;
    match normal.cholesky() {
        Some(c) => c.solve(&(a.transpose() * b)).iter().copied().collect(),
        None => vec![0.0; cols],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_exact_linear_relation() {
        let x: Vec<Vec<f64>> = (1..20).map(|i| vec![i as f64, (i * i) as f64, 1.0]).collect();
        let y: Vec<f64> = x.iter().map(|r| 2.0 * r[0] + 0.5 * r[1] + 3.0).collect();
        let b = relative_least_squares(&x, &y);
        assert!((b[0] - 2.0).abs() < 1e-6 && (b[1] - 0.5).abs() < 1e-6 && (b[2] - 3.0).abs() < 1e-6, "{b:?}");
    }

    #[test]
    fn nonnegative_fit_drops_negative_terms() {
        let x: Vec<Vec<f64>> = (1..40).map(|i| vec![1.0, i as f64, (i % 3) as f64]).collect();
        let y: Vec<f64> = x.iter().map(|r| 2.0 + 0.5 * r[1] - 0.01 * r[2]).collect();
        let c = nonnegative_fit(&x, &y);
        assert!(c.iter().all(|v| *v >= 0.0) && c[2] == 0.0 && (c[1] - 0.5).abs() < 0.05, "{c:?}");
    }
}
