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
//! Trained (in `wavecast-train`) on NeuSight's forward-convolution measurements (FP32, four GPUs,
//! cuDNN 8.9) by `wavecast eval conv --retrain FILE`; the shipped weights (this crate's
//! `weights/conv.json`) hold the all-GPU model and one model per left-out GPU. Backward passes
//! (data and weight gradient) have the forward's MACs and bytes and are priced with the same
//! model; a transposed convolution is priced as the convolution whose data gradient it is.

use crate::calibration::arch_key;
use crate::mlp::Mlp;
use crate::physics::roofline;
use crate::sample::kernel_time;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_data::{Measurement, OpShape};
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::ops::{Conv, ConvPass};
use wavecast_ir::{DType, OpClass};

/// Fixed ramp-up and drain of the kernels of one convolution (seconds).
const RAMP_S: f64 = 2e-6;
/// Batches [`ConvModel::kernel_seconds`] tries above the asked one: at least six doublings, and
/// on until the implicit GEMM has [`CAP_ROWS`] rows, where the measurements lie.
const MIN_BATCH_DOUBLINGS: u32 = 6;
const CAP_ROWS: u64 = 1 << 16;
/// Largest reduction of multiplications a fast convolution algorithm achieves over the direct one.
const WINOGRAD_MAX_SAVING: f64 = 4.0;

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
        kernel_time(self.latency_s, floor_s)
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

/// (compute seconds, memory seconds) of a convolution (2 FLOPs per MAC): [`roofline`] at the
/// spec peak. (Unlike GEMMs, the measured convolutions of the power-capped boards, P4 and T4,
/// sit as far from their spec roofline as those of the full-power ones: applying the GEMM
/// predictors' sustained-clock prior would split the GPUs' calibration offsets into two groups,
/// ~0.15 and ~0.8, and mispredict a held-out GPU.)
pub fn roofline_terms(c: &Conv, gpu: &Gpu) -> (f64, f64) {
    roofline(2.0 * c.macs(), c.bytes(), OpClass::Conv, c.dtype, gpu)
}

/// How many times fewer multiplications than the direct count the library's fast algorithms can
/// do on `c`. cuDNN runs Winograd (and FFT for larger kernels) on stride-1 convolutions of 3×3
/// and up in FP32 and FP16 — 7–23 % of the measured FP32 convolutions run below the direct
/// roofline — with at most F(4×4, 3×3) Winograd's saving; BF16, TF32 and FP8 run implicit-GEMM
/// kernels on the tensor units, and 1×1 or strided convolutions have no fast algorithm.
fn fast_algorithm_saving(c: &Conv) -> f64 {
    let fast_dtype = matches!(c.dtype, DType::Fp32 | DType::Fp16);
    let applies = c.stride == [1, 1] && c.kernel[0].min(c.kernel[1]) >= 3 && c.groups == 1 && !c.transposed;
    if fast_dtype && applies {
        WINOGRAD_MAX_SAVING
    } else {
        1.0
    }
}

/// The least time `c` can take on `gpu`: its bytes at full bandwidth, and its direct FLOPs at
/// peak divided by the fast algorithms' saving where they apply.
pub fn physical_floor(c: &Conv, gpu: &Gpu) -> f64 {
    let (compute, memory) = roofline_terms(c, gpu);
    (compute / fast_algorithm_saving(c)).max(memory)
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

/// What `weights/conv.json` holds: the model trained on every GPU and one per left-out GPU.
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

/// The interval before calibration on held-out GPUs.
pub fn default_interval() -> [f64; 2] {
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

const SHIPPED: &str = include_str!("../weights/conv.json");

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
        serde_json::from_str(SHIPPED).map_err(|e| format!("weights/conv.json: {e}"))
    }

    /// The shipped model trained without `holdout` (or on every GPU) and the interval.
    pub fn shipped_model(holdout: Option<&str>) -> Result<(ConvModel, [f64; 2]), String> {
        match holdout {
            Some(g) => {
                let w = ConvWeights::shipped()?;
                Ok((w.model(Some(g))?.clone(), w.interval))
            }
            None => {
                let a: AllOnly = serde_json::from_str(SHIPPED).map_err(|e| format!("weights/conv.json: {e}"))?;
                Ok((a.all, a.interval))
            }
        }
    }

    /// The model trained without `holdout`'s measurements: its left-out model, or the all-GPU
    /// one when that never saw it either (a GPU it learned from has an offset in `per_gpu`); a
    /// GPU the all-GPU model learned from but without a left-out model is an error, never a
    /// silent fallback (the rule `WeightsFile::without` keeps for the per-op predictors).
    pub fn model(&self, holdout: Option<&str>) -> Result<&ConvModel, String> {
        match holdout {
            Some(g) => match self.holdout.get(g) {
                Some(m) => Ok(m),
                None if self.all.per_gpu.contains_key(g) => Err(format!("the convolution weights were trained on {g} and ship no model without it (retrain them with `wavecast eval conv --retrain`)")),
                None => Ok(&self.all),
            },
            None => Ok(&self.all),
        }
    }
}

