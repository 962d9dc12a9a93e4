//! Layer norm and RMS norm over the last dimension, with their gradients.

use crate::ops::{Op, Reduction};
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NormKind {
    LayerNorm,
    RmsNorm,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Norm {
    pub kind: NormKind,
    pub rows: u64,
    pub cols: u64,
    pub dtype: DType,
    #[serde(default)]
    pub backward: bool,
    /// Layer norm without a bias vector (e.g. some decoders); RMS norm never has one.
    #[serde(default = "yes")]
    pub has_bias: bool,
}

fn yes() -> bool {
    true
}

impl Norm {
    pub fn new(kind: NormKind, rows: u64, cols: u64, dtype: DType) -> Norm {
        Norm { kind, rows, cols, dtype: dtype.vector_storage(), backward: false, has_bias: kind == NormKind::LayerNorm }
    }

    fn elements(&self) -> f64 {
        self.rows as f64 * self.cols as f64
    }

    pub fn params(&self) -> u64 {
        if self.backward {
            return 0;
        }
        match self.kind {
            NormKind::LayerNorm if self.has_bias => self.cols.saturating_mul(2),
            _ => self.cols,
        }
    }

    pub fn flops(&self) -> f64 {
        let per = match (self.kind, self.backward) {
            (NormKind::LayerNorm, false) => 7.0,
            (NormKind::RmsNorm, false) => 4.0,
            (NormKind::LayerNorm, true) => 10.0,
            (NormKind::RmsNorm, true) => 7.0,
        };
        per * self.elements()
    }

    pub fn bytes(&self) -> f64 {
        let e = self.dtype.size_bytes() as f64;
        let tensors = if self.backward { 3.0 } else { 2.0 };
        tensors * self.elements() * e + self.cols as f64 * e * (1.0 + self.has_bias as u8 as f64)
    }

    /// The input-gradient kernel plus one column reduction per affine parameter vector.
    pub fn backward(&self) -> Vec<Op> {
        let mut ops = vec![Op::Norm(Norm { backward: true, ..self.clone() })];
        let param_vectors = if self.has_bias && self.kind == NormKind::LayerNorm { 2 } else { 1 };
        for _ in 0..param_vectors {
            ops.push(Op::Reduction(Reduction {
                elements_in: self.rows * self.cols,
                elements_out: self.cols,
                dtype: self.dtype,
            }));
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_norm_counts_and_params() {
        let n = Norm::new(NormKind::LayerNorm, 10, 100, DType::Fp32);
        assert_eq!(n.params(), 200);
        assert_eq!(n.bytes(), 2.0 * 1000.0 * 4.0 + 200.0 * 4.0);
        assert_eq!(n.flops(), 7000.0);
        assert_eq!(n.backward().len(), 3);
    }

    #[test]
    fn rms_norm_has_one_vector() {
        let n = Norm::new(NormKind::RmsNorm, 2, 8, DType::Bf16);
        assert_eq!(n.params(), 8);
        assert_eq!(n.bytes(), 2.0 * 16.0 * 2.0 + 8.0 * 2.0);
        assert_eq!(n.backward().len(), 2);
    }
}
