//! Fitting the PM2Lat baseline (`wavecast_predict::pm2lat`): kernel-choice tables from the
//! recorded kernels and grids, and per GPU and kernel configuration a non-negative relative
//! least-squares fit of time on the configuration's features.

use wavecast_stats::fit::nonnegative_fit;
use crate::samples::Floors;
use std::collections::BTreeMap;
use wavecast_predict::kernels::{kernel_function, Entry, KernelTable};
use wavecast_predict::physics::Family;
use wavecast_predict::pm2lat::{gemm_features, table_dims, vector_features, FamilyFits, GemmConfig, Pm2Lat};
use wavecast_predict::sample::Sample;

/// Rows per GPU kept in the kernel-choice tables.
const GEMM_TABLE_ROWS: usize = 2_000;
const VECTOR_TABLE_ROWS: usize = 500;
/// Fewest rows a fit needs; rarer kernels use their family's pooled fit.
const MIN_ROWS: usize = 20;

/// A measured op with the key of the kernel it ran and its features.
struct Row<'a> {
    sample: &'a Sample,
    key: String,
    x: Vec<f64>,
}

/// The training row of a sample (`None` when its kernel is unreadable).
fn training_row(s: &Sample) -> Option<Row<'_>> {
    let name = s.kernel.as_deref()?;
    let (key, x) = if s.family.is_gemm() {
        let cfg = GemmConfig::of_kernel(name, s.grid_blocks, &s.op)?;
        (cfg.fit_key(), gemm_features(&s.op, &s.gpu, cfg)?)
    } else {
        (kernel_function(name), vector_features(&s.op, &s.gpu))
    };
    Some(Row { sample: s, key, x })
}

/// Fit of `rows` when there are enough of them.
fn fit_rows(rows: &[&Row]) -> Option<Vec<f64>> {
    if rows.len() < MIN_ROWS {
        return None;
    }
    let (x, y): (Vec<Vec<f64>>, Vec<f64>) = rows.iter().map(|r| (r.x.clone(), r.sample.kernel_s())).unzip();
    let c = nonnegative_fit(&x, &y);
    c.iter().any(|v| *v > 0.0).then_some(c)
}

/// Per GPU and kernel key, per GPU pooled, and pooled over every GPU.
fn fit_family(rows: &[Row]) -> FamilyFits {
    let mut by_gpu_key: BTreeMap<(&str, &str), Vec<&Row>> = BTreeMap::new();
    let mut by_gpu: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by_gpu_key.entry((r.sample.gpu.id.as_str(), r.key.as_str())).or_default().push(r);
        by_gpu.entry(r.sample.gpu.id.as_str()).or_default().push(r);
    }
    let mut fits = FamilyFits::default();
    for ((gpu, key), v) in &by_gpu_key {
        if let Some(c) = fit_rows(v) {
            fits.per_gpu.entry(gpu.to_string()).or_default().insert(key.to_string(), c);
        }
    }
    fits.per_gpu_pooled = by_gpu.iter().filter_map(|(g, v)| Some((g.to_string(), fit_rows(v)?))).collect();
    fits.pooled = fit_rows(&rows.iter().collect::<Vec<_>>()).unwrap_or_default();
    fits
}

/// Fits on `samples` (microbenchmarks).
pub fn fit(samples: &[Sample]) -> Result<Pm2Lat, String> {
    let host = Floors::of(samples);
    let usable = host.kernel_dominated(samples);
    let mut families = BTreeMap::new();
    let mut kernels = BTreeMap::new();
    for fam in Family::ALL {
        let labelled: Vec<Entry> = samples.iter().filter(|s| s.family == fam).filter_map(|s| table_entry(s, fam)).collect();
        if !labelled.is_empty() {
            let rows = if fam.is_gemm() { GEMM_TABLE_ROWS } else { VECTOR_TABLE_ROWS };
            kernels.insert(fam, KernelTable::build(labelled, rows, fam as u64));
        }
        let rows: Vec<Row> = usable.iter().filter(|s| s.family == fam).filter_map(|s| training_row(s)).collect();
        let fits = fit_family(&rows);
        if !fits.pooled.is_empty() {
            families.insert(fam, fits);
        }
    }
    if families.is_empty() {
        return Err("no usable training rows".into());
    }
    Ok(Pm2Lat { families, kernels, floors: host.all })
}

