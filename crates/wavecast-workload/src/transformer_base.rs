//! The original Transformer, base configuration (Vaswani et al., 2017, Table 3): 6 encoder and
//! 6 decoder layers, d_model 512, 8 heads, feed-forward 2048, ReLU, post-norm, dropout 0.1,
//! sinusoidal positions, and one ~37,000-token source–target vocabulary whose embedding is
//! shared by both stacks and the pre-softmax projection.
//!
//! Source and target are `seq` tokens each; the decoder runs teacher-forced over the whole
//! target (training, or scoring at inference).

use crate::net::Net;
use crate::transformer::Mode;
use crate::zoo::ZooOptions;
use crate::WorkloadError;
use wavecast_ir::ops::{EwKind, Gemm, Softmax};
use wavecast_ir::{checked_mul, dim, Graph, Op};

pub const D: u64 = 512;
pub const HEADS: u64 = 8;
pub const FFN: u64 = 2048;
pub const LAYERS: u64 = 6;
pub const VOCAB: u64 = 37_000;

/// Token lookup, ×√d scale, sinusoidal positions, dropout.
fn embed(n: &mut Net, name: &str, rows: u64, shared: bool) {
    if shared {
        n.shared_embedding(&format!("{name}.embedding"), rows, D, VOCAB);
    } else {
        n.embedding(&format!("{name}.embedding"), rows, D, VOCAB);
    }
    n.ew(&format!("{name}.scale"), EwKind::Mul, rows * D, 1);
    n.ew(&format!("{name}.positions"), EwKind::Add, rows * D, 2);
    n.dropout(&format!("{name}.dropout"), rows * D);
}

/// Sub-layer epilogue of a post-norm transformer: dropout, residual sum, layer norm.
fn residual_norm(n: &mut Net, name: &str, rows: u64) {
    n.dropout(&format!("{name}.dropout"), rows * D);
    n.ew(&format!("{name}.residual"), EwKind::Add, rows * D, 2);
    n.layer_norm(&format!("{name}.norm"), rows, D);
}

pub fn transformer_base(o: &ZooOptions) -> Result<Graph, WorkloadError> {
    let seq = dim("sequence length", o.seq)?;
    let mut n = Net::new("transformer-base", o.batch, o.dtype, o.mode == Mode::Training)?;
    let rows = checked_mul("tokens", &[n.batch, seq])?;
    checked_mul("attention scores", &[rows, HEADS, seq, 8])?;
    checked_mul("logits", &[rows, VOCAB, 8])?;

    embed(&mut n, "encoder", rows, false);
    let start = n.graph.nodes.len();
    n.attention("encoder.layer.self_attn", seq, seq, D, HEADS, false, true, o.attention)?;
    residual_norm(&mut n, "encoder.layer.self_attn", rows);
    n.ffn("encoder.layer.ffn", rows, D, FFN, EwKind::Relu)?;
    residual_norm(&mut n, "encoder.layer.ffn", rows);
    for node in &mut n.graph.nodes[start..] {
        node.repeat = LAYERS;
    }

    // The decoder's lookup and the output projection use the encoder's table.
    embed(&mut n, "decoder", rows, true);
    let start = n.graph.nodes.len();
    n.attention("decoder.layer.self_attn", seq, seq, D, HEADS, true, true, o.attention)?;
    residual_norm(&mut n, "decoder.layer.self_attn", rows);
    n.attention("decoder.layer.cross_attn", seq, seq, D, HEADS, false, false, o.attention)?;
    residual_norm(&mut n, "decoder.layer.cross_attn", rows);
    n.ffn("decoder.layer.ffn", rows, D, FFN, EwKind::Relu)?;
    residual_norm(&mut n, "decoder.layer.ffn", rows);
    for node in &mut n.graph.nodes[start..] {
        node.repeat = LAYERS;
    }

    let mut out = Gemm::linear(rows, D, VOCAB, false, n.dtype)?;
    out.shared_weight = true;
    n.op("output_projection", Op::Gemm(out));
    if n.train {
        n.op("loss.log_softmax", Op::Softmax(Softmax::new(rows, VOCAB, n.dtype)));
    }
    Ok(n.finish_with(o.optimizer))
}
