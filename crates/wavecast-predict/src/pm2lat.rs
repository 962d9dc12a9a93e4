//! PM2Lat (Le et al., arXiv 2603.00549) as a baseline — kernel-aware: kernels that serve the
//! same op differ a lot in speed, so each GEMM is keyed by the kernel configuration the library
//! launches and modelled per configuration (`../shared/docs/METHODS.md` §3; the paper's exact
//! functional forms are not public to us, so the forms below are our reconstruction):
//!
//! * **Configuration** of a GEMM: output tile, in-block reduction split (`sliced`) and grid
//!   split-K, read from the kernel name and grid in the data. Which configuration the library
//!   picks for a shape is learned from the measured rows ([`KernelTable`]: nearest rows in log
//!   dimensions, of the GPU itself or of its nearest measured relative for a new GPU).
//! * **Compute kernels**, per configuration: time as a function of FLOPs and wave count,
//!   t = c₀ + c₁·W/clock + c₂·W·SMs·f_tile/peak + c₃·bytes/bandwidth — a launch constant, a
//!   per-wave fixed cost, the wave-quantised work at peak and the memory traffic, so achieved
//!   throughput FLOPs/t rises with size and saturates, as PM2Lat's throughput curves do. Fitted
//!   per GPU and configuration by least squares on relative error with non-negative
//!   coefficients (so time never falls as FLOPs grow). A GPU without measurements has no
//!   per-configuration curves: it gets the family's fit pooled over the measured GPUs on the
//!   same hardware-normalised features — transfer through its peak FLOP/s, bandwidth and
//!   clock — evaluated at the waves of the configuration it is predicted to launch.
//! * **Memory-bound kernels** (element-wise, softmax, layer norm), per kernel function: linear
//!   regression on operation count and bytes, t = a·FLOPs/peak + b·bytes/bandwidth + c, per GPU;
//!   pooled over GPUs for a new one (mostly through bandwidth).
//!
//! Kernel time is predicted; isolated calls add the measured launch floor.

use crate::kernels::{gemm_tile, is_sliced, sgemm_tile, KernelTable};
use crate::physics::{gemm_dims, roofline, roofline_terms, sm_count, tiles, vector_dims, waves, Family};
use crate::registry::{Learned, LearnedKind};
use crate::bounds::kernel_at_least;
use crate::roofline::roofline_seconds;
use crate::sample::{family_floor, isolated_seconds};
use crate::{Context, Estimate, OpTime, Predictor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_ir::ops::{Attention, Gemm};
use wavecast_ir::{Op, OpClass};

/// The constant term's unit (1 µs), so every feature column is of similar size.
const MICROSECOND: f64 = 1e-6;
/// The configuration assumed when the table has nothing to say.
const DEFAULT_GEMM: GemmConfig = GemmConfig { cols: 128, rows: 64, sliced: false, split: 1 };

/// A GEMM kernel configuration as launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmConfig {
    /// Output tile (columns × rows, in kernel-name order).
    pub cols: u32,
    pub rows: u32,
    /// Reduction split across warps inside a block (`_sliced1x4_`).
    pub sliced: bool,
    /// Reduction split across blocks (grid split-K), 1 when none.
    pub split: u32,
}

impl GemmConfig {
    /// The configuration of a recorded kernel: tile from the name, split-K from how many more
    /// blocks the grid had than output tiles.
    pub fn of_kernel(name: &str, grid_blocks: Option<f64>, op: &Op) -> Option<GemmConfig> {
        let (cols, rows) = gemm_tile(name)?;
        let mut cfg = GemmConfig { cols, rows, sliced: is_sliced(name), split: 1 };
        if let Some(blocks) = grid_blocks {
            cfg.split = (blocks / cfg.tiles(op)?).round().clamp(1.0, 1024.0) as u32;
        }
        Some(cfg)
    }

    /// Output tiles of `op` under this configuration.
    fn tiles(&self, op: &Op) -> Option<f64> {
        let (b, m, n, _) = gemm_dims(op)?;
        Some(tiles(b, m, n, self.rows as f64, self.cols as f64))
    }

    /// What the kernel-choice table stores: `128x64`, `32x32_sliced`, `128x32_splitk5`.
    pub fn label(&self) -> String {
        let mut s = format!("{}x{}", self.cols, self.rows);
        if self.sliced {
            s.push_str("_sliced");
        }
        if self.split > 1 {
            s.push_str(&format!("_splitk{}", self.split));
        }
        s
    }

    pub fn from_label(label: &str) -> Option<GemmConfig> {
        let mut parts = label.split('_');
        let (cols, rows) = sgemm_tile(&format!("sgemm_{}", parts.next()?))?;
        let mut cfg = GemmConfig { cols, rows, sliced: false, split: 1 };
        for p in parts {
            match p {
                "sliced" => cfg.sliced = true,
                _ => cfg.split = p.strip_prefix("splitk")?.parse().ok().filter(|s| *s >= 1)?,
            }
        }
        Some(cfg)
    }

