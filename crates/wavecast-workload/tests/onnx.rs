//! ONNX import on small models built in code (`onnx::samples`): shapes inferred for the chosen
//! batch and sequence length, operators mapped with the right dimensions, parameters counted,
//! unsupported operators reported with their FLOP share, bad files rejected with one error.

use wavecast_ir::ops::{ConvPass, GemmKind};
use wavecast_ir::{DType, Op, OpClass, Phase};
use wavecast_workload::onnx::samples::{self, attr_int, attr_ints, Builder, D};
use wavecast_workload::onnx::{import_bytes, proto::elem, OnnxOptions};
use wavecast_workload::Mode;

fn opts(batch: u64, seq: u64, mode: Mode) -> OnnxOptions {
    OnnxOptions::new(batch, seq, mode)
}

fn ops<'g>(g: &'g wavecast_ir::Graph, f: impl Fn(&Op) -> bool + 'g) -> Vec<&'g Op> {
    g.nodes.iter().filter(|n| n.phase == Phase::Forward && f(&n.op)).map(|n| &n.op).collect()
}

#[test]
fn cnn_maps_to_convs_pools_and_batch_norm_at_the_given_batch() {
    let m = import_bytes(&samples::tiny_cnn(), "tiny_cnn.onnx", &opts(8, 1, Mode::Inference)).unwrap();
    assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
    assert_eq!(m.params, 2954);
    assert_eq!(m.dtype, DType::Fp32);
    let convs: Vec<_> = ops(&m.graph, |o| matches!(o, Op::Conv(_))).into_iter().map(|o| if let Op::Conv(c) = o { c.clone() } else { unreachable!() }).collect();
    assert_eq!(convs.len(), 2);
    assert_eq!((convs[0].batch, convs[0].c_in, convs[0].c_out, convs[0].out_hw()), (8, 3, 16, [32, 32]));
    assert!(convs[0].bias && !convs[0].input_grad, "first conv: bias, and no gradient for the image");
    // SAME_UPPER padding keeps the pooled 16×16.
    assert_eq!((convs[1].in_hw, convs[1].out_hw(), convs[1].pads), ([16, 16], [16, 16], [1, 1, 1, 1]));
    assert_eq!(convs[0].macs(), 8.0 * 16.0 * 1024.0 * 27.0);
    assert_eq!(ops(&m.graph, |o| matches!(o, Op::ChannelNorm(n) if !n.training)).len(), 1);
    assert_eq!(ops(&m.graph, |o| o.class() == OpClass::Pooling).len(), 2);
    let fc = ops(&m.graph, |o| matches!(o, Op::Gemm(g) if g.kind == GemmKind::Linear));
    assert!(matches!(fc[0], Op::Gemm(g) if (g.m, g.k, g.n, g.bias) == (8, 16, 10, true)));
    // The residual add and two ReLUs.
    assert_eq!(ops(&m.graph, |o| o.class() == OpClass::Elementwise).len(), 3);
}

#[test]
fn cnn_training_adds_backward_and_optimizer_over_the_parameters() {
    let m = import_bytes(&samples::tiny_cnn(), "tiny_cnn.onnx", &opts(4, 1, Mode::Training)).unwrap();
    let g = &m.graph;
    assert!(ops(g, |o| matches!(o, Op::ChannelNorm(n) if n.training)).len() == 1);
    let bw: Vec<_> = g.nodes.iter().filter(|n| n.phase == Phase::Backward).collect();
    // conv1: weight gradient only; conv2: data and weight gradients.
    let conv_bw = bw.iter().filter(|n| matches!(&n.op, Op::Conv(_))).count();
    assert_eq!(conv_bw, 3);
    assert!(bw.iter().any(|n| matches!(&n.op, Op::Conv(c) if c.pass == ConvPass::BackwardData)));
    let opt = g.nodes.iter().find(|n| n.phase == Phase::Optimizer).unwrap();
    assert!(matches!(&opt.op, Op::Optimizer(o) if o.params == 2954));
}

