//! Carries every kernel of a trace from the GPU it was recorded on to another GPU.
//!
//! Per kernel, one of three paths:
//! - **predictor** (hybrid only): the launching op is a GEMM, BMM or attention whose shapes were
//!   recorded. Libraries pick different kernels on different GPUs, so the op's measured time is
//!   multiplied by `predicted(dest) / predicted(origin)` from a per-op predictor — Habitat's way
//!   of using its MLPs, with whatever predictor wavecast names (`DEFAULT_PREDICTOR` unless told).
//! - **wave**: wave scaling of the kernel itself (`wavecast_predict::wave_scaling`), γ from
//!   measured counters if the trace has them, else from the op's analytic FLOPs and bytes, else
//!   a prior by kernel family.
//! - **unchanged**: communication kernels (NCCL): the interconnect is not modelled here, so their
//!   time is carried over as is, and reported.

use crate::aten;
use crate::classify::{dtype_from_kernel, family_by_name, refine_dtype, Family};
use crate::model::{Kernel, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use wavecast_gpu::occupancy::KernelResources;
use wavecast_gpu::Gpu;
use wavecast_ir::{DType, Op, OpClass};
use wavecast_predict::kernels::{macro_tile, MacroTile};
use wavecast_predict::physics::gemm_dims;
use wavecast_predict::wave_scaling::{gamma, ridge, scale_kernel, Launch, WaveForm, Work};
use wavecast_predict::Predictor;

/// γ for library GEMM/conv kernels whose op shapes were not recorded: such kernels sit well
/// right of the ridge (Habitat's γ = R/2x gives 0.1–0.3 for x = 2–5 R). A prior, not a fit.
pub const GAMMA_UNKNOWN_COMPUTE: f64 = 0.2;

/// How γ is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GammaSource {
    /// Counters if present, else analytic intensity against the dtype-aware ridge, else a prior.
    Wavecast,
    /// Habitat without counter metrics: γ = 1 for every kernel (its default for all but the
    /// largest ops), FP32 counters when the trace has them.
    Habitat,
}

pub struct Options<'p> {
    pub form: WaveForm,
    pub gamma: GammaSource,
    /// Predictor for kernel-varying ops (the hybrid); `None` wave-scales every kernel.
    pub predictor: Option<&'p dyn Predictor>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalePath {
    Predictor,
    Wave,
    Unchanged,
}

/// One kernel's result.
#[derive(Debug, Clone, Serialize)]
pub struct KernelScaled {
    pub kernel: usize,
    pub family: &'static str,
    pub origin_us: f64,
    pub dest_us: f64,
    pub gamma: Option<f64>,
    pub path: ScalePath,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ClassTotal {
    pub class: String,
    pub kernels: usize,
    pub origin_us: f64,
    pub dest_us: f64,
}

/// The trace carried to one destination.
#[derive(Debug, Clone, Serialize)]
pub struct Scaling {
    pub origin: String,
    pub dest: String,
    pub form: WaveForm,
    pub predictor: Option<String>,
    /// Sum of kernel durations: measured on the origin, predicted on the destination.
    pub origin_us: f64,
    pub dest_us: f64,
    /// Per family, largest origin time first.
    pub classes: Vec<ClassTotal>,
    /// Kernels per path.
    pub paths: BTreeMap<ScalePath, usize>,
    /// Caveats with the number of kernels each concerns.
    pub notes: BTreeMap<String, usize>,
    #[serde(skip)]
    pub kernels: Vec<KernelScaled>,
}

/// The op a kernel's launching aten call maps to, with the dtype its kernel name reveals.
fn kernel_op(trace: &Trace, k: &Kernel, cache: &mut HashMap<usize, Option<Op>>) -> Option<Op> {
    let i = k.op?;
    let op = cache.entry(i).or_insert_with(|| aten::to_ir(&trace.ops[i])).clone()?;
    Some(with_dtype(op, &k.name))
}

fn with_dtype(op: Op, kernel: &str) -> Op {
    match op {
        Op::Gemm(mut g) => {
            g.dtype = refine_dtype(g.dtype, kernel);
            Op::Gemm(g)
        }
        other => other,
    }
}

fn family_of(trace: &Trace, k: &Kernel, op: Option<&Op>) -> Family {
    match op {
        Some(o) => Family::Op(o.class()),
        None => family_by_name(trace.op_of(k).map(|o| &*o.name), &k.name),
    }
}

/// The launch the trace recorded, or for a Tensile/hipBLASLt GEMM kernel (ROCm traces carry no
/// grid) the one its name implies: one workgroup per macro-tile of the op's output and split.
fn launch_of(k: &Kernel, op: Option<&Op>) -> Option<Launch> {
    if k.grid.is_none() {
        return tensile_launch(k, op?);
    }
    let threads = k.threads_per_block()?;
    Some(Launch {
        blocks: k.blocks()?,
        resources: KernelResources {
            threads_per_block: threads.min(u32::MAX as u64) as u32,
            registers_per_thread: k.registers_per_thread.unwrap_or(0),
            shared_mem_bytes: k.shared_mem_bytes.unwrap_or(0).min(u32::MAX as u64) as u32,
        },
    })
}

fn tensile_launch(k: &Kernel, op: &Op) -> Option<Launch> {
    let tile = macro_tile(&k.name).filter(|_| !MacroTile::stream_k(&k.name))?;
    let (batch, rows, cols, _) = gemm_dims(op)?;
    let blocks = tile.workgroups(batch, rows, cols);
    // Tensile's default workgroup when the name does not give one.
    let threads = tile.workgroup.unwrap_or(256);
    (blocks.is_finite() && blocks >= 1.0 && blocks < u64::MAX as f64).then_some(Launch {
        blocks: blocks as u64,
        resources: KernelResources { threads_per_block: threads, registers_per_thread: 0, shared_mem_bytes: 0 },
    })
}

fn kernel_gamma(k: &Kernel, op: Option<&Op>, family: Family, work: Work, dest: &Gpu, source: GammaSource) -> f64 {
    if let Some(m) = k.metrics {
        let w = match source {
            GammaSource::Habitat => Work { class: OpClass::Elementwise, dtype: DType::Fp32 },
            GammaSource::Wavecast => work,
        };
        return gamma(m.flops, m.dram_bytes, ridge(dest, w));
    }
    match (source, op) {
        (GammaSource::Habitat, _) => 1.0,
        (GammaSource::Wavecast, Some(o)) => gamma(o.flops(), o.bytes(), ridge(dest, work)),
        (GammaSource::Wavecast, None) if family.kernel_varying() => GAMMA_UNKNOWN_COMPUTE,
        (GammaSource::Wavecast, None) => 1.0,
    }
}

/// Predictor ratios per op instance, so an op's kernels share one.
struct Ratios<'p> {
    predictor: Option<&'p dyn Predictor>,
    cache: HashMap<usize, Option<f64>>,
}

