//! Per-operator time prediction. Every predictor implements [`Predictor`] and lives in its own
//! module; the CLI picks one by name through [`by_name`].

pub mod adapters;
pub mod calibration;
pub mod conv;
pub mod fit;
pub mod kernels;
pub mod li;
pub mod mlp;
pub mod neusight;
pub mod physics;
pub mod pm2lat;
pub mod registry;
pub mod comm;
pub mod roofline;
pub mod wave_scaling;
pub mod sample;
pub mod wavecast;

use serde::Serialize;
use thiserror::Error;
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

pub use roofline::Roofline;

/// Predicted device time of one operator, with an interval where the predictor has one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OpTime {
    pub seconds: f64,
    /// Lower and upper bound of the prediction interval (equal to `seconds` when unknown).
    pub lo: f64,
    pub hi: f64,
}

impl OpTime {
    pub fn exact(seconds: f64) -> OpTime {
        OpTime { seconds, lo: seconds, hi: seconds }
    }
}

/// What a predictor says about one operator.
#[derive(Debug, Clone, PartialEq)]
pub enum Estimate {
    Time(OpTime),
    /// The predictor has no model for this op (e.g. communication); it is reported, not dropped.
    Unpriced(String),
}

#[derive(Debug, Error)]
pub enum PredictError {
    #[error("unknown predictor '{0}' (available: {1})")]
    UnknownPredictor(String, String),
    #[error("cannot load predictor '{name}': {reason}")]
    Load { name: String, reason: String },
    #[error("predictor '{name}' produced a non-finite time for {op}")]
    NonFinite { name: String, op: String },
}

pub trait Predictor: Send + Sync {
    fn name(&self) -> &str;
    /// Device time of `op` inside a running model (kernels queued back to back).
    fn predict(&self, op: &Op, gpu: &Gpu) -> Estimate;
    /// Time of `op` called on its own, as microbenchmarks measure it: includes the host-side
    /// launch floor that hides behind GPU work in a real run.
    fn predict_isolated(&self, op: &Op, gpu: &Gpu) -> Estimate {
        self.predict(op, gpu)
    }
}

/// The predictor used when none is named.
pub const DEFAULT_PREDICTOR: &str = "wavecast";

/// Names accepted by `--predictor`.
pub const PREDICTORS: &[&str] = &["roofline", "li", "wavecast", "neusight", "pm2lat"];

/// The predictor `name` with its shipped weights (trained on every measured GPU).
pub fn by_name(name: &str) -> Result<Box<dyn Predictor>, PredictError> {
    by_name_holdout(name, None)
}

/// Like [`by_name`], but for a learned predictor use the model trained without `holdout`'s
/// measurements when one is shipped (leave-one-GPU-out evaluation).
pub fn by_name_holdout(name: &str, holdout: Option<&str>) -> Result<Box<dyn Predictor>, PredictError> {
    if name == "roofline" {
        return Ok(Box::new(Roofline));
    }
    let unknown = || PredictError::UnknownPredictor(name.to_string(), PREDICTORS.join(", "));
    let inner = match holdout {
        Some(gpu) => {
            let file = registry::shipped(name).ok_or_else(unknown)??;
            registry::load(file.holdout.get(gpu).unwrap_or(&file.all))?
        }
        None => registry::load(&registry::shipped_all(name).ok_or_else(unknown)??)?,
    };
    // Convolutions, recurrent layers and the other vision ops go to their own models.
    Ok(Box::new(adapters::WithConv::shipped(inner, holdout)))
}
