//! [`WithConv`]: wraps any predictor and prices the operators of vision and recurrent models
//! that the wrapped predictor's measurement families do not cover.
//!
//! - Convolutions (forward, data and weight gradients, transposed): the convolution model of
//!   `conv.rs`. Depthwise-like convolutions (groups > 1 with at most 8 input channels per
//!   group) are memory-bound and run in PyTorch's own depthwise kernels, not cuDNN's GEMM-like
//!   algorithms; they are priced as a vector kernel moving the same bytes.
//! - Recurrent layers: through the kernels cuDNN launches
//!   ([`Rnn::kernels`](wavecast_ir::ops::Rnn::kernels)) — the gate GEMMs as GEMMs and the gate
//!   math as element-wise kernels, each priced by the wrapped predictor, summed one time step
//!   after the other (no measured LSTM data exist yet; this is roofline physics plus the learned
//!   GEMM and vector models).
//! - Pooling, batch/group norm, concatenation and upsampling: memory-bound, priced as the
//!   wrapped predictor's element-wise kernel with the same bytes and FLOPs per element.
//! - Everything else: the wrapped predictor unchanged.
//!
//! The registry composes it explicitly: a row with `fallbacks: Fallbacks::Vision` (see
//! [`crate::registry::Fallbacks`]) is wrapped by `by_name`.

use crate::conv::{ConvModel, ConvWeights};
use crate::sample::{KERNEL_GAP_S, LAUNCH_GAP_S};
use crate::{Context, Estimate, OpTime, Predictor};
use std::sync::OnceLock;
use wavecast_gpu::Gpu;
use wavecast_ir::ops::{Conv, Elementwise, EwKind};
use wavecast_ir::Op;

pub struct WithConv {
    inner: Box<dyn Predictor>,
    /// The left-out GPU whose convolution model to use, if any.
    holdout: Option<String>,
    /// The convolution model and its interval (ln(measured / predicted) quantiles on held-out
    /// GPUs), read from the shipped weights on the first convolution: most workloads have none,
    /// and parsing the weights would dominate their start-up.
    conv: OnceLock<Result<(ConvModel, [f64; 2]), String>>,
}

impl WithConv {
    pub fn new(inner: Box<dyn Predictor>, weights: &ConvWeights, holdout: Option<&str>) -> WithConv {
        let conv = OnceLock::from(weights.model(holdout).map(|m| (m.clone(), weights.interval)));
        WithConv { inner, holdout: holdout.map(str::to_string), conv }
    }

    /// Wraps `inner` with the shipped convolution model (trained without `holdout` when given).
    pub fn shipped(inner: Box<dyn Predictor>, holdout: Option<&str>) -> WithConv {
        WithConv { inner, holdout: holdout.map(str::to_string), conv: OnceLock::new() }
    }

    fn conv_model(&self) -> &Result<(ConvModel, [f64; 2]), String> {
        self.conv.get_or_init(|| ConvWeights::shipped_model(self.holdout.as_deref()))
    }

    fn estimate(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        let isolated = ctx.isolated;
        let inner = |o: &Op| self.inner.predict(o, gpu, ctx);
        match op {
            Op::Conv(c) if depthwise_like(c) => inner(&Op::Elementwise(vector_proxy(op))),
            Op::Conv(c) => {
                let (conv, [lo, hi]) = match self.conv_model() {
                    Ok(model) => model,
                    Err(reason) => return Estimate::Unpriced(format!("convolution model: {reason}")),
                };
                let t = if isolated { conv.isolated_seconds(c, gpu) } else { conv.kernel_seconds(c, gpu) + KERNEL_GAP_S };
                Estimate::Time(OpTime { seconds: t, lo: t * lo.exp(), hi: t * hi.exp(), provenance: crate::Provenance::PHYSICS })
            }
            Op::Rnn(r) => {
                let mut total = OpTime::exact(0.0);
                for (kernel, count) in r.kernels() {
                    // The kernels run back to back inside the layer, even when the layer is timed alone.
                    match self.inner.predict(&kernel, gpu, &Context::IN_MODEL) {
                        Estimate::Time(t) => {
                            let n = count as f64;
                            total.seconds += n * t.seconds;
                            total.lo += n * t.lo;
                            total.hi += n * t.hi;
                        }
                        Estimate::Unpriced(why) => return Estimate::Unpriced(format!("RNN kernel {}: {why}", kernel.describe())),
                    }
                }
                if isolated {
                    total.seconds += LAUNCH_GAP_S;
                    total.lo += LAUNCH_GAP_S;
                    total.hi += LAUNCH_GAP_S;
                }
                Estimate::Time(total)
            }
            Op::Pool(_) | Op::ChannelNorm(_) | Op::Concat(_) | Op::Upsample(_) => inner(&Op::Elementwise(vector_proxy(op))),
            _ => inner(op),
        }
    }
}

