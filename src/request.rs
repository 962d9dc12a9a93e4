//! What a caller asks for, one struct per question. The CLI fills them from flags, the Python
//! package from keyword arguments (as JSON); field names and defaults are the CLI's.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use wavecast_workload::Source;

/// A Hugging Face `config.json`: a path to the file, or the config itself.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ConfigArg {
    Path(PathBuf),
    Inline(serde_json::Map<String, serde_json::Value>),
}

/// Calls `use_source` with the one workload a request names: a preset `model`, a `config`
/// (file or inline) or an `onnx` file. Naming none or several is an input error, so a request
/// never silently prefers one of two workloads.
pub(crate) fn with_source<T>(model: Option<&str>, config: Option<&ConfigArg>, onnx: Option<&Path>, use_source: impl FnOnce(Source<'_>) -> Result<T>) -> Result<T> {
    let named = [model.is_some(), config.is_some(), onnx.is_some()].into_iter().filter(|&n| n).count();
    if named > 1 {
        return Err(Error::new("name one workload: a model, a config or an ONNX file, not several"));
    }
    match (model, config, onnx) {
        (Some(name), _, _) => use_source(Source::Preset(name)),
        (_, Some(ConfigArg::Path(path)), _) => use_source(Source::ConfigFile(path)),
        (_, Some(ConfigArg::Inline(map)), _) => {
            let text = serde_json::to_string(map)?;
            use_source(Source::ConfigText { text: &text, name: "config" })
        }
        (_, _, Some(path)) => use_source(Source::Onnx(path)),
        (None, None, None) => Err(Error::new("no workload: name a model (a preset), a config (a Hugging Face config.json) or an ONNX file")),
    }
}

fn one() -> u64 {
    1
}
fn default_seq() -> u64 {
    1024
}
fn default_mode() -> String {
    "inference".into()
}
fn auto() -> String {
    "auto".into()
}
fn adam() -> String {
    "adam".into()
}
fn bf16() -> String {
    "bf16".into()
}
fn default_predictor() -> String {
    wavecast_predict::DEFAULT_PREDICTOR.into()
}
fn default_serve_predictor() -> String {
    wavecast_predict::DEFAULT_SERVE_PREDICTOR.into()
}
fn tp_one() -> Vec<u64> {
    vec![1]
}

/// One workload on one GPU (`wavecast predict`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PredictRequest {
    /// A preset (`wavecast models`).
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub config: Option<ConfigArg>,
    /// An ONNX file.
    #[serde(default)]
    pub onnx: Option<PathBuf>,
    pub gpu: String,
    /// Extra GPU catalog (TOML) whose entries override the built-in ones.
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    #[serde(default = "one")]
    pub batch: u64,
    #[serde(default = "default_seq")]
    pub seq: u64,
    /// "inference" ("infer") or "train" ("training").
    #[serde(default = "default_mode")]
    pub mode: String,
    /// fp32 when absent (an ONNX file: its own type).
    #[serde(default)]
    pub dtype: Option<String>,
    /// "auto", "eager" or "fused".
    #[serde(default = "auto")]
    pub attention: String,
    /// "adam", "sgd" or "sgd-momentum".
    #[serde(default = "adam")]
    pub optimizer: String,
    #[serde(default = "default_predictor")]
    pub predictor: String,
    /// Measured per-op tables for the price ladder (any layout `wavecast eval ops` reads); the
    /// GPU's own tables price its ops first, then a measured sibling's (`--ops-data`,
    /// `WAVECAST_OPS_DATA`).
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    #[serde(default)]
    pub image_size: Option<u64>,
    /// Prices per GPU-hour over the catalog's: "GPU=USD", or "USD" for the request's GPU.
    #[serde(default)]
    pub price: Vec<String>,
    /// Return a total that leaves out ops no predictor can price (they are listed) instead of
    /// an error.
    #[serde(default)]
    pub allow_partial: bool,
}

impl PredictRequest {
    /// A request for `model` on `gpu` with every other field at its default.
    pub fn new(model: &str, gpu: &str) -> PredictRequest {
        PredictRequest {
            model: Some(model.into()),
            config: None,
            onnx: None,
            gpu: gpu.into(),
            gpu_file: None,
            batch: 1,
            seq: default_seq(),
            mode: default_mode(),
            dtype: None,
            attention: auto(),
            optimizer: adam(),
            predictor: default_predictor(),
            ops_data: None,
            image_size: None,
            price: Vec::new(),
            allow_partial: false,
        }
    }
}