impl Ratios<'_> {
    fn get(&mut self, k: &Kernel, op: &Op, origin: &Gpu, dest: &Gpu) -> Option<f64> {
        let p = self.predictor?;
        let key = k.op?;
        *self.cache.entry(key).or_insert_with(|| wavecast_predict::wave_scaling::predictor_ratio(p, op, origin, dest))
    }
}

/// The type a kernel computes in: its op's, else what its name shows, else FP32.
fn kernel_dtype(k: &Kernel, op: Option<&Op>) -> DType {
    op.map(|o| o.dtype()).or_else(|| dtype_from_kernel(&k.name)).unwrap_or(DType::Fp32)
}

/// `Ok` if every GPU of `dests` has units for every 16-bit or narrower type the trace's
/// kernels compute in; else the first GPU and type missing, and how many kernels use it. FP32
/// work (TF32 kernels included) runs on every GPU, as FP32 where there is no TF32.
pub fn check_dtypes(trace: &Trace, dests: &[&Gpu]) -> Result<(), String> {
    let mut ops = HashMap::new();
    let mut kernels: BTreeMap<DType, usize> = BTreeMap::new();
    for k in &trace.kernels {
        let dtype = kernel_dtype(k, kernel_op(trace, k, &mut ops).as_ref());
        if !matches!(dtype, DType::Fp32 | DType::Tf32) {
            *kernels.entry(dtype).or_default() += 1;
        }
    }
    for dest in dests {
        if let Some((dtype, n)) = kernels.iter().find(|(d, _)| !dest.supports(**d)) {
            return Err(format!("{n} of the trace's kernels compute in {dtype}, which {} has no units for; record the trace in a type it runs", dest.id));
        }
    }
    Ok(())
}

/// Scales every kernel of `trace` from `origin` to `dest`.
pub fn scale(trace: &Trace, origin: &Gpu, dest: &Gpu, opts: &Options) -> Scaling {
    let mut ops = HashMap::new();
    let mut ratios = Ratios { predictor: opts.predictor, cache: HashMap::new() };
    let mut notes: BTreeMap<String, usize> = BTreeMap::new();
    let mut kernels = Vec::with_capacity(trace.kernels.len());
    for (i, k) in trace.kernels.iter().enumerate() {
        let op = kernel_op(trace, k, &mut ops);
        let family = family_of(trace, k, op.as_ref());
        let (dest_us, gamma, path) = scale_one(k, op.as_ref(), family, origin, dest, opts, &mut ratios, &mut notes);
        kernels.push(KernelScaled { kernel: i, family: family.label(), origin_us: k.dur, dest_us, gamma, path });
    }
    summarize(origin, dest, opts, kernels, notes)
}

