//! Builds the operator graph of one forward pass (and, for training, the backward pass and the
//! optimizer step) of a transformer described by a [`TransformerSpec`].
//!
//! The layer is emitted once with `repeat = layers`, in the order PyTorch launches kernels.

use crate::hf::{Activation, Arch, TransformerSpec};
use crate::WorkloadError;
use wavecast_ir::ops::{
    Attention, Elementwise, Embedding, EwKind, Gemm, MemCopy, Norm, NormKind, OptimizerKind, Softmax,
};
use wavecast_ir::{checked_mul, dim, DType, Graph, Op, Phase};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Forward only.
    Inference,
    /// Forward, backward and one optimizer step.
    Training,
}

/// How attention is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionImpl {
    /// Eager kernels for FP32/TF32 GPT-2/OPT/BERT (what Hugging Face ran when the shared
    /// measurements were taken); fused for half precision and Llama-family models.
    Auto,
    /// Separate QKᵀ BMM, scale, mask, softmax, dropout and ·V BMM kernels.
    Eager,
    /// One flash-style kernel.
    Fused,
}

/// What sits on top of the backbone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// Decoders: LM head over every token; BERT: none at inference, pre-training heads in training.
    Auto,
    /// Backbone only (BERT includes its pooler).
    None,
    /// LM head over every position.
    LmHead,
    /// LM head over the last position of each sequence only (generation).
    LastToken,
    /// BERT sequence classification (2 labels).
    Classification,
    /// BERT masked-LM and next-sentence heads.
    PreTraining,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BuildOptions {
    pub batch: u64,
    /// New tokens per sequence in this pass.
    pub seq: u64,
    /// Tokens already in the KV cache (generation); 0 otherwise.
    pub past: u64,
    pub mode: Mode,
    pub dtype: DType,
    pub attention: AttentionImpl,
    pub head: Head,
    pub optimizer: OptimizerKind,
}

impl BuildOptions {
    pub fn new(batch: u64, seq: u64, mode: Mode, dtype: DType) -> BuildOptions {
        BuildOptions {
            batch,
            seq,
            past: 0,
            mode,
            dtype,
            attention: AttentionImpl::Auto,
            head: Head::Auto,
            optimizer: OptimizerKind::Adam,
        }
    }
}

/// Emits nodes for one scope (prologue, layer, epilogue) with a fixed repeat count.
struct Emitter<'a> {
    graph: &'a mut Graph,
    prefix: String,
    repeat: u64,
}

impl Emitter<'_> {
    fn op(&mut self, name: &str, op: Op) {
        self.graph.push(format!("{}{}", self.prefix, name), op, Phase::Forward, self.repeat);
    }
}

struct Ctx<'a> {
    spec: &'a TransformerSpec,
    o: &'a BuildOptions,
    tokens: u64,
    kv_len: u64,
    fused: bool,
    train: bool,
}

impl Ctx<'_> {
    fn dt(&self) -> DType {
        self.o.dtype
    }
    fn linear(&self, rows: u64, k: u64, n: u64, bias: bool) -> Result<Op, WorkloadError> {
        Ok(Op::Gemm(Gemm::linear(rows, k, n, bias, self.dt())?))
    }
    fn ew(&self, kind: EwKind, elements: u64, inputs: u32) -> Op {
        Op::Elementwise(Elementwise::new(kind, elements, inputs, self.dt()))
    }
    fn norm(&self, rows: u64, cols: u64) -> Op {
        Op::Norm(Norm::new(self.spec.norm, rows, cols, self.dt()))
    }
    fn dropout(&self, e: &mut Emitter, name: &str, elements: u64) {
        if self.train && self.spec.arch != Arch::Llama {
            e.op(name, self.ew(EwKind::Dropout, elements, 1));
        }
    }
}

/// Builds the graph for `spec` under `o`.
pub fn build(spec: &TransformerSpec, o: &BuildOptions) -> Result<Graph, WorkloadError> {
    dim("batch", o.batch)?;
    dim("sequence length", o.seq)?;
    let kv_len = o.past.checked_add(o.seq).ok_or_else(|| WorkloadError::Invalid("context length overflows".into()))?;
    if spec.arch != Arch::Llama && kv_len > spec.max_positions {
        return Err(WorkloadError::Invalid(format!(
            "sequence length {kv_len} exceeds the model's {} learned positions",
            spec.max_positions
        )));
    }
    let tokens = checked_mul("tokens", &[o.batch, o.seq])?;
    // The largest intermediate: attention scores, and logits.
    checked_mul("attention scores", &[o.batch, spec.heads, o.seq, kv_len, 8])?;
    checked_mul("logits", &[tokens, spec.vocab, 8])?;
    let fused = match o.attention {
        AttentionImpl::Fused => true,
        AttentionImpl::Eager => false,
        AttentionImpl::Auto => spec.arch == Arch::Llama || !matches!(o.dtype, DType::Fp32 | DType::Tf32),
    };
    let cx = Ctx { spec, o, tokens, kv_len, fused, train: o.mode == Mode::Training };
    let mut g = Graph::new(spec.name.clone());
    embeddings(&cx, &mut Emitter { graph: &mut g, prefix: "embed.".into(), repeat: 1 })?;
    layer(&cx, &mut Emitter { graph: &mut g, prefix: "layer.".into(), repeat: spec.layers })?;
    epilogue(&cx, &mut Emitter { graph: &mut g, prefix: "head.".into(), repeat: 1 })?;
    if cx.train {
        g.add_backward();
        g.add_optimizer(o.optimizer);
    }
    Ok(g)
}

