//! The sustained roofline: modern-GPU kernels (BF16/FP8/FP4 GEMMs, attention, fused MoE,
//! collectives, memory-bound layer ops) priced from physics first, with a few numbers learned
//! on top per kernel family.
//!
//! A kernel takes `overhead + (Tc^p + Tm^p)^(1/p)`: `Tc` is its padded FLOPs at a sustained
//! fraction of the format's dense peak, slowed by wave quantization (tiles that leave SMs idle;
//! a kernel with fewer tiles than SMs splits its reduction to fill them while slices stay long
//! enough), plus a fixed cost per wave of tiles (filling and draining each tile's pipeline);
//! `Tm` is its bytes at an achievable fraction of DRAM bandwidth (never above
//! [`ACHIEVABLE_BANDWIDTH`], so a memory-bound kernel is never faster than a copy), and on few
//! busy SMs no more than they can pull; `p` blends the two near the ridge. FP8/FP4 layers add
//! a cost per activation row for their on-the-fly quantization. Keys fitted on three or more
//! GPUs add a bounded learned correction on GPU-normalized features ([`features`]), and the
//! result never goes below [`Work::floor_seconds`]. A timed module of several kernels (MLA:
//! projections, norms, attention) is a [`Work::Chain`]: one call's fixed cost plus each
//! kernel's time. A collective takes a per-call latency, a per-GPU hop latency, and its ring
//! bytes over the link at a fitted efficiency. The learned numbers are fitted per key (source, family, format,
//! kernel library, from specific to general; see [`keys`]) on every GPU but the one predicted.

mod fit;
mod ir;
mod work;

pub use fit::{fit, FitOptions};
pub use ir::{op_shape, SustainedOps, IN_MODEL_KERNEL_US};
pub use work::{peak_flops, CollectiveWork, KernelWork, Link, Work};

use crate::memo::Memo;
use crate::physics::wave_utilization;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use wavecast_data::{Precision, Shape, Timing};
use wavecast_gpu::Gpu;

/// Highest fraction of datasheet DRAM bandwidth any kernel sustains (copy benchmarks reach
/// about 90–93 % on HBM and GDDR parts).
pub const ACHIEVABLE_BANDWIDTH: f64 = 0.92;

/// The learned numbers of one key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Sustained fraction of the dense tensor peak.
    pub compute_efficiency: f64,
    /// Achieved fraction of datasheet bandwidth (DRAM for kernels, the link for collectives).
    pub memory_efficiency: f64,
    /// Fixed cost per call, µs.
    pub overhead_us: f64,
    /// Collectives: added latency per GPU beyond the first, µs.
    pub per_gpu_us: f64,
    /// Exponent blending compute and memory time (1 = sum, large = max).
    pub blend: f64,
    /// Shortest reduction a split-K (or split-KV) slice is given: a kernel with fewer tiles
    /// than SMs splits its reduction into slices of at least this length to fill them.
    pub split_min: f64,
    /// How many times its fair share of DRAM bandwidth one busy SM can pull (a kernel on few
    /// SMs cannot use the whole memory system).
    pub sm_bandwidth: f64,
    /// Fixed cost of each wave of tiles (prologue, epilogue, pipeline fill), µs.
    pub wave_us: f64,
    /// Cost per activation row quantized on the fly (its scale's reduction), ns.
    #[serde(default)]
    pub row_ns: f64,
    /// Learned correction on top of the physics: ln(measured / physics) ≈ residual · features
    /// (see [`features`]); empty for none.
    #[serde(default)]
    pub residual: Vec<f64>,
    /// Training GPUs and rows the numbers were fitted on.
    pub gpus: u32,
    pub rows: u32,
}

/// Largest correction the learned residual may apply, as a factor either way: the physics
/// stays in charge far from the training data.
const MAX_CORRECTION: f64 = 3.0;

impl Params {
    /// Seconds for `work`: the physics, the learned correction, and never below its floor
    /// (dense peak, achievable bandwidth; see [`Work::floor_seconds`]).
    pub fn seconds(&self, work: &Work) -> f64 {
        self.corrected(work, self.physics_seconds(work), self.correction_factor(work))
    }

    /// Seconds for `work` inside a running model: like [`Params::seconds`], but a kernel's fixed
    /// cost is at most `fixed_us`. The fitted cost is what a kernel timed on its own pays
    /// (host launch and synchronization included); queued back to back or replayed from a
    /// CUDA graph, kernels pay only the GPU's gap between them. Collectives keep theirs (their
    /// fixed cost is the GPUs' handshake, not the host).
    pub fn seconds_in_model(&self, work: &Work, fixed_us: f64) -> f64 {
        match self.physics_in_model(work, fixed_us) {
            Some(physics) => self.corrected(work, physics, self.correction_factor(work)),
            None => self.seconds(work),
        }
    }

