//! The operator graph: an ordered list of operators with the phase they run in and how many
//! times they repeat (a transformer layer is stored once and repeated, which keeps a 96-layer
//! model as cheap to predict as a 1-layer one).

use crate::dims::{DimError, MAX_DIM, MAX_ELEMENTS, MAX_WORK};
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
/// optimizer's states, (mixed precision) an FP32 master copy, and the activations autograd must
/// keep for the weight gradients (every linear layer's input; wavecast models no activation
/// checkpointing). Other activations, workspaces and the CUDA context are left out, so a set-up
/// whose floor exceeds a GPU's memory surely does not fit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ResidentFloor {
    pub weights: f64,
    pub gradients: f64,
    pub optimizer_states: f64,
    pub master_weights: f64,
    pub saved_activations: f64,
    /// Inference: the largest linear layer's input and output, both resident while it runs
    /// (the LM head's logits over every position, at long sequences). Training counts what
    /// autograd saves instead.
    pub working_activations: f64,
}

impl ResidentFloor {
    pub fn total(&self) -> f64 {
        self.weights + self.gradients + self.optimizer_states + self.master_weights + self.saved_activations + self.working_activations
    }
}

/// The input a linear or convolution layer's weight gradient is computed from (autograd saves
/// it in the forward pass), in bytes; `None` for other ops.
fn saved_input_bytes(op: &Op) -> Option<f64> {
    match op {
        Op::Gemm(g) if g.kind == crate::ops::GemmKind::Linear && !g.shared_weight => Some(g.batch as f64 * g.m as f64 * g.k as f64 * g.dtype.size_bytes() as f64),
        Op::Conv(c) if c.pass == crate::ops::ConvPass::Forward => Some(c.input_elements() * c.dtype.size_bytes() as f64),
        _ => None,
    }
}

/// A linear or convolution layer's input and output together, in bytes; `None` for other ops.
fn layer_working_bytes(op: &Op) -> Option<f64> {
    match op {
        Op::Gemm(g) if g.kind == crate::ops::GemmKind::Linear => Some(g.batch as f64 * g.m as f64 * (g.k + g.n) as f64 * g.dtype.size_bytes() as f64),
        Op::Conv(c) if c.pass == crate::ops::ConvPass::Forward => Some((c.input_elements() + c.output_elements()) * c.dtype.size_bytes() as f64),
        _ => None,
    }
}

/// Where a node sits in the model, as the builder that emitted it knows. Passes that treat the
/// repeated layer block, the routed experts or the output head differently read this, never
/// the node's name (which is for people).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Not known: graphs read from other tools (NeuSight's, ONNX), CNNs, encoder-decoders.
    #[default]
    Unscoped,
    /// Before the layer block (embeddings).
    Prologue,
    /// Inside the repeated layer block (shared experts included).
    Layer,
    /// A routed expert inside the layer block (its repeat counts the active experts).
    Expert,
    /// Inside the layer block, the routed tokens' gather into expert order and their weighted
    /// sum back: work a fused MoE kernel does around its experts.
    Routing,
    /// Inside the layer block, work that grows with the tokens each query sees, not with the
    /// batch's tokens alone (the sparse-attention indexer's scores and top-k pick), as the
    /// attention core does.
    OverContext,
    /// After the layer block (final norm, output head, sampling).
    Head,
}

impl Role {
    /// Whether the node belongs to the repeated layer block.
    pub fn in_layers(self) -> bool {
        matches!(self, Role::Layer | Role::Expert | Role::Routing | Role::OverContext)
    }

