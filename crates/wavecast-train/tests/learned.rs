//! Training checks of the learned predictors, on synthetic measurements the test makes itself:
//! persistence, reproducibility, physics, and which rows each model learns from.

use wavecast_gpu::Catalog;
use wavecast_ir::ops::{Elementwise, EwKind, Gemm, Norm, NormKind, Softmax};
use wavecast_ir::{DType, Op};
use wavecast_predict::physics::Family;
use wavecast_predict::registry::{self, LearnedKind, ModelFile};
use wavecast_predict::roofline::roofline_seconds;
use wavecast_predict::sample::Sample;
use wavecast_predict::{Context, Estimate, Predictor};
use wavecast_stats::{ape, mean};
use wavecast_train::fit;

/// Synthetic measurements: each GPU runs kernels at a fixed fraction of the roofline plus a
/// launch floor, with shapes spread over several decades.
fn synthetic(ids: &[&str]) -> Vec<Sample> {
    let cat = Catalog::builtin();
    let mut out = Vec::new();
    for (gi, id) in ids.iter().enumerate() {
        let gpu = cat.get(id).unwrap().clone();
        let efficiency = 0.6 + 0.1 * gi as f64;
        for i in 0..160u64 {
            let d = 64 + (i * 97) % 4000;
            let ops = [
                (Op::Gemm(Gemm::linear(d, 512 + i * 8, 256 + (i * 37) % 3000, true, DType::Fp32).unwrap()), Family::Linear),
                (Op::Gemm(Gemm::bmm(1 + i % 16, d, 64 + i % 64, d / 2 + 1, DType::Fp32).unwrap()), Family::Bmm),
                (Op::Elementwise(Elementwise::new(EwKind::Add, d * d * (1 + i % 7), 2, DType::Fp32)), Family::Elementwise),
                (Op::Softmax(Softmax::new(d * (1 + i % 5), 128 + i * 4, DType::Fp32)), Family::Softmax),
                (Op::Norm(Norm::new(NormKind::LayerNorm, d * 8, 256 + i * 8, DType::Fp32)), Family::LayerNorm),
            ];
            for (op, family) in ops {
                let latency_s = (roofline_seconds(&op, &gpu) / efficiency + 6e-6).max(2.5e-5);
                out.push(Sample { op, family, gpu: gpu.clone(), latency_s, kernel: None, grid_blocks: None, model_shaped: false });
            }
        }
    }
    out
}

fn time(p: &dyn Predictor, op: &Op, gpu: &wavecast_gpu::Gpu) -> f64 {
    match p.predict(op, gpu, &Context::IN_MODEL) {
        Estimate::Time(t) => t.seconds,
        Estimate::Unpriced(r) => panic!("unpriced: {r}"),
    }
}

fn probe_ops() -> Vec<Op> {
    let mut v = Vec::new();
    for m in [32, 512, 4096, 32768] {
        v.push(Op::Gemm(Gemm::linear(m, 1024, 4096, true, DType::Fp32).unwrap()));
        v.push(Op::Gemm(Gemm::linear(m, 4096, 4096, false, DType::Bf16).unwrap()));
        v.push(Op::Gemm(Gemm::bmm(64, m / 8 + 1, 64, 512, DType::Fp32).unwrap()));
        v.push(Op::Elementwise(Elementwise::new(EwKind::Gelu, m * 1024, 1, DType::Fp32)));
        v.push(Op::Softmax(Softmax::new(m * 16, 512, DType::Fp32)));
    }
    v
}

#[test]
fn trained_models_round_trip_through_json_with_identical_predictions() {
    let samples = synthetic(&["v100-pcie", "t4"]);
    let cat = Catalog::builtin();
    for kind in [LearnedKind::Li, LearnedKind::Wavecast] {
        let model = fit(kind, &samples, 3, None).unwrap();
        let text = serde_json::to_string(&model).unwrap();
        let reloaded: ModelFile = serde_json::from_str(&text).unwrap();
        let (a, b) = (registry::load(&model).unwrap(), registry::load(&reloaded).unwrap());
        for gpu in ["v100-pcie", "t4", "h100", "l4"] {
            let gpu = cat.get(gpu).unwrap();
            for op in probe_ops() {
                assert_eq!(time(a.as_ref(), &op, gpu), time(b.as_ref(), &op, gpu), "{kind:?} {}", op.describe());
            }
        }
    }
}

