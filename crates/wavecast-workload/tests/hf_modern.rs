//! Today's LLM serving configs (DeepSeek-V3, Kimi-K2.5, GLM-5, gpt-oss, Qwen3-MoE, MiniMax-M2,
//! Mixtral): parsing, parameter counts against published totals, MLA and sliding-window KV
//! caches, quantised weights, and the attention-DP / expert-parallel serving layouts.

use std::path::{Path, PathBuf};
use wavecast_ir::ops::{CommKind, GemmKind};
use wavecast_ir::{DType, Graph, Node, Op, Phase, Quant, Role};
use wavecast_test_support::shared;
use wavecast_workload::hf::hf_quant_config;
use wavecast_workload::serve::ServeOptions;
use wavecast_workload::{build, presets, BuildOptions, Mode, Shard, TransformerSpec};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture(name: &str) -> TransformerSpec {
    let path = fixtures().join(format!("{name}_config.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    TransformerSpec::from_json(&text, name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn node<'a>(g: &'a Graph, name: &str) -> &'a Node {
    g.nodes.iter().find(|n| n.name == name).unwrap_or_else(|| {
        panic!(
            "no node {name} in {:?}",
            g.nodes.iter().map(|n| &n.name).collect::<Vec<_>>()
        )
    })
}

fn has(g: &Graph, name: &str) -> bool {
    g.nodes.iter().any(|n| n.name == name)
}

fn within(value: u64, published: f64, what: &str) {
    let err = (value as f64 - published) / published;
    assert!(
        err.abs() <= 0.02,
        "{what}: {value} vs published {published} ({:+.2} %)",
        100.0 * err
    );
}

#[test]
fn deepseek_v3_is_mla_with_dense_first_layers_and_a_shared_expert() {
    let s = fixture("deepseek-ai--DeepSeek-V3");
    let m = s.mla.expect("MLA");
    assert_eq!(
        (
            m.q_lora_rank,
            m.kv_lora_rank,
            m.qk_nope_head_dim,
            m.qk_rope_head_dim,
            m.v_head_dim
        ),
        (Some(1536), 512, 128, 64, 128)
    );
    assert_eq!(
        (s.heads, s.kv_heads, s.head_dim, s.layers),
        (128, 128, 192, 61)
    );
    let moe = s.moe.unwrap();
    assert_eq!(
        (
            moe.experts,
            moe.top_k,
            moe.shared_ffn,
            moe.dense_layers,
            moe.dense_ffn
        ),
        (256, 8, 2048, 3, 18432)
    );
    assert_eq!(s.ffn, 2048, "routed expert width is moe_intermediate_size");
    assert_eq!(s.checkpoint_quant, Some(Quant::Fp8Block));
    assert!(s.sliding_window.is_none());
}

#[test]
fn kimi_k25_glm5_gpt_oss_qwen3_minimax_and_mixtral_parse() {
    // Kimi-K2.5 nests a DeepSeek-V3-style text model under text_config; INT4 experts.
    let k = fixture("moonshotai--Kimi-K2.5");
    let moe = k.moe.unwrap();
    assert_eq!(
        (moe.experts, moe.top_k, moe.dense_layers, k.heads, k.vocab),
        (384, 8, 1, 64, 163840)
    );
    assert_eq!(k.mla.unwrap().kv_lora_rank, 512);
    assert_eq!(k.checkpoint_quant, Some(Quant::Int4));
    // GLM-5: MLA with 192 + 64 query/key and 256-wide values, and DSA's indexer (32 heads of
    // 128, the top 2,048 tokens per query).
    let g = fixture("zai-org--GLM-5");
    let m = g.mla.unwrap();
    assert_eq!(m.indexer, Some(wavecast_workload::hf::SparseIndexer { topk: 2048, heads: 32, head_dim: 128 }));
    assert_eq!(
        (
            m.q_lora_rank,
            m.qk_nope_head_dim,
            m.v_head_dim,
            g.head_dim,
            g.layers
        ),
        (Some(2048), 192, 256, 256, 78)
    );
    assert_eq!(g.moe.unwrap().dense_layers, 3);
    // gpt-oss: alternate 128-token windows, biased experts of width intermediate_size, MXFP4.
    let o = fixture("openai--gpt-oss-120b");
    let w = o.sliding_window.as_ref().unwrap();
    assert_eq!(
        (w.window, w.count(), w.layers[0], w.layers[1]),
        (128, 18, true, false)
    );
    assert_eq!(
        (
            o.moe.unwrap().experts,
            o.moe.unwrap().top_k,
            o.ffn,
            o.kv_heads,
            o.head_dim
        ),
        (128, 4, 2880, 8, 64)
    );
    assert!(o.mlp_bias && o.qkv_bias && o.out_bias);
    assert_eq!(o.checkpoint_quant, Some(Quant::Mxfp4));
    // Qwen3-235B-A22B: expert width moe_intermediate_size, no shared experts.
    let q = fixture("Qwen--Qwen3-235B-A22B");
    let qm = q.moe.unwrap();
    assert_eq!(
        (
            qm.experts,
            qm.top_k,
            q.ffn,
            qm.shared_ffn,
            qm.dense_layers,
            q.kv_heads
        ),
        (128, 8, 1536, 0, 0, 4)
    );
    assert!(q.qk_norm && q.sliding_window.is_none());
    // MiniMax-M2.5: 256 experts of width intermediate_size, QK norm, block FP8.
    let mm = fixture("MiniMaxAI--MiniMax-M2.5");
    assert_eq!(
        (mm.moe.unwrap().experts, mm.ffn, mm.moe.unwrap().shared_ffn),
        (256, 1536, 0)
    );
    assert!(mm.qk_norm);
    assert_eq!(mm.checkpoint_quant, Some(Quant::Fp8Block));
    // Mixtral (sliding_window null) and Mistral-7B (4096 on every layer).
    assert!(presets::preset("mixtral-8x7b")
        .unwrap()
        .sliding_window
        .is_none());
    let mistral = presets::preset("mistral-7b").unwrap();
    assert_eq!(
        mistral
            .sliding_window
            .as_ref()
            .map(|w| (w.window, w.count())),
        Some((4096, 32))
    );
}

#[test]
fn hf_quant_config_names_nvfp4_weights_and_an_fp8_cache() {
    let text = std::fs::read_to_string(
        fixtures().join("nvidia--DeepSeek-V3.1-NVFP4_hf_quant_config.json"),
    )
    .unwrap();
    let q = hf_quant_config(&text, "x").unwrap();
    assert_eq!(
        (q.weights, q.kv_cache),
        (Some(Quant::Nvfp4), Some(DType::Fp8))
    );
    let e = hf_quant_config(r#"{"quantization":{"quant_algo":"INT2"}}"#, "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("INT2") && !e.contains('\n'), "{e}");
    assert!(hf_quant_config("{}", "x")
        .unwrap_err()
        .to_string()
        .contains("quantization"));
}

#[test]
fn unsupported_and_malformed_configs_are_one_line_errors() {
    let one_line = |text: &str, needles: &[&str]| {
        let e = TransformerSpec::from_json(text, "cfg.json")
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "{e}");
        for n in needles {
            assert!(e.contains(n), "{e} lacks {n}");
        }
    };
    let qwen35 =
        std::fs::read_to_string(fixtures().join("Qwen--Qwen3.5-397B-A17B_config.json")).unwrap();
    // Qwen3.5 is read now; a layer kind it does not have is still refused by name.
    let mut odd: serde_json::Value = serde_json::from_str(&qwen35).unwrap();
    odd["text_config"]["layer_types"][0] = "mamba".into();
    one_line(&odd.to_string(), &["layer type 'mamba'", "not modelled"]);
    let mut heads: serde_json::Value = serde_json::from_str(&qwen35).unwrap();
    heads["text_config"]["linear_num_value_heads"] = 24.into();
    one_line(&heads.to_string(), &["linear_num_value_heads 24", "linear_num_key_heads 16"]);
    one_line(
        r#"{"model_type":"nemotron_h","hidden_size":8}"#,
        &["nemotron_h", "Mamba"],
    );
    one_line(
        r#"{"model_type":"falcon_h1"}"#,
        &[
            "unsupported model_type 'falcon_h1'",
            "deepseek_v3",
            "gpt_oss",
        ],
    );
    let ds: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("deepseek-ai--DeepSeek-V3_config.json")).unwrap(),
    )
    .unwrap();
    let mut missing = ds.clone();
    missing.as_object_mut().unwrap().remove("kv_lora_rank");
    one_line(&missing.to_string(), &["missing field 'kv_lora_rank'"]);
    let mut wrong = ds.clone();
    wrong["q_lora_rank"] = "wide".into();
    one_line(
        &wrong.to_string(),
        &["'q_lora_rank' must be a non-negative integer"],
    );
    let mut zero = ds.clone();
    zero["q_lora_rank"] = 0.into();
    one_line(&zero.to_string(), &["q_lora_rank"]);
    // A context of no tokens fits no prompt: refused where it is read, not at serving time.
    let mut no_context = ds.clone();
    no_context["max_position_embeddings"] = 0.into();
    one_line(&no_context.to_string(), &["max_position_embeddings", "at least 1"]);
    // A null q_lora_rank is DeepSeek-V2-Lite's single query projection.
    let mut lite = ds.clone();
    lite["q_lora_rank"] = serde_json::Value::Null;
    assert_eq!(
        TransformerSpec::from_json(&lite.to_string(), "x")
            .unwrap()
            .mla
            .unwrap()
            .q_lora_rank,
        None
    );
    let oss: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("openai--gpt-oss-120b_config.json")).unwrap(),
    )
    .unwrap();
    let mut short = oss.clone();
    short["layer_types"] = serde_json::json!(["sliding_attention", "full_attention"]);
    one_line(
        &short.to_string(),
        &["'layer_types' lists 2 layers but num_hidden_layers is 36"],
    );
    let mut linear = oss.clone();
    linear["layer_types"][3] = "linear_attention".into();
    one_line(&linear.to_string(), &["layer type 'linear_attention'"]);
    let mut no_k = oss.clone();
    no_k.as_object_mut().unwrap().remove("num_experts_per_tok");
    no_k.as_object_mut().unwrap().remove("experts_per_token");
    one_line(&no_k.to_string(), &["missing field 'num_experts_per_tok'"]);
    one_line(
        r#"{"model_type":"kimi_k25","text_config":7}"#,
        &["'text_config' must be an object"],
    );
}

