//! `wavecast`, the default predictor: physics first, learning for what physics leaves out.
//!
//! For every op the physics gives a bound from FLOPs at the sustained peak and bytes at the
//! bandwidth — their maximum for streaming vector ops, their sum for GEMM tiles (see [`bound`])
//! — where the sustained peak accounts for power-capped boards that cannot hold boost clock
//! (see [`sustained_clock_fraction`]). A small MLP per kernel family then predicts
//! ln(t_kernel / t_bound) from unit-free, per-SM-normalised features (thread-block waves, the
//! last wave's occupancy, intensity against the ridge point, size against L2, the bound itself
//! in µs for launch and tail effects). Raw GPU names or figures are never inputs, so a new GPU
//! is predicted through its physics, and the learned part only says how far real kernels fall
//! short of it. The prediction interval comes from the error spread of models trained with one
//! GPU left out.
//!
//! It learns from the random-shape microbenchmarks and, for the vector families, also from the
//! model-shaped measurements (`ops/test`, `amd_ops/test`) of its training GPUs, which then set those GPUs'
//! offsets: a left-out GPU's rows of either kind never enter its model. A GPU measured on
//! model-shaped GEMMs only (MI100) calibrates its GEMM offsets from them.
//!
//! Vendors: offsets fall back GPU → architecture → kernel-library generation (all AMD parts
//! are one, ROCm's) → vendor runtime (`cuda`, `rocm`) → all GPUs; run scales GPU → runtime →
//! all; isolated host floors runtime → all. So an unmeasured CDNA part learns from MI100 and an
//! unmeasured NVIDIA part from NVIDIA GPUs only. The
//! architecture itself enters through the physics — FP32 GEMMs at the matrix-core rate on CDNA,
//! CU counts in the wave quantisation — not as network inputs: with one AMD GPU among six, an
//! input that is constant on every other GPU would extrapolate without bound on the one left
//! out. What no measurement covers (a vendor none was measured on, a format other than FP32)
//! widens the interval instead ([`FamilyModel::transfer_widening`]).

