//! Convolution accuracy, leave one GPU out: each GPU's measured forward convolutions
//! (NeuSight's `ops/train/conv/*.csv`) predicted by the convolution model trained without that
//! GPU, beside a Li et al.-style linear baseline fitted on the other GPUs the same way and the
//! plain roofline. The in-sample model (trained on every GPU) is shown last, for reference.

use crate::EvalError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use wavecast_data::load_neusight_dir;
use wavecast_gpu::Catalog;
use wavecast_predict::conv::{conv_samples, roofline_terms, ConvSample, ConvWeights};
use wavecast_predict::sample::isolated_seconds;
use wavecast_stats::fit::relative_least_squares;
use wavecast_stats::{ape, mean, quantile_sorted, sorted, Summary};

/// The methods compared, in report order.
pub const METHODS: [&str; 4] = ["conv model (LOGO)", "li-style linear (LOGO)", "roofline", "conv model (all GPUs, in-sample)"];

/// One method's errors (percent) on one GPU, or its per-GPU figures averaged over the GPUs.
#[derive(Debug, Serialize)]
pub struct MethodStats {
    pub method: &'static str,
    #[serde(flatten)]
    pub stats: Summary,
    pub p90_ape: f64,
}

/// Every method on one GPU's rows.
#[derive(Debug, Serialize)]
pub struct GpuReport {
    pub gpu: String,
    /// Rows of this GPU; every method is judged on all of them.
    pub rows: usize,
    pub methods: Vec<MethodStats>,
}

/// What `wavecast eval conv` reports.
#[derive(Debug, Serialize)]
pub struct EvalConv {
    pub data: String,
    pub seed: u64,
    pub retrained: bool,
    pub per_gpu: Vec<GpuReport>,
    /// Mean over the GPUs of each method's per-GPU mean, median and p90 APE (`max_ape`: the
    /// worst GPU's mean APE).
    pub overall: Vec<MethodStats>,
}

/// The forward convolutions measured under `data`'s `ops/train/conv`, and a one-line summary
/// of what was read.
pub fn load_samples(data: &Path, catalog: &Catalog) -> Result<(Vec<ConvSample>, String), EvalError> {
    let dir = data.join("ops/train/conv");
    if !dir.is_dir() {
        return Err(format!("{} is not a directory (expected NeuSight's ops/train/conv)", dir.display()).into());
    }
    let loaded = load_neusight_dir(&dir, catalog)?;
    let samples = conv_samples(&loaded.rows, catalog);
    if samples.is_empty() {
        return Err(format!("no convolution rows under {}", dir.display()).into());
    }
    Ok((samples, format!("{}: {}", dir.display(), loaded.summary())))
}

/// Li et al.'s transfer form t = α·FLOPs/peak + β·bytes/bandwidth + γ, fitted by relative
/// least squares on the training GPUs' rows.
pub fn fit_linear(train: &[&ConvSample]) -> [f64; 3] {
    let (x, y): (Vec<Vec<f64>>, Vec<f64>) = train.iter().map(|s| (linear_terms(s).to_vec(), s.latency_s)).unzip();
    let b = relative_least_squares(&x, &y);
    [b[0], b[1], b[2]]
}

fn linear_terms(s: &ConvSample) -> [f64; 3] {
    let (compute, memory) = roofline_terms(&s.conv, &s.gpu);
    [compute, memory, 1.0]
}

fn linear_seconds(s: &ConvSample, coefficients: [f64; 3]) -> f64 {
    linear_terms(s).iter().zip(coefficients).map(|(t, c)| t * c).sum::<f64>().max(1e-7)
}

/// The plain roofline as an isolated call: its kernel time plus the launch gap (no host floor).
fn roofline_seconds(s: &ConvSample) -> f64 {
    let (compute, memory) = roofline_terms(&s.conv, &s.gpu);
    isolated_seconds(compute.max(memory), 0.0)
}

fn method_stats(method: &'static str, apes: &[f64]) -> MethodStats {
    MethodStats { method, stats: Summary::of(apes), p90_ape: quantile_sorted(&sorted(apes), 0.9).unwrap_or(0.0) }
}

/// Every method's errors on `gpu`'s rows, each model blind to `gpu` except the in-sample one.
fn gpu_report(samples: &[ConvSample], weights: &ConvWeights, gpu: &str) -> Result<GpuReport, EvalError> {
    let test: Vec<&ConvSample> = samples.iter().filter(|s| s.gpu.id == gpu).collect();
    let train: Vec<&ConvSample> = samples.iter().filter(|s| s.gpu.id != gpu).collect();
    let held = weights.holdout.get(gpu).ok_or_else(|| format!("the conv weights have no model trained without {gpu}"))?;
    let linear = fit_linear(&train);
    let errors = |seconds: &dyn Fn(&ConvSample) -> f64| test.iter().map(|s| ape(seconds(s), s.latency_s)).collect::<Vec<f64>>();
    let apes: [Vec<f64>; 4] = [
        errors(&|s| held.isolated_seconds(&s.conv, &s.gpu)),
        errors(&|s| linear_seconds(s, linear)),
        errors(&roofline_seconds),
        errors(&|s| weights.all.isolated_seconds(&s.conv, &s.gpu)),
    ];
    let methods = METHODS.iter().zip(&apes).map(|(name, v)| method_stats(name, v)).collect();
    Ok(GpuReport { gpu: gpu.to_string(), rows: test.len(), methods })
}

/// Each method's per-GPU figures averaged over the GPUs.
fn overall(per_gpu: &[GpuReport]) -> Vec<MethodStats> {
    let mut by: BTreeMap<&'static str, [Vec<f64>; 3]> = BTreeMap::new();
    for m in per_gpu.iter().flat_map(|g| &g.methods) {
        let e = by.entry(m.method).or_default();
        e[0].push(m.stats.mean_ape);
        e[1].push(m.stats.median_ape);
        e[2].push(m.p90_ape);
    }
    METHODS
        .iter()
        .filter_map(|name| {
            by.get(name).map(|[means, medians, p90s]| MethodStats {
                method: name,
                stats: Summary { n: per_gpu.len() as u32, mean_ape: mean(means), median_ape: mean(medians), max_ape: means.iter().copied().fold(0.0, f64::max) },
                p90_ape: mean(p90s),
            })
        })
        .collect()
}

/// Leave-one-GPU-out accuracy of `weights` (the shipped ones, or `retrained`) on `samples`.
pub fn evaluate(data: &Path, samples: &[ConvSample], weights: &ConvWeights, retrained: bool) -> Result<EvalConv, EvalError> {
    let mut gpus: Vec<&str> = samples.iter().map(|s| s.gpu.id.as_str()).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let per_gpu = gpus.iter().map(|g| gpu_report(samples, weights, g)).collect::<Result<Vec<_>, _>>()?;
    Ok(EvalConv { data: data.display().to_string(), seed: weights.seed, retrained, overall: overall(&per_gpu), per_gpu })
}
