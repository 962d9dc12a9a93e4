//! Learning: every fit wavecast's learned predictors need, and the only crate that depends on
//! candle. Prediction (`wavecast-predict`) reads what this crate writes — the parameters of
//! each learned predictor as JSON — and trains none of them (it keeps only the sustained
//! roofline's grid search, which the evaluations refit per left-out GPU).
//!
//! - [`fit()`]: one learned predictor on a set of samples, through an exhaustive `match` on
//!   [`LearnedKind`] (a new learned predictor does not compile until it has its arm here).
//! - [`train`]: the leave-one-GPU-out trainer ([`logo`]) for any learned predictor: on every
//!   GPU, then once per left-out GPU (no row of that GPU reaches its model), with `wavecast`'s
//!   run-level calibration and held-out intervals ([`calibrate`]) and each left-out model's
//!   error on its GPU.
//! - [`conv`]: the convolution model behind the registry's vision fallbacks.
//! - [`ladder`]: the price ladder's shipped surfaces (measured tables reduced to corrections
//!   over physics).
//! - Building blocks: [`mlp`] (candle training of the MLPs), `wavecast_stats::fit` (relative
//!   least squares), [`samples`] (floors, kernel-dominated rows, balancing), [`progress`] bars.

pub mod calibrate;
pub mod conv;
pub mod ladder;
pub mod li;
pub mod logo;
pub mod mlp;
pub mod neusight;
pub mod pm2lat;
pub mod samples;
pub mod wavecast;

use indicatif::ProgressBar;
use std::path::Path;
use thiserror::Error;
use wavecast_data::{load_neusight_dir, op_sets, DataError};
use wavecast_eval::ops::{family_errors, FamilyError};
use wavecast_gpu::Catalog;
use wavecast_predict::registry::{self, Learned, LearnedKind, ModelFile, WeightsFile};
use wavecast_predict::sample::{samples as to_samples, Sample};
use wavecast_predict::PredictError;

/// Why training could not run; the message is the one line users see.
#[derive(Debug, Error)]
pub enum TrainError {
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Predict(#[from] PredictError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for TrainError {
    fn from(s: String) -> Self {
        TrainError::Invalid(s)
    }
}

/// Progress bars of the trainers (drawn on stderr, hidden when it is not a terminal).
pub mod progress {
    use indicatif::{ProgressBar, ProgressStyle};

    pub fn bar(len: u64, msg: &str) -> ProgressBar {
        let pb = ProgressBar::new(len);
        pb.set_style(ProgressStyle::with_template("{msg:>28} [{bar:30}] {pos}/{len} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_bar()));
        pb.set_message(msg.to_string());
        pb
    }
}

/// The learned predictor `name` of the registry.
pub fn trainable(name: &str) -> Result<LearnedKind, TrainError> {
    registry::learned().find(|(_, e)| e.name == name).map(|(k, _)| k).ok_or_else(|| {
        let names: Vec<&str> = registry::learned().map(|(_, e)| e.name).collect();
        TrainError::Invalid(format!("'{name}' is not a trainable predictor (trainable: {})", names.join(", ")))
    })
}

/// Trains `kind` on `samples`. The published baselines train on microbenchmarks only;
/// `wavecast` also learns from the model-shaped measurements of its training GPUs.
pub fn fit(kind: LearnedKind, samples: &[Sample], seed: u64, progress: Option<&ProgressBar>) -> Result<ModelFile, String> {
    let mut trained_on: Vec<String> = samples.iter().map(|s| s.gpu.id.clone()).collect();
    trained_on.sort();
    trained_on.dedup();
    let microbenchmarks = || -> Vec<Sample> { samples.iter().filter(|s| !s.model_shaped).cloned().collect() };
    let params = match kind {
        LearnedKind::Li => li::fit(&microbenchmarks())?.save()?,
        LearnedKind::Wavecast => wavecast::fit(samples, seed, progress)?.save()?,
        LearnedKind::NeuSight => neusight::fit(&microbenchmarks(), seed, progress)?.save()?,
        LearnedKind::Pm2Lat => pm2lat::fit(&microbenchmarks())?.save()?,
    };
    Ok(ModelFile { predictor: kind.name().to_string(), trained_on, seed, params })
}

/// The training samples under `data`: every per-op set of [`op_sets`] — the random-shape
/// microbenchmarks of `ops/train` and `amd_ops/train` and, when present, the model-shaped
/// measurements of `ops/test` and `amd_ops/test` (marked `model_shaped`; only `wavecast` learns
/// from them). `log` hears what was loaded.
pub fn load_samples(data: &Path, cat: &Catalog, log: &dyn Fn(&str)) -> Result<Vec<Sample>, TrainError> {
    let mut all = Vec::new();
    for set in op_sets(data) {
        log(&format!("loading {}", set.dir.display()));
        let report = load_neusight_dir(&set.dir, cat)?;
        log(&format!("{}: {}", set.name, report.summary()));
        all.extend(to_samples(&report.rows, cat).into_iter().map(|s| Sample { model_shaped: set.model_shaped, ..s }));
    }
    if all.is_empty() {
        return Err(TrainError::Invalid(format!("no usable measurements under {} (ops/ or amd_ops/)", data.display())));
    }
    Ok(all)
}

/// What [`train`] made.
pub struct Trained {
    /// The all-GPU model and, unless left out, one per left-out GPU.
    pub weights: WeightsFile,
    /// Per left-out GPU and kind of shape (`"<gpu> random shapes"`, `"<gpu> model-shaped"`): the
    /// isolated-latency error by family of the model trained without that GPU.
    pub validation: Vec<(String, Vec<FamilyError>)>,
}

impl Trained {
    pub fn models(&self) -> usize {
        1 + self.weights.holdout.len()
    }
}

/// Trains `kind` on `samples` on every GPU and, when `holdout`, once per left-out GPU, with the
/// run-level calibration on the end-to-end labels under `data` (`wavecast` only). `progress`
/// draws a bar on stderr.
pub fn train(
    kind: LearnedKind,
    samples: &[Sample],
    data: &Path,
    cat: &Catalog,
    seed: u64,
    holdout: bool,
    progress: bool,
) -> Result<Trained, TrainError> {
    let gpus = logo::gpus(samples, |s| s.gpu.id.as_str());
    let runs = if holdout { 1 + gpus.len() as u64 } else { 1 };
    let pb = if progress { progress::bar(runs, &format!("training {}", kind.name())) } else { ProgressBar::hidden() };
    let models = logo::leave_one_gpu_out(samples, |s| s.gpu.id.as_str(), holdout, |rows, left_out| {
        let model = calibrate::calibrate(fit(kind, rows, seed, Some(&pb))?, data, cat, left_out)?;
        pb.inc(1);
        Ok::<_, TrainError>(model)
    })?;
    pb.finish_and_clear();
    let mut validation = Vec::new();
    for (g, model) in &models.holdout {
        let predictor = registry::load(model)?;
        for (set, model_shaped) in [("random shapes", false), ("model-shaped", true)] {
            let test: Vec<&Sample> = samples.iter().filter(|s| &s.gpu.id == g && s.model_shaped == model_shaped).collect();
            if !test.is_empty() {
                validation.push((format!("{g} {set}"), family_errors(&test, predictor.as_ref())));
            }
        }
    }
    let all = calibrate::with_heldout_intervals(models.all, &models.holdout, samples, data, cat)?;
    Ok(Trained { weights: WeightsFile { all, holdout: models.holdout }, validation })
}
