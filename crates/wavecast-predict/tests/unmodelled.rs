//! Ops no kernel model covers (the gated delta rule of hybrid linear attention) are priced the
//! same way by every predictor the registry builds: their physical floor or their sequential
//! steps, plus the in-model kernel gaps, never whatever a learned model makes of a shape it
//! cannot read.

use wavecast_gpu::Catalog;
use wavecast_ir::ops::GatedDelta;
use wavecast_ir::{DType, Op};
use wavecast_predict::roofline::roofline_seconds;
use wavecast_predict::{by_name, registry, Context, Estimate};

#[test]
fn every_predictor_prices_the_gated_delta_rule_alike() {
    let catalog = Catalog::builtin();
    let prefill = Op::GatedDelta(GatedDelta { batch: 1, seq: 4096, with_state: true, k_heads: 16, v_heads: 64, head_k_dim: 128, head_v_dim: 128, dtype: DType::Bf16, state_dtype: DType::Fp32 });
    let decode = Op::GatedDelta(GatedDelta { batch: 64, seq: 1, with_state: true, k_heads: 2, v_heads: 8, head_k_dim: 128, head_v_dim: 128, dtype: DType::Bf16, state_dtype: DType::Fp32 });
    for gpu in ["h100", "a100", "b200"] {
        let gpu = catalog.get(gpu).unwrap();
        for op in [&prefill, &decode] {
            let expected = wavecast_predict::unmodelled::seconds(op, gpu).expect("an unmodelled op");
            let roofline = roofline_seconds(op, gpu);
            let Op::GatedDelta(d) = op else { unreachable!() };
            let steps = d.sequential_steps() * wavecast_predict::unmodelled::GATED_DELTA_STEP_US * 1e-6;
            assert!(expected > roofline.max(steps) && expected < roofline / 0.92 + steps + 1e-4, "{expected} vs roofline {roofline}, steps {steps}");
            for name in registry::names() {
                // Predictors that refuse ops outside their data (neusight, pm2lat) may refuse this
                // one too; a time they give must be the shared one.
                let Ok(p) = by_name(name) else { continue };
                match p.predict(op, gpu, &Context::IN_MODEL) {
                    Estimate::Time(t) => assert!((t.seconds - expected).abs() <= 1e-12 * expected.max(1.0), "{name} on {}: {} s, not {expected} s", gpu.id, t.seconds),
                    Estimate::Unpriced(why) => panic!("{name} left the gated delta rule unpriced: {why}"),
                }
            }
        }
    }
}
