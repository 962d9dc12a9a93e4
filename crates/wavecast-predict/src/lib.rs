//! Per-operator time prediction: how long one operator takes on one GPU, inside a running
//! model or called on its own ([`Context`]). Fitting the learned predictors (candle, least
//! squares, leave-one-GPU-out) lives in `wavecast-train`; the one fit here is the sustained
//! roofline's grid search ([`sustained::fit`], no learning library), because the evaluations in
//! `wavecast-eval` refit it without each left-out GPU and `wavecast-train` depends on them.
//!
//! **Adding a predictor = one module + one table row.** The module implements [`Predictor`]
//! (and [`registry::Learned`] when it has parameters: they are its serde form, shipped as
//! `weights/<name>.json` and embedded); the row goes into [`registry::PREDICTORS`], the only
//! list of predictor names — [`by_name`], [`DEFAULT_PREDICTOR`], the CLI's `--predictor` help
//! and `wavecast fit` read it. A learned predictor also adds a [`registry::LearnedKind`]
//! variant, and the compiler then asks `wavecast-train` for its trainer.
//!
//! Every predictor [`by_name`] builds is wrapped in [`bounds::Bounded`]: no time or interval
//! end it returns is below the op's physical floor, whatever the predictor computed. One that
//! returns bare times gets its held-out interval ([`interval::WithInterval`]).

pub mod adapters;
pub mod bounds;
pub mod calibration;
pub mod interval;
pub mod ladder;
pub mod provenance;
pub mod conv;
pub mod kernels;
pub mod li;
pub mod measured;
mod memo;
pub mod mlp;
pub mod neusight;
pub mod physics;
pub mod pm2lat;
pub mod power;
pub mod registry;
pub mod comm;
pub mod roofline;
pub mod wave_scaling;
pub mod sample;
pub mod sustained;
pub mod unmodelled;
pub mod wavecast;

use serde::Serialize;
use thiserror::Error;
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

pub use provenance::{Provenance, Rung};
pub use roofline::Roofline;

/// Predicted device time of one operator, with an interval where the predictor has one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OpTime {
    pub seconds: f64,
    /// Lower and upper bound of the prediction interval (equal to `seconds` when unknown).
    pub lo: f64,
    pub hi: f64,
    /// Which rung of the price ladder answered (physics for the analytic and learned models).
    pub provenance: Provenance,
}

impl OpTime {
    pub fn exact(seconds: f64) -> OpTime {
        OpTime { seconds, lo: seconds, hi: seconds, provenance: Provenance::PHYSICS }
    }
}

/// What a predictor says about one operator.
#[derive(Debug, Clone, PartialEq)]
pub enum Estimate {
    Time(OpTime),
    /// The predictor has no model for this op (e.g. communication); it is reported, not dropped.
    Unpriced(String),
}

impl Estimate {
    /// The priced seconds, if it is priced.
    pub fn seconds(&self) -> Option<f64> {
        match self {
            Estimate::Time(t) => Some(t.seconds),
            Estimate::Unpriced(_) => None,
        }
    }
}

#[derive(Debug, Error)]
pub enum PredictError {
    #[error("unknown predictor '{0}' (available: {1})")]
    UnknownPredictor(String, String),
    #[error("cannot load predictor '{name}': {reason}")]
    Load { name: String, reason: String },
    #[error("predictor '{name}' produced a non-finite time for {op}")]
    NonFinite { name: String, op: String },
    /// The work cannot run on this GPU as asked (e.g. a dtype it has no units for).
    #[error("{0}")]
    Unsupported(String),
    /// The graph's sizes are past what can be priced exactly (see `Graph::check_scale`).
    #[error("{0}")]
    Shape(#[from] wavecast_ir::DimError),
}

/// Where an operator runs, which decides what its time includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Context {
    /// Called on its own, as microbenchmarks measure it: the time includes the host-side launch
    /// floor that hides behind GPU work in a real run. `false`: inside a running model, kernels
    /// queued back to back.
    pub isolated: bool,
}

impl Context {
    /// Inside a running model (kernels queued back to back).
    pub const IN_MODEL: Context = Context { isolated: false };
    /// Called on its own, as microbenchmarks measure it.
    pub const ISOLATED: Context = Context { isolated: true };
}

pub trait Predictor: Send + Sync {
    fn name(&self) -> &str;
    /// Device time of `op` on `gpu` in `ctx`.
    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate;
    /// Whether every time it gives is raised to the physical floor: true only for
    /// [`bounds::Bounded`], the outermost layer of every predictor a report uses.
    fn bounded(&self) -> bool {
        false
    }
}

pub use registry::{DEFAULT_PREDICTOR, DEFAULT_SERVE_PREDICTOR, PREDICTORS};

/// The predictor `name` with its shipped weights (trained on every measured GPU) and its
/// registry fallbacks.
pub fn by_name(name: &str) -> Result<Box<dyn Predictor>, PredictError> {
    by_name_holdout(name, None)
}

/// Like [`by_name`], but for a learned predictor use the model trained without `holdout`'s
/// measurements when one is shipped (leave-one-GPU-out evaluation).
pub fn by_name_holdout(name: &str, holdout: Option<&str>) -> Result<Box<dyn Predictor>, PredictError> {
    by_name_with(name, holdout, None)
}

/// Like [`by_name_holdout`], with the measured-data folder the price ladder reads its tables
/// from (`--ops-data`; other predictors ignore it).
pub fn by_name_with(name: &str, holdout: Option<&str>, ops_data: Option<&std::path::Path>) -> Result<Box<dyn Predictor>, PredictError> {
    Ok(Box::new(bounds::Bounded(unbounded_with(name, holdout, ops_data)?)))
}

/// [`by_name_holdout`] without the physical floor ([`bounds::Bounded`]): what the predictor
/// itself says, for tests of the floor and of the models. Reports never use it.
pub fn by_name_unbounded(name: &str, holdout: Option<&str>) -> Result<Box<dyn Predictor>, PredictError> {
    unbounded_with(name, holdout, None)
}

fn unbounded_with(name: &str, holdout: Option<&str>, ops_data: Option<&std::path::Path>) -> Result<Box<dyn Predictor>, PredictError> {
    let entry = registry::entry(name)
        .ok_or_else(|| PredictError::UnknownPredictor(name.to_string(), registry::names().collect::<Vec<_>>().join(", ")))?;
    // Predictors other than the ladder do not read the folder, but a mistyped one must still
    // say so rather than answer as if it had been read.
    if let Some(dir) = ops_data.filter(|d| !d.is_dir()) {
        return Err(PredictError::Load { name: name.to_string(), reason: format!("--ops-data {}: no such folder", dir.display()) });
    }
    let predictor = entry.with_fallbacks(holdout, ops_data)?;
    let predictor = if entry.prices_measured_shapes() { predictor } else { Box::new(unmodelled::Unmodelled(predictor)) };
    Ok(interval::WithInterval::wrap(predictor))
}
