//! The statistics every wavecast stage uses, in one place. Each function is total: an empty
//! input gives 0 (or `None` where a caller must tell "no data" apart), never a panic, and
//! non-finite values sort with `f64::total_cmp` instead of breaking the order.

pub mod fit;

use serde::Serialize;

/// Absolute percentage error of `predicted` against `measured`, in percent.
pub fn ape(predicted: f64, measured: f64) -> f64 {
    100.0 * (predicted - measured).abs() / measured
}

/// Arithmetic mean; 0 for no values.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// A sorted copy of `values`.
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Median (the mean of the two middle values for an even count); 0 for no values.
pub fn median(values: &[f64]) -> f64 {
    median_of_sorted(&sorted(values))
}

fn median_of_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The value at rank ⌊(n − 1)·p⌋ of `sorted_values` (no interpolation), `p` clamped to [0, 1];
/// `None` for no values.
pub fn quantile_sorted(sorted_values: &[f64], p: f64) -> Option<f64> {
    let last = sorted_values.len().checked_sub(1)?;
    let rank = (last as f64 * p.clamp(0.0, 1.0)) as usize;
    sorted_values.get(rank.min(last)).copied()
}

/// The `p` quantile of `sorted_values` interpolated linearly between the two values around
/// rank (n − 1)·p (numpy's default), `p` clamped to [0, 1]; `None` for no values. A latency
/// percentile of a few requests then lies between them instead of on the smaller one, so a
/// p99 is never below the mean.
pub fn quantile_interpolated(sorted_values: &[f64], p: f64) -> Option<f64> {
    let last = sorted_values.len().checked_sub(1)?;
    let rank = last as f64 * p.clamp(0.0, 1.0);
    let (lo, hi) = (rank.floor() as usize, (rank.ceil() as usize).min(last));
    let t = rank - lo as f64;
    Some(sorted_values[lo] + t * (sorted_values[hi] - sorted_values[lo]))
}

/// The value at index ⌊n·p⌋ of `sorted_values` (the upper middle for p = ½), `None` for no
/// values. Kept apart from [`quantile_sorted`] because published figures were made with it.
pub fn rank_sorted(sorted_values: &[f64], p: f64) -> Option<f64> {
    let last = sorted_values.len().checked_sub(1)?;
    let rank = (sorted_values.len() as f64 * p.clamp(0.0, 1.0)) as usize;
    sorted_values.get(rank.min(last)).copied()
}

/// The upper middle value (index ⌊n/2⌋ of the sorted values, no averaging): the median the
/// shipped weights were fitted with; 0 for no values.
pub fn upper_median(values: &[f64]) -> f64 {
    rank_sorted(&sorted(values), 0.5).unwrap_or(0.0)
}

/// The 10th and 90th percentiles ([`quantile_sorted`]): the interval given around a prediction
/// from its model's residuals; zeros for no values.
pub fn decile_interval(values: &[f64]) -> [f64; 2] {
    let v = sorted(values);
    let q = |p: f64| quantile_sorted(&v, p).unwrap_or(0.0);
    [q(0.1), q(0.9)]
}

/// Mean without the single lowest and highest value (when there are at least three): robust
/// to one outlier on either side with few values; 0 for no values.
pub fn trimmed_mean(values: &[f64]) -> f64 {
    let v = sorted(values);
    let kept = if v.len() >= 3 { &v[1..v.len() - 1] } else { &v[..] };
    mean(kept)
}

/// Count, mean, median and maximum of a set of errors (percent), as reports print them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: u32,
    pub mean_ape: f64,
    pub median_ape: f64,
    pub max_ape: f64,
}

impl Summary {
    /// The summary of `apes`; all zeros for none.
    pub fn of(apes: &[f64]) -> Summary {
        let v = sorted(apes);
        Summary { n: v.len() as u32, mean_ape: mean(&v), median_ape: median_of_sorted(&v), max_ape: v.last().copied().unwrap_or(0.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_gives_zero_or_none_never_a_panic() {
        assert_eq!(mean(&[]), 0.0);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(trimmed_mean(&[]), 0.0);
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(rank_sorted(&[], 0.5), None);
        assert_eq!(upper_median(&[]), 0.0);
        assert_eq!(decile_interval(&[]), [0.0, 0.0]);
        assert_eq!(Summary::of(&[]), Summary { n: 0, mean_ape: 0.0, median_ape: 0.0, max_ape: 0.0 });
    }

    #[test]
    fn median_averages_the_middle_pair_and_ranks_do_not() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        let v = sorted(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(rank_sorted(&v, 0.5), Some(3.0));
        assert_eq!(quantile_sorted(&v, 0.5), Some(2.0));
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(4.0));
        assert_eq!(quantile_sorted(&v, 7.0), Some(4.0));
    }

    #[test]
    fn trimmed_mean_drops_both_tails() {
        assert_eq!(trimmed_mean(&[-1000.0, 1.0, 2.0, 3.0, 1000.0]), 2.0);
        assert_eq!(trimmed_mean(&[5.0, 7.0]), 6.0);
    }

    #[test]
    fn ape_and_summary() {
        assert_eq!(ape(110.0, 100.0), 10.0);
        assert_eq!(ape(90.0, 100.0), 10.0);
        let s = Summary::of(&[10.0, 30.0, 20.0]);
        assert_eq!((s.n, s.mean_ape, s.median_ape, s.max_ape), (3, 20.0, 20.0, 30.0));
    }
}
