//! More work never takes less time: the default predictor's matrix product over twice the
//! batch (a BMM's) or twice the rows (a linear layer's) is never predicted shorter, on any GPU
//! of the catalog that runs its format, in a model or on its own.

use proptest::prelude::*;
use wavecast_gpu::Catalog;
use wavecast_ir::ops::Gemm;
use wavecast_ir::{DType, Op};
use wavecast_predict::{Context, Predictor};

fn seconds(p: &dyn Predictor, op: &Gemm, gpu: &wavecast_gpu::Gpu, ctx: &Context) -> f64 {
    p.predict(&Op::Gemm(op.clone()), gpu, ctx).seconds().expect("a GEMM is priced")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn doubling_a_matrix_products_batch_or_rows_never_shortens_it(
        b in 1u64..96, m in 1u64..2048, k in 8u64..1024, n in 8u64..1024, linear in any::<bool>(),
        gpu_index in 0usize..64, isolated in any::<bool>(),
    ) {
        let p = wavecast_predict::by_name("wavecast").unwrap();
        let catalog = Catalog::builtin();
        let gpus: Vec<_> = catalog.all().iter().filter(|g| g.supports(DType::Fp32)).collect();
        let gpu = gpus[gpu_index % gpus.len()];
        let ctx = if isolated { Context::ISOLATED } else { Context::IN_MODEL };
        let (one, two) = if linear {
            (Gemm::linear(m, k, n, false, DType::Fp32).unwrap(), Gemm::linear(2 * m, k, n, false, DType::Fp32).unwrap())
        } else {
            (Gemm::bmm(b, m, k, n, DType::Fp32).unwrap(), Gemm::bmm(2 * b, m, k, n, DType::Fp32).unwrap())
        };
        let (t1, t2) = (seconds(p.as_ref(), &one, gpu, &ctx), seconds(p.as_ref(), &two, gpu, &ctx));
        prop_assert!(t2 >= t1, "{} on {}: {t1:e} s, twice the work {t2:e} s", Op::Gemm(one.clone()).describe(), gpu.id);
    }
}