/// The kernel-choice table row of a training sample.
fn table_entry(s: &Sample, family: Family) -> Option<Entry<'_>> {
    let name = s.kernel.as_deref()?;
    let label = if family.is_gemm() { GemmConfig::of_kernel(name, s.grid_blocks, &s.op)?.label() } else { kernel_function(name) };
    Some(Entry { gpu: &s.gpu, dims: table_dims(&s.op, family), label })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neusight::tests::synthetic_samples;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{Attention, Elementwise, EwKind, Gemm, Norm, NormKind, Softmax};
    use wavecast_ir::{DType, Op};
    use wavecast_predict::roofline::roofline_seconds;
    use wavecast_predict::{Context, Estimate, Predictor};

    fn model() -> Pm2Lat {
        fit(&synthetic_samples()).unwrap()
    }

    #[test]
    fn time_grows_with_flops_for_a_fixed_kernel() {
        let m = model();
        let cat = Catalog::builtin();
        for id in ["t4", "a100-pcie-40gb", "h100-sxm", "l4"] {
            let gpu = cat.get(id).unwrap();
            for cfg in [GemmConfig { cols: 128, rows: 64, sliced: false, split: 1 }, GemmConfig { cols: 32, rows: 32, sliced: true, split: 4 }] {
                let mut last = 0.0;
                for step in 1..60u64 {
                    let op = Op::Gemm(Gemm::linear(17 * step, 64 + 40 * step, 100 + 31 * step, false, DType::Fp32).unwrap());
                    let t = m.gemm_seconds(&op, gpu, cfg).unwrap();
                    assert!(t >= last, "{id} {cfg:?} step {step}: {t} < {last}");
                    last = t;
                }
            }
        }
    }

    #[test]
    fn prices_every_op_above_the_roofline_and_reloads_identically() {
        let m = model();
        let loaded: Pm2Lat = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        let cat = Catalog::builtin();
        let ops = [
            Op::Gemm(Gemm::linear(4096, 1024, 4096, true, DType::Fp32).unwrap()),
            Op::Gemm(Gemm::bmm(96, 512, 64, 512, DType::Bf16).unwrap()),
            Op::Elementwise(Elementwise::new(EwKind::Copy, 1000, 1, DType::Bf16)),
            Op::Softmax(Softmax::new(4096, 1024, DType::Fp32)),
            Op::Norm(Norm::new(NormKind::RmsNorm, 8192, 4096, DType::Bf16)),
            Op::Attention(Attention { batch: 4, heads: 32, kv_heads: 8, q_len: 2048, kv_len: 2048, head_dim: 128, causal: true, dtype: DType::Bf16, backward: true, v_head_dim: None, shared_kv: false, window: None }),
        ];
        for id in ["t4", "v100-pcie", "h100-sxm", "mi210"] {
            let gpu = cat.get(id).unwrap();
            for op in &ops {
                let t = m.kernel_seconds(op, gpu).unwrap();
                assert!(t.is_finite() && t >= roofline_seconds(op, gpu), "{id} {}", op.describe());
                let again = loaded.kernel_seconds(op, gpu).unwrap();
                assert_eq!(again, t, "{id} {} after reload", op.describe());
            }
        }
        let comm = Op::Comm(wavecast_ir::ops::Comm::new(wavecast_ir::ops::CommKind::AllReduce, 1e6, 2, DType::Bf16, false));
        assert!(matches!(m.predict(&comm, cat.get("t4").unwrap(), &Context::IN_MODEL), Estimate::Unpriced(_)));
    }
}