#[test]
fn parameter_counts_match_published_totals() {
    let ds = fixture("deepseek-ai--DeepSeek-V3").params();
    within(
        ds.total,
        671e9,
        "DeepSeek-V3 total (main model, MTP excluded)",
    );
    within(ds.active, 37e9, "DeepSeek-V3 active");
    let q = fixture("Qwen--Qwen3-235B-A22B").params();
    within(q.total, 235e9, "Qwen3-235B-A22B total");
    within(q.active, 22e9, "Qwen3-235B-A22B active");
    let o = fixture("openai--gpt-oss-120b").params();
    within(o.total, 116.83e9, "gpt-oss-120b total");
    within(o.active, 5.13e9, "gpt-oss-120b active");
    let m = presets::preset("mixtral-8x7b").unwrap().params();
    within(m.total, 46.7e9, "Mixtral-8x7B total");
    within(m.active, 12.9e9, "Mixtral-8x7B active");
    let l = presets::preset("llama-3.1-70b").unwrap().params();
    within(l.total, 70.6e9, "Llama-3.1-70B total");
    assert_eq!(l.total, 70_553_706_496, "exact, as Hugging Face counts it");
    assert_eq!(
        presets::preset("qwen3-32b").unwrap().params().total,
        32_762_123_264
    );
    assert_eq!(presets::preset("gpt2").unwrap().params().total, 124_439_808);
    within(
        fixture("moonshotai--Kimi-K2.5").params().total,
        1.04e12,
        "Kimi-K2.5 text model total",
    );
}

