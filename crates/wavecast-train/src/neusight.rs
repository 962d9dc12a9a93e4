//! Fitting the NeuSight baseline (`wavecast_predict::neusight`): tile tables from the recorded
//! kernels, and per family an MLP giving (α, γ) trained, as NeuSight is, with SMAPE on the time
//! the utilization σ(γ) − σ(α)/W implies.

use crate::mlp::{train_with_loss, TrainConfig};
use crate::samples::{balanced, Floors};
use candle_core::Tensor;
use wavecast_stats::{quantile_sorted, sorted};
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use wavecast_predict::kernels::{Entry, KernelTable};
use wavecast_predict::mlp::Rng;
use wavecast_predict::neusight::{
    decompose, features, ideal_seconds, table_dims, FamilyModel, Net, NeuSight, Tile, ALPHA0, GAMMA0, UTIL_FLOOR, UTIL_FLOOR_QUANTILE,
};
use wavecast_predict::physics::{vector_dims, Family};
use wavecast_predict::sample::Sample;

/// Training rows per family (NeuSight itself used every row; this bounds training time).
const MAX_ROWS: usize = 20_000;
/// Rows per GPU and family kept in the tile table (a larger table adds little accuracy).
const TABLE_ROWS: usize = 2_000;
/// Element-wise ops all run one vectorised kernel; a few hundred rows per GPU show it.
const VECTOR_TABLE_ROWS: usize = 300;

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

/// The tile of a training row, from its recorded kernel: the GEMM kernel's name (cuBLAS or Tensile) for GEMMs, elements
/// per block rounded up to a power of two for element-wise ops, the row length otherwise.
pub fn measured_tile(s: &Sample) -> Option<Tile> {
    match s.family {
        Family::Linear | Family::Bmm => Tile::of_kernel(s.kernel.as_deref()?),
        Family::Elementwise => {
            let (rows, cols) = vector_dims(&s.op);
            let per_block = (rows * cols / s.grid_blocks.filter(|b| *b >= 1.0)?).ceil().max(1.0);
            Some(Tile::Vector(per_block.log2().ceil().exp2()))
        }
        Family::Softmax | Family::LayerNorm => Some(Tile::Vector(vector_dims(&s.op).1)),
    }
}

/// Fits on `samples` (microbenchmarks): tile tables from every row, networks from the
/// kernel-dominated ones.
pub fn fit(samples: &[Sample], seed: u64, progress: Option<&ProgressBar>) -> Result<NeuSight, String> {
    let host = Floors::of(samples);
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
    let usable = host.kernel_dominated(samples);
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
    Ok(NeuSight { families, tiles, floors: host.all })
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
    let mlp = train_with_loss(&x, &targets, 2, smape_loss, cfg, None)?;
    let util: Vec<f64> = targets.iter().map(|t| t[1] as f64 / t[2] as f64).collect();
    let util_floor = quantile_sorted(&sorted(&util), UTIL_FLOOR_QUANTILE).unwrap_or(0.0);
    Ok(Some(FamilyModel { net: Net::new(mlp), util_floor }))
}


#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{Attention, Elementwise, EwKind, Gemm, Norm, NormKind, Softmax};
    use wavecast_ir::{DType, Op};
    use wavecast_predict::physics::tiles_along;
    use wavecast_predict::roofline::roofline_seconds;
    use wavecast_predict::sample::LAUNCH_GAP_S;
    use wavecast_predict::{Context, Estimate, Predictor};

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
                let grid = if family == Family::Elementwise { Some(tiles_along((m * n) as f64, 512.0)) } else { None };
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
            Op::Attention(Attention { batch: 4, heads: 32, kv_heads: 8, q_len: 2048, kv_len: 2048, head_dim: 128, causal: true, dtype: DType::Bf16, backward: false, v_head_dim: None, shared_kv: false, window: None }),
        ]
    }

    fn quick_model() -> NeuSight {
        fit(&synthetic_samples(), 5, None).unwrap()
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
                let Estimate::Time(iso) = model.predict(&op, gpu, &Context::ISOLATED) else { panic!("unpriced") };
                assert!(iso.seconds >= t + LAUNCH_GAP_S - 1e-15);
            }
        }
    }

    #[test]
    fn communication_is_unpriced() {
        let model = quick_model();
        let cat = Catalog::builtin();
        let op = Op::Comm(wavecast_ir::ops::Comm::new(wavecast_ir::ops::CommKind::AllReduce, 1e6, 4, DType::Bf16, false));
        assert!(matches!(model.predict(&op, cat.get("h100-sxm").unwrap(), &Context::IN_MODEL), Estimate::Unpriced(_)));
    }
}
