//! Measured operators as samples: a measurement turned into our IR, with its kernel-time
//! target. `wavecast-train` fits on them and `wavecast-eval` judges predictions against them.
//!
//! Also what the host adds around a kernel, each fact defined once: the launch gap of an
//! isolated call, the gap between back-to-back kernels, and the host floors (the fixed cost of
//! one isolated call, estimated from the fastest measurements; see [`host_floor_of_least_work`]).

use crate::physics::Family;
use std::collections::BTreeMap;
use wavecast_data::Measurement;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::Op;
use wavecast_stats::{rank_sorted, sorted, upper_median};

/// Host-side time the measurement harness adds around one kernel (seconds); see DATA.md: an
/// isolated call costs about max(floor, kernel + a few µs).
pub const LAUNCH_GAP_S: f64 = 4e-6;

/// Device-side gap between back-to-back kernels in a running model (seconds).
pub const KERNEL_GAP_S: f64 = 1.5e-6;

/// The smallest share of an isolated latency taken as kernel time, so that subtracting a fixed
/// cost a little larger than a fast call's never gives a zero or negative target.
const MIN_KERNEL_SHARE: f64 = 0.1;

/// Kernel time implied by an isolated latency once the call's fixed host cost `fixed_s` (the
/// launch gap, or a measured floor) is removed.
pub fn kernel_time(latency_s: f64, fixed_s: f64) -> f64 {
    (latency_s - fixed_s).max(latency_s * MIN_KERNEL_SHARE)
}

/// Time of one isolated call whose kernels take `kernel_s`: the kernels plus the launch gap,
/// but never below the host floor `floor_s` (DATA.md: max(floor, kernel + a few µs)).
pub fn isolated_seconds(kernel_s: f64, floor_s: f64) -> f64 {
    (kernel_s + LAUNCH_GAP_S).max(floor_s)
}

/// The host floor of `op`'s family in a predictor's per-family `floors` (0 when it has none).
pub fn family_floor(floors: &BTreeMap<Family, f64>, op: &Op) -> f64 {
    Family::of(op).and_then(|f| floors.get(&f)).copied().unwrap_or(0.0)
}

// Host floors. An isolated call never runs faster than its host (Python dispatch, library
// heuristics, launches) lets it, so the fastest measurements show that fixed cost. How to read
// it off depends on the data, hence three estimators, each named for what it takes:

/// Host floor of the learned per-op predictors' families: the upper median latency of the
/// tenth of `calls` (work, latency) with the least work. For GEMM and vector kernels the least
/// work is launch-bound, and a median over many calls is steadier than any single fast call.
/// 0 for no calls.
pub fn host_floor_of_least_work(calls: &[(f64, f64)]) -> f64 {
    let mut by_work = calls.to_vec();
    by_work.sort_by(|a, b| a.0.total_cmp(&b.0));
    let tenth = (by_work.len() / 10).max(1).min(by_work.len());
    let latencies: Vec<f64> = by_work[..tenth].iter().map(|c| c.1).collect();
    upper_median(&latencies)
}

/// Host floor of convolutions: the fastest call. Ranking by work would not do there: a tiny
/// convolution can still take a slow cuDNN path (the least-work tenth has a median latency of
/// 0.5 ms, against 0.07–0.11 ms for the fastest calls). 0 for no calls.
pub fn host_floor_fastest(latencies: &[f64]) -> f64 {
    if latencies.is_empty() {
        return 0.0;
    }
    latencies.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Host floor of runtime-based scaling (`eval pairs`): the 1st percentile of the latencies
/// (rank ⌊n/100⌋), close to the fastest calls with a little room for an outlier that the
/// minimum would take; it needs no work measure, so it serves every op class alike. 0 for no
/// calls.
pub fn host_floor_percentile(latencies: &[f64]) -> f64 {
    rank_sorted(&sorted(latencies), 0.01).unwrap_or(0.0)
}

#[derive(Debug, Clone)]
pub struct Sample {
    pub op: Op,
    pub family: Family,
    pub gpu: Gpu,
    /// Isolated latency as measured (seconds).
    pub latency_s: f64,
    /// Main kernel name and grid, when recorded.
    pub kernel: Option<String>,
    pub grid_blocks: Option<f64>,
    /// Measured on a shape taken from a real model (NeuSight's `ops/test`) rather than a random
    /// microbenchmark shape (`ops/train`).
    pub model_shaped: bool,
}

impl Sample {
    pub fn from_measurement(m: &Measurement, catalog: &Catalog) -> Option<Sample> {
        let op = m.to_op()?;
        let family = Family::from_measurement_class(m.class_name())?;
        let gpu = catalog.get(&m.gpu).ok()?.clone();
        Some(Sample {
            op,
            family,
            gpu,
            latency_s: m.latency_ms / 1e3,
            kernel: m.main_kernel.as_ref().map(|k| k.name.clone()),
            grid_blocks: m.main_kernel.as_ref().and_then(|k| k.blocks()).map(|b| b as f64),
            model_shaped: false,
        })
    }

    /// Kernel time implied by the isolated latency.
    pub fn kernel_s(&self) -> f64 {
        kernel_time(self.latency_s, LAUNCH_GAP_S)
    }
}

pub fn samples(rows: &[Measurement], catalog: &Catalog) -> Vec<Sample> {
    rows.iter().filter_map(|m| Sample::from_measurement(m, catalog)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_floors_are_total_on_empty_input() {
        assert_eq!(host_floor_of_least_work(&[]), 0.0);
        assert_eq!(host_floor_fastest(&[]), 0.0);
        assert_eq!(host_floor_percentile(&[]), 0.0);
    }

    #[test]
    fn host_floors_read_the_fast_end_each_their_own_way() {
        // Work 0..20, latency falling with work: the least-work tenth are the two slowest calls
        // (100 and 99), of which the upper median is taken.
        let calls: Vec<(f64, f64)> = (0..20).map(|i| (i as f64, 100.0 - i as f64)).collect();
        assert_eq!(host_floor_of_least_work(&calls), 100.0);
        let latencies: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(host_floor_fastest(&latencies), 1.0);
        assert_eq!(host_floor_percentile(&latencies), 3.0);
    }

    #[test]
    fn isolated_time_is_the_kernel_plus_the_gap_above_the_floor() {
        assert_eq!(isolated_seconds(1e-3, 5e-5), 1e-3 + LAUNCH_GAP_S);
        assert_eq!(isolated_seconds(1e-6, 5e-5), 5e-5);
        assert_eq!(kernel_time(1e-3, 1e-4), 1e-3 - 1e-4);
        assert_eq!(kernel_time(1e-5, 1e-4), 1e-5 * MIN_KERNEL_SHARE);
    }
}
