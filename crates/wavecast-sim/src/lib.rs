//! How long the whole workload takes: the aggregation stage of wavecast's flow
//! (workload → operator graph → per-op prediction → **aggregation** → report).
//!
//! - [`step`]: prices every node of one operator graph with a [`Predictor`] and sums the times
//!   into phases (forward, backward, optimizer) and op classes — one training or inference step.
//! - [`serve`](mod@serve): an LLM serving a static batch (prefill, then decode steps against a growing KV
//!   cache) on one GPU or a tensor-parallel group, with memory and cost.
//! - [`compare`](mod@compare): one serving workload over several GPUs and tensor-parallel degrees.
//! - [`train`]: a training step over many GPUs (data, tensor, pipeline, context and expert
//!   parallelism, ZeRO, recomputation) with its collectives and memory per GPU.
//! - [`plan`]: every layout of a training run on N GPUs, ranked by step time among those that fit.
//! - [`reasons`]: why layouts were set aside, grouped, with their real figures.
//! - [`serving`]: continuous batching under load (`serve-sim`, `plan serve`): engines' schedulers
//!   and host time ([`serving::backend`]), the paged KV cache, aggregated and disaggregated
//!   workers, closed- and open-loop clients; the static batch of [`serve`](mod@serve) runs through it.
//! - [`train_kernels`]: the kernels of a training step as training stacks run them (measured
//!   attention efficiency, FP8 GEMM speed-up) over any per-op predictor.
//!
//! [`Predictor`]: wavecast_predict::Predictor

pub mod compare;
pub mod serve;
pub mod serving;
pub mod step;
pub mod plan;
pub mod reasons;
pub mod train;
pub mod train_kernels;

pub use compare::{compare, CompareReport, Skipped};
pub use serve::{serve, ServeReport};
pub use step::{check_fits, estimate, estimate_with, Breakdown, ClassTotal, Unpriced};
pub use plan::{plan_train, PlanReport, PlanRequest};
pub use train::{train_step, MemoryGb, Topology, TrainReport};
pub use train_kernels::{SdpaFlashAttention, TrainingKernels};

use thiserror::Error;

/// Why a workload could not be simulated; the message is the one line users see.
#[derive(Debug, Error)]
pub enum SimError {
    #[error(transparent)]
    Workload(#[from] wavecast_workload::WorkloadError),
    #[error(transparent)]
    Predict(#[from] wavecast_predict::PredictError),
    #[error(transparent)]
    Catalog(#[from] wavecast_gpu::CatalogError),
    #[error("{0}")]
    Invalid(String),
    /// A training layout that does not fit (its figures written out when shown).
    #[error("{0}")]
    OutOfMemory(Box<train::MemoryShort>),
}