impl Predictor for WithConv {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        self.estimate(op, gpu, ctx)
    }
}

/// Grouped convolutions with few channels per group (depthwise and near-depthwise).
pub fn depthwise_like(c: &Conv) -> bool {
    c.groups > 1 && c.c_in / c.groups <= 8
}

/// The element-wise kernel that moves the same bytes as `op` over its largest tensor, with the
/// element-wise kind whose FLOPs per element are nearest to `op`'s.
pub fn vector_proxy(op: &Op) -> Elementwise {
    let elements: f64 = match op {
        Op::Pool(p) => p.input_elements().max(p.output_elements()),
        Op::ChannelNorm(n) => n.elements(),
        Op::Concat(c) => c.elements as f64,
        Op::Upsample(u) => u.input_elements().max(u.output_elements()),
        Op::Conv(c) => c.input_elements().max(c.output_elements()),
        other => (other.bytes() / other.dtype().vector_storage().size_bytes() as f64 / 2.0).max(1.0),
    };
    let dtype = op.dtype().vector_storage();
    let e = dtype.size_bytes() as f64;
    let tensors = (op.bytes() / (elements * e)).round().max(1.0);
    let per_element = op.flops() / elements;
    let kinds = [EwKind::Copy, EwKind::Add, EwKind::Pow, EwKind::Tanh, EwKind::Silu, EwKind::Rotary, EwKind::Gelu];
    let kind = kinds
        .into_iter()
        .min_by(|a, b| (a.flops_per_element() - per_element).abs().total_cmp(&(b.flops_per_element() - per_element).abs()))
        .unwrap_or(EwKind::Copy);
    Elementwise { kind, elements: elements as u64, tensor_inputs: (tensors - 1.0) as u32, dtype }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Roofline;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{ChannelNorm, Gemm, Pool, PoolKind, Rnn, RnnCell};
    use wavecast_ir::DType;

    fn wrapped() -> WithConv {
        WithConv::new(Box::new(Roofline), &ConvWeights::shipped().unwrap(), None)
    }

    #[test]
    fn vector_proxy_moves_the_same_bytes() {
        let bn = Op::ChannelNorm(ChannelNorm::batch_norm(32, 64, 56 * 56, true, DType::Fp32).unwrap());
        let p = vector_proxy(&bn);
        let rel = (Op::Elementwise(p.clone()).bytes() - bn.bytes()).abs() / bn.bytes();
        assert!(rel < 0.01, "{rel}");
        let pool = Op::Pool(Pool::window(PoolKind::Max, 8, 64, [112, 112], [3, 3], [2, 2], [1; 4], false, DType::Fp16).unwrap());
        let p = vector_proxy(&pool);
        let rel = (Op::Elementwise(p).bytes() - pool.bytes()).abs() / pool.bytes();
        assert!(rel < 0.3, "{rel}");
    }

    #[test]
    fn rnn_is_the_sum_of_its_sequential_kernels() {
        let cat = Catalog::builtin();
        let gpu = cat.get("a100-sxm-80gb").unwrap();
        let w = wrapped();
        let r = Rnn::new(RnnCell::Lstm, 16, 50, 1024, 1024, 1, false, DType::Fp16).unwrap();
        let Estimate::Time(t) = w.predict(&Op::Rnn(r.clone()), gpu, &Context::IN_MODEL) else { panic!() };
        let expect: f64 = r.kernels().iter().map(|(k, n)| crate::roofline::roofline_seconds(k, gpu) * *n as f64).sum();
        assert!((t.seconds - expect).abs() < 1e-12);
        // Fifty skinny recurrent GEMMs one after another cost more than one GEMM of the same work.
        let rec = Gemm::linear(16 * 50, 1024, 4096, false, DType::Fp16).unwrap();
        assert!(t.seconds > crate::roofline::roofline_seconds(&Op::Gemm(rec), gpu));
    }

    #[test]
    fn convs_use_the_conv_model_and_others_pass_through() {
        let cat = Catalog::builtin();
        let gpu = cat.get("t4").unwrap();
        let w = wrapped();
        let c = Conv::new(32, 128, 128, [28, 28], [3, 3], DType::Fp32).pad(1).build().unwrap();
        let Estimate::Time(t) = w.predict(&Op::Conv(c.clone()), gpu, &Context::IN_MODEL) else { panic!() };
        assert!(t.lo < t.seconds && t.seconds < t.hi);
        // Fast algorithms may beat the direct roofline, by at most 4×.
        assert!(t.seconds >= crate::roofline::roofline_seconds(&Op::Conv(c), gpu) / 4.0);
        let g = Op::Gemm(Gemm::linear(64, 64, 64, false, DType::Fp32).unwrap());
        assert_eq!(w.predict(&g, gpu, &Context::IN_MODEL), Roofline.predict(&g, gpu, &Context::IN_MODEL));
        assert_eq!(w.name(), "roofline");
    }
}
