//! A training step spread over many GPUs: the parallel layout (data, tensor, pipeline, context
//! and expert parallelism, ZeRO stage, micro-batches, recomputation), its checks against the
//! model, one GPU's operator graph for one micro-batch, and what that GPU must hold in memory.
//!
//! GPUs are ranked the way Megatron-LM orders its groups: tensor parallelism innermost (inside
//! a node), then context, then pipeline, then data parallelism outermost; expert parallelism is
//! carved out of the data-parallel GPUs. So the group a collective runs in spans nodes exactly
//! when its stride times its size exceeds the GPUs of one node ([`Layout::spans_nodes`]).

use crate::hf::{Activation, Arch, TransformerSpec};
use crate::transformer::{build, AttentionImpl, BuildOptions, Mode, Shard};
use crate::WorkloadError;
use serde::Serialize;
use wavecast_ir::ops::{OptimizerImpl, OptimizerKind};
use wavecast_ir::ops::{Elementwise, EwKind, GemmKind, NormKind, Op};
use wavecast_ir::{dim, DType, Graph, Phase, Quant, Role};

/// Which activations the backward pass recomputes instead of keeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recompute {
    /// Keep every activation.
    None,
    /// Recompute the attention core (scores, softmax, dropout) only: Korthikanti et al.'s
    /// selective recomputation, most of the memory for a few percent of the FLOPs.
    Selective,
    /// Keep only each layer's input and run the layer's forward pass again in backward.
    Full,
    /// torchtitan's op-level selective checkpointing: keep the attention kernel's output and
    /// every other matmul's output, recompute the other matmuls and every element-wise op and
    /// norm (its `selective op` AC; with a fused attention core Korthikanti's selective
    /// recomputation has nothing to drop, this does).
    SelectiveOp,
    /// torchtitan's layer-level selective checkpointing at its default frequency: every second
    /// layer is fully recomputed, the others keep everything (`selective layer` AC).
    SelectiveLayer,
}

/// Share of layers torchtitan's layer-level selective checkpointing recomputes (every second).
pub const SELECTIVE_LAYER_SHARE: f64 = 0.5;
/// Share of a layer's forward matmuls op-level selective checkpointing recomputes (every second).
pub const SELECTIVE_OP_MATMUL_SHARE: f64 = 0.5;

impl std::str::FromStr for Recompute {
    type Err = String;
    fn from_str(s: &str) -> Result<Recompute, String> {
        match s {
            "none" => Ok(Recompute::None),
            "selective" => Ok(Recompute::Selective),
            "full" => Ok(Recompute::Full),
            "selective-op" => Ok(Recompute::SelectiveOp),
            "selective-layer" => Ok(Recompute::SelectiveLayer),
            other => Err(format!("unknown recomputation '{other}' (none, selective, full, selective-op or selective-layer)")),
        }
    }
}

/// The most GPUs one training job may span: past any cluster built (about 200,000 GPUs in
/// 2025), so a typo of a few zeros is caught instead of priced.
pub const MAX_TRAINING_GPUS: u64 = 1 << 20;

/// One parallel layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Layout {
    pub dp: u64,
    pub tp: u64,
    pub pp: u64,
    pub cp: u64,
    /// Expert parallelism, within the data-parallel GPUs (MoE models only).
    pub ep: u64,
    /// 0: plain data parallelism; 1: optimizer states sharded; 2: and gradients; 3 (FSDP): and
    /// weights, gathered layer by layer when needed.
    pub zero: u8,
    /// Sequences per micro-batch on each data-parallel rank.
    pub micro_batch: u64,
    /// Model chunks per pipeline stage (interleaved 1F1B); 1 is plain 1F1B.
    pub interleave: u64,
    pub recompute: Recompute,
    pub sequence_parallel: bool,
}

impl Default for Layout {
    fn default() -> Layout {
        Layout { dp: 1, tp: 1, pp: 1, cp: 1, ep: 1, zero: 0, micro_batch: 1, interleave: 1, recompute: Recompute::None, sequence_parallel: false }
    }
}

impl Layout {
    pub fn gpus(&self) -> u64 {
        self.dp * self.tp * self.pp * self.cp
    }

    /// GPUs of a pipeline stage that hold the same experts: the stage's tp × cp × dp GPUs
    /// spread the experts over `ep` of them (expert tensor parallelism 1, as the training
    /// graph builds them: each tensor-parallel rank runs whole experts on its share of the
    /// tokens), so the experts' gradients are summed, and ZeRO shards their states, over the
    /// rest. Dense weights are shared by dp × cp.
    pub fn expert_data_parallel(&self) -> u64 {
        (self.tp * self.cp * self.dp / self.ep.max(1)).max(1)
    }

    /// Whether a group of `size` GPUs whose members are `stride` ranks apart leaves one node.
    pub fn spans_nodes(stride: u64, size: u64, gpus_per_node: u64) -> bool {
        size > 1 && stride.saturating_mul(size) > gpus_per_node
    }

    /// Stride of each group in the rank order TP → CP → DP → PP: Megatron-Core's default
    /// (`tp-cp-ep-dp-pp`, experts folded inside the data-parallel ranks) and torchtitan's device
    /// mesh (`pp, dp_replicate, dp_shard, cp, tp`, outermost first) both put pipeline stages
    /// outermost, so a node fills with tensor, context and data-parallel ranks (and the expert
    /// groups carved out of them) before a pipeline boundary crosses the network.
    pub fn strides(&self) -> GroupStrides {
        GroupStrides { tp: 1, cp: self.tp, dp: self.tp * self.cp, pp: self.tp * self.cp * self.dp }
    }

