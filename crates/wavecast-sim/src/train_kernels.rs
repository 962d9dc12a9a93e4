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
use wavecast_predict::measured::{attention_efficiency, attention_efficiency_of, fp8_gemm_efficiency_ratio, AttentionKernel};
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
    attention_floor_seconds_of(AttentionKernel::Cudnn, a, op, gpu)
}

/// [`attention_floor_seconds`] for `kernel`'s measured curve.
pub fn attention_floor_seconds_of(kernel: AttentionKernel, a: &Attention, op: &Op, gpu: &Gpu) -> Option<f64> {
    if !matches!(a.dtype, DType::Bf16 | DType::Fp16) {
        return None;
    }
    let keys = a.window.map_or(a.kv_len, |w| w.min(a.kv_len)) as f64;
    let share = match kernel {
        AttentionKernel::Cudnn => attention_efficiency(gpu, a.head_dim as f64, keys, a.backward),
        other => attention_efficiency_of(other, gpu, a.head_dim as f64, keys, a.backward),
    };
    let peak = gpu.peak_flops(op.class(), a.dtype);
    (peak > 0.0).then(|| op.flops() / (share * peak))
}

/// How much faster an FP8 GEMM runs than its BF16 twin on `gpu`.
pub fn fp8_speedup(gpu: &Gpu) -> f64 {
    let class = wavecast_ir::OpClass::Gemm;
    let ratio = gpu.peak_flops(class, DType::Fp8) / gpu.peak_flops(class, DType::Bf16);
    (ratio * fp8_gemm_efficiency_ratio(gpu)).max(1.0)
}

/// `inner` with fused attention no faster than PyTorch SDPA's `flash` backend (FlashAttention-2)
/// reaches on the measured GPU it reads (its own, else the nearest), as a share of the peak: the kernel a PyTorch-native training
/// stack (torchtitan) runs where Megatron runs cuDNN's through Transformer Engine. Wrapped in
/// [`TrainingKernels`], whose cuDNN floor is the faster of the two, this floor is the one that
/// holds. FlashAttention-2 falls short on Hopper because it does not use Hopper's asynchronous
/// tensor-core instructions (wgmma, TMA); on Ampere and older it is the native kernel, so there
/// the floor is not applied. On Blackwell it does not use the new instructions either, and the
/// share transferred through the peak is an upper bound on its speed.
pub struct SdpaFlashAttention<'a> {
    inner: &'a dyn Predictor,
}

impl<'a> SdpaFlashAttention<'a> {
    pub fn new(inner: &'a dyn Predictor) -> SdpaFlashAttention<'a> {
        SdpaFlashAttention { inner }
    }
}

impl Predictor for SdpaFlashAttention<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        match op {
            Op::Attention(a) if gpu.compute_major() >= 9 => match (self.inner.predict(op, gpu, ctx), attention_floor_seconds_of(AttentionKernel::SdpaFlash, a, op, gpu)) {
                (Estimate::Time(t), Some(floor)) if t.seconds < floor => Estimate::Time(rescaled(t, floor)),
                (e, _) => e,
            },
            _ => self.inner.predict(op, gpu, ctx),
        }
    }
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
        let gpu = Catalog::shipped().get("h100-sxm").unwrap().clone();
        let roof = Roofline;
        let k = TrainingKernels::new(&roof);
        for (seq, d) in [(2048, 128), (16384, 128), (4096, 64)] {
            let op = attention(seq, d, false);
            let Estimate::Time(bare) = roof.predict(&op, &gpu, &Context::IN_MODEL) else { panic!() };
            let Estimate::Time(t) = k.predict(&op, &gpu, &Context::IN_MODEL) else { panic!() };
            let achieved = op.flops() / t.seconds / gpu.peak_flops(op.class(), DType::Bf16);
            assert!(t.seconds > bare.seconds, "slower than the roofline");
            assert!((achieved - attention_efficiency(&gpu, d as f64, seq as f64, false)).abs() < 1e-9);
        }
        // Backward reaches less of the peak than forward at short sequences.
        let f = k.predict(&attention(1024, 128, false), &gpu, &Context::IN_MODEL);
        let b = k.predict(&attention(1024, 128, true), &gpu, &Context::IN_MODEL);
        let (Estimate::Time(f), Estimate::Time(b)) = (f, b) else { panic!() };
        assert!(b.seconds > 2.5 * f.seconds, "bwd {} vs fwd {}", b.seconds, f.seconds);
    }

    #[test]
    fn sdpa_flash_attention_is_slower_than_cudnn_and_holds_under_training_kernels() {
        let gpu = Catalog::shipped().get("h100-sxm").unwrap().clone();
        let roof = Roofline;
        let flash = SdpaFlashAttention::new(&roof);
        let both = TrainingKernels::new(&flash);
        let cudnn = TrainingKernels::new(&roof);
        for (seq, backward) in [(8192, false), (8192, true), (65536, false)] {
            let op = attention(seq, 128, backward);
            let (Estimate::Time(f), Estimate::Time(c)) = (both.predict(&op, &gpu, &Context::IN_MODEL), cudnn.predict(&op, &gpu, &Context::IN_MODEL)) else { panic!() };
            assert!(f.seconds > 1.2 * c.seconds, "seq {seq}: flash {} vs cudnn {}", f.seconds, c.seconds);
            let achieved = op.flops() / f.seconds / gpu.peak_flops(op.class(), DType::Bf16);
            assert!((achieved - attention_efficiency_of(AttentionKernel::SdpaFlash, &gpu, 128.0, seq as f64, backward)).abs() < 1e-9);
        }
    }

    #[test]
    fn fp8_linear_is_its_bf16_twin_at_the_measured_speedup() {
        let gpu = Catalog::shipped().get("h100-sxm").unwrap().clone();
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
