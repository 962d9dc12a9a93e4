//! One schema for the modern-GPU measurements (AIConfigurator, Vidur, PipeWeave): what ran
//! (family, precision, shape, the kernel library that ran it), where (catalog GPU id), which
//! public source measured it, and how long it took.

use serde::{Deserialize, Serialize};
/// The one table of number formats lives in the IR; the readers name their rows' formats with it.
pub use wavecast_ir::Precision;

/// Who measured a row. Sources time differently (CUDA graphs or events, warm or cold caches,
/// one kernel or a whole op), so the source stays with every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Aiconfigurator,
    Vidur,
    Pipeweave,
    /// NeuSight's FP32 per-op microbenchmarks (PyTorch calls timed with CUDA events, host
    /// launch included).
    Neusight,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Aiconfigurator => "aiconfigurator",
            Source::Vidur => "vidur",
            Source::Pipeweave => "pipeweave",
            Source::Neusight => "neusight",
        }
    }
}

/// Collective operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    SendRecv,
}

impl Collective {
    pub fn as_str(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::AllToAll => "all_to_all",
            Collective::SendRecv => "send_recv",
        }
    }

    pub fn parse(name: &str) -> Option<Collective> {
        Some(match name.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "all_reduce" | "allreduce" => Collective::AllReduce,
            "all_gather" | "allgather" => Collective::AllGather,
            "reduce_scatter" | "reducescatter" => Collective::ReduceScatter,
            "alltoall" | "all_to_all" => Collective::AllToAll,
            "send_recv" | "sendrecv" | "p2p" => Collective::SendRecv,
            _ => return None,
        })
    }
}

/// The measured operation and its sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum Shape {
    /// (m × k) · (k × n): m tokens, n output features, k input features.
    Gemm { m: u64, n: u64, k: u64 },
    /// `batch` independent (m × k) · (k × n) products of activations (attention scores).
    Bmm { batch: u64, m: u64, n: u64, k: u64 },
    /// Prefill attention over `isl` new tokens per sequence (causal), after `past` cached ones.
    AttentionPrefill { batch: u64, isl: u64, past: u64, heads: u64, kv_heads: u64, head_dim: u64, window: u64, kv_precision: Precision },
    /// One decode step per sequence against `kv_len` cached tokens.
    AttentionDecode { batch: u64, kv_len: u64, heads: u64, kv_heads: u64, head_dim: u64, window: u64, kv_precision: Precision },
    /// A fused mixture-of-experts layer (router excluded): `tokens` routed to `topk` of
    /// `experts`, each an up (gated) and down projection, split over TP and EP. `gated`: whether
    /// the experts' up projection is gated (SwiGLU: 3·H·I weights; Nemotron 3's squared ReLU:
    /// 2·H·I), where known (a model's spec); `None` for measured rows, which do not say.
    Moe {
        tokens: u64,
        hidden: u64,
        inter: u64,
        topk: u64,
        experts: u64,
        tp: u64,
        ep: u64,
        balanced: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gated: Option<bool>,
    },
    /// DeepSeek-V3's multi-head latent attention with `heads` query heads on this GPU, over
    /// `isl` new tokens per sequence (context) or one (generation) after `kv_len` cached ones.
    /// `module`: the whole module (projections, norms, attention) is timed, else the attention
    /// kernel alone; the row's precision is then the projections' weight format, and
    /// `attention_precision` the attention math's.
    Mla { batch: u64, isl: u64, kv_len: u64, heads: u64, tp: u64, generation: bool, module: bool, kv_precision: Precision, attention_precision: Precision },
    /// The gated delta rule of a linear-attention layer (Qwen3.5's Gated DeltaNet) over
    /// `seq` new tokens of `batch` sequences, with `k_heads` query/key and `v_heads` value
    /// heads on this GPU: chunked over a prompt (`generation: false`), recurrent for one
    /// decoded token on top of a state (`generation: true`). The causal conv1d before it is
    /// not part of it.
    GatedDelta { batch: u64, seq: u64, k_heads: u64, v_heads: u64, head_k_dim: u64, head_v_dim: u64, generation: bool },
    /// A collective over `gpus` GPUs moving `bytes` per GPU.
    Collective { op: Collective, gpus: u64, bytes: u64, gpus_per_node: u64 },
    /// A memory-bound layer op (norm, activation, rotary embedding, residual add, embedding
    /// gather) over `tokens` × `width` elements.
    Vector { op: String, tokens: u64, width: u64 },
}

