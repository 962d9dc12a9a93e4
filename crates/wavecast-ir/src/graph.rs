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
