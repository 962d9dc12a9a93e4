//! Physics shared by every predictor, each fact written once: which model family an op belongs
//! to, the roofline (an op's seconds at the GPU's compute and memory roofs), the sustainable
//! share of the compute roof on power-capped boards, and tiling and wave quantisation.

use serde::{Deserialize, Serialize};
use wavecast_gpu::Gpu;
use wavecast_ir::ops::GemmKind;
use wavecast_ir::{DType, Op, OpClass};

/// The five kernel families the shared measurements cover, each with its own learned model: a
/// coarsening of the IR's one classification ([`OpClass`]), which splits linear layers from
/// other matmuls and prices every memory-bound class as element-wise work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Linear,
    Bmm,
    Elementwise,
    Softmax,
    LayerNorm,
}

impl Family {
    pub const ALL: [Family; 5] = [Family::Linear, Family::Bmm, Family::Elementwise, Family::Softmax, Family::LayerNorm];

    pub fn of(op: &Op) -> Option<Family> {
        Some(match (op.class(), op) {
            (OpClass::Gemm, Op::Gemm(g)) if g.kind == GemmKind::Linear => Family::Linear,
            (class, _) if class.is_gemm_like() => Family::Bmm,
            (OpClass::Softmax, _) => Family::Softmax,
            // Batch and group norms (class `Norm` too) normalise channels, not rows: they move
            // data like element-wise kernels.
            (OpClass::Norm, Op::Norm(_)) => Family::LayerNorm,
            // Priced by `adapters::WithConv` (convolution model; RNNs through their kernels) or
            // by a communication model.
            (OpClass::Communication | OpClass::Conv | OpClass::Rnn, _) => return None,
            // Every other class is memory-bound: copies, embeddings, reductions, optimizer
            // steps, pooling, channel norms.
            _ => Family::Elementwise,
        })
    }

    /// The family of a measurement's class name (`Measurement::class_name`): the measurements
    /// name their classes as the families do.
    pub fn from_measurement_class(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// The family's name in reports and measurements (not its serde name: `layer_norm`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Family::Linear => "linear",
            Family::Bmm => "bmm",
            Family::Elementwise => "elementwise",
            Family::Softmax => "softmax",
            Family::LayerNorm => "layernorm",
        }
    }

    pub fn is_gemm(self) -> bool {
        matches!(self, Family::Linear | Family::Bmm)
    }
}

/// The two roofs an op runs under on one GPU: the peak FLOP/s of its class and dtype (tensor
/// cores where the dtype uses them) and the memory bandwidth. Every compute or memory time in
/// the predictors is work divided by one of these, through [`Roof::seconds`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Roof {
    pub flops_per_s: f64,
    pub bytes_per_s: f64,
}

impl Roof {
    pub fn of(class: OpClass, dtype: DType, gpu: &Gpu) -> Roof {
        Roof { flops_per_s: gpu.peak_flops(class, dtype), bytes_per_s: gpu.bandwidth() }
    }

    /// The roofs of `op`. A GEMM whose format quantizes its activations too (FP8, NVFP4)
    /// multiplies on that format's units: its compute roof is their peak, not the peak of the
    /// 16-bit dtype it writes (on a B200 an NVFP4 GEMM's roof is the FP4 peak, 4× the BF16
    /// one). Weight-only formats dequantize and multiply in 16 bits.
    pub fn of_op(op: &Op, gpu: &Gpu) -> Roof {
        let roof = Roof::of(op.class(), op.dtype(), gpu);
        match quantized_math_peak(op, gpu) {
            Some(flops_per_s) => Roof { flops_per_s, ..roof },
            None => roof,
        }
    }

    /// One SM's share of both roofs: what a thread block's tile is measured against.
    pub fn per_sm(self, gpu: &Gpu) -> Roof {
        let sms = sm_count(gpu);
        Roof { flops_per_s: self.flops_per_s / sms, bytes_per_s: self.bytes_per_s / sms }
    }

    /// The compute roof lowered to the `fraction` of its clock a board sustains (see
    /// [`sustained_clock_fraction`]); bandwidth is unaffected.
    pub fn at_clock_fraction(self, fraction: f64) -> Roof {
        Roof { flops_per_s: self.flops_per_s * fraction, ..self }
    }

    /// (seconds for `flops` at the compute roof, seconds for `bytes` at the memory roof).
    pub fn seconds(self, flops: f64, bytes: f64) -> (f64, f64) {
        (flops / self.flops_per_s, bytes / self.bytes_per_s)
    }

