//! Hugging Face `config.json` → a normalised description of a transformer. Each `model_type`
//! names its fields differently; this is the one place that knows those spellings.

use crate::WorkloadError;
use serde_json::Value;
use wavecast_ir::ops::NormKind;
use wavecast_ir::{DType, Quant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// GPT-2 and GPT-3-style decoders (learned positions, fused QKV, LayerNorm, GELU).
    Gpt2,
    /// OPT decoders (separate q/k/v, ReLU, learned positions with an offset of 2).
    Opt,
    /// BERT encoders (token-type embeddings, post-norm, pooler).
    Bert,
    /// Llama-family decoders: Llama, Mistral, Qwen2/3, Mixtral (RMSNorm, rotary, SwiGLU, GQA).
    Llama,
    /// Switch Transformers: a T5-style encoder–decoder whose every `sparse_step`-th
    /// feed-forward block is a top-1 mixture of experts (see [`EncDec`]).
    Switch,
}

/// The encoder–decoder part of a Switch Transformer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncDec {
    pub decoder_layers: u64,
    /// Encoder and decoder layers whose feed-forward block is sparse (mixture of experts).
    pub sparse_encoder_layers: u64,
    pub sparse_decoder_layers: u64,
    /// Tokens an expert accepts per batch; routing beyond it drops tokens (None: unlimited).
    pub expert_capacity: Option<u64>,
    /// Relative-position buckets of the attention bias (first layer of each stack).
    pub relative_buckets: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// One GELU kernel (exact, or PyTorch's own tanh approximation).
    Gelu,
    /// GELU's tanh approximation as Hugging Face writes it in Python (`gelu_new`, GPT-2's
    /// default): a chain of elementwise ops, of which eager autograd keeps three tensors as
    /// wide as the MLP (the tanh, and both factors of the last product) for backward.
    GeluTanhChain,
    Relu,
    SwiGlu,
}

impl Activation {
    /// GPT-2's `activation_function`, as Hugging Face maps it (`gelu_new` when absent).
    fn of_gpt2(cfg: &Value, origin: &str) -> Result<Activation, WorkloadError> {
        let Some(value) = cfg.get("activation_function") else { return Ok(Activation::GeluTanhChain) };
        match value.as_str() {
            Some("gelu_new" | "gelu_fast") => Ok(Activation::GeluTanhChain),
            Some("gelu" | "gelu_pytorch_tanh") => Ok(Activation::Gelu),
            Some("relu") => Ok(Activation::Relu),
            _ => Err(WorkloadError::Unsupported { origin: origin.into(), reason: format!("gpt2 activation_function {value} is not modelled (gelu_new, gelu_fast, gelu, gelu_pytorch_tanh, relu)") }),
        }
    }
}

/// Mixture of experts: every token goes to `top_k` of `experts` routed expert MLPs, each of
/// width [`TransformerSpec::ffn`] (`moe_intermediate_size`, or `intermediate_size` where the
/// config has no separate expert width: Mixtral, gpt-oss, MiniMax-M2).
/// Routing assumption: perfectly balanced, so each expert gets tokens·top_k/experts rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moe {
    pub experts: u64,
    pub top_k: u64,
    /// Total width of the shared experts that every token also runs, as one SwiGLU MLP
    /// (DeepSeek: n_shared_experts × moe_intermediate_size; Qwen2-MoE:
    /// shared_expert_intermediate_size); 0 when there are none.
    pub shared_ffn: u64,
    /// Layers whose feed-forward block is a dense MLP of width `dense_ffn` instead of experts
    /// (DeepSeek's first_k_dense_replace; Qwen-MoE's mlp_only_layers and decoder_sparse_step).
    /// Graphs take them to be the first layers (DeepSeek's are).
    pub dense_layers: u64,
    /// Width of those dense MLPs (`intermediate_size`); 0 when there are none.
    pub dense_ffn: u64,
}

impl Moe {
    /// Top-k routing over `experts`, without shared experts or dense layers.
    pub fn routed(experts: u64, top_k: u64) -> Moe {
        Moe { experts, top_k, shared_ffn: 0, dense_layers: 0, dense_ffn: 0 }
    }
}

/// Multi-head latent attention (DeepSeek-V2/V3/R1, Kimi-K2, GLM-5): queries through an optional
/// low-rank bottleneck, keys and values compressed into one `kv_lora_rank`-wide latent plus a
/// `qk_rope_head_dim`-wide shared rotary key, which is all the KV cache holds per token and
/// layer. A spec with MLA has `head_dim` = qk_nope + qk_rope and `kv_heads` = `heads`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mla {
    /// Query bottleneck (hidden → q_lora_rank → heads·(nope+rope)); `None`: one projection.
    pub q_lora_rank: Option<u64>,
    pub kv_lora_rank: u64,
    pub qk_nope_head_dim: u64,
    pub qk_rope_head_dim: u64,
    pub v_head_dim: u64,
    /// DeepSeek-V3.2's and GLM-5's sparse attention (DSA); `None`: dense MLA.
    pub indexer: Option<SparseIndexer>,
}

/// DSA's lightning indexer: for each query, `heads` small heads of `head_dim` score every
/// cached token against one key per token (cached in FP8 with an FP32 scale, beside the
/// latent), and the attention reads only the `topk` best-scoring tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SparseIndexer {
    pub topk: u64,
    pub heads: u64,
    pub head_dim: u64,
}

impl SparseIndexer {
    /// Bytes one token's indexer key takes per layer: FP8 elements and one FP32 scale.
    pub fn cache_bytes(&self) -> u64 {
        self.head_dim + 4
    }
}

impl Mla {
    /// Elements one token's latent cache holds per layer: kv_lora_rank + qk_rope_head_dim.
    pub fn cache_width(&self) -> u64 {
        self.kv_lora_rank + self.qk_rope_head_dim
    }
    /// Query/key head width: qk_nope + qk_rope.
    pub fn qk_head_dim(&self) -> u64 {
        self.qk_nope_head_dim + self.qk_rope_head_dim
    }
}

/// Sliding-window attention: the layers flagged in `layers` (one flag per layer, true =
/// sliding) attend to the last `window` tokens only, and only those stay in their KV cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlidingWindow {
    pub window: u64,
    pub layers: Vec<bool>,
}

impl SlidingWindow {
    /// How many layers use the window.
    pub fn count(&self) -> u64 {
        self.layers.iter().filter(|&&s| s).count() as u64
    }
}

/// Parameter counts of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Every parameter: embeddings, all layers with every expert, the final norm and the LM
    /// head (once when tied to the embeddings). Multi-token-prediction modules
    /// (`num_nextn_predict_layers`) are not part of the main model and are not counted.
    pub total: u64,
    /// Parameters one token runs through: every layer's attention, norms, dense MLPs, router,
    /// shared experts and `top_k` routed experts, plus the LM head (also when tied). The
    /// input embedding table is a lookup, not counted. Matches gpt-oss's published 5.1 B.
    pub active: u64,
}

/// A `hf_quant_config.json` (NVIDIA ModelOpt checkpoints): the weight format and the KV cache's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HfQuant {
    pub weights: Option<Quant>,
    pub kv_cache: Option<DType>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransformerSpec {
    pub name: String,
    pub arch: Arch,
    pub hidden: u64,
    pub layers: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    pub ffn: u64,
    pub vocab: u64,
    pub max_positions: u64,
    pub activation: Activation,
    pub norm: NormKind,
    pub tied_embeddings: bool,
    pub qkv_bias: bool,
    pub out_bias: bool,
    pub mlp_bias: bool,
    /// Per-head RMSNorm on queries and keys (Qwen3).
    pub qk_norm: bool,
    pub learned_positions: bool,
    /// Extra learned position rows (OPT reserves 2).
    pub position_offset: u64,
    /// Token-type vocabulary (BERT); 0 when absent.
    pub type_vocab: u64,
    pub moe: Option<Moe>,
    pub causal: bool,
    /// Set for encoder–decoder models (Switch); `layers` then counts encoder layers.
    pub encdec: Option<EncDec>,
    /// Multi-head latent attention; `None`: standard (grouped-query) attention.
    pub mla: Option<Mla>,
    /// Sliding-window attention, where the config enables it (gpt-oss's alternate layers,
    /// Mistral's `sliding_window`, Qwen's `use_sliding_window`).
    pub sliding_window: Option<SlidingWindow>,
    /// The checkpoint's own quantisation as its `quantization_config` declares it: serving
    /// defaults to it ([`TransformerSpec::served_quants`]); graphs use
    /// [`crate::BuildOptions::quant`]. Checkpoints often quantise only some layers (gpt-oss and
    /// Kimi-K2.5: the routed experts).
    pub checkpoint_quant: Option<Quant>,
    /// A `quantization_config` method none of [`Quant`] models (bitsandbytes, 8-bit GPTQ…):
    /// the weights are priced in 16 bits, and reports say so ([`TransformerSpec::quant_note`]).
    pub unmodelled_quant: Option<String>,
    /// Gated DeltaNet linear-attention layers beside the full-attention ones (Qwen3-Next,
    /// Qwen3.5); `None`: every layer attends over its whole KV cache.
    pub linear_attention: Option<LinearAttention>,
    /// The full-attention layers gate their output per element by sigmoid(x·W_g), W_g
    /// projected beside the queries (Qwen3-Next and Qwen3.5's `attn_output_gate`).
    pub attn_output_gate: bool,
    /// Rotary embedding covers only this many dimensions of each head (Qwen3.5's
    /// `partial_rotary_factor` × head_dim); `None`: all of them.
    pub rotary_dim: Option<u64>,
}

