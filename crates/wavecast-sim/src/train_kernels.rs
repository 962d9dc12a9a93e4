//! The kernels of a training step as training stacks run them, over any per-op predictor
//! ([`TrainingKernels`]): measured physics (`wavecast_predict::measured`) the per-op models do
//! not carry, applied the same way on the single-GPU route and the layout route.
//!
//! - Fused 16-bit attention runs no faster than the measured share of the dense peak for its
//!   sequence, head dimension and direction (a floor: a predictor that prices it slower keeps
//!   its figure). Per-op models learned on short GEMM-like shapes price it at the peak.
//! - An FP8 linear GEMM (per-tensor scales, BF16 in and out) is its BF16 twin sped up by the
//!   ratio of the two peaks times the measured share of that ratio the FP8 path turns into speed.

use wavecast_gpu::Gpu;
use wavecast_ir::ops::{Attention, Gemm, GemmKind};
use wavecast_ir::{DType, Op, Quant};
use wavecast_predict::measured::{attention_efficiency, fp8_gemm_efficiency_ratio};
use wavecast_predict::{Context, Estimate, OpTime, Predictor};

/// `inner` with the training-kernel physics above.
pub struct TrainingKernels<'a> {
    inner: &'a dyn Predictor,
}

impl<'a> TrainingKernels<'a> {
    pub fn new(inner: &'a dyn Predictor) -> TrainingKernels<'a> {
        TrainingKernels { inner }
    }
}

/// The estimate scaled so its time is `seconds` (its interval moves with it).
fn rescaled(t: OpTime, seconds: f64) -> OpTime {
    if t.seconds <= 0.0 {
        return OpTime { seconds, lo: seconds, hi: seconds, ..t };
    }
    let f = seconds / t.seconds;
    OpTime { seconds, lo: t.lo * f, hi: t.hi * f, ..t }
}

/// Seconds a fused attention op takes at best: its FLOPs at the measured share of the peak.
pub fn attention_floor_seconds(a: &Attention, op: &Op, gpu: &Gpu) -> Option<f64> {
    if !matches!(a.dtype, DType::Bf16 | DType::Fp16) {
        return None;
    }
    let keys = a.window.map_or(a.kv_len, |w| w.min(a.kv_len)) as f64;
    let share = attention_efficiency(a.head_dim as f64, keys, a.backward);
    let peak = gpu.peak_flops(op.class(), a.dtype);
    (peak > 0.0).then(|| op.flops() / (share * peak))
}

/// How much faster an FP8 GEMM runs than its BF16 twin on `gpu`.
pub fn fp8_speedup(gpu: &Gpu) -> f64 {
    let class = wavecast_ir::OpClass::Gemm;
    let ratio = gpu.peak_flops(class, DType::Fp8) / gpu.peak_flops(class, DType::Bf16);
    (ratio * fp8_gemm_efficiency_ratio()).max(1.0)
}

impl Predictor for TrainingKernels<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        match op {
            Op::Attention(a) => match (self.inner.predict(op, gpu, ctx), attention_floor_seconds(a, op, gpu)) {
                (Estimate::Time(t), Some(floor)) if t.seconds < floor => Estimate::Time(rescaled(t, floor)),
                (e, _) => e,
            },
            Op::Gemm(g) if g.quant == Some(Quant::Fp8) && g.kind == GemmKind::Linear && gpu.supports(DType::Fp8) => {
                let twin = Op::Gemm(Gemm { quant: None, weight_dtype: None, dtype: DType::Bf16, ..g.clone() });
                match self.inner.predict(&twin, gpu, ctx) {
                    Estimate::Time(t) => Estimate::Time(rescaled(t, t.seconds / fp8_speedup(gpu))),
                    e => e,
                }
            }
            _ => self.inner.predict(op, gpu, ctx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_gpu::Catalog;
    use wavecast_predict::Roofline;

    fn attention(seq: u64, head_dim: u64, backward: bool) -> Op {
        Op::Attention(Attention {
            batch: 1,
            heads: 32,
            kv_heads: 8,
            q_len: seq,
            kv_len: seq,
            head_dim,
            causal: true,
            dtype: DType::Bf16,
            backward,
            v_head_dim: None,
            shared_kv: false,
            window: None,
        })
    }

    #[test]
    fn attention_is_priced_at_the_measured_share_of_peak_not_at_peak() {
        let gpu = Catalog::builtin().get("h100-sxm").unwrap().clone();
        let roof = Roofline;
        let k = TrainingKernels::new(&roof);
        for (seq, d) in [(2048, 128), (16384, 128), (4096, 64)] {
            let op = attention(seq, d, false);
            let Estimate::Time(bare) = roof.predict(&op, &gpu, &Context::IN_MODEL) else { panic!() };
            let Estimate::Time(t) = k.predict(&op, &gpu, &Context::IN_MODEL) else { panic!() };
            let achieved = op.flops() / t.seconds / gpu.peak_flops(op.class(), DType::Bf16);
            assert!(t.seconds > bare.seconds, "slower than the roofline");
            assert!((achieved - attention_efficiency(d as f64, seq as f64, false)).abs() < 1e-9);
        }
        // Backward reaches less of the peak than forward at short sequences.
        let f = k.predict(&attention(1024, 128, false), &gpu, &Context::IN_MODEL);
        let b = k.predict(&attention(1024, 128, true), &gpu, &Context::IN_MODEL);
        let (Estimate::Time(f), Estimate::Time(b)) = (f, b) else { panic!() };
        assert!(b.seconds > 2.5 * f.seconds, "bwd {} vs fwd {}", b.seconds, f.seconds);
    }

    #[test]
    fn fp8_linear_is_its_bf16_twin_at_the_measured_speedup() {
        let gpu = Catalog::builtin().get("h100-sxm").unwrap().clone();
        let roof = Roofline;
        let k = TrainingKernels::new(&roof);
        let bf16 = Gemm::linear(8192, 4096, 14336, false, DType::Bf16).unwrap();
        let fp8 = Op::Gemm(Gemm { quant: Some(Quant::Fp8), ..bf16.clone() });
        let (Estimate::Time(a), Estimate::Time(b)) =
            (k.predict(&Op::Gemm(bf16), &gpu, &Context::IN_MODEL), k.predict(&fp8, &gpu, &Context::IN_MODEL))
        else {
            panic!()
        };
        let speedup = a.seconds / b.seconds;
        assert!((speedup - fp8_speedup(&gpu)).abs() < 1e-9);
        assert!(speedup > 1.5 && speedup < 2.0, "{speedup}");
    }
}
