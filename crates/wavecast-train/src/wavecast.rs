//! Fitting the `wavecast` predictor (`wavecast_predict::wavecast`): the power prior, the
//! per-GPU offsets over a fixed band of mid-sized shapes, and one MLP per kernel family on
//! ln(t_kernel / t_bound) minus the GPU's offset; then the run-level calibration.

use crate::mlp::{compact, train as train_mlp, TrainConfig};
use crate::samples::{balanced, Floors};
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_predict::calibration::{arch_key, group_offsets, group_offsets_by};
use wavecast_predict::mlp::Rng;
use wavecast_predict::physics::{roofline_terms, watts_per_fp32_tflop, Family, DEFAULT_WATTS_PER_TFLOP_12NM, REFERENCE_NODE_NM};
use wavecast_predict::sample::{Sample, KERNEL_GAP_S};
use wavecast_stats::{mean, quantile_sorted, rank_sorted, sorted, trimmed_mean, upper_median};
use wavecast_predict::wavecast::{bound, default_run_interval, features, generation, FamilyModel, Wavecast};

/// Random-shape rows per family kept for training (uniformly subsampled), to bound training time.
const MAX_ROWS: usize = 24_000;
/// Most times a model-shaped row is repeated in the training set: there are few of them, and
/// they are the shapes users run.
const MAX_MODEL_SHAPED_REPEAT: usize = 4;
/// Fewest mid-sized model-shaped rows of a GPU and family that calibrate its offset on their own.
const MIN_MODEL_SHAPED_ROWS: usize = 10;

/// Fits the power prior: each training GPU whose large FP32 BMMs run clearly below the
/// efficiency of unconstrained boards implies a power need per TFLOP/s; their mean is used.
fn fit_watts(samples: &[&Sample]) -> f64 {
    let efficiency = |s: &Sample| roofline_terms(&s.op, &s.gpu).0 / s.kernel_s();
    let big = |s: &&&Sample| s.family == Family::Bmm && !s.model_shaped && s.op.flops() > 2e10;
    let median = |v: Vec<f64>| rank_sorted(&sorted(&v), 0.5);
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
        .map(|(g, e)| watts_per_fp32_tflop(g) / (e / reference) / (g.process_nm / REFERENCE_NODE_NM))
        .collect();
    if implied.is_empty() {
        DEFAULT_WATTS_PER_TFLOP_12NM
    } else {
        mean(&implied)
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
    let mut out: BTreeMap<String, f64> = by.into_iter().map(|(g, v)| (g, upper_median(&v))).collect();
    // A GPU with no mid-sized rows is calibrated like the others on average.
    let fallback = trimmed_mean(&out.values().copied().collect::<Vec<_>>());
    for s in rows {
        out.entry(s.gpu.id.clone()).or_insert(fallback);
    }
    out
}

/// The rows that calibrate the GPUs' offsets for `fam`: the network's `rows` and, for a GPU
/// whose only GEMMs of this family are model-shaped (MI100: NeuSight's AMD set has no random
/// GEMM shapes), those. They set that GPU's offset — and so its architecture's and vendor's —
/// without entering the network.
fn calibration_rows<'a>(usable: &[&'a Sample], rows: &[&'a Sample], fam: Family) -> Vec<&'a Sample> {
    let with_random: std::collections::BTreeSet<&str> = rows.iter().map(|s| s.gpu.id.as_str()).collect();
    let only_model_shaped = usable.iter().copied().filter(|s| s.family == fam && s.model_shaped && fam.is_gemm() && !with_random.contains(s.gpu.id.as_str()));
    rows.iter().copied().chain(only_model_shaped).collect()
}

/// Fits on `samples` (random-shape microbenchmarks and, for the vector families, the
/// model-shaped rows); the run-level calibration is left at 1 (see [`calibrate_runs`]).
pub fn fit(samples: &[Sample], seed: u64, progress: Option<&ProgressBar>) -> Result<Wavecast, String> {
    let host = Floors::of(samples);
    let usable = host.kernel_dominated(samples);
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
        let calibration = calibration_rows(&usable, &rows, fam);
        let mut rng = Rng::new(seed ^ fam as u64);
        rng.shuffle(&mut rows);
        let per_gpu = gpu_offsets(&calibration, fam, watts);
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
        let default_offset = trimmed_mean(&per_gpu.values().copied().collect::<Vec<_>>());
        let gpu_of = |id: &str| calibration.iter().find(|s| s.gpu.id == id).map(|s| &s.gpu);
        let per_arch = group_offsets(&per_gpu, gpu_of, arch_key);
        let per_generation = group_offsets(&per_gpu, gpu_of, |g| generation(g).to_string());
        let per_runtime = group_offsets_by(&per_gpu, gpu_of, |g| g.vendor.runtime().to_string(), trimmed_mean);
        let cfg = TrainConfig { seed, epochs: 40, ..TrainConfig::default() };
        let mut mlp = train_mlp(&x, &y, cfg, None)?;
        compact(&mut mlp);
        let targets = sorted(&y.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
        let pick = |q: f64| quantile_sorted(&targets, q).unwrap_or(0.0);
        let output_range = [pick(0.005), pick(0.995)];
        families.insert(
            fam,
            FamilyModel { mlp, output_range, per_gpu, per_arch, per_generation, per_runtime, default_offset, interval: [-0.15, 0.15] },
        );
        if let Some(p) = progress {
            p.tick();
        }
    }
    Ok(Wavecast {
        watts_per_tflop_12nm: watts,
        families,
        floors: host.all,
        runtime_floors: host.per_runtime,
        kernel_gap_s: KERNEL_GAP_S,
        run_scale: BTreeMap::new(),
        runtime_run_scale: BTreeMap::new(),
        default_run_scale: 1.0,
        run_interval: default_run_interval(),
    })
}

/// Sets the run-level calibration from (GPU, measured / predicted) pairs of end-to-end runs;
/// each GPU gets the median of its ratios, each vendor's runtime and the whole the trimmed mean
/// of its GPUs'.
pub fn calibrate_runs(w: &mut Wavecast, ratios: &[(&Gpu, f64)]) {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut gpus: BTreeMap<String, &Gpu> = BTreeMap::new();
    for (g, r) in ratios.iter().filter(|(_, r)| r.is_finite() && *r > 0.0) {
        by.entry(g.id.clone()).or_default().push(*r);
        gpus.insert(g.id.clone(), g);
    }
    w.run_scale = by.into_iter().map(|(g, v)| (g, upper_median(&v))).collect();
    w.runtime_run_scale = group_offsets_by(&w.run_scale, |id| gpus.get(id).copied(), |g| g.vendor.runtime().to_string(), trimmed_mean);
    w.default_run_scale = if w.run_scale.is_empty() { 1.0 } else { trimmed_mean(&w.run_scale.values().copied().collect::<Vec<_>>()) };
}