    /// A short label, e.g. `dp2·tp4·pp2 zero1 mb2 sel`.
    pub fn label(&self) -> String {
        let mut parts = vec![format!("dp{}", self.dp), format!("tp{}", self.tp), format!("pp{}", self.pp)];
        if self.cp > 1 {
            parts.push(format!("cp{}", self.cp));
        }
        if self.ep > 1 {
            parts.push(format!("ep{}", self.ep));
        }
        let mut s = parts.join("·");
        if self.interleave > 1 {
            s.push_str(&format!(" v{}", self.interleave));
        }
        if self.sequence_parallel && self.tp > 1 {
            s.push_str(" sp");
        }
        s.push_str(&format!(" zero{} mb{}", self.zero, self.micro_batch));
        match self.recompute {
            Recompute::None => {}
            Recompute::Selective => s.push_str(" recompute-sel"),
            Recompute::Full => s.push_str(" recompute-full"),
            Recompute::SelectiveOp => s.push_str(" recompute-op"),
            Recompute::SelectiveLayer => s.push_str(" recompute-layer"),
        }
        s
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupStrides {
    pub tp: u64,
    pub cp: u64,
    pub pp: u64,
    pub dp: u64,
}

/// How a training stack computes the language-model loss, which sets the vocabulary-wide
/// memory alive when backward starts (bytes per token and vocabulary entry, see
/// [`LossKernel::bytes_per_token_entry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LossKernel {
    /// Plain PyTorch: `F.cross_entropy` on the logits upcast to FP32, run eagerly.
    #[default]
    Eager,
    /// One fused loss kernel (torch.compile of the same function, or Transformer Engine's
    /// fused cross entropy): only the logits and their gradient, in the storage format.
    Fused,
    /// Megatron-Core's vocabulary-parallel cross entropy: the logits upcast to FP32 once and
    /// worked on in place (softmax and its gradient share that buffer).
    VocabParallel,
}

/// Peak bytes per token and vocabulary entry of eager PyTorch's cross entropy on the FP32
/// upcast of BF16 logits, measured on an H100 (`data/measurements/h100/physics/loss_memory.csv`,
/// `tools/collect/loss_memory.py`): the BF16 logits and FP32 tensors of their size alive
/// together in backward.
pub const EAGER_LOSS_BYTES_AT_BF16: f64 = 12.94;

impl LossKernel {
    /// Bytes per token and vocabulary entry alive at the loss's peak with logits stored in
    /// `storage_bytes`-byte elements. Eager: the measured 12.94 at BF16, i.e. the logits plus
    /// 10.94 bytes of FP32 work; fused: the logits and their gradient (measured 4.0 at BF16
    /// under torch.compile); vocabulary-parallel: the logits plus one FP32 buffer (counted from
    /// Megatron-Core's kernel, not measured).
    pub fn bytes_per_token_entry(self, storage_bytes: f64) -> f64 {
        match self {
            LossKernel::Eager => storage_bytes + (EAGER_LOSS_BYTES_AT_BF16 - 2.0),
            LossKernel::Fused => 2.0 * storage_bytes,
            LossKernel::VocabParallel => storage_bytes + 4.0,
        }
    }
}

/// The training software that runs the step, where it changes the step's time or memory. Not
/// part of a layout: the same layout runs differently under plain PyTorch and Megatron-Core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Stack {
    pub loss: LossKernel,
    /// Tensor-parallel all-gathers and reduce-scatters (sequence parallelism) pipelined with the
    /// GEMMs they feed or drain (Megatron-Core's `--tp-comm-overlap`, userbuffers): one chunk
    /// of `tp` stays exposed, the rest hides behind the layer's compute.
    pub tp_comm_overlap: bool,
    /// ZeRO-1/2's gather of the updated weights runs under the next step's first forward pass
    /// (Megatron-Core's `--overlap-param-gather`) instead of after the optimizer step.
    pub param_gather_overlap: bool,
    /// Gradient buckets are reduced while the last backward pass still runs (PyTorch DDP,
    /// FSDP, Megatron-Core); without it (Megatron-LM's 2021 local DDP) the whole reduction
    /// waits for the backward pass to end.
    pub grad_reduce_overlap: bool,
    /// How the attention core runs. `Auto` is the model's and format's default (eager for the
    /// FP32 GPT-2/OPT/BERT presets, fused otherwise); Megatron-LM before FlashAttention (2022)
    /// ran eager BMMs around its fused scale-mask-softmax and a dropout
    /// ([`AttentionImpl::EagerFusedSoftmax`]). Without a fused kernel the score matrix makes
    /// several trips through memory, and backward keeps the probabilities and dropout mask
    /// unless recomputed.
    pub attention: AttentionImpl,
    /// Eager PyTorch autograd (Hugging Face models as written, uncompiled): every op keeps what
    /// its own backward reads, so a layer keeps more than the fused kernels of Korthikanti et
    /// al.'s count ([`eager_autograd_extra_elements`]). Compiled and Megatron-style stacks fuse
    /// those ops and keep only the count's tensors.
    pub eager_autograd: bool,
    /// How the optimizer step runs: PyTorch's default `foreach` passes in plain PyTorch;
    /// fused (one kernel) in Megatron-Core (apex/Transformer Engine FusedAdam) and torchtitan
    /// (`fused` is its default implementation).
    pub optimizer: OptimizerImpl,
}

impl Stack {
    /// Plain PyTorch, eager: what `predict` and `plan train` assume.
    pub const EAGER: Stack = Stack { loss: LossKernel::Eager, tp_comm_overlap: false, param_gather_overlap: false, grad_reduce_overlap: true, attention: AttentionImpl::Auto, eager_autograd: true, optimizer: OptimizerImpl::Foreach };
    /// torch.compile'd stacks (torchtitan, torchao) and stacks with a fused loss kernel.
    pub const FUSED_LOSS: Stack = Stack { loss: LossKernel::Fused, eager_autograd: false, optimizer: OptimizerImpl::Fused, ..Stack::EAGER };
    /// Megatron-Core as NeMo and Megatron-Bridge run it: vocabulary-parallel loss, tensor- and
    /// data-parallel communication overlapped.
    pub const MEGATRON_CORE: Stack = Stack { loss: LossKernel::VocabParallel, tp_comm_overlap: true, param_gather_overlap: true, grad_reduce_overlap: true, attention: AttentionImpl::Auto, eager_autograd: false, optimizer: OptimizerImpl::Fused };
}

