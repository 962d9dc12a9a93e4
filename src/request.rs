//! What a caller asks for, one struct per question. The CLI fills them from flags, the Python
//! package from keyword arguments (as JSON); field names and defaults are the CLI's.

use crate::{Error, Result};
use clap::builder::{EnumValueParser, TypedValueParser};
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use wavecast_workload::Source;

/// Every default a request field has, read by both its flag (`default_value_t = defaults::X`)
/// and its serde form (`#[serde(default = "defaults::x")]`), so that the CLI and Python cannot
/// disagree on what an absent option means.
pub mod defaults {
    pub const BATCH: u64 = 1;
    pub const SEQ: u64 = 1024;
    pub const TP: u64 = 1;
    /// Prompt and output tokens of `plan serve`.
    pub const INPUT_LEN: u64 = 1024;
    pub const OUTPUT_LEN: u64 = 256;
    /// Activations of LLM serving.
    pub const SERVE_DTYPE: &str = "bf16";
    pub const BACKEND: &str = "vllm";
    pub const OPTIMIZER: &str = "adam";
    pub const GPUS_PER_NODE: u64 = 8;
    /// Tokens of a training run (`plan train`'s days and cost columns).
    pub const TOKENS: f64 = 1e12;
    /// Rows a plan lists.
    pub const TOP: usize = 10;
    pub const SCALE_METHOD: &str = "hybrid";
    pub const WAVE_FORM: &str = "wavecast";
    pub const GAMMA: &str = "wavecast";
    pub const PREDICTOR: &str = wavecast_predict::DEFAULT_PREDICTOR;
    pub const SERVE_PREDICTOR: &str = wavecast_predict::DEFAULT_SERVE_PREDICTOR;
    pub const USERS_PER_WORKER: [u64; 9] = wavecast_sim::serving::DEFAULT_USERS_PER_WORKER;

    pub fn batch() -> u64 {
        BATCH
    }
    pub fn seq() -> u64 {
        SEQ
    }
    pub fn tp() -> u64 {
        TP
    }
    pub fn tp_list() -> Vec<u64> {
        vec![TP]
    }
    pub fn input_len() -> u64 {
        INPUT_LEN
    }
    pub fn output_len() -> u64 {
        OUTPUT_LEN
    }
    pub fn serve_dtype() -> String {
        SERVE_DTYPE.into()
    }
    pub fn backend() -> String {
        BACKEND.into()
    }
    pub fn optimizer() -> String {
        OPTIMIZER.into()
    }
    pub fn gpus_per_node() -> u64 {
        GPUS_PER_NODE
    }
    pub fn tokens() -> f64 {
        TOKENS
    }
    pub fn top() -> usize {
        TOP
    }
    pub fn predictor() -> String {
        PREDICTOR.into()
    }
    pub fn serve_predictor() -> String {
        SERVE_PREDICTOR.into()
    }
    pub fn users_per_worker() -> Vec<u64> {
        USERS_PER_WORKER.to_vec()
    }
    pub fn yes() -> bool {
        true
    }
}

/// The choices of a flag whose request field is a name: checked (and listed in `--help`) by
/// clap, handed on as the spelling the library reads.
fn choice<E: ValueEnum + Clone + Send + Sync + 'static>() -> impl TypedValueParser<Value = String> {
    EnumValueParser::<E>::new().map(|v: E| v.to_possible_value().map(|p| p.get_name().to_string()).unwrap_or_default())
}

/// `--config FILE`: on the command line a config is always a file.
fn config_file(path: &str) -> std::result::Result<ConfigArg, String> {
    Ok(ConfigArg::Path(path.into()))
}

/// A GPU name as typed in a comma-separated list (`--to h100, a100`).
fn trimmed(name: &str) -> std::result::Result<String, String> {
    Ok(name.trim().to_string())
}

/// Optimizers of a training step.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimizerChoice {
    Adam,
    Sgd,
    SgdMomentum,
}

/// `scale --method`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleMethodChoice {
    /// Wave scaling for every kernel.
    Wave,
    /// GEMM, BMM and attention ops through --predictor as a ratio; wave scaling for the rest.
    Hybrid,
}

