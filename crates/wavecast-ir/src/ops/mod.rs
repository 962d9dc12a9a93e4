//! The operator set. One file per family; each family answers the same questions (FLOPs,
//! bytes moved, parameters, backward operators) through the [`Op`] dispatch below.

pub mod attention;
pub mod channel_norm;
pub mod comm;
pub mod concat;
pub mod conv;
pub mod elementwise;
pub mod embedding;
pub mod gated_delta;
pub mod gemm;
pub mod memory;
pub mod norm;
pub mod optimizer;
pub mod pool;
pub mod reduction;
pub mod rnn;
pub mod softmax;
pub mod upsample;

pub use attention::Attention;
pub use channel_norm::{ChannelNorm, ChannelNormKind};
pub use comm::{Comm, CommKind};
pub use concat::Concat;
pub use conv::{Conv, ConvPass};
pub use elementwise::{Elementwise, EwKind};
pub use embedding::Embedding;
pub use gated_delta::GatedDelta;
pub use gemm::{Gemm, GemmKind};
pub use memory::MemCopy;
pub use norm::{Norm, NormKind};
pub use optimizer::{Optimizer, OptimizerKind, OptimizerImpl};
pub use pool::{Pool, PoolKind};
pub use reduction::Reduction;
pub use rnn::{Rnn, RnnCell};
pub use softmax::Softmax;
pub use upsample::{Upsample, UpsampleMode};

use crate::DType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Coarse family used for reports and for choosing a per-class model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    Gemm,
    AttentionBmm,
    FusedAttention,
    Elementwise,
    Softmax,
    Norm,
    Embedding,
    Reduction,
    Memory,
    Optimizer,
    Communication,
    /// Convolutions and transposed convolutions.
    Conv,
    Pooling,
    /// Recurrent layers (LSTM, GRU, RNN), priced through their per-time-step kernels.
    Rnn,
}

impl OpClass {
    pub const ALL: [OpClass; 14] = [
        OpClass::Gemm,
        OpClass::AttentionBmm,
        OpClass::FusedAttention,
        OpClass::Elementwise,
        OpClass::Softmax,
        OpClass::Norm,
        OpClass::Embedding,
        OpClass::Reduction,
        OpClass::Memory,
        OpClass::Optimizer,
        OpClass::Communication,
        OpClass::Conv,
        OpClass::Pooling,
        OpClass::Rnn,
    ];

    /// Matrix products proper (linear layers, batched and attention matmuls, fused attention):
    /// compute-bound work the GEMM models price.
    pub fn is_gemm_like(self) -> bool {
        matches!(self, OpClass::Gemm | OpClass::AttentionBmm | OpClass::FusedAttention)
    }

    /// Classes whose work runs on the matrix units (tensor cores) where the dtype allows: the
    /// matrix products, and convolutions and recurrent layers, which libraries lower to them.
    pub fn is_matmul(self) -> bool {
        self.is_gemm_like() || matches!(self, OpClass::Conv | OpClass::Rnn)
    }

    /// Whether the vendor libraries (cuBLAS, cuDNN) pick this class's kernels per GPU by
    /// heuristics or autotuning, so a kernel measured on one GPU says little about the kernel
    /// another GPU runs: exactly the matrix-unit classes.
    pub fn kernels_vary_by_gpu(self) -> bool {
        self.is_matmul()
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            OpClass::Gemm => "gemm",
            OpClass::AttentionBmm => "attention_bmm",
            OpClass::FusedAttention => "fused_attention",
            OpClass::Elementwise => "elementwise",
            OpClass::Softmax => "softmax",
            OpClass::Norm => "norm",
            OpClass::Embedding => "embedding",
            OpClass::Reduction => "reduction",
            OpClass::Memory => "memory",
            OpClass::Optimizer => "optimizer",
            OpClass::Communication => "communication",
            OpClass::Conv => "conv",
            OpClass::Pooling => "pooling",
            OpClass::Rnn => "rnn",
        }
    }
}

impl fmt::Display for OpClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One operator with its shape and element type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    Gemm(Gemm),
    Attention(Attention),
    Elementwise(Elementwise),
    Softmax(Softmax),
    Norm(Norm),
    Embedding(Embedding),
    Reduction(Reduction),
    MemCopy(MemCopy),
    Optimizer(Optimizer),
    Comm(Comm),
    Conv(Conv),
    Pool(Pool),
    ChannelNorm(ChannelNorm),
    Rnn(Rnn),
    Concat(Concat),
    Upsample(Upsample),
    /// The gated delta rule of Gated DeltaNet linear-attention layers.
    GatedDelta(GatedDelta),
}