/// A training run: the global batch and sequence, formats, optimizer and layout.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    /// Sequences per optimizer step over all GPUs.
    pub global_batch: u64,
    pub seq: u64,
    /// Compute format (BF16/FP16 are mixed precision: FP32 master weights and optimizer states).
    /// FP8 is FP8 training as Transformer Engine and torchao run it: the transformer layers'
    /// GEMMs in FP8 with per-tensor scales, everything else (weights, activations, gradients,
    /// attention, norms, LM head) kept in BF16 — see [`TrainOptions::storage_dtype`].
    pub dtype: DType,
    pub optimizer: OptimizerKind,
    pub layout: Layout,
    /// The software running the step ([`Stack::EAGER`] unless a caller knows better).
    pub stack: Stack,
    /// A power limit (W) the GPUs run under, below their board power (`--power-limit`); `None`:
    /// the board power, which the measured kernel tables ran at.
    pub power_limit_w: Option<f64>,
}

/// `Ok` if `spec` can train on sequences of `seq` tokens in some layout: a decoder stack (the
/// layout route models no encoder-decoder), within its learned positions.
pub fn check_trainable(spec: &TransformerSpec, seq: u64) -> Result<(), WorkloadError> {
    if spec.encdec.is_some() {
        return Err(WorkloadError::Invalid(format!("parallel training of encoder-decoder models ({}) is not modelled", spec.name)));
    }
    crate::transformer::check_positions(spec, seq)
}

impl TrainOptions {
    /// Checks the layout against the model and the GPUs available, with one line saying what
    /// does not fit together. `gpus` is the count the user has, when given.
    pub fn validate(&self, spec: &TransformerSpec, gpus: Option<u64>) -> Result<Shard, WorkloadError> {
        let l = &self.layout;
        for (what, v) in [("data-parallel degree", l.dp), ("pipeline-parallel degree", l.pp), ("context-parallel degree", l.cp), ("expert-parallel degree", l.ep), ("micro-batch", l.micro_batch), ("interleave", l.interleave)] {
            dim(what, v)?;
        }
        dim("global batch", self.global_batch)?;
        dim("sequence length", self.seq)?;
        let invalid = |m: String| Err(WorkloadError::Invalid(m));
        check_trainable(spec, self.seq)?;
        let total = [l.dp, l.tp, l.pp, l.cp].iter().fold(1u64, |a, &d| a.saturating_mul(d));
        if total > MAX_TRAINING_GPUS {
            return invalid(format!("{total} GPUs (dp × tp × pp × cp) is past the {MAX_TRAINING_GPUS} wavecast models; the largest clusters built hold about 200,000"));
        }
        let shard = Shard::new(spec, l.tp)?;
        if l.zero > 3 {
            return invalid(format!("ZeRO stage {} does not exist (0, 1, 2 or 3)", l.zero));
        }
        // The embedding and the loss may take a chunk's place each (Megatron's
        // --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split):
        // Llama 3.1 405B's 126 layers run as 16 stages × 8 chunks.
        let chunks = l.pp.saturating_mul(l.interleave);
        if chunks > spec.layers + 2 {
            return invalid(format!(
                "{} pipeline stages × {} chunks need at least {} layers (the embedding and the loss count as one each); the model has {}",
                l.pp,
                l.interleave,
                chunks - 2,
                spec.layers
            ));
        }
        if l.interleave > 1 && l.pp == 1 {
            return invalid("interleaved chunks need pipeline parallelism (--pp 2 or more)".into());
        }
        if !self.seq.is_multiple_of(l.cp.max(1)) || l.cp == 0 {
            return invalid(format!("context parallelism {} does not divide the sequence length {}", l.cp, self.seq));
        }
        // Causal context parallelism balances the mask's work by giving each rank two of 2·cp
        // chunks, one from each end (Megatron-Core, Transformer Engine, torchtitan).
        if spec.causal && l.cp > 1 && !self.seq.is_multiple_of(2 * l.cp) {
            return invalid(format!("causal context parallelism cuts the sequence into 2 × cp = {} chunks, which do not divide the sequence length {}", 2 * l.cp, self.seq));
        }
        if l.sequence_parallel && l.tp > 1 && !(self.seq / l.cp).is_multiple_of(l.tp) {
            return invalid(format!("sequence parallelism needs the sequence share {} divisible by tensor parallelism {}", self.seq / l.cp, l.tp));
        }
        crate::transformer::check_expert_parallel(spec, l.ep)?;
        // Megatron-Core's MoE parallel folding: the expert-parallel group is carved out of the
        // tensor-, context- and data-parallel ranks of a pipeline stage (expert tensor
        // parallelism 1).
        let folded = l.tp * l.cp * l.dp;
        if l.ep > 1 && !folded.is_multiple_of(l.ep) {
            return invalid(format!("expert parallelism {} must divide tp × cp × dp = {folded} (the GPUs of a pipeline stage the experts are spread over)", l.ep));
        }
        let per_step = l.dp.saturating_mul(l.micro_batch);
        if !self.global_batch.is_multiple_of(per_step) {
            return invalid(format!(
                "global batch {} is not a multiple of data parallelism {} × micro-batch {}",
                self.global_batch, l.dp, l.micro_batch
            ));
        }
        if l.interleave > 1 && !self.micro_batches().is_multiple_of(l.pp) {
            return invalid(format!("interleaved pipelining needs the {} micro-batches to be a multiple of the {} stages", self.micro_batches(), l.pp));
        }
        if let Some(have) = gpus {
            if l.gpus() != have {
                return invalid(format!(
                    "the layout uses dp {} × tp {} × pp {} × cp {} = {} GPUs but {have} are given",
                    l.dp, l.tp, l.pp, l.cp, l.gpus()
                ));
            }
        }
        Ok(shard)
    }

    /// The format weights, gradients and activations are held and sent in: BF16 under FP8
    /// training (FP8 copies are made per GEMM and not kept), else the compute format.
    pub fn storage_dtype(&self) -> DType {
        if self.dtype == DType::Fp8 {
            DType::Bf16
        } else {
            self.dtype
        }
    }

