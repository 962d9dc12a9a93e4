//! Runtime-based scaling without a GPU (`wavecast eval pairs`). NeuSight measured the same op
//! shapes on five GPUs, with the main kernel's name and launch configuration; each GPU in turn
//! is the origin ("the GPU you have") and every other one the destination. Per ordered pair
//! and op class: APE of the destination time predicted from the origin's measurement.
//!
//! The measurements are isolated op latencies (CUDA events around one op call), which carry a
//! host-side floor that does not scale with the GPU (DATA.md: ≈ 25–60 µs). Kernel scaling is
//! applied to the part above the origin's floor — `L_d = F_o + scale(max(L_o − F_o, 0))` —
//! with `F_o` the 1st percentile of the origin's own latencies for that op class in
//! `ops/train` (origin data only). The same adapter is used for every method, so the
//! comparison isolates the scaling rule.
//!
//! Methods: Habitat's code form with γ = 1 (Habitat without counter metrics, which is what it
//! runs for all but the largest ops; its MLPs are not available, so GEMMs are wave-scaled too),
//! the paper's Eq. 1 and Eq. 2, wavecast's wave form with analytic γ, and the hybrid (GEMMs
//! through the per-op predictor as a ratio).

use crate::EvalError;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use wavecast_data::{load_neusight_dir, load_paper_predictions, Measurement};
use wavecast_gpu::occupancy::KernelResources;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::{DType, Op, OpClass};
use wavecast_predict::physics::Family;
use wavecast_predict::sample::host_floor_percentile;
use wavecast_predict::wave_scaling::{op_gamma, predictor_ratio, scale_kernel, Launch, WaveForm, Work};
use wavecast_predict::Predictor;
use wavecast_stats::{ape, decile_interval, mean, Summary};

/// γ for convolutions, which the IR has no operator for (same prior as for traces).
const GAMMA_CONV: f64 = wavecast_trace::scale::GAMMA_UNKNOWN_COMPUTE;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    HabitatCode,
    Eq1,
    Eq2,
    Wave,
    /// Hybrid with the i-th predictor named on the command line.
    Hybrid(usize),
}

fn methods(predictors: usize) -> Vec<Method> {
    let mut m = vec![Method::HabitatCode, Method::Eq1, Method::Eq2, Method::Wave];
    m.extend((0..predictors).map(Method::Hybrid));
    m
}
/// The op classes reported (the measurements' class names), in table order.
pub const CLASSES: [&str; 6] = [
    Family::Elementwise.as_str(),
    Family::Softmax.as_str(),
    Family::LayerNorm.as_str(),
    Family::Linear.as_str(),
    Family::Bmm.as_str(),
    OpClass::Conv.as_str(),
];

impl Method {
    fn label(self, predictors: &[String]) -> String {
        match self {
            Method::HabitatCode => "habitat-code (γ=1)".into(),
            Method::Eq1 => "eq1".into(),
            Method::Eq2 => "eq2".into(),
            Method::Wave => "wave (wavecast)".into(),
            Method::Hybrid(i) => format!("hybrid ({})", predictors[i]),
        }
    }
}

/// One prediction's error: APE %, absolute error and measured time (ms), and for a call well
/// above the origin's host floor (its kernel, not the floor, decides the time) ln(measured /
/// predicted).
#[derive(Debug, Clone, Copy)]
struct Miss {
    ape: f64,
    abs_ms: f64,
    measured_ms: f64,
    kernel_log_ratio: Option<f64>,
}

/// A call counts as kernel-dominated above this many times the origin's floor.
const KERNEL_DOMINATED: f64 = 3.0;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Stat {
    pub n: usize,
    pub mean_ape: f64,
    pub median_ape: f64,
    /// Σ|predicted − measured| / Σ measured, %: large ops weigh as they do in an iteration.
    pub time_weighted_ape: f64,
}

impl Stat {
    fn of(v: Vec<Miss>) -> Stat {
        if v.is_empty() {
            return Stat::default();
        }
        let apes: Vec<f64> = v.iter().map(|m| m.ape).collect();
        let summary = Summary::of(&apes);
        let measured: f64 = v.iter().map(|m| m.measured_ms).sum();
        let weighted = 100.0 * v.iter().map(|m| m.abs_ms).sum::<f64>() / measured;
        Stat { n: apes.len(), mean_ape: summary.mean_ape, median_ape: summary.median_ape, time_weighted_ape: weighted }
    }
}

#[derive(Serialize)]
pub struct PairReport {
    pub origin: String,
    pub dest: String,
    pub all: Stat,
    pub per_class: BTreeMap<&'static str, Stat>,
}

