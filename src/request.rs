//! What a caller asks for, one struct per question. Each struct is the one declaration of its
//! options: every field carries its flag (clap's derive; the CLI flattens the struct) beside
//! its serde form (the JSON the Python package sends), and defaults come from [`defaults`]. A
//! field with a fixed set of values is a choice enum (`ModeChoice`, `RecomputeChoice`…) whose
//! clap names are also its serde names, so nothing crosses into the library as a name to parse
//! again; free-form values (`dtype`, `predictor`, `wave_form`) are parsed once, here.
//!
//! Fields several requests share (`model`, `config`, `gpu`, `gpu_file`, `ops_data`, `price`,
//! `allow_partial`) are written in each struct rather than in one struct flattened into all:
//! serde documents `deny_unknown_fields` as unsupported together with `flatten` (a flattened
//! group is handed every key and cannot tell one of its own from a typo), and every request
//! keeps `deny_unknown_fields` so that a misspelt JSON key is an error naming the fields it
//! could be (tests/library.rs checks it, nested groups included); and the shared flags differ
//! in their clap rules from command to command (`--model` conflicts with `--onnx` only in `predict`; `compare` takes `--gpus`,
//! `scale` neither). The test `shared_fields_are_declared_alike_in_every_request` (src/cli.rs)
//! keeps the copies alike: the same flag, aliases, help, default and environment variable.
//! Groups that are one concept are nested instead (`formats`, `layout`): a JSON object of their
//! own, a flattened group of flags on the command line.

use crate::{Error, Result};
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
    pub const SERVE_DTYPE: &str = wavecast_sim::serve::AUTO_DTYPE;
    pub const BACKEND: &str = wavecast_ir::Engine::DEFAULT.name();
    pub const GPUS_PER_NODE: u64 = 8;
    /// Tokens of a training run (`plan train`'s days and cost columns).
    pub const TOKENS: f64 = 1e12;
    /// Rows a plan lists.
    pub const TOP: usize = 10;
    pub const WAVE_FORM: &str = "wavecast";
    pub const PREDICTOR: &str = wavecast_predict::DEFAULT_PREDICTOR;
    pub const SERVE_PREDICTOR: &str = wavecast_predict::DEFAULT_SERVE_PREDICTOR;
    pub const USERS_PER_WORKER: [u64; 9] = wavecast_sim::serving::DEFAULT_USERS_PER_WORKER;

    pub fn batch() -> u64 {
        BATCH
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

/// `unknown mode 'x' (inference, train or serve)`: a bad choice in a request, one line.
fn unknown_choice<E: ValueEnum>(what: &str, given: &str) -> String {
    let names: Vec<String> = E::value_variants().iter().filter_map(|v| v.to_possible_value()).map(|p| p.get_name().to_string()).collect();
    let list = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("unknown {what} '{given}' ({list})")
}

/// Gives a choice enum its serde form from its clap declaration (`ValueEnum`: names and
/// aliases), so that a flag value and a Python string are read by one declaration, once, and
/// the library takes the enum, never a name to parse again. JSON forgives case (`"Train"`), as
/// the string parsers it replaces did; a wrong name is one line listing the choices.
macro_rules! choice_serde {
    ($ty:ty, $what:literal) => {
        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.to_possible_value().map(|p| p.get_name().to_string()).unwrap_or_default().as_str())
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<$ty, D::Error> {
                let name = String::deserialize(d)?;
                <$ty as ValueEnum>::from_str(&name, true).map_err(|_| serde::de::Error::custom(unknown_choice::<$ty>($what, &name)))
            }
        }
    };
}

/// `--config FILE`: on the command line a config is always a file.
fn config_file(path: &str) -> std::result::Result<ConfigArg, String> {
    Ok(ConfigArg::Path(path.into()))
}

/// A GPU name as typed in a comma-separated list (`--to h100, a100`).
fn trimmed(name: &str) -> std::result::Result<String, String> {
    Ok(name.trim().to_string())
}

/// What `predict` answers.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModeChoice {
    /// Forward pass only (also `infer`, Python's spelling, and `inf`).
    #[default]
    #[value(aliases = ["infer", "inf"])]
    Inference,
    /// Forward, backward and optimizer step.
    #[value(alias = "training")]
    Train,
    /// LLM serving: prefill of the prompts, then decode steps against a KV cache.
    Serve,
}
choice_serde!(ModeChoice, "mode");

