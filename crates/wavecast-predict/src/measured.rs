//! Kernel physics measured on GPUs, read from the committed measurements themselves
//! (`data/measurements/<gpu>/physics/`, see each folder's PROVENANCE.md) so the CSVs are the one
//! source of each figure. Every figure is kept relative to the measuring GPU's catalog peak. A
//! GPU with its own measurements reads its own curves (the share times its own peak gives back
//! the measured TFLOP/s); any other GPU reads the nearest measured GPU of its architecture, or
//! failing that the nearest measured GPU of any, and transfers the shares through its own peak
//! (nearest: the ladder's [`similarity`] of the two GPUs for 16-bit work).
//!
//! - Fused attention (cuDNN's, what PyTorch's SDPA and Transformer Engine run on Hopper) reaches
//!   a fraction of the dense 16-bit peak that grows with the sequence and the head dimension:
//!   on the H200 50 % forward / 33 % backward at 1K tokens, 61 % / 54 % from 32K on (head dim
//!   128); 37 % / 25 % rising to 46 % / 44 % at head dim 64.  Causal FLOPs count the masked
//!   half as not done.
//! - FP8 GEMMs (per-tensor scales) of training shapes reach a slightly smaller share of the FP8
//!   peak than BF16 GEMMs of the same shapes reach of the BF16 peak: [`fp8_gemm_efficiency_ratio`].
//!
//! `WAVECAST_MEASURED_WITHOUT` (catalog names, comma-separated) leaves GPUs' measurements out,
//! so a benchmark can show what the model predicted for a GPU before it had that GPU's data.

use crate::ladder::similarity;
use std::sync::OnceLock;
use wavecast_data::Precision;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::{DType, OpClass};

/// Environment variable naming measured GPUs to leave out (see the module's note).
pub const LEAVE_OUT_ENV: &str = "WAVECAST_MEASURED_WITHOUT";

/// One measured GPU's committed CSVs.
struct MeasuredFiles {
    /// Catalog id of the GPU they were measured on.
    gpu: &'static str,
    attention: &'static str,
    gemm: &'static str,
}

/// Every GPU with committed kernel measurements.
const MEASURED: [MeasuredFiles; 2] = [
    MeasuredFiles {
        gpu: "h100-sxm",
        attention: include_str!("../../../data/measurements/h100/physics/attention.csv"),
        gemm: include_str!("../../../data/measurements/h100/physics/gemm.csv"),
    },
    MeasuredFiles {
        gpu: "h200",
        attention: include_str!("../../../data/measurements/h200/physics/attention.csv"),
        gemm: include_str!("../../../data/measurements/h200/physics/gemm.csv"),
    },
];

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

/// One measured GPU's curves, read once.
pub struct MeasuredGpu {
    /// The catalog entry of the GPU they were measured on.
    pub gpu: Gpu,
    cudnn: Vec<AttentionPoint>,
    flash: Vec<AttentionPoint>,
    fp8_ratio: f64,
}

impl MeasuredGpu {
    fn read(files: &MeasuredFiles) -> MeasuredGpu {
        let gpu = Catalog::shipped().get(files.gpu).expect("the built-in catalog lists every GPU the shipped measurements were taken on").clone();
        MeasuredGpu {
            cudnn: read_attention_curve(files.attention, AttentionKernel::Cudnn.backend(), &gpu),
            flash: read_attention_curve(files.attention, AttentionKernel::SdpaFlash.backend(), &gpu),
            fp8_ratio: read_fp8_ratio(files.gemm, &gpu),
            gpu,
        }
    }

    /// The measured curve of `kernel`, per head dim sorted by sequence.
    pub fn attention_curve(&self, kernel: AttentionKernel) -> &[AttentionPoint] {
        match kernel {
            AttentionKernel::Cudnn => &self.cudnn,
            AttentionKernel::SdpaFlash => &self.flash,
        }
    }
}

/// Every measured GPU, read once.
pub fn measured_gpus() -> &'static [MeasuredGpu] {
    static ALL: OnceLock<Vec<MeasuredGpu>> = OnceLock::new();
    ALL.get_or_init(|| MEASURED.iter().map(MeasuredGpu::read).collect())
}

/// Catalog ids of the measured GPUs [`LEAVE_OUT_ENV`] leaves out (names it does not resolve
/// are ignored: it is a benchmark switch, not user input).
fn left_out() -> &'static [String] {
    static IDS: OnceLock<Vec<String>> = OnceLock::new();
    IDS.get_or_init(|| {
        let catalog = Catalog::shipped();
        std::env::var(LEAVE_OUT_ENV)
            .unwrap_or_default()
            .split(',')
            .filter_map(|name| catalog.get(name.trim()).ok().map(|g| g.id.clone()))
            .collect()
    })
}