    /// [`Params::seconds`] and [`Params::seconds_in_model`] of the same work, its correction
    /// worked out once.
    pub fn seconds_alone_and_in_model(&self, work: &Work, fixed_us: f64) -> (f64, f64) {
        let factor = self.correction_factor(work);
        let alone = self.corrected(work, self.physics_seconds(work), factor);
        (alone, self.physics_in_model(work, fixed_us).map_or(alone, |physics| self.corrected(work, physics, factor)))
    }

    /// The physics inside a running model where it differs from alone: a kernel (or chain)
    /// whose fitted fixed cost exceeds `fixed_us` pays `fixed_us` instead; `None` otherwise.
    fn physics_in_model(&self, work: &Work, fixed_us: f64) -> Option<f64> {
        match work {
            Work::Kernel(_) | Work::Chain(_) if self.overhead_us > fixed_us => Some(self.physics_seconds_with(work, fixed_us)),
            _ => None,
        }
    }

    /// The learned correction's factor on the physics for `work`.
    fn correction_factor(&self, work: &Work) -> f64 {
        let correction = if self.residual.is_empty() { 0.0 } else { features(work).iter().zip(&self.residual).map(|(x, w)| x * w).sum::<f64>() };
        // A non-finite correction is no correction: `max` in `corrected` would otherwise turn
        // its NaN into the bare floor.
        let correction = if correction.is_finite() { correction } else { 0.0 };
        correction.clamp(-MAX_CORRECTION.ln(), MAX_CORRECTION.ln()).exp()
    }

    /// `physics` times the correction's `factor`, never below the work's floor.
    fn corrected(&self, work: &Work, physics: f64, factor: f64) -> f64 {
        (physics * factor).max(work.floor_seconds())
    }

    /// Seconds for `work` from the physics alone.
    pub fn physics_seconds(&self, work: &Work) -> f64 {
        self.physics_seconds_with(work, self.overhead_us)
    }

    /// [`Params::physics_seconds`] with a kernel's fixed cost `overhead_us` (a collective keeps
    /// its own).
    fn physics_seconds_with(&self, work: &Work, overhead_us: f64) -> f64 {
        match work {
            Work::Kernel(k) => overhead_us * 1e-6 + self.kernel_seconds(k),
            Work::Chain(ks) => overhead_us * 1e-6 + ks.iter().map(|k| self.kernel_seconds(k)).sum::<f64>(),
            Work::Collective(c) => (self.overhead_us + self.per_gpu_us * (c.gpus - 1.0)) * 1e-6 + c.link_bytes / (self.memory_efficiency.min(ACHIEVABLE_BANDWIDTH) * c.link_bandwidth),
        }
    }

    /// One kernel's time on the GPU, its fixed cost per call aside.
    fn kernel_seconds(&self, k: &KernelWork) -> f64 {
        let memory_efficiency = self.memory_efficiency.min(ACHIEVABLE_BANDWIDTH);
        // Split the reduction while there are idle SMs and slices stay long enough.
        let split = if k.tiles > 0.0 { (k.sms / k.tiles).min(k.reduction / self.split_min).max(1.0).floor() } else { 1.0 };
        let slices = k.tiles * split;
        let busy = if slices > 0.0 { (slices / k.sms).min(1.0) } else { 1.0 };
        let tm = k.bytes / (memory_efficiency * k.bandwidth * (busy * self.sm_bandwidth).min(1.0));
        let tc = match k.peak_flops {
            Some(peak) => {
                let waves = (slices / k.sms).ceil().max(1.0);
                let steps = if k.serial_steps > 0.0 { k.serial_steps } else { waves };
                let sustained = self.compute_efficiency.min(1.0) * peak;
                k.padded_flops / (sustained * wave_utilization(slices, k.sms)) + steps * self.wave_us * 1e-6
            }
            None => 0.0,
        };
        k.quantized_rows * self.row_ns * 1e-9 + (tc.powf(self.blend) + tm.powf(self.blend)).powf(1.0 / self.blend)
    }
}

