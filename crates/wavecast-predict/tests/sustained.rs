//! The sustained roofline: the held-out GPU never reaches its model, padding follows the MMA
//! instruction, and no prediction goes below its floor.

use proptest::prelude::*;
use std::path::Path;
use wavecast_data::{load_timings, Precision, Shape, Timing};
use wavecast_gpu::Catalog;
use wavecast_predict::physics::instruction_rows;
use wavecast_predict::sustained::{fit, FitOptions, Model, Params, Work, ACHIEVABLE_BANDWIDTH};

fn fixture_rows() -> Vec<Timing> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/modern");
    load_timings(&dir, &Catalog::builtin()).unwrap().rows
}

fn quick() -> FitOptions {
    FitOptions { rounds: 2, ..FitOptions::default() }
}

#[test]
fn a_held_out_gpus_rows_never_reach_its_model() {
    let cat = Catalog::builtin();
    let rows = fixture_rows();
    let honest = fit(&rows, &cat, Some("NVIDIA H100 80GB HBM3"), &quick()).unwrap();
    assert!(!honest.trained_on.contains(&"h100-sxm".to_string()), "{:?}", honest.trained_on);
    // Poison every H100 measurement, from every source and in every format: the model fitted
    // without H100 must not change at all.
    let poisoned: Vec<Timing> = rows.iter().cloned().map(|mut t| {
        if t.gpu == "h100-sxm" {
            t.latency_ms *= 100.0;
        }
        t
    }).collect();
    assert_eq!(fit(&poisoned, &cat, Some("h100"), &quick()).unwrap(), honest);
    // Without the hold-out the poison shows, so the comparison above can fail.
    assert_ne!(fit(&poisoned, &cat, None, &quick()).unwrap(), fit(&rows, &cat, None, &quick()).unwrap());
}

#[test]
fn small_m_pads_to_the_instruction_rows_not_a_library_tile() {
    let cat = Catalog::builtin();
    let (h100, a100) = (cat.get("h100").unwrap(), cat.get("a100").unwrap());
    assert_eq!((instruction_rows(h100), instruction_rows(a100)), (64.0, 16.0));
    let gemm = Shape::Gemm { m: 1, n: 4096, k: 4096 };
    for (gpu, rows) in [(h100, 64.0), (a100, 16.0)] {
        let Work::Kernel(k) = Work::of(&gemm, Precision::Bf16, gpu).unwrap() else { panic!() };
        assert_eq!(k.padded_flops, k.flops * rows);
    }
    // Decode: 32 query heads sharing each of 8 KV heads are 4 rows, padded to one instruction.
    let decode = Shape::AttentionDecode { batch: 2, kv_len: 1023, heads: 32, kv_heads: 8, head_dim: 128, window: 0, kv_precision: Precision::Bf16 };
    let Work::Kernel(k) = Work::of(&decode, Precision::Bf16, h100).unwrap() else { panic!() };
    assert_eq!(k.padded_flops, k.flops * 64.0 / 4.0);
    let Work::Kernel(k) = Work::of(&decode, Precision::Bf16, a100).unwrap() else { panic!() };
    assert_eq!(k.padded_flops, k.flops * 16.0 / 4.0);
}

fn mla(batch: u64, kv_len: u64, module: bool, kv_precision: Precision) -> Shape {
    Shape::Mla { batch, isl: 1, kv_len, heads: 128, tp: 1, generation: true, module, kv_precision, attention_precision: Precision::Bf16 }
}

