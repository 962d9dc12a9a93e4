//! Physics checks of the shipped predictors, through the registry as the CLI builds them.

use wavecast_gpu::Catalog;
use wavecast_ir::ops::Gemm;
use wavecast_ir::{DType, Op};
use wavecast_predict::{Context, Estimate, Predictor};

fn time(p: &dyn Predictor, op: &Op, gpu: &wavecast_gpu::Gpu) -> f64 {
    match p.predict(op, gpu, &Context::IN_MODEL) {
        Estimate::Time(t) => t.seconds,
        Estimate::Unpriced(r) => panic!("unpriced: {r}"),
    }
}

#[test]
fn shipped_default_predictor_is_monotonic_in_flops_for_a_fixed_shape_family() {
    let p = wavecast_predict::by_name(wavecast_predict::DEFAULT_PREDICTOR).unwrap();
    let cat = Catalog::builtin();
    for id in ["a100-sxm-80gb", "h100", "l4", "v100-pcie", "t4"] {
        let gpu = cat.get(id).unwrap();
        for (n, k) in [(1024, 1024), (4096, 4096), (768, 3072)] {
            for dtype in [DType::Fp32, DType::Bf16] {
                let mut last = 0.0;
                for m in [2048u64, 4096, 8192, 16384, 32768, 65536] {
                    let op = Op::Gemm(Gemm::linear(m, k, n, false, dtype).unwrap());
                    let t = time(p.as_ref(), &op, gpu);
                    assert!(t > last, "{id} {dtype} m={m} n={n} k={k}: {t} after {last}");
                    last = t;
                }
            }
        }
    }
}

#[test]
fn communication_is_left_to_the_communication_model() {
    let p = wavecast_predict::by_name("wavecast").unwrap();
    let gpu = Catalog::builtin().get("h100").unwrap().clone();
    let op = Op::Comm(wavecast_ir::ops::Comm {
        kind: wavecast_ir::ops::CommKind::AllReduce,
        bytes: 1e6,
        group: 8,
        dtype: DType::Bf16,
        overlappable: false,
    });
    for ctx in [Context::IN_MODEL, Context::ISOLATED] {
        assert!(matches!(p.predict(&op, &gpu, &ctx), Estimate::Unpriced(_)));
    }
}

#[test]
fn every_registry_row_builds_with_and_without_a_held_out_gpu() {
    for name in wavecast_predict::registry::names() {
        assert_eq!(wavecast_predict::by_name(name).unwrap().name(), name);
        assert_eq!(wavecast_predict::by_name_holdout(name, Some("t4")).unwrap().name(), name);
    }
    assert!(wavecast_predict::by_name("nope").is_err());
}