/// `scale --gamma`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum GammaChoice {
    /// Counters if the trace has them, else the op's FLOPs and bytes against the destination's
    /// ridge for its dtype, else a prior by kernel family.
    Wavecast,
    /// Habitat: FP32 counters if present, else 1 (memory-bound).
    Habitat,
}

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
fn default_mode() -> String {
    "inference".into()
}
fn auto() -> String {
    "auto".into()
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
    #[serde(default = "defaults::batch")]
    pub batch: u64,
    #[serde(default = "defaults::seq")]
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
    #[serde(default = "defaults::optimizer")]
    pub optimizer: String,
    #[serde(default = "defaults::predictor")]
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
            batch: defaults::BATCH,
            seq: defaults::SEQ,
            mode: default_mode(),
            dtype: None,
            attention: auto(),
            optimizer: defaults::optimizer(),
            predictor: defaults::predictor(),
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
    #[serde(default = "defaults::batch")]
    pub batch: u64,
    /// Prompt tokens per request.
    pub input_len: u64,
    /// Generated tokens per request.
    pub output_len: u64,
    /// Tensor-parallel degree.
    #[serde(default = "defaults::tp")]
    pub tp: u64,
    #[serde(default = "defaults::serve_dtype")]
    pub dtype: String,
    /// Weight storage when it differs from `dtype`: "fp8", or a quantized format
    /// ("fp8_block", "nvfp4", "mxfp4", "int4").
    #[serde(default)]
    pub weights: Option<String>,
    /// KV cache type: `dtype` by default, or "fp8".
    #[serde(default)]
    pub kv_dtype: Option<String>,
    #[serde(default = "defaults::serve_predictor")]
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
#[derive(Debug, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct CompareRequest {
    /// Built-in model preset (see `wavecast models`).
    #[arg(long, conflicts_with = "config", required_unless_present = "config")]
    #[serde(default)]
    pub model: Option<String>,
    /// A Hugging Face config.json.
    #[arg(long, value_name = "FILE", value_parser = config_file)]
    #[serde(default)]
    pub config: Option<ConfigArg>,
    /// GPUs to compare, comma-separated (names or aliases).
    #[arg(long, value_delimiter = ',', required = true)]
    pub gpus: Vec<String>,
    /// Tensor-parallel degrees to try on every GPU, comma-separated (also
    /// --tensor-parallel-size, --tp-size).
    #[arg(long, value_delimiter = ',', default_values_t = defaults::tp_list(), aliases = ["tensor-parallel-size", "tp-size"])]
    #[serde(default = "defaults::tp_list")]
    pub tp: Vec<u64>,
    /// Extra GPU catalog file (TOML, same format as the built-in one); its entries override.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// Concurrent requests, prefilled together and decoded together.
    #[arg(long, default_value_t = defaults::BATCH)]
    #[serde(default = "defaults::batch")]
    pub batch: u64,
    /// Prompt tokens per request.
    #[arg(long, value_name = "I", visible_alias = "input")]
    pub input_len: u64,
    /// Generated tokens per request.
    #[arg(long, value_name = "O", visible_alias = "output")]
    pub output_len: u64,
    /// Activations: bf16 or fp16.
    #[arg(long, default_value = defaults::SERVE_DTYPE)]
    #[serde(default = "defaults::serve_dtype")]
    pub dtype: String,
    /// Weight storage, when it differs from --dtype: fp8, or a quantized format with its scales
    /// (fp8_block, nvfp4, mxfp4, int4) (also vLLM's --quantization).
    #[arg(long, value_name = "DTYPE", visible_alias = "quant", alias = "quantization")]
    #[serde(default)]
    pub weights: Option<String>,
    /// KV cache type (fp8: half the bytes of a 16-bit cache) [default: --dtype] (also vLLM's
    /// --kv-cache-dtype).
    #[arg(long, value_name = "DTYPE", alias = "kv-cache-dtype")]
    #[serde(default)]
    pub kv_dtype: Option<String>,
    #[arg(long, default_value = defaults::SERVE_PREDICTOR, help = wavecast_predict::registry::help())]
    #[serde(default = "defaults::serve_predictor")]
    pub predictor: String,
    /// Measured per-op tables (AIConfigurator, Vidur or PipeWeave layout, e.g.
    /// ../shared/data): a GPU's own measurements price its ops first, then a measured sibling's
    /// carried by a learned ratio, then physics (predictor `ladder`).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA")]
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Price per GPU-hour in USD instead of the catalog's: 2.5 for the GPU of the command, or
    /// GPU=USD (comma-separated or repeated: h100=2.5,l40s=0.9).
    #[arg(long, value_delimiter = ',', value_name = "[GPU=]USD")]
    #[serde(default)]
    pub price: Vec<String>,
    /// Give the time of what can be priced, listing the ops no predictor can, instead of an
    /// error.
    #[arg(long)]
    #[serde(default)]
    pub allow_partial: bool,
}