/// A fused MoE's bound holds under GB200's measured vLLM times where the expected counts did
/// not: Nemotron 3's ungated experts (hidden 2048, width 5120, 22 of 512) under a skewed
/// routing took 1.12 ms at 16 tokens (AIConfigurator, power law 1.2), where 256 expected
/// gated experts' weights at achievable bandwidth need 2.2 ms. The bound still reads every
/// expert a balanced routing is sure to hit, and never exceeds the expected work.
#[test]
fn a_fused_moes_bound_is_what_any_routing_and_expert_form_must_do() {
    let gb200 = Catalog::builtin().get("gb200").unwrap().clone();
    let moe = |tokens: u64, balanced: bool| Shape::Moe { tokens, hidden: 2048, inter: 5120, topk: 22, experts: 512, tp: 1, ep: 1, balanced, gated: None };
    let skewed = Work::of(&moe(16, false), Precision::Bf16, &gb200).unwrap();
    assert!(skewed.floor_seconds() > 2e-3, "the expected counts: {}", skewed.floor_seconds());
    assert!(skewed.bound_seconds() < 1.12e-3, "{}", skewed.bound_seconds());
    // At least the 22 experts one token picks, two 2048 x 5120 BF16 matrices each.
    assert!(skewed.bound_seconds() >= 22.0 * 2.0 * 2048.0 * 5120.0 * 2.0 / gb200.bandwidth(), "{}", skewed.bound_seconds());
    let balanced = Work::of(&moe(16, true), Precision::Bf16, &gb200).unwrap();
    assert!(balanced.bound_seconds() > 5.0 * skewed.bound_seconds(), "a balanced routing spreads 352 picks: {} vs {}", balanced.bound_seconds(), skewed.bound_seconds());
    // A model's spec says its experts are gated: the bound counts all three matrices, and a
    // shape that fixes its work is bounded at the achievable bandwidth like the physics.
    let gated = |gated| Work::of(&Shape::Moe { tokens: 16, hidden: 2048, inter: 5120, topk: 22, experts: 512, tp: 1, ep: 1, balanced: false, gated }, Precision::Bf16, &gb200).unwrap();
    assert!((gated(Some(true)).bound_seconds() / gated(Some(false)).bound_seconds() - 1.5).abs() < 0.01, "{} vs {}", gated(Some(true)).bound_seconds(), gated(Some(false)).bound_seconds());
    let gemm = Work::of(&Shape::Gemm { m: 1, n: 8192, k: 8192 }, Precision::Bf16, &gb200).unwrap();
    assert_eq!(gemm.bound_seconds(), gemm.floor_seconds());
    for tokens in [1, 16, 256, 8192] {
        for balanced in [false, true] {
            let w = Work::of(&moe(tokens, balanced), Precision::Bf16, &gb200).unwrap();
            assert!(w.bound_seconds() > 0.0 && w.bound_seconds() <= w.roofline_seconds(), "{tokens} {balanced}: {w:?}");
        }
    }
}

#[test]
fn mla_decode_reads_the_latent_cache_once_and_the_module_adds_its_projections() {
    let cat = Catalog::builtin();
    let h100 = cat.get("h100").unwrap();
    // The attention kernel alone: the 576-wide latent serves as key and value, so the cache is
    // read once, in its own format; the 128 heads fill two 64-row instructions.
    let Work::Kernel(k) = Work::of(&mla(4, 4095, false, Precision::Bf16), Precision::Bf16, h100).unwrap() else { panic!() };
    let cache = 4.0 * 4096.0 * 576.0;
    assert!(k.bytes >= cache * 2.0 && k.bytes < cache * 2.0 * 1.1, "{}", k.bytes);
    assert_eq!(k.padded_flops, k.flops);
    let Work::Kernel(fp8) = Work::of(&mla(4, 4095, false, Precision::Fp8), Precision::Bf16, h100).unwrap() else { panic!() };
    assert!(fp8.bytes < k.bytes * 0.55, "{} vs {}", fp8.bytes, k.bytes);
    // The module at one sequence: DeepSeek-V3's attention weights (187 M parameters at 128
    // heads) stream once, so it cannot beat their bytes at achievable bandwidth; FP8 block
    // weights halve that floor.
    let bf16 = Work::of(&mla(1, 1, true, Precision::Bf16), Precision::Bf16, h100).unwrap();
    let Work::Chain(kernels) = &bf16 else { panic!("{bf16:?}") };
    assert!(kernels.len() >= 6, "{}", kernels.len());
    let weights = 187e6 * 2.0;
    let floor = bf16.floor_seconds();
    assert!(floor >= weights / (ACHIEVABLE_BANDWIDTH * h100.bandwidth()) && floor < 1.1 * weights / (ACHIEVABLE_BANDWIDTH * h100.bandwidth()), "{floor}");
    let fp8 = Work::of(&mla(1, 1, true, Precision::Bf16), Precision::Fp8Block, h100).unwrap();
    assert!(fp8.floor_seconds() < 0.6 * floor && fp8.floor_seconds() > 0.45 * floor, "{} vs {floor}", fp8.floor_seconds());
    // A chain pays one call's fixed cost, and every kernel's time.
    let p = Params { compute_efficiency: 0.5, memory_efficiency: 0.5, overhead_us: 10.0, per_gpu_us: 0.0, blend: 2.0, split_min: 1e12, sm_bandwidth: 32.0, wave_us: 0.0, row_ns: 0.0, residual: vec![], gpus: 1, rows: 1 };
    let one_by_one: f64 = kernels.iter().map(|k| p.seconds(&Work::Kernel(k.clone())) - 10e-6).sum();
    assert!((p.seconds(&bf16) - (one_by_one + 10e-6)).abs() < 1e-12, "{} vs {}", p.seconds(&bf16), one_by_one + 10e-6);
}