    /// The key fits are kept under: the split factor only as split or not, since each factor
    /// alone has few rows and the wave count already carries it.
    pub fn fit_key(&self) -> String {
        let base = GemmConfig { split: 1, ..*self }.label();
        if self.split > 1 {
            format!("{base}_splitk")
        } else {
            base
        }
    }
}

/// Features of a GEMM under `cfg`, in seconds: [1 µs, W/clock, W·SMs·f_tile/peak, bytes/BW].
/// Each grows with every dimension, so non-negative coefficients make time monotone in FLOPs.
pub fn gemm_features(op: &Op, gpu: &Gpu, cfg: GemmConfig) -> Option<Vec<f64>> {
    let (b, m, n, k) = gemm_dims(op)?;
    let sms = sm_count(gpu);
    let split = cfg.split.max(1) as f64;
    let blocks = cfg.tiles(op)? * split;
    let waves = waves(blocks, sms, 1.0);
    let tile_flops = 2.0 * cfg.rows as f64 * cfg.cols as f64 * k / split;
    // A split reduction writes and re-reads one partial output per split.
    let partials = if cfg.split > 1 { 2.0 * split * b * m * n * op.dtype().size_bytes() as f64 } else { 0.0 };
    let (compute, memory) = roofline(waves * sms * tile_flops, op.bytes() + partials, op.class(), op.dtype(), gpu);
    Some(vec![MICROSECOND, waves / (gpu.boost_clock_mhz.max(1.0) * 1e6), compute, memory])
}

/// Features of a memory-bound op, in seconds: [1 µs, FLOPs/peak, bytes/BW].
pub fn vector_features(op: &Op, gpu: &Gpu) -> Vec<f64> {
    let (compute, memory) = roofline_terms(op, gpu);
    vec![MICROSECOND, compute, memory]
}

/// The shape kernel choices are keyed on.
pub fn table_dims(op: &Op, family: Family) -> Vec<f64> {
    match (family, gemm_dims(op)) {
        (f, Some((b, m, n, k))) if f.is_gemm() => vec![b, m, n, k],
        (Family::Elementwise, _) => {
            let (rows, cols) = vector_dims(op);
            vec![rows * cols]
        }
        _ => {
            let (rows, cols) = vector_dims(op);
            vec![rows, cols]
        }
    }
}

/// One family's fitted kernel models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FamilyFits {
    /// Per measured GPU, per kernel key: coefficients on the family's features.
    pub per_gpu: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    /// Per measured GPU, all its kernels pooled: for a kernel too rare to have its own fit.
    pub per_gpu_pooled: BTreeMap<String, Vec<f64>>,
    /// Every kernel of every measured GPU pooled on the hardware-normalised features: what a
    /// GPU without measurements gets, evaluated at the waves of the configuration it launches.
    /// (Per-kernel fits pooled over GPUs transfer worse: each kernel is used by a different
    /// subset of GPUs, so its pooled fit inherits those GPUs' bias — e.g. 64×64 is mostly the
    /// power-capped P4's, which made full-power P100 predictions 30 % too slow.)
    pub pooled: Vec<f64>,
}

