//! Convolution kernel time: physics first, a learned correction for what cuDNN's algorithm
//! choice leaves out.
//!
//! t = t_bound · exp(offset_gpu + f(shape)), with t_bound = ramp + max(2·MACs / peak,
//! bytes / bandwidth) and f a
//! small MLP of unit-free shape features (the convolution's own dimensions, its implicit-GEMM
//! view M = N·H_out·W_out, N = C_out, K = C_in/groups·kh·kw, channel alignment) plus two physics
//! features that place the op on the GPU's roofline (the bound in µs and compute time over
//! memory time). GPU names and figures are not inputs, so an unmeasured GPU is predicted through
//! its physics; its offset is the mean of the measured GPUs of its architecture, or of all.
//!
//! Trained on NeuSight's forward-convolution measurements (FP32, four GPUs, cuDNN 8.9) by
//! `wavecast eval conv --retrain FILE`; the shipped weights (`data/weights/conv.json`) hold the
//! all-GPU model and one model per left-out GPU. Backward passes (data and weight gradient) have
//! the forward's MACs and bytes and are priced with the same model; a transposed convolution is
//! priced as the convolution whose data gradient it is.

use crate::calibration::{arch_key, group_offsets, trimmed_mean};
use crate::mlp::{Mlp, Rng, TrainConfig};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_data::{Measurement, OpShape};
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::ops::{Conv, ConvPass};
use wavecast_ir::OpClass;

/// Fixed ramp-up and drain of the kernels of one convolution (seconds).
const RAMP_S: f64 = 2e-6;
/// Largest reduction of multiplications a fast convolution algorithm achieves over the direct one.
const WINOGRAD_MAX_SAVING: f64 = 4.0;
/// Rows whose latency exceeds this multiple of their GPU's floor train the kernel model.
const KERNEL_DOMINATED: f64 = 2.5;
/// Training rows kept per GPU (uniformly subsampled) to bound training time.
const MAX_ROWS_PER_GPU: usize = 6000;

/// One measured forward convolution.
#[derive(Debug, Clone)]
pub struct ConvSample {
    pub conv: Conv,
    pub gpu: Gpu,
    /// Isolated latency as measured (seconds).
    pub latency_s: f64,
}

impl ConvSample {
    /// Kernel time implied by the isolated latency: the call's fixed cost on its GPU (the
    /// fastest convolution measured there: Python dispatch, cuDNN's per-call work and launches of
    /// several kernels, 0.07–0.11 ms) removed. Only rows well above it are used.
    pub fn kernel_s(&self, floor_s: f64) -> f64 {
        (self.latency_s - floor_s).max(self.latency_s * 0.1)
    }
}

/// The forward convolution an op is priced as: a transposed convolution (c_in → c_out, input s)
/// computes the data gradient of the convolution c_out → c_in whose output is s.
pub fn canonical(c: &Conv) -> Conv {
    if !c.transposed {
        return Conv { pass: ConvPass::Forward, ..c.clone() };
    }
    let [h, w] = c.out_hw();
    Conv {
        c_in: c.c_out,
        c_out: c.c_in,
        in_hw: [h, w],
        transposed: false,
        output_padding: [0, 0],
        pass: ConvPass::Forward,
        ..c.clone()
    }
}

/// Peak FLOP/s of a convolution: the spec figure. (Unlike GEMMs, the measured convolutions of
/// the power-capped boards, P4 and T4, sit as far from their spec roofline as those of the
/// full-power ones: applying the GEMM predictors' sustained-clock prior would split the GPUs'
/// calibration offsets into two groups, ~0.15 and ~0.8, and mispredict a held-out GPU.)
fn sustained_peak(c: &Conv, gpu: &Gpu) -> f64 {
    gpu.peak_flops(OpClass::Conv, c.dtype)
}

/// (compute seconds, memory seconds) at the sustained peak and full bandwidth.
fn roofline_terms(c: &Conv, gpu: &Gpu) -> (f64, f64) {
    (2.0 * c.macs() / sustained_peak(c, gpu), c.bytes() / gpu.bandwidth())
}

/// The physical bound of a convolution (seconds).
pub fn bound(c: &Conv, gpu: &Gpu) -> f64 {
    let (tc, tm) = roofline_terms(c, gpu);
    RAMP_S + tc.max(tm)
}

fn log2(v: f64) -> f32 {
    v.max(1e-30).log2() as f32
}

/// Features of the (canonical) convolution on `gpu`.
pub fn features(c: &Conv, gpu: &Gpu) -> Vec<f32> {
    let c = canonical(c);
    let [oh, ow] = c.out_hw();
    let geo = |a: u64, b: u64| ((a as f64) * (b as f64)).sqrt();
    let per_group = (c.c_in / c.groups.max(1)) as f64;
    let k = geo(c.kernel[0], c.kernel[1]);
    let gemm_m = c.batch as f64 * oh as f64 * ow as f64;
    let gemm_k = per_group * k * k;
    let align = |d: u64| d.trailing_zeros().min(6) as f32;
    let (tc, tm) = roofline_terms(&c, gpu);
    vec![
        log2(c.batch as f64),
        log2(per_group),
        log2(c.c_out as f64),
        log2(k),
        log2(geo(c.in_hw[0], c.in_hw[1])),
        log2(geo(oh, ow)),
        log2(geo(c.stride[0], c.stride[1])),
        log2(1.0 + (c.pads[0] + c.pads[2]) as f64 / 2.0),
        log2(gemm_m),
        log2(gemm_k),
        log2(c.macs() / c.bytes().max(1.0)),
        align(c.c_in / c.groups.max(1)),
        align(c.c_out),
        log2((tc.max(tm) + RAMP_S) * 1e6),
        log2(tc / tm.max(1e-30)),
    ]
}

