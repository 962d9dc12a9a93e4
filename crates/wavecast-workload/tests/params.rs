//! Every preset's graph must own exactly the published number of parameters: the cheapest
//! strong check that the builder wires the model correctly.

use wavecast_ir::DType;
use wavecast_workload::{build, presets, BuildOptions, Head, Mode};

/// Exact counts as Hugging Face `num_parameters()` reports them (see presets/PARAMS.md):
/// causal-LM classes with tied weights counted once; BERT as BertModel with its pooler.
const EXPECTED: &[(&str, u64)] = &[
    ("gpt2", 124_439_808),
    ("gpt2-medium", 354_823_168),
    ("gpt2-large", 774_030_080),
    ("gpt2-xl", 1_557_611_200),
    ("bert-base", 109_482_240),
    ("bert-large", 335_141_888),
    ("opt-1.3b", 1_315_758_080),
    ("gpt3-xl", 1_315_723_264),
    ("gpt3-2.7b", 2_651_553_280),
    ("llama-3-8b", 8_030_261_248),
    ("llama-3.1-8b", 8_030_261_248),
    ("llama-2-7b", 6_738_415_616),
    ("mistral-7b", 7_241_732_096),
    ("mixtral-8x7b", 46_702_792_704),
    ("llama-3.2-1b", 1_235_814_400),
    ("llama-3.1-70b", 70_553_706_496),
    ("llama-3-70b", 70_553_706_496),
    ("qwen2.5-7b", 7_615_616_512),
    ("qwen2.5-14b", 14_770_033_664),
    ("qwen3-32b", 32_762_123_264),
    // Mixtures of experts of the serving presets: HF `num_parameters()` of the checkpoint
    // (DeepSeek-V3 without its multi-token-prediction layer), see presets/PARAMS.md.
    ("qwen3-235b-a22b", QWEN3_235B),
    ("deepseek-v3", DEEPSEEK_V3),
    ("gpt-oss-120b", GPT_OSS_120B),
    // Not stated on the model card: the architecture formula of presets/PARAMS.md (shared
    // embedding, tied LM head, 6 of 12 feed-forward blocks per stack with 8 experts).
    ("switch-base-8", 619_339_008),
];

/// Published 235B total (Qwen3 technical report, Table 1).
const QWEN3_235B: u64 = 235_093_634_560;
/// Published 671B; the checkpoint's 671,026,419,200 adds DeepSeek's 256 router score-correction
/// biases in each of the 58 MoE layers (14,848), which no kernel reads as weights here.
const DEEPSEEK_V3: u64 = 671_026_404_352;
/// Published 116.83B (gpt-oss model card); attention sinks (64 per layer) are not modelled.
const GPT_OSS_120B: u64 = 116_829_149_760;

#[test]
fn every_preset_has_its_published_parameter_count() {
    assert_eq!(EXPECTED.len(), presets::names().len(), "a preset has no expected count");
    for (name, expected) in EXPECTED {
        let spec = presets::preset(name).unwrap();
        if spec.encdec.is_none() && spec.moe.is_some_and(|m| m.experts > 8) {
            // Enough tokens to route to every expert, so the graph holds all of them.
            assert_eq!(spec.params().total, *expected, "{name}");
            let g = build(&spec, &BuildOptions::new(1, 4096, Mode::Inference, DType::Bf16)).unwrap();
            assert_eq!(g.params(), *expected, "{name}: graph");
            continue;
        }
        let mut o = BuildOptions::new(1, 8, Mode::Inference, DType::Fp32);
        if name.starts_with("bert") {
            o.head = Head::None;
        }
        let g = build(&spec, &o).unwrap();
        assert_eq!(g.params(), *expected, "{name}");
    }
}

#[test]
fn training_adds_backward_with_twice_the_forward_gemm_flops() {
    let spec = presets::preset("gpt2").unwrap();
    let g = build(&spec, &BuildOptions::new(2, 128, Mode::Training, DType::Bf16)).unwrap();
    let gemm = |phase| {
        g.nodes
            .iter()
            .filter(|n| n.phase == phase && matches!(n.op, wavecast_ir::Op::Gemm(_)))
            .map(|n| n.op.flops() * n.repeat as f64)
            .sum::<f64>()
    };
    let fw = gemm(wavecast_ir::Phase::Forward);
    let bw = gemm(wavecast_ir::Phase::Backward);
    // Backward GEMMs have no bias term, so slightly under 2×.
    assert!(bw / fw > 1.99 && bw / fw <= 2.0, "{}", bw / fw);
    assert!(g.nodes.iter().any(|n| n.phase == wavecast_ir::Phase::Optimizer));
}

#[test]
fn forward_flops_are_close_to_two_flops_per_param_per_token() {
    // The classic 2·N·tokens estimate (N without the input embedding table, which is a
    // lookup) plus attention: a loose but independent check.
    let spec = presets::preset("llama-3-8b").unwrap();
    let g = build(&spec, &BuildOptions::new(1, 128, Mode::Inference, DType::Bf16)).unwrap();
    let non_embedding = 8_030_261_248.0 - 128_256.0 * 4096.0;
    let ratio = g.total_flops() / (2.0 * non_embedding * 128.0);
    assert!(ratio > 1.0 && ratio < 1.03, "{ratio}");
}

#[test]
fn bad_shapes_are_errors() {
    let spec = presets::preset("gpt2").unwrap();
    assert!(build(&spec, &BuildOptions::new(0, 8, Mode::Inference, DType::Fp32)).is_err());
    assert!(build(&spec, &BuildOptions::new(1, 4096, Mode::Inference, DType::Fp32)).unwrap_err().to_string().contains("positions"));
    let llama = presets::preset("llama-3-8b").unwrap();
    assert!(build(&llama, &BuildOptions::new(u32::MAX as u64, u32::MAX as u64, Mode::Inference, DType::Fp32)).is_err());
    assert!(presets::preset("gpt5").unwrap_err().to_string().contains("wavecast models"));
}