/// Gated DeltaNet linear attention: the layers flagged in `layers` (true = linear) replace
/// attention by input projections (q, k, v and the output gate z in one; β and the decay in
/// another), a causal depthwise convolution of `conv_kernel` taps over q, k and v, the gated
/// delta rule ([`wavecast_ir::ops::GatedDelta`]) over per-head `head_k_dim × head_v_dim`
/// states, a gated RMSNorm and an output projection. They keep no KV cache: each sequence
/// holds its conv state ((kernel − 1) tokens of q, k, v) and its recurrent state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinearAttention {
    pub layers: Vec<bool>,
    pub k_heads: u64,
    pub v_heads: u64,
    pub head_k_dim: u64,
    pub head_v_dim: u64,
    pub conv_kernel: u64,
    /// The recurrent state's element type (`mamba_ssm_dtype`; FP32 by default).
    pub state_dtype: DType,
}

impl LinearAttention {
    /// How many layers are linear.
    pub fn count(&self) -> u64 {
        self.layers.iter().filter(|&&l| l).count() as u64
    }
    /// Width of the query and key projections together (all heads).
    pub fn qk_width(&self) -> u64 {
        2 * self.k_heads * self.head_k_dim
    }
    /// Width of the value projection (all heads), also that of the output gate z.
    pub fn v_width(&self) -> u64 {
        self.v_heads * self.head_v_dim
    }
    /// Channels the causal convolution runs over: q, k and v.
    pub fn conv_channels(&self) -> u64 {
        self.qk_width() + self.v_width()
    }
    /// Parameters of one linear-attention mixer (without its pre-norm): the two input
    /// projections, the convolution's taps, the per-head decay (A_log) and step bias, the
    /// gated norm's weight and the output projection.
    pub fn mixer_params(&self, hidden: u64) -> u128 {
        let w = u128::from;
        let (h, v) = (w(hidden), w(self.v_width()));
        h * (w(self.qk_width()) + 2 * v) + h * 2 * w(self.v_heads) + w(self.conv_channels()) * w(self.conv_kernel) + 2 * w(self.v_heads) + w(self.head_v_dim) + v * h
    }
    /// State bytes one sequence holds in one linear layer on one of `tp` GPUs: the recurrent
    /// state (v_heads/tp × head_k_dim × head_v_dim in `state_dtype`) and the conv state
    /// (kernel − 1 positions of the GPU's conv channels in `dtype`).
    pub fn state_bytes_per_layer(&self, tp: u64, dtype: DType) -> f64 {
        let tp = tp.max(1) as f64;
        let recurrent = self.v_heads as f64 / tp * self.head_k_dim as f64 * self.head_v_dim as f64 * self.state_dtype.size_bytes() as f64;
        let conv = self.conv_channels() as f64 / tp * self.conv_kernel.saturating_sub(1) as f64 * dtype.size_bytes() as f64;
        recurrent + conv
    }
}

/// An optional non-negative integer field: absent or `null` is `None`; any other non-integer
/// value is an error rather than silently replaced by the default.
fn field(cfg: &Value, keys: &[&str], origin: &str) -> Result<Option<u64>, WorkloadError> {
    let Some((key, value)) = keys.iter().find_map(|k| cfg.get(*k).map(|v| (*k, v))) else { return Ok(None) };
    match value {
        Value::Null => Ok(None),
        v => v.as_u64().map(Some).ok_or_else(|| WorkloadError::Config { origin: origin.into(), reason: format!("'{key}' must be a non-negative integer, got {v}") }),
    }
}

fn required(cfg: &Value, keys: &[&str], origin: &str) -> Result<u64, WorkloadError> {
    for k in keys {
        if let Some(v) = cfg.get(*k) {
            return match v.as_u64() {
                Some(0) => Err(WorkloadError::Config { origin: origin.into(), reason: format!("'{k}' must be at least 1, got 0") }),
                Some(n) => Ok(n),
                None => Err(WorkloadError::Config {
                    origin: origin.into(),
                    reason: format!("'{k}' must be a positive integer, got {v}"),
                }),
            };
        }
    }
    Err(WorkloadError::Config { origin: origin.into(), reason: format!("missing field '{}'", keys[0]) })
}

/// Most layers a config may have (the largest published models have about 200): checked as
/// soon as the count is read, because per-layer flags are built from it before [`TransformerSpec::check`].
const MAX_LAYERS: u64 = 10_000;

fn layer_count(cfg: &Value, keys: &[&str], origin: &str) -> Result<u64, WorkloadError> {
    let n = required(cfg, keys, origin)?;
    if n > MAX_LAYERS {
        return Err(WorkloadError::Config { origin: origin.into(), reason: format!("number of layers must be in 1..={MAX_LAYERS}, got {n}") });
    }
    Ok(n)
}

fn flag(cfg: &Value, key: &str, default: bool) -> bool {
    cfg.get(key).and_then(|v| v.as_bool()).unwrap_or(default)
}

/// An optional list of layer indices (Qwen's `mlp_only_layers`).
fn index_list(cfg: &Value, key: &str, origin: &str) -> Result<Vec<u64>, WorkloadError> {
    match cfg.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_u64().ok_or_else(|| WorkloadError::Config { origin: origin.into(), reason: format!("'{key}' must list layer indices, got {v}") }))
            .collect(),
        Some(v) => Err(WorkloadError::Config { origin: origin.into(), reason: format!("'{key}' must be a list of layer indices, got {v}") }),
    }
}

/// `layer_types` (one entry per layer: "sliding_attention" or "full_attention") as sliding
/// flags; `None` when absent. Any other kind of layer is an error: it is not modelled.
fn layer_types(cfg: &Value, layers: u64, origin: &str) -> Result<Option<Vec<bool>>, WorkloadError> {
    let err = |reason: String| WorkloadError::Config { origin: origin.into(), reason };
    let items = match cfg.get("layer_types") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(v) => return Err(err(format!("'layer_types' must be a list, got {v}"))),
    };
    if items.len() as u64 != layers {
        return Err(err(format!("'layer_types' lists {} layers but num_hidden_layers is {layers}", items.len())));
    }
    items
        .iter()
        .map(|v| match v.as_str() {
            Some("sliding_attention") => Ok(true),
            Some("full_attention") => Ok(false),
            Some(other) => Err(err(format!("layer type '{other}' in 'layer_types' is not modelled (only sliding_attention and full_attention)"))),
            None => Err(err(format!("'layer_types' entries must be strings, got {v}"))),
        })
        .collect::<Result<Vec<bool>, WorkloadError>>()
        .map(Some)
}

/// Which layers of a Qwen3-Next / Qwen3.5 config are linear attention (true) and which full:
/// `layer_types` ("linear_attention" / "full_attention") when listed, else every
/// `full_attention_interval`-th layer (default 4) is full.
fn linear_layer_flags(cfg: &Value, layers: u64, origin: &str) -> Result<Vec<bool>, WorkloadError> {
    let err = |reason: String| WorkloadError::Config { origin: origin.into(), reason };
    match cfg.get("layer_types") {
        None | Some(Value::Null) => {
            let interval = field(cfg, &["full_attention_interval"], origin)?.unwrap_or(4);
            if interval == 0 {
                return Err(err("'full_attention_interval' must be at least 1, got 0".into()));
            }
            Ok((0..layers).map(|i| !(i + 1).is_multiple_of(interval)).collect())
        }
        Some(Value::Array(items)) if items.len() as u64 == layers => items
            .iter()
            .map(|v| match v.as_str() {
                Some("linear_attention") => Ok(true),
                Some("full_attention") => Ok(false),
                Some(other) => Err(err(format!("layer type '{other}' in 'layer_types' is not modelled (only linear_attention and full_attention)"))),
                None => Err(err(format!("'layer_types' entries must be strings, got {v}"))),
            })
            .collect(),
        Some(Value::Array(items)) => Err(err(format!("'layer_types' lists {} layers but num_hidden_layers is {layers}", items.len()))),
        Some(v) => Err(err(format!("'layer_types' must be a list, got {v}"))),
    }
}

