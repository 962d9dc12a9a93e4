//! What `wavecast` learns beyond its per-op fit: the run-level calibration from measured
//! end-to-end runs (NeuSight's labels, single-GPU unfused runs only) and prediction intervals
//! from the errors of the models trained without each GPU. Other predictors pass unchanged.

use crate::TrainError;
use std::collections::BTreeMap;
use std::path::Path;
use wavecast_data::load_labels;
use wavecast_eval::e2e::predict_label;
use wavecast_gpu::Catalog;
use wavecast_predict::physics::Family;
use wavecast_predict::registry::{Learned, LearnedKind, ModelFile};
use wavecast_predict::sample::Sample;
use wavecast_predict::wavecast::Wavecast;
use wavecast_predict::{Context, Estimate, Predictor};
use wavecast_stats::decile_interval;
use wavecast_workload::neusight::WorkloadName;

fn is_wavecast(model: &ModelFile) -> bool {
    model.predictor == LearnedKind::Wavecast.name()
}

/// Run-level calibration of `wavecast` on the end-to-end labels under `data/label` (single-GPU,
/// unfused runs only), leaving out the labels of `holdout` and of GPUs the model was not
/// trained on.
pub fn calibrate(model: ModelFile, data: &Path, cat: &Catalog, holdout: Option<&str>) -> Result<ModelFile, TrainError> {
    if !is_wavecast(&model) || !data.join("label").is_dir() {
        return Ok(model);
    }
    let mut w = Wavecast::load(&model.params)?;
    let mut ratios = Vec::new();
    for label in load_labels(data)? {
        let Ok(gpu) = cat.get(&label.gpu_dir) else { continue };
        let plain = WorkloadName::parse(&label.workload).map(|n| n.option.is_none()).unwrap_or(false);
        if !plain || Some(gpu.id.as_str()) == holdout || !model.trained_on.contains(&gpu.id) {
            continue;
        }
        if let Ok(predicted) = predict_label(data, &label, cat, &w) {
            ratios.push((gpu, label.e2e_ms / predicted));
        }
    }
    crate::wavecast::calibrate_runs(&mut w, &ratios);
    Ok(ModelFile { params: w.save()?, ..model })
}

/// Gives the all-GPU `wavecast` model prediction intervals calibrated on held-out GPUs: per
/// family, the 10 % and 90 % quantiles of ln(measured / predicted) of each left-out model on
/// its left-out GPU's kernels; for whole runs, those of each label predicted by the model
/// trained without its GPU.
pub fn with_heldout_intervals(
    full: ModelFile,
    holdout: &BTreeMap<String, ModelFile>,
    all: &[Sample],
    data: &Path,
    cat: &Catalog,
) -> Result<ModelFile, TrainError> {
    if !is_wavecast(&full) || holdout.is_empty() {
        return Ok(full);
    }
    let mut residuals: BTreeMap<Family, Vec<f64>> = BTreeMap::new();
    for (gpu, model) in holdout {
        let w = Wavecast::load(&model.params)?;
        for s in all.iter().filter(|s| &s.gpu.id == gpu) {
            if let Estimate::Time(t) = w.predict(&s.op, &s.gpu, &Context::ISOLATED) {
                residuals.entry(s.family).or_default().push((s.latency_s / t.seconds).ln());
            }
        }
    }
    let mut w = Wavecast::load(&full.params)?;
    let runs = heldout_run_residuals(holdout, data, cat)?;
    if runs.len() >= 5 {
        w.run_interval = decile_interval(&runs);
    }
    for (family, r) in residuals {
        if let Some(m) = w.families.get_mut(&family) {
            m.interval = decile_interval(&r);
        }
    }
    Ok(ModelFile { params: w.save()?, ..full })
}

/// ln(measured / predicted) of every single-GPU end-to-end label, each predicted by the model
/// trained without its GPU.
pub fn heldout_run_residuals(holdout: &BTreeMap<String, ModelFile>, data: &Path, cat: &Catalog) -> Result<Vec<f64>, TrainError> {
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
        let w = Wavecast::load(&model.params)?;
        if let Ok(predicted) = predict_label(data, &label, cat, &w) {
            out.push((label.e2e_ms / predicted).ln());
        }
    }
    Ok(out)
}