#[test]
fn transformer_block_folds_dynamic_shapes_and_binds_the_sequence() {
    let (b, s) = (2, 128);
    let m = import_bytes(&samples::tiny_transformer(), "block.onnx", &opts(b, s, Mode::Inference)).unwrap();
    assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
    assert_eq!(m.params, 113_984);
    assert!(m.notes.iter().any(|n| n.contains("'sequence'") && n.contains("--seq 128")), "{:?}", m.notes);
    let g = &m.graph;
    let linear: Vec<_> = ops(g, |o| matches!(o, Op::Gemm(x) if x.kind == GemmKind::Linear));
    assert_eq!(linear.len(), 6, "q, k, v, out, fc1, fc2");
    assert!(linear.iter().all(|o| matches!(o, Op::Gemm(x) if x.m == b * s)));
    // Scores: (batch·heads) products of (seq × head_dim)·(head_dim × seq), then ·V.
    let bmm: Vec<_> = ops(g, |o| matches!(o, Op::Gemm(x) if x.kind == GemmKind::Bmm));
    assert_eq!(bmm.len(), 2);
    assert!(matches!(bmm[0], Op::Gemm(x) if (x.batch, x.m, x.k, x.n) == (b * 4, s, 16, s)));
    assert!(matches!(bmm[1], Op::Gemm(x) if (x.batch, x.m, x.k, x.n) == (b * 4, s, s, 16)));
    assert!(ops(g, |o| matches!(o, Op::Softmax(x) if x.rows == b * 4 * s && x.cols == s)).len() == 1);
    assert_eq!(ops(g, |o| matches!(o, Op::Norm(_))).len(), 2);
    assert_eq!(ops(g, |o| matches!(o, Op::Embedding(e) if e.tokens == b * s && e.vocab == 1000)).len(), 1);
    assert_eq!(ops(g, |o| matches!(o, Op::Elementwise(e) if e.kind == wavecast_ir::ops::EwKind::Gelu)).len(), 1);
    // FLOPs: 2·tokens·(4·64² + 2·64·256) for the linears, 2·2·b·s²·64 for attention.
    let t = (b * s) as f64;
    let macs: f64 = g.nodes.iter().map(|n| n.op.macs()).sum();
    assert_eq!(macs, t * (4.0 * 64.0 * 64.0 + 2.0 * 64.0 * 256.0) + 2.0 * (b * s * s * 64) as f64);
}

#[test]
fn lstm_maps_to_recurrent_ops() {
    let m = import_bytes(&samples::tiny_lstm(), "lm.onnx", &opts(16, 35, Mode::Training)).unwrap();
    assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
    let rnns: Vec<_> = ops(&m.graph, |o| matches!(o, Op::Rnn(_)));
    assert_eq!(rnns.len(), 2);
    assert!(matches!(rnns[1], Op::Rnn(r) if (r.batch, r.seq, r.input_size, r.hidden) == (16, 35, 512, 512)));
    let lstm = |i: u64| 4 * 512 * (i + 512) + 8 * 512;
    assert_eq!(m.params, 5000 * 256 + lstm(256) + lstm(512) + 512 * 5000);
    assert!(m.graph.nodes.iter().any(|n| n.phase == Phase::Backward && matches!(&n.op, Op::Rnn(r) if r.backward)));
}

/// A model with operators the importer does not know: one whose output shape the file records,
/// one whose output shape is unknown (its consumers are reported too).
fn with_unknown_ops() -> Vec<u8> {
    let mut b = Builder::new("odd", 13);
    b.input("x", elem::FLOAT, &[D::S("batch"), D::N(256)]);
    let w = b.weight("w", &[256, 256]);
    b.node("MatMul", &["x", &w], &["y"], vec![]);
    b.node("CumSum", &["y", "y"], &["z"], vec![]);
    b.value_info("z", &[D::S("batch"), D::N(256)]);
    b.node("Relu", &["z"], &["r"], vec![]);
    b.node("MysteryOp", &["r"], &["q"], vec![]);
    b.node("Relu", &["q"], &["out"], vec![]);
    b.output("out", elem::FLOAT, &[D::S("batch"), D::N(256)]);
    b.encode()
}