    /// Micro-batches each pipeline runs per step (gradient accumulation steps).
    pub fn micro_batches(&self) -> u64 {
        self.global_batch / (self.layout.dp * self.layout.micro_batch).max(1)
    }

    /// One GPU's operators for one micro-batch, forward and backward, over every layer (the
    /// pipeline split happens when the graph is priced); no optimizer step. With one GPU and one
    /// micro-batch it is the single-GPU training graph less its optimizer step.
    pub fn micro_batch_graph(&self, spec: &TransformerSpec) -> Result<Graph, WorkloadError> {
        let l = &self.layout;
        // Training mode: dropout and the loss, as the single-GPU step builds them; the optimizer
        // step is the schedule's, so the builder's is dropped.
        let mut o = BuildOptions::new(l.micro_batch, self.seq / l.cp, Mode::Training, self.storage_dtype());
        if self.dtype == DType::Fp8 {
            o.quant = Some(Quant::Fp8);
        }
        o.tp = l.tp;
        o.cp = l.cp;
        o.ep = l.ep;
        o.sequence_parallel = l.sequence_parallel;
        o.attention = self.stack.attention;
        let mut g = build(spec, &o)?;
        g.nodes.retain(|n| n.phase != Phase::Optimizer);
        if self.dtype == DType::Fp8 {
            add_fp8_casts(&mut g);
        }
        Ok(g)
    }

    /// Bytes of the activations one layer keeps for backward, per micro-batch, on one GPU
    /// (Korthikanti et al. 2022, Table 2, generalised to the model's widths and formats).
    pub fn layer_activation_bytes(&self, spec: &TransformerSpec) -> f64 {
        layer_activation_bytes(spec, self)
    }
}

/// Korthikanti et al.'s per-layer count, term by term, so GQA, SwiGLU, FP32 and flash attention
/// change it where they change the tensors: with s tokens per sequence, b sequences, h hidden,
/// a heads, f MLP width, d bytes per element (masks take one byte), one layer keeps
/// - attention: its input (s·b·h), Q, K, V, the output projection's input, and unless the
///   attention core is fused or recomputed the softmax output and dropout (a·s²·b·(2d+1)/d);
/// - MLP: its input, fc1's output, the activation's output (f wide; SwiGLU keeps gate and up);
/// - two norm inputs and two dropout masks (one byte each) when the model uses dropout.
///
/// For GPT-3-style models in 16 bits that is s·b·h·(34 + 5·a·s/h), the paper's figure.
/// Tensor parallelism divides what lives inside the attention and MLP blocks; the norms'
/// inputs, dropout masks and the blocks' inputs are split only with sequence parallelism.
fn layer_activation_bytes(spec: &TransformerSpec, o: &TrainOptions) -> f64 {
    let l = &o.layout;
    match l.recompute {
        Recompute::SelectiveLayer => {
            let with = |recompute| {
                let mut o = o.clone();
                o.layout.recompute = recompute;
                layer_activation_bytes(spec, &o)
            };
            let share = SELECTIVE_LAYER_SHARE;
            return share * with(Recompute::Full) + (1.0 - share) * with(Recompute::None);
        }
        Recompute::SelectiveOp => return selective_op_layer_bytes(spec, o),
        _ => {}
    }
    let d = o.storage_dtype().size_bytes() as f64;
    let (s, b, h) = ((o.seq / l.cp) as f64, l.micro_batch as f64, spec.hidden as f64);
    let t = l.tp as f64;
    let sbh = s * b * h;
    if l.recompute == Recompute::Full {
        // Only the layer's input; the rest is rebuilt one layer at a time.
        return sbh * d / if l.sequence_parallel { t } else { 1.0 };
    }
    let q = (spec.heads * spec.head_dim) as f64;
    let kv = (spec.kv_heads * spec.head_dim) as f64;
    let f = spec.ffn as f64;
    let dropout = spec.arch != Arch::Llama;
    let mask = if dropout { 1.0 } else { 0.0 };
    // FP8 training (Transformer Engine's linears): a GEMM keeps its input for the weight
    // gradient as the FP8 copy it cast in forward, one byte, not the BF16 tensor — the QKV and
    // fc1 inputs (the norms' outputs) and fc2's input. The output projection's input is also
    // fused attention's output, which the kernel's backward reads in BF16: it keeps both.
    let fp8 = o.dtype == DType::Fp8;
    let gemm_input = if fp8 { 1.0 } else { d };
    let projection_input = if fp8 { d + 1.0 } else { d };
    // Sharded by tensor parallelism: Q, K, V, the projection input, the MLP's inner tensors
    // (fc1's outputs, which the activation's backward reads, and fc2's input).
    let fc1_outputs = if spec.activation == Activation::SwiGlu { 2.0 * f } else { f };
    let inner = s * b * ((q + 2.0 * kv + fc1_outputs) * d + q * projection_input + f * gemm_input);
    let fused_core = o.stack.attention.fused_for(spec, o.storage_dtype());
    let scores = if fused_core || l.recompute == Recompute::Selective {
        0.0
    } else {
        // Softmax output, its dropout mask and dropout output.
        (spec.heads as f64) * s * (s * l.cp as f64) * b * (d + mask * (1.0 + d))
    };
    // Replicated unless sequence-parallel: block inputs (attention, MLP: the QKV and fc1
    // GEMMs' inputs), norm inputs, masks.
    let mut outer = sbh * (2.0 * gemm_input + 2.0 * d + 2.0 * mask);
    let mut inner = inner;
    if o.stack.eager_autograd {
        let extra = eager_autograd_extra_elements(spec, fused_core);
        inner += s * b * extra.inner * d;
        outer += sbh * extra.norm_fp32_copies * (4.0 - d).max(0.0);
    }
    let outer_share = if l.sequence_parallel { 1.0 / t } else { 1.0 };
    (inner + scores) / t + outer * outer_share
}