impl FamilyFits {
    /// Coefficients for kernel `key` on `gpu`: its own fit, else the GPU's pooled fit, else
    /// the cross-GPU one.
    fn coefficients(&self, gpu: &str, key: &str) -> Option<&[f64]> {
        let own = self.per_gpu.get(gpu).and_then(|m| m.get(key)).or_else(|| self.per_gpu_pooled.get(gpu));
        own.map(Vec::as_slice).or(Some(self.pooled.as_slice()).filter(|c| !c.is_empty()))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pm2Lat {
    pub families: BTreeMap<Family, FamilyFits>,
    /// Per family: which kernel the library launches for a shape.
    pub kernels: BTreeMap<Family, KernelTable>,
    /// Isolated-call floor per family (seconds).
    pub floors: BTreeMap<Family, f64>,
}

impl Pm2Lat {
    /// The GEMM configuration the library most likely launches for `op` on `gpu`.
    pub fn gemm_config(&self, op: &Op, family: Family, gpu: &Gpu) -> GemmConfig {
        let label = self.kernels.get(&family).and_then(|t| t.lookup(gpu, &table_dims(op, family)));
        label.and_then(GemmConfig::from_label).unwrap_or(DEFAULT_GEMM)
    }

    /// Kernel seconds of a GEMM-family op run with configuration `cfg`.
    pub fn gemm_seconds(&self, op: &Op, gpu: &Gpu, cfg: GemmConfig) -> Option<f64> {
        let family = Family::of(op).filter(|f| f.is_gemm())?;
        let c = self.families.get(&family)?.coefficients(&gpu.id, &cfg.fit_key())?;
        Some(kernel_at_least(dot(c, &gemm_features(op, gpu, cfg)?), op, gpu))
    }

    /// Predicted kernel seconds of `op` on `gpu`; `None` for communication or a family
    /// without fits.
    pub fn kernel_seconds(&self, op: &Op, gpu: &Gpu) -> Option<f64> {
        if let Op::Attention(a) = op {
            return self.attention_seconds(a, op, gpu);
        }
        let family = Family::of(op)?;
        if family.is_gemm() {
            return self.gemm_seconds(op, gpu, self.gemm_config(op, family, gpu));
        }
        let key = self.kernels.get(&family).and_then(|t| t.lookup(gpu, &table_dims(op, family))).unwrap_or("");
        let c = self.families.get(&family)?.coefficients(&gpu.id, key)?;
        Some(kernel_at_least(dot(c, &vector_features(op, gpu)), op, gpu))
    }

    /// Fused attention has no measurements: the efficiency the BMM model gives its P·V product
    /// (batch·heads products of q × kv by kv × d) is applied to the whole op's roofline.
    fn attention_seconds(&self, a: &Attention, op: &Op, gpu: &Gpu) -> Option<f64> {
        let pv = Op::Gemm(Gemm::bmm(a.batch.checked_mul(a.heads)?, a.q_len, a.kv_len, a.head_dim, a.dtype).ok()?);
        let efficiency = roofline_seconds(&pv, gpu) / self.kernel_seconds(&pv, gpu)?;
        Some(roofline_seconds(op, gpu) / efficiency.clamp(1e-3, 1.0))
    }

    fn estimate(&self, op: &Op, gpu: &Gpu, isolated: bool) -> Estimate {
        if op.class() == OpClass::Communication {
            return Estimate::Unpriced("pm2lat prices communication with the comm model".into());
        }
        let Some(t) = self.kernel_seconds(op, gpu).filter(|t| t.is_finite() && *t > 0.0) else {
            return Estimate::Unpriced(format!("pm2lat has no model for {}", op.class()));
        };
        if !isolated {
            return Estimate::Time(OpTime::exact(t));
        }
        Estimate::Time(OpTime::exact(isolated_seconds(t, family_floor(&self.floors, op))))
    }
}

fn dot(c: &[f64], x: &[f64]) -> f64 {
    c.iter().zip(x).map(|(a, b)| a * b).sum()
}

impl Learned for Pm2Lat {
    const KIND: LearnedKind = LearnedKind::Pm2Lat;
}

impl Predictor for Pm2Lat {
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
    use wavecast_ir::DType;

    #[test]
    fn reads_configurations_from_kernels_and_grids() {
        let op = Op::Gemm(Gemm::linear(126, 50_000, 72, false, DType::Fp32).unwrap());
        // 4 × 3 output tiles of 32 × 32; a grid of 60 blocks means split-K 5.
        let cfg = GemmConfig::of_kernel("volta_sgemm_32x32_sliced1x4_tn", Some(60.0), &op).unwrap();
        assert_eq!(cfg, GemmConfig { cols: 32, rows: 32, sliced: true, split: 5 });
        assert_eq!(cfg.label(), "32x32_sliced_splitk5");
        assert_eq!(GemmConfig::from_label(&cfg.label()), Some(cfg));
        assert_eq!(cfg.fit_key(), "32x32_sliced_splitk");
        let plain = GemmConfig::of_kernel("ampere_sgemm_128x64_tn", Some(1.0), &op).unwrap();
        assert_eq!((plain.label(), plain.fit_key()), ("128x64".to_string(), "128x64".to_string()));
        assert_eq!(GemmConfig::from_label("128x64_bogus"), None);
        assert_eq!(GemmConfig::of_kernel("vectorized_elementwise_kernel", None, &op), None);
    }

    #[test]
    fn features_count_waves() {
        let cat = Catalog::builtin();
        let v100 = cat.get("v100-pcie").unwrap(); // 80 SMs
        let op = Op::Gemm(Gemm::bmm(30, 300, 64, 200, DType::Fp32).unwrap());
        let f = gemm_features(&op, v100, GemmConfig { cols: 64, rows: 128, sliced: false, split: 1 }).unwrap();
        // 30 · 3 · 4 = 360 tiles → 5 waves.
        assert!((f[1] * v100.boost_clock_mhz * 1e6 - 5.0).abs() < 1e-9);
        let split = gemm_features(&op, v100, GemmConfig { cols: 64, rows: 128, sliced: false, split: 2 }).unwrap();
        assert!((split[1] * v100.boost_clock_mhz * 1e6 - 9.0).abs() < 1e-9);
        assert!(split[3] > f[3]);
    }
}