#[test]
fn unsupported_ops_are_listed_with_their_flops() {
    let m = import_bytes(&with_unknown_ops(), "odd.onnx", &opts(4, 1, Mode::Inference)).unwrap();
    let names: Vec<&str> = m.unsupported.iter().map(|u| u.op.as_str()).collect();
    assert_eq!(names, ["CumSum", "MysteryOp", "Relu (after unsupported)"]);
    // CumSum's output shape is recorded: one FLOP per output element.
    assert_eq!(m.unsupported[0].flops, 4.0 * 256.0);
    assert_eq!(m.unsupported[1].flops, 0.0);
    // What is known is still mapped: the MatMul and the first ReLU.
    assert_eq!(m.graph.nodes.len(), 2);
}

#[test]
fn a_fixed_batch_in_the_file_is_rebound() {
    let mut b = Builder::new("fixed", 13);
    b.input("x", elem::FLOAT, &[D::N(1), D::N(8), D::N(4), D::N(4)]);
    let w = b.weight("w", &[8, 8, 1, 1]);
    b.node("Conv", &["x", &w], &["c"], vec![attr_ints("kernel_shape", &[1, 1])]);
    let shape = b.ints("shape", &[1, -1]);
    b.node("Reshape", &["c", &shape], &["flat"], vec![]);
    let fc = b.weight("fc", &[128, 10]);
    b.node("MatMul", &["flat", &fc], &["out"], vec![]);
    let m = import_bytes(&b.encode(), "fixed.onnx", &opts(32, 1, Mode::Inference)).unwrap();
    assert!(matches!(&m.graph.nodes[1].op, Op::Gemm(g) if (g.m, g.k, g.n) == (32, 128, 10)));
    assert!(m.notes.iter().any(|n| n.contains("fixes the batch at 1")));
}

#[test]
fn half_precision_files_run_in_half_precision() {
    let mut b = Builder::new("half", 13);
    b.input("x", elem::FLOAT16, &[D::S("n"), D::N(64)]);
    b.graph.initializer.push(wavecast_workload::onnx::proto::TensorProto { name: "w".into(), dims: vec![64, 64], data_type: elem::FLOAT16, ..Default::default() });
    b.node("MatMul", &["x", "w"], &["y"], vec![]);
    let bytes = b.encode();
    let m = import_bytes(&bytes, "half.onnx", &opts(4, 1, Mode::Inference)).unwrap();
    assert_eq!(m.dtype, DType::Fp16);
    assert!(matches!(&m.graph.nodes[0].op, Op::Gemm(g) if g.dtype == DType::Fp16));
    // --dtype overrides the file's type.
    let mut o = opts(4, 1, Mode::Inference);
    o.dtype = Some(DType::Bf16);
    assert_eq!(import_bytes(&bytes, "half.onnx", &o).unwrap().dtype, DType::Bf16);
}

#[test]
fn malformed_files_are_one_clear_error() {
    let err = |bytes: &[u8]| import_bytes(bytes, "bad.onnx", &opts(1, 1, Mode::Inference)).unwrap_err().to_string();
    assert!(err(b"definitely not protobuf \xff\xff\xff").contains("not an ONNX model"));
    let full = samples::tiny_cnn();
    assert!(err(&full[..full.len() / 2]).contains("bad.onnx"));
    assert!(err(&[]).contains("no graph"));
    // A node reading a tensor nobody produces.
    let mut b = Builder::new("dangling", 13);
    b.input("x", elem::FLOAT, &[D::S("batch"), D::N(4)]);
    b.node("Relu", &["nope"], &["y"], vec![]);
    assert!(err(&b.encode()).contains("reads 'nope'"));
    // A kernel larger than its input.
    let mut b = Builder::new("tiny", 13);
    b.input("x", elem::FLOAT, &[D::S("batch"), D::N(3), D::N(2), D::N(2)]);
    let w = b.weight("w", &[4, 3, 5, 5]);
    b.node("Conv", &["x", &w], &["y"], vec![attr_ints("kernel_shape", &[5, 5])]);
    assert!(err(&b.encode()).contains("conv output"));
    // Zero batch.
    assert!(import_bytes(&samples::tiny_cnn(), "c.onnx", &opts(0, 1, Mode::Inference)).is_err());
    // A bad reshape target.
    let mut b = Builder::new("reshape", 13);
    b.input("x", elem::FLOAT, &[D::S("batch"), D::N(6)]);
    let s = b.ints("s", &[4, 4]);
    b.node("Reshape", &["x", &s], &["y"], vec![attr_int("allowzero", 0)]);
    assert!(err(&b.encode()).contains("cannot reshape"));
}