#[allow(clippy::too_many_arguments)]
fn scale_one(
    k: &Kernel,
    op: Option<&Op>,
    family: Family,
    origin: &Gpu,
    dest: &Gpu,
    opts: &Options,
    ratios: &mut Ratios,
    notes: &mut BTreeMap<String, usize>,
) -> (f64, Option<f64>, ScalePath) {
    if family == Family::Op(OpClass::Communication) {
        *notes.entry("communication kernels carried over unchanged (interconnect not modelled)".into()).or_default() += 1;
        return (k.dur, None, ScalePath::Unchanged);
    }
    if family.kernel_varying() {
        if let Some(r) = op.and_then(|o| ratios.get(k, o, origin, dest)) {
            return (k.dur * r, None, ScalePath::Predictor);
        }
        if opts.predictor.is_some() {
            *notes.entry("GEMM/conv/attention/RNN kernels without recorded shapes or an IR operator: wave-scaled".into()).or_default() += 1;
        }
    }
    let work = Work { class: family.roof_class(), dtype: kernel_dtype(k, op) };
    let g = kernel_gamma(k, op, family, work, dest, opts.gamma);
    let launch = launch_of(k, op);
    let s = scale_kernel(k.dur, launch.as_ref(), g, work, origin, dest, opts.form);
    if let Some(n) = s.note {
        let key = n.split(':').next().unwrap_or(&n).to_string();
        *notes.entry(format!("{key}: scaled as many waves")).or_default() += 1;
    }
    (s.seconds, Some(s.gamma), ScalePath::Wave)
}

fn summarize(origin: &Gpu, dest: &Gpu, opts: &Options, kernels: Vec<KernelScaled>, notes: BTreeMap<String, usize>) -> Scaling {
    let mut classes: BTreeMap<&str, ClassTotal> = BTreeMap::new();
    let mut paths = BTreeMap::new();
    for k in &kernels {
        let c = classes.entry(k.family).or_insert_with(|| ClassTotal { class: k.family.to_string(), ..ClassTotal::default() });
        c.kernels += 1;
        c.origin_us += k.origin_us;
        c.dest_us += k.dest_us;
        *paths.entry(k.path).or_insert(0) += 1;
    }
    let mut classes: Vec<ClassTotal> = classes.into_values().collect();
    classes.sort_by(|a, b| b.origin_us.total_cmp(&a.origin_us));
    Scaling {
        origin: origin.id.clone(),
        dest: dest.id.clone(),
        form: opts.form,
        predictor: opts.predictor.map(|p| p.name().to_string()),
        origin_us: kernels.iter().map(|k| k.origin_us).sum(),
        dest_us: kernels.iter().map(|k| k.dest_us).sum(),
        classes,
        paths,
        notes,
        kernels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_gpu::Catalog;

    /// Two launches of the same elementwise-looking kernel; the first carries counter metrics
    /// saying it is compute-bound (1 GFLOP over 1 MB).
    const TRACE: &str = r#"{"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "ts": 0, "dur": 100,
       "args": {"grid": [4096, 1, 1], "block": [256, 1, 1], "registers per thread": 32, "shared memory": 0, "flops": 1e9, "dram bytes": 1e6}},
      {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "ts": 200, "dur": 100,
       "args": {"grid": [4096, 1, 1], "block": [256, 1, 1], "registers per thread": 32, "shared memory": 0}},
      {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "ts": 400, "dur": 50, "args": {"grid": [2, 1, 1], "block": [512, 1, 1]}}
    ]}"#;

    #[test]
    fn measured_metrics_set_gamma_and_nccl_is_carried_over() {
        let cat = Catalog::builtin();
        let (a100, h100) = (cat.get("a100").unwrap(), cat.get("h100").unwrap());
        let t = crate::parse(TRACE.as_bytes(), "metrics.json").unwrap();
        assert_eq!(t.kernels[0].metrics.map(|m| (m.flops, m.dram_bytes)), Some((1e9, 1e6)));
        let opts = Options { form: WaveForm::Wavecast, gamma: GammaSource::Wavecast, predictor: None };
        let s = scale(&t, a100, h100, &opts);
        let work = Work { class: OpClass::Elementwise, dtype: DType::Fp32 };
        let want = gamma(1e9, 1e6, ridge(h100, work));
        assert!((s.kernels[0].gamma.unwrap() - want).abs() < 1e-12 && want < 0.1, "{want}");
        assert_eq!(s.kernels[1].gamma, Some(1.0));
        // Compute-bound: FP32 peak ratio (~3.4×); memory-bound: bandwidth ratio (~1.6×).
        assert!(s.kernels[0].dest_us < s.kernels[1].dest_us);
        assert!((s.kernels[1].dest_us - 100.0 * 2039.0 / 3352.0).abs() < 1e-9);
        assert_eq!((s.kernels[2].path, s.kernels[2].dest_us), (ScalePath::Unchanged, 50.0));
        assert_eq!(s.notes.values().sum::<usize>(), 1);
        // Habitat's convention: no counters → γ = 1; counters → FP32 ridge.
        let h = scale(&t, a100, h100, &Options { gamma: GammaSource::Habitat, ..opts });
        assert_eq!(h.kernels[1].gamma, Some(1.0));
        assert!(h.kernels[0].gamma.unwrap() < 0.1);
    }
}
