//! The transfer between two GPUs of one architecture: a measured GPU's time for a shape times
//! roofline(destination) / roofline(source) — the ratio of datasheet peak and bandwidth for that
//! shape's work. Within an architecture the kernels' efficiencies carry over, and every richer
//! ratio tried did worse on GPUs left out (`wavecast eval ops --predictor ladder`, mean family
//! APE with GB200 priced from B200): the physics model's ratio 16.4 %, that ratio with a ridge
//! correction on the two GPUs' figures 20.3 % (fitted on the few same-architecture pairs, it
//! learned B200 against the GDDR7 RTX PRO 6000), the roofline ratio 11.7 %.

use crate::sustained::{peak_flops, Work};
use wavecast_data::{Precision, Shape};
use wavecast_gpu::Gpu;

/// roofline(to) / roofline(from) for `shape` in `precision`: the datasheet figures' ratio, the
/// base every transfer scales a measured time by (`None` where either GPU cannot run it).
pub fn roofline_ratio(shape: &Shape, precision: Precision, from: &Gpu, to: &Gpu) -> Option<f64> {
    let roofline = |g: &Gpu| Work::of(shape, precision, g).ok().map(|w| w.roofline_seconds()).filter(|s| *s > 0.0 && s.is_finite());
    Some(roofline(to)? / roofline(from)?)
}

/// How unlike `a` is to `b` for work in `precision` (0: the same figures): another
/// architecture counts as much as an e-fold in peak or bandwidth.
pub fn similarity(a: &Gpu, b: &Gpu, precision: Precision) -> f64 {
    let peak = |g: &Gpu| peak_flops(g, precision).unwrap_or(g.peak_tflops.fp32 * 1e12);
    let arch = if a.architecture == b.architecture { 0.0 } else { 1.0 };
    arch + (peak(a) / peak(b)).ln().abs() + (a.bandwidth() / b.bandwidth()).ln().abs() + 0.5 * (f64::from(a.sm_count) / f64::from(b.sm_count)).ln().abs()
}