#[test]
fn an_mla_kernel_timed_alone_is_never_priced_with_the_modules_numbers() {
    let cat = Catalog::builtin();
    let a100 = cat.get("a100").unwrap();
    let t = |module| Timing { source: wavecast_data::Source::Aiconfigurator, gpu: "a100-sxm-80gb".into(), shape: mla(8, 1023, module, Precision::Bf16), precision: Precision::Bf16, kernel_source: "k".into(), latency_ms: 1.0, provenance: String::new(), engine: String::new() };
    let kernel = t(false);
    let keys = wavecast_predict::sustained::keys(&kernel, &Work::of(&kernel.shape, kernel.precision, a100).unwrap());
    assert_eq!(keys[3], "*/mla_kernel");
    assert!(keys.iter().all(|k| !k.contains("/mla/")), "{keys:?}");
    let module = t(true);
    let keys = wavecast_predict::sustained::keys(&module, &Work::of(&module.shape, module.precision, a100).unwrap());
    assert_eq!(keys[3], "*/mla");
}

#[test]
fn a_format_the_gpu_has_no_units_for_is_refused() {
    let cat = Catalog::builtin();
    let e = Work::of(&Shape::Gemm { m: 64, n: 64, k: 64 }, Precision::Fp8, cat.get("a100").unwrap()).unwrap_err();
    assert!(e.contains("no fp8"), "{e}");
}

#[test]
fn the_shipped_numbers_price_every_fixture_row_finitely() {
    let cat = Catalog::builtin();
    let model = Model::shipped();
    assert!(!model.keys().is_empty());
    let mut priced = 0;
    for t in fixture_rows() {
        if let Ok(s) = model.predict(&t, cat.get(&t.gpu).unwrap()) {
            assert!(s.is_finite() && s > 0.0, "{t:?}: {s}");
            priced += 1;
        }
    }
    assert!(priced > 100, "{priced}");
}

/// A kernel without FLOPs (a norm, a residual add) keeps its fitted fixed cost: its features
/// stay finite, so a fitted correction scales it instead of turning into NaN, which the floor's
/// `max` once swallowed (every norm of a serving step was priced at its bytes alone, 0.02 µs on
/// a B200 against the 4 µs fixed cost its numbers carry).
#[test]
fn a_kernel_without_flops_keeps_its_fixed_cost() {
    let cat = Catalog::builtin();
    let gpu = cat.get("b200").unwrap();
    let model = Model::shipped();
    let norm = Timing { source: wavecast_data::Source::Aiconfigurator, gpu: gpu.id.clone(), shape: Shape::Vector { op: wavecast_data::STREAM.into(), tokens: 1, width: 27648 }, precision: Precision::Fp16, kernel_source: String::new(), latency_ms: 0.0, provenance: String::new(), engine: String::new() };
    let work = Work::of(&norm.shape, norm.precision, gpu).unwrap();
    assert!(wavecast_predict::sustained::features(&work).iter().all(|f| f.is_finite()), "{:?}", wavecast_predict::sustained::features(&work));
    let alone = model.predict(&norm, gpu).unwrap();
    let inside = model.predict_in_model(&norm, gpu, 2.0).unwrap();
    // The fitted fixed cost within the correction's bound of 3 either way; in a model, the gap
    // (the streaming kernel's tables time it replayed in a graph, so its own cost is no more).
    assert!(alone > 1e-6 && inside >= 2e-6 / 3.0 && inside <= alone, "alone {alone}, inside {inside}");
    // Even numbers whose correction is all weight on the padding feature stay finite.
    let p = Params { residual: vec![1.0; 12], ..model.keys()["*/stream/fp16"].clone() };
    assert!(p.seconds(&work).is_finite() && p.seconds(&work) > 1e-6);
}

