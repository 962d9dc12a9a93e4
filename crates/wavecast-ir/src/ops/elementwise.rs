//! Element-wise operators: one output element per input element, memory-bound on every GPU.

use crate::ops::Op;
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EwKind {
    Add,
    Mul,
    Div,
    Pow,
    Tanh,
    Sigmoid,
    Relu,
    Gelu,
    Silu,
    /// SwiGLU's fused `silu(gate) * up`.
    SiluMul,
    Exp,
    Rotary,
    Dropout,
    Where,
    Copy,
    /// Gradient of an element-wise op: combines the incoming gradient with saved tensors.
    Grad,
}

impl EwKind {
    /// FLOPs per output element (transcendentals counted as a few FLOPs each).
    pub fn flops_per_element(self) -> f64 {
        match self {
            EwKind::Add | EwKind::Mul | EwKind::Div | EwKind::Relu | EwKind::Where => 1.0,
            EwKind::Pow | EwKind::Grad => 2.0,
            EwKind::Dropout => 3.0,
            EwKind::Exp | EwKind::Tanh | EwKind::Sigmoid => 4.0,
            EwKind::Silu => 5.0,
            EwKind::SiluMul | EwKind::Rotary => 6.0,
            EwKind::Gelu => 8.0,
            EwKind::Copy => 0.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Elementwise {
    pub kind: EwKind,
    pub elements: u64,
    /// Tensors read (a scalar operand is not a tensor).
    pub tensor_inputs: u32,
    pub dtype: DType,
}

impl Elementwise {
    pub fn new(kind: EwKind, elements: u64, tensor_inputs: u32, dtype: DType) -> Elementwise {
        Elementwise { kind, elements, tensor_inputs, dtype: dtype.vector_storage() }
    }

    pub fn flops(&self) -> f64 {
        self.kind.flops_per_element() * self.elements as f64
    }

    pub fn bytes(&self) -> f64 {
        let n = self.elements as f64;
        let e = self.dtype.size_bytes() as f64;
        // Dropout also writes a one-byte keep-mask for the backward pass.
        let mask = if self.kind == EwKind::Dropout { n } else { 0.0 };
        n * e * (self.tensor_inputs as f64 + 1.0) + mask
    }

    /// Unary ops need the saved input and the incoming gradient; a product needs one gradient
    /// per operand; a sum passes its gradient through and costs a copy per operand.
    pub fn backward(&self) -> Vec<Op> {
        let grad = |inputs: u32| {
            Op::Elementwise(Elementwise {
                kind: EwKind::Grad,
                elements: self.elements,
                tensor_inputs: inputs,
                dtype: self.dtype,
            })
        };
        match self.kind {
            EwKind::Copy | EwKind::Where => vec![grad(1)],
            EwKind::Add => (0..self.tensor_inputs.max(1)).map(|_| grad(1)).collect(),
            EwKind::Mul | EwKind::Div => (0..self.tensor_inputs.max(1)).map(|_| grad(2)).collect(),
            EwKind::SiluMul => vec![grad(3), grad(3)],
            EwKind::Dropout => vec![Op::Elementwise(Elementwise {
                kind: EwKind::Grad,
                elements: self.elements,
                tensor_inputs: 1,
                dtype: self.dtype,
            })],
            _ => vec![grad(2)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_add_moves_three_tensors() {
        let e = Elementwise::new(EwKind::Add, 1000, 2, DType::Fp32);
        assert_eq!(e.bytes(), 12_000.0);
        assert_eq!(e.flops(), 1000.0);
    }

    #[test]
    fn tf32_vector_ops_store_fp32_and_dropout_writes_a_mask() {
        let e = Elementwise::new(EwKind::Dropout, 10, 1, DType::Tf32);
        assert_eq!(e.dtype, DType::Fp32);
        assert_eq!(e.bytes(), 10.0 * 4.0 * 2.0 + 10.0);
    }

    #[test]
    fn mul_backward_is_one_grad_per_operand() {
        let e = Elementwise::new(EwKind::Mul, 64, 2, DType::Bf16);
        let bw = e.backward();
        assert_eq!(bw.len(), 2);
        assert_eq!(bw[0].bytes(), 64.0 * 2.0 * 3.0);
    }
}
