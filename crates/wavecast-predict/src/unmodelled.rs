//! Ops the learned predictors cannot read, priced the same way by all of them: the gated delta
//! rule of hybrid linear attention (Qwen3.5's Gated DeltaNet), which only the modern-GPU
//! kernel model knows (`linear_attention/*/gdn_perf` in AIConfigurator's tables). Their
//! features describe GEMM-like shapes, and a shape they cannot read falls back to nonsense
//! (the gated delta rule came out 3·10⁴ times its roofline), so such an op takes the shipped
//! sustained model's price inside a running model — the ladder's physics rung — never below
//! its physical floor.
//!
//! [`Unmodelled`] wraps every predictor the registry builds except those that price measured
//! shapes themselves (the ladder and the sustained model), so `predict`, `serve-sim`, `plan`
//! and `eval` agree on these ops whatever `--predictor` says.

use crate::sustained::{op_shape, SustainedOps, ACHIEVABLE_BANDWIDTH, IN_MODEL_KERNEL_US};
use crate::{Context, Estimate, OpTime, Predictor};
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

/// The time of an op the learned predictors cannot read, or `None` for one they model.
pub fn seconds(op: &Op, gpu: &Gpu) -> Option<f64> {
    match op {
        Op::GatedDelta(d) => {
            let (compute, memory) = crate::physics::roofline_terms(op, gpu);
            let floor = compute.max(memory / ACHIEVABLE_BANDWIDTH);
            let priced = op_shape(op).and_then(|(shape, precision)| SustainedOps::shipped_ref().shape_seconds(shape, precision, gpu).ok());
            // A GPU whose units the fitted numbers cannot price still pays the floor and the
            // gap before each kernel: never zero.
            Some(priced.unwrap_or(floor + d.kernels() as f64 * IN_MODEL_KERNEL_US * 1e-6).max(floor))
        }
        _ => None,
    }
}

/// A predictor that prices the ops of [`seconds`] itself and passes every other op on.
pub struct Unmodelled(pub Box<dyn Predictor>);

impl Predictor for Unmodelled {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        match seconds(op, gpu) {
            Some(s) => Estimate::Time(OpTime::exact(s)),
            None => self.0.predict(op, gpu, ctx),
        }
    }
}
