//! wavecast predicts how long deep-learning work takes on a GPU — per operator, per step and
//! end to end, for training, inference and LLM serving — including on GPUs you do not have.
//!
//! # The flow
//!
//! Data flows one way, each stage its own crate:
//!
//! ```text
//! workload ──► operator graph ──► per-op time on a GPU ──► aggregation ──► report
//! (wavecast-workload) (wavecast-ir)  (wavecast-predict,        (wavecast-sim)   (this crate:
//!  preset, HF config,                 facts: wavecast-gpu)                       structs, CLI,
//!  ONNX, op graph                                                                Python)
//! ```
//!
//! 1. A [`Source`] (preset name, Hugging Face `config.json`, ONNX file, NeuSight op graph) is
//!    loaded into a [`LoadedWorkload`]: one operator graph with its dtypes and repeats.
//! 2. A [`Gpu`] comes from the catalog ([`Gpu::find`], or [`Catalog`] with user entries).
//! 3. A [`Predictor`] ([`Predictors::get`]) prices one operator on one GPU; every predictor
//!    sits behind that one trait and is listed in one registry table.
//! 4. Aggregation sums the prices into a step ([`estimate`]), a serving run ([`serve()`]) or a
//!    comparison across GPUs ([`compare()`]).
//! 5. Reports are plain serializable structs; the CLI prints them as tables or `--json`, the
//!    Python package returns them as objects. [`eval`] holds the accuracy benchmarks.
//!
//! ```no_run
//! use wavecast::{estimate, Gpu, LoadOptions, Mode, Predictors, Source, Workload};
//! let workload = Workload::load(Source::Preset("gpt2-large"), &LoadOptions::new(4, 1024, Mode::Training))?;
//! let gpu = Gpu::find("h100")?;
//! let predictor = Predictors::get("wavecast")?;
//! let step = estimate(&workload, &gpu, predictor.as_ref())?;
//! println!("{:.1} ms per step", step.total_ms);
//! # Ok::<(), wavecast::Error>(())
//! ```
//!
//! For one call from a request (what the CLI and Python do): [`predict()`], [`serve()`],
//! [`compare()`], [`train()`], [`plan_train()`], [`serve_sim()`], [`plan_serve()`], [`gpus()`], [`models()`], [`scale()`], each taking a serde-deserializable
//! request and returning the report `--json` prints.

mod error;
pub mod html;
mod json;
mod listing;
mod predict;
mod price;
mod request;
mod scale;
mod serve;
mod serve_sim;
mod train;

pub use error::{Error, Result};
pub use json::{to_json, to_json_pretty};
pub use price::catalog;
pub use listing::{gpus, models, sustained, ModelInfo, SustainedRow};
pub use predict::{estimate, predict, default_dtype_note, power_limit_note, trains_as_layout, ClassRow, Phases, Prediction, UnsupportedRow};
pub use request::{defaults, AttentionChoice, CompareRequest, ConfigArg, GammaChoice, LayoutArgs, ModeChoice, OptimizerChoice, PlanServeRequest, PlanTrainRequest, PredictRequest, PredictRoute, RecomputeChoice, ScaleMethodChoice, ScaleRequest, ServeSimRequest, ServingFormatArgs, StackChoice};
pub use scale::{scale, ScaleReport};
pub use serve::{compare, serve};
pub use serve_sim::{plan_serve, serve_sim, PlanServeReport, ServeSimReport};
pub use train::{plan_train, predict_answer, train, train_step, train_step_given, PerOpDetail, StepAnswer, TrainStep};

pub use wavecast_gpu::{Catalog, Gpu};
pub use wavecast_ir::DType;
pub use wavecast_predict::Predictor;
pub use wavecast_sim::{CompareReport, PlanReport, ServeReport, Skipped, TrainReport};
pub use wavecast_workload::{LoadOptions, LoadedWorkload, Mode, Source};

/// The accuracy benchmarks: end to end, per op, GPU pairs, convolutions.
pub mod eval {
    pub use wavecast_eval::{conv, e2e, harness, kernels, ladder, modern_pairs, ops, pairs, serving, training, EvalError};
}

/// Loading workloads: the one entry point for every front-end.
pub struct Workload;

impl Workload {
    /// Loads `source` as an operator graph run as `options` says.
    pub fn load(source: Source, options: &LoadOptions) -> Result<LoadedWorkload> {
        Ok(wavecast_workload::load(source, options)?)
    }
}

/// The predictor registry, by name.
pub struct Predictors;

impl Predictors {
    /// The predictor `name` with its shipped weights (trained on every measured GPU).
    pub fn get(name: &str) -> Result<Box<dyn Predictor>> {
        Ok(wavecast_predict::by_name(name)?)
    }

    /// Like [`Predictors::get`], but a learned predictor runs in its model trained without
    /// `gpu`'s measurements (leave-one-GPU-out).
    pub fn without(name: &str, gpu: &str) -> Result<Box<dyn Predictor>> {
        Ok(wavecast_predict::by_name_holdout(name, Some(gpu))?)
    }

    /// Every predictor: name and one line saying what it is, in registry order.
    pub fn list() -> Vec<(&'static str, &'static str)> {
        wavecast_predict::PREDICTORS.iter().map(|e| (e.name, e.description)).collect()
    }

    /// The predictor used when none is named.
    pub const DEFAULT: &'static str = wavecast_predict::DEFAULT_PREDICTOR;
    /// The predictor LLM serving (`predict --mode serve`, `compare`) uses when none is named.
    pub const DEFAULT_SERVE: &'static str = wavecast_predict::DEFAULT_SERVE_PREDICTOR;
}
