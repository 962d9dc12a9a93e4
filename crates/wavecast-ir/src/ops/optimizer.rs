//! Optimizer step over all parameters (multi-tensor kernels: memory-bound).

use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptimizerKind {
    Adam,
    SgdMomentum,
    Sgd,
}

impl OptimizerKind {
    /// Per-parameter tensors read and written: Adam reads p, g, m, v and writes p, m, v.
    fn tensors_touched(self) -> f64 {
        match self {
            OptimizerKind::Adam => 7.0,
            OptimizerKind::SgdMomentum => 5.0,
            OptimizerKind::Sgd => 3.0,
        }
    }

    /// State tensors kept per parameter between steps: Adam's two moments, SGD's momentum.
    pub fn states_per_param(self) -> u64 {
        match self {
            OptimizerKind::Adam => 2,
            OptimizerKind::SgdMomentum => 1,
            OptimizerKind::Sgd => 0,
        }
    }

    fn flops_per_param(self) -> f64 {
        match self {
            OptimizerKind::Adam => 12.0,
            OptimizerKind::SgdMomentum => 4.0,
            OptimizerKind::Sgd => 2.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Optimizer {
    pub kind: OptimizerKind,
    pub params: u64,
    /// Optimizer states and master weights are kept in FP32 under mixed precision.
    pub state_dtype: DType,
}

impl Optimizer {
    pub fn flops(&self) -> f64 {
        self.kind.flops_per_param() * self.params as f64
    }

    pub fn bytes(&self) -> f64 {
        self.kind.tensors_touched() * self.params as f64 * self.state_dtype.size_bytes() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_moves_28_bytes_per_fp32_param() {
        let o = Optimizer { kind: OptimizerKind::Adam, params: 1000, state_dtype: DType::Fp32 };
        assert_eq!(o.bytes(), 28_000.0);
    }
}
