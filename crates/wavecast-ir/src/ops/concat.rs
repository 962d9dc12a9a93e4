//! Concatenation along one axis (Inception branches, U-Net skips, attention context): every
//! input is copied into its slice of the output. Pure data movement.

use crate::ops::{MemCopy, Op};
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concat {
    /// Elements of the output (the sum of the inputs' elements).
    pub elements: u64,
    /// Tensors joined.
    pub inputs: u32,
    pub dtype: DType,
}

impl Concat {
    pub fn new(elements: u64, inputs: u32, dtype: DType) -> Concat {
        Concat { elements, inputs, dtype: dtype.vector_storage() }
    }

    pub fn flops(&self) -> f64 {
        0.0
    }

    /// Every element read once and written once.
    pub fn bytes(&self) -> f64 {
        2.0 * self.elements as f64 * self.dtype.size_bytes() as f64
    }

    /// The gradient is split back into the inputs' slices; consumers need them contiguous, so
    /// it is counted as one copy of the whole tensor.
    pub fn backward(&self) -> Vec<Op> {
        vec![Op::MemCopy(MemCopy { bytes: self.bytes() })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concat_moves_each_element_twice() {
        let c = Concat::new(1000, 4, DType::Fp16);
        assert_eq!(c.bytes(), 4000.0);
        assert_eq!(c.flops(), 0.0);
        assert_eq!(c.backward()[0].bytes(), 4000.0);
    }
}