/// A profiler trace carried to other GPUs (`wavecast scale`).
#[derive(Debug, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ScaleRequest {
    /// Trace exported by torch.profiler (Chrome-trace JSON, plain or gzipped).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    /// Destination GPU; repeat or comma-separate for a comparison table.
    #[arg(long = "to", required = true, value_delimiter = ',', value_name = "GPU", value_parser = trimmed)]
    pub to: Vec<String>,
    /// GPU the trace was recorded on [default: the trace's deviceProperties].
    #[arg(long, value_name = "GPU")]
    #[serde(default)]
    pub from: Option<String>,
    /// How kernels are carried to the destination.
    #[arg(long, default_value = defaults::SCALE_METHOD, value_parser = choice::<ScaleMethodChoice>())]
    #[serde(default)]
    pub method: Option<String>,
    /// Wave-scaling equation: wavecast, eq1, eq2 (Habitat's paper) or habitat-code.
    #[arg(long, default_value = defaults::WAVE_FORM)]
    #[serde(default)]
    pub wave_form: Option<String>,
    /// γ (memory-boundedness): wavecast (analytic, dtype-aware) or habitat (1 without counters).
    #[arg(long, default_value = defaults::GAMMA, value_parser = choice::<GammaChoice>())]
    #[serde(default)]
    pub gamma: Option<String>,
    /// Per-op predictor for the hybrid [default: wavecast's default predictor].
    #[arg(long)]
    #[serde(default)]
    pub predictor: Option<String>,
    /// Extra GPU catalog file (TOML, same format as the built-in one); its entries override.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// Also list the N longest kernels one by one (name, library tile, time on every GPU).
    #[arg(long, value_name = "N")]
    #[serde(default)]
    pub kernels: Option<usize>,
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
    #[serde(default = "defaults::tp")]
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
    #[serde(default = "defaults::batch")]
    pub batch: u64,
    #[serde(default = "defaults::seq")]
    pub seq: u64,
    /// Compute format [default: the training rule, `wavecast_workload::presets::DTYPE_RULE`].
    #[serde(default)]
    pub dtype: Option<String>,
    #[serde(default = "defaults::optimizer")]
    pub optimizer: String,
    #[serde(default)]
    pub layout: LayoutArgs,
    /// Nodes the GPUs sit in; when given, the layout must use nodes × gpus_per_node GPUs.
    #[serde(default)]
    pub nodes: Option<u64>,
    #[serde(default = "defaults::gpus_per_node")]
    pub gpus_per_node: u64,
    /// Scale-out NIC per GPU, Gbit/s [default: the catalog's].
    #[serde(default)]
    pub nic_gbps: Option<f64>,
    #[serde(default = "defaults::predictor")]
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

/// Ranking layouts for a training run (`wavecast plan train`).
#[derive(Debug, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct PlanTrainRequest {
    /// Built-in model preset (see `wavecast models`).
    #[arg(long, conflicts_with = "config", required_unless_present = "config")]
    #[serde(default)]
    pub model: Option<String>,
    /// A Hugging Face config.json.
    #[arg(long, value_name = "FILE", value_parser = config_file)]
    #[serde(default)]
    pub config: Option<ConfigArg>,
    /// Target GPU (name or alias, see `wavecast gpus`).
    #[arg(long)]
    pub gpu: String,
    /// Extra GPU catalog file (TOML, same format as the built-in one); its entries override.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// GPUs to spread the run over.
    #[arg(long)]
    pub gpus: u64,
    /// Global batch in sequences per optimizer step.
    #[arg(long)]
    pub batch: u64,
    /// Sequence length in tokens.
    #[arg(long, default_value_t = defaults::SEQ)]
    #[serde(default = "defaults::seq")]
    pub seq: u64,
    /// fp32, fp16, bf16 or fp8 [default: the config's torch_dtype, else bf16; fp32 for the
    /// presets of NeuSight's FP32 benchmarks (gpt2*, bert-*, opt-1.3b, switch-base-8)].
    #[arg(long)]
    #[serde(default)]
    pub dtype: Option<String>,
    /// Optimizer of the training step.
    #[arg(long, default_value = defaults::OPTIMIZER, value_parser = choice::<OptimizerChoice>())]
    #[serde(default = "defaults::optimizer")]
    pub optimizer: String,
    /// GPUs per node.
    #[arg(long, default_value_t = defaults::GPUS_PER_NODE)]
    #[serde(default = "defaults::gpus_per_node")]
    pub gpus_per_node: u64,
    /// Scale-out NIC per GPU in Gbit/s [default: the catalog's].
    #[arg(long)]
    #[serde(default)]
    pub nic_gbps: Option<f64>,
    /// Tokens to train on (days and cost columns).
    #[arg(long, default_value_t = defaults::TOKENS)]
    #[serde(default = "defaults::tokens")]
    pub tokens: f64,
    /// Layouts to list.
    #[arg(long, default_value_t = defaults::TOP)]
    #[serde(default = "defaults::top")]
    pub top: usize,
    #[arg(long, default_value = defaults::PREDICTOR, help = wavecast_predict::registry::help())]
    #[serde(default = "defaults::predictor")]
    pub predictor: String,
    /// Measured per-op tables (AIConfigurator, Vidur or PipeWeave layout, e.g.
    /// ../shared/data): a GPU's own measurements price its ops first, then a measured sibling's
    /// carried by a learned ratio, then physics (predictor `ladder`).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA")]
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Price per GPU-hour in USD instead of the catalog's: 2.5 for the GPU of the command, or
    /// GPU=USD (comma-separated or repeated: h100=2.5,l40s=0.9).
    #[arg(long, value_delimiter = ',', value_name = "[GPU=]USD")]
    #[serde(default)]
    pub price: Vec<String>,
}