/// How attention kernels run (`predict --attention`).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AttentionChoice {
    #[default]
    Auto,
    Eager,
    Fused,
}
choice_serde!(AttentionChoice, "attention");

impl From<AttentionChoice> for wavecast_workload::AttentionImpl {
    fn from(c: AttentionChoice) -> Self {
        match c {
            AttentionChoice::Auto => Self::Auto,
            AttentionChoice::Eager => Self::Eager,
            AttentionChoice::Fused => Self::Fused,
        }
    }
}

/// Optimizers of a training step.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OptimizerChoice {
    #[default]
    Adam,
    Sgd,
    SgdMomentum,
}
choice_serde!(OptimizerChoice, "optimizer");

impl From<OptimizerChoice> for wavecast_ir::ops::OptimizerKind {
    fn from(c: OptimizerChoice) -> Self {
        match c {
            OptimizerChoice::Adam => Self::Adam,
            OptimizerChoice::Sgd => Self::Sgd,
            OptimizerChoice::SgdMomentum => Self::SgdMomentum,
        }
    }
}

/// The training software a step runs under (`--stack`): what it fuses, overlaps and keeps.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StackChoice {
    /// Plain PyTorch, eager (Hugging Face models as written): eager cross entropy on FP32
    /// logits, every tensor eager autograd saves, torch.optim's foreach Adam.
    #[default]
    Pytorch,
    /// torch.compile'd PyTorch (torchtitan, torchao): a fused loss kernel, the fused-kernel
    /// activation count, fused Adam.
    Compiled,
    /// Megatron-Core as NeMo and Megatron-Bridge run it: vocabulary-parallel loss, tensor- and
    /// data-parallel communication overlapped with compute, fused Adam.
    Megatron,
}
choice_serde!(StackChoice, "stack");

impl StackChoice {
    /// The name `--stack` takes (and the JSON's).
    pub fn name(self) -> String {
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }

    /// The stack, with the optimizer fused when `fused_optimizer` (the other stacks fuse it
    /// anyway).
    pub fn stack(self, fused_optimizer: bool) -> wavecast_workload::Stack {
        let stack = match self {
            StackChoice::Pytorch => wavecast_workload::Stack::EAGER,
            StackChoice::Compiled => wavecast_workload::Stack::FUSED_LOSS,
            StackChoice::Megatron => wavecast_workload::Stack::MEGATRON_CORE,
        };
        if fused_optimizer {
            wavecast_workload::Stack { optimizer: wavecast_ir::ops::OptimizerImpl::Fused, ..stack }
        } else {
            stack
        }
    }
}

/// Activation recomputation of a training step (`--recompute`).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecomputeChoice {
    #[default]
    None,
    Selective,
    Full,
    /// torchtitan's op-level selective checkpointing (every other matmul and the element-wise ops recomputed)
    SelectiveOp,
    /// torchtitan's layer-level selective checkpointing (every second layer fully recomputed)
    SelectiveLayer,
}
choice_serde!(RecomputeChoice, "recomputation");

impl From<RecomputeChoice> for wavecast_workload::Recompute {
    fn from(c: RecomputeChoice) -> Self {
        match c {
            RecomputeChoice::None => Self::None,
            RecomputeChoice::Selective => Self::Selective,
            RecomputeChoice::Full => Self::Full,
            RecomputeChoice::SelectiveOp => Self::SelectiveOp,
            RecomputeChoice::SelectiveLayer => Self::SelectiveLayer,
        }
    }
}

/// `scale --method`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScaleMethodChoice {
    /// Wave scaling for every kernel.
    Wave,
    /// GEMM, BMM and attention ops through --predictor as a ratio; wave scaling for the rest.
    #[default]
    Hybrid,
}
choice_serde!(ScaleMethodChoice, "scaling method");

/// `scale --gamma`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GammaChoice {
    /// Counters if the trace has them, else the op's FLOPs and bytes against the destination's
    /// ridge for its dtype, else a prior by kernel family.
    #[default]
    Wavecast,
    /// Habitat: FP32 counters if present, else 1 (memory-bound).
    Habitat,
}
choice_serde!(GammaChoice, "gamma");

