//! Serving workload: KV-cache FLOPs and bytes against hand-computed values, tensor-parallel
//! sharding (per-GPU work = total / N, plus the all-reduces), and memory accounting.

use wavecast_ir::ops::{CommKind, OpClass};
use wavecast_ir::{DType, Graph, Op};
use wavecast_workload::serve::ServeOptions;
use wavecast_workload::transformer::active_experts;
use wavecast_workload::{build, presets, BuildOptions, Head, Mode, Shard};

fn sum_where(g: &Graph, f: impl Fn(&Op) -> bool, value: impl Fn(&Op) -> f64) -> f64 {
    g.nodes.iter().filter(|n| f(&n.op)).map(|n| value(&n.op) * n.repeat as f64).sum()
}

fn node<'a>(g: &'a Graph, name: &str) -> &'a wavecast_ir::Node {
    g.nodes.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("no node {name}"))
}

/// Llama-3.1-70B: 80 layers, 64 query heads, 8 KV heads, head_dim 128, hidden 8192.
#[test]
fn decode_attention_reads_the_whole_kv_cache() {
    let spec = presets::preset("llama-3.1-70b").unwrap();
    let o = ServeOptions::new(8, 1000, 10, DType::Bf16);
    // Step 4 sees 1000 + 4 cached tokens plus its own: kv_len 1005.
    let g = o.decode_graph(&spec, 4).unwrap();
    let attn = node(&g, "layer.attention");
    assert_eq!(attn.repeat, 80);
    // FLOPs: 4 · batch · heads · head_dim · kv_len (QKᵀ and PV, one query).
    assert_eq!(attn.op.flops(), 4.0 * 8.0 * 64.0 * 128.0 * 1005.0);
    // Bytes: K and V of 8 heads × 1005 tokens, plus Q read and O written, all BF16, per sequence.
    let kv = 2.0 * 8.0 * 1005.0 * 128.0;
    let qo = 2.0 * 64.0 * 128.0;
    assert_eq!(attn.op.bytes(), 2.0 * 8.0 * (kv + qo));
    // Appending this step's K and V (read + write) for 8 tokens of 8 KV heads.
    assert_eq!(node(&g, "layer.kv_cache_write").op.bytes(), 2.0 * 2.0 * 8.0 * 8.0 * 128.0 * 2.0);
}

#[test]
fn kv_cache_memory_matches_the_formula() {
    // 2 · layers · kv_heads/tp · head_dim · (I+O) · B · 2 bytes.
    let spec = presets::preset("llama-3.1-70b").unwrap();
    let mut o = ServeOptions::new(16, 2048, 128, DType::Bf16);
    o.tp = 4;
    let shard = o.validate(&spec).unwrap();
    let context = o.context().unwrap();
    assert_eq!(context, 2176);
    assert_eq!(spec.kv_cache_bytes(o.kv_element(), shard.kv_heads, context, o.batch), 2.0 * 80.0 * 2.0 * 128.0 * 2176.0 * 16.0 * 2.0);
    // Qwen3-32B at TP 8 has 8 KV heads: one per GPU.
    let qwen = presets::preset("qwen3-32b").unwrap();
    o.tp = 8;
    let shard = o.validate(&qwen).unwrap();
    assert_eq!(shard.kv_heads, 1);
    assert_eq!(qwen.kv_cache_bytes(o.kv_element(), shard.kv_heads, context, o.batch), 2.0 * 64.0 * 1.0 * 128.0 * 2176.0 * 16.0 * 2.0);
}

#[test]
fn weight_memory_is_params_per_gpu_and_fp8_halves_the_layers() {
    let spec = presets::preset("llama-3-8b").unwrap();
    let o = ServeOptions::new(1, 16, 4, DType::Bf16);
    let params = 8_030_261_248.0;
    assert_eq!(o.weight_bytes(&spec).unwrap(), 2.0 * params);
    let mut fp8 = o.clone();
    fp8.weights = DType::Fp8;
    // Embedding (128256 × 4096), LM head (same) and norms stay BF16; all else one byte.
    let embed = 128_256.0 * 4096.0;
    let norms = 4096.0 * (2.0 * 32.0 + 1.0);
    let layers = params - 2.0 * embed - norms;
    assert_eq!(fp8.weight_bytes(&spec).unwrap(), layers + 2.0 * (2.0 * embed + norms));
    // TP 4: every sharded matrix and the vocab split 4 ways; norms replicated.
    let mut tp = o.clone();
    tp.tp = 4;
    assert_eq!(tp.weight_bytes(&spec).unwrap(), 2.0 * ((params - norms) / 4.0 + norms));
}

