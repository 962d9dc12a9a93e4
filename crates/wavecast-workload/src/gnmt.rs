//! GNMT v2 (the MLPerf / NVIDIA DeepLearningExamples recurrent translation model that Habitat
//! and Li et al. evaluate): a 4-layer LSTM encoder whose first layer is bidirectional, a
//! 4-layer LSTM decoder whose first layer feeds a normalised Bahdanau attention, hidden size
//! 1024, shared source/target embeddings, residual connections from the third layer, dropout
//! 0.2 on the input of every LSTM layer.
//!
//! The target sequence is as long as the source (`seq` tokens each) and the decoder runs
//! teacher-forced over the whole target, as in training; inference is the same forward pass
//! (scoring), not beam-search decoding. Because the attention query is the first decoder layer's
//! output, the attention for all target steps is computed at once after that layer, and every
//! later decoder layer runs as a whole-sequence cuDNN LSTM.

use crate::net::Net;
use crate::transformer::Mode;
use crate::zoo::ZooOptions;
use crate::WorkloadError;
use wavecast_ir::ops::{EwKind, Gemm, Rnn, RnnCell, Softmax};
use wavecast_ir::{checked_mul, dim, Graph, Op};

/// Hidden size, layers per stack and vocabulary (32,317 word pieces padded to a multiple of 8).
pub const HIDDEN: u64 = 1024;
pub const LAYERS: u64 = 4;
pub const VOCAB: u64 = 32_320;

fn lstm(n: &mut Net, name: &str, seq: u64, input: u64, bidirectional: bool) -> Result<u64, WorkloadError> {
    let rows = n.batch * seq;
    n.dropout(&format!("{name}.input_dropout"), rows * input);
    let r = Rnn::new(RnnCell::Lstm, n.batch, seq, input, HIDDEN, 1, bidirectional, n.dtype)?;
    let out = r.output_size();
    n.op(&format!("{name}.lstm"), Op::Rnn(r));
    Ok(out)
}

pub fn gnmt(o: &ZooOptions) -> Result<Graph, WorkloadError> {
    let seq = dim("sequence length", o.seq)?;
    let mut n = Net::new("gnmt", o.batch, o.dtype, o.mode == Mode::Training)?;
    let (b, h) = (n.batch, HIDDEN);
    let rows = checked_mul("tokens", &[b, seq])?;
    // Attention scores and the additive-attention hidden tensor are B·T·T·H.
    checked_mul("attention hidden", &[rows, seq, h, 8])?;

    // Encoder.
    n.embedding("encoder.embedding", rows, h, VOCAB);
    let x = lstm(&mut n, "encoder.0", seq, h, true)?;
    lstm(&mut n, "encoder.1", seq, x, false)?;
    for i in 2..LAYERS {
        lstm(&mut n, &format!("encoder.{i}"), seq, h, false)?;
        n.ew(&format!("encoder.{i}.residual"), EwKind::Add, rows * h, 2);
    }

    // Decoder: the shared embedding table is owned by the encoder's lookup.
    n.shared_embedding("decoder.embedding", rows, h, VOCAB);
    lstm(&mut n, "decoder.att_rnn", seq, h, false)?;
    // Normalised Bahdanau attention: keys and queries projected, tanh(q + k + bias) scored
    // against a learned vector, masked softmax over the source, context = scores · keys.
    let pairs = b * seq * seq;
    n.linear("decoder.attn.linear_k", rows, h, h, false)?;
    // The learned normalisation bias (added to q + k) is carried as linear_q's bias vector:
    // same parameters, and the add itself is the normalize_bias node below.
    n.linear("decoder.attn.linear_q", rows, h, h, true)?;
    n.ew("decoder.attn.sum_qk", EwKind::Add, pairs * h, 2);
    n.ew("decoder.attn.normalize_bias", EwKind::Add, pairs * h, 2);
    n.ew("decoder.attn.tanh", EwKind::Tanh, pairs * h, 1);
    n.op("decoder.attn.score", Op::Gemm(Gemm::linear(pairs, h, 1, true, n.dtype)?));
    n.ew("decoder.attn.mask", EwKind::Where, pairs, 2);
    n.op("decoder.attn.softmax", Op::Softmax(Softmax::new(b * seq, seq, n.dtype)));
    n.op("decoder.attn.context", Op::Gemm(Gemm::bmm(b, seq, seq, h, n.dtype)?));
    for i in 1..LAYERS {
        n.op(&format!("decoder.{i}.cat_attention"), Op::Concat(wavecast_ir::ops::Concat::new(rows * 2 * h, 2, n.dtype)));
        lstm(&mut n, &format!("decoder.{i}"), seq, 2 * h, false)?;
        if i >= 2 {
            n.ew(&format!("decoder.{i}.residual"), EwKind::Add, rows * h, 2);
        }
    }
    n.dropout("decoder.classifier.dropout", rows * h);
    n.linear("decoder.classifier", rows, h, VOCAB, true)?;
    if n.train {
        n.op("loss.log_softmax", Op::Softmax(Softmax::new(rows, VOCAB, n.dtype)));
    }
    Ok(n.finish_with(o.optimizer))
}