    /// The ridge point: the arithmetic intensity (FLOP per byte) where the two roofs meet.
    pub fn ridge(self) -> f64 {
        self.flops_per_s / self.bytes_per_s
    }
}

/// The roofline, the one place it is written: (seconds for `flops` at the GPU's peak for this
/// op class and dtype, seconds for `bytes` at full memory bandwidth). Every predictor's bound,
/// feature and baseline derives from it.
pub fn roofline(flops: f64, bytes: f64, class: OpClass, dtype: DType, gpu: &Gpu) -> (f64, f64) {
    Roof::of(class, dtype, gpu).seconds(flops, bytes)
}

/// [`roofline`] of one op: seconds at peak compute and at peak bandwidth.
pub fn roofline_terms(op: &Op, gpu: &Gpu) -> (f64, f64) {
    Roof::of_op(op, gpu).seconds(op.flops(), op.bytes())
}

/// Dense peak FLOP/s of the units a quantized GEMM multiplies on, when its format quantizes
/// the activations and the GPU has units for it (a GPU without them cannot run the format and
/// is refused before pricing; its 16-bit roof stands).
fn quantized_math_peak(op: &Op, gpu: &Gpu) -> Option<f64> {
    let Op::Gemm(g) = op else { return None };
    let q = g.quant.filter(|q| q.quantizes_activations())?;
    crate::sustained::peak_flops(gpu, q.format()).ok()
}

/// Board power a GPU needs per TFLOP/s of FP32 CUDA-core math to hold its boost clock, at a
/// 12 nm node, when nothing was fitted (W per TFLOP/s; fitted on T4 and P4 it comes out near 18).
pub const DEFAULT_WATTS_PER_TFLOP_12NM: f64 = 18.0;

/// The process node the power need is stated at (`watts_per_tflop_12nm`).
pub const REFERENCE_NODE_NM: f64 = 12.0;

/// The board's power budget per TFLOP/s of its FP32 peak (TDP / FP32 peak, W per TFLOP/s).
pub fn watts_per_fp32_tflop(gpu: &Gpu) -> f64 {
    gpu.tdp_w / gpu.peak_tflops.fp32
}

/// Fraction of its spec FP32 peak a GPU sustains under dense math. A board whose power budget
/// per TFLOP/s (TDP / FP32 peak) is below what its process node needs settles at a lower clock.
/// The need scales linearly with the node (energy per FLOP shrinks with feature size): an
/// explicit performance-per-watt prior whose one constant, `watts_per_tflop_12nm`, is fitted on
/// the power-capped training GPUs.
pub fn sustained_clock_fraction(gpu: &Gpu, watts_per_tflop_12nm: f64) -> f64 {
    let have = watts_per_fp32_tflop(gpu);
    let need = watts_per_tflop_12nm * gpu.process_nm / REFERENCE_NODE_NM;
    if !(have.is_finite() && need > 0.0) {
        return 1.0;
    }
    (have / need).min(1.0)
}

/// Lowest power limit wavecast takes, as a share of the board power: the lowest share any
/// catalog board enforces (nvidia-smi's minimum limit is 100 W on the 400 W A100 SXM4, 25 %;
/// 200 W on the 700 W H100 SXM, 29 %). Below it a figure is a typo, not a setting a board accepts.
pub const MIN_POWER_LIMIT_SHARE: f64 = 0.25;

/// Exponent of the clock's response to a power limit. Dynamic power is C·V²·f and across the
/// DVFS range the voltage tracks the clock (V ∝ f), so power goes as f³ and the sustained clock
/// under a limit P below the board power as (P / TDP)^(1/3). An estimate, not a bound, on both
/// sides: a kernel that draws less than the board power at full clock (attention, mid-size
/// GEMMs) slows less than this, while at deep caps (roughly below half the board power) the
/// voltage reaches its floor and the clock falls about as fast as the power, so there the
/// figure is optimistic. Leakage is left out.
pub const CLOCK_POWER_EXPONENT: f64 = 1.0 / 3.0;

