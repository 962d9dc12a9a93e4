//! Reductions (sum over rows, e.g. bias and norm-parameter gradients).

use crate::ops::{Elementwise, EwKind, Op};
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reduction {
    pub elements_in: u64,
    pub elements_out: u64,
    pub dtype: DType,
}

impl Reduction {
    pub fn flops(&self) -> f64 {
        self.elements_in as f64
    }

    pub fn bytes(&self) -> f64 {
        (self.elements_in as f64 + self.elements_out as f64) * self.dtype.size_bytes() as f64
    }

    /// The gradient of a sum is a broadcast copy.
    pub fn backward(&self) -> Vec<Op> {
        vec![Op::Elementwise(Elementwise::new(EwKind::Copy, self.elements_in, 1, self.dtype))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_counts() {
        let r = Reduction { elements_in: 100, elements_out: 10, dtype: DType::Fp16 };
        assert_eq!(r.bytes(), 220.0);
        assert_eq!(r.flops(), 100.0);
    }
}
