//! Row softmax (and its gradient): one read and one write of the tensor, a row reduction inside.

use crate::ops::Op;
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Softmax {
    pub rows: u64,
    pub cols: u64,
    pub dtype: DType,
    /// The gradient kernel reads y and dy and writes dx.
    #[serde(default)]
    pub backward: bool,
}

impl Softmax {
    pub fn new(rows: u64, cols: u64, dtype: DType) -> Softmax {
        Softmax { rows, cols, dtype: dtype.vector_storage(), backward: false }
    }

    fn elements(&self) -> f64 {
        self.rows as f64 * self.cols as f64
    }

    pub fn flops(&self) -> f64 {
        // max, subtract, exp, sum, divide; the gradient is a dot product and a fused multiply-add.
        let per = if self.backward { 3.0 } else { 5.0 };
        per * self.elements()
    }

    pub fn bytes(&self) -> f64 {
        let tensors = if self.backward { 3.0 } else { 2.0 };
        tensors * self.elements() * self.dtype.size_bytes() as f64
    }

    pub fn backward(&self) -> Vec<Op> {
        vec![Op::Softmax(Softmax { backward: true, ..self.clone() })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_counts() {
        let s = Softmax::new(4, 8, DType::Fp32);
        assert_eq!(s.flops(), 160.0);
        assert_eq!(s.bytes(), 2.0 * 32.0 * 4.0);
        assert_eq!(s.backward()[0].bytes(), 3.0 * 32.0 * 4.0);
    }
}
