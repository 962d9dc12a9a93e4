//! Ops that no kernel model has learned or measured yet, priced the same way by every
//! predictor: their roofline time plus the GPU's gap between kernels for each kernel they launch
//! inside a model, as every other op's in-model time carries it. The learned predictors must
//! never see such an op: their features describe GEMM-like shapes, and a shape they cannot read
//! falls back to nonsense (the gated delta rule came out 3·10⁴ times its roofline).
//!
//! [`Unmodelled`] wraps every predictor the registry builds, so `predict`, `serve-sim`, `plan`
//! and `eval` agree on these ops whatever `--predictor` says.

use crate::sustained::IN_MODEL_KERNEL_US;
use crate::{Context, Estimate, OpTime, Predictor};
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

/// The time of an op no kernel model covers, or `None` for an op the predictors model.
pub fn seconds(op: &Op, gpu: &Gpu) -> Option<f64> {
    match op {
        Op::GatedDelta(d) => Some(crate::roofline::roofline_seconds(op, gpu) + d.kernels() as f64 * IN_MODEL_KERNEL_US * 1e-6),
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