/// Every memory-bound pass of the operator graph reads as the engine's streaming kernel over
/// its bytes; an op with a measured family of its own (the gated delta rule) keeps its family.
#[test]
fn memory_bound_passes_read_as_the_streaming_kernel_over_their_bytes() {
    use wavecast_ir::ops::{Elementwise, EwKind, GatedDelta, Norm, NormKind};
    use wavecast_ir::{DType, Op};
    let norm = Op::Norm(Norm::new(NormKind::RmsNorm, 8192, 8192, DType::Bf16));
    let add = Op::Elementwise(Elementwise::new(EwKind::Add, 1 << 20, 2, DType::Bf16));
    let act = Op::Elementwise(Elementwise::new(EwKind::SiluMul, 1 << 16, 2, DType::Bf16));
    for op in [&norm, &add, &act] {
        let (shape, precision) = wavecast_predict::sustained::op_shape(op).unwrap();
        assert_eq!(precision, Precision::Fp16);
        // A vector shape moves 4 bytes per element (16 bits read, 16 written).
        assert_eq!(shape, Shape::Vector { op: wavecast_data::STREAM.into(), tokens: 1, width: (op.bytes() / 4.0).ceil() as u64 }, "{}", op.describe());
    }
    let rule = Op::GatedDelta(GatedDelta { batch: 1, seq: 4096, with_state: true, k_heads: 2, v_heads: 8, head_k_dim: 128, head_v_dim: 128, dtype: DType::Bf16, state_dtype: DType::Fp32 });
    assert!(matches!(wavecast_predict::sustained::op_shape(&rule), Some((Shape::GatedDelta { generation: false, .. }, Precision::Bf16))));
}