/// A trained convolution model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvModel {
    pub mlp: Mlp,
    /// The learned log-ratio is clipped to what training saw (0.5 % and 99.5 % quantiles).
    pub output_range: [f64; 2],
    /// ln(measured / bound) of each measured GPU's mid-sized convolutions.
    pub per_gpu: BTreeMap<String, f64>,
    /// Mean offset per architecture and power class.
    pub per_arch: BTreeMap<String, f64>,
    /// What a GPU of an unmeasured architecture gets.
    pub default_offset: f64,
    /// Fixed cost of one isolated call per measured GPU (seconds): its fastest convolution.
    pub floors: BTreeMap<String, f64>,
    /// What other GPUs get: the median of `floors`.
    pub floor_s: f64,
    pub trained_on: Vec<String>,
}

/// What `data/weights/conv.json` holds: the model trained on every GPU and one per left-out GPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConvWeights {
    pub seed: u64,
    pub all: ConvModel,
    #[serde(default)]
    pub holdout: BTreeMap<String, ConvModel>,
    /// 10 % and 90 % quantiles of ln(measured / predicted) of the left-out models on their
    /// left-out GPU: the prediction interval.
    #[serde(default = "default_interval")]
    pub interval: [f64; 2],
}

fn default_interval() -> [f64; 2] {
    [-0.3, 0.3]
}

/// Forward convolutions of the measurements (NeuSight's `conv` rows; bias on, as `nn.Conv2d`).
pub fn conv_samples(rows: &[Measurement], catalog: &Catalog) -> Vec<ConvSample> {
    rows.iter()
        .filter_map(|m| {
            let OpShape::Conv2d { batch, c_in, c_out, kernel, size, stride, padding } = m.shape else { return None };
            let conv = Conv::square(batch, c_in, c_out, size, kernel, stride, padding, m.dtype).ok()?;
            let gpu = catalog.get(&m.gpu).ok()?.clone();
            Some(ConvSample { conv, gpu, latency_s: m.latency_ms / 1e3 })
        })
        .collect()
}

const SHIPPED: &str = include_str!("../../../data/weights/conv.json");

/// The shipped all-GPU model and interval only: skipping the left-out models keeps start-up fast.
#[derive(Deserialize)]
struct AllOnly {
    all: ConvModel,
    #[serde(default = "default_interval")]
    interval: [f64; 2],
}

impl ConvWeights {
    /// The weights shipped in the binary.
    pub fn shipped() -> Result<ConvWeights, String> {
        serde_json::from_str(SHIPPED).map_err(|e| format!("data/weights/conv.json: {e}"))
    }

    /// The shipped model trained without `holdout` (or on every GPU) and the interval.
    pub fn shipped_model(holdout: Option<&str>) -> Result<(ConvModel, [f64; 2]), String> {
        match holdout {
            Some(g) => {
                let w = ConvWeights::shipped()?;
                Ok((w.model(Some(g)).clone(), w.interval))
            }
            None => {
                let a: AllOnly = serde_json::from_str(SHIPPED).map_err(|e| format!("data/weights/conv.json: {e}"))?;
                Ok((a.all, a.interval))
            }
        }
    }

    /// The model trained without `holdout`'s measurements when there is one, else the all-GPU one.
    pub fn model(&self, holdout: Option<&str>) -> &ConvModel {
        holdout.and_then(|g| self.holdout.get(g)).unwrap_or(&self.all)
    }

    /// Trains the all-GPU model and one per left-out GPU; the interval comes from the left-out
    /// models' errors on their left-out GPU.
    pub fn train(samples: &[ConvSample], seed: u64, progress: Option<&dyn Fn(&str)>) -> Result<ConvWeights, String> {
        let say = |m: &str| {
            if let Some(p) = progress {
                p(m)
            }
        };
        say("all GPUs");
        let all = ConvModel::fit(samples, seed)?;
        let mut holdout = BTreeMap::new();
        let mut residuals = Vec::new();
        for g in &all.trained_on {
            say(&format!("without {g}"));
            let rest: Vec<ConvSample> = samples.iter().filter(|s| &s.gpu.id != g).cloned().collect();
            let model = ConvModel::fit(&rest, seed)?;
            residuals.extend(samples.iter().filter(|s| &s.gpu.id == g).map(|s| (s.latency_s / model.isolated_seconds(&s.conv, &s.gpu)).ln()));
            holdout.insert(g.clone(), model);
        }
        residuals.sort_by(f64::total_cmp);
        let interval = if residuals.len() >= 10 {
            let q = |p: f64| residuals[((residuals.len() - 1) as f64 * p) as usize];
            [q(0.1), q(0.9)]
        } else {
            default_interval()
        };
        Ok(ConvWeights { seed, all, holdout, interval })
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        0.0
    } else {
        v[v.len() / 2]
    }
}

