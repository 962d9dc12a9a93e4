//! NeuSight (Lee et al., ASPLOS'25) as a baseline, following the method as published and as its
//! public code runs it (`../shared/docs/NEUSIGHT.md` §1.3–1.5):
//!
//! * An op is cut into tiles, one per thread block: a GEMM output tile of t_m × t_n with the
//!   whole reduction, or t elements of a vector op (t = H for softmax and layer norm). Tiles run
//!   in waves of one block per SM: W = ⌈blocks / SMs⌉.
//! * A small MLP per op family predicts, from four per-SM-normalised tile features, two numbers
//!   (α, γ) that give the fraction of the roofline throughput the kernel reaches:
//!   util = σ(γ) − σ(α)/W, and T = W·F_w / (R·util) — the roofline time of the wave-padded work
//!   divided by a utilization below 1, so a prediction is never faster than that roofline.
//!   Trained, as NeuSight is, with SMAPE on the implied time.
//! * Training tiles come from the recorded kernels (names and grids); at prediction the tile is
//!   looked up in a table of training rows ([`KernelTable`]).
//!
//! Where we depart from NeuSight, and why:
//! * the tile lookup uses log dimensions among the rows of the GPU itself or of its nearest
//!   measured relative, instead of raw Euclidean distance over dimensions and GPU figures (in
//!   which FLOP/s decides, so every new GPU got A100 tiles);
//! * a 3 × 48 network trained for 40 epochs on at most 20k rows per family, instead of 8 × 512
//!   for 100 epochs on all rows (training time and shipped size);
//! * targets are kernel times of kernel-dominated rows, and isolated calls add the measured
//!   launch floor (see [`crate::sample`]) — NeuSight fits the isolated latency directly;
//! * util is kept above the lowest utilization seen in training (see
//!   [`UTIL_FLOOR_QUANTILE`]), where NeuSight lets it reach 0 and clamps the time to 0.

use crate::kernels::{gemm_tile, KernelTable};
use crate::mlp::{Dense, Mlp, MlpParameters};
use crate::physics::{gemm_dims, roofline, sm_count, tiles, tiles_along, vector_dims, waves, Family, Roof};
use crate::registry::{Learned, LearnedKind};
use crate::roofline::roofline_seconds;
use crate::sample::{family_floor, isolated_seconds};
use crate::{Context, Estimate, OpTime, Predictor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_ir::ops::{Attention, Gemm};
use wavecast_ir::{Op, OpClass};

/// Offsets added to the network's two outputs so that a freshly initialised network (outputs
/// near 0) starts at a useful utilization (σ(1) − σ(−2)/W ≈ 0.61 at W = 1) instead of at 0,
/// where the floor below would leave no gradient.
pub const ALPHA0: f64 = -2.0;
pub const GAMMA0: f64 = 1.0;
/// Lowest utilization used in training. NeuSight lets util reach 0 and then clamps the time to
/// 0; a floor keeps times finite and positive (and the loss differentiable).
pub const UTIL_FLOOR: f64 = 0.02;
/// At prediction, util is kept at or above the utilization that all but this fraction of the
/// family's training kernels reached — what the wavecast predictor does with its learned
/// ratio: an input unlike any training row (e.g. a GPU whose L2 share per SM is outside the
/// training GPUs') cannot make a kernel slower than the slowest kernels ever measured.
pub const UTIL_FLOOR_QUANTILE: f64 = 0.001;
/// Tiles used when the table has nothing to say (the most common FP32 choices).
const DEFAULT_GEMM_TILE: Tile = Tile::Gemm { rows: 64.0, cols: 128.0 };
const DEFAULT_VECTOR_TILE: f64 = 512.0;

/// Work per thread block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tile {
    /// An output tile of `rows` × `cols` computed over the whole reduction.
    Gemm { rows: f64, cols: f64 },
    /// Elements of a vector op.
    Vector(f64),
}

impl Tile {
    /// The tile of a GEMM kernel name, cuBLAS SGEMM or Tensile/hipBLASLt (see
    /// [`gemm_tile`]; first number: output columns).
    pub fn of_kernel(name: &str) -> Option<Tile> {
        let (cols, rows) = gemm_tile(name)?;
        Some(Tile::Gemm { rows: rows as f64, cols: cols as f64 })
    }

