//! End-to-end error of a predictor on every labelled workload (NeuSight's `label/` runs).

use crate::EvalError;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use wavecast_data::{load_labels, load_paper_predictions, Label, PaperRow};
use wavecast_gpu::Catalog;
use wavecast_ir::OpClass;
use wavecast_predict::bounds::Bounded;
use wavecast_predict::comm::CommModel;
use wavecast_predict::ladder::fp32::{Baseline, Fp32Baseline};
use wavecast_predict::ladder::LadderOps;
use wavecast_predict::Predictor;
use wavecast_sim::train::GraphLayout;
use wavecast_stats::{ape, Summary};
use wavecast_workload::neusight::{import_opgraph, WorkloadName};

#[derive(Serialize, Clone)]
pub struct WorkloadResult {
    pub gpu: String,
    pub workload: String,
    pub mode: &'static str,
    pub measured_ms: f64,
    pub predicted_ms: f64,
    pub ape: f64,
}

#[derive(Serialize, Clone)]
pub struct Unpredicted {
    pub gpu: String,
    pub workload: String,
    pub reason: String,
}

#[derive(Serialize, Clone)]
pub struct GpuStats {
    pub gpu: String,
    pub n: u32,
    pub mean_ape: f64,
    pub median_ape: f64,
    pub max_ape: f64,
}

#[derive(Serialize, Clone)]
pub struct ModeStats {
    pub mode: &'static str,
    pub n: u32,
    pub mean_ape: f64,
    pub median_ape: f64,
    pub max_ape: f64,
}

/// NeuSight's published methods on the rows we also predicted.
#[derive(Serialize, Clone)]
pub struct BaselineStats {
    pub gpu: String,
    pub method: &'static str,
    pub n: u32,
    pub mean_ape: f64,
    /// Our mean APE on exactly the same rows.
    pub ours_mean_ape: f64,
}

/// The `--json` output of `eval e2e`.
#[derive(Serialize)]
pub struct EvalE2e {
    pub predictor: String,
    /// Whether each GPU was predicted by a model trained without its measurements.
    pub holdout: bool,
    pub workloads: Vec<WorkloadResult>,
    pub per_gpu: Vec<GpuStats>,
    pub overall: Summary,
    pub per_mode: Vec<ModeStats>,
    pub baselines: Vec<BaselineStats>,
    pub unpredicted: Vec<Unpredicted>,
}

/// Predicts one label's workload; `Err` carries the reason it cannot be predicted.
pub fn predict_label(data: &Path, label: &Label, cat: &Catalog, predictor: &dyn Predictor) -> std::result::Result<f64, String> {
    let gpu = cat.get(&label.gpu_dir).map_err(|e| e.to_string())?;
    let name = WorkloadName::parse(&label.workload)?;
    let path = data.join("opgraph").join(format!("{}.csv", label.workload));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("no operator graph {}: {e}", path.display()))?;
    if let Some(layout) = name.option.as_deref().map(parse_parallel_option).transpose()?.flatten() {
        return predict_parallel(data, &text, &name, label, layout, gpu, predictor);
    }
    let graph = import_opgraph(&text, &label.workload, label.num_layer).map_err(|e| e.to_string())?;
    let b = wavecast_sim::estimate(&graph, gpu, predictor).map_err(|e| e.to_string())?;
    let comm: u64 = b.unpriced.iter().filter(|u| u.class == OpClass::Communication).map(|u| u.count).sum();
    if !b.unpriced.is_empty() {
        return Err(format!(
            "{} unpriced ops ({} communication) — predictor '{}' has no model for them",
            b.unpriced.iter().map(|u| u.count).sum::<u64>(),
            comm,
            predictor.name()
        ));
    }
    Ok(b.total_ms)
}

