//! Encoder–decoder transformers with sparse (mixture-of-experts) feed-forward blocks: Switch
//! Transformers, a T5-style model. The encoder reads `seq` tokens per sequence; the decoder is
//! assumed to process as many target tokens (teacher forcing), which is how the shared
//! measurements ran it.
//!
//! Routing assumption: top-k routing is perfectly balanced, so each expert receives
//! seq·k/experts rows of every sequence, capped at the configured expert capacity per sequence
//! (tokens beyond it are dropped, as Switch does).

use crate::hf::{EncDec, TransformerSpec};
use crate::transformer::{AttentionImpl, BuildOptions, Mode};
use crate::WorkloadError;
use wavecast_ir::ops::{Attention, Elementwise, Embedding, EwKind, Gemm, MemCopy, Norm, NormKind, Softmax};
use wavecast_ir::{checked_mul, dim, DType, Graph, Op, Phase, Role};

struct Cx<'a> {
    spec: &'a TransformerSpec,
    ed: EncDec,
    batch: u64,
    seq: u64,
    tokens: u64,
    dtype: DType,
    fused: bool,
    train: bool,
}

impl Cx<'_> {
    fn inner(&self) -> u64 {
        self.spec.heads * self.spec.head_dim
    }
    fn linear(&self, rows: u64, k: u64, n: u64) -> Result<Op, WorkloadError> {
        Ok(Op::Gemm(Gemm::linear(rows, k, n, false, self.dtype)?))
    }
    fn ew(&self, kind: EwKind, elements: u64, inputs: u32) -> Op {
        Op::Elementwise(Elementwise::new(kind, elements, inputs, self.dtype))
    }
    fn norm(&self) -> Op {
        Op::Norm(Norm::new(NormKind::RmsNorm, self.tokens, self.spec.hidden, self.dtype))
    }
}

/// Emits forward nodes with a fixed repeat count.
struct Out<'a> {
    g: &'a mut Graph,
    prefix: &'a str,
    repeat: u64,
}

impl Out<'_> {
    fn op(&mut self, name: &str, op: Op) {
        // The head is marked; the stacks stay unscoped (the step simulator finds their layers
        // by repeat count, as for other graphs that are not one decoder stack).
        let role = if self.prefix == "head." { Role::Head } else { Role::Unscoped };
        self.g.push_in(role, format!("{}{name}", self.prefix), op, Phase::Forward, self.repeat);
    }
    fn dropout(&mut self, cx: &Cx, name: &str, elements: u64) {
        if cx.train {
            self.op(name, cx.ew(EwKind::Dropout, elements, 1));
        }
    }
}

pub fn build(spec: &TransformerSpec, o: &BuildOptions) -> Result<Graph, WorkloadError> {
    let ed = spec.encdec.ok_or_else(|| WorkloadError::Invalid("not an encoder-decoder model".into()))?;
    if o.tp > 1 {
        return Err(WorkloadError::Invalid("tensor parallelism is not modelled for encoder-decoder models".into()));
    }
    if o.past > 0 {
        return Err(WorkloadError::Invalid("KV-cache generation is not modelled for encoder-decoder models".into()));
    }
    let batch = dim("batch", o.batch)?;
    let seq = dim("sequence length", o.seq)?;
    let tokens = checked_mul("tokens", &[batch, seq])?;
    checked_mul("attention scores", &[batch, spec.heads, seq, seq, 8])?;
    checked_mul("logits", &[tokens, spec.vocab, 8])?;
    let fused = match o.attention {
        AttentionImpl::Fused => true,
        AttentionImpl::Eager | AttentionImpl::EagerFusedSoftmax => false,
        AttentionImpl::Auto => !matches!(o.dtype, DType::Fp32 | DType::Tf32),
    };
    let cx = Cx { spec, ed, batch, seq, tokens, dtype: o.dtype, fused, train: o.mode == Mode::Training };
    let mut g = Graph::new(spec.name.clone());
    stack(&cx, &mut g, "encoder.", spec.layers, ed.sparse_encoder_layers, false)?;
    stack(&cx, &mut g, "decoder.", ed.decoder_layers, ed.sparse_decoder_layers, true)?;
    head(&cx, &mut Out { g: &mut g, prefix: "head.", repeat: 1 })?;
    if cx.train {
        g.add_backward();
        g.add_optimizer(o.optimizer);
    }
    Ok(g)
}

/// One stack: token embedding (the shared table, counted once), `layers` layers of which
/// `sparse` have an expert feed-forward block, and the final norm.
fn stack(cx: &Cx, g: &mut Graph, prefix: &str, layers: u64, sparse: u64, decoder: bool) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let h = cx.tokens * s.hidden;
    let embed = Embedding { tokens: cx.tokens, hidden: s.hidden, vocab: s.vocab, dtype: cx.dtype };
    let mut once = Out { g, prefix, repeat: 1 };
    if decoder {
        // Same table as the encoder's: a lookup, not a second parameter.
        once.op("embed_lookup", Op::MemCopy(MemCopy { bytes: embed.bytes() }));
    } else {
        once.op("embed", Op::Embedding(embed));
    }
    once.dropout(cx, "embed_dropout", h);
    // The relative-position bias table lives in the first layer's self-attention only.
    once.op(
        "relative_bias",
        Op::Embedding(Embedding { tokens: cx.seq * cx.seq, hidden: s.heads, vocab: cx.ed.relative_buckets, dtype: cx.dtype }),
    );
    let mut every = Out { g: once.g, prefix, repeat: layers };
    attention(cx, &mut every, "self_attn.", decoder)?;
    if decoder {
        attention(cx, &mut every, "cross_attn.", false)?;
    }
    if layers > sparse {
        feed_forward(cx, &mut Out { g: every.g, prefix, repeat: layers - sparse })?;
    }
    if sparse > 0 {
        experts(cx, &mut Out { g: every.g, prefix, repeat: sparse })?;
    }
    let mut end = Out { g: every.g, prefix, repeat: 1 };
    end.op("final_norm", cx.norm());
    end.dropout(cx, "final_dropout", h);
    Ok(())
}