/// The analytic count and the graph the builder emits agree, expert by expert.
#[test]
fn spec_params_agree_with_the_built_graph() {
    for name in [
        "deepseek-ai--DeepSeek-V3",
        "openai--gpt-oss-120b",
        "zai-org--GLM-5",
        "Qwen--Qwen3-235B-A22B",
        "MiniMaxAI--MiniMax-M2.5",
    ] {
        let s = fixture(name);
        let e = s.moe.unwrap().experts;
        let g = build(
            &s,
            &BuildOptions::new(1, e * 4, Mode::Inference, DType::Bf16),
        )
        .unwrap();
        assert_eq!(g.params(), s.params().total, "{name}");
    }
}

#[test]
fn mla_caches_one_latent_per_token_and_layer_on_every_gpu() {
    let s = fixture("deepseek-ai--DeepSeek-V3");
    // (kv_lora + rope) · layers · bytes, whatever the tensor-parallel split.
    assert_eq!(
        s.kv_cache_bytes_per_token(DType::Bf16, 16),
        (512.0 + 64.0) * 61.0 * 2.0
    );
    assert_eq!(
        s.kv_cache_bytes_per_token(DType::Fp8, 1),
        (512.0 + 64.0) * 61.0
    );
    // Four sequences of 1024 tokens at TP 8: every GPU caches the whole latent.
    let shard = Shard::new(&s, 8).unwrap();
    assert_eq!(
        s.kv_cache_bytes(DType::Bf16, shard.kv_heads, 1024, 4),
        576.0 * 61.0 * 1024.0 * 4.0 * 2.0
    );
    assert_eq!(
        s.kv_cache_bytes(DType::Fp8, shard.kv_heads, 1024, 4),
        576.0 * 61.0 * 1024.0 * 4.0
    );
}

#[test]
fn mla_decode_is_weight_absorbed_mqa_over_the_latent_and_prefill_expands_it() {
    let s = fixture("deepseek-ai--DeepSeek-V3");
    let mut o = ServeOptions::new(4, 1000, 8, DType::Bf16);
    o.tp = 8;
    let d = o.decode_graph(&s, 0).unwrap();
    // 3 dense layers, 58 MoE layers with a shared expert.
    assert_eq!(node(&d, "dense_layer.attention").repeat, 3);
    assert_eq!(node(&d, "layer.attention").repeat, 58);
    assert!(
        has(&d, "dense_layer.down")
            && has(&d, "layer.shared.gate_up")
            && !has(&d, "dense_layer.router")
    );
    let Op::Attention(a) = &node(&d, "layer.attention").op else {
        panic!()
    };
    assert_eq!(
        (
            a.heads,
            a.kv_heads,
            a.head_dim,
            a.v_head_dim,
            a.shared_kv,
            a.kv_len
        ),
        (16, 1, 576, Some(512), true, 1001)
    );
    // The latent is read once: Q and O of 16 heads, 1001 cached latents, per sequence.
    assert_eq!(
        a.bytes(),
        2.0 * 4.0 * (16.0 * (576.0 + 512.0) + 1001.0 * 576.0)
    );
    let Op::Gemm(qa) = &node(&d, "layer.q_absorb").op else {
        panic!()
    };
    assert_eq!(
        (qa.kind, qa.batch, qa.m, qa.k, qa.n),
        (GemmKind::Bmm, 16, 4, 128, 512)
    );
    let Op::Gemm(vu) = &node(&d, "layer.v_up").op else {
        panic!()
    };
    assert_eq!((vu.batch, vu.k, vu.n), (16, 512, 128));
    let Op::Gemm(out) = &node(&d, "layer.out_proj").op else {
        panic!()
    };
    assert_eq!((out.k, out.n), (16 * 128, 7168));
    assert!(!has(&d, "layer.kv_b"));
    // The cache append is the 576-wide latent, not per-head K and V.
    assert_eq!(
        node(&d, "layer.kv_cache_write").op.bytes(),
        2.0 * 4.0 * 576.0 * 2.0
    );
    // Prefill: kv_b expands every context token, attention with qk 192 and v 128.
    let p = o.prefill_graph(&s).unwrap();
    let Op::Attention(pa) = &node(&p, "layer.attention").op else {
        panic!()
    };
    assert_eq!(
        (
            pa.heads,
            pa.kv_heads,
            pa.head_dim,
            pa.v_head_dim,
            pa.shared_kv
        ),
        (16, 16, 192, Some(128), false)
    );
    let Op::Gemm(kvb) = &node(&p, "layer.kv_b").op else {
        panic!()
    };
    assert_eq!((kvb.m, kvb.k, kvb.n), (4000, 512, 16 * 256));
    let Op::Gemm(qkva) = &node(&p, "layer.q_kv_a").op else {
        panic!()
    };
    assert_eq!(
        qkva.n,
        1536 + 576,
        "merged q_a and kv_a, replicated on every GPU"
    );
}

