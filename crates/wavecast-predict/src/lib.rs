//! Per-operator time prediction. Every predictor implements [`Predictor`] and lives in its own
//! module; the CLI picks one by name through [`by_name`].

pub mod roofline;

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
    fn predict(&self, op: &Op, gpu: &Gpu) -> Estimate;
}

/// The predictor used when none is named.
pub const DEFAULT_PREDICTOR: &str = "roofline";

/// Names accepted by `--predictor`.
pub const PREDICTORS: &[&str] = &["roofline"];

pub fn by_name(name: &str) -> Result<Box<dyn Predictor>, PredictError> {
    match name {
        "roofline" => Ok(Box::new(Roofline)),
        other => Err(PredictError::UnknownPredictor(other.to_string(), PREDICTORS.join(", "))),
    }
}
