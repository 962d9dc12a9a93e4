//! Kernel physics measured on a GPU, read from the committed measurements themselves
//! (`data/measurements/h200/physics/`, see its PROVENANCE.md) so the CSV is the one source of
//! each figure. Every figure is kept relative to the measuring GPU's catalog peak, so it
//! transfers to another GPU through that GPU's own peak.
//!
//! - Fused attention (cuDNN's, what PyTorch's SDPA and Transformer Engine run on Hopper) reaches
//!   a fraction of the dense 16-bit peak that grows with the sequence and the head dimension:
//!   50 % forward / 33 % backward at 1K tokens, 61 % / 54 % from 32K on (head dim 128); 37 % /
//!   25 % rising to 46 % / 44 % at head dim 64. Causal FLOPs count the masked half as not done.
//! - FP8 GEMMs (per-tensor scales) of training shapes reach a slightly smaller share of the FP8
//!   peak than BF16 GEMMs of the same shapes reach of the BF16 peak: [`fp8_gemm_efficiency_ratio`].

use std::sync::OnceLock;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::{DType, OpClass};

const ATTENTION_CSV: &str = include_str!("../../../data/measurements/h200/physics/attention.csv");
const GEMM_CSV: &str = include_str!("../../../data/measurements/h200/physics/gemm.csv");
/// The catalog id of the GPU the CSVs were measured on.
const MEASURED_ON: &str = "h200";
/// A fused-attention kernel family with a measured curve in `attention.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionKernel {
    /// cuDNN's fused kernel: what Transformer Engine (Megatron, NeMo) runs on Hopper.
    Cudnn,
    /// PyTorch SDPA's `flash` backend (FlashAttention-2), SDPA's first choice on Hopper: what a
    /// PyTorch-native stack calling `scaled_dot_product_attention` (torchtitan) runs.
    SdpaFlash,
}

impl AttentionKernel {
    fn backend(self) -> &'static str {
        match self {
            AttentionKernel::Cudnn => "cudnn",
            AttentionKernel::SdpaFlash => "flash",
        }
    }
}

/// One measured point of the attention curve: (head dim, sequence, forward, backward) with the
/// two efficiencies as fractions of the dense 16-bit peak.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttentionPoint {
    pub head_dim: f64,
    pub seq: f64,
    pub forward: f64,
    pub backward: f64,
}

fn measured_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        Catalog::builtin()
            .get(MEASURED_ON)
            .expect("the built-in catalog lists the GPU the shipped measurements were taken on")
            .clone()
    })
}

/// Columns of a CSV line by header name.
fn columns<'a>(header: &'a str, line: &'a str) -> impl Fn(&str) -> Option<&'a str> {
    let names: Vec<&str> = header.split(',').collect();
    let cells: Vec<&str> = line.split(',').collect();
    move |name| names.iter().position(|n| *n == name).and_then(|i| cells.get(i).copied())
}

fn number(cell: Option<&str>) -> Option<f64> {
    cell.and_then(|c| c.trim().parse::<f64>().ok()).filter(|v| v.is_finite() && *v > 0.0)
}

/// The measured attention curve (cuDNN backend), per head dim sorted by sequence. Where both
/// GQA groups were measured at a point, the grouped (8 query heads per KV head) row is used:
/// the Llama-style models trained today group their heads, and the two differ by a few percent.
pub fn attention_curve() -> &'static [AttentionPoint] {
    attention_curve_of(AttentionKernel::Cudnn)
}

/// The measured curve of `kernel` (see [`attention_curve`]).
pub fn attention_curve_of(kernel: AttentionKernel) -> &'static [AttentionPoint] {
    static CUDNN: OnceLock<Vec<AttentionPoint>> = OnceLock::new();
    static FLASH: OnceLock<Vec<AttentionPoint>> = OnceLock::new();
    let cell = match kernel {
        AttentionKernel::Cudnn => &CUDNN,
        AttentionKernel::SdpaFlash => &FLASH,
    };
    cell.get_or_init(|| read_attention_curve(kernel.backend()))
}

fn read_attention_curve(backend: &str) -> Vec<AttentionPoint> {
    {
        let peak = measured_gpu().peak_flops(OpClass::FusedAttention, DType::Bf16) / 1e12;
        let mut lines = ATTENTION_CSV.lines();
        let header = lines.next().unwrap_or_default();
        let mut points: Vec<(u64, AttentionPoint)> = Vec::new();
        for line in lines {
            let col = columns(header, line);
            if col("backend") != Some(backend) {
                continue;
            }
            let (Some(d), Some(s), Some(g), Some(f), Some(b)) = (
                number(col("head_dim")),
                number(col("seq")),
                number(col("gqa_group")),
                number(col("fwd_tflops")),
                number(col("bwd_tflops")),
            ) else {
                continue;
            };
            let p = AttentionPoint { head_dim: d, seq: s, forward: f / peak, backward: b / peak };
            match points.iter_mut().find(|(_, q)| q.head_dim == d && q.seq == s) {
                Some((group, q)) if g > *group as f64 => *q = p,
                Some(_) => {}
                None => points.push((g as u64, p)),
            }
        }
        let mut curve: Vec<AttentionPoint> = points.into_iter().map(|(_, p)| p).collect();
        curve.sort_by(|a, b| a.head_dim.total_cmp(&b.head_dim).then(a.seq.total_cmp(&b.seq)));
        curve
    }
}