#[derive(Serialize)]
pub struct MethodReport {
    pub method: String,
    #[serde(skip)]
    pub kind: Method,
    pub all: Stat,
    /// Mean over ordered pairs of the pair's mean APE (each pair weighs the same).
    pub mean_of_pairs: f64,
    pub per_class: BTreeMap<&'static str, Stat>,
    /// Per class, the 10th and 90th percentiles of ln(measured / predicted) over every ordered
    /// pair's kernel-dominated calls (at least 10): the interval `scale` gives a kernel carried
    /// by this method (`weights/scale_intervals.json`).
    pub intervals: BTreeMap<&'static str, [f64; 2]>,
    pub pairs: Vec<PairReport>,
}

#[derive(Serialize)]
pub struct SetReport {
    pub set: String,
    pub methods: Vec<MethodReport>,
}

#[derive(Serialize)]
pub struct PaperHabitat {
    pub device: String,
    pub n: usize,
    pub mean_ape: f64,
}

#[derive(Serialize)]
/// The `--json` output of `eval pairs`.
pub struct Report {
    pub predictors: Vec<String>,
    /// Per predictor and destination: whether the predictor saw the destination's measurements.
    pub predictor_training: BTreeMap<String, BTreeMap<String, String>>,
    pub floors_ms: BTreeMap<String, BTreeMap<&'static str, f64>>,
    pub sets: Vec<SetReport>,
    /// NeuSight's re-implementation of Habitat, end to end (paper_predictions.csv), for context.
    pub paper_habitat_e2e: Vec<PaperHabitat>,
}

/// The origin's host floor per (GPU, op class): [`host_floor_percentile`] of its latencies.
fn floors(train: &[Measurement]) -> HashMap<(String, &'static str), f64> {
    let mut by: HashMap<(String, &'static str), Vec<f64>> = HashMap::new();
    for m in train {
        by.entry((m.gpu.clone(), m.class_name())).or_default().push(m.latency_ms);
    }
    by.into_iter().map(|(k, v)| (k, host_floor_percentile(&v))).collect()
}

/// Shapes measured on more than one GPU: shape key → GPU id → measurement.
fn join(rows: &[Measurement]) -> Vec<HashMap<&str, &Measurement>> {
    // Ordered, so every run sums the errors in the same order (byte-identical output).
    let mut by: BTreeMap<String, HashMap<&str, &Measurement>> = BTreeMap::new();
    for m in rows {
        by.entry(format!("{:?}", m.shape)).or_default().entry(m.gpu.as_str()).or_insert(m);
    }
    by.into_values().filter(|g| g.len() > 1).collect()
}

fn launch(m: &Measurement) -> Option<Launch> {
    let k = m.main_kernel.as_ref()?;
    Some(Launch {
        blocks: k.blocks().filter(|&b| b > 0)?,
        // NeuSight does not record registers or shared memory: threads and block limits only.
        resources: KernelResources { threads_per_block: k.threads_per_block()? as u32, registers_per_thread: 0, shared_mem_bytes: 0 },
    })
}

/// The hybrid's predictor for one destination: trained without the destination's
/// measurements when wavecast ships such a model, so no destination data leaks in. Returns the
/// predictor and how it relates to the destination.
fn predictor_for(name: &str, dest: &str) -> Result<(Box<dyn Predictor>, String), EvalError> {
    let Some(file) = wavecast_predict::registry::shipped(name) else {
        // Analytic predictors (roofline) have nothing to leak; unknown names error here.
        return Ok((wavecast_predict::by_name(name)?, "analytic".into()));
    };
    let file = file?;
    Ok(match file.without(dest) {
        Ok(m) if file.holdout.contains_key(dest) => (wavecast_predict::registry::load(m)?, "trained without the destination".into()),
        Ok(m) => (wavecast_predict::registry::load(m)?, "never trained on the destination".into()),
        Err(_) => (wavecast_predict::registry::load(&file.all)?, "IN-SAMPLE: trained on the destination too".into()),
    })
}

struct Ctx<'a> {
    origin: &'a Gpu,
    dest: &'a Gpu,
    /// One per predictor named, each fit for this destination.
    predictors: Vec<&'a dyn Predictor>,
}

