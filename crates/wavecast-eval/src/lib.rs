//! How right wavecast is: every benchmark that compares predictions with measurements.
//!
//! - [`e2e`]: whole measured runs (NeuSight's labels), each GPU predicted by the model trained
//!   without any of its measurements unless asked otherwise.
//! - [`ops`]: per-op error by op family on one left-out GPU, and every prediction as a row.
//! - [`kernels`]: the same on modern GPUs' measurements (AIConfigurator, Vidur, PipeWeave).
//! - [`conv`]: the convolution model against a linear baseline and the roofline, each GPU
//!   left out in turn.
//! - [`pairs`]: runtime-based scaling (Habitat's protocol) between every ordered pair of
//!   measured GPUs on the same op shapes; [`modern_pairs`] the same on modern GPUs' kernels.
//!
//! - [`ladder`]: the price ladder on modern GPUs' kernels, each GPU left out of everything,
//!   beside the naive baselines (copy the nearest measured GPU, the roofline ratio).
//! - [`training`]: training steps against published, measured runs (tokens/s per GPU), per
//!   band of model size, sequence, node count and precision.
//! - [`serving`]: measured serving runs under load (AIConfigurator's), TTFT and TPOT per band
//!   of users, engine and GPU, with each row's GPU priced without its own measurements.
//!
//! Statistics come from `wavecast-stats`; reports are plain serializable structs that the CLI
//! prints as they are (`--json`) or as tables.

pub mod conv;
pub mod e2e;
pub mod harness;
pub mod kernels;
pub mod ladder;
pub mod modern_pairs;
pub mod ops;
pub mod pairs;
pub mod serving;
pub mod training;

use thiserror::Error;

/// Why an evaluation could not run; the message is the one line users see.
#[derive(Debug, Error)]
pub enum EvalError {
    #[error(transparent)]
    Data(#[from] wavecast_data::DataError),
    #[error(transparent)]
    Predict(#[from] wavecast_predict::PredictError),
    #[error(transparent)]
    Catalog(#[from] wavecast_gpu::CatalogError),
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for EvalError {
    fn from(s: String) -> Self {
        EvalError::Invalid(s)
    }
}
