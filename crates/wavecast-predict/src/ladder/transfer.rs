//! The transfer ratio between two GPUs: physics(destination) / physics(source) for the same
//! shape, times exp(correction), where the correction is a ridge regression per kernel family
//! on what the physics leaves out — the two GPUs' published figures (per-format peak, SMs,
//! clocks, bandwidth, L2, board power) as log ratios and where the op sits on each (its physics
//! time, its compute share). It is fitted on every ordered pair of measured GPUs over the shapes
//! both measured: n GPUs give n(n−1) pairs. A GPU left out builds no table, so it is in no pair.

use super::tables::{Family, Tables};
use super::Query;
use crate::sustained::{peak_flops, Model, Work};
use nalgebra::{DMatrix, DVector};
use std::collections::BTreeMap;
use wavecast_data::{Precision, Shape, Timing};
use wavecast_gpu::{Catalog, Gpu};

/// Features of one (source, destination, shape) triple.
const FEATURES: usize = 9;

/// Ridge penalty on the standardized features: with few GPUs, GPU-level figures can tell
/// pairs apart perfectly, so the fit must prefer small corrections.
const RIDGE: f64 = 3.0;

/// Largest correction applied, as a factor either way: the physics ratio stays in charge.
const MAX_CORRECTION: f64 = 1.5;

/// Shapes per (pair, family) used in the fit (an even stride through them).
const MAX_SHAPES_PER_PAIR: usize = 200;

/// How unlike `a` is to `b` for work in `precision` (0: the same figures): another
/// architecture counts as much as an e-fold in peak or bandwidth.
pub fn similarity(a: &Gpu, b: &Gpu, precision: Precision) -> f64 {
    let peak = |g: &Gpu| peak_flops(g, precision).unwrap_or(g.peak_tflops.fp32 * 1e12);
    let arch = if a.architecture == b.architecture { 0.0 } else { 1.0 };
    arch + (peak(a) / peak(b)).ln().abs() + (a.bandwidth() / b.bandwidth()).ln().abs() + 0.5 * (f64::from(a.sm_count) / f64::from(b.sm_count)).ln().abs()
}

/// One family's fit: feature rows, targets, and the GPU pairs they came from.
type Samples = (Vec<Vec<f64>>, Vec<f64>, usize);

/// Per measured shape (its coordinates' bits), the fastest time and the shape.
type Fastest = BTreeMap<Vec<u64>, (f64, Shape)>;

/// Ridge weights per family name (`gemm`, `attention_decode`, …), on standardized features.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TransferModel {
    families: BTreeMap<String, Fitted>,
}

#[derive(Debug, Clone, PartialEq)]
struct Fitted {
    mean: Vec<f64>,
    scale: Vec<f64>,
    weights: Vec<f64>,
    intercept: f64,
    pairs: usize,
}

fn features(shape: &Shape, q: &Query, from: &Gpu, to: &Gpu, model: &Model) -> Option<Vec<f64>> {
    let timing = |g: &Gpu| Timing { source: q.source, gpu: g.id.clone(), shape: shape.clone(), precision: q.precision, kernel_source: q.library.clone().unwrap_or_default(), latency_ms: 0.0, provenance: String::new() };
    let physics = |g: &Gpu| model.predict(&timing(g), g).ok().filter(|s| s.is_finite() && *s > 0.0);
    let (there, here) = (physics(from)?, physics(to)?);
    let compute_share = |g: &Gpu| match Work::of(shape, q.precision, g).ok()? {
        Work::Kernel(k) => {
            let tc = k.flops / k.peak_flops.unwrap_or(f64::INFINITY);
            let tm = k.bytes / k.bandwidth;
            Some(tc / (tc + tm).max(f64::MIN_POSITIVE))
        }
        _ => Some(0.0),
    };
    let ratio = |f: fn(&Gpu) -> f64| (f(to) / f(from)).ln();
    let peak = |g: &Gpu| peak_flops(g, q.precision).unwrap_or(g.peak_tflops.fp32 * 1e12);
    Some(vec![
        (peak(to) / peak(from)).ln(),
        ratio(|g| g.bandwidth()),
        ratio(|g| f64::from(g.sm_count)),
        ratio(|g| g.boost_clock_mhz),
        ratio(|g| g.l2_cache_mb.max(1.0)),
        ratio(|g| g.tdp_w),
        (here * 1e6).ln(),
        compute_share(to)?,
        (here / there).ln(),
    ])
}

