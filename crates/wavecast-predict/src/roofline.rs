//! The roofline bound: an op takes at least its FLOPs at the GPU's peak for that dtype and
//! class, and at least its bytes at full memory bandwidth. No learned part; the floor every
//! other predictor must respect.

use crate::physics::roofline_terms;
use crate::{Context, Estimate, OpTime, Predictor};
use wavecast_gpu::Gpu;
use wavecast_ir::{Op, OpClass};

pub struct Roofline;

/// Roofline time in seconds of `op` on `gpu`.
pub fn roofline_seconds(op: &Op, gpu: &Gpu) -> f64 {
    let (compute, memory) = roofline_terms(op, gpu);
    compute.max(memory)
}

impl Predictor for Roofline {
    fn name(&self) -> &str {
        "roofline"
    }

    /// The bound does not depend on where the op runs.
    fn predict(&self, op: &Op, gpu: &Gpu, _: &Context) -> Estimate {
        if op.class() == OpClass::Communication {
            return Estimate::Unpriced("roofline does not model communication".into());
        }
        Estimate::Time(OpTime::exact(roofline_seconds(op, gpu)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{Elementwise, EwKind, Gemm};
    use wavecast_ir::DType;

    #[test]
    fn large_gemm_is_compute_bound_and_copy_is_memory_bound() {
        let cat = Catalog::builtin();
        let a100 = cat.get("a100-sxm-80gb").unwrap();
        let g = Op::Gemm(Gemm::linear(8192, 8192, 8192, false, DType::Bf16).unwrap());
        let t = roofline_seconds(&g, a100);
        assert!((t - 2.0 * 8192f64.powi(3) / (a100.peak_tflops.bf16.unwrap() * 1e12)).abs() < 1e-12);
        let e = Op::Elementwise(Elementwise::new(EwKind::Add, 1 << 20, 2, DType::Fp32));
        let t = roofline_seconds(&e, a100);
        assert!((t - 12.0 * (1u64 << 20) as f64 / a100.bandwidth()).abs() < 1e-15);
    }

    /// A GEMM whose format quantizes its activations multiplies on that format's units, so its
    /// floor is their peak; a weight-only format multiplies in 16 bits (B200: FP4 is 4× and
    /// FP8 2× the BF16 peak).
    #[test]
    fn quantized_gemms_are_bounded_by_their_own_units() {
        use wavecast_ir::Quant;
        let b200 = Catalog::shipped().get("b200").unwrap().clone();
        let quantized = |q: Option<Quant>| {
            let mut g = Gemm::linear(8192, 8192, 8192, false, DType::Bf16).unwrap();
            g.quant = q;
            roofline_seconds(&Op::Gemm(g), &b200)
        };
        let flops = 2.0 * 8192f64.powi(3);
        let at = |tflops: Option<f64>| flops / (tflops.unwrap() * 1e12);
        assert!((quantized(None) - at(b200.peak_tflops.bf16)).abs() < 1e-12);
        assert!((quantized(Some(Quant::Nvfp4)) - at(b200.peak_tflops.fp4)).abs() < 1e-12);
        assert!((quantized(Some(Quant::Fp8)) - at(b200.peak_tflops.fp8)).abs() < 1e-12);
        assert!((quantized(Some(Quant::Int4)) - at(b200.peak_tflops.bf16)).abs() < 1e-12, "weight-only: 16-bit math");
    }

    #[test]
    fn tf32_is_faster_than_fp32_on_ampere_but_not_on_volta() {
        let cat = Catalog::builtin();
        let g = Op::Gemm(Gemm::linear(4096, 4096, 4096, false, DType::Fp32).unwrap());
        let g32 = Op::Gemm(Gemm::linear(4096, 4096, 4096, false, DType::Tf32).unwrap());
        let a100 = cat.get("a100-sxm-80gb").unwrap();
        assert!(roofline_seconds(&g32, a100) < roofline_seconds(&g, a100) / 4.0);
        let v100 = cat.get("v100-sxm2").unwrap();
        assert_eq!(roofline_seconds(&g32, v100), roofline_seconds(&g, v100));
    }
}
