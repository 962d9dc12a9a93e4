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

use crate::kernels::{sgemm_tile, Entry, KernelTable};
use crate::mlp::{Dense, Mlp, Rng, TrainConfig};
use crate::physics::{gemm_dims, vector_dims, Family};
use crate::roofline::roofline_seconds;
use crate::sample::{balanced, isolated_floors, kernel_dominated, Sample, LAUNCH_GAP_S};
use crate::{Estimate, OpTime, Predictor};
use candle_core::Tensor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_ir::ops::{Attention, Gemm};
use wavecast_ir::{Op, OpClass};

/// Training rows per family (NeuSight itself used every row; this bounds training time).
const MAX_ROWS: usize = 20_000;
/// Rows per GPU and family kept in the tile table (a larger table adds little accuracy).
const TABLE_ROWS: usize = 2_000;
/// Element-wise ops all run one vectorised kernel; a few hundred rows per GPU show it.
const VECTOR_TABLE_ROWS: usize = 300;
/// Offsets added to the network's two outputs so that a freshly initialised network (outputs
/// near 0) starts at a useful utilization (σ(1) − σ(−2)/W ≈ 0.61 at W = 1) instead of at 0,
/// where the floor below would leave no gradient.
const ALPHA0: f64 = -2.0;
const GAMMA0: f64 = 1.0;
/// Lowest utilization used in training. NeuSight lets util reach 0 and then clamps the time to
/// 0; a floor keeps times finite and positive (and the loss differentiable).
const UTIL_FLOOR: f64 = 0.02;
/// At prediction, util is kept at or above the utilization that all but this fraction of the
/// family's training kernels reached — what the wavecast predictor does with its learned
/// ratio: an input unlike any training row (e.g. a GPU whose L2 share per SM is outside the
/// training GPUs') cannot make a kernel slower than the slowest kernels ever measured.
const UTIL_FLOOR_QUANTILE: f64 = 0.001;
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
    /// The tile of a cuBLAS SGEMM kernel name (first number: output columns).
    pub fn of_sgemm(name: &str) -> Option<Tile> {
        let (cols, rows) = sgemm_tile(name)?;
        Some(Tile::Gemm { rows: rows as f64, cols: cols as f64 })
    }

    /// Table label of a tile, in kernel-name order (`128x64`) or element count (`512`).
    fn label(self) -> String {
        match self {
            Tile::Gemm { rows, cols } => format!("{cols}x{rows}"),
            Tile::Vector(t) => format!("{t}"),
        }
    }

    fn from_label(label: &str, gemm: bool) -> Option<Tile> {
        if gemm {
            Tile::of_sgemm(&format!("sgemm_{label}"))
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
    let sms = gpu.sm_count.max(1) as f64;
    let (blocks, tile_flops, tile_bytes) = match tile {
        Tile::Gemm { rows, cols } => {
            let (b, m, n, k) = gemm_dims(op)?;
            let e = op.dtype().size_bytes() as f64;
            (b * (m / rows).ceil() * (n / cols).ceil(), 2.0 * rows * cols * k, e * (rows * k + k * cols + rows * cols))
        }
        Tile::Vector(t) => {
            if family.is_gemm() {
                return None;
            }
            let (rows, cols) = vector_dims(op);
            let elements = (rows * cols).max(1.0);
            // Softmax and layer norm give each row to one block (t = H).
            let blocks = if family == Family::Elementwise { (elements / t).ceil() } else { rows };
            (blocks.max(1.0), op.flops() / elements * t, op.bytes() / elements * t)
        }
    };
    Some(Waves { blocks, waves: (blocks / sms).ceil().max(1.0), tile_flops, tile_bytes })
}

/// Roofline time of the wave-padded work, W·F_w / R with R = min(P, AI·BW): every wave slot
/// computes a full tile, and the op's bytes stretch by the same slots-per-block ratio.
pub fn ideal_seconds(op: &Op, gpu: &Gpu, w: &Waves) -> f64 {
    let slots = w.waves * gpu.sm_count.max(1) as f64;
    let compute = slots * w.tile_flops / gpu.peak_flops(op.class(), op.dtype());
    let memory = slots / w.blocks.max(1.0) * op.bytes() / gpu.bandwidth();
    compute.max(memory)
}

fn log2(v: f64) -> f32 {
    v.max(1e-30).log2() as f32
}

/// NeuSight's four inputs: tile FLOPs against per-SM peak, tile bytes against per-SM bandwidth,
/// and the whole-wave footprint against each SM's share of DRAM and of L2.
pub fn features(op: &Op, gpu: &Gpu, w: &Waves) -> Vec<f32> {
    let sms = gpu.sm_count.max(1) as f64;
    let per_sm_peak = gpu.peak_flops(op.class(), op.dtype()) / sms;
    let per_sm_bw = gpu.bandwidth() / sms;
    let dram = gpu.memory_gb * 1e9 / sms;
    let l2 = gpu.l2_cache_mb * 1e6 / sms;
    let footprint = w.waves * w.tile_bytes;
    vec![log2(w.tile_flops / per_sm_peak), log2(w.tile_bytes / per_sm_bw), log2(footprint / dram), log2(footprint / l2)]
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// util = σ(γ) − σ(α)/W from the network's outputs (o_α, o_γ), at least `floor`.
pub fn utilization(out: &[f32], waves: f64, floor: f64) -> f64 {
    let (a, g) = (out.first().copied().unwrap_or(0.0) as f64, out.get(1).copied().unwrap_or(0.0) as f64);
    (sigmoid(g + GAMMA0) - sigmoid(a + ALPHA0) / waves).max(floor.max(UTIL_FLOOR))
}

/// NeuSight's training loss, SMAPE |t − p| / (t + p), on the time implied by the outputs.
/// Targets per row: [1/W, ideal µs, measured µs].
fn smape_loss(out: &Tensor, targets: &Tensor) -> candle_core::Result<Tensor> {
    let alpha = candle_nn::ops::sigmoid(&(out.narrow(1, 0, 1)? + ALPHA0)?)?;
    let gamma = candle_nn::ops::sigmoid(&(out.narrow(1, 1, 1)? + GAMMA0)?)?;
    let inv_waves = targets.narrow(1, 0, 1)?;
    let ideal = targets.narrow(1, 1, 1)?;
    let measured = targets.narrow(1, 2, 1)?;
    let util = gamma.sub(&alpha.mul(&inv_waves)?)?.maximum(UTIL_FLOOR as f32)?;
    let predicted = ideal.div(&util)?;
    predicted.sub(&measured)?.abs()?.div(&predicted.add(&measured)?)?.mean_all()
}

/// The tile of a training row, from its recorded kernel: the SGEMM name for GEMMs, elements
/// per block rounded up to a power of two for element-wise ops, the row length otherwise.
pub fn measured_tile(s: &Sample) -> Option<Tile> {
    match s.family {
        Family::Linear | Family::Bmm => Tile::of_sgemm(s.kernel.as_deref()?),
        Family::Elementwise => {
            let (rows, cols) = vector_dims(&s.op);
            let per_block = (rows * cols / s.grid_blocks.filter(|b| *b >= 1.0)?).ceil().max(1.0);
            Some(Tile::Vector(per_block.log2().ceil().exp2()))
        }
        Family::Softmax | Family::LayerNorm => Some(Tile::Vector(vector_dims(&s.op).1)),
    }
}

/// The shape the tile table is keyed on: GEMMs by (batch, m, n, k), element-wise ops by size.
fn table_dims(op: &Op, family: Family) -> Vec<f64> {
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
        Net(Mlp { mean: long(&m.mean), std: long(&m.std), lo: long(&m.lo), hi: long(&m.hi), layers })
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
    pub fn fit(samples: &[Sample], seed: u64, progress: Option<&indicatif::ProgressBar>) -> Result<NeuSight, String> {
        let floors = isolated_floors(samples);
        let mut tiles = BTreeMap::new();
        for fam in [Family::Linear, Family::Bmm, Family::Elementwise] {
            // Every row shows which kernel ran, fast or not, so the table uses them all.
            let entries: Vec<Entry> = samples
                .iter()
                .filter(|s| s.family == fam)
                .filter_map(|s| Some(Entry { gpu: &s.gpu, dims: table_dims(&s.op, fam), label: measured_tile(s)?.label() }))
                .collect();
            if !entries.is_empty() {
                let per_gpu = if fam.is_gemm() { TABLE_ROWS } else { VECTOR_TABLE_ROWS };
                tiles.insert(fam, KernelTable::build(entries, per_gpu, seed ^ fam as u64));
            }
        }
        let usable = kernel_dominated(samples);
        let mut families = BTreeMap::new();
        for fam in Family::ALL {
            if let Some(model) = fit_family(&usable, fam, seed)? {
                families.insert(fam, model);
            }
            if let Some(p) = progress {
                p.tick();
            }
        }
        if families.is_empty() {
            return Err("no usable training rows".into());
        }
        Ok(NeuSight { families, tiles, floors })
    }

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
        let floor = Family::of(op).and_then(|f| self.floors.get(&f)).copied().unwrap_or(0.0);
        Estimate::Time(OpTime::exact((t + LAUNCH_GAP_S).max(floor)))
    }
}

/// Trains one family's network on its kernel-dominated rows (`None` when it has none).
fn fit_family(usable: &[&Sample], fam: Family, seed: u64) -> Result<Option<FamilyModel>, String> {
    let mut rows: Vec<&Sample> = usable.iter().copied().filter(|s| s.family == fam).collect();
    let mut rng = Rng::new(seed ^ ((fam as u64) << 8));
    rng.shuffle(&mut rows);
    let mut x = Vec::new();
    let mut targets = Vec::new();
    for s in balanced(rows, MAX_ROWS) {
        let Some(w) = measured_tile(s).and_then(|t| decompose(&s.op, fam, &s.gpu, t)) else { continue };
        x.push(features(&s.op, &s.gpu, &w));
        let ideal_us = ideal_seconds(&s.op, &s.gpu, &w) * 1e6;
        targets.push(vec![(1.0 / w.waves) as f32, ideal_us as f32, (s.kernel_s() * 1e6) as f32]);
    }
    if x.is_empty() {
        return Ok(None);
    }
    // Far smaller than NeuSight's 8 × 512 network (which would not fit the shipped-weights
    // budget); the learning rate was chosen on leave-one-GPU-out error of the training rows.
    let cfg = TrainConfig { hidden: 48, depth: 3, epochs: 40, batch: 256, lr: 5e-4, seed };
    let mlp = Mlp::train_with_loss(&x, &targets, 2, smape_loss, cfg, None)?;
    let mut util: Vec<f64> = targets.iter().map(|t| t[1] as f64 / t[2] as f64).collect();
    util.sort_by(f64::total_cmp);
    let util_floor = util[((util.len() - 1) as f64 * UTIL_FLOOR_QUANTILE) as usize];
    Ok(Some(FamilyModel { net: Net::new(mlp), util_floor }))
}

impl Predictor for NeuSight {
    fn name(&self) -> &str {
        "neusight"
    }
    fn predict(&self, op: &Op, gpu: &Gpu) -> Estimate {
        self.estimate(op, gpu, false)
    }
    fn predict_isolated(&self, op: &Op, gpu: &Gpu) -> Estimate {
        self.estimate(op, gpu, true)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{Elementwise, EwKind, Norm, NormKind, Softmax};
    use wavecast_ir::DType;

    /// A small synthetic training set on three GPUs: GEMMs at ~70 % of the wave-padded
    /// roofline of their kernel's tile, vector ops near bandwidth, plus a launch floor.
    pub(crate) fn synthetic_samples() -> Vec<Sample> {
        let cat = Catalog::builtin();
        let mut rng = Rng::new(3);
        let mut out = Vec::new();
        for id in ["t4", "v100-pcie", "a100-pcie-40gb"] {
            let gpu = cat.get(id).unwrap().clone();
            for i in 0..160 {
                let d = |rng: &mut Rng| 16 + (rng.uniform() * 2000.0) as u64;
                let (m, n, k) = (d(&mut rng), d(&mut rng), d(&mut rng));
                let (op, family, kernel) = match i % 5 {
                    0 => (Op::Gemm(Gemm::linear(m, k, n, true, DType::Fp32).unwrap()), Family::Linear, "volta_sgemm_128x64_tn"),
                    1 => (Op::Gemm(Gemm::bmm(1 + i % 7, m, k, n, DType::Fp32).unwrap()), Family::Bmm, "volta_sgemm_64x64_nn"),
                    2 => (Op::Elementwise(Elementwise::new(EwKind::Add, m * n, 2, DType::Fp32)), Family::Elementwise, "vectorized_elementwise_kernel"),
                    3 => (Op::Softmax(Softmax::new(m, n, DType::Fp32)), Family::Softmax, "softmax_warp_forward"),
                    _ => (Op::Norm(Norm::new(NormKind::LayerNorm, m, n, DType::Fp32)), Family::LayerNorm, "vectorized_layer_norm_kernel"),
                };
                let kernel_s = 3e-6 + roofline_seconds(&op, &gpu) / 0.7;
                let grid = if family == Family::Elementwise { Some((m * n).div_ceil(512) as f64) } else { None };
                out.push(Sample { op, family, gpu: gpu.clone(), latency_s: kernel_s + LAUNCH_GAP_S + 2e-5 * rng.uniform(), kernel: Some(kernel.into()), grid_blocks: grid, model_shaped: false });
            }
        }
        out
    }

    fn probe_ops() -> Vec<Op> {
        vec![
            Op::Gemm(Gemm::linear(4096, 1024, 4096, true, DType::Fp32).unwrap()),
            Op::Gemm(Gemm::linear(7, 13, 9, false, DType::Fp32).unwrap()),
            Op::Gemm(Gemm::bmm(96, 512, 64, 512, DType::Bf16).unwrap()),
            Op::Elementwise(Elementwise::new(EwKind::Gelu, 1 << 24, 1, DType::Fp32)),
            Op::Elementwise(Elementwise::new(EwKind::Copy, 1000, 1, DType::Bf16)),
            Op::Softmax(Softmax::new(4096, 1024, DType::Fp32)),
            Op::Norm(Norm::new(NormKind::RmsNorm, 8192, 4096, DType::Bf16)),
            Op::Attention(Attention { batch: 4, heads: 32, kv_heads: 8, q_len: 2048, kv_len: 2048, head_dim: 128, causal: true, dtype: DType::Bf16, backward: false }),
        ]
    }

    fn quick_model() -> NeuSight {
        NeuSight::fit(&synthetic_samples(), 5, None).unwrap()
    }

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
    fn training_tiles_come_from_kernel_names_and_grids() {
        let s = synthetic_samples();
        let linear = s.iter().find(|s| s.family == Family::Linear).unwrap();
        assert_eq!(measured_tile(linear), Some(Tile::Gemm { rows: 64.0, cols: 128.0 }));
        let ew = s.iter().find(|s| s.family == Family::Elementwise).unwrap();
        assert_eq!(measured_tile(ew), Some(Tile::Vector(512.0)));
        let sm = s.iter().find(|s| s.family == Family::Softmax).unwrap();
        assert_eq!(measured_tile(sm), Some(Tile::Vector(vector_dims(&sm.op).1)));
        assert_eq!(Tile::from_label(&Tile::Gemm { rows: 32.0, cols: 128.0 }.label(), true), Some(Tile::Gemm { rows: 32.0, cols: 128.0 }));
    }

    #[test]
    fn never_faster_than_the_roofline_and_serialises_exactly() {
        let model = quick_model();
        let cat = Catalog::builtin();
        let text = serde_json::to_string(&model).unwrap();
        let loaded: NeuSight = serde_json::from_str(&text).unwrap();
        for id in ["t4", "a100-pcie-40gb", "h100-sxm", "l4", "mi210"] {
            let gpu = cat.get(id).unwrap();
            for op in probe_ops() {
                let t = model.kernel_seconds(&op, gpu).unwrap();
                assert!(t.is_finite() && t >= roofline_seconds(&op, gpu), "{id} {}: {t}", op.describe());
                if let Some(fam) = Family::of(&op).filter(|_| !matches!(op, Op::Attention(_))) {
                    let w = decompose(&op, fam, gpu, model.tile_for(&op, fam, gpu)).unwrap();
                    assert!(t >= ideal_seconds(&op, gpu, &w) * (1.0 - 1e-12));
                }
                let again = loaded.kernel_seconds(&op, gpu).unwrap();
                assert_eq!(again, t, "{id} {} after reload", op.describe());
                let Estimate::Time(iso) = model.predict_isolated(&op, gpu) else { panic!("unpriced") };
                assert!(iso.seconds >= t + LAUNCH_GAP_S - 1e-15);
            }
        }
    }

    #[test]
    fn communication_is_unpriced() {
        let model = quick_model();
        let cat = Catalog::builtin();
        let op = Op::Comm(wavecast_ir::ops::Comm { kind: wavecast_ir::ops::CommKind::AllReduce, bytes: 1e6, group: 4, dtype: DType::Bf16, overlappable: false });
        assert!(matches!(model.predict(&op, cat.get("h100-sxm").unwrap()), Estimate::Unpriced(_)));
    }
}