/// The measurements `gpu` reads among `measured`, leaving out `without`: its own, else the
/// nearest of its architecture, else the nearest of any; none when every one is left out.
pub fn measurements_among<'a>(measured: &'a [MeasuredGpu], gpu: &Gpu, without: &[String]) -> Option<&'a MeasuredGpu> {
    let kept: Vec<&MeasuredGpu> = measured.iter().filter(|m| !without.contains(&m.gpu.id)).collect();
    if let Some(own) = kept.iter().find(|m| m.gpu.id == gpu.id) {
        return Some(own);
    }
    // The ladder's one measure of how unlike two GPUs are, for 16-bit work.
    let distance = |m: &MeasuredGpu| similarity(&m.gpu, gpu, Precision::Bf16);
    let nearest = |pool: Vec<&'a MeasuredGpu>| pool.into_iter().min_by(|a, b| distance(a).total_cmp(&distance(b)));
    let same_arch: Vec<&MeasuredGpu> = kept.iter().copied().filter(|m| m.gpu.architecture == gpu.architecture).collect();
    nearest(same_arch).or_else(|| nearest(kept))
}

/// The measurements `gpu`'s training kernels read (see [`measurements_among`]).
pub fn measurements_for(gpu: &Gpu) -> Option<&'static MeasuredGpu> {
    measurements_among(measured_gpus(), gpu, left_out())
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

/// The measured attention curve (cuDNN backend) `gpu` reads, per head dim sorted by sequence.
pub fn attention_curve(gpu: &Gpu) -> &'static [AttentionPoint] {
    attention_curve_of(AttentionKernel::Cudnn, gpu)
}

/// The measured curve of `kernel` that `gpu` reads (see [`attention_curve`]); empty when no
/// measurements are kept.
pub fn attention_curve_of(kernel: AttentionKernel, gpu: &Gpu) -> &'static [AttentionPoint] {
    measurements_for(gpu).map_or(&[], |m| m.attention_curve(kernel))
}

/// One backend's curve from `csv`, as shares of `gpu`'s peak. Where both GQA groups were
/// measured at a point, the grouped (8 query heads per KV head) row is used: the Llama-style
/// models trained today group their heads, and the two differ by a few percent.
fn read_attention_curve(csv: &str, backend: &str, gpu: &Gpu) -> Vec<AttentionPoint> {
    let peak = gpu.peak_flops(OpClass::FusedAttention, DType::Bf16) / 1e12;
    let mut lines = csv.lines();
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
            Some((group, q)) if g > *group as f64 => {
                *group = g as u64;
                *q = p
            }
            Some(_) => {}
            None => points.push((g as u64, p)),
        }
    }
    let mut curve: Vec<AttentionPoint> = points.into_iter().map(|(_, p)| p).collect();
    curve.sort_by(|a, b| a.head_dim.total_cmp(&b.head_dim).then(a.seq.total_cmp(&b.seq)));
    curve
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

/// Fraction of `gpu`'s dense 16-bit peak a fused attention kernel reaches over `kv_len` keys
/// per query with heads of `head_dim`, forward or backward: the measured curve `gpu` reads,
/// interpolated in log2(sequence) and linearly in head dim, clamped at the measured ends (below
/// 1K tokens the 1K figure, past 64K the 64K one; head dims past 128 take 128's).
pub fn attention_efficiency(gpu: &Gpu, head_dim: f64, kv_len: f64, backward: bool) -> f64 {
    attention_efficiency_of(AttentionKernel::Cudnn, gpu, head_dim, kv_len, backward)
}

/// [`attention_efficiency`] of `kernel`'s measured curve; 1 (no floor below the peak) when no
/// measurements are kept.
pub fn attention_efficiency_of(kernel: AttentionKernel, gpu: &Gpu, head_dim: f64, kv_len: f64, backward: bool) -> f64 {
    efficiency_on_curve(attention_curve_of(kernel, gpu), head_dim, kv_len, backward)
}