/// Predicted destination kernel time (ms) from the origin's kernel time `k_o`.
fn scale_op(method: Method, m: &Measurement, op: Option<&Op>, k_o: f64, c: &Ctx) -> Option<f64> {
    let class = op.map(|o| o.class()).unwrap_or(OpClass::Gemm);
    let work = Work { class, dtype: DType::Fp32 };
    let g = match op {
        Some(o) => op_gamma(o, c.dest),
        None => GAMMA_CONV,
    };
    let l = launch(m);
    let wave = |form, g| scale_kernel(k_o, l.as_ref(), g, work, c.origin, c.dest, form).seconds;
    Some(match method {
        Method::HabitatCode => wave(WaveForm::HabitatCode, 1.0),
        Method::Eq1 => wave(WaveForm::Eq1, g),
        Method::Eq2 => wave(WaveForm::Eq2, g),
        Method::Wave => wave(WaveForm::Wavecast, g),
        Method::Hybrid(i) => match op.filter(|o| matches!(o, Op::Gemm(_))) {
            Some(o) => k_o * predictor_ratio(c.predictors[i], o, c.origin, c.dest)?,
            None => wave(WaveForm::Wavecast, g),
        },
    })
}

/// Error of each method for one (origin, dest) measurement pair.
fn case_apes(mo: &Measurement, md: &Measurement, floor: f64, c: &Ctx) -> Vec<Option<Miss>> {
    let op = mo.to_op();
    let k_o = (mo.latency_ms - floor).max(0.0);
    let miss = |k_d: f64| {
        let predicted = floor + k_d;
        let dominated = mo.latency_ms > KERNEL_DOMINATED * floor && md.latency_ms > KERNEL_DOMINATED * floor && predicted > 0.0;
        let kernel_log_ratio = dominated.then(|| (md.latency_ms / predicted).ln());
        Miss { ape: ape(predicted, md.latency_ms), abs_ms: (predicted - md.latency_ms).abs(), measured_ms: md.latency_ms, kernel_log_ratio }
    };
    methods(c.predictors.len()).into_iter().map(|m| scale_op(m, mo, op.as_ref(), k_o, c).map(miss)).collect()
}