    /// Whether `op` in this role grows with the tokens each query sees, not with the batch's
    /// tokens alone: the attention kernels, the gated delta rule (its state per sequence) and
    /// the work marked [`Role::OverContext`]. Serving prices these per sequence and context
    /// length, the rest per token.
    pub fn sees_context(self, op: &Op) -> bool {
        matches!(op, Op::Attention(_) | Op::GatedDelta(_)) || self == Role::OverContext
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    pub op: Op,
    pub phase: Phase,
    /// How many times this node runs (layers × per-layer occurrences).
    pub repeat: u64,
    #[serde(default)]
    pub role: Role,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    pub name: String,
    pub nodes: Vec<Node>,
    /// Weights held on the GPU that no node of this step runs: the routed experts no token
    /// reaches (a decode step of a few tokens wakes a few of them, yet all stay resident and
    /// all are trained). Counted in [`Graph::params`] and the resident floor, never priced.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_params: u64,
    /// Bytes of those weights, in the formats their experts run in.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub idle_weight_bytes: f64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

impl Graph {
    pub fn new(name: impl Into<String>) -> Graph {
        Graph { name: name.into(), nodes: Vec::new(), idle_params: 0, idle_weight_bytes: 0.0 }
    }

    /// Appends a node whose place in the model is not known ([`Role::Unscoped`]).
    pub fn push(&mut self, name: impl Into<String>, op: Op, phase: Phase, repeat: u64) {
        self.push_in(Role::Unscoped, name, op, phase, repeat);
    }

    /// Appends a node in `role`.
    pub fn push_in(&mut self, role: Role, name: impl Into<String>, op: Op, phase: Phase, repeat: u64) {
        self.nodes.push(Node { name: name.into(), op, phase, repeat, role });
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

    /// Trainable parameters: the forward operators' and the idle experts' (saturating;
    /// [`Graph::check_scale`] rejects graphs where that matters).
    pub fn params(&self) -> u64 {
        self.forward().map(|n| n.op.params().saturating_mul(n.repeat)).fold(self.idle_params, u64::saturating_add)
    }

    /// Records that `idle` more copies of what the forward nodes from index `from` on hold
    /// for `active` copies stay resident without running: the experts of a layer that no
    /// token reached, beside the `active` ones those nodes compute.
    pub fn hold_idle(&mut self, from: usize, idle: u64, active: u64) {
        if idle == 0 || active == 0 {
            return;
        }
        for n in self.nodes[from..].iter().filter(|n| n.phase == Phase::Forward) {
            let params = n.op.params().saturating_mul(n.repeat / active).saturating_mul(idle);
            self.idle_params = self.idle_params.saturating_add(params);
            self.idle_weight_bytes += params as f64 * n.op.dtype().size_bytes() as f64;
        }
    }

    /// Checks that every count stays where arithmetic on it is exact: each node repeats at most
    /// [`MAX_DIM`] times, the parameters total at most [`MAX_ELEMENTS`], and each node's work
    /// (FLOPs and bytes, repeats included) is finite and at most [`MAX_WORK`]. Readers build
    /// graphs from user files, so predictions call this before pricing anything.
    pub fn check_scale(&self) -> Result<(), DimError> {
        let mut params: u128 = u128::from(self.idle_params);
        for n in &self.nodes {
            if n.repeat > MAX_DIM {
                return Err(DimError::TooLarge { name: format!("repeat count of '{}'", n.name), value: n.repeat, max: MAX_DIM });
            }
            params += u128::from(n.op.params()) * u128::from(n.repeat);
            let reps = n.repeat as f64;
            let work = (n.op.flops() * reps).max(n.op.bytes() * reps);
            if !(work.is_finite() && work <= MAX_WORK) {
                return Err(DimError::Invalid { what: format!("operator '{}' does {work:.3e} FLOPs or bytes of work, more than the supported {MAX_WORK:.0e}", n.name) });
            }
        }
        if params > u128::from(MAX_ELEMENTS) {
            return Err(DimError::TooLarge { name: "parameter count".into(), value: u64::try_from(params).unwrap_or(u64::MAX), max: MAX_ELEMENTS });
        }
        Ok(())
    }

    /// What must be resident on the GPU during a step, at least (see [`ResidentFloor`]).
    pub fn resident_floor(&self) -> ResidentFloor {
        let weights: f64 = self.idle_weight_bytes + self.forward().map(|n| n.op.params() as f64 * n.repeat as f64 * n.op.dtype().size_bytes() as f64).sum::<f64>();
        let training = self.nodes.iter().any(|n| n.phase == Phase::Backward);
        let params = self.params() as f64;
        let mut floor = ResidentFloor { weights, gradients: if training { weights } else { 0.0 }, ..ResidentFloor::default() };
        if training {
            floor.saved_activations = self.forward().filter_map(|n| saved_input_bytes(&n.op).map(|b| b * n.repeat as f64)).sum();
        } else {
            floor.working_activations = self.forward().filter_map(|n| layer_working_bytes(&n.op)).fold(0.0, f64::max);
        }
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
                    role: n.role,
                })
            })
            .collect();
        self.nodes.extend(bw);
    }

    /// Appends one optimizer step over all parameters, as plain PyTorch runs it (the default
    /// `foreach` passes; the workloads built per op are plain PyTorch).
    pub fn add_optimizer(&mut self, kind: OptimizerKind) {
        let params = self.params();
        if params > 0 {
            self.push(
                "optimizer.step",
                Op::Optimizer(Optimizer::plain_pytorch(kind, params)),
                Phase::Optimizer,
                1,
            );
        }
    }

    /// Runs the graph's optimizer step as `implementation` (plain PyTorch's `foreach` passes
    /// unless the user's step fuses them).
    pub fn set_optimizer_implementation(&mut self, implementation: crate::ops::OptimizerImpl) {
        for n in &mut self.nodes {
            if let Op::Optimizer(o) = &mut n.op {
                o.implementation = implementation;
            }
        }
    }

    /// Appends gradient-norm clipping over all parameters ([`grad_clip_ops`]), before the
    /// optimizer step.
    pub fn add_grad_clip(&mut self) {
        let params = self.params();
        if params > 0 {
            let [norm, scale] = grad_clip_ops(params);
            self.push("optimizer.clip_norm", norm, Phase::Optimizer, 1);
            self.push("optimizer.clip_scale", scale, Phase::Optimizer, 1);
        }
    }

    pub fn gemm_count(&self) -> u64 {
        self.nodes.iter().filter(|n| matches!(n.op, Op::Gemm(_))).map(|n| n.repeat).fold(0, u64::saturating_add)
    }
}