/// A deployment's shape shared by `serve-sim` and `plan serve`: formats and engine.
#[derive(Debug, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ServingFormatArgs {
    /// Activations: bf16 or fp16.
    #[arg(long, default_value = defaults::SERVE_DTYPE)]
    #[serde(default = "defaults::serve_dtype")]
    pub dtype: String,
    /// Quantized layer weights: fp8, fp8_block, nvfp4, mxfp4 or int4 (also vLLM's
    /// --quantization).
    #[arg(long, visible_alias = "weights", alias = "quantization", value_name = "DTYPE")]
    #[serde(default)]
    pub quant: Option<String>,
    /// Routed-expert weights when they differ from --quant.
    #[arg(long)]
    #[serde(default)]
    pub moe_quant: Option<String>,
    /// KV cache type (default: --dtype), e.g. fp8 (also vLLM's --kv-cache-dtype).
    #[arg(long, alias = "kv-cache-dtype", value_name = "DTYPE")]
    #[serde(default)]
    pub kv_dtype: Option<String>,
    /// Serving engine whose scheduler defaults and per-iteration overhead apply: vllm, sglang
    /// or trtllm.
    #[arg(long, default_value = defaults::BACKEND)]
    #[serde(default = "defaults::backend")]
    pub backend: String,
}

impl Default for ServingFormatArgs {
    fn default() -> ServingFormatArgs {
        ServingFormatArgs { dtype: defaults::serve_dtype(), quant: None, moe_quant: None, kv_dtype: None, backend: defaults::backend() }
    }
}