impl Op {
    pub fn class(&self) -> OpClass {
        match self {
            Op::Gemm(g) => g.class(),
            Op::Attention(_) => OpClass::FusedAttention,
            Op::Elementwise(_) => OpClass::Elementwise,
            Op::Softmax(_) => OpClass::Softmax,
            Op::Norm(_) => OpClass::Norm,
            Op::Embedding(_) => OpClass::Embedding,
            Op::Reduction(_) => OpClass::Reduction,
            Op::MemCopy(_) => OpClass::Memory,
            Op::Optimizer(_) => OpClass::Optimizer,
            Op::Comm(_) => OpClass::Communication,
            Op::Conv(_) => OpClass::Conv,
            Op::Pool(_) => OpClass::Pooling,
            Op::ChannelNorm(_) => OpClass::Norm,
            Op::Rnn(_) => OpClass::Rnn,
            Op::Concat(_) | Op::Upsample(_) => OpClass::Memory,
            // Chunked: matrix products on the tensor cores, fused like attention.
            Op::GatedDelta(_) => OpClass::FusedAttention,
        }
    }

    /// Floating-point operations (a multiply-add counts as two).
    pub fn flops(&self) -> f64 {
        match self {
            Op::Gemm(o) => o.flops(),
            Op::Attention(o) => o.flops(),
            Op::Elementwise(o) => o.flops(),
            Op::Softmax(o) => o.flops(),
            Op::Norm(o) => o.flops(),
            Op::Embedding(o) => o.flops(),
            Op::Reduction(o) => o.flops(),
            Op::MemCopy(o) => o.flops(),
            Op::Optimizer(o) => o.flops(),
            Op::Comm(_) => 0.0,
            Op::Conv(o) => o.flops(),
            Op::Pool(o) => o.flops(),
            Op::ChannelNorm(o) => o.flops(),
            Op::Rnn(o) => o.flops(),
            Op::Concat(o) => o.flops(),
            Op::Upsample(o) => o.flops(),
            Op::GatedDelta(o) => o.flops(),
        }
    }

    /// Bytes read from and written to device memory, assuming no reuse through caches.
    pub fn bytes(&self) -> f64 {
        match self {
            Op::Gemm(o) => o.bytes(),
            Op::Attention(o) => o.bytes(),
            Op::Elementwise(o) => o.bytes(),
            Op::Softmax(o) => o.bytes(),
            Op::Norm(o) => o.bytes(),
            Op::Embedding(o) => o.bytes(),
            Op::Reduction(o) => o.bytes(),
            Op::MemCopy(o) => o.bytes(),
            Op::Optimizer(o) => o.bytes(),
            Op::Comm(o) => o.bytes(),
            Op::Conv(o) => o.bytes(),
            Op::Pool(o) => o.bytes(),
            Op::ChannelNorm(o) => o.bytes(),
            Op::Rnn(o) => o.bytes(),
            Op::Concat(o) => o.bytes(),
            Op::Upsample(o) => o.bytes(),
            Op::GatedDelta(o) => o.bytes(),
        }
    }

    /// Trainable parameters this operator owns (0 for ops that only use them).
    pub fn params(&self) -> u64 {
        match self {
            Op::Gemm(o) => o.params(),
            Op::Norm(o) => o.params(),
            Op::Embedding(o) => o.params(),
            Op::Conv(o) => o.params(),
            Op::ChannelNorm(o) => o.params(),
            Op::Rnn(o) => o.params(),
            _ => 0,
        }
    }

    /// Multiply-accumulates of the matrix work (GEMMs, attention matmuls, convolutions, RNN
    /// gate GEMMs), the quantity published "MAC" / "GFLOPs" tables of vision models count; 0 for
    /// everything else.
    pub fn macs(&self) -> f64 {
        match self {
            Op::Gemm(o) => o.macs(),
            Op::Attention(o) => o.macs(),
            Op::Conv(o) => o.macs(),
            Op::Rnn(o) => o.macs(),
            _ => 0.0,
        }
    }