/// Gradient-norm clipping, on by default in the LLM training stacks (Megatron, NeMo,
/// torchtitan, Hugging Face's Trainer): the global norm reads every gradient once, the scaling
/// reads and writes each once more. Gradients are clipped in FP32 (mixed precision's main
/// gradients). Measured on an H200 (`data/measurements/h200`): 4.3 ms for 1.24 B FP32 gradients,
/// these three passes at 3.5 ms plus the per-tensor launches.
pub fn grad_clip_ops(params: u64) -> [Op; 2] {
    [
        Op::Reduction(crate::ops::Reduction { elements_in: params, elements_out: 1, dtype: DType::Fp32 }),
        Op::Elementwise(crate::ops::Elementwise { kind: crate::ops::EwKind::Mul, elements: params, tensor_inputs: 1, dtype: DType::Fp32 }),
    ]
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

    #[test]
    fn check_scale_rejects_repeats_parameters_and_work_past_the_limits() {
        let fc = || Op::Gemm(Gemm::linear(8, 1 << 20, 1 << 20, false, DType::Fp32).unwrap());
        let mut g = Graph::new("t");
        g.push("fc", fc(), Phase::Forward, 1);
        assert_eq!(g.check_scale(), Ok(()));
        g.nodes[0].repeat = MAX_DIM + 1;
        assert!(matches!(g.check_scale(), Err(DimError::TooLarge { .. })));
        // 2^40 params per node × 2^11 repeats: each node is fine, the total is not.
        g.nodes[0].repeat = 1 << 11;
        assert!(matches!(g.check_scale(), Err(DimError::TooLarge { ref name, .. }) if name == "parameter count"));
        assert_eq!(g.params(), 1 << 51);
        let mut g = Graph::new("t");
        g.push("huge", Op::Gemm(Gemm::linear(1 << 20, 1 << 20, 1 << 20, false, DType::Fp32).unwrap()), Phase::Forward, 1 << 20);
        assert!(matches!(g.check_scale(), Err(DimError::Invalid { .. })), "2^61 FLOPs × 2^20 repeats");
        let mut g = Graph::new("t");
        g.push("table", Op::Embedding(crate::ops::Embedding { tokens: 8, hidden: u64::MAX, vocab: u64::MAX, dtype: DType::Fp32 }), Phase::Forward, 1);
        assert_eq!(g.params(), u64::MAX);
        assert!(g.check_scale().is_err());
    }
}