/// What eager autograd keeps per token of a layer beyond Korthikanti et al.'s count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EagerExtra {
    /// Elements (in the storage format) inside the attention and MLP blocks.
    pub inner: f64,
    /// Norms whose input is kept as an FP32 copy rather than in the storage format.
    pub norm_fp32_copies: f64,
}

/// The tensors Hugging Face's modelling code keeps under eager autograd that fused kernels do
/// not (each follows from which inputs a PyTorch op saves for its backward; checked against the
/// memory measured on an H100, `bench/data/h100_device/memory_parts.json`: Llama-3.2-1B keeps
/// 34 KB more per token and layer than the count, GPT-2 large with SDPA 56):
/// - SDPA's backward reads its output, and the output projection reads a contiguous copy of it:
///   the attention output is kept twice (`q` wide).
/// - Grouped-query attention repeats K and V to every head (`repeat_kv`) before the kernel,
///   which keeps the repeated copies: `2(q − kv)` more.
/// - SwiGLU's product keeps both factors, so the SiLU output (`f`) is kept besides gate and up.
/// - GPT-2's Python-written tanh GELU keeps three `f`-wide tensors (the tanh, and both factors
///   of its last product).
/// - RMSNorm upcasts its input to FP32 and keeps that copy (two norms per layer).
pub fn eager_autograd_extra_elements(spec: &TransformerSpec, fused_core: bool) -> EagerExtra {
    let q = (spec.heads * spec.head_dim) as f64;
    let kv = (spec.kv_heads * spec.head_dim) as f64;
    let f = spec.ffn as f64;
    let output_twice = if fused_core { q } else { 0.0 };
    let repeated_kv = 2.0 * (q - kv).max(0.0);
    let activation = match spec.activation {
        Activation::SwiGlu => f,
        Activation::GeluTanhChain => 3.0 * f,
        Activation::Gelu | Activation::Relu => 0.0,
    };
    let norm_fp32_copies = if spec.norm == NormKind::RmsNorm { 2.0 } else { 0.0 };
    EagerExtra { inner: output_twice + repeated_kv + activation, norm_fp32_copies }
}

/// What op-level selective checkpointing keeps per layer: the layer's input (where recomputation
/// starts), the attention kernel's output and every other matmul's output (half of the widths
/// the layer's linears write: Q, K, V, the output projection, the MLP's inner and outer
/// projections). Tensor parallelism splits what lives inside the blocks; the input is split only
/// with sequence parallelism.
fn selective_op_layer_bytes(spec: &TransformerSpec, o: &TrainOptions) -> f64 {
    let l = &o.layout;
    let d = o.storage_dtype().size_bytes() as f64;
    let (s, b, h) = ((o.seq / l.cp) as f64, l.micro_batch as f64, spec.hidden as f64);
    let t = l.tp as f64;
    let q = (spec.heads * spec.head_dim) as f64;
    let kv = (spec.kv_heads * spec.head_dim) as f64;
    let f = spec.ffn as f64;
    let mlp_inner = if spec.activation == Activation::SwiGlu { 2.0 * f } else { f };
    let linear_outputs = q + 2.0 * kv + h + mlp_inner + h;
    let inner = s * b * (q + SELECTIVE_OP_MATMUL_SHARE * linear_outputs) * d;
    let input = s * b * h * d / if l.sequence_parallel { t } else { 1.0 };
    inner / t + input
}

/// FP8 training's extra passes (Transformer Engine's per-tensor recipe): before each FP8 GEMM
/// its BF16 operands are cast to FP8 with their absolute maximum taken for the next scale — in
/// forward the input and the weight, in backward the output gradient, each cast also writing
/// the transposed copy the other backward GEMM reads. Each cast reads 2 bytes and writes 2 (the
/// FP8 tensor and its transpose) per element; the amax rides in the same kernel.
fn add_fp8_casts(g: &mut Graph) {
    let mut casts: Vec<(String, Phase, u64, u64, Role)> = Vec::new();
    for n in &g.nodes {
        let Op::Gemm(gemm) = &n.op else { continue };
        if gemm.quant != Some(Quant::Fp8) || gemm.kind != GemmKind::Linear {
            continue;
        }
        let elements: Vec<u64> = match n.phase {
            // The input (with its transpose, for the weight gradient) and the weight.
            Phase::Forward => vec![gemm.m * gemm.k, gemm.k * gemm.n],
            // The output gradient, once: dX = dY·Wᵀ (autograd's first gradient GEMM, m×k by
            // k×n with k the forward's output width) reads it, and the weight gradient reuses it.
            Phase::Backward if n.name.ends_with(".grad0") => vec![gemm.m * gemm.k],
            _ => vec![],
        };
        casts.extend(elements.into_iter().map(|e| (format!("{}.fp8_cast", n.name), n.phase, n.repeat, e, n.role)));
    }
    // A BF16 copy moves the same 4 bytes per element as a cast that writes FP8 twice.
    for (name, phase, repeat, elements, role) in casts {
        g.push_in(role, name, Op::Elementwise(Elementwise { kind: EwKind::Copy, elements, tensor_inputs: 1, dtype: DType::Bf16 }), phase, repeat);
    }
}

/// What one GPU holds during a step, in bytes (the most loaded pipeline stage).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TrainMemory {
    pub weights: f64,
    pub gradients: f64,
    pub optimizer_states: f64,
    pub master_weights: f64,
    pub activations: f64,
    /// Gradient buckets, gathered ZeRO-3 layers and the CUDA context and allocator slack.
    pub buffers: f64,
}

impl std::ops::Add for TrainMemory {
    type Output = TrainMemory;

    fn add(self, o: TrainMemory) -> TrainMemory {
        TrainMemory {
            weights: self.weights + o.weights,
            gradients: self.gradients + o.gradients,
            optimizer_states: self.optimizer_states + o.optimizer_states,
            master_weights: self.master_weights + o.master_weights,
            activations: self.activations + o.activations,
            buffers: self.buffers + o.buffers,
        }
    }
}

impl TrainMemory {
    pub fn total(&self) -> f64 {
        self.weights + self.gradients + self.optimizer_states + self.master_weights + self.activations + self.buffers
    }