    /// The operators autograd launches to compute this op's input and weight gradients.
    pub fn backward(&self) -> Vec<Op> {
        match self {
            Op::Gemm(o) => o.backward(),
            Op::Attention(o) => o.backward(),
            Op::Elementwise(o) => o.backward(),
            Op::Softmax(o) => o.backward(),
            Op::Norm(o) => o.backward(),
            Op::Embedding(o) => o.backward(),
            Op::Reduction(o) => o.backward(),
            Op::MemCopy(o) => o.backward(),
            Op::Optimizer(_) => Vec::new(),
            Op::Comm(o) => vec![Op::Comm(o.clone())],
            Op::Conv(o) => o.backward(),
            Op::Pool(o) => o.backward(),
            Op::ChannelNorm(o) => o.backward(),
            Op::Rnn(o) => o.backward(),
            Op::Concat(o) => o.backward(),
            Op::Upsample(o) => o.backward(),
            Op::GatedDelta(o) => o.backward(),
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            Op::Gemm(o) => o.dtype,
            Op::Attention(o) => o.dtype,
            Op::Elementwise(o) => o.dtype,
            Op::Softmax(o) => o.dtype,
            Op::Norm(o) => o.dtype,
            Op::Embedding(o) => o.dtype,
            Op::Reduction(o) => o.dtype,
            Op::MemCopy(_) => DType::Fp32,
            Op::Optimizer(o) => o.state_dtype,
            Op::Comm(o) => o.dtype,
            Op::Conv(o) => o.dtype,
            Op::Pool(o) => o.dtype,
            Op::ChannelNorm(o) => o.dtype,
            Op::Rnn(o) => o.dtype,
            Op::Concat(o) => o.dtype,
            Op::Upsample(o) => o.dtype,
            Op::GatedDelta(o) => o.dtype,
        }
    }

    /// Arithmetic intensity in FLOP per byte (0 for pure data movement).
    pub fn intensity(&self) -> f64 {
        let b = self.bytes();
        if b > 0.0 {
            self.flops() / b
        } else {
            0.0
        }
    }

    /// A short human description of the shape, for tables.
    pub fn describe(&self) -> String {
        match self {
            Op::Gemm(g) => format!("{:?} b={} m={} n={} k={}", g.kind, g.batch, g.m, g.n, g.k),
            Op::Attention(a) => format!(
                "attn b={} h={} q={} kv={} d={}",
                a.batch, a.heads, a.q_len, a.kv_len, a.head_dim
            ),
            Op::Elementwise(e) => format!("{:?} n={}", e.kind, e.elements),
            Op::Softmax(s) => format!("softmax {}x{}", s.rows, s.cols),
            Op::Norm(n) => format!("{:?} {}x{}", n.kind, n.rows, n.cols),
            Op::Embedding(e) => format!("embedding tokens={} h={}", e.tokens, e.hidden),
            Op::Reduction(r) => format!("reduce {}->{}", r.elements_in, r.elements_out),
            Op::MemCopy(m) => format!("copy {} B", m.bytes),
            Op::Optimizer(o) => format!("{:?} params={}", o.kind, o.params),
            Op::Comm(c) => format!("{:?} {} B over {}", c.kind, c.bytes, c.group),
            Op::Conv(c) => {
                let [oh, ow] = c.out_hw();
                format!(
                    "{}conv{} n={} {}->{} {}x{} -> {}x{} k={}x{} s={} g={}",
                    if c.transposed { "t" } else { "" },
                    match c.pass {
                        ConvPass::Forward => "",
                        ConvPass::BackwardData => " dgrad",
                        ConvPass::BackwardWeight => " wgrad",
                    },
                    c.batch,
                    c.c_in,
                    c.c_out,
                    c.in_hw[0],
                    c.in_hw[1],
                    oh,
                    ow,
                    c.kernel[0],
                    c.kernel[1],
                    c.stride[0],
                    c.groups
                )
            }
            Op::Pool(p) => format!("{:?} pool n={} c={} {}x{} -> {}x{}", p.kind, p.batch, p.channels, p.in_hw[0], p.in_hw[1], p.out_hw[0], p.out_hw[1]),
            Op::ChannelNorm(n) => format!("{:?} n={} c={} hw={}", n.kind, n.batch, n.channels, n.spatial),
            Op::Rnn(r) => format!(
                "{:?} b={} t={} in={} h={} layers={}{}",
                r.cell,
                r.batch,
                r.seq,
                r.input_size,
                r.hidden,
                r.layers,
                if r.bidirectional { " bidirectional" } else { "" }
            ),
            Op::Concat(c) => format!("concat {} inputs, {} elements", c.inputs, c.elements),
            Op::Upsample(u) => format!("{:?} upsample {}x{} -> {}x{}", u.mode, u.in_hw[0], u.in_hw[1], u.out_hw[0], u.out_hw[1]),
            Op::GatedDelta(d) => format!(
                "gated delta {} b={} t={} heads={}/{} dk={} dv={}",
                if d.recurrent() { "recurrent" } else { "chunked" },
                d.batch,
                d.seq,
                d.k_heads,
                d.v_heads,
                d.head_k_dim,
                d.head_v_dim
            ),
        }
    }
}