/// The layout a NeuSight workload option names: `dp4`, `tp4`, `pp4_1` (`None` for others,
/// such as `fusion`).
fn parse_parallel_option(option: &str) -> Result<Option<GraphLayout>, String> {
    let number = |s: &str| s.parse::<u64>().ok().filter(|n| (1..=1024).contains(n)).ok_or_else(|| format!("parallel option '{option}' has no valid degree"));
    if let Some(n) = option.strip_prefix("dp") {
        return Ok(Some(GraphLayout { dp: number(n)?, pp: 1, micro_batches: 1 }));
    }
    if let Some(n) = option.strip_prefix("tp") {
        number(n)?;
        return Ok(Some(GraphLayout { dp: 1, pp: 1, micro_batches: 1 }));
    }
    if let Some(rest) = option.strip_prefix("pp") {
        let (p, m) = rest.split_once('_').unwrap_or((rest, "1"));
        return Ok(Some(GraphLayout { dp: 1, pp: number(p)?, micro_batches: number(m)? }));
    }
    Ok(None)
}

/// Layers of a NeuSight model, from its `model_configs/<model>.json` (multi-GPU labels carry
/// no layer count, and their graphs hold one layer).
fn model_layers(data: &Path, model: &str) -> Result<u64, String> {
    let path = data.join("model_configs").join(format!("{model}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("no model config {}: {e}", path.display()))?;
    let spec = wavecast_workload::TransformerSpec::from_json(&text, model).map_err(|e| e.to_string())?;
    Ok(spec.layers)
}

/// A multi-GPU label: the single-layer graph repeated over the model's layers, then scheduled.
fn predict_parallel(data: &Path, text: &str, name: &WorkloadName, label: &Label, layout: GraphLayout, gpu: &wavecast_gpu::Gpu, predictor: &dyn Predictor) -> std::result::Result<f64, String> {
    let layers = model_layers(data, &name.model)?;
    let graph = import_opgraph(text, &label.workload, layers).map_err(|e| e.to_string())?;
    let (ms, unpriced) = wavecast_sim::train::graph_step(&graph, layers, layout, gpu, predictor, &CommModel::default()).map_err(|e| e.to_string())?;
    if let Some(first) = unpriced.first() {
        return Err(format!("{} unpriced ops (e.g. {first}) — predictor '{}' has no model for them", unpriced.len(), predictor.name()));
    }
    Ok(ms)
}

/// The GPU a label's predictor leaves out: the label's own, unless `all_gpus`.
fn holdout_of(gpu: &str, cat: &Catalog, all_gpus: bool) -> Option<String> {
    if all_gpus {
        None
    } else {
        cat.get(gpu).ok().map(|g| g.id.clone())
    }
}

/// The predictor for one label's GPU: the leave-that-GPU-out model unless `all_gpus`; the
/// price ladder reads its tables from `ops_data` (without the left-out GPU's rows).
fn predictor_for(name: &str, gpu: &str, cat: &Catalog, all_gpus: bool, ops_data: Option<&Path>) -> Result<Box<dyn Predictor>, EvalError> {
    Ok(wavecast_predict::by_name_with(name, holdout_of(gpu, cat, all_gpus).as_deref(), ops_data)?)
}

/// `build(gpu)` for each of `gpus`, once: the first alone (it reads the measured folder, which
/// the process keeps for the others), the rest in parallel.
fn per_gpu<'a, P: Send>(gpus: impl IntoIterator<Item = &'a str>, build: impl Fn(&str) -> Result<P, EvalError> + Sync) -> Result<BTreeMap<&'a str, P>, EvalError> {
    let mut distinct: Vec<&str> = Vec::new();
    for gpu in gpus {
        if !distinct.contains(&gpu) {
            distinct.push(gpu);
        }
    }
    let Some((&first, rest)) = distinct.split_first() else { return Ok(BTreeMap::new()) };
    let first = (first, build(first)?);
    let rest: Vec<(&str, P)> = rest.par_iter().map(|&gpu| Ok((gpu, build(gpu)?))).collect::<Result<_, EvalError>>()?;
    Ok(std::iter::once(first).chain(rest).collect())
}