use crate::calibration::arch_key;
use crate::mlp::Mlp;
use crate::physics::{gemm_dims, sm_count, sustained_clock_fraction, tiles, tiles_along, vector_dims, waves, Family, Roof};
use crate::registry::{Learned, LearnedKind};
use crate::bounds::kernel_at_least;
use crate::sample::{family_floor, isolated_seconds};
use crate::{Context, Estimate, OpTime, Predictor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_ir::{Op, OpClass};

/// Nominal output tile used to count waves (the size cuBLAS favours for large FP32 GEMMs).
const TILE: f64 = 128.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyModel {
    pub mlp: Mlp,
    /// The learned log-ratio is clipped to what training saw (0.5 % and 99.5 % quantiles).
    pub output_range: [f64; 2],
    /// How far each measured GPU's large kernels sit from the physics, ln(measured / bound):
    /// its own calibration, used whenever that GPU is predicted.
    pub per_gpu: BTreeMap<String, f64>,
    /// Mean offset of the measured GPUs of each architecture: an unmeasured GPU of a known
    /// architecture runs the same kernel library code paths.
    #[serde(default)]
    pub per_arch: BTreeMap<String, f64>,
    /// Mean offset per kernel-library generation (see [`generation`]): the fallback for a GPU
    /// of an unmeasured architecture.
    #[serde(default)]
    pub per_generation: BTreeMap<String, f64>,
    /// Trimmed mean of the measured GPUs of each vendor's runtime (`cuda`, `rocm`): what a GPU
    /// of an unmeasured generation gets when its vendor was measured, so one vendor's kernels
    /// never stand in for another's when they need not.
    #[serde(default)]
    pub per_runtime: BTreeMap<String, f64>,
    /// Trimmed mean of `per_gpu`: what a GPU of an unmeasured vendor gets.
    pub default_offset: f64,
    /// Quantiles (10 %, 90 %) of ln(measured / predicted) on held-out GPUs.
    pub interval: [f64; 2],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wavecast {
    /// Power per FP32 TFLOP/s a 12 nm board needs to hold boost (see [`sustained_clock_fraction`]).
    pub watts_per_tflop_12nm: f64,
    pub families: BTreeMap<Family, FamilyModel>,
    /// Isolated-call floor per family (seconds), over every measured GPU.
    pub floors: BTreeMap<Family, f64>,
    /// The same per runtime (`cuda`, `rocm`; see `Vendor::runtime`), from that runtime's GPUs:
    /// the host floor is the software stack's, so a GPU of a measured runtime takes its floors.
    #[serde(default)]
    pub runtime_floors: BTreeMap<String, BTreeMap<Family, f64>>,
    /// Device-side gap between back-to-back kernels in a running model (seconds).
    pub kernel_gap_s: f64,
    /// Run-level calibration from measured end-to-end runs: measured / predicted per GPU.
    /// Microbenchmarks time random, mostly unaligned shapes one call at a time; a real model
    /// runs aligned shapes back to back at sustained clocks, and this factor carries the
    /// difference (see DATA.md's note on isolated timings).
    #[serde(default)]
    pub run_scale: BTreeMap<String, f64>,
    /// Trimmed mean of `run_scale` over each runtime's GPUs (`cuda`, `rocm`): what a GPU
    /// without end-to-end labels of a measured vendor gets.
    #[serde(default)]
    pub runtime_run_scale: BTreeMap<String, f64>,
    /// Trimmed mean of `run_scale`: what a GPU of a vendor without end-to-end labels gets.
    #[serde(default = "one")]
    pub default_run_scale: f64,
    /// 10 % and 90 % quantiles of ln(measured / predicted) of whole runs on held-out GPUs: the
    /// interval given with in-run predictions.
    #[serde(default = "default_run_interval")]
    pub run_interval: [f64; 2],
}

/// The run interval before calibration on held-out GPUs.
pub fn default_run_interval() -> [f64; 2] {
    [-0.15, 0.15]
}

fn one() -> f64 {
    1.0
}

fn log2(v: f64) -> f32 {
    v.max(1e-30).log2() as f32
}

/// Fixed ramp-up and drain time of one kernel (seconds), added to the bound before the
/// learned correction so tiny kernels are not modelled as pure throughput.
const KERNEL_RAMP_S: f64 = 2e-6;

/// The roofs the op can sustain on `gpu`: FP32 matmuls on CUDA cores draw the power that
/// power-capped boards lack; vector ops are bandwidth-bound, and tensor-core math spends far
/// less energy per FLOP, so both keep the spec compute roof.
fn sustained_roof(op: &Op, family: Family, gpu: &Gpu, watts: f64) -> Roof {
    let cuda_core_matmul = family.is_gemm() && op.dtype() == wavecast_ir::DType::Fp32;
    let fraction = if cuda_core_matmul { sustained_clock_fraction(gpu, watts) } else { 1.0 };
    Roof::of_op(op, gpu).at_clock_fraction(fraction)
}

/// Work after wave quantisation: a GEMM runs in whole waves of output tiles over the SMs.
fn wave_padded_flops(op: &Op, family: Family, gpu: &Gpu) -> f64 {
    if !family.is_gemm() {
        return op.flops();
    }
    let (batch, m, n, k) = gemm_dims(op).unwrap_or((1.0, 1.0, 1.0, 1.0));
    let tiles = tiles(batch, m, n, TILE, TILE);
    let sms = sm_count(gpu);
    // With fewer tiles than SMs, libraries split the reduction (split-K) to fill the GPU.
    let splits = (sms / tiles).floor().min((k / 256.0).floor()).max(1.0);
    let units = tiles * splits;
    let slots = waves(units, sms, 1.0) * sms;
    // Tiles are padded to whole tiles and waves to whole waves.
    let padded_tile_work = tiles_along(m, TILE) * TILE * tiles_along(n, TILE) * TILE / (m * n);
    op.flops() * padded_tile_work * slots / units
}

/// The physical bound (seconds) of `op` on `gpu`. A GEMM tile loads its operand panels,
/// multiplies and stores its output, and with few reduction steps per tile (attention's K = 64,
/// say) there is little to overlap the transfers with; the more so on a GPU whose matrix rate is
/// high for its bandwidth (MI100's FP32 matrix cores: ridge 37 FLOP/B against V100's 16). So a
/// GEMM's bound adds its memory time to its compute time, and the learned part says how much
/// real kernels overlap; a vector op streams, and its bound is the larger of the two. (Chosen
/// over max() for GEMMs by leave-one-GPU-out end-to-end error on all six GPUs: 8.9 → 7.8 %
/// when it was made.)
pub fn bound(op: &Op, family: Family, gpu: &Gpu, watts: f64) -> f64 {
    let (compute, memory) = sustained_roof(op, family, gpu, watts).seconds(wave_padded_flops(op, family, gpu), op.bytes());
    if family.is_gemm() {
        KERNEL_RAMP_S + compute + memory
    } else {
        KERNEL_RAMP_S + compute.max(memory)
    }
}

/// Features of `op` on `gpu`. GEMMs: their shape only, identical on every GPU, so the learned
/// part cannot tell GPUs apart and can only learn how kernels of a shape fall short of the
/// physics. Vector ops: the ideal time in µs (launch ramp and tail effects live in absolute
/// time), the row length that picks the kernel variant, and the op's FLOP and byte density.
pub fn features(op: &Op, family: Family, gpu: &Gpu, watts: f64) -> Vec<f32> {
    let (f, b) = (op.flops(), op.bytes());
    if family.is_gemm() {
        let (batch, m, n, k) = gemm_dims(op).unwrap_or((1.0, 1.0, 1.0, 1.0));
        // Alignment decides whether the library can use its vectorised kernels: random odd
        // shapes run far below model-shaped (multiple-of-64) ones on the same GPU.
        let align = |d: f64| (d as u64).trailing_zeros().min(7) as f32;
        return vec![
            log2(batch),
            log2(m),
            log2(n),
            log2(k),
            log2(f),
            log2(b),
            log2(f / b.max(1.0)),
            align(m),
            align(n),
            align(k),
        ];
    }
    let (rows, cols) = vector_dims(op);
    let elems = (rows * cols).max(1.0);
    let row_len = if family == Family::Elementwise { 1.0 } else { cols };
    vec![log2(bound(op, family, gpu, watts) * 1e6), log2(row_len), log2((f / elems).max(0.01)), log2(b / elems)]
}

/// Kernel-library generation: cuBLAS ships one family of FP32 SIMT kernels for Pascal
/// (`maxwell_sgemm_*`), another for Volta through Ada (`volta_sgemm_*`, `ampere_sgemm_*`), and
/// Hopper onwards runs `xmma` kernels — the kernel names in the measurements show the split.
/// AMD parts are one generation, their runtime's (ROCm: Tensile and hipBLASLt). A generation
/// no training GPU belongs to falls back to its vendor's GPUs, then to all.
pub fn generation(gpu: &Gpu) -> &'static str {
    match (gpu.vendor, gpu.compute_major()) {
        (wavecast_gpu::Vendor::Amd | wavecast_gpu::Vendor::Intel, _) => gpu.vendor.runtime(),
        (_, 0..=6) => "maxwell-sgemm",
        (_, 7..=8) => "volta-ampere-sgemm",
        _ => "xmma",
    }
}

impl Wavecast {
    fn run_scale_for(&self, gpu: &Gpu) -> f64 {
        let runtime = || self.runtime_run_scale.get(gpu.vendor.runtime());
        self.run_scale.get(&gpu.id).or_else(runtime).copied().unwrap_or(self.default_run_scale)
    }

    /// The host floor of an isolated call of `op` on `gpu`: its runtime's where that was
    /// measured for the op's family (`true`), else the all-GPU one (`false`).
    fn isolated_floor(&self, op: &Op, gpu: &Gpu) -> (f64, bool) {
        let own = self.runtime_floors.get(gpu.vendor.runtime()).map(|f| family_floor(f, op)).filter(|f| *f > 0.0);
        own.map_or_else(|| (family_floor(&self.floors, op), false), |f| (f, true))
    }

    /// Predicted kernel seconds and the family model used. A matrix product never takes less
    /// than the same product over half its batch (or half its rows): the learned correction,
    /// smooth in its features, can dip where a real kernel only adds tiles, and a user who
    /// doubles the batch must not see a step get shorter.
    pub fn kernel_seconds(&self, op: &Op, gpu: &Gpu) -> Option<(f64, &FamilyModel)> {
        let (t, model) = self.unenveloped_kernel_seconds(op, gpu)?;
        let half = half_the_work(op).and_then(|h| self.kernel_seconds(&h, gpu)).map_or(0.0, |(t, _)| t);
        Some((t.max(half), model))
    }

    fn unenveloped_kernel_seconds(&self, op: &Op, gpu: &Gpu) -> Option<(f64, &FamilyModel)> {
        let fam = Family::of(op)?;
        let model = self.families.get(&fam)?;
        let t_bound = bound(op, fam, gpu, self.watts_per_tflop_12nm);
        let [lo, hi] = model.output_range;
        let offset = model
            .per_gpu
            .get(&gpu.id)
            .or_else(|| model.per_arch.get(&arch_key(gpu)))
            .or_else(|| model.per_generation.get(generation(gpu)))
            .or_else(|| model.per_runtime.get(gpu.vendor.runtime()))
            .copied()
            .unwrap_or(model.default_offset);
        let x = features(op, fam, gpu, self.watts_per_tflop_12nm);
        // A product's halvings are asked for every product of the same columns, on every GPU
        // (its features are the shape's alone): those answers are remembered.
        let learned = if fam.is_gemm() { model.mlp.predict_remembered(&x) } else { model.mlp.predict(&x) };
        let learned = (learned as f64).clamp(lo, hi);
        let factor = (learned + offset).exp();
        // The wave-padded bound assumes a tile size, so the learned factor may undercut it, but
        // nothing undercuts the plain roofline.
        Some((kernel_at_least(t_bound * factor, op, gpu), model))
    }

    fn estimate(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        let isolated = ctx.isolated;
        if op.class() == OpClass::Communication {
            return Estimate::Unpriced("wavecast prices communication with the comm model".into());
        }
        let Some((t, model)) = self.kernel_seconds(op, gpu) else {
            return Estimate::Unpriced(format!("no trained model for {}", op.class()));
        };
        let widen = model.transfer_widening(op, gpu);
        let (floor, own_runtime) = self.isolated_floor(op, gpu);
        // Another runtime's host floor is no bound on this one's (ROCm's calls return in about
        // half CUDA's time), and nothing measured says how far below it lies: the low end
        // takes no floor at all.
        let floor_lo = if own_runtime { floor } else { 0.0 };
        let adjust = |k: f64, floor: f64| {
            if isolated {
                isolated_seconds(k, floor)
            } else {
                k * self.run_scale_for(gpu) + self.kernel_gap_s
            }
        };
        // Isolated ops carry their family's per-op spread; in-run ops the whole-run spread, since
        // per-op errors partly cancel over a model.
        let [lo, hi] = if isolated { model.interval } else { self.run_interval };
        let (lo, hi) = (lo - widen, hi + widen);
        Estimate::Time(OpTime { seconds: adjust(t, floor), lo: adjust(t * lo.exp(), floor_lo), hi: adjust(t * hi.exp(), floor), provenance: crate::Provenance::PHYSICS })
    }
}

/// The matrix product over half the batch (a BMM's) or half the rows (a linear layer's),
/// while there are two or more to halve.
fn half_the_work(op: &Op) -> Option<Op> {
    let Op::Gemm(g) = op else { return None };
    let mut half = g.clone();
    match g.kind {
        wavecast_ir::ops::GemmKind::Bmm if g.batch >= 2 => half.batch = g.batch / 2,
        wavecast_ir::ops::GemmKind::Linear if g.m >= 2 => half.m = g.m / 2,
        _ => return None,
    }
    Some(Op::Gemm(half))
}

impl FamilyModel {
    /// How far apart two kernel-library generations sit on the same physics: the spread (in
    /// ln) of the measured generations' offsets.
    /// 0 when fewer than two generations were measured: then nothing says how far apart they
    /// sit, and the interval is not widened.
    fn generation_spread(&self) -> f64 {
        let v: Vec<f64> = self.per_generation.values().copied().collect();
        let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
        if v.len() >= 2 { hi - lo } else { 0.0 }
    }

    /// Extra width (ln, each side) of the interval for what the measurements never showed: a
    /// GPU of a vendor no measured GPU belongs to, whose offset is the other vendor's, and a
    /// format other than the FP32 the model learned from (BF16 or FP8 on an MI300X, say,
    /// priced from the datasheet and the physics only). One generation spread for each; the
    /// held-out calibration covers neither.
    pub fn transfer_widening(&self, op: &Op, gpu: &Gpu) -> f64 {
        let unseen_vendor = !self.per_gpu.contains_key(&gpu.id) && !self.per_runtime.contains_key(gpu.vendor.runtime());
        let unseen_format = op.dtype() != wavecast_ir::DType::Fp32;
        (u8::from(unseen_vendor) + u8::from(unseen_format)) as f64 * self.generation_spread()
    }
}

impl Learned for Wavecast {
    const KIND: LearnedKind = LearnedKind::Wavecast;
}

impl Predictor for Wavecast {
    fn name(&self) -> &str {
        Self::KIND.name()
    }
    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        self.estimate(op, gpu, ctx)
    }
}