#[test]
fn training_is_reproducible_with_a_seed() {
    let samples = synthetic(&["v100-pcie", "a100-pcie-40gb"]);
    let a = fit(LearnedKind::Wavecast, &samples, 11, None).unwrap();
    let b = fit(LearnedKind::Wavecast, &samples, 11, None).unwrap();
    assert_eq!(a.params, b.params);
}

#[test]
fn wavecast_gives_finite_times_unbounded_and_learns_the_synthetic_efficiency() {
    let samples = synthetic(&["v100-pcie", "a100-pcie-40gb", "t4"]);
    let model = fit(LearnedKind::Wavecast, &samples, 5, None).unwrap();
    let p = registry::load(&model).unwrap();
    // The model itself, without the physical floor (which every report adds, and which
    // tests/bounds.rs checks): a NaN or negative time here would be hidden by the floor's max.
    let raw = registry::load_unbounded(&model).unwrap();
    let cat = Catalog::builtin();
    for id in ["v100-pcie", "h100", "l4", "b200", "mi300x"] {
        let gpu = cat.get(id).unwrap();
        for op in probe_ops() {
            let t = time(raw.as_ref(), &op, gpu);
            assert!(t.is_finite() && t > 0.0, "{id} {}: {t}", op.describe());
        }
    }
    // On a training GPU, large kernels come back near the synthetic law (within 25 %).
    let v100 = cat.get("v100-pcie").unwrap();
    let big: Vec<&Sample> = samples.iter().filter(|s| s.gpu.id == "v100-pcie" && s.latency_s > 1e-3).collect();
    assert!(big.len() > 20);
    let apes: Vec<f64> = big
        .iter()
        .map(|s| match p.predict(&s.op, v100, &Context::ISOLATED) {
            Estimate::Time(t) => ape(t.seconds, s.latency_s),
            Estimate::Unpriced(_) => 100.0,
        })
        .collect();
    let mean_ape = mean(&apes);
    assert!(mean_ape < 25.0, "mean APE {mean_ape} %");
}

/// The synthetic set plus model-shaped copies of its softmax and linear rows on `fast_gpu` that
/// ran twice as fast as the random-shape ones.
fn with_fast_model_shaped_rows(fast_gpu: &str) -> Vec<Sample> {
    let mut samples = synthetic(&["v100-pcie", "t4"]);
    let extra: Vec<Sample> = samples
        .iter()
        .filter(|s| s.gpu.id == fast_gpu && matches!(s.family, Family::Softmax | Family::Linear))
        .map(|s| Sample { latency_s: s.latency_s / 2.0, model_shaped: true, ..s.clone() })
        .collect();
    samples.extend(extra);
    samples
}

#[test]
fn model_shaped_rows_calibrate_vector_ops_but_not_gemms_and_not_li() {
    let cat = Catalog::builtin();
    let t4 = cat.get("t4").unwrap();
    let plain = synthetic(&["v100-pcie", "t4"]);
    let mixed = with_fast_model_shaped_rows("t4");
    let softmax = Op::Softmax(Softmax::new(8192, 1024, DType::Fp32));
    let linear = Op::Gemm(Gemm::linear(4096, 4096, 4096, true, DType::Fp32).unwrap());
    let train = |kind: LearnedKind, s: &[Sample]| registry::load(&fit(kind, s, 5, None).unwrap()).unwrap();
    let (before, after) = (train(LearnedKind::Wavecast, &plain), train(LearnedKind::Wavecast, &mixed));
    let softmax_ratio = time(after.as_ref(), &softmax, t4) / time(before.as_ref(), &softmax, t4);
    assert!(softmax_ratio < 0.8, "faster model-shaped softmax rows must speed up T4 softmax, got ×{softmax_ratio:.2}");
    let linear_ratio = time(after.as_ref(), &linear, t4) / time(before.as_ref(), &linear, t4);
    assert!((linear_ratio - 1.0).abs() < 0.05, "model-shaped GEMM rows must not move the GEMM model, got ×{linear_ratio:.2}");
    let (a, b) = (train(LearnedKind::Li, &plain), train(LearnedKind::Li, &mixed));
    assert_eq!(time(a.as_ref(), &softmax, t4), time(b.as_ref(), &softmax, t4), "li trains on microbenchmarks only");
}

