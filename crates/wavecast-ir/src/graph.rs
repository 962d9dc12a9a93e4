//! The operator graph: an ordered list of operators with the phase they run in and how many
//! times they repeat (a transformer layer is stored once and repeated, which keeps a 96-layer
//! model as cheap to predict as a 1-layer one).

use crate::ops::{Optimizer, OptimizerKind};
use crate::{DType, Op};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Forward,
    Backward,
    Optimizer,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::Backward => "backward",
            Phase::Optimizer => "optimizer",
        }
    }
}

/// Bytes a step cannot do without: the weights, and when training a gradient per weight, the
/// optimizer's states and (mixed precision) an FP32 master copy. Activations, workspaces and the
/// CUDA context are left out, so a set-up whose floor exceeds a GPU's memory surely does not fit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ResidentFloor {
    pub weights: f64,
    pub gradients: f64,
    pub optimizer_states: f64,
    pub master_weights: f64,
}

impl ResidentFloor {
    pub fn total(&self) -> f64 {
        self.weights + self.gradients + self.optimizer_states + self.master_weights
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    pub op: Op,
    pub phase: Phase,
    /// How many times this node runs (layers × per-layer occurrences).
    pub repeat: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    pub name: String,
    pub nodes: Vec<Node>,
}

impl Graph {
    pub fn new(name: impl Into<String>) -> Graph {
        Graph { name: name.into(), nodes: Vec::new() }
    }

    pub fn push(&mut self, name: impl Into<String>, op: Op, phase: Phase, repeat: u64) {
        self.nodes.push(Node { name: name.into(), op, phase, repeat });
    }

    pub fn forward(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.phase == Phase::Forward)
    }

    /// Total FLOPs, repeats included.
    pub fn total_flops(&self) -> f64 {
        self.nodes.iter().map(|n| n.op.flops() * n.repeat as f64).sum()
    }

    pub fn flops_in(&self, phase: Phase) -> f64 {
        self.nodes.iter().filter(|n| n.phase == phase).map(|n| n.op.flops() * n.repeat as f64).sum()
    }

    /// Trainable parameters owned by the forward operators.
    pub fn params(&self) -> u64 {
        self.forward().map(|n| n.op.params() * n.repeat).sum()
    }

    /// What must be resident on the GPU during a step, at least (see [`ResidentFloor`]).
    pub fn resident_floor(&self) -> ResidentFloor {
        let weights: f64 = self.forward().map(|n| n.op.params() as f64 * n.repeat as f64 * n.op.dtype().size_bytes() as f64).sum();
        let training = self.nodes.iter().any(|n| n.phase == Phase::Backward);
        let params = self.params() as f64;
        let mut floor = ResidentFloor { weights, gradients: if training { weights } else { 0.0 }, ..ResidentFloor::default() };
        for n in &self.nodes {
            if let Op::Optimizer(o) = &n.op {
                let state = o.state_dtype.size_bytes() as f64;
                floor.optimizer_states += o.kind.states_per_param() as f64 * o.params as f64 * state;
                // Mixed precision keeps a full-precision master copy of weights stored narrower.
                if params > 0.0 && weights / params < state {
                    floor.master_weights += o.params as f64 * state;
                }
            }
        }
        floor
    }

    /// Appends the backward operators of every forward node, in reverse order, as autograd runs them.
    pub fn add_backward(&mut self) {
        let bw: Vec<Node> = self
            .forward()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .flat_map(|n| {
                n.op.backward().into_iter().enumerate().map(move |(i, op)| Node {
                    name: format!("{}.grad{}", n.name, i),
                    op,
                    phase: Phase::Backward,
                    repeat: n.repeat,
                })
            })
            .collect();
        self.nodes.extend(bw);
    }

    /// Appends one optimizer step over all parameters.
    pub fn add_optimizer(&mut self, kind: OptimizerKind) {
        let params = self.params();
        if params > 0 {
            self.push(
                "optimizer.step",
                Op::Optimizer(Optimizer { kind, params, state_dtype: DType::Fp32 }),
                Phase::Optimizer,
                1,
            );
        }
    }

    pub fn gemm_count(&self) -> u64 {
        self.nodes.iter().filter(|n| matches!(n.op, Op::Gemm(_))).map(|n| n.repeat).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Gemm;

    #[test]
    fn backward_and_optimizer_follow_forward() {
        let mut g = Graph::new("t");
        g.push("fc", Op::Gemm(Gemm::linear(8, 4, 2, false, DType::Fp32).unwrap()), Phase::Forward, 3);
        g.add_backward();
        g.add_optimizer(OptimizerKind::Adam);
        assert_eq!(g.params(), 3 * 8);
        assert_eq!(g.flops_in(Phase::Backward), 2.0 * g.flops_in(Phase::Forward));
        assert_eq!(g.nodes.last().unwrap().phase, Phase::Optimizer);
        assert_eq!(g.gemm_count(), 9);
    }
}