fn efficiency_on_curve(curve: &[AttentionPoint], head_dim: f64, kv_len: f64, backward: bool) -> f64 {
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
/// both gradients) of (FP8 share of the FP8 peak) / (BF16 share of the BF16 peak) on the GPU
/// `gpu` reads: how much of the peak ratio an FP8 GEMM turns into speed. 1 would be the full
/// ratio (and is what a GPU reads when no measurements are kept).
pub fn fp8_gemm_efficiency_ratio(gpu: &Gpu) -> f64 {
    measurements_for(gpu).map_or(1.0, |m| m.fp8_ratio)
}

fn read_fp8_ratio(csv: &str, gpu: &Gpu) -> f64 {
    let peaks = gpu.peak_flops(OpClass::Gemm, DType::Fp8) / gpu.peak_flops(OpClass::Gemm, DType::Bf16);
    let mut lines = csv.lines();
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(name: &str) -> Gpu {
        Catalog::shipped().get(name).unwrap().clone()
    }

    #[test]
    fn attention_curve_reads_both_head_dims_over_the_measured_sequences() {
        for m in measured_gpus() {
            let curve = m.attention_curve(AttentionKernel::Cudnn);
            assert!(curve.iter().any(|p| p.head_dim == 64.0), "{}", m.gpu.id);
            assert!(curve.iter().any(|p| p.head_dim == 128.0), "{}", m.gpu.id);
            assert!(curve.iter().all(|p| p.forward > 0.0 && p.forward < 1.0 && p.backward > 0.0 && p.backward < 1.0));
            assert_eq!(curve.iter().filter(|p| p.head_dim == 128.0).count(), 7, "{}: 1K..64K in powers of two", m.gpu.id);
        }
    }

    /// The H100's cuDNN forward at head dim 128 and 1K tokens, as its own attention.csv gives it
    /// (grouped heads), against the H200's: each GPU reads its own row.
    fn csv_forward_tflops(csv: &str, seq: &str) -> f64 {
        let mut lines = csv.lines();
        let header = lines.next().unwrap();
        lines
            .filter_map(|l| {
                let col = columns(header, l);
                (col("backend") == Some("cudnn") && col("head_dim") == Some("128") && col("seq") == Some(seq) && col("gqa_group") == Some("8"))
                    .then(|| number(col("fwd_tflops")).unwrap())
            })
            .next()
            .unwrap()
    }

    #[test]
    fn a_measured_gpu_reads_its_own_rows_and_another_reads_the_nearest_of_its_architecture() {
        let (h100, h200) = (gpu("h100-sxm"), gpu("h200"));
        let own = |g: &Gpu, csv: &str| {
            let tflops = csv_forward_tflops(csv, "1024");
            let read = attention_efficiency(g, 128.0, 1024.0, false) * g.peak_flops(OpClass::FusedAttention, DType::Bf16) / 1e12;
            (read, tflops)
        };
        let (read, file) = own(&h100, MEASURED[0].attention);
        assert!((read / file - 1.0).abs() < 1e-9, "H100 reads {read} TFLOP/s, its file says {file}");
        let (read, file) = own(&h200, MEASURED[1].attention);
        assert!((read / file - 1.0).abs() < 1e-9, "H200 reads {read} TFLOP/s, its file says {file}");
        let (a, b) = (csv_forward_tflops(MEASURED[0].attention, "1024"), csv_forward_tflops(MEASURED[1].attention, "1024"));
        assert!((a - b).abs() > 1.0, "the two files differ at this point: {a} vs {b}");
        assert_eq!(measurements_for(&h100).unwrap().gpu.id, "h100-sxm");
        assert_eq!(measurements_for(&h200).unwrap().gpu.id, "h200");
        // Without its own, the H100 reads the H200 (same architecture), and an H800 (an H100
        // with slower links) reads the H100; Ampere and Blackwell read the nearest of any.
        let all = measured_gpus();
        assert_eq!(measurements_among(all, &h100, &["h100-sxm".into()]).unwrap().gpu.id, "h200");
        assert_eq!(measurements_among(all, &gpu("h800"), &[]).unwrap().gpu.id, "h100-sxm");
        assert_eq!(measurements_among(all, &gpu("a100-sxm-80gb"), &[]).unwrap().gpu.id, "h100-sxm");
        assert_eq!(measurements_among(all, &gpu("b200"), &[]).unwrap().gpu.id, "h200");
        assert!(measurements_among(all, &h100, &["h100-sxm".into(), "h200".into()]).is_none());
    }

    #[test]
    fn attention_gets_more_efficient_with_sequence_and_head_dim_and_backward_is_slower() {
        let g = gpu("h200");
        let short = attention_efficiency(&g, 128.0, 1024.0, false);
        let long = attention_efficiency(&g, 128.0, 65536.0, false);
        assert!(long > short + 0.05, "{short} → {long}");
        assert!(attention_efficiency(&g, 64.0, 16384.0, false) < attention_efficiency(&g, 128.0, 16384.0, false));
        assert!(attention_efficiency(&g, 128.0, 2048.0, true) < attention_efficiency(&g, 128.0, 2048.0, false));
        // Clamped at the measured ends, and in between between its neighbours.
        assert_eq!(attention_efficiency(&g, 128.0, 256.0, false), short);
        assert_eq!(attention_efficiency(&g, 256.0, 1e6, false), long);
        let mid = attention_efficiency(&g, 96.0, 8192.0, true);
        let (a, b) = (attention_efficiency(&g, 64.0, 8192.0, true), attention_efficiency(&g, 128.0, 8192.0, true));
        assert!(mid > a.min(b) && mid < a.max(b));
        assert_eq!(efficiency_on_curve(&[], 128.0, 4096.0, false), 1.0, "no curve, no floor");
    }

    #[test]
    fn fp8_gemms_turn_most_but_not_all_of_the_peak_ratio_into_speed() {
        for g in ["h100-sxm", "h200"] {
            let r = fp8_gemm_efficiency_ratio(&gpu(g));
            assert!(r > 0.8 && r < 1.0, "{g}: {r}");
        }
    }
}
