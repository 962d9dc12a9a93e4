//! `wavecast eval e2e`: end-to-end error of a predictor on every labelled workload.

use super::{catalog, print_json, Result};
use crate::cli::EvalE2eArgs;
use crate::table;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use wavecast_data::{load_labels, load_paper_predictions, Label, PaperRow};
use wavecast_gpu::Catalog;
use wavecast_ir::OpClass;
use wavecast_predict::Predictor;
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
pub struct Stats {
    pub n: u32,
    pub mean_ape: f64,
    pub median_ape: f64,
    pub max_ape: f64,
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

#[derive(Serialize)]
pub struct EvalE2e {
    pub predictor: String,
    /// Whether each GPU was predicted by a model trained without its measurements.
    pub holdout: bool,
    pub workloads: Vec<WorkloadResult>,
    pub per_gpu: Vec<GpuStats>,
    pub overall: Stats,
    pub per_mode: Vec<ModeStats>,
    pub baselines: Vec<BaselineStats>,
    pub unpredicted: Vec<Unpredicted>,
}

pub fn ape(predicted: f64, measured: f64) -> f64 {
    100.0 * (predicted - measured).abs() / measured
}

pub fn stats(apes: &[f64]) -> Stats {
    let mut v = apes.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    };
    Stats {
        n: n as u32,
        mean_ape: if n > 0 { v.iter().sum::<f64>() / n as f64 } else { 0.0 },
        median_ape: median,
        max_ape: v.last().copied().unwrap_or(0.0),
    }
}

/// Predicts one label's workload; `Err` carries the reason it cannot be predicted.
pub fn predict_label(data: &Path, label: &Label, cat: &Catalog, predictor: &dyn Predictor) -> std::result::Result<f64, String> {
    let gpu = cat.get(&label.gpu_dir).map_err(|e| e.to_string())?;
    WorkloadName::parse(&label.workload)?;
    let path = data.join("opgraph").join(format!("{}.csv", label.workload));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("no operator graph {}: {e}", path.display()))?;
    let graph = import_opgraph(&text, &label.workload, label.num_layer).map_err(|e| e.to_string())?;
    let b = wavecast_aggregate::estimate(&graph, gpu, predictor).map_err(|e| e.to_string())?;
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

/// The predictor for one label's GPU: the leave-that-GPU-out model unless `all_gpus`.
fn predictor_for(name: &str, gpu: &str, cat: &Catalog, all_gpus: bool) -> Result<Box<dyn Predictor>> {
    let holdout = if all_gpus { None } else { cat.get(gpu).ok().map(|g| g.id.clone()) };
    Ok(wavecast_predict::by_name_holdout(name, holdout.as_deref())?)
}

pub fn evaluate(data: &Path, cat: &Catalog, predictor_name: &str, all_gpus: bool) -> Result<EvalE2e> {
    let labels = load_labels(data)?;
    if labels.is_empty() {
        return Err(format!("no labels found under {}", data.join("label").display()).into());
    }
    let mut workloads = Vec::new();
    let mut unpredicted = Vec::new();
    for l in &labels {
        let mode = if l.workload.contains("-train-") { "training" } else { "inference" };
        let predictor = predictor_for(predictor_name, &l.gpu_dir, cat, all_gpus)?;
        match predict_label(data, l, cat, predictor.as_ref()) {
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
    let mut by_gpu: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut by_mode: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    for w in &workloads {
        by_gpu.entry(&w.gpu).or_default().push(w.ape);
        by_mode.entry(w.mode).or_default().push(w.ape);
    }
    let per_gpu = by_gpu
        .iter()
        .map(|(g, v)| {
            let s = stats(v);
            GpuStats { gpu: g.to_string(), n: s.n, mean_ape: s.mean_ape, median_ape: s.median_ape, max_ape: s.max_ape }
        })
        .collect();
    let per_mode = by_mode
        .iter()
        .map(|(m, v)| {
            let s = stats(v);
            ModeStats { mode: m, n: s.n, mean_ape: s.mean_ape, median_ape: s.median_ape, max_ape: s.max_ape }
        })
        .collect();
    let all: Vec<f64> = workloads.iter().map(|w| w.ape).collect();
    let baselines = match load_paper_predictions(data)? {
        Some(rows) => baselines(&rows, &workloads),
        None => Vec::new(),
    };
    Ok(EvalE2e { predictor: predictor_name.to_string(), holdout: !all_gpus, workloads, per_gpu, overall: stats(&all), per_mode, baselines, unpredicted })
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
                    mean_ape: stats(&theirs).mean_ape,
                    ours_mean_ape: stats(&mine).mean_ape,
                });
            }
        }
    }
    out
}

pub fn run(a: EvalE2eArgs) -> Result<()> {
    let cat = catalog(&a.gpu_file)?;
    wavecast_predict::by_name(&a.predictor)?;
    let r = evaluate(&a.data, &cat, &a.predictor, a.no_holdout)?;
    if a.json {
        return print_json(&r);
    }
    print_human(&r);
    Ok(())
}

fn print_human(r: &EvalE2e) {
    let mut t = table::new(&["GPU", "workload", "measured ms", "predicted ms", "APE"]);
    for w in &r.workloads {
        t.add_row(vec![w.gpu.clone(), w.workload.clone(), table::ms(w.measured_ms), table::ms(w.predicted_ms), table::pct(w.ape)]);
    }
    println!("{t}");
    let mut t = table::new(&["GPU", "n", "mean APE", "median", "max"]);
    for g in &r.per_gpu {
        t.add_row(vec![g.gpu.clone(), g.n.to_string(), table::pct(g.mean_ape), table::pct(g.median_ape), table::pct(g.max_ape)]);
    }
    for m in &r.per_mode {
        t.add_row(vec![format!("all {}", m.mode), m.n.to_string(), table::pct(m.mean_ape), table::pct(m.median_ape), table::pct(m.max_ape)]);
    }
    let o = &r.overall;
    t.add_row(vec!["overall".into(), o.n.to_string(), table::pct(o.mean_ape), table::pct(o.median_ape), table::pct(o.max_ape)]);
    let how = if r.holdout { "each GPU predicted by the model trained without its measurements" } else { "all-GPU model" };
    println!("predictor '{}' ({how}): absolute percentage error of end-to-end time", r.predictor);
    println!("{t}");
    if !r.baselines.is_empty() {
        let mut t = table::new(&["GPU", "method", "rows", "their mean APE", &format!("{} on same rows", r.predictor)]);
        for b in &r.baselines {
            t.add_row(vec![b.gpu.clone(), b.method.to_string(), b.n.to_string(), table::pct(b.mean_ape), table::pct(b.ours_mean_ape)]);
        }
        println!("published predictions (paper_predictions.csv) on the same workloads:");
        println!("{t}");
    }
    if !r.unpredicted.is_empty() {
        println!("not predicted ({}):", r.unpredicted.len());
        for u in &r.unpredicted {
            println!("  {} {}: {}", u.gpu, u.workload, u.reason);
        }
    }
}
