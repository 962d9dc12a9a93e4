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

/// How the update runs over the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptimizerImpl {
    /// One kernel reads each parameter's tensors once and writes the results (apex's and
    /// Transformer Engine's FusedAdam, `torch.optim.Adam(fused=True)`).
    #[default]
    Fused,
    /// PyTorch's default multi-tensor path (`foreach`): one pass over all parameters per
    /// arithmetic step, each reading and writing whole tensors.
    Foreach,
}

impl OptimizerKind {
    /// Per-parameter tensors read and written. Fused, Adam reads p, g, m, v and writes p, m, v.
    /// PyTorch's foreach Adam runs seven passes (lerp of m; v·β₂; v + g²; √v into a temporary;
    /// ÷ bias correction; + ε; p − m / temporary) touching 3 + 2 + 3 + 2 + 2 + 2 + 4 = 18
    /// tensors, as its kernels do on an H100 (`bench/data/h100_device/profile_5.csv`: 32.6 ms
    /// for Llama-3.2-1B's 1.24 B FP32 parameters, 2.7 TB/s); SGD with momentum three passes
    /// (buffer · momentum, + g, p − buffer), plain SGD one.
    fn tensors_touched(self, implementation: OptimizerImpl) -> f64 {
        match (self, implementation) {
            (OptimizerKind::Adam, OptimizerImpl::Fused) => 7.0,
            (OptimizerKind::Adam, OptimizerImpl::Foreach) => 18.0,
            (OptimizerKind::SgdMomentum, OptimizerImpl::Fused) => 5.0,
            (OptimizerKind::SgdMomentum, OptimizerImpl::Foreach) => 8.0,
            (OptimizerKind::Sgd, _) => 3.0,
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
    #[serde(default)]
    pub implementation: OptimizerImpl,
}

impl Optimizer {
    /// The step as plain PyTorch runs it over `params` FP32 parameters: torch.optim's default
    /// foreach passes (the workloads built op by op are plain PyTorch).
    pub fn plain_pytorch(kind: OptimizerKind, params: u64) -> Optimizer {
        Optimizer { kind, params, state_dtype: DType::Fp32, implementation: OptimizerImpl::Foreach }
    }

    pub fn flops(&self) -> f64 {
        self.kind.flops_per_param() * self.params as f64
    }

    pub fn bytes(&self) -> f64 {
        self.kind.tensors_touched(self.implementation) * self.params as f64 * self.state_dtype.size_bytes() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_moves_28_bytes_per_fp32_param() {
        let o = Optimizer { kind: OptimizerKind::Adam, params: 1000, state_dtype: DType::Fp32, implementation: OptimizerImpl::Fused };
        assert_eq!(o.bytes(), 28_000.0);
    }
}
