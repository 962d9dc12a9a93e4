//! Measurements: the schema for per-operator timings (ours and imported), loaders for NeuSight's
//! per-op CSVs and end-to-end labels, and the baselines NeuSight published beside them.

pub mod aiconfigurator;
pub mod labels;
pub mod layout;
pub mod measurement;
pub mod neusight_ops;
pub mod pipeweave;
pub mod silicon;
pub mod table;
pub mod timing;
pub mod vidur;

pub use labels::{load_labels, load_paper_predictions, Label, PaperRow};
pub use measurement::{measured_ms, Kernel, Measurement, OpShape, MEASURED_MS};
pub use neusight_ops::{load_neusight_csv, load_neusight_dir, op_sets, OpSet};
pub use layout::{load_ladder_timings, load_timings, load_timings_of, Layout};
pub use table::{LoadReport, Skipped};
pub use aiconfigurator::Engines;
pub use timing::{Collective, Precision, Shape, Source, Timing, DEFAULT_ENGINE, STREAM};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum DataError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}: {reason}")]
    Format { path: String, reason: String },
}