/// Checks a power limit against the board: no higher than its board power (the catalog's
/// TDP, which the measured tables ran at) and no lower than [`MIN_POWER_LIMIT_SHARE`] of it.
/// The message is one line naming the GPU's range.
pub fn check_power_limit(gpu: &Gpu, limit_w: f64) -> Result<(), String> {
    let floor = MIN_POWER_LIMIT_SHARE * gpu.tdp_w;
    if !limit_w.is_finite() || limit_w > gpu.tdp_w || limit_w < floor {
        // The lowest limit shown rounded up, so a limit at the shown figure is inside the range.
        let lowest = (floor * 10.0).ceil() / 10.0;
        return Err(format!("power limit {limit_w} W is outside {}'s range {lowest}–{} W (board power; lowest limit {:.0} % of it)", gpu.id, gpu.tdp_w, MIN_POWER_LIMIT_SHARE * 100.0));
    }
    Ok(())
}

/// The clock a power-limited board sustains under compute-bound work, as a share of what it
/// sustains at its board power: (limit / TDP)^(1/3) ([`CLOCK_POWER_EXPONENT`]), 1 at or above
/// the board power. It composes with [`sustained_clock_fraction`], which says where a board
/// settles at its own board power (the P4/T4 prior); a limit moves the clock from there.
/// Memory-bound work keeps its speed: HBM's clock is not the SMs'.
pub fn power_limited_clock_fraction(gpu: &Gpu, limit_w: f64) -> f64 {
    if !(gpu.tdp_w > 0.0 && limit_w > 0.0) {
        return 1.0;
    }
    (limit_w / gpu.tdp_w).min(1.0).powf(CLOCK_POWER_EXPONENT)
}

/// SMs (compute units) of the GPU as a divisor: at least one.
pub fn sm_count(gpu: &Gpu) -> f64 {
    gpu.sm_count.max(1) as f64
}

/// Rows of the smallest tensor-core MMA a kernel issues: 64 for Hopper's wgmma and datacenter
/// Blackwell's tcgen05 (compute capability 9.x and 10.x), 16 for mma.sync elsewhere. A GEMM with
/// fewer rows, or a decode step's packed query heads, is padded to this, not to a library tile.
pub fn instruction_rows(gpu: &Gpu) -> f64 {
    match gpu.compute_major() {
        9 | 10 => 64.0,
        _ => 16.0,
    }
}

/// Fraction of a wave of `tiles` tiles over the SMs that does work (1 when tiles fill whole
/// waves; tiles / SMs for a partial single wave).
pub fn wave_utilization(tiles: f64, sms: f64) -> f64 {
    if tiles <= 0.0 {
        return 1.0;
    }
    tiles / ((tiles / sms).ceil() * sms)
}

/// Thread-block waves for `blocks` blocks with `per_sm` resident per SM: at least one.
pub fn waves(blocks: f64, sms: f64, per_sm: f64) -> f64 {
    (blocks / (sms * per_sm)).ceil().max(1.0)
}

/// Whole waves of an integer grid (a trace's launch): `blocks` over `per_wave` resident at once,
/// rounded up; the integer twin of [`waves`].
pub fn whole_waves(blocks: u64, per_wave: u64) -> u64 {
    blocks.div_ceil(per_wave.max(1))
}

/// Tiles of `tile` elements that cover `len` elements of one dimension (a partial tile counts
/// whole).
pub fn tiles_along(len: f64, tile: f64) -> f64 {
    (len / tile).ceil()
}

/// Output tiles of `batch` GEMMs of `m`×`n` cut into `tile_m`×`tile_n` tiles (partial tiles
/// count whole).
pub fn tiles(batch: f64, m: f64, n: f64, tile_m: f64, tile_n: f64) -> f64 {
    batch * tiles_along(m, tile_m) * tiles_along(n, tile_n)
}

/// The (batch, m, n, k) of a GEMM-like op; fused attention counts as its score matmul.
pub fn gemm_dims(op: &Op) -> Option<(f64, f64, f64, f64)> {
    match op {
        Op::Gemm(g) => Some((g.batch as f64, g.m as f64, g.n as f64, g.k as f64)),
        Op::Attention(a) => Some(((a.batch * a.heads) as f64, a.q_len as f64, a.kv_len as f64, a.head_dim as f64)),
        _ => None,
    }
}

/// Rows and row length of a vector op (element-wise ops are flat: one row).
pub fn vector_dims(op: &Op) -> (f64, f64) {
    match op {
        Op::Softmax(s) => (s.rows as f64, s.cols as f64),
        Op::Norm(n) => (n.rows as f64, n.cols as f64),
        Op::Elementwise(e) => (1.0, e.elements as f64),
        // Other memory-bound ops: one flat row of the elements their bytes hold.
        _ => (1.0, (op.bytes() / op.dtype().size_bytes() as f64).max(1.0)),
    }
}