#[test]
fn mixtral_weights_count_every_expert() {
    let spec = presets::preset("mixtral-8x7b").unwrap();
    let o = ServeOptions::new(1, 16, 4, DType::Bf16);
    assert_eq!(o.weight_bytes(&spec).unwrap(), 2.0 * 46_702_792_704.0);
}

#[test]
fn tp_divides_gemm_and_attention_flops_and_adds_two_all_reduces_per_layer() {
    let spec = presets::preset("llama-3.1-70b").unwrap();
    let mut o = BuildOptions::new(4, 512, Mode::Inference, DType::Bf16);
    o.head = Head::LastToken;
    let one = build(&spec, &o).unwrap();
    let matmul = |op: &Op| matches!(op.class(), OpClass::Gemm | OpClass::FusedAttention);
    for tp in [2u64, 4, 8] {
        o.tp = tp;
        let g = build(&spec, &o).unwrap();
        let per_gpu = sum_where(&g, matmul, Op::flops);
        let total = sum_where(&one, matmul, Op::flops);
        assert!((per_gpu * tp as f64 - total).abs() / total < 1e-12, "tp {tp}");
        // The rest (norms, residuals) is replicated, so the whole graph is a bit over total/N.
        assert!(g.total_flops() > one.total_flops() / tp as f64);
        assert!(g.total_flops() < 1.01 * one.total_flops() / tp as f64);
        // All-reduces: after attention and MLP in each of 80 layers, and after the embedding.
        let ar: Vec<_> = g.nodes.iter().filter(|n| matches!(&n.op, Op::Comm(c) if c.kind == CommKind::AllReduce)).collect();
        assert_eq!(ar.iter().map(|n| n.repeat).sum::<u64>(), 2 * 80 + 1);
        for n in &ar {
            let Op::Comm(c) = &n.op else { unreachable!() };
            assert_eq!(c.bytes, 4.0 * 512.0 * 8192.0 * 2.0);
            assert_eq!(c.group as u64, tp);
        }
        // The LM head's vocab slices are gathered: batch × vocab logits.
        let Op::Comm(gather) = &node(&g, "head.logits_all_gather").op else { panic!() };
        assert_eq!(gather.bytes, 4.0 * 128_256.0 * 2.0);
    }
    assert!(!one.nodes.iter().any(|n| matches!(n.op, Op::Comm(_))), "TP 1 has no communication");
}

#[test]
fn tp_that_does_not_divide_heads_is_an_error() {
    let spec = presets::preset("qwen2.5-14b").unwrap(); // 40 heads, 8 KV heads
    let e = Shard::new(&spec, 3).unwrap_err().to_string();
    assert!(e.contains("tensor parallelism 3 does not divide the model's 40 attention heads"), "{e}");
    assert_eq!(Shard::new(&spec, 8).unwrap().kv_heads, 1);
    assert!(Shard::new(&spec, 0).is_err());
    // Qwen2.5-7B: 28 heads divide by 7, its 4 KV heads neither divide nor replicate evenly.
    let qwen7 = presets::preset("qwen2.5-7b").unwrap();
    let e = Shard::new(&qwen7, 7).unwrap_err().to_string();
    assert!(e.contains("4 key/value heads"), "{e}");
    // Past one server TP is priced (its collectives over the network) where it divides the heads.
    let mut o = ServeOptions::new(1, 8, 8, DType::Bf16);
    o.tp = 16;
    assert!(o.validate(&spec).unwrap_err().to_string().contains("does not divide the model's 40 attention heads"));
    assert_eq!(o.validate(&presets::preset("llama-3.1-70b").unwrap()).unwrap().kv_heads, 1);
}