#[test]
fn sliding_window_layers_cap_attention_and_cache_at_the_window() {
    let s = fixture("openai--gpt-oss-120b");
    let o = ServeOptions::new(2, 1000, 4, DType::Bf16);
    let d = o.decode_graph(&s, 0).unwrap();
    let Op::Attention(full) = &node(&d, "layer.attention").op else {
        panic!()
    };
    let Op::Attention(swa) = &node(&d, "swa_layer.attention").op else {
        panic!()
    };
    assert_eq!(
        (
            node(&d, "layer.attention").repeat,
            node(&d, "swa_layer.attention").repeat
        ),
        (18, 18)
    );
    assert_eq!((full.window, swa.window), (None, Some(128)));
    assert_eq!(swa.attended_pairs(), 128.0);
    assert!(swa.bytes() < full.bytes() / 7.0);
    // Short contexts: one scope, as before.
    let short = ServeOptions::new(2, 64, 4, DType::Bf16)
        .decode_graph(&s, 0)
        .unwrap();
    assert_eq!(node(&short, "layer.attention").repeat, 36);
    assert!(!has(&short, "swa_layer.attention"));
    // Cache: 18 full layers keep 1004 tokens, 18 sliding ones 128; 2·8·64 elements, BF16.
    let per_layer = 2.0 * 8.0 * 64.0 * 2.0;
    assert_eq!(
        s.kv_cache_bytes(DType::Bf16, 8, 1004, 2),
        (18.0 * 1004.0 + 18.0 * 128.0) * per_layer * 2.0
    );
    assert_eq!(s.kv_cache_bytes_per_token(DType::Bf16, 8), 36.0 * per_layer);
}

/// gpt-oss expert weights: layers · experts · (gate+up+down weights, and their biases).
fn gpt_oss_expert_elements(s: &TransformerSpec) -> (f64, f64) {
    let (h, f) = (s.hidden as f64, s.ffn as f64);
    let n = s.layers as f64 * s.moe.unwrap().experts as f64;
    (n * 3.0 * h * f, n * (2.0 * f + h))
}

#[test]
fn expert_and_attention_data_parallelism_split_the_weights() {
    let s = fixture("openai--gpt-oss-120b");
    let one = ServeOptions::new(1, 128, 4, DType::Bf16);
    let w1 = one.weight_bytes(&s).unwrap();
    let (weights, biases) = gpt_oss_expert_elements(&s);
    let experts = 2.0 * (weights + biases);
    // Attention DP 4 with EP 4: attention replicated, a quarter of the experts per GPU.
    let mut dp = one.clone();
    dp.attention_dp = 4;
    dp.ep = 4;
    let w4 = dp.weight_bytes(&s).unwrap();
    assert!(
        ((w1 - w4) - 0.75 * experts).abs() < 1e-9 * w1,
        "{w1} {w4} {experts}"
    );
    // Expert TP 4 instead (moe_tp 4, ep 1): the same bytes, every expert a quarter as wide.
    let mut etp = one.clone();
    etp.attention_dp = 4;
    let (f, h) = (s.ffn as f64, s.hidden as f64);
    let n = s.layers as f64 * 128.0;
    // Row-parallel down-projection biases are not split.
    let etp_experts = 2.0 * n * (3.0 * h * f / 4.0 + 2.0 * f / 4.0 + h);
    assert!(((w1 - etp.weight_bytes(&s).unwrap()) - (experts - etp_experts)).abs() < 1e-9 * w1);
    // MXFP4 experts only (attention BF16, as the checkpoint): 4.25 bits per expert weight.
    let mut mx = one.clone();
    mx.quant = Some(Quant::Mxfp4);
    mx.quant_attention = false;
    let wq = mx.weight_bytes(&s).unwrap();
    assert!(
        ((w1 - wq) - weights * (2.0 - 4.25 / 8.0)).abs() < 1e-9 * w1,
        "{w1} {wq}"
    );
    // The whole model in MXFP4 is about 61-66 GB (the published checkpoint is ~65 GB).
    assert!(wq > 58e9 && wq < 68e9, "{wq}");
}

#[test]
fn quantised_layers_leave_lm_head_router_and_embeddings_alone() {
    let s = fixture("deepseek-ai--DeepSeek-V3");
    let mut o = ServeOptions::new(2, 256, 4, DType::Bf16);
    o.tp = 8;
    o.quant = Some(Quant::Nvfp4);
    let d = o.decode_graph(&s, 0).unwrap();
    let quant = |name: &str| match &node(&d, name).op {
        Op::Gemm(g) => g.quant,
        other => panic!("{other:?}"),
    };
    for n in [
        "layer.expert.gate_up",
        "layer.expert.down",
        "layer.shared.gate_up",
        "dense_layer.gate_up",
        "layer.q_kv_a",
        "layer.q_b",
        "layer.out_proj",
    ] {
        assert_eq!(quant(n), Some(Quant::Nvfp4), "{n}");
    }
    for n in ["head.lm_head", "layer.router", "layer.q_absorb"] {
        assert_eq!(quant(n), None, "{n}");
    }
    o.quant_attention = false;
    let d = o.decode_graph(&s, 0).unwrap();
    assert!(matches!(&node(&d, "layer.q_kv_a").op, Op::Gemm(g) if g.quant.is_none()));
    // NVFP4 DeepSeek-V3 on 8 GPUs: about 671e9 · 4.5 / 8 / 8 ≈ 47 GB each, plus BF16 attention.
    let w = o.weight_bytes(&s).unwrap();
    assert!(w > 45e9 && w < 60e9, "{w}");
}