/// `data` when it holds NeuSight's per-op measurements: the tables the ladder and the naive
/// transfer baselines read.
fn per_op_tables(data: &Path) -> Option<&Path> {
    (!wavecast_data::op_sets(data).is_empty()).then_some(data)
}

/// Predicts every label under `data` with predictor `predictor_name`: each GPU by the model
/// trained without its measurements, or by the all-GPU model when `all_gpus`.
pub fn evaluate(data: &Path, cat: &Catalog, predictor_name: &str, all_gpus: bool) -> Result<EvalE2e, EvalError> {
    let labels = load_labels(data)?;
    if labels.is_empty() {
        return Err(EvalError::Invalid(format!("no labels found under {}", data.join("label").display())));
    }
    // One predictor per GPU, then the labels priced in parallel; their answers come back in
    // their order, so the report does not depend on the threads.
    let predictors = per_gpu(labels.iter().map(|l| l.gpu_dir.as_str()), |gpu| predictor_for(predictor_name, gpu, cat, all_gpus, per_op_tables(data)))?;
    let outcomes: Vec<_> = labels.par_iter().map(|l| predict_label(data, l, cat, predictors[l.gpu_dir.as_str()].as_ref())).collect();
    let mut workloads = Vec::new();
    let mut unpredicted = Vec::new();
    for (l, outcome) in labels.iter().zip(outcomes) {
        let mode = if l.workload.contains("-train-") { "training" } else { "inference" };
        match outcome {
            Ok(p) => workloads.push(WorkloadResult {
                gpu: l.gpu_dir.clone(),
                workload: l.workload.clone(),
                mode,
                measured_ms: l.e2e_ms,
                predicted_ms: p,
                ape: ape(p, l.e2e_ms),
            }),
            Err(reason) => unpredicted.push(Unpredicted { gpu: l.gpu_dir.clone(), workload: l.workload.clone(), reason }),
        }
    }
    if workloads.is_empty() {
        let first = unpredicted.first().map_or(String::new(), |u: &Unpredicted| format!(" (e.g. {} on {}: {})", u.workload, u.gpu, u.reason));
        return Err(EvalError::Invalid(format!("none of the {} labels under {} could be predicted{first}; an error of 0 % would be meaningless", labels.len(), data.display())));
    }
    let mut by_gpu: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut by_mode: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    for w in &workloads {
        by_gpu.entry(&w.gpu).or_default().push(w.ape);
        by_mode.entry(w.mode).or_default().push(w.ape);
    }
    let per_gpu = by_gpu
        .iter()
        .map(|(g, v)| {
            let s = Summary::of(v);
            GpuStats { gpu: g.to_string(), n: s.n, mean_ape: s.mean_ape, median_ape: s.median_ape, max_ape: s.max_ape }
        })
        .collect();
    let per_mode = by_mode
        .iter()
        .map(|(m, v)| {
            let s = Summary::of(v);
            ModeStats { mode: m, n: s.n, mean_ape: s.mean_ape, median_ape: s.median_ape, max_ape: s.max_ape }
        })
        .collect();
    let all: Vec<f64> = workloads.iter().map(|w| w.ape).collect();
    let mut baselines = match load_paper_predictions(data)? {
        Some(rows) => baselines(&rows, &workloads),
        None => Vec::new(),
    };
    if let Some(tables) = per_op_tables(data) {
        baselines.extend(transfer_baselines(data, tables, &labels, cat, all_gpus, &workloads)?);
    }
    Ok(EvalE2e { predictor: predictor_name.to_string(), holdout: !all_gpus, workloads, per_gpu, overall: Summary::of(&all), per_mode, baselines, unpredicted })
}