/// The weight formats a serving engine loads a checkpoint in when none is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServedQuants {
    /// The transformer layers' linear weights (`None`: the 16-bit dtype).
    pub layers: Option<Quant>,
    /// The routed experts' weights.
    pub experts: Option<Quant>,
}

impl TransformerSpec {
    /// One line for reports when the checkpoint's quantization is one wavecast does not model:
    /// its weights are priced in 16 bits, which may overstate their memory and read time.
    pub fn quant_note(&self) -> Option<String> {
        self.unmodelled_quant.as_ref().map(|m| {
            format!("{}'s checkpoint declares quantization '{m}', which wavecast does not model: its weights are priced in 16 bits (--weights names a format it models)", self.name)
        })
    }

    /// The formats vLLM, SGLang and TensorRT-LLM serve this checkpoint in by default: they read
    /// its `quantization_config` rather than upcasting it. Weight-only 4-bit formats of a MoE
    /// checkpoint cover its routed experts only (gpt-oss's MXFP4, Kimi-K2's INT4 keep attention
    /// in 16 bits); every other format covers every linear layer.
    pub fn served_quants(&self) -> ServedQuants {
        match self.checkpoint_quant {
            Some(q) if self.moe.is_some() && !q.quantizes_activations() => ServedQuants { layers: None, experts: Some(q) },
            Some(q) => ServedQuants { layers: Some(q), experts: Some(q) },
            None => ServedQuants::default(),
        }
    }

    /// The format the routed experts run in when `asked` is asked for them. A checkpoint stored
    /// in block-scaled FP8 has no per-tensor expert weights to load: asked for per-tensor FP8,
    /// its experts run the block-scaled fused MoE kernel. The dense GEMMs may keep the label:
    /// the measured runs of such checkpoints (SGLang's DeepSeek, GLM-5 and Qwen3.5 runs) label
    /// the experts `fp8_block` and the dense GEMMs `fp8`, the engines' block GEMMs running at
    /// per-tensor speed.
    pub fn experts_run_in(&self, asked: Option<Quant>) -> Option<Quant> {
        match asked {
            Some(Quant::Fp8) if self.moe.is_some() && self.checkpoint_quant == Some(Quant::Fp8Block) => Some(Quant::Fp8Block),
            other => other,
        }
    }
}

/// How a `quantization_config` names its method, for a note: `quant_method`, with its bit
/// width where it gives one (`gptq 8-bit`).
fn quant_method_name(q: &Value) -> String {
    let method = q.get("quant_method").and_then(|v| v.as_str()).unwrap_or("unnamed");
    match q.get("bits").and_then(|b| b.as_u64()) {
        Some(bits) => format!("{method} {bits}-bit"),
        None => method.to_string(),
    }
}

/// The weight format a `quantization_config` declares, where it is one of [`Quant`]'s;
/// `None` for anything else (unknown methods are not an error: the config is still usable).
fn checkpoint_quant(q: &Value) -> Option<Quant> {
    let method = q.get("quant_method").and_then(|v| v.as_str()).unwrap_or("");
    match method {
        "fp8" if q.get("weight_block_size").is_some_and(|b| !b.is_null()) => Some(Quant::Fp8Block),
        "fp8" => Some(Quant::Fp8),
        "mxfp4" => Some(Quant::Mxfp4),
        "awq" | "gptq" if q.get("bits").and_then(|b| b.as_u64()) == Some(4) => Some(Quant::Int4),
        "modelopt" => q.get("quant_algo").and_then(|a| a.as_str()).and_then(modelopt_algo),
        // compressed-tensors (also ModelOpt's NVFP4 exports): the first group's weights.
        _ => {
            let groups = q.get("config_groups")?.as_object()?;
            let w = groups.values().find_map(|g| g.get("weights").filter(|w| w.is_object()))?;
            let bits = w.get("num_bits").and_then(|b| b.as_u64())?;
            match (bits, w.get("type").and_then(|t| t.as_str())) {
                (4, Some("int")) => Some(Quant::Int4),
                (4, Some("float")) if w.get("group_size").and_then(|g| g.as_u64()) == Some(32) => Some(Quant::Mxfp4),
                (4, Some("float")) => Some(Quant::Nvfp4),
                (8, Some("float")) => Some(Quant::Fp8),
                _ => None,
            }
        }
    }
}

fn modelopt_algo(algo: &str) -> Option<Quant> {
    match algo.to_ascii_uppercase().as_str() {
        "NVFP4" | "NVFP4_AWQ" => Some(Quant::Nvfp4),
        "FP8" => Some(Quant::Fp8),
        "FP8_BLOCK" | "FP8_PB_WO" => Some(Quant::Fp8Block),
        "W4A16_AWQ" | "INT4_AWQ" => Some(Quant::Int4),
        "MXFP4" => Some(Quant::Mxfp4),
        _ => None,
    }
}

/// Reads an NVIDIA ModelOpt `hf_quant_config.json`: `quantization.quant_algo` (NVFP4, FP8, …)
/// and `quantization.kv_cache_quant_algo` (FP8 → an FP8 KV cache).
pub fn hf_quant_config(text: &str, origin: &str) -> Result<HfQuant, WorkloadError> {
    let err = |reason: String| WorkloadError::Config { origin: origin.into(), reason };
    let v: Value = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
    let q = v.get("quantization").filter(|q| q.is_object()).ok_or_else(|| err("missing object 'quantization'".into()))?;
    let algo = |key: &str| -> Result<Option<String>, WorkloadError> {
        match q.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(err(format!("'{key}' must be a string, got {v}"))),
        }
    };
    let weights = match algo("quant_algo")? {
        Some(a) => Some(modelopt_algo(&a).ok_or_else(|| err(format!("quant_algo '{a}' is not one of NVFP4, FP8, FP8_BLOCK, W4A16_AWQ, MXFP4")))?),
        None => None,
    };
    let kv_cache = match algo("kv_cache_quant_algo")?.as_deref() {
        Some(a) if a.eq_ignore_ascii_case("fp8") => Some(DType::Fp8),
        Some(a) => return Err(err(format!("kv_cache_quant_algo '{a}' is not modelled (only FP8)"))),
        None => None,
    };
    Ok(HfQuant { weights, kv_cache })
}

