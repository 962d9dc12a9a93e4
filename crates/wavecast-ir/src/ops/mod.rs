//! The operator set. One file per family; each family answers the same questions (FLOPs,
//! bytes moved, parameters, backward operators) through the [`Op`] dispatch below.

pub mod attention;
pub mod comm;
pub mod elementwise;
pub mod embedding;
pub mod gemm;
pub mod memory;
pub mod norm;
pub mod optimizer;
pub mod reduction;
pub mod softmax;

pub use attention::Attention;
pub use comm::{Comm, CommKind};
pub use elementwise::{Elementwise, EwKind};
pub use embedding::Embedding;
pub use gemm::{Gemm, GemmKind};
pub use memory::MemCopy;
pub use norm::{Norm, NormKind};
pub use optimizer::{Optimizer, OptimizerKind};
pub use reduction::Reduction;
pub use softmax::Softmax;

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
}

impl OpClass {
    pub const ALL: [OpClass; 11] = [
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
    ];

    pub fn as_str(self) -> &'static str {
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
        }
    }

    /// Trainable parameters this operator owns (0 for ops that only use them).
    pub fn params(&self) -> u64 {
        match self {
            Op::Gemm(o) => o.params(),
            Op::Norm(o) => o.params(),
            Op::Embedding(o) => o.params(),
            _ => 0,
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
        }
    }
}