    /// Every part in units of `unit` bytes (GB: 1e9).
    pub fn in_units(&self, unit: f64) -> TrainMemory {
        TrainMemory {
            weights: self.weights / unit,
            gradients: self.gradients / unit,
            optimizer_states: self.optimizer_states / unit,
            master_weights: self.master_weights / unit,
            activations: self.activations / unit,
            buffers: self.buffers / unit,
        }
    }
}

/// Runtime memory outside the model: CUDA context, cuBLAS/NCCL workspaces.
pub const RUNTIME_OVERHEAD_BYTES: f64 = 1.5e9;

/// What PyTorch's caching allocator holds beyond the tensors alive at the peak (blocks split
/// and cached for later requests), as a share of them: measured at the peak of training steps
/// on an H100 (`bench/data/h100_device/memory.json`, reserved over allocated) 5.2 % for
/// Llama-3.2-1B under autocast, 4.3 % for GPT-2 large with SDPA, 0.3 % for GPT-2 large eager.
/// The largest is taken: a set-up must not be said to fit when the allocator's cache tips it over.
pub const ALLOCATOR_SLACK: f64 = 0.05;

/// Model-state bytes per GPU for `params` parameters held by this GPU (its pipeline stage's
/// share, already divided by tensor parallelism), with ZeRO dividing them by `dp` (ZeRO paper,
/// §5: stage 1 shards optimizer states, 2 adds gradients, 3 adds weights). Mixed precision
/// keeps FP32 master weights next to the 16-bit ones; FP32 training needs none.
pub fn model_state_bytes(params: f64, dtype: DType, optimizer: OptimizerKind, zero: u8, dp: u64) -> TrainMemory {
    let d = dtype.size_bytes() as f64;
    let shard = |stage: u8| if zero >= stage { dp as f64 } else { 1.0 };
    let master = if d < 4.0 { 4.0 } else { 0.0 };
    TrainMemory {
        weights: params * d / shard(3),
        gradients: params * d / shard(2),
        optimizer_states: params * 4.0 * optimizer.states_per_param() as f64 / shard(1),
        master_weights: params * master / shard(1),
        activations: 0.0,
        buffers: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpt3_like() -> TransformerSpec {
        let cfg = r#"{"model_type":"gpt2","n_embd":12288,"n_layer":96,"n_head":96,"vocab_size":51200,"n_positions":2048}"#;
        TransformerSpec::from_json(cfg, "gpt3-175b").unwrap()
    }

    /// Options whose memory is the fused-kernel count (Korthikanti et al.); eager autograd's
    /// extra tensors have their own test.
    fn opts(layout: Layout) -> TrainOptions {
        let stack = Stack { eager_autograd: false, ..Stack::EAGER };
        TrainOptions { global_batch: 64, seq: 2048, dtype: DType::Bf16, optimizer: OptimizerKind::Adam, layout, stack, power_limit_w: None }
    }

    #[test]
    fn zero_stages_match_the_zero_paper_figure_1() {
        // 7.5 B parameters, Adam (K = 12), 64 GPUs: 120, 31.4, 16.6 and 1.88 GB.
        let gb = |z| model_state_bytes(7.5e9, DType::Bf16, OptimizerKind::Adam, z, 64).total() / 1e9;
        assert!((gb(0) - 120.0).abs() < 1e-9);
        assert!((gb(1) - 31.40625).abs() < 1e-9);
        assert!((gb(2) - 16.640625).abs() < 1e-9);
        assert!((gb(3) - 1.875).abs() < 1e-9);
    }

    #[test]
    fn activations_follow_korthikanti_table_2() {
        let spec = gpt3_like();
        // GPT-3 trains with dropout and eager attention in the paper; FP16 with unfused scores.
        let mut o = opts(Layout { tp: 8, ..Layout::default() });
        o.dtype = DType::Fp16;
        let (s, b, h, a, t) = (2048.0, 1.0, 12288.0, 96.0, 8.0);
        let sbh = s * b * h;
        // Our builder fuses attention for FP16, so compare the fused form: sbh(10 + 24/t).
        let expect = sbh * (10.0 + 24.0 / t);
        let got = o.layer_activation_bytes(&spec);
        assert!((got / expect - 1.0).abs() < 1e-9, "{got} vs {expect}");
        // Unfused FP32 scores add 5as/(ht)·sbh at 2 bytes; at 4 bytes the same terms scale.
        o.dtype = DType::Fp32;
        let fp32 = o.layer_activation_bytes(&spec);
        let fp32_expect = sbh * (18.0 + 48.0 / t) + a * s * s * b * (4.0 + 5.0) / t;
        assert!((fp32 / fp32_expect - 1.0).abs() < 1e-9, "{fp32} vs {fp32_expect}");
        o.dtype = DType::Fp16;
        o.layout.sequence_parallel = true;
        assert!((o.layer_activation_bytes(&spec) / (sbh * 34.0 / t) - 1.0).abs() < 1e-9);
        o.layout.recompute = Recompute::Full;
        assert!((o.layer_activation_bytes(&spec) / (2.0 * sbh / t) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn unfused_attention_keeps_the_scores_korthikanti_counts() {
        // Megatron-LM before FlashAttention, FP16, tensor-parallel without sequence parallelism:
        // Korthikanti et al.'s Table 2 row, sbh(10 + 24/t + 5as/(ht)).
        let spec = gpt3_like();
        let mut o = opts(Layout { tp: 8, ..Layout::default() });
        o.dtype = DType::Fp16;
        o.stack.attention = AttentionImpl::EagerFusedSoftmax;
        let (s, b, h, a, t) = (2048.0, 1.0, 12288.0, 96.0, 8.0);
        let expect = s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
        let got = o.layer_activation_bytes(&spec);
        assert!((got / expect - 1.0).abs() < 1e-9, "{got} vs {expect}");
    }

    #[test]
    fn unfused_attention_runs_bmms_around_one_scale_mask_softmax() {
        let spec = TransformerSpec { layers: 2, ..gpt3_like() };
        let o = opts(Layout::default());
        let names = |g: &Graph| g.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>();
        let flash = o.micro_batch_graph(&spec).unwrap();
        assert!(flash.nodes.iter().any(|n| matches!(n.op, Op::Attention(_))));
        let unfused = TrainOptions { stack: Stack { attention: AttentionImpl::EagerFusedSoftmax, ..Stack::EAGER }, ..o.clone() }.micro_batch_graph(&spec).unwrap();
        assert!(!unfused.nodes.iter().any(|n| matches!(n.op, Op::Attention(_))));
        let unfused_names = names(&unfused);
        for kernel in ["scores", "softmax", "attn_probs_dropout", "context"] {
            assert!(unfused_names.iter().any(|n| n.contains(kernel)), "no {kernel} in {unfused_names:?}");
        }
        // Scale and mask are inside the softmax kernel: no separate trips over the scores.
        assert!(!unfused_names.iter().any(|n| n.contains("scale") || n.contains("mask")), "{unfused_names:?}");
        let bytes = |g: &Graph| g.nodes.iter().map(|n| n.op.bytes() * n.repeat as f64).sum::<f64>();
        assert!(bytes(&unfused) > bytes(&flash));
    }

    #[test]
    fn torchtitan_selective_checkpointing_keeps_what_its_policies_save() {
        // A Llama-2-70B-like layer (GQA, SwiGLU, no dropout) in BF16, no tensor parallelism.
        let spec = TransformerSpec { heads: 64, kv_heads: 8, head_dim: 128, hidden: 8192, ffn: 28672, arch: Arch::Llama, activation: Activation::SwiGlu, ..gpt3_like() };
        let mut o = opts(Layout::default());
        o.dtype = DType::Bf16;
        o.seq = 4096;
        let bytes = |o: &TrainOptions, r| {
            let mut o = o.clone();
            o.layout.recompute = r;
            o.layer_activation_bytes(&spec)
        };
        let sbh = 4096.0 * 8192.0 * 2.0;
        // Op-level: the input, the attention output and half of Q, K, V, O, gate, up, down.
        let saved = 1.0 + 1.0 + 0.5 * (1.0 + 0.25 + 1.0 + 2.0 * 3.5 + 1.0);
        assert!((bytes(&o, Recompute::SelectiveOp) / (sbh * saved) - 1.0).abs() < 1e-9);
        // Layer-level: every second layer keeps only its input, the others everything.
        let half = 0.5 * (bytes(&o, Recompute::Full) + bytes(&o, Recompute::None));
        assert!((bytes(&o, Recompute::SelectiveLayer) / half - 1.0).abs() < 1e-9);
        assert!(bytes(&o, Recompute::SelectiveOp) < 0.5 * bytes(&o, Recompute::None));
        assert_eq!("selective-op".parse::<Recompute>(), Ok(Recompute::SelectiveOp));
        assert_eq!("selective-layer".parse::<Recompute>(), Ok(Recompute::SelectiveLayer));
    }

    #[test]
    fn nonsense_layouts_are_named() {
        let spec = gpt3_like();
        let e = |l: Layout| opts(l).validate(&spec, None).unwrap_err().to_string();
        assert!(e(Layout { tp: 7, ..Layout::default() }).contains("does not divide the model's 96 attention heads"));
        assert!(e(Layout { pp: 99, ..Layout::default() }).contains("need at least 97 layers"));
        // 96 layers with the embedding and the loss in chunks of their own fill 98 stages.
        assert!(opts(Layout { pp: 98, dp: 1, ..Layout::default() }).validate(&spec, None).is_ok());
        assert!(e(Layout { dp: 3, ..Layout::default() }).contains("global batch 64 is not a multiple"));
        assert!(e(Layout { ep: 2, dp: 2, ..Layout::default() }).contains("no experts"));
        assert!(e(Layout { zero: 4, ..Layout::default() }).contains("ZeRO stage 4"));
        assert!(e(Layout { cp: 3, ..Layout::default() }).contains("context parallelism 3"));
        let mut short = opts(Layout { cp: 2, ..Layout::default() });
        short.seq = 6;
        assert!(short.validate(&spec, None).unwrap_err().to_string().contains("2 × cp = 4 chunks"));
        short.seq = 8;
        assert!(short.validate(&spec, None).is_ok());
        let l = Layout { dp: 2, tp: 8, pp: 4, ..Layout::default() };
        let msg = opts(l).validate(&spec, Some(32)).unwrap_err().to_string();
        assert!(msg.contains("= 64 GPUs but 32 are given"), "{msg}");
        assert!(opts(l).validate(&spec, Some(64)).is_ok());
    }

    /// Megatron-Core's MoE parallel folding: expert parallelism divides tp × cp × dp, not dp
    /// alone (Qwen3-235B-A22B at tp2·dp32·ep64 ran); a degree that does not divide is named.
    #[test]
    fn expert_parallelism_folds_over_tensor_context_and_data_ranks() {
        let cfg = r#"{"model_type":"qwen3_moe","hidden_size":512,"num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":4,"intermediate_size":1024,"moe_intermediate_size":256,"num_experts":128,"num_experts_per_tok":8,"vocab_size":1000}"#;
        let spec = TransformerSpec::from_json(cfg, "tiny-moe").unwrap();
        let o = |l: Layout| TrainOptions { global_batch: 64, seq: 256, dtype: DType::Bf16, optimizer: OptimizerKind::Adam, layout: l, stack: Stack::EAGER, power_limit_w: None };
        assert!(o(Layout { tp: 2, dp: 32, ep: 64, sequence_parallel: true, ..Layout::default() }).validate(&spec, Some(64)).is_ok());
        assert!(o(Layout { tp: 2, cp: 2, dp: 16, ep: 64, sequence_parallel: true, ..Layout::default() }).validate(&spec, Some(64)).is_ok());
        let e = o(Layout { tp: 2, dp: 16, ep: 64, ..Layout::default() }).validate(&spec, Some(32)).unwrap_err().to_string();
        assert!(e.contains("must divide tp × cp × dp = 32"), "{e}");
    }

    #[test]
    fn groups_span_nodes_by_stride() {
        let l = Layout { dp: 4, tp: 8, pp: 2, ..Layout::default() };
        let s = l.strides();
        assert!(!Layout::spans_nodes(s.tp, l.tp, 8));
        assert!(Layout::spans_nodes(s.pp, l.pp, 8));
        assert!(Layout::spans_nodes(s.dp, l.dp, 8));
        // Pipeline stages outermost: with tp1, eight data-parallel ranks share a node and the
        // stages are a node apart.
        let l = Layout { dp: 8, tp: 1, pp: 8, ..Layout::default() };
        let s = l.strides();
        assert!(!Layout::spans_nodes(s.dp, l.dp, 8));
        assert_eq!(s.pp, 8);
        assert!(Layout::spans_nodes(s.pp, l.pp, 8));
        assert!(!Layout::spans_nodes(s.dp, 1, 8));
        assert!(!Layout::spans_nodes(2, 4, 8));
    }

    /// A two-layer Llama (h 512, f 1024, 8 heads) small enough to count its bytes by hand.
    fn tiny_llama() -> TransformerSpec {
        let cfg = r#"{"model_type":"llama","hidden_size":512,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":8,"intermediate_size":1024,"vocab_size":1000,"max_position_embeddings":256}"#;
        TransformerSpec::from_json(cfg, "tiny").unwrap()
    }

    /// FP8 training keeps the FP8 copies its GEMMs cast as their saved inputs: per token of a
    /// Llama layer (h 512, f 1024, no tensor parallelism) BF16 keeps Q, K, V, the projection's
    /// input (4h), gate and up (2f), fc2's input (f) and four h-wide block and norm inputs at 2
    /// bytes; FP8 keeps the QKV and fc1 inputs and fc2's input at 1 byte and the projection's
    /// input twice (BF16 for attention's backward, FP8 for the GEMM).
    #[test]
    fn fp8_training_keeps_the_fp8_copies_of_gemm_inputs() {
        let spec = tiny_llama();
        let mut o = opts(Layout::default());
        o.seq = 128;
        let (h, f, tokens) = (512.0, 1024.0, 128.0);
        o.dtype = DType::Bf16;
        assert_eq!(o.layer_activation_bytes(&spec), tokens * (4.0 * h * 2.0 + 3.0 * f * 2.0 + 4.0 * h * 2.0));
        o.dtype = DType::Fp8;
        let fp8 = tokens * (3.0 * h * 2.0 + h * 3.0 + 2.0 * f * 2.0 + f * 1.0 + 2.0 * h * 1.0 + 2.0 * h * 2.0);
        assert_eq!(o.layer_activation_bytes(&spec), fp8);
    }

    /// Eager autograd keeps, per token of a grouped-query Llama layer (h 512, 8 query heads and
    /// 2 KV heads of 64, f 1024, BF16), the attention output a second time (q = 512), K and V
    /// repeated to every head (2 · (512 − 128)), the SiLU output (f) and the two RMSNorms' FP32
    /// input copies (2 more bytes each per h) beyond the fused-kernel count; GPT-2's tanh chain
    /// keeps three f-wide tensors.
    #[test]
    fn eager_autograd_keeps_what_each_pytorch_op_saves() {
        let cfg = r#"{"model_type":"llama","hidden_size":512,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"intermediate_size":1024,"vocab_size":1000,"max_position_embeddings":256}"#;
        let spec = TransformerSpec::from_json(cfg, "tiny-gqa").unwrap();
        let mut o = opts(Layout::default());
        o.seq = 128;
        let fused = o.layer_activation_bytes(&spec);
        o.stack.eager_autograd = true;
        let (h, q, kv, f, tokens) = (512.0, 512.0, 128.0, 1024.0, 128.0);
        let extra = tokens * ((q + 2.0 * (q - kv) + f) * 2.0 + 2.0 * h * 2.0);
        assert_eq!(o.layer_activation_bytes(&spec) - fused, extra);
        let gpt2 = TransformerSpec::from_json(r#"{"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"vocab_size":50257,"n_positions":1024}"#, "gpt2").unwrap();
        let e = eager_autograd_extra_elements(&gpt2, false);
        assert_eq!((e.inner, e.norm_fp32_copies), (3.0 * 3072.0, 0.0));
    }

    #[test]
    fn fp8_training_quantises_layer_gemms_and_adds_their_casts() {
        let spec = tiny_llama();
        let mut o = opts(Layout::default());
        o.global_batch = 1;
        o.seq = 128;
        o.dtype = DType::Fp8;
        assert_eq!(o.storage_dtype(), DType::Bf16);
        let g = o.micro_batch_graph(&spec).unwrap();
        let gemms: Vec<&wavecast_ir::ops::Gemm> = g.nodes.iter().filter_map(|n| if let Op::Gemm(x) = &n.op { Some(x) } else { None }).filter(|x| x.kind == GemmKind::Linear).collect();
        // Layer projections run in FP8; the LM head stays in BF16.
        assert!(gemms.iter().any(|x| x.quant == Some(Quant::Fp8)));
        assert!(gemms.iter().any(|x| x.quant.is_none()));
        let fw_linears = g.nodes.iter().filter(|n| n.phase == Phase::Forward && matches!(&n.op, Op::Gemm(x) if x.quant == Some(Quant::Fp8))).count();
        let casts = g.nodes.iter().filter(|n| n.name.ends_with(".fp8_cast")).count();
        // Two casts per forward FP8 GEMM (input, weight) and one per backward (output gradient).
        assert_eq!(casts, 3 * fw_linears);
        assert!(g.nodes.iter().all(|n| n.phase != wavecast_ir::Phase::Optimizer));
        // BF16 keeps the same graph without casts.
        o.dtype = DType::Bf16;
        let plain = o.micro_batch_graph(&spec).unwrap();
        assert!(plain.nodes.iter().all(|n| !n.name.ends_with(".fp8_cast")));
    }
}
