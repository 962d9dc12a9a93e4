//! Plain data movement (copies, `contiguous`, fills): bytes only.

use crate::ops::Op;
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemCopy {
    /// Bytes read plus bytes written.
    pub bytes: f64,
}

impl MemCopy {
    /// Copying `elements` values of `dtype`: each is read once and written once.
    pub fn copy(elements: u64, dtype: DType) -> MemCopy {
        MemCopy { bytes: 2.0 * elements as f64 * dtype.size_bytes() as f64 }
    }

    /// Touching `elements` values of `dtype` once: a fill, or a transfer whose reads and writes
    /// are both already counted in `elements`.
    pub fn touch(elements: u64, dtype: DType) -> MemCopy {
        MemCopy { bytes: elements as f64 * dtype.size_bytes() as f64 }
    }

    pub fn flops(&self) -> f64 {
        0.0
    }

    pub fn bytes(&self) -> f64 {
        self.bytes
    }

    pub fn backward(&self) -> Vec<Op> {
        vec![Op::MemCopy(self.clone())]
    }
}