    /// Table label of a tile, in kernel-name order (`128x64`) or element count (`512`).
    pub fn label(self) -> String {
        match self {
            Tile::Gemm { rows, cols } => format!("{cols}x{rows}"),
            Tile::Vector(t) => format!("{t}"),
        }
    }

    pub fn from_label(label: &str, gemm: bool) -> Option<Tile> {
        if gemm {
            Tile::of_kernel(&format!("sgemm_{label}"))
        } else {
            label.parse().ok().filter(|t: &f64| *t >= 1.0).map(Tile::Vector)
        }
    }
}

/// Thread blocks and waves of an op for one tile on one GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waves {
    pub blocks: f64,
    pub waves: f64,
    /// FLOPs and bytes of one tile (f_t and m_t).
    pub tile_flops: f64,
    pub tile_bytes: f64,
}

/// Cuts `op` into tiles of `tile` and counts waves on `gpu`; `None` when the tile kind does
/// not fit the op (a GEMM tile for a vector op).
pub fn decompose(op: &Op, family: Family, gpu: &Gpu, tile: Tile) -> Option<Waves> {
    let (blocks, tile_flops, tile_bytes) = match tile {
        Tile::Gemm { rows, cols } => {
            let (b, m, n, k) = gemm_dims(op)?;
            let e = op.dtype().size_bytes() as f64;
            (tiles(b, m, n, rows, cols), 2.0 * rows * cols * k, e * (rows * k + k * cols + rows * cols))
        }
        Tile::Vector(t) => {
            if family.is_gemm() {
                return None;
            }
            let (rows, cols) = vector_dims(op);
            let elements = (rows * cols).max(1.0);
            // Softmax and layer norm give each row to one block (t = H).
            let blocks = if family == Family::Elementwise { tiles_along(elements, t) } else { rows };
            (blocks.max(1.0), op.flops() / elements * t, op.bytes() / elements * t)
        }
    };
    Some(Waves { blocks, waves: waves(blocks, sm_count(gpu), 1.0), tile_flops, tile_bytes })
}

/// Roofline time of the wave-padded work, W·F_w / R with R = min(P, AI·BW): every wave slot
/// computes a full tile, and the op's bytes stretch by the same slots-per-block ratio.
pub fn ideal_seconds(op: &Op, gpu: &Gpu, w: &Waves) -> f64 {
    let slots = w.waves * sm_count(gpu);
    let (compute, memory) = roofline(slots * w.tile_flops, slots / w.blocks.max(1.0) * op.bytes(), op.class(), op.dtype(), gpu);
    compute.max(memory)
}

fn log2(v: f64) -> f32 {
    v.max(1e-30).log2() as f32
}

