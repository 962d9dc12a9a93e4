//! The gated delta rule of hybrid linear attention, which only the modern-GPU kernel model
//! reads, is priced by every predictor the registry builds: the ladder and the sustained model
//! as the measured shape it is, every learned predictor at the sustained model's price (never
//! whatever a learned model makes of a shape it cannot read), and none below its floor.

use wavecast_gpu::Catalog;
use wavecast_ir::ops::GatedDelta;
use wavecast_ir::{DType, Op};
use wavecast_predict::registry::PREDICTORS;
use wavecast_predict::roofline::roofline_seconds;
use wavecast_predict::sustained::{op_shape, SustainedOps};
use wavecast_predict::{by_name, Context, Estimate};

#[test]
fn every_predictor_prices_the_gated_delta_rule_as_the_kernel_model_does() {
    let catalog = Catalog::builtin();
    let prefill = Op::GatedDelta(GatedDelta { batch: 1, seq: 4096, with_state: true, k_heads: 16, v_heads: 64, head_k_dim: 128, head_v_dim: 128, dtype: DType::Bf16, state_dtype: DType::Fp32 });
    let decode = Op::GatedDelta(GatedDelta { batch: 64, seq: 1, with_state: true, k_heads: 2, v_heads: 8, head_k_dim: 128, head_v_dim: 128, dtype: DType::Bf16, state_dtype: DType::Fp32 });
    for gpu in ["h100", "a100", "b200"] {
        let gpu = catalog.get(gpu).unwrap();
        for op in [&prefill, &decode] {
            let expected = wavecast_predict::unmodelled::seconds(op, gpu).expect("an op the learned predictors cannot read");
            let (shape, precision) = op_shape(op).unwrap();
            let physics = SustainedOps::shipped().shape_seconds(shape, precision, gpu).unwrap();
            let roofline = roofline_seconds(op, gpu);
            // The kernel model's price, raised to the floor (FLOPs at the dense peak, bytes at the
            // achievable bandwidth).
            let (compute, memory) = wavecast_predict::physics::roofline_terms(op, gpu);
            let floor = compute.max(memory / wavecast_predict::sustained::ACHIEVABLE_BANDWIDTH);
            assert!(expected == physics.max(floor) && expected > roofline, "{expected} vs physics {physics}, floor {floor}");
            for entry in PREDICTORS {
                let Ok(p) = by_name(entry.name) else { continue };
                let t = match p.predict(op, gpu, &Context::IN_MODEL) {
                    Estimate::Time(t) => t,
                    Estimate::Unpriced(why) => panic!("{} left the gated delta rule unpriced: {why}", entry.name),
                };
                if entry.prices_measured_shapes() {
                    // The ladder reads the shipped tables where the GPU has them.
                    assert!(t.seconds >= roofline && t.seconds.is_finite(), "{} on {}: {} s", entry.name, gpu.id, t.seconds);
                } else {
                    assert!((t.seconds - expected).abs() <= 1e-12 * expected.max(1.0), "{} on {}: {} s, not {expected} s", entry.name, gpu.id, t.seconds);
                }
            }
        }
    }
}