/// Linear interpolation of `pts` (x, y) sorted by x at `x`, in log2(x), clamped to the ends.
fn interpolate_log2(pts: &[(f64, f64)], x: f64) -> Option<f64> {
    let first = pts.first()?;
    let last = pts.last()?;
    if x <= first.0 {
        return Some(first.1);
    }
    if x >= last.0 {
        return Some(last.1);
    }
    let i = pts.iter().position(|p| p.0 >= x)?;
    let (a, b) = (pts[i - 1], pts[i]);
    let t = (x.log2() - a.0.log2()) / (b.0.log2() - a.0.log2());
    Some(a.1 + t * (b.1 - a.1))
}

/// Fraction of the dense 16-bit peak a fused attention kernel reaches over `kv_len` keys per
/// query with heads of `head_dim`, forward or backward: the measured curve interpolated in
/// log2(sequence) and linearly in head dim, clamped at the measured ends (below 1K tokens the
/// 1K figure, past 64K the 64K one; head dims past 128 take 128's).
pub fn attention_efficiency(head_dim: f64, kv_len: f64, backward: bool) -> f64 {
    attention_efficiency_of(AttentionKernel::Cudnn, head_dim, kv_len, backward)
}

/// [`attention_efficiency`] of `kernel`'s measured curve.
pub fn attention_efficiency_of(kernel: AttentionKernel, head_dim: f64, kv_len: f64, backward: bool) -> f64 {
    let curve = attention_curve_of(kernel);
    let mut dims: Vec<f64> = curve.iter().map(|p| p.head_dim).collect();
    dims.dedup();
    let at_dim = |d: f64| {
        let pts: Vec<(f64, f64)> = curve
            .iter()
            .filter(|p| p.head_dim == d)
            .map(|p| (p.seq, if backward { p.backward } else { p.forward }))
            .collect();
        interpolate_log2(&pts, kv_len.max(1.0))
    };
    let per_dim: Vec<(f64, f64)> = dims.iter().filter_map(|&d| at_dim(d).map(|e| (d, e))).collect();
    let (Some(lo), Some(hi)) = (per_dim.first(), per_dim.last()) else {
        return 1.0;
    };
    let e = if head_dim <= lo.0 {
        lo.1
    } else if head_dim >= hi.0 {
        hi.1
    } else {
        let i = per_dim.iter().position(|p| p.0 >= head_dim).unwrap_or(per_dim.len() - 1);
        let (a, b) = (per_dim[i - 1], per_dim[i]);
        a.1 + (head_dim - a.0) / (b.0 - a.0) * (b.1 - a.1)
    };
    e.clamp(0.05, 1.0)
}

/// Median over the measured training GEMMs (Llama 1B/8B/70B layers, 4K–16K tokens, forward and
/// both gradients) of (FP8 share of the FP8 peak) / (BF16 share of the BF16 peak): how much of
/// the peak ratio an FP8 GEMM turns into speed. 1 would be the full ratio.
pub fn fp8_gemm_efficiency_ratio() -> f64 {
    static RATIO: OnceLock<f64> = OnceLock::new();
    *RATIO.get_or_init(|| {
        let gpu = measured_gpu();
        let peaks = gpu.peak_flops(OpClass::Gemm, DType::Fp8) / gpu.peak_flops(OpClass::Gemm, DType::Bf16);
        let mut lines = GEMM_CSV.lines();
        let header = lines.next().unwrap_or_default();
        let mut ratios: Vec<f64> = lines
            .filter_map(|line| {
                let col = columns(header, line);
                number(col("fp8_speedup")).map(|s| s / peaks)
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        if ratios.is_empty() {
            return 1.0;
        }
        ratios[ratios.len() / 2].clamp(0.1, 1.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attention_curve_reads_both_head_dims_over_the_measured_sequences() {
        let curve = attention_curve();
        assert!(curve.iter().any(|p| p.head_dim == 64.0));
        assert!(curve.iter().any(|p| p.head_dim == 128.0));
        assert!(curve.iter().all(|p| p.forward > 0.0 && p.forward < 1.0 && p.backward > 0.0 && p.backward < 1.0));
        assert_eq!(curve.iter().filter(|p| p.head_dim == 128.0).count(), 7, "1K..64K in powers of two");
    }

    #[test]
    fn attention_gets_more_efficient_with_sequence_and_head_dim_and_backward_is_slower() {
        let short = attention_efficiency(128.0, 1024.0, false);
        let long = attention_efficiency(128.0, 65536.0, false);
        assert!(long > short + 0.05, "{short} → {long}");
        assert!(attention_efficiency(64.0, 16384.0, false) < attention_efficiency(128.0, 16384.0, false));
        assert!(attention_efficiency(128.0, 2048.0, true) < attention_efficiency(128.0, 2048.0, false));
        // Clamped at the measured ends, and in between between its neighbours.
        assert_eq!(attention_efficiency(128.0, 256.0, false), short);
        assert_eq!(attention_efficiency(256.0, 1e6, false), long);
        let mid = attention_efficiency(96.0, 8192.0, true);
        let (a, b) = (attention_efficiency(64.0, 8192.0, true), attention_efficiency(128.0, 8192.0, true));
        assert!(mid > a.min(b) && mid < a.max(b));
    }

    #[test]
    fn fp8_gemms_turn_most_but_not_all_of_the_peak_ratio_into_speed() {
        let r = fp8_gemm_efficiency_ratio();
        assert!(r > 0.8 && r < 1.0, "{r}");
    }
}