/// Per GPU: the isolated-call floor, the fastest convolution measured (0.07–0.11 ms: launch of
/// one or more cuDNN kernels from Python). Ranking by work would not do: a tiny convolution can
/// still take a slow cuDNN path, and the smallest tenth by work has a median latency of 0.5 ms.
fn floors(samples: &[ConvSample]) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in samples {
        by.entry(s.gpu.id.clone()).or_default().push(s.latency_s);
    }
    by.into_iter().map(|(g, v)| (g, v.into_iter().fold(f64::INFINITY, f64::min))).collect()
}

impl ConvModel {
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
        let mut per_gpu: BTreeMap<String, f64> = by.into_iter().map(|(g, v)| (g, median(v))).collect();
        let fallback = trimmed_mean(per_gpu.values().copied().collect());
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
        let mut mlp = Mlp::train(&x, &y, cfg, None)?;
        mlp.compact();
        let mut sorted = y.clone();
        sorted.sort_by(f32::total_cmp);
        let pick = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize] as f64;
        let mut trained_on: Vec<String> = per_gpu.keys().cloned().collect();
        trained_on.sort();
        Ok(ConvModel {
            mlp,
            output_range: [pick(0.005), pick(0.995)],
            default_offset: trimmed_mean(per_gpu.values().copied().collect()),
            per_gpu,
            per_arch,
            floor_s: median(floor.values().copied().collect()),
            floors: floor,
            trained_on,
        })
    }

    fn offset(&self, gpu: &Gpu) -> f64 {
        self.per_gpu.get(&gpu.id).or_else(|| self.per_arch.get(&arch_key(gpu))).copied().unwrap_or(self.default_offset)
    }

    /// Predicted kernel seconds of `c` on `gpu` (back to back in a running model).
    pub fn kernel_seconds(&self, c: &Conv, gpu: &Gpu) -> f64 {
        let canon = canonical(c);
        let [lo, hi] = self.output_range;
        let learned = (self.mlp.predict(&features(&canon, gpu)) as f64).clamp(lo, hi);
        let t = bound(&canon, gpu) * (learned + self.offset(gpu)).exp();
        // Winograd and FFT algorithms do fewer multiplications than the direct MAC count (7–23 %
        // of the measured convolutions run below the direct roofline), so the floor is the
        // memory time and a quarter of the direct compute time (F(4×4, 3×3) Winograd's saving).
        let (tc, tm) = roofline_terms(c, gpu);
        t.max((tc / WINOGRAD_MAX_SAVING).max(tm))
    }

    /// Time of one isolated call, as the microbenchmarks measured it: kernels plus the call's
    /// fixed cost.
    pub fn isolated_seconds(&self, c: &Conv, gpu: &Gpu) -> f64 {
        self.kernel_seconds(c, gpu) + self.floors.get(&gpu.id).copied().unwrap_or(self.floor_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_gpu::Catalog;
    use wavecast_ir::DType;

    #[test]
    fn transposed_conv_is_priced_as_the_matching_forward_conv() {
        let t = Conv::new(8, 256, 128, [8, 8], [4, 4], DType::Fp32).stride(2).pad(1).transposed(0).build().unwrap();
        let c = canonical(&t);
        assert_eq!((c.c_in, c.c_out, c.in_hw, c.out_hw()), (128, 256, [16, 16], [8, 8]));
        assert_eq!(c.macs(), t.macs());
    }

    #[test]
    fn shipped_model_is_sane() {
        let w = ConvWeights::shipped().unwrap();
        let cat = Catalog::builtin();
        let v100 = cat.get("v100-pcie-32gb").unwrap();
        let small = Conv::new(1, 64, 64, [56, 56], [3, 3], DType::Fp32).pad(1).build().unwrap();
        let big = Conv { batch: 64, ..small.clone() };
        let m = w.model(None);
        let (ts, tb) = (m.kernel_seconds(&small, v100), m.kernel_seconds(&big, v100));
        assert!(ts > 0.0 && tb > ts * 4.0, "{ts} {tb}");
        // Within 3× of the direct roofline for a large, regular convolution on a measured GPU
        // (Winograd may run below it, never below a quarter of it).
        let roof = 2.0 * big.macs() / v100.peak_flops(OpClass::Conv, DType::Fp32);
        assert!(tb >= roof / WINOGRAD_MAX_SAVING && tb < 3.0 * roof, "{tb} vs roofline {roof}");
        // Every held-out model exists and an unmeasured GPU gets a finite prediction.
        assert_eq!(w.holdout.len(), 4);
        let h100 = cat.get("h100").unwrap();
        assert!(m.kernel_seconds(&big, h100).is_finite());
        assert!(m.isolated_seconds(&small, v100) >= m.floor_s);
    }
}