fn embeddings(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, h) = (cx.tokens, s.hidden);
    e.op("tokens", Op::Embedding(Embedding { tokens: t, hidden: h, vocab: s.vocab, dtype: cx.dt() }));
    if s.learned_positions {
        let rows = s.max_positions + s.position_offset;
        e.op("positions", Op::Embedding(Embedding { tokens: t, hidden: h, vocab: rows, dtype: cx.dt() }));
        e.op("add_positions", cx.ew(EwKind::Add, t * h, 2));
    }
    if s.type_vocab > 0 {
        e.op("token_types", Op::Embedding(Embedding { tokens: t, hidden: h, vocab: s.type_vocab, dtype: cx.dt() }));
        e.op("add_token_types", cx.ew(EwKind::Add, t * h, 2));
    }
    if s.arch == Arch::Bert {
        e.op("norm", cx.norm(t, h));
    }
    cx.dropout(e, "dropout", t * h);
    Ok(())
}

fn layer(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, h) = (cx.tokens, s.hidden);
    let pre_norm = s.arch != Arch::Bert;
    if pre_norm {
        e.op("attn_norm", cx.norm(t, h));
    }
    attention_block(cx, e)?;
    cx.dropout(e, "attn_dropout", t * h);
    e.op("attn_residual", cx.ew(EwKind::Add, t * h, 2));
    if !pre_norm {
        e.op("attn_norm", cx.norm(t, h));
    }
    if pre_norm {
        e.op("mlp_norm", cx.norm(t, h));
    }
    if s.moe.is_some() {
        moe_block(cx, e)?;
    } else {
        mlp_block(cx, e)?;
    }
    cx.dropout(e, "mlp_dropout", t * h);
    e.op("mlp_residual", cx.ew(EwKind::Add, t * h, 2));
    if !pre_norm {
        e.op("mlp_norm", cx.norm(t, h));
    }
    Ok(())
}

fn attention_block(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (b, t, h) = (cx.o.batch, cx.tokens, s.hidden);
    let q_dim = s.heads * s.head_dim;
    let kv_dim = s.kv_heads * s.head_dim;
    if s.arch == Arch::Gpt2 {
        e.op("qkv", cx.linear(t, h, q_dim + 2 * kv_dim, s.qkv_bias)?);
    } else {
        e.op("q", cx.linear(t, h, q_dim, s.qkv_bias)?);
        e.op("k", cx.linear(t, h, kv_dim, s.qkv_bias)?);
        e.op("v", cx.linear(t, h, kv_dim, s.qkv_bias)?);
    }
    if s.qk_norm {
        e.op("q_norm", Op::Norm(Norm::new(NormKind::RmsNorm, t * s.heads, s.head_dim, cx.dt())));
        e.op("k_norm", Op::Norm(Norm::new(NormKind::RmsNorm, t * s.kv_heads, s.head_dim, cx.dt())));
    }
    if !s.learned_positions {
        e.op("rotary_q", cx.ew(EwKind::Rotary, t * q_dim, 1));
        e.op("rotary_k", cx.ew(EwKind::Rotary, t * kv_dim, 1));
    }
    if cx.o.past > 0 {
        // Appending this step's keys and values to the cache.
        let bytes = 2.0 * 2.0 * (t * kv_dim) as f64 * cx.dt().size_bytes() as f64;
        e.op("kv_cache_write", Op::MemCopy(MemCopy { bytes }));
    }
    if cx.fused {
        e.op(
            "attention",
            Op::Attention(Attention {
                batch: b,
                heads: s.heads,
                kv_heads: s.kv_heads,
                q_len: cx.o.seq,
                kv_len: cx.kv_len,
                head_dim: s.head_dim,
                causal: s.causal,
                dtype: cx.dt(),
                backward: false,
            }),
        );
    } else {
        eager_attention(cx, e)?;
    }
    e.op("out_proj", cx.linear(t, q_dim, h, s.out_bias)?);
    Ok(())
}