/// An LLM serving a static batch (`wavecast predict --mode serve`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServeRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub config: Option<ConfigArg>,
    pub gpu: String,
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    #[serde(default = "one")]
    pub batch: u64,
    /// Prompt tokens per request.
    pub input_len: u64,
    /// Generated tokens per request.
    pub output_len: u64,
    /// Tensor-parallel degree.
    #[serde(default = "one")]
    pub tp: u64,
    #[serde(default = "bf16")]
    pub dtype: String,
    /// Weight storage when it differs from `dtype`: "fp8", or a quantized format
    /// ("fp8_block", "nvfp4", "mxfp4", "int4").
    #[serde(default)]
    pub weights: Option<String>,
    /// KV cache type: `dtype` by default, or "fp8".
    #[serde(default)]
    pub kv_dtype: Option<String>,
    #[serde(default = "default_serve_predictor")]
    pub predictor: String,
    /// Measured per-op tables for the price ladder (any layout `wavecast eval ops` reads); the
    /// GPU's own tables price its ops first, then a measured sibling's (`--ops-data`,
    /// `WAVECAST_OPS_DATA`).
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Prices per GPU-hour over the catalog's: "GPU=USD", or "USD" for the request's GPU.
    #[serde(default)]
    pub price: Vec<String>,
    /// Return a total that leaves out ops no predictor can price (they are listed) instead of
    /// an error.
    #[serde(default)]
    pub allow_partial: bool,
}

/// One serving workload over several GPUs and TP degrees (`wavecast compare`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CompareRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub config: Option<ConfigArg>,
    pub gpus: Vec<String>,
    #[serde(default = "tp_one")]
    pub tp: Vec<u64>,
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    #[serde(default = "one")]
    pub batch: u64,
    pub input_len: u64,
    pub output_len: u64,
    #[serde(default = "bf16")]
    pub dtype: String,
    #[serde(default)]
    pub weights: Option<String>,
    #[serde(default)]
    pub kv_dtype: Option<String>,
    #[serde(default = "default_serve_predictor")]
    pub predictor: String,
    /// Measured per-op tables for the price ladder (any layout `wavecast eval ops` reads); the
    /// GPU's own tables price its ops first, then a measured sibling's (`--ops-data`,
    /// `WAVECAST_OPS_DATA`).
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Prices per GPU-hour over the catalog's: "GPU=USD", or "USD" for the request's GPU.
    #[serde(default)]
    pub price: Vec<String>,
    /// Return a total that leaves out ops no predictor can price (they are listed) instead of
    /// an error.
    #[serde(default)]
    pub allow_partial: bool,
}

/// A profiler trace carried to other GPUs (`wavecast scale`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleRequest {
    pub trace: PathBuf,
    pub to: Vec<String>,
    /// The GPU the trace was recorded on, when the trace does not say.
    #[serde(default)]
    pub from: Option<String>,
    /// "hybrid" (default) or "wave".
    #[serde(default)]
    pub method: Option<String>,
    /// "wavecast" (default), "eq1", "eq2" or "habitat-code".
    #[serde(default)]
    pub wave_form: Option<String>,
    /// "wavecast" (default) or "habitat".
    #[serde(default)]
    pub gamma: Option<String>,
    /// Per-op predictor of the hybrid method.
    #[serde(default)]
    pub predictor: Option<String>,
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// Also report this many of the longest kernels one by one.
    #[serde(default)]
    pub kernels: Option<usize>,
}

fn eight() -> u64 {
    8
}
fn none() -> String {
    "none".into()
}