type Apes = HashMap<(usize, &'static str), Vec<Miss>>; // (method, class) → errors

/// Destination → one (predictor, how it was trained) per predictor named.
type Predictors = BTreeMap<String, Vec<(Box<dyn Predictor>, String)>>;

fn evaluate_set(
    name: &str,
    rows: &[Measurement],
    fl: &HashMap<(String, &'static str), f64>,
    cat: &Catalog,
    preds: &Predictors,
    names: &[String],
) -> Result<SetReport, EvalError> {
    let shapes = join(rows);
    let mut gpus: Vec<&str> = rows.iter().map(|m| m.gpu.as_str()).collect();
    gpus.sort_by_key(|g| cat.all().iter().position(|c| c.id == *g));
    gpus.dedup();
    let ordered_pairs: Vec<(&str, &str)> = gpus.iter().flat_map(|&o| gpus.iter().filter(move |&&d| d != o).map(move |&d| (o, d))).collect();
    // Pairs are independent; collected in order, so the report does not depend on the threads.
    let per_pair: Vec<((String, String), Apes)> = ordered_pairs
        .par_iter()
        .map(|&(o, d)| {
            let predictors = preds.get(d).map(|v| v.iter().map(|p| p.0.as_ref()).collect()).ok_or_else(|| EvalError::Invalid(format!("no predictor for {d}")))?;
            let c = Ctx { origin: cat.get(o)?, dest: cat.get(d)?, predictors };
            let mut apes: Apes = HashMap::new();
            for s in &shapes {
                let (Some(mo), Some(md)) = (s.get(o), s.get(d)) else { continue };
                let class = mo.class_name();
                let floor = fl.get(&(o.to_string(), class)).copied().unwrap_or(0.0);
                for (i, a) in case_apes(mo, md, floor, &c).into_iter().enumerate() {
                    if let Some(a) = a {
                        apes.entry((i, class)).or_default().push(a);
                    }
                }
            }
            Ok(((o.to_string(), d.to_string()), apes))
        })
        .collect::<Result<_, EvalError>>()?;
    let methods = methods(names.len()).into_iter().enumerate().map(|(i, m)| method_report(i, m, m.label(names), &per_pair)).collect();
    Ok(SetReport { set: name.to_string(), methods })
}

fn method_report(i: usize, kind: Method, method: String, per_pair: &[((String, String), Apes)]) -> MethodReport {
    let mut all = Vec::new();
    let mut by_class: BTreeMap<&'static str, Vec<Miss>> = BTreeMap::new();
    let mut pairs = Vec::new();
    for ((o, d), apes) in per_pair {
        let mut pair_all = Vec::new();
        let mut per_class = BTreeMap::new();
        for class in CLASSES {
            let v = apes.get(&(i, class)).cloned().unwrap_or_default();
            if v.is_empty() {
                continue;
            }
            pair_all.extend(&v);
            by_class.entry(class).or_default().extend(&v);
            per_class.insert(class, Stat::of(v));
        }
        all.extend(&pair_all);
        if !pair_all.is_empty() {
            pairs.push(PairReport { origin: o.clone(), dest: d.clone(), all: Stat::of(pair_all), per_class });
        }
    }
    let mean_of_pairs = mean(&pairs.iter().map(|p| p.all.mean_ape).collect::<Vec<_>>());
    let intervals = by_class
        .iter()
        .filter_map(|(class, v)| {
            let r: Vec<f64> = v.iter().filter_map(|m| m.kernel_log_ratio).collect();
            (r.len() >= 10).then(|| (*class, decile_interval(&r)))
        })
        .collect();
    MethodReport { method, kind, all: Stat::of(all), mean_of_pairs, per_class: by_class.into_iter().map(|(k, v)| (k, Stat::of(v))).collect(), intervals, pairs }
}

/// The intervals `scale` gives carried kernels (`weights/scale_intervals.json`): per method,
/// wavecast's wave form (`wave`) and the hybrid with the first predictor named (`hybrid`), each
/// class's interval from the model-shaped set where it has one, else from the random shapes.
pub fn scaling_intervals(r: &Report) -> wavecast_predict::wave_scaling::ScalingIntervals {
    let mut out = wavecast_predict::wave_scaling::ScalingIntervals::new();
    for (name, kind) in [("wave", Method::Wave), ("hybrid", Method::Hybrid(0))] {
        let per_class = out.entry(name.to_string()).or_default();
        // Sets are in preference order (model-shaped first).
        for m in r.sets.iter().flat_map(|s| s.methods.iter().filter(|m| m.kind == kind)) {
            for (class, iv) in &m.intervals {
                per_class.entry(class.to_string()).or_insert(*iv);
            }
        }
    }
    out
}

/// NeuSight's Habitat re-implementation, end to end, per device (plain single-GPU rows).
fn paper_habitat(data: &Path) -> Result<Vec<PaperHabitat>, EvalError> {
    let Some(rows) = load_paper_predictions(data)? else { return Ok(Vec::new()) };
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.option.is_empty()) {
        if let Some(h) = r.habitat_ms {
            by.entry(r.device.clone()).or_default().push(ape(h, r.label_ms));
        }
    }
    Ok(by.into_iter().map(|(device, v)| PaperHabitat { device, n: v.len(), mean_ape: mean(&v) }).collect())
}

/// Every ordered pair of GPUs measured in `data`: scaling methods and, for the hybrid, the
/// predictors `names` (the default predictor when empty), each run in its model trained
/// without the destination when one is shipped.
pub fn evaluate(data: &Path, cat: &Catalog, names: &[String]) -> Result<Report, EvalError> {
    let names: Vec<String> = if names.is_empty() { vec![wavecast_predict::DEFAULT_PREDICTOR.to_string()] } else { names.to_vec() };
    let train = load_neusight_dir(&data.join("ops/train"), cat)?;
    let test = load_neusight_dir(&data.join("ops/test"), cat)?;
    if train.rows.is_empty() || test.rows.is_empty() {
        return Err(EvalError::Invalid(format!("{}: no per-op measurements under ops/train and ops/test", data.display())));
    }
    let mut preds = Predictors::new();
    for m in train.rows.iter().chain(&test.rows) {
        if !preds.contains_key(&m.gpu) {
            let per: Vec<_> = names.iter().map(|n| predictor_for(n, &m.gpu)).collect::<Result<_, _>>()?;
            preds.insert(m.gpu.clone(), per);
        }
    }
    let fl = floors(&train.rows);
    let sets = vec![
        evaluate_set("ops/test (model-shaped)", &test.rows, &fl, cat, &preds, &names)?,
        evaluate_set("ops/train (random shapes)", &train.rows, &fl, cat, &preds, &names)?,
    ];
    let mut floors_ms: BTreeMap<String, BTreeMap<&'static str, f64>> = BTreeMap::new();
    for ((g, c), v) in &fl {
        floors_ms.entry(g.clone()).or_default().insert(c, *v);
    }
    let mut training: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (g, per) in &preds {
        for (n, (_, how)) in names.iter().zip(per) {
            training.entry(n.clone()).or_default().insert(g.clone(), how.clone());
        }
    }
    Ok(Report { predictors: names, predictor_training: training, floors_ms, sets, paper_habitat_e2e: paper_habitat(data)? })
}
