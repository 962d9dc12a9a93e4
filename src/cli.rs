//! Command-line interface definition.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "wavecast", version, about = "Predict deep-learning step times on any GPU, including ones you do not have")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Predict one workload on one GPU: per-class table and end-to-end time.
    Predict(PredictArgs),
    /// List the GPU catalog.
    Gpus(GpusArgs),
    /// List the built-in model presets.
    Models(JsonFlag),
    /// Measure predictor accuracy against measured data.
    #[command(subcommand)]
    Eval(EvalCommand),
}

#[derive(Args, Debug)]
pub struct JsonFlag {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct GpuFileArg {
    /// Extra GPU catalog file (TOML, same format as the built-in one); its entries override.
    #[arg(long, value_name = "FILE")]
    pub gpu_file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct GpusArgs {
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[arg(long)]
    pub json: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeArg {
    /// Forward pass only.
    #[value(alias = "inf")]
    Inference,
    /// Forward, backward and optimizer step.
    #[value(alias = "training")]
    Train,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionArg {
    Auto,
    Eager,
    Fused,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimizerArg {
    Adam,
    Sgd,
    SgdMomentum,
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Built-in model preset (see `wavecast models`).
    #[arg(long, conflicts_with = "config", required_unless_present = "config")]
    pub model: Option<String>,
    /// A Hugging Face config.json.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Target GPU (name or alias, see `wavecast gpus`).
    #[arg(long)]
    pub gpu: String,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[arg(long, default_value_t = 1)]
    pub batch: u64,
    /// Sequence length in tokens.
    #[arg(long, default_value_t = 1024)]
    pub seq: u64,
    #[arg(long, value_enum, default_value = "inference")]
    pub mode: ModeArg,
    /// fp32, tf32, fp16, bf16 or fp8.
    #[arg(long, default_value = "fp32")]
    pub dtype: String,
    /// Attention kernels: eager (separate BMMs and softmax) or fused (flash).
    #[arg(long, value_enum, default_value = "auto")]
    pub attention: AttentionArg,
    #[arg(long, value_enum, default_value = "adam")]
    pub optimizer: OptimizerArg,
    /// Which per-op predictor to use.
    #[arg(long, default_value = "roofline")]
    pub predictor: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum EvalCommand {
    /// End-to-end error on every labelled workload in DIR/label/<GPU>/<workload>.json.
    E2e(EvalE2eArgs),
}

#[derive(Args, Debug)]
pub struct EvalE2eArgs {
    /// Data folder laid out like NeuSight's (label/, opgraph/, paper_predictions.csv).
    #[arg(long)]
    pub data: PathBuf,
    #[arg(long, default_value = "roofline")]
    pub predictor: String,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[arg(long)]
    pub json: bool,
}
