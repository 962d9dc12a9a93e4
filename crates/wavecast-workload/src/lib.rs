//! Workload front-ends: turn what the user has (a preset name, a Hugging Face `config.json`,
//! an ONNX file, a NeuSight operator-graph CSV) into a [`wavecast_ir::Graph`]. [`load`] is the
//! one entry point; the modules below are the front-ends and builders behind it.

pub mod encdec;
pub mod gnmt;
pub mod hf;
pub mod load;
pub mod net;
pub mod neusight;
pub mod onnx;
pub mod presets;
pub mod pylit;
pub mod serve;
pub mod train;
pub mod transformer;
pub mod transformer_base;
pub mod vision;
pub mod zoo;

pub use hf::{hf_quant_config, Activation, Arch, EncDec, HfQuant, LinearAttention, Mla, Moe, Params, ServedQuants, SlidingWindow, TransformerSpec};
pub use load::{beyond_context, is_zoo_model, load, transformer_spec, Kind, LoadOptions, LoadedWorkload, Source};
pub use serve::ServeOptions;
pub use train::{Layout, LossKernel, Recompute, Stack, TrainMemory, TrainOptions, EAGER_LOSS_BYTES_AT_BF16};
pub use transformer::{build, check_layout, AttentionImpl, BuildOptions, Head, Mode, Shard};

use thiserror::Error;

/// The rest of an unknown-model message: the closest names, or where the list is.
fn did_you_mean(closest: &str) -> String {
    if closest.is_empty() {
        "; run `wavecast models` for the presets (or give a Hugging Face config.json with --config)".to_string()
    } else {
        format!("; did you mean {closest}? (`wavecast models` lists them all)")
    }
}

#[derive(Debug, Error)]
pub enum WorkloadError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("malformed model config {origin}: {reason}")]
    Config { origin: String, reason: String },
    /// A well-formed config of an architecture wavecast does not model (the reason names what).
    #[error("unsupported model {origin}: {reason}")]
    Unsupported { origin: String, reason: String },
    #[error("unknown model '{name}'{}", did_you_mean(.closest))]
    UnknownPreset { name: String, closest: String },
    #[error("{0}")]
    Dim(#[from] wavecast_ir::DimError),
    #[error("{origin}: {reason}")]
    OpGraph { origin: String, reason: String },
    #[error("{0}")]
    Invalid(String),
}