#[test]
fn attention_dp_gathers_or_exchanges_tokens_around_the_moe() {
    let s = fixture("deepseek-ai--DeepSeek-V3");
    let mut o = ServeOptions::new(16, 512, 4, DType::Bf16);
    o.attention_dp = 8;
    o.ep = 8;
    let d = o.decode_graph(&s, 0).unwrap();
    let comm = |name: &str| match &node(&d, name).op {
        Op::Comm(c) => (c.kind, c.group, c.bytes),
        other => panic!("{other:?}"),
    };
    // Each rank sends its 16 tokens × top-8 hidden vectors.
    assert_eq!(
        comm("layer.ep_dispatch_all_to_all"),
        (CommKind::AllToAll, 8, 16.0 * 8.0 * 7168.0 * 2.0)
    );
    assert!(has(&d, "layer.ep_combine_all_to_all") && !has(&d, "layer.moe_all_gather"));
    // 128 tokens of the replica, top-8, over 8 GPUs: 128 routed rows here.
    assert_eq!(
        node(&d, "layer.dispatch").op.bytes(),
        2.0 * 128.0 * 7168.0 * 2.0
    );
    let Op::Attention(a) = &node(&d, "layer.attention").op else {
        panic!()
    };
    assert_eq!(
        (a.batch, a.heads),
        (16, 128),
        "attention: own sequences, all heads (tp 1)"
    );
    // Expert TP across the replica instead: all-gather before, reduce-scatter after.
    o.ep = 1;
    let d = o.decode_graph(&s, 0).unwrap();
    assert!(
        has(&d, "layer.moe_all_gather")
            && has(&d, "layer.moe_reduce_scatter")
            && !has(&d, "layer.ep_dispatch_all_to_all")
    );
    let Op::Gemm(down) = &node(&d, "layer.expert.down").op else {
        panic!()
    };
    assert_eq!(down.k, 2048 / 8);
}

/// A training dispatcher sends a token once per remote node (DeepEP's normal kernels,
/// HybridEP), so its all-to-alls say how many expert copies of each token their bytes hold;
/// serving's (decode's low-latency kernels, vLLM's default backend) send every copy.
#[test]
fn training_expert_all_to_alls_carry_their_top_k() {
    let s = fixture("deepseek-ai--DeepSeek-V3");
    let mut o = BuildOptions::new(1, 4096, Mode::Training, DType::Bf16);
    o.ep = 8;
    let g = build(&s, &o).unwrap();
    let dispatches: Vec<_> = g.nodes.iter().filter(|n| n.name.ends_with("ep_dispatch_all_to_all")).collect();
    assert!(!dispatches.is_empty());
    for n in dispatches {
        let Op::Comm(c) = &n.op else { panic!("{n:?}") };
        assert_eq!((c.kind, c.group, c.fanout, c.bytes), (CommKind::AllToAll, 8, 8, 4096.0 * 8.0 * 7168.0 * 2.0), "{}", n.name);
    }
    let mut serve = ServeOptions::new(16, 512, 4, DType::Bf16);
    serve.attention_dp = 8;
    serve.ep = 8;
    let d = serve.decode_graph(&s, 0).unwrap();
    assert!(matches!(&node(&d, "layer.ep_dispatch_all_to_all").op, Op::Comm(c) if c.fanout == 1));
}

#[test]
fn layouts_that_do_not_fit_are_one_line_errors() {
    let err = |spec: &TransformerSpec, f: &dyn Fn(&mut ServeOptions), needle: &str| {
        let mut o = ServeOptions::new(1, 64, 4, DType::Bf16);
        f(&mut o);
        let e = o.validate(spec).unwrap_err().to_string();
        assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        // Building refuses it too.
        assert!(o.decode_graph(spec, 0).is_err());
    };
    let ds = fixture("deepseek-ai--DeepSeek-V3");
    err(
        &ds,
        &|o| {
            o.tp = 8;
            o.attention_dp = 2;
            o.moe_tp = Some(4);
            o.ep = 2;
        },
        "tp 8 × attention_dp 2 = 16 GPUs but moe_tp 4 × ep 2 = 8",
    );
    err(
        &ds,
        &|o| o.tp = 3,
        "tensor parallelism 3 does not divide the model's 128 attention heads",
    );
    err(
        &ds,
        &|o| {
            o.attention_dp = 6;
            o.ep = 4;
        },
        "expert parallelism 4 does not divide the 6 GPUs",
    );
    let mixtral = presets::preset("mixtral-8x7b").unwrap();
    err(
        &mixtral,
        &|o| {
            o.attention_dp = 3;
            o.ep = 3;
        },
        "expert parallelism 3 does not divide the model's 8 experts",
    );
    let oss = fixture("openai--gpt-oss-120b");
    err(
        &oss,
        &|o| o.attention_dp = 7,
        "MoE tensor parallelism 7 does not divide the expert width 2880",
    );
    let llama = presets::preset("llama-3.1-70b").unwrap();
    err(
        &llama,
        &|o| {
            o.tp = 2;
            o.ep = 2;
        },
        "needs a mixture-of-experts model",
    );
    // A consistent wide-EP layout is accepted: 8 attention ranks, experts over 8 GPUs.
    let mut ok = ServeOptions::new(1, 64, 4, DType::Bf16);
    ok.attention_dp = 8;
    ok.ep = 8;
    assert!(ok.validate(&ds).is_ok());
}