/// A Hugging Face `config.json`: a path to the file, or the config itself.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ConfigArg {
    Path(PathBuf),
    Inline(serde_json::Map<String, serde_json::Value>),
}

/// The sequence length a request without `--seq` runs: 1024 tokens, or a transformer's
/// learned positions where there are fewer (BERT's 512), so its defaults always run.
fn default_seq(model: &Option<String>, config: &Option<ConfigArg>) -> u64 {
    let positions = (model.is_some() || config.is_some())
        .then(|| transformer_spec(model, config).ok())
        .flatten()
        .filter(|s| s.learned_positions)
        .map_or(defaults::SEQ, |s| s.max_positions);
    defaults::SEQ.min(positions.max(1))
}

/// The transformer a request names with `model` or `config`.
pub(crate) fn transformer_spec(model: &Option<String>, config: &Option<ConfigArg>) -> Result<wavecast_workload::TransformerSpec> {
    with_source(model.as_deref(), config.as_ref(), None, |source| Ok(wavecast_workload::transformer_spec(source)?))
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

/// `--ops-data`'s help, the same for every command that prices ops (stated once here).
const OPS_DATA_HELP: &str = "Measured per-op tables (AIConfigurator, Vidur or PipeWeave layout, e.g. ../shared/data): a GPU's own measurements price its ops first, then a measured sibling's scaled by the two GPUs' roofline ratio, then physics (predictor `ladder`)";

/// `wavecast predict`, every mode: one workload on one GPU (`--mode inference|train`), an LLM
/// serving a static batch (`--mode serve`, [`crate::serve()`]) and a training step over many
/// GPUs (`--mode train` with layout flags, [`crate::train()`]); Python's `predict`, `serve` and
/// `train` send it. Fields whose default depends on the mode (`seq`, `dtype`, `predictor`,
/// `attention`, `optimizer`, the serving lengths, the layout) are `Option`s, so that a flag
/// given where its mode does not read it is an error ([`PredictRequest::check_flags`]) and
/// each default is resolved once, from [`defaults`], where the mode is known.
#[derive(Debug, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct PredictRequest {
    /// Built-in model preset (see `wavecast models`).
    #[arg(long, conflicts_with_all = ["config", "onnx"], required_unless_present_any = ["config", "onnx"])]
    #[serde(default)]
    pub model: Option<String>,
    /// A Hugging Face config.json.
    #[arg(long, value_name = "FILE", conflicts_with = "onnx", value_parser = config_file)]
    #[serde(default)]
    pub config: Option<ConfigArg>,
    /// An ONNX model file: its graph is imported (shapes inferred for --batch and --seq).
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub onnx: Option<PathBuf>,
    /// Input image side for the built-in vision models [default: the model's own, e.g. 224],
    /// and for symbolic height and width dimensions of ONNX inputs.
    #[arg(long, value_name = "PIXELS")]
    #[serde(default)]
    pub image_size: Option<u64>,
    /// Target GPU (name or alias, see `wavecast gpus`).
    #[arg(long)]
    pub gpu: String,
    /// Extra GPU catalog file (TOML, same format as the built-in one); its entries override.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub gpu_file: Option<PathBuf>,
    /// Power limit per GPU in W (as `nvidia-smi -pl` sets it), below the board power: compute-bound
    /// kernels run at the clock the limit allows, (W / board power)^(1/3), memory-bound ones as
    /// before [default: the catalog's board power].
    #[arg(allow_negative_numbers = true, long, value_name = "W")]
    #[serde(default)]
    pub power_limit: Option<f64>,
    #[arg(long, default_value_t = defaults::BATCH)]
    #[serde(default = "defaults::batch")]
    pub batch: u64,
    /// Sequence length in tokens [default: 1024, or the model's learned positions where fewer]
    #[arg(long)]
    #[serde(default)]
    pub seq: Option<u64>,
    #[arg(long, value_enum, default_value_t = ModeChoice::default())]
    #[serde(default)]
    pub mode: ModeChoice,
    /// fp32, tf32, fp16, bf16 or fp8 [default: for transformers the config's torch_dtype, else
    /// bf16 (fp16 on a GPU without bf16, fp32 on one without 16-bit units), and fp32 for the presets of NeuSight's FP32 benchmarks (gpt2*, bert-*, opt-1.3b,
    /// switch-base-8); in serve mode bf16 or fp16 as serve-sim's auto; fp32 for vision models and ONNX graphs; reports say
    /// which].
    #[arg(long)]
    #[serde(default)]
    pub dtype: Option<String>,
    /// Attention kernels: eager (separate BMMs and softmax) or fused (flash) [default: auto].
    #[arg(long, value_enum)]
    #[serde(default)]
    pub attention: Option<AttentionChoice>,
    /// Optimizer of the training step [default: adam].
    #[arg(long, value_enum)]
    #[serde(default)]
    pub optimizer: Option<OptimizerChoice>,
    /// The optimizer step is one fused kernel (`torch.optim.AdamW(fused=True)`, apex or
    /// Transformer Engine FusedAdam) instead of PyTorch's default foreach passes, which touch
    /// each parameter's tensors 18 times for Adam instead of 7.
    #[arg(long)]
    #[serde(default)]
    pub fused_optimizer: bool,
    /// Training software of the step: pytorch (eager), compiled (torch.compile, torchtitan) or
    /// megatron (Megatron-Core, NeMo) [default: pytorch].
    #[arg(long, value_enum)]
    #[serde(default)]
    pub stack: Option<StackChoice>,
    #[arg(long, help = wavecast_predict::registry::help_by_mode())]
    #[serde(default)]
    pub predictor: Option<String>,
    /// Serve mode: prompt tokens per request.
    #[arg(long, value_name = "I", visible_alias = "input")]
    #[serde(default)]
    pub input_len: Option<u64>,
    /// Serve mode: generated tokens per request (decode steps).
    #[arg(long, value_name = "O", visible_alias = "output")]
    #[serde(default)]
    pub output_len: Option<u64>,
    /// Tensor-parallel degree: GPUs sharing the model in serve mode (past 8, across servers), or
    /// in a multi-GPU training step (--mode train; then a layout flag) (also vLLM's
    /// --tensor-parallel-size, SGLang's --tp-size).
    #[arg(long, default_value_t = defaults::TP, aliases = ["tensor-parallel-size", "tp-size"])]
    #[serde(default = "defaults::tp")]
    pub tp: u64,
    /// Serve mode: weight storage, when it differs from --dtype: fp8, or a quantized format
    /// with its scales (fp8_block, nvfp4, mxfp4, int4); bf16 for 16-bit weights (also vLLM's
    /// --quantization) [default: the checkpoint's quantization_config, as the engines load it
    /// (deepseek-v3: fp8_block; gpt-oss: mxfp4 experts), else --dtype].
    #[arg(long, value_name = "DTYPE", visible_alias = "quant", alias = "quantization")]
    #[serde(default)]
    pub weights: Option<String>,
    /// Serve mode: KV cache type (fp8: half the bytes of a 16-bit cache) [default: --dtype]
    /// (also vLLM's --kv-cache-dtype).
    #[arg(long, value_name = "DTYPE", alias = "kv-cache-dtype")]
    #[serde(default)]
    pub kv_dtype: Option<String>,
    /// Serve mode: the serving engine the batch runs in, whose memory share, host time per
    /// iteration and kernel tables apply: vllm, sglang or trtllm [default: vllm] (as serve-sim's
    /// --backend).
    #[arg(long, value_name = "ENGINE")]
    #[serde(default)]
    pub backend: Option<String>,
    #[command(flatten)]
    #[serde(default, skip_serializing_if = "LayoutArgs::is_empty")]
    pub layout: LayoutArgs,
    /// The measured per-op tables the price ladder reads ([`OPS_DATA_HELP`]).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA", help = OPS_DATA_HELP)]
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Price per GPU-hour in USD instead of the catalog's: 2.5 for the command's GPU, or GPU=USD
    /// for each GPU it asks about (comma-separated or repeated: `compare --gpus h100,l40s
    /// --price h100=2.5,l40s=0.9`).
    #[arg(long, value_delimiter = ',', value_name = "[GPU=]USD")]
    #[serde(default)]
    pub price: Vec<String>,
    /// Give the time of what can be priced, listing the ops no predictor can, instead of an
    /// error.
    #[arg(long)]
    #[serde(default)]
    pub allow_partial: bool,
}