fn params() -> impl Strategy<Value = Params> {
    (0.01..1.5f64, 0.01..1.5f64, 0.0..100.0f64, 0.0..20.0f64, 1.0..10.0f64, 1.0..1e5f64, 0.1..40.0f64, 0.0..10.0f64, 0.0..20.0f64, proptest::collection::vec(-5.0..5.0f64, 12)).prop_map(|(ce, me, o, g, b, s, bw, w, r, residual)| Params {
        compute_efficiency: ce,
        memory_efficiency: me,
        overhead_us: o,
        per_gpu_us: g,
        blend: b,
        split_min: s,
        sm_bandwidth: bw,
        wave_us: w,
        row_ns: r,
        residual,
        gpus: 1,
        rows: 1,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Whatever the fitted numbers, a kernel is never faster than its FLOPs at the dense peak or
    /// its bytes at the achievable fraction of datasheet bandwidth.
    #[test]
    fn no_prediction_beats_the_floor(p in params(), m in 1u64..100_000, n in 1u64..100_000, k in 1u64..100_000, gpu in prop::sample::select(vec!["h100", "b200", "l40s", "a100", "h20"])) {
        let cat = Catalog::builtin();
        let gpu = cat.get(gpu).unwrap();
        let work = Work::of(&Shape::Gemm { m, n, k }, Precision::Bf16, gpu).unwrap();
        let Work::Kernel(kw) = &work else { unreachable!() };
        let t = p.seconds(&work);
        prop_assert!(t.is_finite() && t > 0.0);
        prop_assert!(t >= kw.flops / kw.peak_flops.unwrap() * (1.0 - 1e-12));
        prop_assert!(t >= kw.bytes / (ACHIEVABLE_BANDWIDTH * kw.bandwidth) * (1.0 - 1e-12));
    }

    /// The same for an MLA module: never faster than the sum of its kernels' floors.
    #[test]
    fn no_mla_module_beats_its_kernels_floors(p in params(), batch in 1u64..2048, isl in 1u64..8192, past in 0u64..65536, heads in 1u64..129, generation in any::<bool>(), gpu in prop::sample::select(vec!["h100", "b200", "l40s", "a100"])) {
        let cat = Catalog::builtin();
        let gpu = cat.get(gpu).unwrap();
        let isl = if generation { 1 } else { isl };
        let shape = Shape::Mla { batch, isl, kv_len: past, heads, tp: 1, generation, module: true, kv_precision: Precision::Bf16, attention_precision: Precision::Bf16 };
        let work = Work::of(&shape, Precision::Bf16, gpu).unwrap();
        let Work::Chain(kernels) = &work else { unreachable!() };
        let floor: f64 = kernels.iter().map(|k| (k.flops / k.peak_flops.unwrap_or(f64::INFINITY)).max(k.bytes / (ACHIEVABLE_BANDWIDTH * k.bandwidth))).sum();
        let t = p.seconds(&work);
        prop_assert!(t.is_finite() && t > 0.0);
        prop_assert!(t >= floor * (1.0 - 1e-12), "{} < {}", t, floor);
    }
}

/// A shape's time alone and inside a model, asked at once, is bit for bit what the two separate
/// questions give, and inside a model it is the same numbers with the fixed cost lowered (the
/// definition: the fitted numbers with `overhead_us` at most the gap), for kernels, chains of
/// kernels and collectives, on GPUs of three generations.
#[test]
fn alone_and_in_model_at_once_are_the_two_answers_asked_apart() {
    use wavecast_data::timing::Collective;
    use wavecast_data::Source;
    let cat = Catalog::builtin();
    let model = Model::shipped();
    let shapes = [
        (Shape::Gemm { m: 1, n: 4096, k: 4096 }, Precision::Bf16),
        (Shape::Gemm { m: 8192, n: 8192, k: 8192 }, Precision::Fp8),
        (Shape::AttentionDecode { batch: 32, kv_len: 4096, heads: 32, kv_heads: 8, head_dim: 128, window: 0, kv_precision: Precision::Bf16 }, Precision::Bf16),
        (Shape::Vector { op: wavecast_data::STREAM.into(), tokens: 1, width: 27648 }, Precision::Fp16),
        (Shape::Collective { op: Collective::AllReduce, gpus: 8, bytes: 1 << 24, gpus_per_node: 8 }, Precision::Bf16),
    ];
    let mut compared = 0;
    for id in ["a100", "h100", "b200"] {
        let gpu = cat.get(id).unwrap();
        for (shape, precision) in &shapes {
            let t = Timing { source: Source::Aiconfigurator, gpu: gpu.id.clone(), shape: shape.clone(), precision: *precision, kernel_source: String::new(), latency_ms: 0.0, provenance: String::new(), engine: String::new() };
            let (Ok(alone), Ok(inside)) = (model.predict(&t, gpu), model.predict_in_model(&t, gpu, 2.0)) else { continue };
            let work = Work::of(shape, *precision, gpu).unwrap();
            let (both_alone, both_inside) = model.predict_alone_and_in_model(&t, &work, 2.0).unwrap();
            assert_eq!((both_alone.to_bits(), both_inside.to_bits()), (alone.to_bits(), inside.to_bits()), "{id} {shape:?}");
            for p in model.keys().values().take(20) {
                let lowered = match &work {
                    Work::Kernel(_) | Work::Chain(_) if p.overhead_us > 2.0 => Params { overhead_us: 2.0, ..p.clone() }.seconds(&work),
                    _ => p.seconds(&work),
                };
                assert_eq!(p.seconds_in_model(&work, 2.0).to_bits(), lowered.to_bits(), "{id} {shape:?}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 12, "{compared}");
}