/// How a training run is spread over GPUs: the flags `predict --mode train` and `plan train`
/// share (`--dp --tp --pp --cp --ep --zero --micro-batch --recompute --nodes --gpus-per-node`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutArgs {
    #[serde(default = "one")]
    pub dp: u64,
    #[serde(default = "one")]
    pub tp: u64,
    #[serde(default = "one")]
    pub pp: u64,
    #[serde(default = "one")]
    pub cp: u64,
    #[serde(default = "one")]
    pub ep: u64,
    /// ZeRO stage 0–3 (3 is FSDP's full sharding).
    #[serde(default)]
    pub zero: u8,
    /// Sequences per micro-batch per data-parallel rank [default: the whole share of the batch
    /// (no gradient accumulation) without pipeline parallelism, else 1].
    #[serde(default)]
    pub micro_batch: Option<u64>,
    /// Model chunks per pipeline stage (interleaved 1F1B).
    #[serde(default = "one")]
    pub interleave: u64,
    /// "none", "selective" or "full".
    #[serde(default = "none")]
    pub recompute: String,
    #[serde(default)]
    pub sequence_parallel: bool,
}

impl Default for LayoutArgs {
    fn default() -> LayoutArgs {
        LayoutArgs { dp: 1, tp: 1, pp: 1, cp: 1, ep: 1, zero: 0, micro_batch: None, interleave: 1, recompute: none(), sequence_parallel: false }
    }
}

/// A training step over many GPUs (`wavecast predict --mode train` with layout flags).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrainRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub config: Option<ConfigArg>,
    pub gpu: String,
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// Sequences per optimizer step over all GPUs.
    #[serde(default = "one")]
    pub batch: u64,
    #[serde(default = "default_seq")]
    pub seq: u64,
    /// Compute format [default: the training rule, `wavecast_workload::presets::DTYPE_RULE`].
    #[serde(default)]
    pub dtype: Option<String>,
    #[serde(default = "adam")]
    pub optimizer: String,
    #[serde(default)]
    pub layout: LayoutArgs,
    /// Nodes the GPUs sit in; when given, the layout must use nodes × gpus_per_node GPUs.
    #[serde(default)]
    pub nodes: Option<u64>,
    #[serde(default = "eight")]
    pub gpus_per_node: u64,
    /// Scale-out NIC per GPU, Gbit/s [default: the catalog's].
    #[serde(default)]
    pub nic_gbps: Option<f64>,
    #[serde(default = "default_predictor")]
    pub predictor: String,
    /// Measured per-op tables for the price ladder (any layout `wavecast eval ops` reads); the
    /// GPU's own tables price its ops first, then a measured sibling's (`--ops-data`,
    /// `WAVECAST_OPS_DATA`).
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Prices per GPU-hour over the catalog's: "GPU=USD", or "USD" for the request's GPU.
    #[serde(default)]
    pub price: Vec<String>,
    /// Return a total that leaves out ops no predictor can price (they are listed) instead of
    /// an error.
    #[serde(default)]
    pub allow_partial: bool,
}

fn trillion() -> f64 {
    1e12
}
fn ten() -> usize {
    10
}

/// Ranking layouts for a training run (`wavecast plan train`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlanTrainRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub config: Option<ConfigArg>,
    pub gpu: String,
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// GPUs to spread the run over.
    pub gpus: u64,
    /// Sequences per optimizer step.
    pub batch: u64,
    #[serde(default = "default_seq")]
    pub seq: u64,
    /// Compute format [default: the training rule, as for [`TrainRequest`]].
    #[serde(default)]
    pub dtype: Option<String>,
    #[serde(default = "adam")]
    pub optimizer: String,
    #[serde(default = "eight")]
    pub gpus_per_node: u64,
    #[serde(default)]
    pub nic_gbps: Option<f64>,
    /// Tokens to train on, for the days and cost columns.
    #[serde(default = "trillion")]
    pub tokens: f64,
    /// Layouts to list.
    #[serde(default = "ten")]
    pub top: usize,
    #[serde(default = "default_predictor")]
    pub predictor: String,
    /// Measured per-op tables for the price ladder (any layout `wavecast eval ops` reads); the
    /// GPU's own tables price its ops first, then a measured sibling's (`--ops-data`,
    /// `WAVECAST_OPS_DATA`).
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Prices per GPU-hour over the catalog's: "GPU=USD", or "USD" for the request's GPU.
    #[serde(default)]
    pub price: Vec<String>,
}

fn vllm() -> String {
    "vllm".into()
}
fn yes() -> bool {
    true
}