/// Which question a [`PredictRequest`] asks, so which function answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredictRoute {
    /// One step on one GPU ([`crate::predict()`]).
    Step,
    /// `--mode serve` ([`crate::serve()`]).
    Serve,
    /// `--mode train` with a layout flag or `--tp` ([`crate::train()`]).
    Train,
}

impl PredictRequest {
    /// A request for `model` on `gpu` with every other field at its default.
    pub fn new(model: &str, gpu: &str) -> PredictRequest {
        let mut req: PredictRequest = serde_json::from_value(serde_json::json!({"gpu": gpu})).expect("a request of a GPU alone deserializes");
        req.model = Some(model.into());
        req
    }

    /// The route the CLI's `predict` takes: serve mode, the multi-GPU training step when a
    /// layout flag or `--tp` is given in train mode, else one step on one GPU.
    pub fn route(&self) -> PredictRoute {
        match self.mode {
            ModeChoice::Serve => PredictRoute::Serve,
            // What the layout route does not model (an encoder-decoder, a vision model, an ONNX
            // graph, eager attention) trains op by op on one GPU only: flags that say one GPU
            // (`--dp 1`) ask what no flags ask. The model is read last, only when that matters.
            ModeChoice::Train if self.layout.any() && self.layout.is_one_plain_gpu(self.batch) && self.tp == defaults::TP && self.stack.is_none_or(|s| s == StackChoice::Pytorch) && !crate::predict::trains_as_layout(self) => PredictRoute::Step,
            // Only plain PyTorch is priced op by op; another stack is the layout route's.
            ModeChoice::Train if self.layout.any() || self.tp != defaults::TP || self.stack.is_some_and(|s| s != StackChoice::Pytorch) => PredictRoute::Train,
            _ => PredictRoute::Step,
        }
    }