/// What the learned correction sees of a piece of work, normalized by the GPU (times at peak
/// in log µs, tiles per SM) so one set of weights carries across GPUs.
pub fn features(work: &Work) -> Vec<f64> {
    match work {
        Work::Kernel(k) => kernel_features(k),
        // A chain is seen as one kernel of its summed work; an empty one gets no correction.
        Work::Chain(ks) => KernelWork::combined(ks).map_or_else(Vec::new, |k| kernel_features(&k)),
        Work::Collective(c) => {
            let t = (c.link_bytes / c.link_bandwidth * 1e6).max(1e-3).ln();
            let n = c.gpus.ln();
            vec![1.0, t, t * t, n, t * n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        }
    }
}

fn kernel_features(k: &KernelWork) -> Vec<f64> {
    let tc = (k.padded_flops / k.peak_flops.unwrap_or(f64::INFINITY) * 1e6).max(1e-3).ln();
    let tm = (k.bytes / k.bandwidth * 1e6).max(1e-3).ln();
    let per_sm = (k.tiles.max(1.0) / k.sms).ln();
    let reduction = (k.reduction + 1.0).ln();
    let util = wave_utilization(k.tiles, k.sms);
    // Padding's share of the work: none for a kernel without FLOPs (norms, element-wise,
    // copies), whose ln(0 / 1) would make the whole correction NaN.
    let padding = (k.padded_flops.max(1.0) / k.flops.max(1.0)).ln();
    vec![1.0, tc, tm, per_sm, util, reduction, tc * tc, tm * tm, tc * tm, per_sm * per_sm, per_sm * reduction, padding]
}

/// The keys a measurement is looked up under, most specific first: its source, family, format
/// and kernel library; without the library; then the family and format from any source; then
/// the family alone. Collectives carry their link in the family (`all_reduce@nvlink`). An MLA
/// attention kernel timed on its own is `mla_kernel`, apart from the whole-module numbers.
pub fn keys(t: &Timing, work: &Work) -> [String; KEY_LEVELS] {
    let family = key_family(t, work);
    std::array::from_fn(|level| {
        let mut key = String::new();
        write_key(&mut key, t, &family, level);
        key
    })
}

/// How many keys [`keys`] gives.
const KEY_LEVELS: usize = 4;

/// The family part of [`keys`].
fn key_family<'a>(t: &'a Timing, work: &Work) -> std::borrow::Cow<'a, str> {
    match (work, &t.shape) {
        (Work::Collective(c), _) => format!("{}@{}", t.shape.family_name(), c.link.as_str()).into(),
        (_, Shape::Mla { module: false, .. }) => "mla_kernel".into(),
        _ => t.shape.family_name().into(),
    }
}

/// Key `level` (0: the most specific) of [`keys`], written into `key`: `source/family/format/
/// library`, `source/family/format`, `*/family/format`, `*/family`.
fn write_key(key: &mut String, t: &Timing, family: &str, level: usize) {
    // Pushed piece by piece: this runs up to four times for every shape priced.
    key.push_str(if level < 2 { t.source.as_str() } else { "*" });
    key.push('/');
    key.push_str(family);
    if level < 3 {
        key.push('/');
        key.push_str(t.precision.as_str());
    }
    if level == 0 {
        key.push('/');
        key.push_str(&t.kernel_source);
    }
}

/// Fitted numbers per key, and the GPUs they were fitted on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub trained_on: Vec<String>,
    /// In key order, as the weights file lists them.
    keys: BTreeMap<String, Params>,
    /// The same numbers hashed by key, built at the first prediction: every priced shape looks
    /// up to four keys, and the ordered map compared each with eight of its 213 keys sharing
    /// long prefixes (6 % of pricing DeepSeek-V3's serving tables on H200).
    #[serde(skip)]
    hashed: Memo<OnceLock<foldhash::HashMap<String, Params>>>,
}

/// The numbers `wavecast fit --predictor sustained --data ../shared/data` fitted on every
/// GPU of the public modern-GPU measurements.
const SHIPPED: &str = include_str!("../../weights/sustained.json");

/// Why the shipped numbers cannot stand in for a model that never saw `holdout`: they were
/// fitted on it (`eval ops` and `eval serving` on the modern-GPU data refit without it).
pub fn fitted_on(holdout: Option<&str>) -> Option<String> {
    let gpu = holdout?;
    Model::shipped().trained_on.iter().any(|t| t == gpu).then(|| format!("its physics numbers were fitted on {gpu} and ship no model without it (`eval ops` on the modern-GPU data refits them without the test GPU)"))
}

impl Model {
    pub fn new(trained_on: Vec<String>, keys: BTreeMap<String, Params>) -> Model {
        Model { trained_on, keys, hashed: Memo::default() }
    }

    /// The fitted numbers by key.
    pub fn keys(&self) -> &BTreeMap<String, Params> {
        &self.keys
    }

    pub fn shipped() -> Model {
        Model::from_json(SHIPPED).expect("shipped sustained-roofline weights parse (tested)")
    }

    pub fn from_json(text: &str) -> Result<Model, String> {
        serde_json::from_str(text).map_err(|e| format!("sustained-roofline weights: {e}"))
    }

    /// Seconds for a measured shape on `gpu`; `Err` says why it cannot be priced.
    pub fn predict(&self, t: &Timing, gpu: &Gpu) -> Result<f64, String> {
        let (work, params) = self.fitted(t, gpu)?;
        Ok(params.seconds(&work))
    }