#[test]
fn leave_one_gpu_out_models_never_see_the_left_out_gpu() {
    let samples = with_fast_model_shaped_rows("t4");
    let dir = std::env::temp_dir().join("wavecast-train-no-data");
    let cat = Catalog::builtin();
    let trained = wavecast_train::train(LearnedKind::Li, &samples, &dir, &cat, 3, true, false).unwrap();
    assert_eq!(trained.weights.all.trained_on, ["t4", "v100-pcie"]);
    for (gpu, model) in &trained.weights.holdout {
        assert!(!model.trained_on.contains(gpu), "{gpu}: {:?}", model.trained_on);
        assert_eq!(model.trained_on.len(), 1);
    }
    assert_eq!(trained.models(), 3);
    // Per left-out GPU: its random-shape rows, and for T4 also its model-shaped ones.
    let sets: Vec<&str> = trained.validation.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(sets, ["t4 random shapes", "t4 model-shaped", "v100-pcie random shapes"]);
}

/// NeuSight's AMD set as it is shaped: random-shape vector ops and model-shaped GEMMs only.
fn with_mi100(slowdown: f64) -> Vec<Sample> {
    let mut samples = synthetic(&["v100-pcie", "t4", "mi100"]);
    for s in samples.iter_mut().filter(|s| s.gpu.id == "mi100") {
        s.model_shaped = s.family.is_gemm();
        s.latency_s *= slowdown;
    }
    samples
}

#[test]
fn the_model_that_predicts_mi100_never_sees_an_mi100_row_and_the_others_learn_cdna_from_it() {
    let cat = Catalog::builtin();
    let dir = std::env::temp_dir().join("wavecast-train-no-data");
    let train = |s: &[Sample]| wavecast_train::train(LearnedKind::Wavecast, s, &dir, &cat, 3, true, false).unwrap().weights;
    let (honest, poisoned) = (train(&with_mi100(1.0)), train(&with_mi100(4.0)));
    assert_eq!(honest.all.trained_on, ["mi100", "t4", "v100-pcie"]);
    assert!(!honest.holdout["mi100"].trained_on.contains(&"mi100".to_string()));
    assert_eq!(honest.holdout["mi100"].params, poisoned.holdout["mi100"].params, "MI100's rows reached the model that predicts MI100");
    // The all-GPU model learned MI100's GEMMs (model-shaped rows only) and carries them to the
    // other CDNA parts, which were never measured.
    let gemm = Op::Gemm(Gemm::linear(8192, 4096, 4096, true, DType::Fp32).unwrap());
    let (a, b) = (registry::load(&honest.all).unwrap(), registry::load(&poisoned.all).unwrap());
    for id in ["mi100", "mi210", "mi250x"] {
        let ratio = time(b.as_ref(), &gemm, cat.get(id).unwrap()) / time(a.as_ref(), &gemm, cat.get(id).unwrap());
        assert!(ratio > 3.0, "{id}: 4x slower MI100 GEMMs moved its GEMMs by only x{ratio:.2}");
    }
    let t4 = cat.get("t4").unwrap();
    let ratio = time(b.as_ref(), &gemm, t4) / time(a.as_ref(), &gemm, t4);
    assert!((ratio - 1.0).abs() < 0.05, "MI100's rows must not move an NVIDIA GPU's GEMMs, got x{ratio:.2}");
}