    /// Whether the request's transformer is an encoder-decoder (T5, Switch), which the layout
    /// route does not model: one GPU trains it op by op.
    pub fn is_encoder_decoder(&self) -> bool {
        transformer_spec(&self.model, &self.config).is_ok_and(|s| s.encdec.is_some())
    }

    /// Sequence length (`--seq`) or its default: 1024 tokens, or a transformer's learned
    /// positions where there are fewer (BERT's 512), so its defaults always run.
    pub fn seq(&self) -> u64 {
        self.seq.unwrap_or_else(|| if self.onnx.is_none() { default_seq(&self.model, &self.config) } else { defaults::SEQ })
    }

    /// How the optimizer step runs (`--fused-optimizer`, or the stack's own).
    pub fn optimizer_implementation(&self) -> wavecast_ir::ops::OptimizerImpl {
        self.training_stack().optimizer
    }

    /// The training software of the step (`--stack`, `--fused-optimizer`).
    pub fn training_stack(&self) -> wavecast_workload::Stack {
        self.stack.unwrap_or_default().stack(self.fused_optimizer)
    }

    /// The optimizer (`--optimizer`) or its default.
    pub fn optimizer(&self) -> OptimizerChoice {
        self.optimizer.unwrap_or_default()
    }

    /// The predictor named, else the mode's default (serving has its own).
    pub fn predictor(&self) -> &str {
        let default = if self.mode == ModeChoice::Serve { defaults::SERVE_PREDICTOR } else { defaults::PREDICTOR };
        self.predictor.as_deref().unwrap_or(default)
    }

