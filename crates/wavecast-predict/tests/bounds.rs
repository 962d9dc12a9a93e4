//! The physical-floor invariant, for every predictor in the registry: over random operators,
//! shapes, dtypes and GPUs, each time is finite, at least the op's floor (roofline; a
//! convolution's fast-algorithm floor), and inside its interval, whose ends are finite too.

use proptest::prelude::*;
use wavecast_gpu::Catalog;
use wavecast_ir::ops::{Conv, Elementwise, EwKind, Gemm, Norm, NormKind, Softmax};
use wavecast_ir::{DType, Op};
use wavecast_predict::bounds::floor_seconds;
use wavecast_predict::physics::Roof;
use wavecast_predict::{registry, Context, Estimate};

fn dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::ALL.to_vec())
}

/// Sizes from 1 to ~2^16 on a log scale, where both tiny and huge shapes are common.
fn size() -> impl Strategy<Value = u64> {
    (0u32..17, 0u64..1024).prop_map(|(e, j)| ((1u64 << e) + j % (1u64 << e).max(1)).max(1))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (size(), size(), size(), dtype()).prop_filter_map("GEMM too large", |(m, k, n, d)| Gemm::linear(m, k, n, true, d).ok().map(Op::Gemm)),
        (1u64..64, size(), size(), 16u64..256, dtype()).prop_filter_map("BMM too large", |(b, m, k, n, d)| Gemm::bmm(b, m, k, n, d).ok().map(Op::Gemm)),
        (size(), 1u32..4, dtype()).prop_map(|(e, i, d)| Op::Elementwise(Elementwise::new(EwKind::Mul, e * 64, i, d))),
        (size(), size(), dtype()).prop_map(|(r, c, d)| Op::Softmax(Softmax::new(r, c, d))),
        (size(), size(), dtype()).prop_map(|(r, c, d)| Op::Norm(Norm::new(NormKind::LayerNorm, r, c, d))),
        (1u64..32, 1u64..512, 1u64..512, 7u64..128, 1u64..8, dtype())
            .prop_map(|(b, ci, co, hw, k, d)| Op::Conv(Conv::new(b, ci, co, [hw, hw], [k.min(hw), k.min(hw)], d))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_prediction_respects_the_physical_floor(op in op(), gpu_index in 0usize..64, isolated in any::<bool>()) {
        let catalog = Catalog::builtin();
        let gpus: Vec<_> = catalog.all().iter().filter(|g| g.supports(op.dtype())).collect();
        let gpu = gpus[gpu_index % gpus.len()];
        let ctx = if isolated { Context::ISOLATED } else { Context::IN_MODEL };
        let floor = floor_seconds(&op, gpu);
        for name in registry::names() {
            let predictor = wavecast_predict::by_name(name).unwrap();
            if let Estimate::Time(t) = predictor.predict(&op, gpu, &ctx) {
                prop_assert!(t.seconds.is_finite() && t.lo.is_finite() && t.hi.is_finite(), "{name}: {t:?} for {} on {}", op.describe(), gpu.id);
                prop_assert!(t.seconds >= floor, "{name}: {} s below the floor {floor} s for {} on {}", t.seconds, op.describe(), gpu.id);
                prop_assert!(t.lo >= floor && t.lo <= t.seconds && t.seconds <= t.hi, "{name}: interval {t:?} for {}", op.describe());
            }
        }
    }
}

#[test]
fn vit_patch_embedding_in_bf16_runs_at_most_at_peak() {
    // 16×16 stride-16 convolution, 3 → 768 channels: no fast algorithm applies.
    let conv = Conv { stride: [16, 16], ..Conv::new(128, 3, 768, [384, 384], [16, 16], DType::Bf16) };
    let catalog = Catalog::builtin();
    let h100 = catalog.get("h100").unwrap();
    let flops = 2.0 * conv.macs();
    let Estimate::Time(t) = wavecast_predict::by_name("wavecast").unwrap().predict(&Op::Conv(conv), h100, &Context::IN_MODEL) else {
        panic!("the wavecast predictor prices convolutions")
    };
    let effective = flops / t.seconds;
    let peak = Roof::of(wavecast_ir::OpClass::Conv, DType::Bf16, h100).flops_per_s;
    assert!(effective <= peak * (1.0 + 1e-9), "{:.0} TFLOP/s", effective / 1e12);
}