/// Every config in the shared model_configs folder either builds a decode and a prefill graph
/// or is refused with one line; none panics.
#[test]
fn every_shared_model_config_parses_and_builds_or_is_refused() {
    let Some(dir) = shared("data/aiconfigurator/model_configs") else { return };
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.ends_with("_config.json") && !n.ends_with("hf_quant_config.json")
        })
        .collect();
    files.sort();
    let (mut built, mut refused) = (Vec::new(), Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let outcome = std::panic::catch_unwind(|| -> Result<(), String> {
            let spec = TransformerSpec::from_json(&text, &name).map_err(|e| e.to_string())?;
            let o = ServeOptions::new(2, 300, 4, DType::Bf16);
            o.decode_graph(&spec, 0).map_err(|e| e.to_string())?;
            o.prefill_graph(&spec).map_err(|e| e.to_string())?;
            let p = spec.params();
            assert!(p.active <= p.total && p.active > 0, "{name}: {p:?}");
            Ok(())
        });
        match outcome {
            Ok(Ok(())) => built.push(name),
            Ok(Err(e)) => {
                assert!(!e.contains('\n') && !e.is_empty(), "{name}: {e}");
                refused.push(format!("{name}: {e}"));
            }
            Err(_) => panic!("{name} panicked"),
        }
    }
    eprintln!(
        "built {}: {}\nrefused {}:\n  {}",
        built.len(),
        built.join(", "),
        refused.len(),
        refused.join("\n  ")
    );
    for must in [
        "deepseek-ai--DeepSeek-V3_config.json",
        "deepseek-ai--DeepSeek-R1_config.json",
        "openai--gpt-oss-120b_config.json",
        "moonshotai--Kimi-K2.5_config.json",
        "zai-org--GLM-5_config.json",
        "MiniMaxAI--MiniMax-M2.5_config.json",
        "Qwen--Qwen3-235B-A22B_config.json",
        "mistralai--Mixtral-8x7B-v0.1_config.json",
    ] {
        assert!(
            built.iter().any(|b| b == must) || !files.iter().any(|f| f.ends_with(must)),
            "{must} did not build"
        );
    }
}

/// Each node carries its place in the model as a typed role (the serving cost model and the step
/// simulator read it, never the node's name): routed experts, the shared expert and dense layers,
/// the embeddings and the head (sampling included) of a DeepSeek-V3 decode step.
#[test]
fn decode_nodes_carry_their_roles() {
    let s = fixture("deepseek-ai--DeepSeek-V3");
    let mut o = ServeOptions::new(4, 1000, 8, DType::Bf16);
    o.tp = 8;
    let d = o.decode_graph(&s, 0).unwrap();
    assert_eq!(node(&d, "layer.expert.down").role, Role::Expert);
    assert_eq!(node(&d, "layer.shared.down").role, Role::Layer);
    assert_eq!(node(&d, "dense_layer.down").role, Role::Layer);
    assert_eq!(node(&d, "layer.attention").role, Role::Layer);
    assert_eq!(node(&d, "layer.dispatch").role, Role::Routing);
    assert_eq!(node(&d, "layer.combine").role, Role::Routing);
    assert_eq!(node(&d, "head.sample").role, Role::Head);
    let scoped = |prefix: &str, role: Role| {
        let nodes: Vec<&Node> = d.nodes.iter().filter(|n| n.name.starts_with(prefix)).collect();
        assert!(!nodes.is_empty() && nodes.iter().all(|n| n.role == role), "{prefix}: {:?}", nodes.iter().map(|n| (&n.name, n.role)).collect::<Vec<_>>());
    };
    scoped("embed.", Role::Prologue);
    scoped("head.", Role::Head);
    assert!(d.nodes.iter().all(|n| n.role != Role::Unscoped), "the transformer builder scopes every node");
}

/// A training graph's backward nodes keep the role of the forward node they differentiate.
#[test]
fn backward_nodes_keep_their_forward_role() {
    let s = fixture("Qwen--Qwen3-235B-A22B");
    let g = build(&s, &BuildOptions::new(1, 256, Mode::Training, DType::Bf16)).unwrap();
    let mut checked = 0;
    for n in g.nodes.iter().filter(|n| n.phase == Phase::Backward) {
        let Some((forward, _)) = n.name.rsplit_once(".grad") else { continue };
        assert_eq!(n.role, node(&g, forward).role, "{}", n.name);
        checked += 1;
    }
    assert!(checked > 10 && g.nodes.iter().any(|n| n.phase == Phase::Backward && n.role == Role::Expert), "{checked} backward nodes");
}

