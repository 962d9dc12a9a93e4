//! Plain data movement (copies, `contiguous`, fills): bytes only.

use crate::ops::Op;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemCopy {
    /// Bytes read plus bytes written.
    pub bytes: f64,
}

impl MemCopy {
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