#[test]
fn prefill_and_decode_graphs_have_the_serving_shapes() {
    let spec = presets::preset("qwen2.5-14b").unwrap();
    let mut o = ServeOptions::new(2, 300, 50, DType::Bf16);
    o.tp = 2;
    let p = o.prefill_graph(&spec).unwrap();
    // One merged QKV GEMM: 20 query and 4 KV heads per GPU for K and for V.
    let Op::Gemm(qkv) = &node(&p, "layer.qkv").op else { panic!() };
    assert_eq!((qkv.m, qkv.k, qkv.n), (600, 5120, (20 + 2 * 4) * 128));
    let Op::Gemm(lm) = &node(&p, "head.lm_head").op else { panic!() };
    assert_eq!((lm.m, lm.n), (2, 152_064 / 2), "LM head on the last position only, vocab-parallel");
    assert!(matches!(node(&p, "head.sample").op, Op::Softmax(_)));
    let d = o.decode_graph(&spec, 49).unwrap();
    let Op::Attention(a) = &node(&d, "layer.attention").op else { panic!() };
    assert_eq!((a.q_len, a.kv_len, a.heads, a.kv_heads), (1, 350, 20, 4));
    let Op::Gemm(down) = &node(&d, "layer.down").op else { panic!() };
    assert_eq!((down.m, down.k, down.n), (2, 13_824 / 2, 5120), "skinny decode GEMM: M = batch");
}

#[test]
fn fp8_weights_are_read_as_one_byte_in_decode() {
    let spec = presets::preset("llama-3-8b").unwrap();
    let mut o = ServeOptions::new(1, 16, 1, DType::Bf16);
    let bf16 = o.decode_graph(&spec, 0).unwrap();
    o.weights = DType::Fp8;
    let fp8 = o.decode_graph(&spec, 0).unwrap();
    let Op::Gemm(g) = &node(&fp8, "layer.gate_up").op else { panic!() };
    assert_eq!(g.weight_dtype, Some(DType::Fp8));
    let Op::Gemm(lm) = &node(&fp8, "head.lm_head").op else { panic!() };
    assert_eq!(lm.weight_dtype, None, "the LM head stays BF16");
    let w = |g: &Graph| sum_where(g, |op| matches!(op, Op::Gemm(_)), Op::bytes);
    assert!(w(&fp8) < 0.6 * w(&bf16));
}

#[test]
fn a_decode_step_of_one_token_reads_only_its_top_k_experts() {
    assert_eq!(active_experts(1, 2, 8), 2);
    assert_eq!(active_experts(2, 2, 8), 4); // 8·(1 − 0.75²) = 3.5 → 4
    assert_eq!(active_experts(8, 2, 8), 8); // 7.2 → 8
    assert_eq!(active_experts(1000, 2, 8), 8);
    let spec = presets::preset("mixtral-8x7b").unwrap();
    let o = ServeOptions::new(1, 16, 1, DType::Bf16);
    let g = o.decode_graph(&spec, 0).unwrap();
    assert_eq!(node(&g, "layer.expert.gate_up").repeat, 32 * 2);
}

#[test]
fn merged_projections_keep_flops_bytes_and_params_with_fewer_kernels() {
    for name in ["llama-3-8b", "qwen2.5-14b", "qwen3-32b", "mixtral-8x7b"] {
        let spec = presets::preset(name).unwrap();
        let mut o = BuildOptions::new(2, 64, Mode::Inference, DType::Bf16);
        let split = build(&spec, &o).unwrap();
        o.merged_projections = true;
        let merged = build(&spec, &o).unwrap();
        assert_eq!(merged.params(), split.params(), "{name}");
        assert_eq!(merged.total_flops(), split.total_flops(), "{name}");
        let bytes = |g: &Graph| sum_where(g, |_| true, Op::bytes);
        // Merging reads the shared input once instead of three (QKV) or two (gate/up) times.
        assert!(bytes(&merged) < bytes(&split), "{name}");
        let kernels = |g: &Graph| g.nodes.iter().map(|n| n.repeat).sum::<u64>();
        assert!(kernels(&merged) < kernels(&split), "{name}");
    }
}
