//! One measured operator: what ran, on which GPU, how long it took, which kernels it launched.

use serde::{Deserialize, Serialize};
use wavecast_ir::ops::{Elementwise, EwKind, Gemm, Norm, NormKind, Softmax};
use wavecast_ir::{DType, Op, Phase};

/// The operator and its shape, in the terms of the measurement (not yet our IR).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OpShape {
    /// `batch` products of (m×k)·(k×n).
    Bmm { batch: u64, m: u64, n: u64, k: u64 },
    /// `m` rows through a (k→n) layer.
    Linear { m: u64, n: u64, k: u64 },
    /// Element-wise op named as PyTorch does (`add`, `mulu` = with a scalar, `gelu`, …) on b×h.
    Vector { name: String, b: u64, h: u64 },
    Softmax { b: u64, h: u64 },
    LayerNorm { b: u64, h: u64 },
    Conv2d { batch: u64, c_in: u64, c_out: u64, kernel: u64, size: u64, stride: u64, padding: u64 },
}

/// Shortest and longest measured time accepted, in ms: a nanosecond (every GPU timer's
/// resolution) and a day. Outside that a figure is corrupt, and errors relative to it would
/// stop being finite.
pub const MEASURED_MS: (f64, f64) = (1e-6, 86_400e3);

/// Checks a measured time in ms is a plausible one (see [`MEASURED_MS`]).
pub fn measured_ms(what: &str, ms: f64) -> Result<f64, String> {
    let (lo, hi) = MEASURED_MS;
    if ms.is_finite() && (lo..=hi).contains(&ms) {
        Ok(ms)
    } else {
        Err(format!("{what} must be a time between {lo} ms (1 ns) and {hi} ms (a day), got {}", wavecast_ir::quoted(ms)))
    }
}

/// One launched kernel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    pub registers_per_thread: Option<u32>,
    pub shared_mem_bytes: Option<u64>,
    pub duration_us: Option<f64>,
}

impl Kernel {
    pub fn blocks(&self) -> Option<u64> {
        self.grid.and_then(|g| g[0].checked_mul(g[1])?.checked_mul(g[2]))
    }
    pub fn threads_per_block(&self) -> Option<u64> {
        self.block.and_then(|b| b[0].checked_mul(b[1])?.checked_mul(b[2]))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub shape: OpShape,
    pub dtype: DType,
    /// Catalog id of the GPU.
    pub gpu: String,
    /// Wall time of the op call in milliseconds (NeuSight: CUDA events, mean of the 5 fastest of 25).
    pub latency_ms: f64,
    pub phase: Phase,
    /// The op's main kernel with its launch configuration.
    pub main_kernel: Option<Kernel>,
    /// Every launched kernel, in order, when recorded.
    pub kernels: Vec<Kernel>,
    pub warps_per_sm: Option<f64>,
    pub blocks_per_sm: Option<f64>,
    /// e.g. "torch p2.1.0, cu121, cudnn 8902".
    pub software: String,
    /// File and line the row came from.
    pub provenance: String,
}

impl Measurement {
    /// The operator in our IR, when the IR has one for this shape (conv does not yet).
    pub fn to_op(&self) -> Option<Op> {
        let dt = self.dtype;
        Some(match &self.shape {
            OpShape::Bmm { batch, m, n, k } => Op::Gemm(Gemm::bmm(*batch, *m, *k, *n, dt).ok()?),
            OpShape::Linear { m, n, k } => Op::Gemm(Gemm::linear(*m, *k, *n, true, dt).ok()?),
            OpShape::Softmax { b, h } => Op::Softmax(Softmax::new(*b, *h, dt)),
            OpShape::LayerNorm { b, h } => Op::Norm(Norm::new(NormKind::LayerNorm, *b, *h, dt)),
            OpShape::Vector { name, b, h } => {
                let (kind, inputs) = vector_kind(name)?;
                Op::Elementwise(Elementwise::new(kind, b.checked_mul(*h)?, inputs, dt))
            }
            OpShape::Conv2d { .. } => return None,
        })
    }

    /// Op class name used in per-class reports (bmm, linear, elementwise, softmax, ln, conv).
    pub fn class_name(&self) -> &'static str {
        match self.shape {
            OpShape::Bmm { .. } => "bmm",
            OpShape::Linear { .. } => "linear",
            OpShape::Vector { .. } => "elementwise",
            OpShape::Softmax { .. } => "softmax",
            OpShape::LayerNorm { .. } => "layernorm",
            OpShape::Conv2d { .. } => "conv",
        }
    }
}

/// PyTorch op name → element-wise kind and tensor-input count (`u` suffix: scalar operand).
pub fn vector_kind(name: &str) -> Option<(EwKind, u32)> {
    let (base, unary_scalar) = match name.strip_suffix('u') {
        Some(b) if matches!(b, "add" | "mul" | "div" | "pow") => (b, true),
        _ => (name, false),
    };
    let binary = if unary_scalar { 1 } else { 2 };
    Some(match base {
        "add" => (EwKind::Add, binary),
        "mul" => (EwKind::Mul, binary),
        "div" => (EwKind::Div, binary),
        "pow" => (EwKind::Pow, binary),
        "tanh" => (EwKind::Tanh, 1),
        "relu" => (EwKind::Relu, 1),
        "gelu" => (EwKind::Gelu, 1),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_names_map_to_kinds() {
        assert_eq!(vector_kind("addu"), Some((EwKind::Add, 1)));
        assert_eq!(vector_kind("mul"), Some((EwKind::Mul, 2)));
        assert_eq!(vector_kind("relu"), Some((EwKind::Relu, 1)));
        assert_eq!(vector_kind("menu"), None);
    }
}