/// A deployment's shape shared by `serve-sim` and `plan serve`: formats and engine.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServingFormatArgs {
    /// Activations: "bf16" or "fp16".
    #[serde(default = "bf16")]
    pub dtype: String,
    /// Quantized layer weights: "fp8", "fp8_block", "nvfp4", "mxfp4", "int4".
    #[serde(default)]
    pub quant: Option<String>,
    /// Routed-expert weights when they differ from `quant`.
    #[serde(default)]
    pub moe_quant: Option<String>,
    /// KV cache type: `dtype` by default, or "fp8".
    #[serde(default)]
    pub kv_dtype: Option<String>,
    /// "vllm", "sglang" or "trtllm": scheduler defaults and per-iteration overhead.
    #[serde(default = "vllm")]
    pub backend: String,
}

impl Default for ServingFormatArgs {
    fn default() -> ServingFormatArgs {
        ServingFormatArgs { dtype: bf16(), quant: None, moe_quant: None, kv_dtype: None, backend: vllm() }
    }
}

/// LLM serving under load (`wavecast serve-sim`): a continuous-batching simulation.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSimRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub config: Option<ConfigArg>,
    pub gpu: String,
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// Aggregated workers, e.g. "tp8", "tp1,dp8,ep8", "2xtp4" (default "tp1").
    #[serde(default)]
    pub layout: Option<String>,
    /// Disaggregated serving: the prefill and decode pools (both or neither).
    #[serde(default)]
    pub prefill: Option<String>,
    #[serde(default)]
    pub decode: Option<String>,
    /// Closed loop: this many users, each sending its next request when the last completes.
    #[serde(default)]
    pub concurrency: Option<u64>,
    /// Open loop: Poisson arrivals at this many requests per second.
    #[serde(default)]
    pub rate: Option<f64>,
    /// A CSV trace of arrival_s, input_len, output_len.
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// Prompt tokens: "1024", "uniform:512:2048" or "lognormal:1024:0.5".
    #[serde(default)]
    pub input: Option<String>,
    /// Output tokens, same forms.
    #[serde(default)]
    pub output: Option<String>,
    /// Requests to simulate (default: 4 per user, at least 32; 500 for a rate).
    #[serde(default)]
    pub requests: Option<u64>,
    #[serde(default)]
    pub formats: ServingFormatArgs,
    /// Measured per-op tables for the price ladder (any layout `wavecast eval ops` reads); the
    /// GPU's own tables price its ops first, then a measured sibling's (`--ops-data`,
    /// `WAVECAST_OPS_DATA`).
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    #[serde(default)]
    pub max_batched_tokens: Option<u64>,
    /// Most running sequences per worker.
    #[serde(default)]
    pub max_seqs: Option<u64>,
    #[serde(default = "yes")]
    pub chunked_prefill: bool,
    #[serde(default)]
    pub prefix_caching: bool,
    /// Prompt tokens every request shares (a system prompt).
    #[serde(default)]
    pub shared_prefix: u64,
    #[serde(default)]
    pub slo_ttft_ms: Option<f64>,
    #[serde(default)]
    pub slo_tpot_ms: Option<f64>,
    #[serde(default)]
    pub seed: u64,
}

fn concurrencies() -> Vec<u64> {
    wavecast_sim::serving::DEFAULT_USERS_PER_WORKER.to_vec()
}

/// Ranking serving deployments on N GPUs (`wavecast plan serve`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlanServeRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub config: Option<ConfigArg>,
    pub gpu: String,
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    pub gpus: u64,
    pub input_len: u64,
    pub output_len: u64,
    #[serde(default)]
    pub slo_ttft_ms: Option<f64>,
    #[serde(default)]
    pub slo_tpot_ms: Option<f64>,
    #[serde(default)]
    pub formats: ServingFormatArgs,
    /// Measured per-op tables for the price ladder (any layout `wavecast eval ops` reads); the
    /// GPU's own tables price its ops first, then a measured sibling's (`--ops-data`,
    /// `WAVECAST_OPS_DATA`).
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Users per worker to try.
    #[serde(default = "concurrencies")]
    pub concurrency: Vec<u64>,
    /// Also search disaggregated prefill and decode pools.
    #[serde(default = "yes")]
    pub disaggregated: bool,
}