#[test]
fn transposed_convolution_with_an_output_shape_and_upsampling() {
    // A decoder stage: 4×4/2 transposed conv to an explicit 16×16, then nearest upsampling ×2
    // through Resize with constant scales.
    let mut b = Builder::new("decoder", 13);
    b.input("z", elem::FLOAT, &[D::S("batch"), D::N(64), D::N(8), D::N(8)]);
    let w = b.weight("w", &[64, 32, 4, 4]);
    b.node("ConvTranspose", &["z", &w], &["up"], vec![attr_ints("kernel_shape", &[4, 4]), attr_ints("strides", &[2, 2]), attr_ints("output_shape", &[16, 16])]);
    b.graph.initializer.push(wavecast_workload::onnx::proto::TensorProto {
        name: "scales".into(),
        dims: vec![4],
        data_type: elem::FLOAT,
        float_data: vec![1.0, 1.0, 2.0, 2.0],
        ..Default::default()
    });
    b.node("Resize", &["up", "", "scales"], &["big"], vec![]);
    let m = import_bytes(&b.encode(), "decoder.onnx", &opts(2, 1, Mode::Training)).unwrap();
    assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
    let Op::Conv(t) = &m.graph.nodes[0].op else { panic!() };
    assert!(t.transposed);
    assert_eq!((t.out_hw(), t.pads), ([16, 16], [1, 1, 1, 1]));
    assert_eq!(t.macs(), 2.0 * 64.0 * 64.0 * 32.0 * 16.0);
    assert!(matches!(&m.graph.nodes[1].op, Op::Upsample(u) if u.out_hw == [32, 32] && u.in_hw == [16, 16]));
    assert_eq!(m.params, 64 * 32 * 16);
}

#[test]
fn corrupted_files_never_panic() {
    // Every single-byte corruption and truncation of two sample models: an error or a model,
    // never a panic.
    for bytes in [samples::tiny_cnn(), samples::tiny_transformer()] {
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                let _ = import_bytes(&b, "fuzz.onnx", &opts(3, 7, Mode::Training));
            }
            let _ = import_bytes(&bytes[..i], "fuzz.onnx", &opts(3, 7, Mode::Inference));
        }
    }
}

/// A one-layer time-major LSTM (ONNX's default layout) whose input dimensions are `dims`.
fn time_major_lstm(dims: &[D]) -> Vec<u8> {
    let mut b = Builder::new("tm_lstm", 14);
    b.input("x", elem::FLOAT, dims);
    let w = b.weight("W", &[1, 1024, 64]);
    let r = b.weight("R", &[1, 1024, 256]);
    b.node("LSTM", &["x", &w, &r], &["y", "h", "c"], vec![attr_int("hidden_size", 256)]);
    b.encode()
}

#[test]
fn time_major_lstm_inputs_bind_sequence_then_batch_whatever_their_names() {
    // Fixed sizes as exported (50 steps × 32 sequences), and unnamed symbolic dimensions.
    for dims in [vec![D::N(50), D::N(32), D::N(64)], vec![D::S("unk__0"), D::S("unk__1"), D::N(64)]] {
        let m = import_bytes(&time_major_lstm(&dims), "tm.onnx", &opts(16, 35, Mode::Inference)).unwrap();
        let rnns: Vec<_> = ops(&m.graph, |o| matches!(o, Op::Rnn(_)));
        assert!(matches!(rnns[0], Op::Rnn(r) if (r.batch, r.seq) == (16, 35)), "{dims:?}: {:?}", rnns[0]);
    }
}