impl Shape {
    /// The family name reports group by: `gemm`, `attention_prefill`, `attention_decode`,
    /// `moe`, `mla`, `gated_delta_prefill`, `gated_delta_decode`, a collective's name, or the
    /// vector op's name.
    pub fn family(&self) -> String {
        self.family_name().to_string()
    }

    /// [`Shape::family`] without a copy (it is asked for every shape priced).
    pub fn family_name(&self) -> &str {
        match self {
            Shape::Gemm { .. } => "gemm",
            Shape::Bmm { .. } => "bmm",
            Shape::AttentionPrefill { .. } => "attention_prefill",
            Shape::AttentionDecode { .. } => "attention_decode",
            Shape::Moe { .. } => "moe",
            Shape::Mla { .. } => "mla",
            Shape::GatedDelta { generation: false, .. } => "gated_delta_prefill",
            Shape::GatedDelta { generation: true, .. } => "gated_delta_decode",
            Shape::Collective { op, .. } => op.as_str(),
            Shape::Vector { op, .. } => op,
        }
    }
}

impl std::fmt::Display for Shape {
    /// The sizes as `name=value` pairs (`m=16 n=4096 k=4096`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = serde_json::to_value(self).map_err(|_| std::fmt::Error)?;
        let pairs: Vec<String> = v.as_object().into_iter().flatten().filter(|(k, _)| *k != "family").map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect();
        f.write_str(&pairs.join(" "))
    }
}

/// One measured operation on one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub source: Source,
    /// Catalog id of the GPU (one identity across every source's naming).
    pub gpu: String,
    pub shape: Shape,
    pub precision: Precision,
    /// The library or kernel that ran it (`torch.nn.functional.linear`, `vllm_flash_attn_fa3`,
    /// `NCCL`, …), as the source names it.
    pub kernel_source: String,
    pub latency_ms: f64,
    /// File (and row) the measurement came from.
    pub provenance: String,
    /// The serving engine whose collection timed it, with its version (`vllm/0.24.0`,
    /// `sglang/0.5.14`, `trtllm/1.3.0rc20`): engines run different kernels for one shape. Empty
    /// where the kernel is the same whichever engine runs it (other sources, collectives).
    #[serde(default)]
    pub engine: String,
}

/// The engine whose tables answer when a query names none ([`wavecast_ir::Engine::DEFAULT`]).
pub const DEFAULT_ENGINE: &str = wavecast_ir::Engine::DEFAULT.name();

/// The vector family of a serving engine's own element-wise kernels: AIConfigurator times
/// one, the activation quantization before a low-precision GEMM (a 16-bit tensor read once,
/// its quantized copy written once), on every GPU and engine it covers. The operator graph's
/// memory-bound passes (norms, residual adds, activations, rotary embedding, copies) are
/// priced as this kernel over their bytes: the engine's library streams them at the same
/// bandwidth with the same cost per launch (the 2023 layer profiles Vidur measured, the
/// other vector families, run an older library's kernels at a third of the bandwidth on
/// H100: 1.1 TB/s for an RMSNorm of 4,096 × 8,192 against 2.9 TB/s for this kernel).
pub const STREAM: &str = "stream";

/// Bytes a vector shape moves per element of `tokens × width`: read once and written once in
/// 16 bits.
pub const VECTOR_ELEMENT_BYTES: f64 = 4.0;

impl Shape {
    /// The engine's streaming kernel ([`STREAM`]) moving `bytes`: a vector shape whose width
    /// moves as many bytes (at least one element).
    pub fn stream(bytes: f64) -> Shape {
        Shape::Vector { op: STREAM.into(), tokens: 1, width: (bytes / VECTOR_ELEMENT_BYTES).ceil().max(1.0) as u64 }
    }

    /// Bytes a vector shape of `tokens × width` elements moves.
    pub fn vector_bytes(tokens: u64, width: u64) -> f64 {
        tokens as f64 * width as f64 * VECTOR_ELEMENT_BYTES
    }
}

impl Timing {
    /// The engine's name without its version (`vllm`), empty when none timed it.
    pub fn engine_name(&self) -> &str {
        self.engine.split('/').next().unwrap_or_default()
    }
}