    /// Fields the request's mode would silently ignore are errors: the serving lengths and
    /// formats outside serve mode, `seq`/`attention`/`optimizer` and the layout in serve mode,
    /// `optimizer`, the layout and `tp` in plain inference.
    pub fn check_flags(&self) -> Result<()> {
        let serving = self.input_len.is_some() || self.output_len.is_some() || self.weights.is_some() || self.kv_dtype.is_some() || self.backend.is_some();
        let message = match self.mode {
            ModeChoice::Serve if self.seq.is_some() || self.attention.is_some() || self.optimizer.is_some() => {
                "--seq, --attention and --optimizer do not apply to --mode serve (its lengths are --input-len and --output-len)"
            }
            ModeChoice::Serve if self.fused_optimizer => "--fused-optimizer applies to --mode train only",
            ModeChoice::Serve if self.stack.is_some() => "--stack applies to --mode train only",
            ModeChoice::Serve if self.layout.any() => "layout flags (--dp, --tp, --pp, …) describe training; serve mode takes --tp only",
            ModeChoice::Serve if self.power_limit.is_some() => "--power-limit applies to --mode inference and --mode train",
            ModeChoice::Serve => return Ok(()),
            ModeChoice::Inference if self.optimizer.is_some() => "--optimizer applies to --mode train only",
            ModeChoice::Inference if self.fused_optimizer => "--fused-optimizer applies to --mode train only",
            ModeChoice::Inference if self.stack.is_some() => "--stack applies to --mode train only",
            ModeChoice::Inference if self.layout.any() => "layout flags (--dp, --tp, --pp, …) apply to --mode train",
            _ if serving => "--input-len, --output-len, --weights, --kv-dtype and --backend apply to --mode serve only",
            ModeChoice::Inference if self.tp != defaults::TP => "--tp applies to --mode serve and --mode train only",
            _ => return Ok(()),
        };
        Err(Error::new(message))
    }

    /// Errors unless the request is in `mode` (each answering function takes one mode).
    pub(crate) fn expect_mode(&self, mode: ModeChoice, function: &str) -> Result<()> {
        if self.mode == mode {
            return Ok(());
        }
        let name = |m: ModeChoice| m.to_possible_value().map(|p| p.get_name().to_string()).unwrap_or_default();
        Err(Error::new(format!("{function} answers mode '{}', the request is mode '{}'", name(mode), name(self.mode))))
    }
}

/// How a training step is spread over GPUs (`--mode train`); any of these switches the report
/// to the multi-GPU step (schedule, collectives, memory per GPU). Absent: the defaults of
/// [`defaults`] (one GPU of each kind, ZeRO 0, no recomputation, 8 GPUs per node).
#[derive(Debug, Clone, Default, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct LayoutArgs {
    /// Data-parallel degree.
    #[arg(long)]
    #[serde(default)]
    pub dp: Option<u64>,
    /// Pipeline-parallel stages.
    #[arg(long)]
    #[serde(default)]
    pub pp: Option<u64>,
    /// Context-parallel degree (the sequence split over GPUs).
    #[arg(long)]
    #[serde(default)]
    pub cp: Option<u64>,
    /// Expert-parallel degree (MoE models; within the data-parallel GPUs).
    #[arg(long)]
    #[serde(default)]
    pub ep: Option<u64>,
    /// ZeRO stage: 0 none, 1 optimizer states, 2 and gradients, 3 and weights (FSDP).
    #[arg(long)]
    #[serde(default)]
    pub zero: Option<u8>,
    /// Sequences per micro-batch per data-parallel rank (--batch is the global batch)
    /// [default: the rank's whole share without --pp, else 1].
    #[arg(long)]
    #[serde(default)]
    pub micro_batch: Option<u64>,
    /// Model chunks per pipeline stage (interleaved 1F1B).
    #[arg(long)]
    #[serde(default)]
    pub interleave: Option<u64>,
    /// Activation recomputation.
    #[arg(long, value_enum)]
    #[serde(default)]
    pub recompute: Option<RecomputeChoice>,
    /// Megatron sequence parallelism alongside tensor parallelism.
    #[arg(long)]
    #[serde(default)]
    pub sequence_parallel: bool,
    /// Nodes the GPUs sit in (the layout must use nodes × --gpus-per-node GPUs).
    #[arg(long)]
    #[serde(default)]
    pub nodes: Option<u64>,
    /// GPUs per node [default: 8].
    #[arg(long)]
    #[serde(default)]
    pub gpus_per_node: Option<u64>,
    /// Scale-out NIC per GPU in Gbit/s [default: the catalog's, e.g. 400 for H100].
    #[arg(allow_negative_numbers = true, long)]
    #[serde(default)]
    pub nic_gbps: Option<f64>,
}

impl LayoutArgs {
    /// Whether any layout field was given.
    pub fn any(&self) -> bool {
        let l = self;
        [l.dp, l.pp, l.cp, l.ep, l.micro_batch, l.interleave, l.nodes, l.gpus_per_node].iter().any(Option::is_some)
            || l.zero.is_some()
            || l.recompute.is_some()
            || l.sequence_parallel
            || l.nic_gbps.is_some()
    }

