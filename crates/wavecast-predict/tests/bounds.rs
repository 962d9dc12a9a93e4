//! The physical floor is applied in one place, [`Bounded`]: every predictor the registry builds
//! (and every model file `registry::load` reads) is wrapped in it, and its output is exactly the
//! unwrapped predictor's output raised to the op's floor (roofline; a convolution's
//! fast-algorithm floor), over random operators, shapes, dtypes and GPUs. The floor itself is
//! tested on a predictor that undercuts it, since the registry's own rarely do.

use proptest::prelude::*;
use std::sync::OnceLock;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::ops::{Comm, CommKind, Conv, Elementwise, EwKind, Gemm, Norm, NormKind, Softmax};
use wavecast_ir::{DType, Op};
use wavecast_predict::bounds::{at_least, floor_seconds, Bounded};
use wavecast_predict::physics::Roof;
use wavecast_predict::{registry, Context, Estimate, OpTime, Predictor};

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

/// A registry predictor's name, the predictor as reports use it, and the same unbounded.
type BothWays = (&'static str, Box<dyn Predictor>, Box<dyn Predictor>);

/// Every registry predictor, bounded and unbounded, built once.
fn predictors() -> &'static [BothWays] {
    static ALL: OnceLock<Vec<BothWays>> = OnceLock::new();
    ALL.get_or_init(|| registry::names().map(|n| (n, wavecast_predict::by_name(n).unwrap(), wavecast_predict::by_name_unbounded(n, None).unwrap())).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_prediction_is_the_unbounded_one_raised_to_the_floor(op in op(), gpu_index in 0usize..64, isolated in any::<bool>()) {
        let catalog = Catalog::builtin();
        let gpus: Vec<_> = catalog.all().iter().filter(|g| g.supports(op.dtype())).collect();
        let gpu = gpus[gpu_index % gpus.len()];
        let ctx = if isolated { Context::ISOLATED } else { Context::IN_MODEL };
        let floor = floor_seconds(&op, gpu);
        for (name, bounded, raw) in predictors() {
            match (bounded.predict(&op, gpu, &ctx), raw.predict(&op, gpu, &ctx)) {
                (Estimate::Time(t), Estimate::Time(r)) => {
                    prop_assert_eq!(t, at_least(r, floor), "{}: {} on {}", name, op.describe(), gpu.id);
                    prop_assert!(t.seconds.is_finite() && t.lo.is_finite() && t.hi.is_finite(), "{name}: {t:?} for {} on {}", op.describe(), gpu.id);
                }
                (Estimate::Unpriced(_), Estimate::Unpriced(_)) => {}
                (b, r) => prop_assert!(false, "{name}: bounded {b:?} but unbounded {r:?} for {}", op.describe()),
            }
        }
    }
}

#[test]
fn every_registry_predictor_is_bounded_outermost() {
    for name in registry::names() {
        assert!(wavecast_predict::by_name(name).unwrap().bounded(), "{name}: by_name must wrap it in Bounded");
        assert!(!wavecast_predict::by_name_unbounded(name, None).unwrap().bounded(), "{name}");
    }
    for (kind, _) in registry::learned() {
        let all = registry::shipped_all(kind.name()).expect("a learned predictor ships weights").unwrap();
        assert!(registry::load(&all).unwrap().bounded(), "{}: registry::load must wrap it in Bounded", kind.name());
    }
}

/// Says `factor` times the op's roofline, with an interval from half to twice that.
struct Undercuts(f64);

impl Predictor for Undercuts {
    fn name(&self) -> &str {
        "undercuts"
    }
    fn predict(&self, op: &Op, gpu: &Gpu, _: &Context) -> Estimate {
        let t = self.0 * floor_seconds(op, gpu);
        Estimate::Time(OpTime { lo: 0.5 * t, hi: 2.0 * t, ..OpTime::exact(t) })
    }
}

#[test]
fn bounded_raises_a_fast_time_and_its_interval_to_the_floor_and_leaves_a_slow_one() {
    let catalog = Catalog::builtin();
    let h100 = catalog.get("h100").unwrap();
    let op = Op::Gemm(Gemm::linear(4096, 4096, 4096, true, DType::Bf16).unwrap());
    let floor = floor_seconds(&op, h100);
    assert!(floor > 0.0);

    let Estimate::Time(fast) = Bounded(Box::new(Undercuts(0.25))).predict(&op, h100, &Context::IN_MODEL) else { panic!("priced") };
    // The time and both ends of its interval (all below the floor) rise to it.
    assert_eq!((fast.seconds, fast.lo, fast.hi), (floor, floor, floor));

    let Estimate::Time(slow) = Bounded(Box::new(Undercuts(3.0))).predict(&op, h100, &Context::IN_MODEL) else { panic!("priced") };
    let t = 3.0 * floor;
    assert_eq!((slow.seconds, slow.lo, slow.hi), (t, 0.5 * t, 2.0 * t), "a time and interval above the floor are unchanged");
}

#[test]
fn communication_has_no_floor_here() {
    let catalog = Catalog::builtin();
    let h100 = catalog.get("h100").unwrap();
    let comm = Op::Comm(Comm::new(CommKind::AllReduce, 1e6, 8, DType::Bf16, false));
    assert_eq!(floor_seconds(&comm, h100), 0.0, "collectives are priced by the link models");
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