impl TransferModel {
    /// ln of the factor the physics ratio is multiplied by for `q` from `from` to `to`.
    pub fn correction(&self, q: &Query, from: &Gpu, to: &Gpu, model: &Model) -> f64 {
        let Some(f) = self.families.get(Family::of(q.source, &q.shape, q.precision).name()) else { return 0.0 };
        let Some(x) = features(&q.shape, q, from, to, model) else { return 0.0 };
        let y = f.intercept + x.iter().zip(&f.mean).zip(&f.scale).zip(&f.weights).map(|(((x, m), s), w)| (x - m) / s * w).sum::<f64>();
        y.clamp(-MAX_CORRECTION.ln(), MAX_CORRECTION.ln())
    }

    /// Fitted on every ordered pair of GPUs in `tables` over the shapes both measured.
    pub fn fit(tables: &Tables, model: &Model, catalog: &Catalog) -> TransferModel {
        let mut samples: BTreeMap<String, Samples> = BTreeMap::new();
        for family in tables.families() {
            let measured: Vec<(&Gpu, Fastest)> = tables.measured(family).filter_map(|(id, libs)| Some((catalog.get(id).ok()?, fastest(libs)))).collect();
            for (from, there) in &measured {
                for (to, here) in &measured {
                    if from.id == to.id {
                        continue;
                    }
                    let shared: Vec<(&Vec<u64>, &(f64, Shape))> = here.iter().filter(|(k, _)| there.contains_key(*k)).collect();
                    let step = shared.len().div_ceil(MAX_SHAPES_PER_PAIR).max(1);
                    let q = Query { source: family.source, shape: Shape::Gemm { m: 1, n: 1, k: 1 }, precision: family.precision, library: None };
                    let entry = samples.entry(family.name().to_string()).or_default();
                    let before = entry.0.len();
                    for (key, (seconds_here, shape)) in shared.into_iter().step_by(step) {
                        let Some(x) = features(shape, &Query { shape: shape.clone(), ..q.clone() }, from, to, model) else { continue };
                        let seconds_there = there[key].0;
                        // What the physics ratio misses.
                        entry.1.push((seconds_here / seconds_there).ln() - x[FEATURES - 1]);
                        entry.0.push(x);
                    }
                    entry.2 += usize::from(entry.0.len() > before);
                }
            }
        }
        let families = samples.into_iter().filter_map(|(name, (x, y, pairs))| Some((name, ridge(&x, &y, pairs)?))).collect();
        TransferModel { families }
    }

    /// Family names with a fitted correction, and the GPU pairs each learned from.
    pub fn fitted(&self) -> impl Iterator<Item = (&str, usize)> {
        self.families.iter().map(|(k, f)| (k.as_str(), f.pairs))
    }
}

/// Per measured shape (its sizes as the table's coordinates), the fastest library's time.
fn fastest(libraries: &BTreeMap<String, super::Table>) -> Fastest {
    let mut out: Fastest = BTreeMap::new();
    for p in libraries.values().flat_map(|t| &t.points) {
        let slot = out.entry(super::tables::key(&p.at)).or_insert((p.seconds, p.shape.clone()));
        if p.seconds < slot.0 {
            *slot = (p.seconds, p.shape.clone());
        }
    }
    out
}

/// Ridge regression on standardized features; `None` with too few samples or pairs to learn
/// anything a new GPU could use.
fn ridge(x: &[Vec<f64>], y: &[f64], pairs: usize) -> Option<Fitted> {
    if x.len() < 20 || pairs < 2 {
        return None;
    }
    let n = x.len() as f64;
    let mean: Vec<f64> = (0..FEATURES).map(|j| x.iter().map(|r| r[j]).sum::<f64>() / n).collect();
    let scale: Vec<f64> = (0..FEATURES).map(|j| (x.iter().map(|r| (r[j] - mean[j]).powi(2)).sum::<f64>() / n).sqrt().max(1e-9)).collect();
    let intercept = y.iter().sum::<f64>() / n;
    let a = DMatrix::from_fn(x.len(), FEATURES, |i, j| (x[i][j] - mean[j]) / scale[j]);
    let b = DVector::from_iterator(y.len(), y.iter().map(|v| v - intercept));
    let lhs = a.transpose() * &a + DMatrix::identity(FEATURES, FEATURES) * (RIDGE * n / 100.0);
    let w = lhs.lu().solve(&(a.transpose() * b))?;
    let weights: Vec<f64> = w.iter().copied().collect();
    weights.iter().all(|v| v.is_finite()).then_some(Fitted { mean, scale, weights, intercept, pairs })
}