    /// Whether the flags given describe what no flags do: one GPU running the whole `batch` as
    /// one micro-batch, nothing sharded or recomputed (`--dp 1`, `--zero 0`, …).
    pub fn is_one_plain_gpu(&self, batch: u64) -> bool {
        let one = |v: Option<u64>| v.is_none_or(|v| v == 1);
        let l = self;
        [l.dp, l.pp, l.cp, l.ep, l.interleave, l.nodes].into_iter().all(one)
            && l.zero.is_none_or(|z| z == 0)
            && l.micro_batch.is_none_or(|m| m == batch)
            && l.recompute.is_none_or(|r| r == RecomputeChoice::None)
            && !l.sequence_parallel
    }

    /// Whether no layout field was given (the group is then left out of the request's JSON,
    /// as of a report page's inputs).
    pub fn is_empty(&self) -> bool {
        !self.any()
    }

    /// GPUs per node, given or the default.
    pub fn gpus_per_node(&self) -> u64 {
        self.gpus_per_node.unwrap_or(defaults::GPUS_PER_NODE)
    }
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
    /// Activations: bf16, fp16 or auto (bf16, or fp16 on a GPU without bf16 units, as the
    /// engines' own auto runs a bf16 checkpoint).
    #[arg(long, default_value = defaults::SERVE_DTYPE)]
    #[serde(default = "defaults::serve_dtype")]
    pub dtype: String,
    /// Weight storage, when it differs from --dtype: fp8, or a quantized format with its scales
    /// (fp8_block, nvfp4, mxfp4, int4); bf16 for 16-bit weights (also vLLM's --quantization)
    /// [default: the checkpoint's quantization_config, as the engines load it, else --dtype].
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
    /// The serving engine every combination runs in, whose memory share, host time per
    /// iteration and kernel tables apply: vllm, sglang or trtllm [default: vllm] (as
    /// serve-sim's --backend).
    #[arg(long, value_name = "ENGINE")]
    #[serde(default)]
    pub backend: Option<String>,
    /// The measured per-op tables the price ladder reads ([`OPS_DATA_HELP`]).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA", help = OPS_DATA_HELP)]
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Price per GPU-hour in USD instead of the catalog's: 2.5 for the command's GPU, or GPU=USD
    /// for each GPU it asks about (comma-separated or repeated: `compare --gpus h100,l40s
    /// --price h100=2.5,l40s=0.9`).
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
    #[arg(long, value_enum, default_value_t = ScaleMethodChoice::default())]
    #[serde(default)]
    pub method: ScaleMethodChoice,
    /// Wave-scaling equation: wavecast, eq1, eq2 (Habitat's paper) or habitat-code.
    #[arg(long, default_value = defaults::WAVE_FORM)]
    #[serde(default)]
    pub wave_form: Option<String>,
    /// γ (memory-boundedness): wavecast (analytic, dtype-aware) or habitat (1 without counters).
    #[arg(long, value_enum, default_value_t = GammaChoice::default())]
    #[serde(default)]
    pub gamma: GammaChoice,
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
    /// Power limit per GPU in W (as `nvidia-smi -pl` sets it), below the board power: compute-bound
    /// kernels run at the clock the limit allows, (W / board power)^(1/3), memory-bound ones as
    /// before [default: the catalog's board power].
    #[arg(allow_negative_numbers = true, long, value_name = "W")]
    #[serde(default)]
    pub power_limit: Option<f64>,
    /// GPUs to spread the run over.
    #[arg(long)]
    pub gpus: u64,
    /// Global batch in sequences per optimizer step.
    #[arg(long)]
    pub batch: u64,
    /// Sequence length in tokens [default: 1024, or the model's learned positions where fewer]
    #[arg(long)]
    #[serde(default)]
    pub seq: Option<u64>,
    /// fp32, tf32, fp16, bf16 or fp8 [default: the config's torch_dtype, else bf16 (fp16 on a GPU without bf16, fp32 on one without 16-bit units); fp32 for the
    /// presets of NeuSight's FP32 benchmarks (gpt2*, bert-*, opt-1.3b, switch-base-8)].
    #[arg(long)]
    #[serde(default)]
    pub dtype: Option<String>,
    /// Optimizer of the training step.
    #[arg(long, value_enum, default_value_t = OptimizerChoice::default())]
    #[serde(default)]
    pub optimizer: OptimizerChoice,
    /// The optimizer step is one fused kernel (`torch.optim.AdamW(fused=True)`, apex or
    /// Transformer Engine FusedAdam) instead of PyTorch's default foreach passes, which touch
    /// each parameter's tensors 18 times for Adam instead of 7.
    #[arg(long)]
    #[serde(default)]
    pub fused_optimizer: bool,
    /// Training software of the step: pytorch (eager), compiled (torch.compile, torchtitan) or
    /// megatron (Megatron-Core, NeMo).
    #[arg(long, value_enum, default_value_t = StackChoice::default())]
    #[serde(default)]
    pub stack: StackChoice,
    /// GPUs per node.
    #[arg(long, default_value_t = defaults::GPUS_PER_NODE)]
    #[serde(default = "defaults::gpus_per_node")]
    pub gpus_per_node: u64,
    /// Scale-out NIC per GPU in Gbit/s [default: the catalog's].
    #[arg(allow_negative_numbers = true, long)]
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
    /// The measured per-op tables the price ladder reads ([`OPS_DATA_HELP`]).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA", help = OPS_DATA_HELP)]
    #[serde(default)]
    pub ops_data: Option<PathBuf>,
    /// Price per GPU-hour in USD instead of the catalog's: 2.5 for the command's GPU, or GPU=USD
    /// for each GPU it asks about (comma-separated or repeated: `compare --gpus h100,l40s
    /// --price h100=2.5,l40s=0.9`).
    #[arg(long, value_delimiter = ',', value_name = "[GPU=]USD")]
    #[serde(default)]
    pub price: Vec<String>,
}