/// NeuSight's four inputs: tile FLOPs against per-SM peak, tile bytes against per-SM bandwidth,
/// and the whole-wave footprint against each SM's share of DRAM and of L2.
pub fn features(op: &Op, gpu: &Gpu, w: &Waves) -> Vec<f32> {
    let sms = sm_count(gpu);
    let (tile_compute, tile_memory) = Roof::of_op(op, gpu).per_sm(gpu).seconds(w.tile_flops, w.tile_bytes);
    let dram = gpu.memory_gb * 1e9 / sms;
    let l2 = gpu.l2_cache_mb * 1e6 / sms;
    let footprint = w.waves * w.tile_bytes;
    vec![log2(tile_compute), log2(tile_memory), log2(footprint / dram), log2(footprint / l2)]
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// util = σ(γ) − σ(α)/W from the network's outputs (o_α, o_γ), at least `floor`.
pub fn utilization(out: &[f32], waves: f64, floor: f64) -> f64 {
    let (a, g) = (out.first().copied().unwrap_or(0.0) as f64, out.get(1).copied().unwrap_or(0.0) as f64);
    (sigmoid(g + GAMMA0) - sigmoid(a + ALPHA0) / waves).max(floor.max(UTIL_FLOOR))
}

/// The shape the tile table is keyed on: GEMMs by (batch, m, n, k), element-wise ops by size.
pub fn table_dims(op: &Op, family: Family) -> Vec<f64> {
    match gemm_dims(op).filter(|_| family.is_gemm()) {
        Some((b, m, n, k)) => vec![b, m, n, k],
        None => {
            let (rows, cols) = vector_dims(op);
            vec![rows * cols]
        }
    }
}

/// A family's network, stored with 5 significant digits per parameter: through
/// `serde_json::Value` an f32 would print with 17 digits and triple the weights file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "ShortMlp", into = "ShortMlp")]
pub struct Net(pub Mlp);

impl Net {
    /// Rounds `mlp` exactly as saving and loading would, so a model predicts the same before
    /// and after it is written.
    pub fn new(mlp: Mlp) -> Net {
        Net::from(ShortMlp::from(Net(mlp)))
    }
}

#[derive(Serialize, Deserialize)]
struct ShortMlp {
    mean: Vec<f64>,
    std: Vec<f64>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    layers: Vec<ShortDense>,
}

#[derive(Serialize, Deserialize)]
struct ShortDense {
    weight: Vec<Vec<f64>>,
    bias: Vec<f64>,
}

fn short(v: &[f32]) -> Vec<f64> {
    v.iter().map(|x| format!("{x:.4e}").parse().unwrap_or(*x as f64)).collect()
}

fn long(v: &[f64]) -> Vec<f32> {
    v.iter().map(|x| *x as f32).collect()
}

impl From<Net> for ShortMlp {
    fn from(Net(m): Net) -> ShortMlp {
        let layers = m.layers.iter().map(|l| ShortDense { weight: l.weight.iter().map(|r| short(r)).collect(), bias: short(&l.bias) }).collect();
        ShortMlp { mean: short(&m.mean), std: short(&m.std), lo: short(&m.lo), hi: short(&m.hi), layers }
    }
}

impl From<ShortMlp> for Net {
    fn from(m: ShortMlp) -> Net {
        let layers = m.layers.iter().map(|l| Dense { weight: l.weight.iter().map(|r| long(r)).collect(), bias: long(&l.bias) }).collect();
        Net(Mlp::new(MlpParameters { mean: long(&m.mean), std: long(&m.std), lo: long(&m.lo), hi: long(&m.hi), layers }))
    }
}

/// One family's model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyModel {
    /// The network giving (o_α, o_γ) from the four tile features.
    pub net: Net,
    /// Lowest utilization predicted (see [`UTIL_FLOOR_QUANTILE`]).
    pub util_floor: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeuSight {
    pub families: BTreeMap<Family, FamilyModel>,
    /// Tile tables of the families whose tile is not fixed by the shape.
    pub tiles: BTreeMap<Family, KernelTable>,
    /// Isolated-call floor per family (seconds).
    pub floors: BTreeMap<Family, f64>,
}

impl NeuSight {
    /// The tile `op` most likely runs with on `gpu`.
    pub fn tile_for(&self, op: &Op, family: Family, gpu: &Gpu) -> Tile {
        if matches!(family, Family::Softmax | Family::LayerNorm) {
            return Tile::Vector(vector_dims(op).1.max(1.0));
        }
        let found = self.tiles.get(&family).and_then(|t| t.lookup(gpu, &table_dims(op, family)));
        match found.and_then(|l| Tile::from_label(l, family.is_gemm())) {
            Some(t) => t,
            None if family.is_gemm() => DEFAULT_GEMM_TILE,
            None => Tile::Vector(DEFAULT_VECTOR_TILE),
        }
    }

    /// Predicted kernel seconds of `op` on `gpu`; `None` for communication or a family
    /// without a trained model.
    pub fn kernel_seconds(&self, op: &Op, gpu: &Gpu) -> Option<f64> {
        if let Op::Attention(a) = op {
            return self.attention_seconds(a, op, gpu);
        }
        let family = Family::of(op)?;
        let model = self.families.get(&family)?;
        let w = decompose(op, family, gpu, self.tile_for(op, family, gpu))?;
        let util = utilization(&model.net.0.predict_all(&features(op, gpu, &w)), w.waves, model.util_floor);
        Some(ideal_seconds(op, gpu, &w) / util)
    }

    /// Fused attention has no measurements: the utilization the BMM model gives its P·V product
    /// (batch·heads products of q × kv by kv × d) is applied to the whole op's roofline.
    fn attention_seconds(&self, a: &Attention, op: &Op, gpu: &Gpu) -> Option<f64> {
        let pv = Op::Gemm(Gemm::bmm(a.batch.checked_mul(a.heads)?, a.q_len, a.kv_len, a.head_dim, a.dtype).ok()?);
        let util = roofline_seconds(&pv, gpu) / self.kernel_seconds(&pv, gpu)?;
        Some(roofline_seconds(op, gpu) / util.clamp(UTIL_FLOOR, 1.0))
    }

    fn estimate(&self, op: &Op, gpu: &Gpu, isolated: bool) -> Estimate {
        if op.class() == OpClass::Communication {
            return Estimate::Unpriced("neusight prices communication with the comm model".into());
        }
        let Some(t) = self.kernel_seconds(op, gpu).filter(|t| t.is_finite()) else {
            return Estimate::Unpriced(format!("neusight has no model for {}", op.class()));
        };
        if !isolated {
            return Estimate::Time(OpTime::exact(t));
        }
        Estimate::Time(OpTime::exact(isolated_seconds(t, family_floor(&self.floors, op))))
    }
}

impl Learned for NeuSight {
    const KIND: LearnedKind = LearnedKind::NeuSight;
}

impl Predictor for NeuSight {
    fn name(&self) -> &str {
        Self::KIND.name()
    }
    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        self.estimate(op, gpu, ctx.isolated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{Elementwise, EwKind, Softmax};
    use wavecast_ir::DType;

    #[test]
    fn counts_tiles_and_waves() {
        let cat = Catalog::builtin();
        let v100 = cat.get("v100-pcie").unwrap(); // 80 SMs
        let op = Op::Gemm(Gemm::bmm(3, 300, 64, 200, DType::Fp32).unwrap());
        let w = decompose(&op, Family::Bmm, v100, Tile::Gemm { rows: 128.0, cols: 64.0 }).unwrap();
        // 3 · ⌈300/128⌉ · ⌈200/64⌉ = 3 · 3 · 4 tiles, one wave of 80 SMs.
        assert_eq!((w.blocks, w.waves), (36.0, 1.0));
        assert_eq!(w.tile_flops, 2.0 * 128.0 * 64.0 * 64.0);
        assert_eq!(w.tile_bytes, 4.0 * (128.0 * 64.0 + 64.0 * 64.0 + 128.0 * 64.0));
        let big = Op::Gemm(Gemm::bmm(30, 300, 64, 200, DType::Fp32).unwrap());
        assert_eq!(decompose(&big, Family::Bmm, v100, Tile::Gemm { rows: 128.0, cols: 64.0 }).unwrap().waves, 5.0); // 360 / 80
        let add = Op::Elementwise(Elementwise::new(EwKind::Add, 1_000_000, 2, DType::Fp32));
        let w = decompose(&add, Family::Elementwise, v100, Tile::Vector(512.0)).unwrap();
        assert_eq!((w.blocks, w.waves, w.tile_bytes), (1954.0, 25.0, 12.0 * 512.0));
        let sm = Op::Softmax(Softmax::new(1000, 768, DType::Fp32));
        let w = decompose(&sm, Family::Softmax, v100, Tile::Vector(768.0)).unwrap();
        assert_eq!((w.blocks, w.waves), (1000.0, 13.0));
        assert_eq!(decompose(&add, Family::Linear, v100, Tile::Vector(512.0)), None);
        assert_eq!(decompose(&add, Family::Linear, v100, Tile::Gemm { rows: 1.0, cols: 1.0 }), None);
    }

    #[test]
    fn tile_labels_round_trip() {
        let t = Tile::Gemm { rows: 32.0, cols: 128.0 };
        assert_eq!(Tile::from_label(&t.label(), true), Some(t));
        assert_eq!(Tile::from_label(&Tile::Vector(512.0).label(), false), Some(Tile::Vector(512.0)));
    }
}
