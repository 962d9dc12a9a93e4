//! `wavecast train`: fit a learned predictor on per-op measurements, on all GPUs and (unless
//! `--no-holdout`) once per left-out GPU, and report its own held-out error.

use super::{catalog, Result};
use crate::cli::TrainArgs;
use crate::cmd::eval_ops::{family_errors, print_family_table};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use wavecast_data::load_neusight_dir;
use crate::cmd::eval_e2e::predict_label;
use std::path::Path;
use wavecast_data::load_labels;
use wavecast_gpu::Catalog;
use wavecast_predict::registry::{self, ModelFile, WeightsFile};
use wavecast_predict::physics::Family;
use wavecast_predict::wavecast::Wavecast;
use wavecast_predict::{Estimate, Predictor};
use wavecast_workload::neusight::WorkloadName;
use wavecast_predict::sample::{samples, Sample};

fn bar(len: u64, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(ProgressStyle::with_template("{msg:>28} [{bar:30}] {pos}/{len} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    pb.set_message(msg.to_string());
    pb
}

/// Run-level calibration of `wavecast` on the end-to-end labels under `data/label` (single-GPU,
/// unfused runs only), leaving out the labels of `holdout`.
fn calibrate(model: ModelFile, data: &Path, cat: &Catalog, holdout: Option<&str>) -> Result<ModelFile> {
    if model.predictor != "wavecast" || !data.join("label").is_dir() {
        return Ok(model);
    }
    let mut w: Wavecast = serde_json::from_value(model.params.clone())?;
    let mut ratios = Vec::new();
    for label in load_labels(data)? {
        let Ok(gpu) = cat.get(&label.gpu_dir) else { continue };
        let plain = WorkloadName::parse(&label.workload).map(|n| n.option.is_none()).unwrap_or(false);
        if !plain || Some(gpu.id.as_str()) == holdout || !model.trained_on.contains(&gpu.id) {
            continue;
        }
        if let Ok(predicted) = predict_label(data, &label, cat, &w) {
            ratios.push((gpu.id.clone(), label.e2e_ms / predicted));
        }
    }
    w.calibrate_runs(&ratios);
    Ok(ModelFile { params: serde_json::to_value(&w)?, ..model })
}

/// Gives the all-GPU `wavecast` model prediction intervals calibrated on held-out GPUs: per
/// family, the 10 % and 90 % quantiles of ln(measured / predicted) of each left-out model on
/// its left-out GPU's kernels.
fn with_heldout_intervals(
    full: ModelFile,
    holdout: &BTreeMap<String, ModelFile>,
    all: &[Sample],
    data: &Path,
    cat: &Catalog,
) -> Result<ModelFile> {
    if full.predictor != "wavecast" || holdout.is_empty() {
        return Ok(full);
    }
    let mut residuals: BTreeMap<Family, Vec<f64>> = BTreeMap::new();
    for (gpu, model) in holdout {
        let w: Wavecast = serde_json::from_value(model.params.clone())?;
        for s in all.iter().filter(|s| &s.gpu.id == gpu) {
            if let Estimate::Time(t) = w.predict_isolated(&s.op, &s.gpu) {
                residuals.entry(s.family).or_default().push((s.latency_s / t.seconds).ln());
            }
        }
    }
    let mut w: Wavecast = serde_json::from_value(full.params.clone())?;
    let mut runs = heldout_run_residuals(holdout, data, cat)?;
    if runs.len() >= 5 {
        runs.sort_by(f64::total_cmp);
        let q = |p: f64| runs[((runs.len() - 1) as f64 * p) as usize];
        w.run_interval = [q(0.1), q(0.9)];
    }
    for (family, mut r) in residuals {
        r.sort_by(f64::total_cmp);
        let q = |p: f64| r[((r.len() - 1) as f64 * p) as usize];
        if let Some(m) = w.families.get_mut(&family) {
            m.interval = [q(0.1), q(0.9)];
        }
    }
    Ok(ModelFile { params: serde_json::to_value(&w)?, ..full })
}

/// ln(measured / predicted) of every single-GPU end-to-end label, each predicted by the model
/// trained without its GPU.
fn heldout_run_residuals(holdout: &BTreeMap<String, ModelFile>, data: &Path, cat: &Catalog) -> Result<Vec<f64>> {
    if !data.join("label").is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for label in load_labels(data)? {
        let Ok(gpu) = cat.get(&label.gpu_dir) else { continue };
        let Some(model) = holdout.get(&gpu.id) else { continue };
        if WorkloadName::parse(&label.workload).map(|n| n.option.is_some()).unwrap_or(true) {
            continue;
        }
        let w: Wavecast = serde_json::from_value(model.params.clone())?;
        if let Ok(predicted) = predict_label(data, &label, cat, &w) {
            out.push((label.e2e_ms / predicted).ln());
        }
    }
    Ok(out)
}

/// The model-shaped measurements under `data/ops/test`, when there are any. Only `wavecast`
/// learns from them (see `registry::train`); a left-out GPU's rows are left out with the rest.
fn model_shaped_samples(data: &Path, cat: &Catalog) -> Result<Vec<Sample>> {
    let dir = data.join("ops").join("test");
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let report = load_neusight_dir(&dir, cat)?;
    eprintln!("{} (model-shaped)", report.summary());
    Ok(samples(&report.rows, cat).into_iter().map(|s| Sample { model_shaped: true, ..s }).collect())
}

pub fn run(a: TrainArgs) -> Result<()> {
    let cat = catalog(&a.gpu_file)?;
    let dir = a.data.join("ops").join("train");
    eprintln!("loading {}", dir.display());
    let report = load_neusight_dir(&dir, &cat)?;
    eprintln!("{}", report.summary());
    let mut all = samples(&report.rows, &cat);
    all.extend(model_shaped_samples(&a.data, &cat)?);
    if all.is_empty() {
        return Err(format!("no usable measurements under {}", dir.display()).into());
    }
    let mut gpus: Vec<String> = all.iter().map(|s| s.gpu.id.clone()).collect();
    gpus.sort();
    gpus.dedup();
    let runs = if a.no_holdout { 1 } else { 1 + gpus.len() as u64 };
    let pb = bar(runs, &format!("training {}", a.predictor));
    let full = calibrate(registry::train(&a.predictor, &all, a.seed, Some(&pb))?, &a.data, &cat, None)?;
    pb.inc(1);
    let mut holdout = BTreeMap::new();
    let mut held_errors = Vec::new();
    if !a.no_holdout {
        for g in &gpus {
            let train: Vec<Sample> = all.iter().filter(|s| &s.gpu.id != g).cloned().collect();
            let model = calibrate(registry::train(&a.predictor, &train, a.seed, Some(&pb))?, &a.data, &cat, Some(g))?;
            let predictor = registry::load(&model)?;
            for (set, model_shaped) in [("ops/train", false), ("ops/test", true)] {
                let test: Vec<&Sample> = all.iter().filter(|s| &s.gpu.id == g && s.model_shaped == model_shaped).collect();
                if !test.is_empty() {
                    held_errors.push((format!("{g} {set}"), family_errors(&test, predictor.as_ref())));
                }
            }
            holdout.insert(g.clone(), model);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let full = with_heldout_intervals(full, &holdout, &all, &a.data, &cat)?;
    let file = WeightsFile { all: full, holdout };
    if let Some(parent) = a.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&a.out, serde_json::to_string(&file)?)?;
    eprintln!("wrote {} ({} models)", a.out.display(), runs);
    if !held_errors.is_empty() {
        println!("validation: each GPU predicted by the model trained without it (isolated latency)");
        print_family_table(&held_errors);
    }
    Ok(())
}