/// LLM serving under load (`wavecast serve-sim`): a continuous-batching simulation.
#[derive(Debug, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ServeSimRequest {
    /// Built-in model preset (see `wavecast models`).
    #[arg(long, conflicts_with = "config", required_unless_present = "config")]
    #[serde(default)]
    pub model: Option<String>,
    /// A Hugging Face config.json (MoE, MLA, sliding-window models included).
    #[arg(long, value_name = "FILE", value_parser = config_file)]
    #[serde(default)]
    pub config: Option<ConfigArg>,
    /// Target GPU (name or alias, see `wavecast gpus`).
    #[arg(long)]
    pub gpu: String,
    /// Extra GPU catalog file (TOML, same format as the built-in one); its entries override.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// Aggregated workers: tp8, tp1,dp8,ep8 (attention data parallel, expert parallel),
    /// 2xtp4 (two workers), tp4,ep4,etp1 (expert tensor parallelism) [default: tp1].
    #[arg(long, conflicts_with_all = ["prefill", "decode"])]
    #[serde(default)]
    pub layout: Option<String>,
    /// Disaggregated serving: the prefill pool, e.g. 2xtp4 (needs --decode).
    #[arg(long, requires = "decode")]
    #[serde(default)]
    pub prefill: Option<String>,
    /// Disaggregated serving: the decode pool, e.g. tp1,dp8,ep8 (needs --prefill).
    #[arg(long, requires = "prefill")]
    #[serde(default)]
    pub decode: Option<String>,
    /// Closed loop: this many users, each sending its next request when the last completes.
    #[arg(long, conflicts_with_all = ["rate", "trace"])]
    #[serde(default)]
    pub concurrency: Option<u64>,
    /// Open loop: Poisson arrivals, requests per second.
    #[arg(long, conflicts_with = "trace")]
    #[serde(default)]
    pub rate: Option<f64>,
    /// A CSV trace with columns arrival_s, input_len, output_len.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// Prompt tokens per request: 1024, uniform:512:2048 or lognormal:MEAN:CV [default: 1024].
    #[arg(long = "input-len", visible_alias = "input", value_name = "TOKENS")]
    #[serde(default)]
    pub input: Option<String>,
    /// Output tokens per request, same forms [default: 256].
    #[arg(long = "output-len", visible_alias = "output", value_name = "TOKENS")]
    #[serde(default)]
    pub output: Option<String>,
    /// Requests to simulate [default: 4 per user (at least 32); 500 with --rate].
    #[arg(long)]
    #[serde(default)]
    pub requests: Option<u64>,
    #[command(flatten)]
    #[serde(default)]
    pub formats: ServingFormatArgs,
    /// Measured per-op tables (AIConfigurator, Vidur or PipeWeave layout, e.g.
    /// ../shared/data): a GPU's own measurements price its ops first, then a measured sibling's
    /// carried by a learned ratio, then physics (predictor `ladder`).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA")]
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Tokens per iteration (chunked-prefill budget) [default: the backend's] (also vLLM's
    /// --max-num-batched-tokens, SGLang's --chunked-prefill-size).
    #[arg(long, aliases = ["max-num-batched-tokens", "chunked-prefill-size"])]
    #[serde(default)]
    pub max_batched_tokens: Option<u64>,
    /// Most running sequences per worker [default: the backend's] (also vLLM's --max-num-seqs,
    /// SGLang's --max-running-requests).
    #[arg(long, aliases = ["max-num-seqs", "max-running-requests"])]
    #[serde(default)]
    pub max_seqs: Option<u64>,
    /// Prefill each prompt whole instead of in chunks.
    #[arg(long = "no-chunked-prefill", action = clap::ArgAction::SetFalse)]
    #[serde(default = "defaults::yes")]
    pub chunked_prefill: bool,
    /// Reuse the cached pages of the shared prompt prefix (--shared-prefix).
    #[arg(long)]
    #[serde(default)]
    pub prefix_caching: bool,
    /// Prompt tokens every request shares (a system prompt).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub shared_prefix: u64,
    /// Latency target for goodput: time to first token, ms.
    #[arg(long = "slo-ttft")]
    #[serde(default)]
    pub slo_ttft_ms: Option<f64>,
    /// Latency target for goodput: time per output token, ms.
    #[arg(long = "slo-tpot")]
    #[serde(default)]
    pub slo_tpot_ms: Option<f64>,
    /// Seed of drawn lengths and arrivals.
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub seed: u64,
}

/// Ranking serving deployments on N GPUs (`wavecast plan serve`).
#[derive(Debug, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct PlanServeRequest {
    /// Built-in model preset (see `wavecast models`).
    #[arg(long, conflicts_with = "config", required_unless_present = "config")]
    #[serde(default)]
    pub model: Option<String>,
    /// A Hugging Face config.json (MoE, MLA, sliding-window models included).
    #[arg(long, value_name = "FILE", value_parser = config_file)]
    #[serde(default)]
    pub config: Option<ConfigArg>,
    /// Target GPU (name or alias, see `wavecast gpus`).
    #[arg(long)]
    pub gpu: String,
    /// Extra GPU catalog file (TOML, same format as the built-in one); its entries override.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// GPUs to serve on.
    #[arg(long)]
    pub gpus: u64,
    /// Prompt tokens per request.
    #[arg(long, default_value_t = defaults::INPUT_LEN, visible_alias = "input")]
    #[serde(default = "defaults::input_len")]
    pub input_len: u64,
    /// Output tokens per request.
    #[arg(long, default_value_t = defaults::OUTPUT_LEN, visible_alias = "output")]
    #[serde(default = "defaults::output_len")]
    pub output_len: u64,
    /// Time-to-first-token target, ms.
    #[arg(long = "slo-ttft")]
    #[serde(default)]
    pub slo_ttft_ms: Option<f64>,
    /// Time-per-output-token target, ms.
    #[arg(long = "slo-tpot")]
    #[serde(default)]
    pub slo_tpot_ms: Option<f64>,
    #[command(flatten)]
    #[serde(default)]
    pub formats: ServingFormatArgs,
    /// Measured per-op tables (AIConfigurator, Vidur or PipeWeave layout, e.g.
    /// ../shared/data): a GPU's own measurements price its ops first, then a measured sibling's
    /// carried by a learned ratio, then physics (predictor `ladder`).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA")]
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Users per worker to try, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = defaults::USERS_PER_WORKER)]
    #[serde(default = "defaults::users_per_worker")]
    pub concurrency: Vec<u64>,
    /// Search aggregated workers only.
    #[arg(long = "no-disagg", action = clap::ArgAction::SetFalse)]
    #[serde(default = "defaults::yes")]
    pub disaggregated: bool,
}
