//! Training, saving and loading of the learned predictors. Trained parameters are JSON; the
//! copies shipped with wavecast live in `data/weights/<name>.json` at the repository root and
//! are embedded in the binary. Each file holds a model trained on every measured GPU and one
//! per left-out GPU (for leave-one-GPU-out evaluation).

use crate::li::Li;
use crate::neusight::NeuSight;
use crate::pm2lat::Pm2Lat;
use crate::sample::Sample;
use crate::wavecast::Wavecast;
use crate::{PredictError, Predictor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Learned predictors that `wavecast train` knows.
pub const TRAINABLE: &[&str] = &["li", "wavecast", "neusight", "pm2lat"];

/// Embedded weights: (predictor name, JSON text).
const SHIPPED: &[(&str, &str)] = &[
    ("li", include_str!("../../../data/weights/li.json")),
    ("wavecast", include_str!("../../../data/weights/wavecast.json")),
    ("neusight", include_str!("../../../data/weights/neusight.json")),
    ("pm2lat", include_str!("../../../data/weights/pm2lat.json")),
];

/// One trained model and how it was made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelFile {
    pub predictor: String,
    /// Catalog ids of the GPUs whose measurements trained it.
    pub trained_on: Vec<String>,
    pub seed: u64,
    pub params: serde_json::Value,
}

/// What `data/weights/<name>.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WeightsFile {
    pub all: ModelFile,
    /// Keyed by the catalog id of the GPU left out.
    #[serde(default)]
    pub holdout: BTreeMap<String, ModelFile>,
}

fn to_value<T: Serialize>(v: &T) -> Result<serde_json::Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

/// Trains predictor `name` on `samples`.
pub fn train(name: &str, samples: &[Sample], seed: u64, progress: Option<&indicatif::ProgressBar>) -> Result<ModelFile, String> {
    let mut trained_on: Vec<String> = samples.iter().map(|s| s.gpu.id.clone()).collect();
    trained_on.sort();
    trained_on.dedup();
    // The published baselines train on microbenchmarks only; `wavecast` also learns from the
    // model-shaped measurements of its training GPUs.
    let microbenchmarks = || -> Vec<Sample> { samples.iter().filter(|s| !s.model_shaped).cloned().collect() };
    let params = match name {
        "li" => to_value(&Li::fit(&microbenchmarks())?)?,
        "wavecast" => to_value(&Wavecast::fit(samples, seed, progress)?)?,
        "neusight" => to_value(&NeuSight::fit(&microbenchmarks(), seed, progress)?)?,
        "pm2lat" => to_value(&Pm2Lat::fit(&microbenchmarks())?)?,
        other => return Err(format!("'{other}' is not a trainable predictor (trainable: {})", TRAINABLE.join(", "))),
    };
    Ok(ModelFile { predictor: name.to_string(), trained_on, seed, params })
}

/// Builds the predictor a model file describes.
pub fn load(file: &ModelFile) -> Result<Box<dyn Predictor>, PredictError> {
    let err = |e: serde_json::Error| PredictError::Load { name: file.predictor.clone(), reason: e.to_string() };
    Ok(match file.predictor.as_str() {
        "li" => Box::new(serde_json::from_value::<Li>(file.params.clone()).map_err(err)?),
        "wavecast" => Box::new(serde_json::from_value::<Wavecast>(file.params.clone()).map_err(err)?),
        "neusight" => Box::new(serde_json::from_value::<NeuSight>(file.params.clone()).map_err(err)?),
        "pm2lat" => Box::new(serde_json::from_value::<Pm2Lat>(file.params.clone()).map_err(err)?),
        other => return Err(PredictError::Load { name: other.to_string(), reason: "unknown predictor in model file".into() }),
    })
}

/// The all-GPU model only; skipping the left-out models keeps start-up fast.
#[derive(Deserialize)]
struct AllOnly {
    all: ModelFile,
}

/// The shipped all-GPU model of `name`, if wavecast ships one.
pub fn shipped_all(name: &str) -> Option<Result<ModelFile, PredictError>> {
    SHIPPED.iter().find(|(n, _)| *n == name).map(|(n, text)| {
        serde_json::from_str::<AllOnly>(text).map(|f| f.all).map_err(|e| PredictError::Load { name: n.to_string(), reason: e.to_string() })
    })
}

/// The shipped weights file of `name`, if wavecast ships one.
pub fn shipped(name: &str) -> Option<Result<WeightsFile, PredictError>> {
    SHIPPED.iter().find(|(n, _)| *n == name).map(|(n, text)| {
        serde_json::from_str(text).map_err(|e| PredictError::Load { name: n.to_string(), reason: e.to_string() })
    })
}