fn eager_attention(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (b, t) = (cx.o.batch, cx.tokens);
    let bh = b * s.heads;
    let scores = bh * cx.o.seq * cx.kv_len;
    if s.arch == Arch::Opt {
        e.op("q_scale", cx.ew(EwKind::Mul, t * s.heads * s.head_dim, 1));
    }
    e.op("scores", Op::Gemm(Gemm::bmm(bh, cx.o.seq, s.head_dim, cx.kv_len, cx.dt())?));
    if s.arch != Arch::Opt {
        e.op("scale", cx.ew(EwKind::Div, scores, 1));
    }
    if s.arch == Arch::Gpt2 {
        e.op("causal_mask", cx.ew(EwKind::Where, scores, 2));
    } else {
        e.op("mask", cx.ew(EwKind::Add, scores, 2));
    }
    e.op("softmax", Op::Softmax(Softmax::new(bh * cx.o.seq, cx.kv_len, cx.dt())));
    cx.dropout(e, "attn_probs_dropout", scores);
    e.op("context", Op::Gemm(Gemm::bmm(bh, cx.o.seq, cx.kv_len, s.head_dim, cx.dt())?));
    let ctx_bytes = 2.0 * (t * s.heads * s.head_dim) as f64 * cx.dt().size_bytes() as f64;
    e.op("context_contiguous", Op::MemCopy(MemCopy { bytes: ctx_bytes }));
    Ok(())
}

fn mlp_block(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, h, f) = (cx.tokens, s.hidden, s.ffn);
    match s.activation {
        Activation::SwiGlu => {
            e.op("gate", cx.linear(t, h, f, s.mlp_bias)?);
            e.op("up", cx.linear(t, h, f, s.mlp_bias)?);
            e.op("silu_mul", cx.ew(EwKind::SiluMul, t * f, 2));
        }
        act => {
            e.op("fc1", cx.linear(t, h, f, s.mlp_bias)?);
            let kind = if act == Activation::Relu { EwKind::Relu } else { EwKind::Gelu };
            e.op("activation", cx.ew(kind, t * f, 1));
        }
    }
    e.op(if s.activation == Activation::SwiGlu { "down" } else { "fc2" }, cx.linear(t, f, h, s.mlp_bias)?);
    Ok(())
}

/// Mixture of experts under balanced routing: each expert processes tokens·top_k/experts rows.
fn moe_block(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let moe = s.moe.expect("called for MoE models only");
    let (t, h, f) = (cx.tokens, s.hidden, s.ffn);
    e.op("router", cx.linear(t, h, moe.experts, false)?);
    e.op("router_softmax", Op::Softmax(Softmax::new(t, moe.experts, cx.dt())));
    let routed = checked_mul("routed tokens", &[t, moe.top_k])?;
    e.op("dispatch", Op::MemCopy(MemCopy { bytes: 2.0 * (routed * h) as f64 * cx.dt().size_bytes() as f64 }));
    let rows = routed.div_ceil(moe.experts);
    let mut experts = Emitter { graph: &mut *e.graph, prefix: format!("{}expert.", e.prefix), repeat: e.repeat * moe.experts };
    experts.op("gate", cx.linear(rows, h, f, s.mlp_bias)?);
    experts.op("up", cx.linear(rows, h, f, s.mlp_bias)?);
    experts.op("silu_mul", cx.ew(EwKind::SiluMul, rows * f, 2));
    experts.op("down", cx.linear(rows, f, h, s.mlp_bias)?);
    e.op("combine", cx.ew(EwKind::Mul, routed * h, 2));
    Ok(())
}

fn epilogue(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (b, t, h) = (cx.o.batch, cx.tokens, s.hidden);
    if s.arch == Arch::Bert {
        e.op("pooler", cx.linear(b, h, h, true)?);
        e.op("pooler_tanh", cx.ew(EwKind::Tanh, b * h, 1));
        let head = match cx.o.head {
            Head::Auto if cx.train => Head::PreTraining,
            Head::Auto => Head::None,
            other => other,
        };
        match head {
            Head::Classification => {
                e.op("classifier", cx.linear(b, h, 2, true)?);
                if cx.train {
                    e.op("loss", Op::Softmax(Softmax::new(b, 2, cx.dt())));
                }
            }
            Head::PreTraining | Head::LmHead | Head::LastToken => {
                e.op("mlm_transform", cx.linear(t, h, h, true)?);
                e.op("mlm_gelu", cx.ew(EwKind::Gelu, t * h, 1));
                e.op("mlm_norm", cx.norm(t, h));
                e.op("mlm_decoder", tied(cx.linear(t, h, s.vocab, true)?));
                e.op("nsp", cx.linear(b, h, 2, true)?);
                if cx.train {
                    e.op("loss", Op::Softmax(Softmax::new(t, s.vocab, cx.dt())));
                }
            }
            Head::None | Head::Auto => {}
        }
        return Ok(());
    }
    e.op("final_norm", cx.norm(t, h));
    let rows = match cx.o.head {
        Head::None => return Ok(()),
        Head::LastToken => b,
        _ => t,
    };
    let lm = cx.linear(rows, h, s.vocab, false)?;
    e.op("lm_head", if s.tied_embeddings { tied(lm) } else { lm });
    if cx.train {
        e.op("loss", Op::Softmax(Softmax::new(rows, s.vocab, cx.dt())));
    }
    Ok(())
}

/// Marks a linear layer whose weight is the token-embedding table.
fn tied(op: Op) -> Op {
    match op {
        Op::Gemm(mut g) => {
            g.shared_weight = true;
            Op::Gemm(g)
        }
        other => other,
    }
}