impl ConvModel {
    fn offset(&self, gpu: &Gpu) -> f64 {
        self.per_gpu.get(&gpu.id).or_else(|| self.per_arch.get(&arch_key(gpu))).copied().unwrap_or(self.default_offset)
    }

    /// Predicted kernel seconds of `c` on `gpu` (back to back in a running model): the fitted
    /// time, capped by the fitted time of the same convolution over 2, 4, … times the images.
    /// A library runs fewer images no slower than more (it could pad the batch), and the fit,
    /// which learned from implicit GEMMs of thousands of rows, overshoots on a few dozen (a 1×1
    /// convolution of one 7×7 image); the cap keeps a larger batch from coming out faster.
    pub fn kernel_seconds(&self, c: &Conv, gpu: &Gpu) -> f64 {
        let rows = |batch: u64| batch.saturating_mul(c.out_hw().iter().product::<u64>().max(1));
        let mut t = self.fitted_seconds(c, gpu);
        let mut more = c.clone();
        for doubling in 1u32.. {
            if doubling > MIN_BATCH_DOUBLINGS && rows(more.batch) >= CAP_ROWS {
                break;
            }
            more.batch = more.batch.saturating_mul(2);
            t = t.min(self.fitted_seconds(&more, gpu));
        }
        t
    }

    fn fitted_seconds(&self, c: &Conv, gpu: &Gpu) -> f64 {
        let canon = canonical(c);
        let [lo, hi] = self.output_range;
        let learned = (self.mlp.predict(&features(&canon, gpu)) as f64).clamp(lo, hi);
        let t = bound(&canon, gpu) * (learned + self.offset(gpu)).exp();
        // The kernel part alone reaches the floor `bounds::floor_seconds` gives a convolution
        // (see `bounds::kernel_at_least`; this is that floor without building an `Op`).
        t.max(physical_floor(c, gpu))
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
    fn a_gpu_the_conv_weights_learned_from_is_predicted_without_it_or_not_at_all() {
        let mut w = ConvWeights::shipped().unwrap();
        let trained: Vec<String> = w.all.per_gpu.keys().cloned().collect();
        assert!(!trained.is_empty());
        for g in &trained {
            let m = w.model(Some(g)).unwrap();
            assert!(!m.per_gpu.contains_key(g), "the model for {g} learned from {g}");
        }
        assert!(std::ptr::eq(w.model(Some("h100")).unwrap(), &w.all), "a GPU it never saw gets the all-GPU model");
        w.holdout.remove(&trained[0]);
        assert!(w.model(Some(&trained[0])).unwrap_err().contains("trained on"));
    }

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
        let m = &w.all;
        let (ts, tb) = (m.kernel_seconds(&small, v100), m.kernel_seconds(&big, v100));
        assert!(ts > 0.0 && tb > ts * 4.0, "{ts} {tb}");
        // Within 3× of the direct roofline for a large, regular convolution on a measured GPU
        // (Winograd may run below it, never below a quarter of it).
        let (roof, _) = roofline_terms(&big, v100);
        assert!(tb >= roof / WINOGRAD_MAX_SAVING && tb < 3.0 * roof, "{tb} vs roofline {roof}");
        // Every held-out model exists and an unmeasured GPU gets a finite prediction.
        assert_eq!(w.holdout.len(), 4);
        let h100 = cat.get("h100").unwrap();
        assert!(m.kernel_seconds(&big, h100).is_finite());
        assert!(m.isolated_seconds(&small, v100) >= m.floor_s);
    }

    /// More images never take less time: MobileNet's 1×1 convolutions over one 7×7 image were
    /// priced at 53 µs and over eight at 18 µs on an H100, and the network came out faster at
    /// batch 4 than at batch 1.
    #[test]
    fn a_larger_batch_is_never_faster() {
        let m = &ConvWeights::shipped().unwrap().all;
        let cat = Catalog::builtin();
        // (C_in, C_out, side, kernel, groups, stride): MobileNet-v2's and ResNet's shapes.
        let shapes = [(32, 32, 112, 3, 32, 1), (32, 16, 112, 1, 1, 1), (96, 96, 112, 3, 96, 2), (3, 32, 224, 3, 1, 2), (960, 160, 7, 1, 1, 1), (64, 64, 56, 3, 1, 1), (512, 2048, 7, 1, 1, 1)];
        for gpu in ["h100-sxm", "a100-sxm-80gb", "t4", "v100-sxm2", "mi300x"] {
            let gpu = cat.get(gpu).unwrap();
            for (c_in, c_out, side, k, groups, stride) in shapes {
                let at = |batch: u64| {
                    let c = Conv { groups, ..Conv::new(batch, c_in, c_out, [side, side], [k, k], DType::Fp32).stride(stride).pad(k / 2).build().unwrap() };
                    m.kernel_seconds(&c, gpu)
                };
                let times: Vec<f64> = [1, 2, 4, 8, 16, 32, 64, 256].into_iter().map(at).collect();
                assert!(times.windows(2).all(|w| w[1] >= w[0] * (1.0 - 1e-12)), "{} {c_in}->{c_out} {side}² k{k}: {times:?}", gpu.id);
            }
        }
    }
}
