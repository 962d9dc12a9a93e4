//! Small ONNX models built in code — a CNN, a transformer encoder block and an LSTM — serialized
//! with the same protobuf messages the importer reads. The tests use them (no downloaded files),
//! and they document what the importer expects.

use super::proto::{
    elem, AttributeProto, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto, TypeProto,
    TypeTensor, ValueInfoProto,
};
use prost::Message;

/// A dimension of a graph input: a number or a symbolic name.
#[derive(Debug, Clone, Copy)]
pub enum D {
    N(i64),
    S(&'static str),
}

/// Builds a graph node by node.
#[derive(Default)]
pub struct Builder {
    pub graph: GraphProto,
    pub opset: i64,
}

pub fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto { name: name.into(), i: v, r#type: 2, ..Default::default() }
}
pub fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto { name: name.into(), ints: v.to_vec(), r#type: 7, ..Default::default() }
}
pub fn attr_float(name: &str, v: f32) -> AttributeProto {
    AttributeProto { name: name.into(), f: v, r#type: 1, ..Default::default() }
}
pub fn attr_str(name: &str, v: &str) -> AttributeProto {
    AttributeProto { name: name.into(), s: v.as_bytes().to_vec(), r#type: 3, ..Default::default() }
}

fn value_info(name: &str, elem_type: i32, dims: &[D]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| match d {
            D::N(v) => Dimension { dim_value: Some(*v), dim_param: None },
            D::S(p) => Dimension { dim_value: None, dim_param: Some(p.to_string()) },
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto { tensor_type: Some(TypeTensor { elem_type, shape: Some(TensorShapeProto { dim }) }) }),
    }
}

impl Builder {
    pub fn new(name: &str, opset: i64) -> Builder {
        Builder { graph: GraphProto { name: name.into(), ..Default::default() }, opset }
    }

    pub fn input(&mut self, name: &str, elem_type: i32, dims: &[D]) {
        self.graph.input.push(value_info(name, elem_type, dims));
    }

    pub fn output(&mut self, name: &str, elem_type: i32, dims: &[D]) {
        self.graph.output.push(value_info(name, elem_type, dims));
    }

    /// Records the shape of an intermediate value (what ONNX shape inference writes).
    pub fn value_info(&mut self, name: &str, dims: &[D]) {
        self.graph.value_info.push(value_info(name, elem::FLOAT, dims));
    }

    /// A float weight: only its shape is stored (values are not needed).
    pub fn weight(&mut self, name: &str, dims: &[i64]) -> String {
        self.graph.initializer.push(TensorProto { name: name.into(), dims: dims.to_vec(), data_type: elem::FLOAT, ..Default::default() });
        name.into()
    }

    /// A small int64 constant (shapes, axes).
    pub fn ints(&mut self, name: &str, values: &[i64]) -> String {
        self.graph.initializer.push(TensorProto {
            name: name.into(),
            dims: vec![values.len() as i64],
            data_type: elem::INT64,
            int64_data: values.to_vec(),
            ..Default::default()
        });
        name.into()
    }

    /// A float scalar constant.
    pub fn scalar(&mut self, name: &str, v: f32) -> String {
        self.graph.initializer.push(TensorProto { name: name.into(), dims: vec![], data_type: elem::FLOAT, float_data: vec![v], ..Default::default() });
        name.into()
    }

    pub fn node(&mut self, op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) {
        let n = self.graph.node.len();
        self.graph.node.push(NodeProto {
            name: format!("{}_{n}", op.to_ascii_lowercase()),
            op_type: op.into(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            attribute: attrs,
            domain: String::new(),
        });
    }

    /// The serialized model.
    pub fn encode(self) -> Vec<u8> {
        ModelProto {
            ir_version: 8,
            producer_name: "wavecast-tests".into(),
            producer_version: String::new(),
            graph: Some(self.graph),
            opset_import: vec![OperatorSetIdProto { domain: String::new(), version: self.opset }],
        }
        .encode_to_vec()
    }
}

/// A small residual CNN on 3×32×32 images with a symbolic batch: conv 3→16 (bias) → batch norm
/// → ReLU → 2×2 max pool → conv 16→16 → residual add → ReLU → global average pool → flatten →
/// linear 16→10. Parameters: 448 + 32 + 2,304 + 170 = 2,954.
pub fn tiny_cnn() -> Vec<u8> {
    let mut b = Builder::new("tiny_cnn", 13);
    b.input("image", elem::FLOAT, &[D::S("batch"), D::N(3), D::N(32), D::N(32)]);
    let w1 = b.weight("conv1.weight", &[16, 3, 3, 3]);
    let b1 = b.weight("conv1.bias", &[16]);
    b.node("Conv", &["image", &w1, &b1], &["c1"], vec![attr_ints("kernel_shape", &[3, 3]), attr_ints("pads", &[1, 1, 1, 1])]);
    let (s, bb, m, v) = (b.weight("bn.scale", &[16]), b.weight("bn.bias", &[16]), b.weight("bn.mean", &[16]), b.weight("bn.var", &[16]));
    b.node("BatchNormalization", &["c1", &s, &bb, &m, &v], &["n1"], vec![attr_float("epsilon", 1e-5)]);
    b.node("Relu", &["n1"], &["r1"], vec![]);
    b.node("MaxPool", &["r1"], &["p1"], vec![attr_ints("kernel_shape", &[2, 2]), attr_ints("strides", &[2, 2])]);
    let w2 = b.weight("conv2.weight", &[16, 16, 3, 3]);
    b.node("Conv", &["p1", &w2], &["c2"], vec![attr_ints("kernel_shape", &[3, 3]), attr_str("auto_pad", "SAME_UPPER")]);
    b.node("Add", &["c2", "p1"], &["a2"], vec![]);
    b.node("Relu", &["a2"], &["r2"], vec![]);
    b.node("GlobalAveragePool", &["r2"], &["g"], vec![]);
    b.node("Flatten", &["g"], &["f"], vec![attr_int("axis", 1)]);
    let (wf, bf) = (b.weight("fc.weight", &[10, 16]), b.weight("fc.bias", &[10]));
    b.node("Gemm", &["f", &wf, &bf], &["logits"], vec![attr_int("transB", 1)]);
    b.output("logits", elem::FLOAT, &[D::S("batch"), D::N(10)]);
    b.encode()
}

/// One pre-norm transformer encoder block over token ids with symbolic batch and sequence
/// (d_model 64, 4 heads, feed-forward 256, vocabulary 1000), exported the way PyTorch does it:
/// per-head reshapes whose target shape is computed at run time from `Shape`/`Gather`/`Concat`,
/// MatMul + Add for linear layers, an explicit score scale, softmax and GELU. Parameters:
/// 64,000 + 4·4,160 + 2·128 + 16,640 + 16,448 = 113,984.
pub fn tiny_transformer() -> Vec<u8> {
    const D_MODEL: i64 = 64;
    const HEADS: i64 = 4;
    const HEAD: i64 = 16;
    const FFN: i64 = 256;
    let mut b = Builder::new("tiny_transformer", 20);
    b.input("tokens", elem::INT64, &[D::S("batch"), D::S("sequence")]);
    let emb = b.weight("embed.weight", &[1000, D_MODEL]);
    b.node("Gather", &[&emb, "tokens"], &["x"], vec![attr_int("axis", 0)]);
    let (g1, b1) = (b.weight("ln1.weight", &[D_MODEL]), b.weight("ln1.bias", &[D_MODEL]));
    b.node("LayerNormalization", &["x", &g1, &b1], &["h"], vec![attr_int("axis", -1)]);
    // The (batch, seq, heads, head_dim) target, computed from the input's shape.
    b.node("Shape", &["h"], &["h_shape"], vec![]);
    let (i0, i1) = (b.ints("idx0", &[0]), b.ints("idx1", &[1]));
    b.node("Gather", &["h_shape", &i0], &["batch_dim"], vec![attr_int("axis", 0)]);
    b.node("Gather", &["h_shape", &i1], &["seq_dim"], vec![attr_int("axis", 0)]);
    let heads = b.ints("heads_and_dim", &[HEADS, HEAD]);
    b.node("Concat", &["batch_dim", "seq_dim", &heads], &["split_shape"], vec![attr_int("axis", 0)]);
    let merged = b.ints("merged_shape", &[0, 0, D_MODEL]);
    for p in ["q", "k", "v"] {
        let (w, bias) = (b.weight(&format!("{p}.weight"), &[D_MODEL, D_MODEL]), b.weight(&format!("{p}.bias"), &[D_MODEL]));
        b.node("MatMul", &["h", &w], &[&format!("{p}_mm")], vec![]);
        b.node("Add", &[&format!("{p}_mm"), &bias], &[&format!("{p}_lin")], vec![]);
        b.node("Reshape", &[&format!("{p}_lin"), "split_shape"], &[&format!("{p}_heads")], vec![]);
        let perm: &[i64] = if p == "k" { &[0, 2, 3, 1] } else { &[0, 2, 1, 3] };
        b.node("Transpose", &[&format!("{p}_heads")], &[&format!("{p}_t")], vec![attr_ints("perm", perm)]);
    }
    b.node("MatMul", &["q_t", "k_t"], &["scores"], vec![]);
    let scale = b.scalar("scale", (HEAD as f32).sqrt());
    b.node("Div", &["scores", &scale], &["scaled"], vec![]);
    b.node("Softmax", &["scaled"], &["probs"], vec![attr_int("axis", -1)]);
    b.node("MatMul", &["probs", "v_t"], &["context"], vec![]);
    b.node("Transpose", &["context"], &["context_t"], vec![attr_ints("perm", &[0, 2, 1, 3])]);
    b.node("Reshape", &["context_t", &merged], &["context_m"], vec![]);
    let (wo, bo) = (b.weight("out.weight", &[D_MODEL, D_MODEL]), b.weight("out.bias", &[D_MODEL]));
    b.node("MatMul", &["context_m", &wo], &["o_mm"], vec![]);
    b.node("Add", &["o_mm", &bo], &["o"], vec![]);
    b.node("Add", &["x", "o"], &["res1"], vec![]);
    let (g2, b2) = (b.weight("ln2.weight", &[D_MODEL]), b.weight("ln2.bias", &[D_MODEL]));
    b.node("LayerNormalization", &["res1", &g2, &b2], &["h2"], vec![attr_int("axis", -1)]);
    let (w1, bb1) = (b.weight("fc1.weight", &[D_MODEL, FFN]), b.weight("fc1.bias", &[FFN]));
    b.node("MatMul", &["h2", &w1], &["f1_mm"], vec![]);
    b.node("Add", &["f1_mm", &bb1], &["f1"], vec![]);
    b.node("Gelu", &["f1"], &["act"], vec![]);
    let (w2, bb2) = (b.weight("fc2.weight", &[FFN, D_MODEL]), b.weight("fc2.bias", &[D_MODEL]));
    b.node("MatMul", &["act", &w2], &["f2_mm"], vec![]);
    b.node("Add", &["f2_mm", &bb2], &["f2"], vec![]);
    b.node("Add", &["res1", "f2"], &["out"], vec![]);
    b.output("out", elem::FLOAT, &[D::S("batch"), D::S("sequence"), D::N(D_MODEL)]);
    b.encode()
}

/// A two-layer LSTM language model as ONNX exports it (time-major): embedding 5,000×256, LSTM
/// 256→512, LSTM 512→512, linear 512→5,000.
pub fn tiny_lstm() -> Vec<u8> {
    let mut b = Builder::new("tiny_lstm", 14);
    b.input("tokens", elem::INT64, &[D::S("sequence"), D::S("batch")]);
    let emb = b.weight("embed.weight", &[5000, 256]);
    b.node("Gather", &[&emb, "tokens"], &["x"], vec![]);
    let mut input = "x".to_string();
    for (l, in_size) in [(0, 256), (1, 512)] {
        let w = b.weight(&format!("lstm{l}.W"), &[1, 2048, in_size]);
        let r = b.weight(&format!("lstm{l}.R"), &[1, 2048, 512]);
        let bias = b.weight(&format!("lstm{l}.B"), &[1, 4096]);
        let y = format!("y{l}");
        b.node("LSTM", &[&input, &w, &r, &bias], &[&y, &format!("h{l}"), &format!("c{l}")], vec![attr_int("hidden_size", 512)]);
        let squeezed = format!("ys{l}");
        let axes = b.ints(&format!("axes{l}"), &[1]);
        b.node("Squeeze", &[&y, &axes], &[&squeezed], vec![]);
        input = squeezed;
    }
    let w = b.weight("head.weight", &[512, 5000]);
    b.node("MatMul", &[&input, &w], &["logits"], vec![]);
    b.output("logits", elem::FLOAT, &[D::S("sequence"), D::S("batch"), D::N(5000)]);
    b.encode()
}