    /// The work of `t` on `gpu` and the numbers of its most specific fitted key.
    fn fitted(&self, t: &Timing, gpu: &Gpu) -> Result<(Work, &Params), String> {
        let work = Work::of(&t.shape, t.precision, gpu)?;
        let params = self.params(t, &work)?;
        Ok((work, params))
    }

    /// The numbers of the most specific fitted key of `t`, whose work is `work`.
    fn params(&self, t: &Timing, work: &Work) -> Result<&Params, String> {
        let hashed = self.hashed.0.get_or_init(|| self.keys.iter().map(|(k, p)| (k.clone(), p.clone())).collect());
        // The keys one at a time in one buffer, most specific first: this runs for every shape
        // priced, and most find numbers before the last key.
        let family = key_family(t, work);
        let mut key = String::with_capacity(64);
        let params = (0..KEY_LEVELS).find_map(|level| {
            key.clear();
            write_key(&mut key, t, &family, level);
            hashed.get(key.as_str())
        });
        params.ok_or_else(|| format!("no fitted numbers for {} {}", t.shape.family(), t.precision.as_str()))
    }

    /// Seconds for a shape inside a running model (see [`Params::seconds_in_model`]).
    pub fn predict_in_model(&self, t: &Timing, gpu: &Gpu, fixed_us: f64) -> Result<f64, String> {
        let (work, params) = self.fitted(t, gpu)?;
        Ok(params.seconds_in_model(&work, fixed_us))
    }

    /// [`Model::predict`] and [`Model::predict_in_model`] of the same shape at once, its work
    /// on the GPU already worked out.
    pub fn predict_alone_and_in_model(&self, t: &Timing, work: &Work, fixed_us: f64) -> Result<(f64, f64), String> {
        Ok(self.params(t, work)?.seconds_alone_and_in_model(work, fixed_us))
    }

    /// The plain roofline of the same work: datasheet peak and bandwidth, no overhead.
    pub fn roofline(t: &Timing, gpu: &Gpu) -> Result<f64, String> {
        Ok(Work::of(&t.shape, t.precision, gpu)?.roofline_seconds())
    }
}

/// What the fitted numbers imply a GPU sustains, measured on probe kernels: a large square
/// GEMM per format (TFLOP/s), a decode-sized GEMV streaming 16-bit weights and a decode
/// attention step reading a 16-bit KV cache (GB/s). `None`: the GPU has no units for the format,
/// or nothing fitted prices it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implied {
    pub bf16_tflops: Option<f64>,
    pub fp8_tflops: Option<f64>,
    pub nvfp4_tflops: Option<f64>,
    pub weight_stream_gbs: Option<f64>,
    pub kv_read_gbs: Option<f64>,
}

/// Side of the square GEMM the throughput probes use: large enough that every GPU runs it at
/// its sustained rate, wave quantization and fixed costs aside.
const PROBE_GEMM: u64 = 8192;

impl Model {
    /// The sustained figures `gpu` gets from these numbers (see [`Implied`]); AIConfigurator's
    /// keys price the probes, as they do serving.
    pub fn implied(&self, gpu: &Gpu) -> Implied {
        let probe = |shape: Shape, precision: Precision| -> Option<(f64, Work)> {
            let t = Timing { source: wavecast_data::Source::Aiconfigurator, gpu: gpu.id.clone(), shape, precision, kernel_source: String::new(), latency_ms: 0.0, provenance: String::new(), engine: String::new() };
            let (work, params) = self.fitted(&t, gpu).ok()?;
            Some((params.seconds(&work), work))
        };
        let size = PROBE_GEMM;
        let tflops = |precision| probe(Shape::Gemm { m: size, n: size, k: size }, precision).map(|(s, _)| 2.0 * (size as f64).powi(3) / s / 1e12);
        let gbs = |shape| {
            probe(shape, Precision::Bf16).and_then(|(s, w)| match w {
                Work::Kernel(k) => Some(k.bytes / s / 1e9),
                _ => None,
            })
        };
        Implied {
            bf16_tflops: tflops(Precision::Bf16),
            fp8_tflops: tflops(Precision::Fp8),
            nvfp4_tflops: tflops(Precision::Nvfp4).filter(|_| gpu.check_quant(wavecast_ir::Quant::Nvfp4).is_ok()),
            weight_stream_gbs: gbs(Shape::Gemm { m: 1, n: size, k: size }),
            kv_read_gbs: gbs(Shape::AttentionDecode { batch: 64, kv_len: 8191, heads: 64, kv_heads: 8, head_dim: 128, window: 0, kv_precision: Precision::Bf16 }),
        }
    }
}