#[test]
fn checkpoints_are_served_in_their_own_formats() {
    // DeepSeek-V3 stores every linear layer in 128×128-block FP8; the engines load it so.
    let d = fixture("deepseek-ai--DeepSeek-V3").served_quants();
    assert_eq!((d.layers, d.experts), (Some(Quant::Fp8Block), Some(Quant::Fp8Block)));
    // gpt-oss and Kimi-K2.5 quantize only the routed experts (weight-only 4-bit).
    let o = fixture("openai--gpt-oss-120b").served_quants();
    assert_eq!((o.layers, o.experts), (None, Some(Quant::Mxfp4)));
    let k = fixture("moonshotai--Kimi-K2.5").served_quants();
    assert_eq!((k.layers, k.experts), (None, Some(Quant::Int4)));
    // A checkpoint without a quantization_config is served in its 16-bit dtype.
    let plain = TransformerSpec::from_json(r#"{"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000, "max_position_embeddings": 2048}"#, "tiny").unwrap();
    assert_eq!(plain.served_quants(), wavecast_workload::ServedQuants::default());
}

/// Qwen3.5-397B-A17B (Qwen's model card: 397 B parameters, 17 B active; 60 layers, 45 of
/// them Gated DeltaNet linear attention and every fourth gated full attention): the parsed
/// shape, the counts against the published totals (the vision encoder, ~0.4 B, and the MTP
/// layer are not part of the text model).
#[test]
fn qwen35_hybrid_linear_attention_is_read_and_counted() {
    let spec = fixture("Qwen--Qwen3.5-397B-A17B");
    let l = spec.linear_attention.as_ref().expect("linear attention");
    assert_eq!((l.count(), spec.attention_layers()), (45, 15));
    assert!(!l.layers[3] && l.layers[0] && l.layers[4], "every fourth layer is full attention");
    assert_eq!((l.k_heads, l.v_heads, l.head_k_dim, l.head_v_dim, l.conv_kernel), (16, 64, 128, 128, 4));
    assert_eq!(l.state_dtype, DType::Fp32);
    assert!(spec.attn_output_gate && spec.qk_norm);
    assert_eq!(spec.rotary_dim, Some(64), "partial_rotary_factor 0.25 of 256");
    let p = spec.params();
    within(p.total, 397e9, "Qwen3.5 total");
    assert!((p.active as f64 / 17e9 - 1.0).abs() < 0.05, "active {}", p.active);
    // Read as all full attention, the 45 mixers would count 0.6 B fewer parameters.
    let mut all_full = spec.clone();
    all_full.linear_attention = None;
    assert!(all_full.params().total + 500_000_000 < p.total);
}

/// The graph: 45 linear layers and 15 full-attention ones; the gated delta rule is chunked
/// over a prompt and recurrent in decode; the KV cache counts the full layers only and the
/// linear layers' state is the same for any length.
#[test]
fn qwen35_graph_prices_deltanet_layers_and_caches_only_full_attention() {
    let spec = fixture("Qwen--Qwen3.5-397B-A17B");
    let mut o = BuildOptions::new(1, 2048, Mode::Inference, DType::Bf16);
    o.tp = 8;
    o.merged_projections = true;
    let prefill = build(&spec, &o).unwrap();
    let delta = node(&prefill, "linear_layer.gated_delta");
    assert_eq!(delta.repeat, 45);
    assert_eq!(node(&prefill, "layer.attention").repeat, 15);
    let Op::GatedDelta(d) = &delta.op else { panic!("{:?}", delta.op) };
    assert!(!d.recurrent() && (d.k_heads, d.v_heads) == (2, 8), "{d:?}");
    // The full-attention layer's projection carries the output gate: q and gate 2 × 4 × 256,
    // k and v 1 × 256 each (2 KV heads replicated over 8 GPUs).
    let Op::Gemm(qkv) = &node(&prefill, "layer.qkv").op else { panic!() };
    assert_eq!(qkv.n, 2 * 4 * 256 + 2 * 256);
    assert!(has(&prefill, "layer.output_gate") && !has(&prefill, "linear_layer.attention"));
    o.seq = 1;
    o.past = 2047;
    o.batch = 16;
    let decode = build(&spec, &o).unwrap();
    let Op::GatedDelta(d) = &node(&decode, "linear_layer.gated_delta").op else { panic!() };
    assert!(d.recurrent());
    // Decode reads and writes 16 sequences' states (8 heads × 128 × 128 FP32 per GPU).
    assert!(d.bytes() >= 16.0 * 2.0 * 8.0 * 128.0 * 128.0 * 4.0);
    // KV cache: 15 layers × 2 × 1 KV head × 256 × 2 bytes per token on each of 8 GPUs.
    assert_eq!(spec.kv_cache_bytes_per_token(DType::Bf16, 1), 15.0 * 2.0 * 256.0 * 2.0);
    let state = spec.linear_state_bytes(8, DType::Bf16);
    assert_eq!(state, 45.0 * (8.0 * 128.0 * 128.0 * 4.0 + 12288.0 / 8.0 * 3.0 * 2.0));
    // The graph's weights (one token: top-k experts, the embedding table) agree with the
    // count (conv taps and per-head scalars aside).
    let mut one = BuildOptions::new(1, 1, Mode::Inference, DType::Bf16);
    one.merged_projections = true;
    let g = build(&spec, &one).unwrap();
    let (graph, counted) = ((g.params() - g.idle_params) as f64, (spec.params().active + spec.hidden * spec.vocab) as f64);
    assert!((graph / counted - 1.0).abs() < 0.01, "graph {graph} vs {counted}");
    // The experts no token reached stay resident: with them the graph holds the whole model.
    let (whole, total) = (g.params() as f64, (spec.params().total) as f64);
    assert!((whole / total - 1.0).abs() < 0.01, "graph {whole} vs {total}");
}

/// Qwen3-Next lists no layer_types: every full_attention_interval-th layer is full.
#[test]
fn qwen3_next_derives_its_layers_from_the_interval() {
    let cfg = serde_json::json!({"model_type": "qwen3_next", "hidden_size": 2048, "num_hidden_layers": 48,
        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "intermediate_size": 5120,
        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts": 512,
        "num_experts_per_tok": 10, "vocab_size": 151936, "full_attention_interval": 4, "linear_num_key_heads": 16,
        "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4, "partial_rotary_factor": 0.25, "decoder_sparse_step": 1, "mlp_only_layers": []});
    let spec = TransformerSpec::from_json(&cfg.to_string(), "qwen3-next-80b").unwrap();
    assert_eq!(spec.attention_layers(), 12);
    // Qwen3-Next-80B-A3B: 80 B parameters, 3 B active (the model card; 3.6 B here with the
    // 0.3 B LM head and the rounding of "3 B").
    within(spec.params().total, 80e9, "Qwen3-Next total");
    let active = spec.params().active as f64;
    assert!(active > 3.0e9 && active < 3.8e9, "active {active}");
}

/// DSA (GLM-5): a decode step scores every cached token with the indexer (heads against the
/// cached keys, whole on each tensor-parallel GPU) and attends to the top 2,048 only; its KV
/// cache holds the indexer's FP8 key and scale beside the latent; its 78 indexers add their
/// projections to the published 744 B parameters.
#[test]
fn sparse_attention_scores_every_token_and_attends_to_the_top_k() {
    let s = fixture("zai-org--GLM-5");
    let mut o = ServeOptions::new(4, 8000, 8, DType::Bf16);
    o.tp = 8;
    let d = o.decode_graph(&s, 0).unwrap();
    let Op::Gemm(scores) = &node(&d, "layer.indexer_scores").op else { panic!("the indexer's scores") };
    // Its scores and pick grow with the cache, its projections with the batch's tokens.
    assert_eq!((node(&d, "layer.indexer_scores").role, node(&d, "layer.indexer_topk").role), (Role::OverContext, Role::OverContext));
    assert_eq!(node(&d, "layer.indexer_q").role, Role::Layer);
    let Op::Attention(a) = &node(&d, "layer.attention").op else { panic!() };
    assert!(a.kv_len > 8000 && a.heads == 8);
    assert_eq!((scores.batch, scores.m, scores.k, scores.n), (4, 32, 128, a.kv_len));
    assert_eq!((a.window, a.kv_tokens_read()), (Some(2048), 2048.0));
    let dense = wavecast_workload::hf::Mla { indexer: None, ..s.mla.unwrap() };
    let without = TransformerSpec { mla: Some(dense), ..s.clone() };
    let (with_ix, without_ix) = (s.kv_cache_bytes_per_token(DType::Fp8, 1), without.kv_cache_bytes_per_token(DType::Fp8, 1));
    assert_eq!(with_ix - without_ix, 78.0 * 132.0);
    within(s.params().total, 744e9, "GLM-5");
    assert!(s.params().total - without.params().total > 700_000_000);
}

/// The serving grids' context-only passes hold exactly the nodes of the whole pass that see
/// the context (attention, the gated delta rule, the sparse indexer's scores and pick), in the
/// same order with the same repeats: MLA, hybrid linear attention, sparse attention, sliding
/// windows, context parallelism and learned positions, in prefill, chunks and decode.
#[test]
fn a_context_only_pass_is_the_whole_pass_less_what_sees_no_context() {
    let llama = presets::preset("llama-3.1-70b").unwrap();
    let gpt2 = presets::preset("gpt2").unwrap();
    let models = [fixture("deepseek-ai--DeepSeek-V3"), fixture("Qwen--Qwen3.5-397B-A17B"), fixture("zai-org--GLM-5"), fixture("openai--gpt-oss-120b"), llama, gpt2];
    for spec in &models {
        for (batch, seq, past, cp) in [(1, 512, 0, 1), (1, 256, 700, 1), (8, 1, 900, 1), (1, 512, 0, 2)] {
            let mut o = BuildOptions::new(batch, seq, Mode::Inference, DType::Bf16);
            (o.past, o.cp, o.tp, o.merged_projections) = (past, cp, 1, spec.name != "gpt2");
            let whole = build(spec, &o).unwrap();
            o.context_only = true;
            let only = build(spec, &o).unwrap();
            let seen: Vec<&Node> = whole.nodes.iter().filter(|n| n.role.sees_context(&n.op)).collect();
            assert!(!seen.is_empty(), "{}: no attention in the pass", spec.name);
            assert_eq!(only.nodes.iter().collect::<Vec<_>>(), seen, "{} at {batch}×{seq} after {past}, cp {cp}", spec.name);
        }
    }
}

/// A rotary model priced past its context says so in the workload's notes; within it, nothing.
#[test]
fn a_sequence_beyond_the_context_is_priced_with_a_note() {
    use wavecast_workload::{load, LoadOptions, Source};
    let notes = |name: &str, seq: u64| load(Source::Preset(name), &LoadOptions::new(1, seq, Mode::Inference)).unwrap().notes;
    let beyond = notes("llama-3-8b", 20_000);
    assert_eq!(beyond.len(), 1, "{beyond:?}");
    assert!(beyond[0].contains("beyond llama-3-8b's context of 8192"), "{beyond:?}");
    assert!(notes("llama-3-8b", 8192).is_empty());
    assert!(notes("llama-3.1-8b", 20_000).is_empty(), "Llama 3.1 serves 131,072 tokens");
}

/// A ModelOpt checkpoint's config has no `quantization_config`; its `hf_quant_config.json`
/// beside it (in either naming) gives the format the engines serve it in.
#[test]
fn a_modelopt_checkpoint_reads_its_format_from_the_file_beside_its_config() {
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixtures().join("deepseek-ai--DeepSeek-V3_config.json")).unwrap()).unwrap();
    config.as_object_mut().unwrap().remove("quantization_config");
    let quant = std::fs::read_to_string(fixtures().join("nvidia--DeepSeek-V3.1-NVFP4_hf_quant_config.json")).unwrap();
    let dir = std::env::temp_dir().join(format!("wavecast-modelopt-{}", std::process::id()));
    for (config_name, quant_name) in [("nvidia--DeepSeek-V3.1-NVFP4_config.json", "nvidia--DeepSeek-V3.1-NVFP4_hf_quant_config.json"), ("config.json", "hf_quant_config.json")] {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(config_name);
        std::fs::write(&path, config.to_string()).unwrap();
        assert_eq!(wavecast_workload::presets::load_config(&path).unwrap().checkpoint_quant, None, "{config_name} alone");
        std::fs::write(dir.join(quant_name), &quant).unwrap();
        assert_eq!(wavecast_workload::presets::load_config(&path).unwrap().checkpoint_quant, Some(Quant::Nvfp4), "{config_name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