/// JSON as Python's `json` module writes it: a config saved from a float that is infinite or
/// not a number holds the bare words `Infinity`, `-Infinity` or `NaN`, which strict JSON
/// refuses. Outside strings they are read as the largest finite number (its sign kept) and
/// null.
fn parse_python_json(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str(text).or_else(|strict| {
        let (mut out, mut in_string, mut escaped) = (String::with_capacity(text.len()), false, false);
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            if in_string {
                (escaped, in_string) = (c == '\\' && !escaped, c != '"' || escaped);
            } else if c == '"' {
                in_string = true;
            } else if let Some((word, value)) = [("Infinity", "1.7976931348623157e308"), ("NaN", "null")].into_iter().find(|(w, _)| rest.starts_with(w)) {
                out.push_str(value);
                rest = &rest[word.len()..];
                continue;
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        serde_json::from_str(&out).map_err(|_| strict)
    })
}

/// The model's name from a config's `_name_or_path`: a hub id (`meta-llama/Llama-3.1-70B`) as
/// is, a local checkpoint folder (`/opt/ckpts/Llama-3.1-70B-Instruct/`) by its last part;
/// `None` when empty.
fn model_name(name_or_path: &str) -> Option<&str> {
    let trimmed = name_or_path.trim_end_matches(['/', '\\']);
    let local = trimmed.starts_with(['/', '.', '~', '\\']) || trimmed.contains('\\') || trimmed.matches('/').count() > 1;
    let name = if local { trimmed.rsplit(['/', '\\']).next().unwrap_or(trimmed) } else { trimmed };
    (!name.is_empty()).then_some(name)
}

impl TransformerSpec {
    /// Parses a Hugging Face config (as JSON text).
    pub fn from_json(text: &str, origin: &str) -> Result<TransformerSpec, WorkloadError> {
        let top: Value = parse_python_json(text).map_err(|e| WorkloadError::Config { origin: origin.into(), reason: e.to_string() })?;
        if !top.is_object() {
            return Err(WorkloadError::Config { origin: origin.into(), reason: "expected a JSON object".into() });
        }
        let name = top.get("_name_or_path").and_then(|v| v.as_str()).and_then(model_name).unwrap_or(origin).to_string();
        // Multimodal wrappers (Kimi-K2.5, Qwen3.5, Llama-4) nest the language model under
        // `text_config`; the text model is what is built.
        let top_type = top.get("model_type").and_then(|v| v.as_str()).unwrap_or("");
        let cfg = match top.get("text_config") {
            Some(t @ Value::Object(_)) if !Self::SUPPORTED.contains(&top_type) => t,
            Some(Value::Object(_)) | None | Some(Value::Null) => &top,
            Some(v) => {
                return Err(WorkloadError::Config { origin: origin.into(), reason: format!("'text_config' must be an object, got {v}") })
            }
        };
        let model_type = match cfg.get("model_type").and_then(|v| v.as_str()) {
            Some(t) => t,
            None if !std::ptr::eq(cfg, &top) => top_type,
            None => "",
        };
        let mut spec = match model_type {
            "gpt2" => Self::gpt2(cfg, origin, name)?,
            "opt" => Self::opt(cfg, origin, name)?,
            "bert" => Self::bert(cfg, origin, name)?,
            "llama" | "mistral" | "qwen2" | "qwen3" | "mixtral" | "qwen2_moe" | "qwen3_moe" | "minimax_m2" => {
                Self::llama(cfg, origin, name, model_type)?
            }
            "nemotron" => Self::nemotron(cfg, origin, name)?,
            "deepseek_v2" | "deepseek_v3" | "deepseek_v32" | "kimi_k2" | "glm_moe_dsa" => Self::deepseek(cfg, origin, name)?,
            "gpt_oss" => Self::gpt_oss(cfg, origin, name)?,
            "qwen3_next" | "qwen3_5_moe" | "qwen3_5_moe_text" | "qwen3_5" | "qwen3_5_text" => Self::qwen_hybrid(cfg, origin, name, model_type)?,
            "switch_transformers" => Self::switch(cfg, origin, name)?,
            "" => {
                return Err(WorkloadError::Config { origin: origin.into(), reason: "missing field 'model_type'".into() })
            }
            other => {
                let why = match other {
                    "nemotron_h" => "its hybrid Mamba-2 / attention / MoE layers are not modelled",
                    "kimi_linear" => "its hybrid linear-attention layers are not modelled",
                    "llama4" | "llama4_text" => "its interleaved MoE and chunked no-RoPE attention layers are not modelled",
                    "nemotron-nas" => "its per-layer heterogeneous blocks (NAS) are not modelled",
                    _ => "",
                };
                let reason = if why.is_empty() {
                    format!("unsupported model_type '{other}' (supported: {})", Self::SUPPORTED.join(", "))
                } else {
                    format!("unsupported model_type '{other}': {why}")
                };
                return Err(WorkloadError::Unsupported { origin: origin.into(), reason });
            }
        };
        let quant_cfg = cfg.get("quantization_config").or_else(|| top.get("quantization_config"));
        spec.checkpoint_quant = quant_cfg.and_then(checkpoint_quant);
        spec.unmodelled_quant = quant_cfg.filter(|_| spec.checkpoint_quant.is_none()).map(quant_method_name);
        spec.check(origin)?;
        Ok(spec)
    }

    /// The `model_type`s [`TransformerSpec::from_json`] reads.
    pub const SUPPORTED: [&'static str; 22] = [
        "gpt2",
        "opt",
        "bert",
        "llama",
        "nemotron",
        "mistral",
        "qwen2",
        "qwen3",
        "mixtral",
        "qwen2_moe",
        "qwen3_moe",
        "minimax_m2",
        "deepseek_v2",
        "deepseek_v3",
        "deepseek_v32",
        "kimi_k2",
        "glm_moe_dsa",
        "gpt_oss",
        "qwen3_next",
        "qwen3_5_moe_text",
        "qwen3_5_text",
        "switch_transformers",
    ];

    fn check(&self, origin: &str) -> Result<(), WorkloadError> {
        let invalid = |reason: String| Err(WorkloadError::Config { origin: origin.into(), reason });
        // Bounds far above any published model (the largest have ~200 layers, hidden 25,600,
        // vocabularies of ~260,000): beyond them a config is a typo, and shape products would
        // leave the range where times and byte counts are exact.
        let sizes = [
            ("number of layers", self.layers, MAX_LAYERS),
            ("hidden size", self.hidden, 1 << 20),
            ("attention heads", self.heads, 1 << 14),
            ("key/value heads", self.kv_heads, 1 << 14),
            ("head dimension", self.head_dim, 1 << 14),
            ("feed-forward size", self.ffn, 1 << 22),
            ("vocabulary", self.vocab, 1 << 24),
        ];
        for (what, value, most) in sizes {
            if value == 0 || value > most {
                return invalid(format!("{what} must be in 1..={most}, got {value}"));
            }
        }
        if self.max_positions == 0 {
            return invalid("the context (max_position_embeddings) must be at least 1 token, got 0".into());
        }
        // Only learned position tables are sized by max_position_embeddings (Switch's relative
        // positions leave it unbounded).
        if (self.learned_positions && self.max_positions > 1 << 30) || self.type_vocab > 1 << 20 {
            return invalid("max_position_embeddings or type_vocab_size is implausibly large".into());
        }
        if !self.hidden.is_multiple_of(self.heads) && self.head_dim * self.heads == 0 {
            return invalid("hidden size is not divisible by the head count".into());
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return invalid(format!("num_attention_heads {} is not a multiple of num_key_value_heads {}", self.heads, self.kv_heads));
        }
        if let Some(m) = self.moe {
            if m.experts == 0 || m.experts > 1 << 16 {
                return invalid(format!("number of experts must be in 1..={}, got {}", 1 << 16, m.experts));
            }
            if m.top_k == 0 || m.top_k > m.experts {
                return invalid(format!("top-k {} must be in 1..={}", m.top_k, m.experts));
            }
            if m.shared_ffn > 1 << 22 || m.dense_ffn > 1 << 22 {
                return invalid("shared-expert or dense MLP width is implausibly large (above 4,194,304)".into());
            }
            if m.dense_layers > self.layers || (m.dense_layers > 0 && m.dense_ffn == 0) {
                return invalid(format!("{} dense layers of width {} do not fit {} layers", m.dense_layers, m.dense_ffn, self.layers));
            }
        }
        if let Some(m) = self.mla {
            let widths = [m.q_lora_rank.unwrap_or(1), m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim];
            if widths.iter().any(|&w| w == 0 || w > 1 << 16) {
                return invalid("MLA ranks and head widths (q_lora_rank, kv_lora_rank, qk_nope/qk_rope/v_head_dim) must be in 1..=65536".into());
            }
            if let Some(ix) = m.indexer {
                if [ix.topk, ix.heads, ix.head_dim].iter().any(|&w| w == 0 || w > 1 << 20) {
                    return invalid("the sparse-attention indexer's index_topk, index_n_heads and index_head_dim must be in 1..=1048576".into());
                }
            }
        }
        if let Some(w) = &self.sliding_window {
            if w.window == 0 || w.layers.len() as u64 != self.layers {
                return invalid(format!("sliding window {} over {} layer flags does not fit {} layers", w.window, w.layers.len(), self.layers));
            }
        }
        if let Some(l) = &self.linear_attention {
            let widths = [l.k_heads, l.v_heads, l.head_k_dim, l.head_v_dim, l.conv_kernel];
            if widths.iter().any(|&w| w == 0 || w > 1 << 14) {
                return invalid("linear-attention heads, head widths and conv kernel (linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim) must be in 1..=16384".into());
            }
            if !l.v_heads.is_multiple_of(l.k_heads) {
                return invalid(format!("linear_num_value_heads {} is not a multiple of linear_num_key_heads {}", l.v_heads, l.k_heads));
            }
            if l.layers.len() as u64 != self.layers || l.count() == self.layers {
                return invalid(format!("{} linear-attention layer flags do not fit {} layers with at least one full-attention layer", l.layers.len(), self.layers));
            }
        }
        if let Some(e) = self.encdec {
            if e.decoder_layers == 0 || e.decoder_layers > 10_000 {
                return invalid(format!("decoder layers must be in 1..=10000, got {}", e.decoder_layers));
            }
        }
        Ok(())
    }

    fn gpt2(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["n_embd", "hidden_size"], origin)?;
        let heads = required(cfg, &["n_head", "num_attention_heads"], origin)?;
        Ok(TransformerSpec {
            name,
            arch: Arch::Gpt2,
            hidden,
            layers: required(cfg, &["n_layer", "num_hidden_layers"], origin)?,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            // Saturating: `check` rejects an absurd hidden size after parsing.
            ffn: field(cfg, &["n_inner"], origin)?.unwrap_or(hidden.saturating_mul(4)),
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: required(cfg, &["n_positions", "n_ctx", "max_position_embeddings"], origin)?,
            activation: Activation::of_gpt2(cfg, origin)?,
            norm: NormKind::LayerNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", true),
            qkv_bias: true,
            out_bias: true,
            mlp_bias: true,
            qk_norm: false,
            learned_positions: true,
            position_offset: 0,
            type_vocab: 0,
            moe: None,
            causal: true,
            encdec: None,
            mla: None,
            sliding_window: None,
            checkpoint_quant: None,
            unmodelled_quant: None,
            linear_attention: None,
            attn_output_gate: false,
            rotary_dim: None,
        })
    }

    fn opt(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["hidden_size"], origin)?;
        let heads = required(cfg, &["num_attention_heads"], origin)?;
        if let Some(p) = field(cfg, &["word_embed_proj_dim"], origin)? {
            if p != hidden {
                return Err(WorkloadError::Config {
                    origin: origin.into(),
                    reason: "OPT with word_embed_proj_dim != hidden_size (OPT-350m) is not supported".into(),
                });
            }
        }
        let bias = flag(cfg, "enable_bias", true);
        Ok(TransformerSpec {
            name,
            arch: Arch::Opt,
            hidden,
            layers: required(cfg, &["num_hidden_layers"], origin)?,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            ffn: required(cfg, &["ffn_dim"], origin)?,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: required(cfg, &["max_position_embeddings"], origin)?,
            activation: Activation::Relu,
            norm: NormKind::LayerNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", true),
            qkv_bias: bias,
            out_bias: bias,
            mlp_bias: bias,
            qk_norm: false,
            learned_positions: true,
            position_offset: 2,
            type_vocab: 0,
            moe: None,
            causal: true,
            encdec: None,
            mla: None,
            sliding_window: None,
            checkpoint_quant: None,
            unmodelled_quant: None,
            linear_attention: None,
            attn_output_gate: false,
            rotary_dim: None,
        })
    }

    fn bert(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["hidden_size"], origin)?;
        let heads = required(cfg, &["num_attention_heads"], origin)?;
        Ok(TransformerSpec {
            name,
            arch: Arch::Bert,
            hidden,
            layers: required(cfg, &["num_hidden_layers"], origin)?,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            ffn: required(cfg, &["intermediate_size"], origin)?,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: required(cfg, &["max_position_embeddings"], origin)?,
            activation: Activation::Gelu,
            norm: NormKind::LayerNorm,
            tied_embeddings: true,
            qkv_bias: true,
            out_bias: true,
            mlp_bias: true,
            qk_norm: false,
            learned_positions: true,
            position_offset: 0,
            type_vocab: field(cfg, &["type_vocab_size"], origin)?.unwrap_or(2),
            moe: None,
            causal: false,
            encdec: None,
            mla: None,
            sliding_window: None,
            checkpoint_quant: None,
            unmodelled_quant: None,
            linear_attention: None,
            attn_output_gate: false,
            rotary_dim: None,
        })
    }

    /// Nemotron-3/4: a Llama-shaped decoder (rotary, GQA, no biases) whose MLP is not gated —
    /// up-projection, squared ReLU, down-projection — with LayerNorm. Squared ReLU is priced as
    /// one element-wise pass like ReLU (same bytes), and the rotary kernel over whole heads
    /// (`partial_rotary_factor` rotates half of each: a few element-wise bytes more).
    fn nemotron(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        match cfg.get("hidden_act").and_then(|v| v.as_str()) {
            None | Some("relu2") => {}
            Some(other) => return Err(WorkloadError::Unsupported { origin: origin.into(), reason: format!("nemotron hidden_act '{other}' is not modelled (relu2)") }),
        }
        let mut spec = Self::llama(cfg, origin, name, "nemotron")?;
        spec.activation = Activation::Relu;
        spec.norm = NormKind::LayerNorm;
        Ok(spec)
    }

    fn llama(cfg: &Value, origin: &str, name: String, model_type: &str) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["hidden_size"], origin)?;
        let heads = required(cfg, &["num_attention_heads"], origin)?;
        let layers = layer_count(cfg, &["num_hidden_layers"], origin)?;
        let kv_heads = field(cfg, &["num_key_value_heads"], origin)?.unwrap_or(heads);
        let head_dim = field(cfg, &["head_dim"], origin)?.unwrap_or(hidden / heads);
        let experts = field(cfg, &["num_local_experts", "num_experts"], origin)?.unwrap_or(0);
        let sparse_type = matches!(model_type, "mixtral" | "qwen2_moe" | "qwen3_moe" | "minimax_m2");
        if sparse_type && experts == 0 {
            return Err(WorkloadError::Config { origin: origin.into(), reason: format!("a {model_type} config needs num_experts ≥ 1, got 0") });
        }
        let moe = if experts > 1 {
            let top_k = field(cfg, &["num_experts_per_tok"], origin)?.unwrap_or(2);
            let shared_ffn = field(cfg, &["shared_expert_intermediate_size", "shared_intermediate_size"], origin)?.unwrap_or(0);
            // Qwen-MoE: layer i is sparse unless listed in mlp_only_layers or (i+1) is not a
            // multiple of decoder_sparse_step.
            let step = field(cfg, &["decoder_sparse_step"], origin)?.unwrap_or(1).max(1);
            let mlp_only = index_list(cfg, "mlp_only_layers", origin)?;
            let dense_layers = (0..layers).filter(|i| mlp_only.contains(i) || !(i + 1).is_multiple_of(step)).count() as u64;
            let dense_ffn = if dense_layers > 0 { required(cfg, &["intermediate_size"], origin)? } else { 0 };
            Some(Moe { experts, top_k, shared_ffn, dense_layers, dense_ffn })
        } else {
            None
        };
        let ffn = if moe.is_some() {
            field(cfg, &["moe_intermediate_size"], origin)?.map(Ok).unwrap_or_else(|| required(cfg, &["intermediate_size"], origin))?
        } else {
            required(cfg, &["intermediate_size"], origin)?
        };
        let qkv_bias = match model_type {
            "qwen2" | "qwen2_moe" => true,
            _ => flag(cfg, "attention_bias", false),
        };
        // Mistral and Mixtral slide every layer when `sliding_window` is set; Qwen only with
        // use_sliding_window, from layer max_window_layers on; an explicit layer_types wins.
        let window = field(cfg, &["sliding_window"], origin)?;
        let sliding_window = match window {
            Some(window) if matches!(model_type, "mistral" | "mixtral") => {
                let layers_flags = layer_types(cfg, layers, origin)?.unwrap_or_else(|| vec![true; layers as usize]);
                Some(SlidingWindow { window, layers: layers_flags })
            }
            Some(window) if model_type.starts_with("qwen") && flag(cfg, "use_sliding_window", false) => {
                let from = field(cfg, &["max_window_layers"], origin)?.unwrap_or(layers);
                let flags = match layer_types(cfg, layers, origin)? {
                    Some(f) => f,
                    None => (0..layers).map(|i| i >= from).collect(),
                };
                Some(SlidingWindow { window, layers: flags })
            }
            _ => None,
        }
        .filter(|w| w.count() > 0);
        let qk_norm = model_type.starts_with("qwen3") || (model_type == "minimax_m2" && flag(cfg, "use_qk_norm", false));
        Ok(TransformerSpec {
            name,
            arch: Arch::Llama,
            hidden,
            layers,
            heads,
            kv_heads,
            head_dim,
            ffn,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: field(cfg, &["max_position_embeddings"], origin)?.unwrap_or(4096),
            activation: Activation::SwiGlu,
            norm: NormKind::RmsNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", false),
            qkv_bias,
            out_bias: flag(cfg, "attention_bias", false),
            mlp_bias: flag(cfg, "mlp_bias", false),
            qk_norm,
            learned_positions: false,
            position_offset: 0,
            type_vocab: 0,
            moe,
            causal: true,
            encdec: None,
            mla: None,
            sliding_window,
            checkpoint_quant: None,
            unmodelled_quant: None,
            linear_attention: None,
            attn_output_gate: false,
            rotary_dim: None,
        })
    }

    /// DeepSeek-V2/V3/R1 and the models built on them (Kimi-K2, GLM-5): MLA attention, dense
    /// first layers, then MoE layers with shared experts. DeepSeek-V3.2's and GLM-5's sparse
    /// attention (DSA: a lightning indexer picking `index_topk` keys per query) is MLA with
    /// its [`SparseIndexer`]. Multi-token-prediction layers are not built.
    fn deepseek(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["hidden_size"], origin)?;
        let heads = required(cfg, &["num_attention_heads"], origin)?;
        let layers = layer_count(cfg, &["num_hidden_layers"], origin)?;
        let mla = Mla {
            q_lora_rank: field(cfg, &["q_lora_rank"], origin)?,
            kv_lora_rank: required(cfg, &["kv_lora_rank"], origin)?,
            qk_nope_head_dim: required(cfg, &["qk_nope_head_dim"], origin)?,
            qk_rope_head_dim: required(cfg, &["qk_rope_head_dim"], origin)?,
            v_head_dim: required(cfg, &["v_head_dim"], origin)?,
            indexer: match (field(cfg, &["index_topk"], origin)?, field(cfg, &["index_n_heads"], origin)?, field(cfg, &["index_head_dim"], origin)?) {
                (Some(topk), Some(heads), Some(head_dim)) => Some(SparseIndexer { topk, heads, head_dim }),
                _ => None,
            },
        };
        let experts = field(cfg, &["n_routed_experts"], origin)?.unwrap_or(0);
        let dense_ffn = required(cfg, &["intermediate_size"], origin)?;
        let (moe, ffn) = if experts > 0 {
            let expert_ffn = required(cfg, &["moe_intermediate_size"], origin)?;
            let first_dense = field(cfg, &["first_k_dense_replace"], origin)?.unwrap_or(0).min(layers);
            let freq = field(cfg, &["moe_layer_freq"], origin)?.unwrap_or(1).max(1);
            let sparse = (first_dense..layers).filter(|i| i.is_multiple_of(freq)).count() as u64;
            let shared = field(cfg, &["n_shared_experts"], origin)?.unwrap_or(0);
            let moe = Moe {
                experts,
                top_k: required(cfg, &["num_experts_per_tok"], origin)?,
                shared_ffn: shared.saturating_mul(expert_ffn),
                dense_layers: layers - sparse,
                dense_ffn,
            };
            (Some(moe), expert_ffn)
        } else {
            (None, dense_ffn)
        };
        Ok(TransformerSpec {
            name,
            arch: Arch::Llama,
            hidden,
            layers,
            heads,
            kv_heads: heads,
            head_dim: mla.qk_nope_head_dim.saturating_add(mla.qk_rope_head_dim),
            ffn,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: field(cfg, &["max_position_embeddings"], origin)?.unwrap_or(4096),
            activation: Activation::SwiGlu,
            norm: NormKind::RmsNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", false),
            qkv_bias: flag(cfg, "attention_bias", false),
            out_bias: flag(cfg, "attention_bias", false),
            mlp_bias: false,
            qk_norm: false,
            learned_positions: false,
            position_offset: 0,
            type_vocab: 0,
            moe,
            causal: true,
            encdec: None,
            mla: Some(mla),
            sliding_window: None,
            checkpoint_quant: None,
            unmodelled_quant: None,
            linear_attention: None,
            attn_output_gate: false,
            rotary_dim: None,
        })
    }

    /// gpt-oss: GQA attention with biases, alternate sliding-window (128) and full layers,
    /// top-4 MoE with biased experts of width `intermediate_size`. Its attention sinks (one
    /// learned logit per head) and the clamped SwiGLU cost nothing measurable and are left out.
    fn gpt_oss(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["hidden_size"], origin)?;
        let heads = required(cfg, &["num_attention_heads"], origin)?;
        let layers = layer_count(cfg, &["num_hidden_layers"], origin)?;
        let experts = required(cfg, &["num_local_experts", "num_experts"], origin)?;
        let top_k = required(cfg, &["num_experts_per_tok", "experts_per_token"], origin)?;
        let sliding_window = match field(cfg, &["sliding_window"], origin)? {
            // Without layer_types gpt-oss alternates, starting with a sliding layer.
            Some(window) => Some(SlidingWindow {
                window,
                layers: layer_types(cfg, layers, origin)?.unwrap_or_else(|| (0..layers).map(|i| i % 2 == 0).collect()),
            }),
            None => None,
        }
        .filter(|w| w.count() > 0);
        let bias = flag(cfg, "attention_bias", true);
        Ok(TransformerSpec {
            name,
            arch: Arch::Llama,
            hidden,
            layers,
            heads,
            kv_heads: field(cfg, &["num_key_value_heads"], origin)?.unwrap_or(heads),
            head_dim: field(cfg, &["head_dim"], origin)?.unwrap_or(hidden / heads),
            ffn: required(cfg, &["intermediate_size"], origin)?,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: field(cfg, &["max_position_embeddings"], origin)?.unwrap_or(4096),
            activation: Activation::SwiGlu,
            norm: NormKind::RmsNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", false),
            qkv_bias: bias,
            out_bias: bias,
            mlp_bias: true,
            qk_norm: false,
            learned_positions: false,
            position_offset: 0,
            type_vocab: 0,
            moe: Some(Moe::routed(experts, top_k)),
            causal: true,
            encdec: None,
            mla: None,
            sliding_window,
            checkpoint_quant: None,
            unmodelled_quant: None,
            linear_attention: None,
            attn_output_gate: false,
            rotary_dim: None,
        })
    }

    /// Qwen3-Next and Qwen3.5 (dense or MoE): a Qwen3 decoder whose layers are mostly Gated
    /// DeltaNet linear attention, every `full_attention_interval`-th one (or as `layer_types`
    /// lists them) full attention with an output gate, query/key norms and partial rotary.
    /// The MoE is Qwen-MoE's (routed experts of `moe_intermediate_size`, one shared expert;
    /// its one-column sigmoid gate is left out). Multi-token-prediction layers are not built.
    fn qwen_hybrid(cfg: &Value, origin: &str, name: String, model_type: &str) -> Result<TransformerSpec, WorkloadError> {
        let base_type = if model_type.contains("moe") || model_type == "qwen3_next" { "qwen3_moe" } else { "qwen3" };
        let mut spec = Self::llama(cfg, origin, name, base_type)?;
        let layers = linear_layer_flags(cfg, spec.layers, origin)?;
        let state_dtype = match cfg.get("mamba_ssm_dtype").and_then(|v| v.as_str()) {
            None | Some("float32") => DType::Fp32,
            Some("bfloat16") => DType::Bf16,
            Some("float16") => DType::Fp16,
            Some(other) => return Err(WorkloadError::Config { origin: origin.into(), reason: format!("mamba_ssm_dtype '{other}' is not one of float32, bfloat16, float16") }),
        };
        spec.linear_attention = Some(LinearAttention {
            layers,
            k_heads: required(cfg, &["linear_num_key_heads"], origin)?,
            v_heads: required(cfg, &["linear_num_value_heads"], origin)?,
            head_k_dim: required(cfg, &["linear_key_head_dim"], origin)?,
            head_v_dim: required(cfg, &["linear_value_head_dim"], origin)?,
            conv_kernel: required(cfg, &["linear_conv_kernel_dim"], origin)?,
            state_dtype,
        });
        spec.attn_output_gate = flag(cfg, "attn_output_gate", true);
        let rope = cfg.get("rope_parameters").or_else(|| cfg.get("rope_scaling")).unwrap_or(cfg);
        let factor = rope.get("partial_rotary_factor").or_else(|| cfg.get("partial_rotary_factor")).and_then(|v| v.as_f64());
        spec.rotary_dim = match factor {
            None => None,
            Some(f) if f > 0.0 && f < 1.0 => Some(((spec.head_dim as f64 * f).round() as u64).max(1)),
            // 1: whole heads.
            Some(f) if f > 0.0 && f <= 1.0 => None,
            Some(f) => return Err(WorkloadError::Config { origin: origin.into(), reason: format!("partial_rotary_factor must be in (0, 1], got {}", wavecast_ir::quoted(f)) }),
        };
        Ok(spec)
    }

    fn switch(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["d_model"], origin)?;
        let heads = required(cfg, &["num_heads"], origin)?;
        let layers = required(cfg, &["num_layers"], origin)?;
        let decoder_layers = field(cfg, &["num_decoder_layers"], origin)?.unwrap_or(layers);
        let experts = required(cfg, &["num_experts"], origin)?;
        let sparse = |count_key: &str, step_key: &str, total: u64| -> Result<u64, WorkloadError> {
            Ok(match (field(cfg, &[count_key], origin)?, field(cfg, &[step_key], origin)?) {
                (Some(count), _) => count,
                (None, Some(step)) if step > 0 => total / step,
                _ => 0,
            })
        };
        let top_k = field(cfg, &["num_selected_experts"], origin)?.unwrap_or(1);
        Ok(TransformerSpec {
            name,
            arch: Arch::Switch,
            hidden,
            layers,
            heads,
            kv_heads: heads,
            head_dim: required(cfg, &["d_kv"], origin)?,
            ffn: required(cfg, &["d_ff"], origin)?,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: u64::MAX,
            activation: Activation::Relu,
            norm: NormKind::RmsNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", true),
            qkv_bias: false,
            out_bias: false,
            mlp_bias: false,
            qk_norm: false,
            learned_positions: false,
            position_offset: 0,
            type_vocab: 0,
            moe: Some(Moe::routed(experts, top_k)),
            causal: false,
            encdec: Some(EncDec {
                decoder_layers,
                sparse_encoder_layers: sparse("num_sparse_encoder_layers", "encoder_sparse_step", layers)?.min(layers),
                sparse_decoder_layers: sparse("num_sparse_decoder_layers", "decoder_sparse_step", decoder_layers)?.min(decoder_layers),
                expert_capacity: field(cfg, &["expert_capacity"], origin)?.filter(|&c| c > 0),
                relative_buckets: field(cfg, &["relative_attention_num_buckets"], origin)?.unwrap_or(32),
            }),
            mla: None,
            sliding_window: None,
            checkpoint_quant: None,
            unmodelled_quant: None,
            linear_attention: None,
            attn_output_gate: false,
            rotary_dim: None,
        })
    }

    pub fn is_decoder(&self) -> bool {
        self.causal
    }

    /// Layers whose feed-forward block is a dense MLP (all of them without experts).
    pub fn dense_layers(&self) -> u64 {
        self.moe.map_or(self.layers, |m| m.dense_layers.min(self.layers))
    }

    /// KV-cache bytes one token adds on one GPU, over every layer: 2 · kv_heads_per_gpu ·
    /// head_dim elements per layer, or with MLA the kv_lora_rank + qk_rope_head_dim latent
    /// (one tensor for keys and values, replicated on every tensor-parallel GPU, so not divided
    /// by it). Sliding-window layers are counted like the others: this is what a token costs
    /// while it is inside every window. A cache's size is not tokens × this when windows are
    /// shorter than the context; [`TransformerSpec::kv_cache_bytes`] caps them.
    pub fn kv_cache_bytes_per_token(&self, kv_dtype: DType, kv_heads_per_gpu: u64) -> f64 {
        self.layer_kv_bytes(kv_dtype, kv_heads_per_gpu) as f64 * self.attention_layers() as f64
    }

    /// Layers that keep a KV cache: all but the linear-attention ones.
    pub fn attention_layers(&self) -> u64 {
        self.layers - self.linear_attention.as_ref().map_or(0, |l| l.count().min(self.layers))
    }

    /// Bytes of state one sequence holds on one of `tp` GPUs in the linear-attention layers,
    /// whatever its length (conv state in `dtype`, recurrent state in the state dtype); 0
    /// without such layers.
    pub fn linear_state_bytes(&self, tp: u64, dtype: DType) -> f64 {
        self.linear_attention.as_ref().map_or(0.0, |l| l.count() as f64 * l.state_bytes_per_layer(tp, dtype))
    }

    /// Bytes one token occupies in one layer's KV cache on one GPU: its keys and values (or
    /// latent) in `kv_dtype`, plus a sparse-attention indexer's key in its own FP8.
    fn layer_kv_bytes(&self, kv_dtype: DType, kv_heads_per_gpu: u64) -> u128 {
        let elements = match self.mla {
            Some(m) => u128::from(m.cache_width()),
            None => 2 * u128::from(kv_heads_per_gpu) * u128::from(self.head_dim),
        };
        let indexer = self.mla.and_then(|m| m.indexer).map_or(0, |ix| u128::from(ix.cache_bytes()));
        elements * u128::from(kv_dtype.size_bytes()) + indexer
    }

    /// KV cache of `sequences` sequences of `tokens_per_sequence` tokens on one GPU. Full-
    /// attention layers keep every token; sliding-window layers keep at most the last `window`
    /// of each sequence (as vLLM's and SGLang's sliding-window caches do), so the size is
    /// Σ_layers min(tokens, window_of_layer) · per-layer bytes — not a per-token average.
    pub fn kv_cache_bytes(&self, kv_dtype: DType, kv_heads_per_gpu: u64, tokens_per_sequence: u64, sequences: u64) -> f64 {
        let per_layer = self.layer_kv_bytes(kv_dtype, kv_heads_per_gpu);
        let (sliding, window) = self.sliding_window.as_ref().map_or((0, 0), |w| (w.count().min(self.layers), w.window));
        let full_tokens = u128::from(self.attention_layers().saturating_sub(sliding)) * u128::from(tokens_per_sequence);
        let window_tokens = u128::from(sliding) * u128::from(tokens_per_sequence.min(window));
        ((full_tokens + window_tokens) * per_layer * u128::from(sequences)) as f64
    }

    /// Parameter counts: every parameter, and those one token runs through (see [`Params`]).
    /// Counted from the configuration the way the graphs build the layers (norms and biases
    /// included), so they agree with a graph's `params()` on one GPU.
    pub fn params(&self) -> Params {
        // u128 throughout: the largest configs `check` admits overflow u64 here.
        let w = u128::from;
        let h = w(self.hidden);
        let norm = |cols: u128| if self.norm == NormKind::LayerNorm { 2 * cols } else { cols };
        let bias = |on: bool, n: u128| if on { n } else { 0 };
        let heads = w(self.heads);
        // Attention with its pre-norm.
        let attention = match self.mla {
            Some(m) => {
                let qk = heads * w(m.qk_head_dim());
                let q = match m.q_lora_rank.map(w) {
                    Some(r) => h * r + norm(r) + r * qk,
                    None => h * qk,
                };
                let kv_lora = w(m.kv_lora_rank);
                let kv_b = kv_lora * heads * w(m.qk_nope_head_dim + m.v_head_dim);
                // The indexer's query, key (with its LayerNorm) and per-head weight projections.
                let indexer = m.indexer.map_or(0, |ix| {
                    let (ih, id) = (w(ix.heads), w(ix.head_dim));
                    m.q_lora_rank.map_or(h, w) * ih * id + h * id + 2 * id + h * ih
                });
                q + h * w(m.cache_width()) + norm(kv_lora) + kv_b + heads * w(m.v_head_dim) * h + bias(self.out_bias, h) + indexer
            }
            None => {
                let (q, kv) = (heads * w(self.head_dim), w(self.kv_heads) * w(self.head_dim));
                let qk_norm = if self.qk_norm { 2 * w(self.head_dim) } else { 0 };
                let gate = if self.attn_output_gate { h * q } else { 0 };
                h * (q + 2 * kv) + bias(self.qkv_bias, q + 2 * kv) + q * h + bias(self.out_bias, h) + qk_norm + gate
            }
        } + norm(h);
        let mlp = |f: u128| match self.activation {
            Activation::SwiGlu => 3 * h * f + bias(self.mlp_bias, 2 * f + h),
            _ => 2 * h * f + bias(self.mlp_bias, f + h),
        };
        // Every layer: attention, the second norm, and a dense MLP or the MoE block.
        let (layers, dense) = (w(self.layers), w(self.dense_layers()));
        let dense_mlp = dense * mlp(w(self.moe.map_or(self.ffn, |m| m.dense_ffn)));
        // Linear-attention layers take their mixer in place of attention.
        let full = w(self.attention_layers());
        let linear = self.linear_attention.as_ref().map_or(0, |l| (layers - full) * (l.mixer_params(self.hidden) + norm(h)));
        let mut total = full * attention + linear + layers * norm(h) + dense_mlp;
        let mut active = total;
        if let Some(m) = self.moe {
            let sparse = layers - dense;
            let shared = if m.shared_ffn > 0 { mlp(w(m.shared_ffn)) } else { 0 };
            let router = h * w(m.experts);
            total += sparse * (router + w(m.experts) * mlp(w(self.ffn)) + shared);
            active += sparse * (router + w(m.top_k) * mlp(w(self.ffn)) + shared);
        }
        let positions = if self.learned_positions { w(self.max_positions) + w(self.position_offset) } else { 0 };
        let embeddings = h * (w(self.vocab) + positions + w(self.type_vocab));
        let lm_head = h * w(self.vocab);
        total += embeddings + norm(h) + if self.tied_embeddings { 0 } else { lm_head };
        active += norm(h) + lm_head;
        let clamp = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
        Params { total: clamp(total), active: clamp(active) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hub id names the model as is; a local checkpoint folder by its last part.
    #[test]
    fn a_local_checkpoint_path_names_the_model_by_its_folder() {
        assert_eq!(model_name("meta-llama/Llama-3.1-70B"), Some("meta-llama/Llama-3.1-70B"));
        assert_eq!(model_name("/opt/ckpts/Llama-3.1-70B-Instruct/"), Some("Llama-3.1-70B-Instruct"));
        assert_eq!(model_name("./llama"), Some("llama"));
        assert_eq!(model_name("C:\\models\\qwen"), Some("qwen"));
        assert_eq!(model_name("gpt2"), Some("gpt2"));
        assert_eq!(model_name(""), None);
        assert_eq!(model_name("/"), None);
    }

    #[test]
    fn malformed_and_unsupported_configs_are_named() {
        let e = TransformerSpec::from_json("{not json", "x.json").unwrap_err().to_string();
        assert!(e.contains("x.json"), "{e}");
        let e = TransformerSpec::from_json(r#"{"model_type":"t5"}"#, "x").unwrap_err().to_string();
        assert!(e.starts_with("unsupported model x:") && e.contains("unsupported model_type 't5'"), "{e}");
        // A hybrid architecture is a known gap, not a broken file: the message names the layers.
        let e = TransformerSpec::from_json(r#"{"model_type":"nemotron_h"}"#, "x").unwrap_err().to_string();
        assert!(!e.contains("malformed") && e.contains("Mamba-2"), "{e}");
        // Python's json writes an infinite float as a bare Infinity: read, not called malformed.
        let e = TransformerSpec::from_json(r#"{"model_type":"nemotron_h","time_step_limit":[0.0,Infinity],"x":NaN,"s":"Infinity"}"#, "x").unwrap_err().to_string();
        assert!(!e.contains("malformed") && e.contains("Mamba-2"), "{e}");
        assert_eq!(parse_python_json(r#"{"a":-Infinity,"s":"NaN \" Infinity"}"#).unwrap(), serde_json::json!({"a": -f64::MAX, "s": "NaN \" Infinity"}));
        let e = TransformerSpec::from_json(r#"{"model_type":"gpt2","n_embd":"big"}"#, "x").unwrap_err().to_string();
        assert!(e.starts_with("malformed model config x:"), "{e}");
        assert!(e.contains("'n_embd' must be a positive integer"), "{e}");
        let e = TransformerSpec::from_json(r#"{"model_type":"gpt2","n_embd":0}"#, "x").unwrap_err().to_string();
        assert!(e.contains("at least 1"), "{e}");
        let e = TransformerSpec::from_json(r#"{"model_type":"llama","hidden_size":64}"#, "x").unwrap_err().to_string();
        assert!(e.contains("missing field 'num_attention_heads'"), "{e}");
    }

    /// A quantization method wavecast prices is the checkpoint's format with no note; one it
    /// does not (bitsandbytes, 8-bit GPTQ) is priced in 16 bits and says so, naming it.
    #[test]
    fn a_quantization_not_modelled_is_named_not_ignored() {
        let with = |q: &str| {
            let cfg = format!(r#"{{"model_type":"llama","hidden_size":64,"num_attention_heads":8,"num_hidden_layers":2,"intermediate_size":128,"vocab_size":100,"quantization_config":{q}}}"#);
            TransformerSpec::from_json(&cfg, "m").unwrap()
        };
        let fp8 = with(r#"{"quant_method":"fp8"}"#);
        assert_eq!((fp8.checkpoint_quant, fp8.quant_note()), (Some(Quant::Fp8), None));
        let awq = with(r#"{"quant_method":"awq","bits":4}"#);
        assert_eq!((awq.checkpoint_quant, awq.quant_note()), (Some(Quant::Int4), None));
        for (q, named) in [(r#"{"quant_method":"gptq","bits":8}"#, "'gptq 8-bit'"), (r#"{"quant_method":"bitsandbytes","load_in_4bit":true}"#, "'bitsandbytes'")] {
            let spec = with(q);
            assert_eq!(spec.checkpoint_quant, None);
            let note = spec.quant_note().expect("a note");
            assert!(note.contains(named) && note.contains("priced in 16 bits"), "{note}");
        }
    }

    #[test]
    fn gqa_must_divide_heads() {
        let cfg = r#"{"model_type":"llama","hidden_size":64,"num_attention_heads":8,"num_key_value_heads":3,
            "num_hidden_layers":2,"intermediate_size":128,"vocab_size":100}"#;
        assert!(TransformerSpec::from_json(cfg, "x").unwrap_err().to_string().contains("multiple"));
    }

    #[test]
    fn impossible_or_absurd_llama_configs_are_rejected_with_the_field() {
        let base = serde_json::json!({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 8,
            "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 100});
        let cases = [
            ("num_key_value_heads", serde_json::json!(0), "key/value heads"),
            ("head_dim", serde_json::json!(0), "head dimension"),
            ("num_hidden_layers", serde_json::json!(u64::MAX), "number of layers"),
            ("num_hidden_layers", serde_json::json!(1_000_000_000u64), "number of layers"),
            ("vocab_size", serde_json::json!(1u64 << 40), "vocabulary"),
            ("head_dim", serde_json::json!("wide"), "'head_dim' must be a non-negative integer"),
            ("num_key_value_heads", serde_json::json!(-2), "'num_key_value_heads'"),
        ];
        for (key, value, needle) in cases {
            let mut cfg = base.clone();
            cfg[key] = value;
            let e = TransformerSpec::from_json(&cfg.to_string(), "x").unwrap_err().to_string();
            assert!(e.contains(needle), "{key}: {e}");
        }
        let mut moe = base.clone();
        moe["model_type"] = "mixtral".into();
        moe["num_local_experts"] = 0.into();
        assert!(TransformerSpec::from_json(&moe.to_string(), "x").unwrap_err().to_string().contains("num_experts"));
        moe["num_local_experts"] = 8.into();
        moe["num_experts_per_tok"] = 9.into();
        assert!(TransformerSpec::from_json(&moe.to_string(), "x").unwrap_err().to_string().contains("top-k 9"));
        let mut nulls = base.clone();
        nulls["num_key_value_heads"] = serde_json::Value::Null;
        assert_eq!(TransformerSpec::from_json(&nulls.to_string(), "x").unwrap().kv_heads, 8, "null means the default");
    }

    /// Nemotron-4 15B (NVIDIA's report: 12.5 B non-embedding and 3.2 B embedding parameters):
    /// a non-gated squared-ReLU MLP with LayerNorm, counted from its config.
    #[test]
    fn nemotron_is_a_llama_shape_with_a_non_gated_mlp() {
        let cfg = serde_json::json!({"model_type": "nemotron", "hidden_size": 6144, "num_hidden_layers": 32,
            "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 24576,
            "vocab_size": 256000, "hidden_act": "relu2", "partial_rotary_factor": 0.5, "tie_word_embeddings": false});
        let spec = TransformerSpec::from_json(&cfg.to_string(), "nemotron4-15b").unwrap();
        assert_eq!(spec.activation, Activation::Relu);
        assert_eq!(spec.norm, NormKind::LayerNorm);
        let total = spec.params().total as f64;
        assert!((total / 15.7e9 - 1.0).abs() < 0.01, "{total}");
        let mut gelu = cfg.clone();
        gelu["hidden_act"] = "gelu".into();
        assert!(TransformerSpec::from_json(&gelu.to_string(), "x").unwrap_err().to_string().contains("hidden_act 'gelu'"));
    }

    /// GPT-2's activation follows Hugging Face's default (`gelu_new`, the Python-written tanh
    /// chain) unless the config names another; a name it does not model is refused by name.
    #[test]
    fn gpt2_activation_defaults_to_the_python_tanh_chain() {
        let with = |act: Option<&str>| {
            let mut cfg = serde_json::json!({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024});
            if let Some(a) = act {
                cfg["activation_function"] = a.into();
            }
            TransformerSpec::from_json(&cfg.to_string(), "gpt2").map(|s| s.activation)
        };
        assert_eq!(with(None).unwrap(), Activation::GeluTanhChain);
        assert_eq!(with(Some("gelu_new")).unwrap(), Activation::GeluTanhChain);
        assert_eq!(with(Some("gelu_pytorch_tanh")).unwrap(), Activation::Gelu);
        assert_eq!(with(Some("relu")).unwrap(), Activation::Relu);
        assert!(with(Some("swish")).unwrap_err().to_string().contains("\"swish\""));
    }
}