impl PlanTrainRequest {
    /// Sequence length (`--seq`) or its default, as [`PredictRequest::seq`] gives it.
    pub fn seq(&self) -> u64 {
        self.seq.unwrap_or_else(|| default_seq(&self.model, &self.config))
    }
}

/// A deployment's shape shared by `serve-sim` and `plan serve`: formats and engine.
#[derive(Debug, Clone, Deserialize, Serialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ServingFormatArgs {
    /// Activations: bf16, fp16 or auto (bf16, or fp16 on a GPU without bf16 units, as the
    /// engines' own auto runs a bf16 checkpoint).
    #[arg(long, default_value = defaults::SERVE_DTYPE)]
    #[serde(default = "defaults::serve_dtype")]
    pub dtype: String,
    /// Quantized layer weights: fp8, fp8_block, nvfp4, mxfp4 or int4; bf16 for 16-bit weights
    /// (also vLLM's --quantization) [default, with no --moe-quant either: the checkpoint's
    /// quantization_config, as the engines load it (deepseek-v3: fp8_block; gpt-oss: mxfp4
    /// experts), else --dtype].
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
    /// One aggregated worker over this many GPUs: shorthand for --layout tpN (also vLLM's
    /// --tensor-parallel-size, SGLang's --tp-size).
    #[arg(long, value_name = "N", aliases = ["tensor-parallel-size", "tp-size"], conflicts_with_all = ["layout", "prefill", "decode"])]
    #[serde(default)]
    pub tp: Option<u64>,
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
    #[arg(allow_negative_numbers = true, long, conflicts_with = "trace")]
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
    /// The measured per-op tables the price ladder reads ([`OPS_DATA_HELP`]).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA", help = OPS_DATA_HELP)]
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
    #[arg(allow_negative_numbers = true, long = "slo-ttft")]
    #[serde(default)]
    pub slo_ttft_ms: Option<f64>,
    /// Latency target for goodput: time per output token, ms.
    #[arg(allow_negative_numbers = true, long = "slo-tpot")]
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
    #[arg(allow_negative_numbers = true, long = "slo-ttft")]
    #[serde(default)]
    pub slo_ttft_ms: Option<f64>,
    /// Time-per-output-token target, ms.
    #[arg(allow_negative_numbers = true, long = "slo-tpot")]
    #[serde(default)]
    pub slo_tpot_ms: Option<f64>,
    #[command(flatten)]
    #[serde(default)]
    pub formats: ServingFormatArgs,
    /// The measured per-op tables the price ladder reads ([`OPS_DATA_HELP`]).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA", help = OPS_DATA_HELP)]
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
