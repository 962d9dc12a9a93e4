//! Ops that no kernel model has learned or measured yet, priced the same way by every
//! predictor: their physical floor (or the steps they must take one after another, when that
//! is longer) plus the GPU's gap between kernels for each kernel they launch inside a model, as
//! every other op's in-model time carries it. The learned predictors must
//! never see such an op: their features describe GEMM-like shapes, and a shape they cannot read
//! falls back to nonsense (the gated delta rule came out 3·10⁴ times its roofline).
//!
//! [`Unmodelled`] wraps every predictor the registry builds, so `predict`, `serve-sim`, `plan`
//! and `eval` agree on these ops whatever `--predictor` says.

use crate::sustained::{ACHIEVABLE_BANDWIDTH, IN_MODEL_KERNEL_US};
use crate::{Context, Estimate, OpTime, Predictor};
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

/// Microseconds one step of the gated delta rule's chunk-to-chunk state pass takes, whatever
/// the GPU: AIConfigurator's measured tables (`linear_attention/*/gdn_perf`: one sequence of
/// Qwen3.5-397B's heads at TP 4, 1,024 → 8,192 tokens) grow by 2.3–4.2 µs per chunk of 64
/// tokens on B200, GB200 and H100 under SGLang, vLLM and TensorRT-LLM alike (3.4–4.5 on RTX PRO
/// 6000, 7.7–8.8 on L40S): a latency of the sequential loop, not a throughput, so no datasheet
/// figure scales it.
pub const GATED_DELTA_STEP_US: f64 = 3.0;

/// The time of an op no kernel model covers, or `None` for an op the predictors model.
pub fn seconds(op: &Op, gpu: &Gpu) -> Option<f64> {
    match op {
        Op::GatedDelta(d) => {
            // Its FLOPs at the dense peak and its bytes at the achievable bandwidth (the
            // physical floor every other op keeps), or its sequential steps, whichever is
            // longer; then the gap before each of its kernels.
            let (compute, memory) = crate::physics::roofline_terms(op, gpu);
            let work = compute.max(memory / ACHIEVABLE_BANDWIDTH);
            let sequential = d.sequential_steps() * GATED_DELTA_STEP_US * 1e-6;
            Some(work.max(sequential) + d.kernels() as f64 * IN_MODEL_KERNEL_US * 1e-6)
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