/// The naive transfers ([`Baseline`]) on the labels we predicted: each label's FP32 ops with a
/// table on another GPU priced from the most similar such GPU's measured time (copied, or
/// scaled by the roofline ratio), the rest as the ladder prices them; per GPU and over all.
fn transfer_baselines(data: &Path, tables: &Path, labels: &[Label], cat: &Catalog, all_gpus: bool, ours: &[WorkloadResult]) -> Result<Vec<BaselineStats>, EvalError> {
    let mut out = Vec::new();
    let asked: Vec<(&Label, &WorkloadResult)> = ours.iter().filter_map(|w| Some((labels.iter().find(|l| l.gpu_dir == w.gpu && l.workload == w.workload)?, w))).collect();
    for kind in Baseline::ALL {
        let predictors = per_gpu(asked.iter().map(|(l, _)| l.gpu_dir.as_str()), |gpu| {
            let ops = LadderOps::load(Some(tables), holdout_of(gpu, cat, all_gpus).as_deref()).map_err(EvalError::Invalid)?;
            Ok(Bounded(Box::new(Fp32Baseline { ops, kind })))
        })?;
        // In parallel, answers in the labels' order (as in `evaluate`).
        let rows: Vec<(&str, f64, f64)> = asked
            .par_iter()
            .filter_map(|(l, w)| predict_label(data, l, cat, &predictors[l.gpu_dir.as_str()]).ok().map(|p| (w.gpu.as_str(), ape(p, l.e2e_ms), w.ape)))
            .collect();
        let mut gpus: Vec<&str> = rows.iter().map(|r| r.0).collect();
        gpus.dedup();
        for gpu in gpus.into_iter().chain(std::iter::once("all")) {
            let on: Vec<&(&str, f64, f64)> = rows.iter().filter(|r| gpu == "all" || r.0 == gpu).collect();
            let of = |f: fn(&(&str, f64, f64)) -> f64| Summary::of(&on.iter().map(|r| f(r)).collect::<Vec<_>>()).mean_ape;
            if !on.is_empty() {
                out.push(BaselineStats { gpu: gpu.to_string(), method: kind.as_str(), n: on.len() as u32, mean_ape: of(|r| r.1), ours_mean_ape: of(|r| r.2) });
            }
        }
    }
    Ok(out)
}

/// The methods [`transfer_baselines`] reports (the others are NeuSight's published ones).
pub fn is_transfer_baseline(method: &str) -> bool {
    Baseline::ALL.iter().any(|b| b.as_str() == method)
}

fn baselines(rows: &[PaperRow], ours: &[WorkloadResult]) -> Vec<BaselineStats> {
    type Pick = fn(&PaperRow) -> Option<f64>;
    let methods: [(&'static str, Pick); 4] =
        [("neusight", |r| r.neusight_ms), ("roofline", |r| r.roofline_ms), ("habitat", |r| r.habitat_ms), ("micro", |r| r.micro_ms)];
    let mut out = Vec::new();
    let mut gpus: Vec<&str> = ours.iter().map(|w| w.gpu.as_str()).collect();
    gpus.dedup();
    for gpu in gpus.iter().copied().chain(std::iter::once("all")) {
        for (method, pick) in methods {
            let (mut theirs, mut mine) = (Vec::new(), Vec::new());
            for r in rows.iter().filter(|r| gpu == "all" || r.device == gpu) {
                let (Some(p), Some(w)) = (pick(r), ours.iter().find(|w| w.gpu == r.device && w.workload == r.workload())) else {
                    continue;
                };
                theirs.push(ape(p, r.label_ms));
                mine.push(w.ape);
            }
            if !theirs.is_empty() {
                out.push(BaselineStats {
                    gpu: gpu.to_string(),
                    method,
                    n: theirs.len() as u32,
                    mean_ape: Summary::of(&theirs).mean_ape,
                    ours_mean_ape: Summary::of(&mine).mean_ape,
                });
            }
        }
    }
    out
}

