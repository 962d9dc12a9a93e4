//! Fitting the convolution model (`wavecast_predict::conv`): per-GPU offsets over mid-sized
//! convolutions, an MLP on the rest of ln(kernel time / bound), the all-GPU model and one per
//! left-out GPU with the interval their errors give.

use crate::logo::leave_one_gpu_out;
use crate::mlp::{compact, train as train_mlp, TrainConfig};
use std::collections::BTreeMap;
use wavecast_predict::calibration::{arch_key, group_offsets};
use wavecast_predict::conv::{bound, default_interval, features, ConvModel, ConvSample, ConvWeights};
use wavecast_predict::mlp::Rng;
use wavecast_predict::sample::host_floor_fastest;
use wavecast_stats::{decile_interval, quantile_sorted, sorted, trimmed_mean, upper_median};

/// Rows whose latency exceeds this multiple of their GPU's floor train the kernel model.
const KERNEL_DOMINATED: f64 = 2.5;
/// Training rows kept per GPU (uniformly subsampled) to bound training time.
pub const MAX_ROWS_PER_GPU: usize = 6000;

/// Trains the all-GPU model and one per left-out GPU; the interval comes from the left-out
/// models' errors on their left-out GPU. `progress` hears which model is being trained.
pub fn train(samples: &[ConvSample], seed: u64, progress: Option<&dyn Fn(&str)>) -> Result<ConvWeights, String> {
    let models = leave_one_gpu_out(samples, |s| s.gpu.id.as_str(), true, |rows, left_out| {
        if let Some(p) = progress {
            p(&left_out.map_or("all GPUs".to_string(), |g| format!("without {g}")));
        }
        fit(rows, seed)
    })?;
    let mut residuals = Vec::new();
    for (g, model) in &models.holdout {
        residuals.extend(samples.iter().filter(|s| &s.gpu.id == g).map(|s| (s.latency_s / model.isolated_seconds(&s.conv, &s.gpu)).ln()));
    }
    let interval = if residuals.len() >= 10 {
        decile_interval(&residuals)
    } else {
        default_interval()
    };
    Ok(ConvWeights { seed, all: models.all, holdout: models.holdout, interval })
}

/// Per GPU: the isolated-call floor, the fastest convolution measured (0.07–0.11 ms: launch of
/// one or more cuDNN kernels from Python). Ranking by work would not do: a tiny convolution can
/// still take a slow cuDNN path, and the smallest tenth by work has a median latency of 0.5 ms.
fn floors(samples: &[ConvSample]) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in samples {
        by.entry(s.gpu.id.clone()).or_default().push(s.latency_s);
    }
    by.into_iter().map(|(g, v)| (g, host_floor_fastest(&v))).collect()
}

/// Fits the convolution model on `samples` (kernel-dominated rows, at most
/// [`MAX_ROWS_PER_GPU`] per GPU).
pub fn fit(samples: &[ConvSample], seed: u64) -> Result<ConvModel, String> {
    if samples.is_empty() {
        return Err("no convolution measurements to train on".into());
    }
    let floor = floors(samples);
    // Rows clearly above their GPU's floor: their latency is the kernels', not the host's
    // (cuDNN's per-call heuristics and several kernel launches).
    let mut rows: Vec<&ConvSample> = samples.iter().filter(|s| s.latency_s > KERNEL_DOMINATED * floor[&s.gpu.id]).collect();
    let mut rng = Rng::new(seed ^ 0xC0);
    rng.shuffle(&mut rows);
    let ratio = |s: &ConvSample| (s.kernel_s(floor[&s.gpu.id]) / bound(&s.conv, &s.gpu)).ln();
    // Per-GPU offsets over one fixed band of mid-sized convolutions (0.1–10 GFLOP).
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in rows.iter().filter(|s| (1e8..=1e10).contains(&(2.0 * s.conv.macs()))) {
        by.entry(s.gpu.id.clone()).or_default().push(ratio(s));
    }
    let mut per_gpu: BTreeMap<String, f64> = by.into_iter().map(|(g, v)| (g, upper_median(&v))).collect();
    let fallback = trimmed_mean(&per_gpu.values().copied().collect::<Vec<_>>());
    for s in samples {
        per_gpu.entry(s.gpu.id.clone()).or_insert(fallback);
    }
    let per_arch = group_offsets(&per_gpu, |id| samples.iter().find(|s| s.gpu.id == id).map(|s| &s.gpu), arch_key);
    // Every GPU equally represented.
    let mut kept: BTreeMap<&str, usize> = BTreeMap::new();
    rows.retain(|s| {
        let n = kept.entry(s.gpu.id.as_str()).or_default();
        *n += 1;
        *n <= MAX_ROWS_PER_GPU
    });
    let (x, y): (Vec<Vec<f32>>, Vec<f32>) = rows.iter().map(|s| (features(&s.conv, &s.gpu), (ratio(s) - per_gpu[&s.gpu.id]) as f32)).unzip();
    // Chosen on LOGO error: 64 wide/60 epochs 22.1 %, 128/100 20.3 %, 128/160 20.3 %,
    // 4 layers 20.5 %, 192 wide 21.3 % (mean of per-GPU mean APE).
    let cfg = TrainConfig { seed, epochs: 100, hidden: 128, depth: 3, ..TrainConfig::default() };
    let mut mlp = train_mlp(&x, &y, cfg, None)?;
    compact(&mut mlp);
    let targets = sorted(&y.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
    let pick = |q: f64| quantile_sorted(&targets, q).unwrap_or(0.0);
    let mut trained_on: Vec<String> = per_gpu.keys().cloned().collect();
    trained_on.sort();
    Ok(ConvModel {
        mlp,
        output_range: [pick(0.005), pick(0.995)],
        default_offset: trimmed_mean(&per_gpu.values().copied().collect::<Vec<_>>()),
        per_gpu,
        per_arch,
        floor_s: upper_median(&floor.values().copied().collect::<Vec<_>>()),
        floors: floor,
        trained_on,
    })
}