/// Pre-norm attention sub-layer with the residual add; keys and values come from the encoder
/// output for cross-attention (same token count under the teacher-forcing assumption).
fn attention(cx: &Cx, e: &mut Out, name: &str, causal: bool) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, d, inner) = (cx.tokens, s.hidden, cx.inner());
    let n = |x: &str| format!("{name}{x}");
    e.op(&n("norm"), cx.norm());
    for p in ["q", "k", "v"] {
        e.op(&n(p), cx.linear(t, d, inner)?);
    }
    let bh = cx.batch * s.heads;
    if cx.fused {
        e.op(
            &n("attention"),
            Op::Attention(Attention {
                batch: cx.batch,
                heads: s.heads,
                kv_heads: s.heads,
                q_len: cx.seq,
                kv_len: cx.seq,
                head_dim: s.head_dim,
                causal,
                dtype: cx.dtype,
                backward: false,
                v_head_dim: None,
                shared_kv: false,
                window: None,
            }),
        );
    } else {
        let scores = bh * cx.seq * cx.seq;
        e.op(&n("scores"), Op::Gemm(Gemm::bmm(bh, cx.seq, s.head_dim, cx.seq, cx.dtype)?));
        e.op(&n("position_bias"), cx.ew(EwKind::Add, scores, 2));
        e.op(&n("softmax"), Op::Softmax(Softmax::new(bh * cx.seq, cx.seq, cx.dtype)));
        e.dropout(cx, &n("probs_dropout"), scores);
        e.op(&n("context"), Op::Gemm(Gemm::bmm(bh, cx.seq, cx.seq, s.head_dim, cx.dtype)?));
    }
    e.op(&n("o"), cx.linear(t, inner, d)?);
    e.dropout(cx, &n("dropout"), t * d);
    e.op(&n("residual"), cx.ew(EwKind::Add, t * d, 2));
    Ok(())
}

fn feed_forward(cx: &Cx, e: &mut Out) -> Result<(), WorkloadError> {
    let (t, d, f) = (cx.tokens, cx.spec.hidden, cx.spec.ffn);
    e.op("ff.norm", cx.norm());
    e.op("ff.wi", cx.linear(t, d, f)?);
    e.op("ff.relu", cx.ew(EwKind::Relu, t * f, 1));
    e.dropout(cx, "ff.act_dropout", t * f);
    e.op("ff.wo", cx.linear(t, f, d)?);
    e.dropout(cx, "ff.dropout", t * d);
    e.op("ff.residual", cx.ew(EwKind::Add, t * d, 2));
    Ok(())
}

/// Rows each expert processes under balanced routing, with the capacity cap applied to each
/// sequence of the batch.
pub fn expert_rows(batch: u64, seq: u64, top_k: u64, experts: u64, capacity: Option<u64>) -> u64 {
    let balanced = (seq * top_k).div_ceil(experts).max(1);
    batch * capacity.map_or(balanced, |c| balanced.min(c))
}

fn experts(cx: &Cx, e: &mut Out) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let moe = s.moe.ok_or_else(|| WorkloadError::Invalid("Switch model without experts".into()))?;
    let (t, d, f) = (cx.tokens, s.hidden, s.ffn);
    e.op("moe.norm", cx.norm());
    e.op("moe.router", cx.linear(t, d, moe.experts)?);
    e.op("moe.router_softmax", Op::Softmax(Softmax::new(t, moe.experts, DType::Fp32)));
    let rows = expert_rows(cx.batch, cx.seq, moe.top_k, moe.experts, cx.ed.expert_capacity);
    let moved = MemCopy::copy(rows * moe.experts * d, cx.dtype);
    e.op("moe.dispatch", Op::MemCopy(moved.clone()));
    let mut per_expert = Out { g: &mut *e.g, prefix: e.prefix, repeat: e.repeat * moe.experts };
    per_expert.op("moe.expert.wi", cx.linear(rows, d, f)?);
    per_expert.op("moe.expert.relu", cx.ew(EwKind::Relu, rows * f, 1));
    per_expert.op("moe.expert.wo", cx.linear(rows, f, d)?);
    e.op("moe.combine", Op::MemCopy(moved));
    e.dropout(cx, "moe.dropout", t * d);
    e.op("moe.residual", cx.ew(EwKind::Add, t * d, 2));
    Ok(())
}

/// T5 rescales the decoder output by d^-½ before the tied LM head.
fn head(cx: &Cx, e: &mut Out) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, d) = (cx.tokens, s.hidden);
    let mut lm = Gemm::linear(t, d, s.vocab, false, cx.dtype)?;
    if s.tied_embeddings {
        e.op("scale", cx.ew(EwKind::Mul, t * d, 1));
        lm.shared_weight = true;
    }
    e.op("lm_head", Op::Gemm(lm));
    if cx.train {
        e.op("loss", Op::Softmax(Softmax::new(t, s.vocab, cx.dtype)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_caps_expert_rows() {
        assert_eq!(expert_rows(1, 1000, 1, 8, None), 125);
        assert_eq!(expert_rows(1, 1000, 1, 8, Some(64)), 64);
        assert_eq!(expert_rows(2, 512, 1, 4, Some(64)), 128);
        assert_eq!(expert_rows(1, 3, 2, 8, None), 1);
    }
}
