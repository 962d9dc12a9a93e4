//! `wavecast`, the default predictor: physics first, learning for what physics leaves out.
//!
//! For every op the physics gives a bound, t_bound = max(FLOPs / sustained peak, bytes /
//! bandwidth), where the sustained peak accounts for power-capped boards that cannot hold boost
//! clock (see [`sustained_clock_fraction`]). A small MLP per kernel family then predicts
//! ln(t_kernel / t_bound) from unit-free, per-SM-normalised features (thread-block waves, the
//! last wave's occupancy, intensity against the ridge point, size against L2, the bound itself
//! in µs for launch and tail effects). Raw GPU names or figures are never inputs, so a new GPU
//! is predicted through its physics, and the learned part only says how far real kernels fall
//! short of it. The prediction interval comes from the error spread of models trained with one
//! GPU left out.
//!
//! It learns from the random-shape microbenchmarks and, for the vector families, also from the
//! model-shaped measurements (`ops/test`) of its training GPUs, which then set those GPUs'
//! offsets: a left-out GPU's rows of either kind never enter its model.

use crate::calibration::{arch_key, group_offsets, trimmed_mean};
use crate::mlp::{Mlp, TrainConfig};
use crate::physics::{gemm_dims, sustained_clock_fraction, vector_dims, Family, DEFAULT_WATTS_PER_TFLOP_12NM};
use crate::roofline::roofline_seconds;
use crate::sample::{balanced, isolated_floors, kernel_dominated, Sample, LAUNCH_GAP_S};
use crate::{Estimate, OpTime, Predictor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_ir::{Op, OpClass};

/// Nominal output tile used to count waves (the size cuBLAS favours for large FP32 GEMMs).
const TILE: f64 = 128.0;
/// Random-shape rows per family kept for training (uniformly subsampled), to bound training time.
const MAX_ROWS: usize = 24_000;
/// Most times a model-shaped row is repeated in the training set: there are few of them, and
/// they are the shapes users run.
const MAX_MODEL_SHAPED_REPEAT: usize = 4;
/// Fewest mid-sized model-shaped rows of a GPU and family that calibrate its offset on their own.
const MIN_MODEL_SHAPED_ROWS: usize = 10;

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
    /// Trimmed mean of `per_gpu`: what a GPU of an unmeasured generation gets.
    pub default_offset: f64,
    /// Quantiles (10 %, 90 %) of ln(measured / predicted) on held-out GPUs.
    pub interval: [f64; 2],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wavecast {
    /// Power per FP32 TFLOP/s a 12 nm board needs to hold boost (see [`sustained_clock_fraction`]).
    pub watts_per_tflop_12nm: f64,
    pub families: BTreeMap<Family, FamilyModel>,
    /// Isolated-call floor per family (seconds).
    pub floors: BTreeMap<Family, f64>,
    /// Device-side gap between back-to-back kernels in a running model (seconds).
    pub kernel_gap_s: f64,
    /// Run-level calibration from measured end-to-end runs: measured / predicted per GPU.
    /// Microbenchmarks time random, mostly unaligned shapes one call at a time; a real model
    /// runs aligned shapes back to back at sustained clocks, and this factor carries the
    /// difference (see DATA.md's note on isolated timings).
    #[serde(default)]
    pub run_scale: BTreeMap<String, f64>,
    /// Trimmed mean of `run_scale`: what a GPU without end-to-end labels gets.
    #[serde(default = "one")]
    pub default_run_scale: f64,
    /// 10 % and 90 % quantiles of ln(measured / predicted) of whole runs on held-out GPUs: the
    /// interval given with in-run predictions.
    #[serde(default = "default_run_interval")]
    pub run_interval: [f64; 2],
}

fn default_run_interval() -> [f64; 2] {
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

/// Peak FLOP/s the op can sustain on `gpu`: FP32 matmuls on CUDA cores draw the power that
/// power-capped boards lack; vector ops are bandwidth-bound, and tensor-core math spends far
/// less energy per FLOP, so both keep the spec figure.
fn sustained_peak(op: &Op, family: Family, gpu: &Gpu, watts: f64) -> f64 {
    let cuda_core_matmul = family.is_gemm() && op.dtype() == wavecast_ir::DType::Fp32;
    let fraction = if cuda_core_matmul { sustained_clock_fraction(gpu, watts) } else { 1.0 };
    gpu.peak_flops(op.class(), op.dtype()) * fraction
}

/// Work after wave quantisation: a GEMM runs in whole waves of output tiles over the SMs.
fn wave_padded_flops(op: &Op, family: Family, gpu: &Gpu) -> f64 {
    if !family.is_gemm() {
        return op.flops();
    }
    let (batch, m, n, k) = gemm_dims(op).unwrap_or((1.0, 1.0, 1.0, 1.0));
    let tiles = batch * (m / TILE).ceil() * (n / TILE).ceil();
    let sms = gpu.sm_count as f64;
    // With fewer tiles than SMs, libraries split the reduction (split-K) to fill the GPU.
    let splits = (sms / tiles).floor().min((k / 256.0).floor()).max(1.0);
    let units = tiles * splits;
    let slots = (units / sms).ceil() * sms;
    // Tiles are padded to whole tiles and waves to whole waves.
    let padded_tile_work = (m / TILE).ceil() * TILE * (n / TILE).ceil() * TILE / (m * n);
    op.flops() * padded_tile_work * slots / units
}

/// The physical bound (seconds) of `op` on `gpu`.
pub fn bound(op: &Op, family: Family, gpu: &Gpu, watts: f64) -> f64 {
    let compute = wave_padded_flops(op, family, gpu) / sustained_peak(op, family, gpu, watts);
    let memory = op.bytes() / gpu.bandwidth();
    KERNEL_RAMP_S + compute.max(memory)
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

/// Fits the power prior: each training GPU whose large FP32 BMMs run clearly below the
/// efficiency of unconstrained boards implies a power need per TFLOP/s; their mean is used.
fn fit_watts(samples: &[&Sample]) -> f64 {
    let efficiency = |s: &Sample| s.op.flops() / s.gpu.peak_flops(s.op.class(), s.op.dtype()) / s.kernel_s();
    let big = |s: &&&Sample| s.family == Family::Bmm && !s.model_shaped && s.op.flops() > 2e10;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    let mut gpus: Vec<&Gpu> = samples.iter().map(|s| &s.gpu).collect();
    gpus.sort_by(|a, b| a.id.cmp(&b.id));
    gpus.dedup_by(|a, b| a.id == b.id);
    let per_gpu: Vec<(&Gpu, f64)> =
        gpus.into_iter().filter_map(|g| Some((g, median(samples.iter().filter(big).filter(|s| s.gpu.id == g.id).map(|s| efficiency(s)).collect())?))).collect();
    let Some(reference) = per_gpu.iter().map(|(_, e)| *e).fold(None, |m: Option<f64>, e| Some(m.map_or(e, |m| m.max(e)))) else {
        return DEFAULT_WATTS_PER_TFLOP_12NM;
    };
    let implied: Vec<f64> = per_gpu
        .iter()
        .filter(|(_, e)| *e < 0.8 * reference)
        .map(|(g, e)| (g.tdp_w / g.peak_tflops.fp32) / (e / reference) / (g.process_nm / 12.0))
        .collect();
    if implied.is_empty() {
        DEFAULT_WATTS_PER_TFLOP_12NM
    } else {
        implied.iter().sum::<f64>() / implied.len() as f64
    }
}

/// Per GPU: the median ln(measured / bound) over one fixed set of mid-sized shapes (GEMMs of
/// 1–100 GFLOP, vector ops moving 10 MB–1 GB), the same shapes on every GPU so the offsets are
/// comparable. Big enough that launch and tail effects are gone, small enough that a passively
/// cooled board has not started to throttle (P4's multi-second GEMMs run at a quarter of the
/// efficiency of its millisecond ones, and models run millisecond kernels).
///
/// Model-shaped rows calibrate a GPU when it has enough of them: they are the shapes real
/// models run, and the random-shape sweeps of some families run measurably slower.
fn gpu_offsets(rows: &[&Sample], fam: Family, watts: f64) -> BTreeMap<String, f64> {
    let mid = |s: &Sample| {
        if fam.is_gemm() {
            (1e9..=1e11).contains(&s.op.flops())
        } else {
            (1e7..=1e9).contains(&s.op.bytes())
        }
    };
    let mut random: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut model_shaped: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in rows.iter().filter(|s| mid(s)) {
        let set = if s.model_shaped { &mut model_shaped } else { &mut random };
        set.entry(s.gpu.id.clone()).or_default().push((s.kernel_s() / bound(&s.op, fam, &s.gpu, watts)).ln());
    }
    let mut by = random;
    for (gpu, v) in model_shaped.into_iter().filter(|(_, v)| v.len() >= MIN_MODEL_SHAPED_ROWS) {
        by.insert(gpu, v);
    }
    let mut out: BTreeMap<String, f64> = by
        .into_iter()
        .map(|(g, mut v)| {
            v.sort_by(f64::total_cmp);
            (g, v[v.len() / 2])
        })
        .collect();
    // A GPU with no mid-sized rows is calibrated like the others on average.
    let fallback = trimmed_mean(out.values().copied().collect());
    for s in rows {
        out.entry(s.gpu.id.clone()).or_insert(fallback);
    }
    out
}

/// Kernel-library generation: cuBLAS ships one family of FP32 SIMT kernels for Pascal
/// (`maxwell_sgemm_*`), another for Volta through Ada (`volta_sgemm_*`, `ampere_sgemm_*`), and
/// Hopper onwards runs `xmma` kernels — the kernel names in the measurements show the split.
/// A generation no training GPU belongs to falls back to the trimmed mean of all.
fn generation(gpu: &Gpu) -> &'static str {
    match (gpu.vendor, gpu.compute_major()) {
        (wavecast_gpu::Vendor::Amd, _) => "amd",
        (_, 0..=6) => "maxwell-sgemm",
        (_, 7..=8) => "volta-ampere-sgemm",
        _ => "xmma",
    }
}

impl Wavecast {
    pub fn fit(samples: &[Sample], seed: u64, progress: Option<&indicatif::ProgressBar>) -> Result<Wavecast, String> {
        let floors = isolated_floors(samples);
        let usable = kernel_dominated(samples);
        let watts = fit_watts(&usable);
        let mut families = BTreeMap::new();
        for fam in Family::ALL {
            // Model-shaped GEMMs stay out: a GPU's efficiency on them varies too much between boards
            // (0.5–0.95 of peak) for five GPUs to teach a left-out one (tried: end-to-end error
            // rose from 7.5 % to 14.8 % LOGO). Vector ops carry over well.
            let mut rows: Vec<&Sample> =
                usable.iter().copied().filter(|s| s.family == fam && !(s.model_shaped && fam.is_gemm())).collect();
            if rows.is_empty() {
                continue;
            }
            let mut rng = crate::mlp::Rng::new(seed ^ fam as u64);
            rng.shuffle(&mut rows);
            let per_gpu = gpu_offsets(&rows, fam, watts);
            let (model_shaped, random): (Vec<&Sample>, Vec<&Sample>) = rows.into_iter().partition(|s| s.model_shaped);
            rows = balanced(random, MAX_ROWS);
            let repeat = (rows.len() / (2 * model_shaped.len().max(1))).clamp(1, MAX_MODEL_SHAPED_REPEAT);
            for _ in 0..repeat {
                rows.extend(model_shaped.iter().copied());
            }
            let (x, y): (Vec<Vec<f32>>, Vec<f32>) = rows
                .iter()
                .map(|s| {
                    let raw = (s.kernel_s() / bound(&s.op, fam, &s.gpu, watts)).ln();
                    (features(&s.op, fam, &s.gpu, watts), (raw - per_gpu[&s.gpu.id]) as f32)
                })
                .unzip();
            let default_offset = trimmed_mean(per_gpu.values().copied().collect());
            let gpu_of = |id: &str| rows.iter().find(|s| s.gpu.id == id).map(|s| &s.gpu);
            let per_arch = group_offsets(&per_gpu, gpu_of, arch_key);
            let per_generation = group_offsets(&per_gpu, gpu_of, |g| generation(g).to_string());
            let cfg = TrainConfig { seed, epochs: 40, ..TrainConfig::default() };
            let mut mlp = Mlp::train(&x, &y, cfg, None)?;
            mlp.compact();
            let mut sorted = y.clone();
            sorted.sort_by(f32::total_cmp);
            let pick = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize] as f64;
            let output_range = [pick(0.005), pick(0.995)];
            families.insert(
                fam,
                FamilyModel { mlp, output_range, per_gpu, per_arch, per_generation, default_offset, interval: [-0.15, 0.15] },
            );
            if let Some(p) = progress {
                p.tick();
            }
        }
        Ok(Wavecast {
            watts_per_tflop_12nm: watts,
            families,
            floors,
            kernel_gap_s: 1.5e-6,
            run_scale: BTreeMap::new(),
            default_run_scale: 1.0,
            run_interval: default_run_interval(),
        })
    }

    /// Sets the run-level calibration from (GPU id, measured / predicted) pairs of end-to-end
    /// runs; each GPU gets the median of its ratios.
    pub fn calibrate_runs(&mut self, ratios: &[(String, f64)]) {
        let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for (g, r) in ratios.iter().filter(|(_, r)| r.is_finite() && *r > 0.0) {
            by.entry(g.clone()).or_default().push(*r);
        }
        self.run_scale = by
            .into_iter()
            .map(|(g, mut v)| {
                v.sort_by(f64::total_cmp);
                (g, v[v.len() / 2])
            })
            .collect();
        self.default_run_scale = if self.run_scale.is_empty() { 1.0 } else { trimmed_mean(self.run_scale.values().copied().collect()) };
    }

    fn run_scale_for(&self, gpu: &Gpu) -> f64 {
        self.run_scale.get(&gpu.id).copied().unwrap_or(self.default_run_scale)
    }

    /// Predicted kernel seconds and the family model used.
    pub fn kernel_seconds(&self, op: &Op, gpu: &Gpu) -> Option<(f64, &FamilyModel)> {
        let fam = Family::of(op)?;
        let model = self.families.get(&fam)?;
        let t_bound = bound(op, fam, gpu, self.watts_per_tflop_12nm);
        let [lo, hi] = model.output_range;
        let offset = model
            .per_gpu
            .get(&gpu.id)
            .or_else(|| model.per_arch.get(&arch_key(gpu)))
            .or_else(|| model.per_generation.get(generation(gpu)))
            .copied()
            .unwrap_or(model.default_offset);
        let learned = (model.mlp.predict(&features(op, fam, gpu, self.watts_per_tflop_12nm)) as f64).clamp(lo, hi);
        let factor = (learned + offset).exp();
        // The wave-padded bound assumes a tile size, so the learned factor may undercut it, but
        // nothing undercuts the plain roofline.
        Some(((t_bound * factor).max(roofline_seconds(op, gpu)), model))
    }

    fn estimate(&self, op: &Op, gpu: &Gpu, isolated: bool) -> Estimate {
        if op.class() == OpClass::Communication {
            return Estimate::Unpriced("wavecast prices communication with the comm model".into());
        }
        let Some((t, model)) = self.kernel_seconds(op, gpu) else {
            return Estimate::Unpriced(format!("no trained model for {}", op.class()));
        };
        let adjust = |k: f64| {
            if isolated {
                let floor = Family::of(op).and_then(|f| self.floors.get(&f)).copied().unwrap_or(0.0);
                (k + LAUNCH_GAP_S).max(floor)
            } else {
                k * self.run_scale_for(gpu) + self.kernel_gap_s
            }
        };
        // Isolated ops carry their family's per-op spread; in-run ops the whole-run spread, since
        // per-op errors partly cancel over a model.
        let [lo, hi] = if isolated { model.interval } else { self.run_interval };
        Estimate::Time(OpTime { seconds: adjust(t), lo: adjust(t * lo.exp()), hi: adjust(t * hi.exp()) })
    }
}

impl Predictor for Wavecast {
    fn name(&self) -> &str {
        "wavecast"
    }
    fn predict(&self, op: &Op, gpu: &Gpu) -> Estimate {
        self.estimate(op, gpu, false)
    }
    fn predict_isolated(&self, op: &Op, gpu: &Gpu) -> Estimate {
        self.estimate(op, gpu, true)
    }
}
