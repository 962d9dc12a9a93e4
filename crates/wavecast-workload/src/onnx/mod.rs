//! ONNX import: reads an ONNX model file, infers every tensor's shape for a chosen batch size
//! (and sequence length, for symbolic sequence dimensions), and maps its nodes to wavecast's
//! operators. The weights' values are never needed, only their shapes, so files with external
//! weight data work too.
//!
//! Binding of input dimensions: symbolic dimensions named like a batch take `--batch`, ones named
//! like a sequence (seq, length, time, tokens) take `--seq`, ones named like an image side
//! (height, width) take `--image-size`; any other symbolic first dimension is the batch, any other
//! later one the sequence. A fixed first dimension is the batch too: it is replaced by `--batch`,
//! and a `Reshape` whose constant target still names the file's batch is rewritten to follow.
//! Inputs feeding a time-major LSTM/GRU/RNN (ONNX's default layout) are the exception: their
//! first dimension is the sequence and their second the batch, whatever the names say.
//!
//! Operators that only change a tensor's view (Reshape, Flatten, Squeeze, Unsqueeze, Shape,
//! Constant, Identity, int-typed shape arithmetic) cost nothing. Operators without a mapping
//! are reported by name with an estimate of their FLOPs (one per output element), never
//! silently dropped; when their output shape is unknown (no `value_info` in the file), the
//! operators that depend on it are reported too.

pub mod proto;
pub mod samples;

use crate::transformer::Mode;
use crate::WorkloadError;
use proto::{elem, AttributeProto, GraphProto, ModelProto, NodeProto, ValueInfoProto};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use wavecast_ir::ops::{
    ChannelNorm, Concat, Conv, Elementwise, Embedding, EwKind, Gemm, MemCopy, Norm, NormKind, Optimizer, OptimizerKind, Pool,
    PoolKind, Reduction, Rnn, RnnCell, Softmax, Upsample, UpsampleMode,
};
use wavecast_ir::{checked_mul, DType, Graph, Op, Phase, MAX_ELEMENTS};

/// How the imported model is run.
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxOptions {
    pub batch: u64,
    /// Bound to symbolic sequence dimensions.
    pub seq: u64,
    pub mode: Mode,
    /// Compute type; None: the file's floating-point type.
    pub dtype: Option<DType>,
    pub optimizer: OptimizerKind,
    /// Bound to symbolic image height and width.
    pub image: Option<u64>,
}

impl OnnxOptions {
    pub fn new(batch: u64, seq: u64, mode: Mode) -> OnnxOptions {
        OnnxOptions { batch, seq, mode, dtype: None, optimizer: OptimizerKind::Adam, image: None }
    }
}

/// An operator type the importer could not map.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported {
    /// The ONNX op type (with its domain when not the default one); "X (after unsupported)"
    /// for a supported op whose input shape is unknown because an unsupported op produced it.
    pub op: String,
    pub count: u64,
    /// Estimated forward FLOPs: one per output element where the output shape is known.
    pub flops: f64,
}

#[derive(Debug, Clone)]
pub struct OnnxModel {
    pub name: String,
    pub graph: Graph,
    /// Trainable parameters: elements of the floating-point initializers the graph uses as
    /// weights (batch-norm running statistics excluded).
    pub params: u64,
    pub dtype: DType,
    /// The graph inputs with their per-sample shapes (batch left out), for reports.
    pub input: String,
    pub unsupported: Vec<Unsupported>,
    pub notes: Vec<String>,
}

/// Reads and imports an ONNX file.
pub fn import_file(path: &Path, o: &OnnxOptions) -> Result<OnnxModel, WorkloadError> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| WorkloadError::Read { path: origin.clone(), reason: e.to_string() })?;
    let mut m = import_bytes(&bytes, &origin, o)?;
    if m.name.is_empty() || m.name == "onnx" {
        m.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    }
    Ok(m)
}

/// Imports an ONNX model from its serialized bytes.
pub fn import_bytes(bytes: &[u8], origin: &str, o: &OnnxOptions) -> Result<OnnxModel, WorkloadError> {
    let bad = |reason: String| WorkloadError::OpGraph { origin: origin.to_string(), reason };
    wavecast_ir::dim("batch", o.batch)?;
    wavecast_ir::dim("sequence length", o.seq)?;
    let model = <ModelProto as prost::Message>::decode(bytes).map_err(|e| bad(format!("not an ONNX model (protobuf: {e})")))?;
    let graph = model.graph.as_ref().ok_or_else(|| bad("not an ONNX model: it has no graph".into()))?;
    if graph.node.is_empty() {
        return Err(bad("the ONNX graph has no nodes".into()));
    }
    let opset = model.opset_import.iter().find(|s| s.domain.is_empty() || s.domain == "ai.onnx").map_or(13, |s| s.version);
    let mut im = Importer::new(o, opset, origin, graph)?;
    for (i, node) in graph.node.iter().enumerate() {
        im.node(i, node)?;
    }
    im.finish(graph)
}

/// A tensor as far as the importer knows it: its shape, element type and, for small integer or
/// float constants, its values (shape arithmetic is folded).
#[derive(Debug, Clone, PartialEq)]
struct Val {
    shape: Vec<u64>,
    elem: i32,
    data: Option<Vec<f64>>,
}

impl Val {
    fn new(shape: Vec<u64>, elem: i32) -> Val {
        Val { shape, elem, data: None }
    }
    fn konst(data: Vec<f64>, shape: Vec<u64>) -> Val {
        Val { shape, elem: elem::INT64, data: Some(data) }
    }
    fn elements(&self) -> u64 {
        self.shape.iter().product()
    }
    fn rank(&self) -> usize {
        self.shape.len()
    }
    fn ints(&self) -> Option<Vec<i64>> {
        self.data.as_ref().map(|d| d.iter().map(|&v| v as i64).collect())
    }
}

struct Attrs<'a>(&'a [AttributeProto]);

impl Attrs<'_> {
    fn get(&self, name: &str) -> Option<&AttributeProto> {
        self.0.iter().find(|a| a.name == name)
    }
    fn int(&self, name: &str) -> Option<i64> {
        self.get(name).map(|a| a.i)
    }
    fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.get(name).map(|a| a.ints.clone())
    }
    fn floats(&self, name: &str) -> Option<Vec<f32>> {
        self.get(name).map(|a| a.floats.clone())
    }
    fn string(&self, name: &str) -> Option<String> {
        self.get(name).map(|a| String::from_utf8_lossy(&a.s).into_owned())
    }
}

/// Most elements of a constant whose values are read (shape vectors, axes, scales).
const CONST_LIMIT: usize = 1 << 16;

fn dtype_of(elem: i32) -> Option<DType> {
    Some(match elem {
        elem::FLOAT | elem::DOUBLE => DType::Fp32,
        elem::FLOAT16 => DType::Fp16,
        elem::BFLOAT16 => DType::Bf16,
        elem::FLOAT8E4M3FN | 18..=20 => DType::Fp8,
        _ => return None,
    })
}

/// Element-wise broadcast of two shapes (numpy rules).
fn broadcast(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let n = a.len().max(b.len());
    let at = |s: &[u64], i: usize| if i + s.len() >= n { s[i + s.len() - n] } else { 1 };
    (0..n)
        .map(|i| {
            let (x, y) = (at(a, i), at(b, i));
            if x == y || y == 1 {
                Some(x)
            } else if x == 1 {
                Some(y)
            } else {
                None
            }
        })
        .collect()
}

/// A negative axis counts from the end.
fn axis(a: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let v = if a < 0 { a.checked_add(r)? } else { a };
    (0..r).contains(&v).then_some(v as usize)
}

struct Importer<'a> {
    o: &'a OnnxOptions,
    opset: i64,
    origin: String,
    dtype: DType,
    vals: HashMap<String, Val>,
    /// Tensors whose shape is unknown (produced by an unsupported op without shape hints).
    unknown: HashSet<String>,
    /// Shapes the file records for intermediate values (value_info, outputs), batch rebound.
    hints: HashMap<String, (Vec<u64>, i32)>,
    initializers: HashSet<String>,
    graph_inputs: HashSet<String>,
    /// Each data input with its per-sample shape.
    input_desc: Vec<String>,
    /// Initializers consumed as weights, and batch-norm running statistics (not parameters).
    weights: HashSet<String>,
    buffers: HashSet<String>,
    graph: Graph,
    unsupported: BTreeMap<String, (u64, f64)>,
    notes: Vec<String>,
    /// The fixed batch written in the file, when it had one and it differs from ours.
    file_batch: Option<u64>,
    first_conv: bool,
    /// Graph inputs that reach a time-major recurrent layer (dimension 0 is time, 1 batch).
    time_major: HashSet<String>,
}

/// Graph inputs whose values reach the `X` input of a time-major (layout 0, ONNX's default)
/// LSTM, GRU or RNN through ops that keep the leading dimensions (embedding lookups, casts,
/// dropout): for those, dimension 0 is the sequence and dimension 1 the batch.
fn time_major_inputs(g: &GraphProto) -> HashSet<String> {
    let producer: HashMap<&str, &NodeProto> = g.node.iter().flat_map(|n| n.output.iter().map(move |o| (o.as_str(), n))).collect();
    let inputs: HashSet<&str> = g.input.iter().map(|vi| vi.name.as_str()).collect();
    let mut found = HashSet::new();
    for rnn in g.node.iter().filter(|n| matches!(n.op_type.as_str(), "LSTM" | "GRU" | "RNN")) {
        if Attrs(&rnn.attribute).int("layout").unwrap_or(0) != 0 {
            continue;
        }
        let mut value = rnn.input.first().map(String::as_str);
        while let Some(v) = value {
            if inputs.contains(v) {
                found.insert(v.to_string());
                break;
            }
            value = producer.get(v).and_then(|n| match n.op_type.as_str() {
                // Gather(table, indices): the indices carry the leading dimensions.
                "Gather" => n.input.get(1).map(String::as_str),
                "Cast" | "Dropout" | "Identity" => n.input.first().map(String::as_str),
                _ => None,
            });
        }
    }
    found
}

impl<'a> Importer<'a> {
    fn new(o: &'a OnnxOptions, opset: i64, origin: &str, g: &GraphProto) -> Result<Importer<'a>, WorkloadError> {
        let mut im = Importer {
            o,
            opset,
            origin: origin.to_string(),
            dtype: DType::Fp32,
            vals: HashMap::new(),
            unknown: HashSet::new(),
            hints: HashMap::new(),
            initializers: HashSet::new(),
            graph_inputs: HashSet::new(),
            input_desc: Vec::new(),
            weights: HashSet::new(),
            buffers: HashSet::new(),
            graph: Graph::new(if g.name.is_empty() { "onnx" } else { g.name.as_str() }),
            unsupported: BTreeMap::new(),
            notes: Vec::new(),
            file_batch: None,
            first_conv: true,
            time_major: time_major_inputs(g),
        };
        let mut file_dtype = None;
        for t in &g.initializer {
            let shape = t.dims.iter().map(|&d| u64::try_from(d).map_err(|_| im.bad(format!("initializer '{}' has a negative dimension", t.name)))).collect::<Result<Vec<_>, _>>()?;
            im.numel(&shape)?;
            let mut v = Val::new(shape, t.data_type);
            v.data = t.values(CONST_LIMIT);
            if elem::is_float(t.data_type) && file_dtype.is_none() {
                file_dtype = dtype_of(t.data_type);
            }
            im.initializers.insert(t.name.clone());
            im.vals.insert(t.name.clone(), v);
        }
        let data_inputs: Vec<&ValueInfoProto> = g.input.iter().filter(|vi| !im.initializers.contains(&vi.name)).collect();
        for vi in data_inputs {
            let (shape, elem, batch_dim) = im.bind_input(vi)?;
            if elem::is_float(elem) {
                file_dtype = file_dtype.or(dtype_of(elem));
            }
            // Per sample: the batch dimension left out.
            let dims: Vec<String> = shape.iter().enumerate().filter(|(i, _)| Some(*i) != batch_dim).map(|(_, d)| d.to_string()).collect();
            im.input_desc.push(format!("{} {}", vi.name, if dims.is_empty() { "scalar".to_string() } else { dims.join("×") }));
            im.vals.insert(vi.name.clone(), Val::new(shape, elem));
            im.graph_inputs.insert(vi.name.clone());
        }
        if im.input_desc.is_empty() {
            return Err(im.bad("the ONNX graph has no inputs".into()));
        }
        im.dtype = o.dtype.or(file_dtype).unwrap_or(DType::Fp32);
        for vi in g.value_info.iter().chain(&g.output) {
            if let Some(hint) = im.hint(vi) {
                im.hints.insert(vi.name.clone(), hint);
            }
        }
        Ok(im)
    }

    fn bad(&self, reason: String) -> WorkloadError {
        WorkloadError::OpGraph { origin: self.origin.clone(), reason }
    }

    /// The shape of a graph input under our batch, sequence and image sizes, its element type,
    /// and which dimension is the batch.
    fn bind_input(&mut self, vi: &ValueInfoProto) -> Result<(Vec<u64>, i32, Option<usize>), WorkloadError> {
        let t = vi.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).ok_or_else(|| self.bad(format!("input '{}' is not a tensor", vi.name)))?;
        let dims = t.shape.as_ref().map(|s| s.dim.clone()).unwrap_or_default();
        let mut shape = Vec::new();
        let mut batch_dim = None;
        let time_major = self.time_major.contains(&vi.name) && dims.len() >= 2;
        for (i, d) in dims.iter().enumerate() {
            let name = d.dim_param.clone().unwrap_or_default();
            let lower = name.to_ascii_lowercase();
            let v = match d.dim_value {
                // Time-major recurrent input: [sequence, batch, ...] whatever the names say.
                _ if time_major && i == 0 => self.o.seq,
                _ if time_major && i == 1 => {
                    batch_dim = Some(1);
                    self.o.batch
                }
                Some(v) if v > 0 && i > 0 => v as u64,
                Some(v) if v > 0 => {
                    if v as u64 != self.o.batch {
                        self.file_batch = Some(v as u64);
                    }
                    self.o.batch
                }
                _ if lower.contains("batch") || lower == "n" || lower == "b" => self.o.batch,
                _ if is_sequence_name(&lower) => {
                    self.notes.push(format!("input '{}' dimension {i} ('{name}') bound to --seq {}", vi.name, self.o.seq));
                    self.o.seq
                }
                _ if i == 0 => self.o.batch,
                _ if ["height", "width"].iter().any(|k| lower.contains(k)) || lower == "h" || lower == "w" => match self.o.image {
                    Some(s) => s,
                    None => return Err(self.bad(format!("input '{}' has a symbolic image dimension '{name}': give --image-size", vi.name))),
                },
                _ => {
                    self.notes.push(format!("input '{}' dimension {i} ('{name}') bound to --seq {}", vi.name, self.o.seq));
                    self.o.seq
                }
            };
            let v = wavecast_ir::dim(&format!("dimension {i} of input '{}'", vi.name), v)?;
            if v == self.o.batch && batch_dim.is_none() && (i == 0 || name.to_ascii_lowercase().contains("batch")) {
                batch_dim = Some(i);
            }
            shape.push(v);
        }
        self.numel(&shape)?;
        Ok((shape, t.elem_type, batch_dim))
    }

    /// A recorded intermediate shape, with the batch dimension rebound.
    fn hint(&self, vi: &ValueInfoProto) -> Option<(Vec<u64>, i32)> {
        let t = vi.r#type.as_ref()?.tensor_type.as_ref()?;
        let dims = &t.shape.as_ref()?.dim;
        let mut shape = Vec::new();
        for (i, d) in dims.iter().enumerate() {
            let v = match (d.dim_value, &d.dim_param) {
                (Some(v), _) if v > 0 => {
                    if i == 0 && Some(v as u64) == self.file_batch {
                        self.o.batch
                    } else {
                        v as u64
                    }
                }
                (_, Some(p)) if p.to_ascii_lowercase().contains("batch") => self.o.batch,
                (_, Some(p)) if is_sequence_name(&p.to_ascii_lowercase()) => self.o.seq,
                (_, Some(_)) if i == 0 => self.o.batch,
                (_, Some(_)) => self.o.seq,
                _ => return None,
            };
            shape.push(v);
        }
        self.numel(&shape).ok()?;
        Some((shape, t.elem_type))
    }

    /// Elements of a shape computed from the file, or an error when absurd.
    fn numel(&self, shape: &[u64]) -> Result<u64, WorkloadError> {
        let n = checked_mul("tensor size", shape)?;
        if n > MAX_ELEMENTS {
            return Err(self.bad(format!("a tensor of shape {shape:?} ({n} elements) is larger than any GPU holds")));
        }
        Ok(n)
    }

    fn push(&mut self, name: &str, op: Op) {
        self.graph.push(name, op, Phase::Forward, 1);
    }

    fn ew(&self, kind: EwKind, elements: u64, inputs: u32) -> Op {
        Op::Elementwise(Elementwise::new(kind, elements, inputs, self.dtype))
    }

    fn copy(&self, elements: u64) -> Op {
        Op::MemCopy(MemCopy::copy(elements, self.dtype.vector_storage()))
    }

    fn input<'n>(&self, node: &'n NodeProto, i: usize) -> Option<&'n str> {
        node.input.get(i).map(String::as_str).filter(|s| !s.is_empty())
    }

    fn val(&self, node: &NodeProto, i: usize) -> Option<&Val> {
        self.input(node, i).and_then(|n| self.vals.get(n))
    }

    fn is_weight(&self, node: &NodeProto, i: usize) -> bool {
        self.input(node, i).is_some_and(|n| self.initializers.contains(n))
    }

    fn mark_weight(&mut self, node: &NodeProto, i: usize) {
        if let Some(n) = self.input(node, i) {
            if self.initializers.contains(n) {
                self.weights.insert(n.to_string());
            }
        }
    }

    fn node(&mut self, index: usize, node: &NodeProto) -> Result<(), WorkloadError> {
        let name = if node.name.is_empty() { format!("{}_{index}", node.op_type) } else { node.name.clone() };
        // Inputs must exist: either known, or unknown because of an earlier unsupported op.
        let mut after_unsupported = false;
        for input in node.input.iter().filter(|s| !s.is_empty()) {
            if self.unknown.contains(input) {
                after_unsupported = true;
            } else if !self.vals.contains_key(input) {
                return Err(self.bad(format!("node '{name}' ({}) reads '{input}', which no earlier node or input produces", node.op_type)));
            }
        }
        let domain_ok = node.domain.is_empty() || node.domain == "ai.onnx";
        let outputs = if after_unsupported || !domain_ok { None } else { self.map(&name, node)? };
        match outputs {
            Some(outs) => {
                for (out, v) in node.output.iter().zip(outs) {
                    if !out.is_empty() {
                        if v.shape.contains(&0) {
                            return Err(self.bad(format!("node '{name}' ({}) produces an empty tensor {:?}", node.op_type, v.shape)));
                        }
                        self.numel(&v.shape)?;
                        self.vals.insert(out.clone(), v);
                    }
                }
            }
            None => {
                let label = match (after_unsupported, domain_ok) {
                    (true, _) => format!("{} (after unsupported)", node.op_type),
                    (false, false) => format!("{}:{}", node.domain, node.op_type),
                    (false, true) => node.op_type.clone(),
                };
                let mut flops = 0.0;
                for out in node.output.iter().filter(|s| !s.is_empty()) {
                    match self.hints.get(out).cloned() {
                        Some((shape, elem)) if !shape.contains(&0) => {
                            flops += self.numel(&shape)? as f64;
                            self.vals.insert(out.clone(), Val::new(shape, elem));
                        }
                        _ => {
                            self.unknown.insert(out.clone());
                        }
                    }
                }
                let e = self.unsupported.entry(label).or_default();
                e.0 += 1;
                e.1 += flops;
            }
        }
        Ok(())
    }

    /// Maps one node; None when the op is not supported.
    fn map(&mut self, name: &str, node: &NodeProto) -> Result<Option<Vec<Val>>, WorkloadError> {
        let at = Attrs(&node.attribute);
        let x = match self.val(node, 0) {
            Some(v) => v.clone(),
            None if matches!(node.op_type.as_str(), "Constant") => Val::new(vec![], elem::INT64),
            None => return Ok(None),
        };
        let float_out = |v: &Val| Val::new(v.shape.clone(), v.elem);
        let op = node.op_type.as_str();
        let out = match op {
            // ---- views and constants: no kernel
            "Identity" => vec![x],
            "Constant" => {
                let t = at.get("value").and_then(|a| a.t.clone());
                match t {
                    Some(t) => {
                        let shape = t.dims.iter().map(|&d| d.max(0) as u64).collect();
                        let mut v = Val::new(shape, t.data_type);
                        v.data = t.values(CONST_LIMIT);
                        vec![v]
                    }
                    None => match (at.get("value_int"), at.get("value_ints"), at.get("value_float")) {
                        (Some(a), _, _) => vec![Val::konst(vec![a.i as f64], vec![])],
                        (_, Some(a), _) => vec![Val::konst(a.ints.iter().map(|&v| v as f64).collect(), vec![a.ints.len() as u64])],
                        (_, _, Some(a)) => vec![Val { elem: elem::FLOAT, ..Val::konst(vec![a.f as f64], vec![]) }],
                        _ => return Ok(None),
                    },
                }
            }
            "Shape" => {
                let (start, end) = (at.int("start").unwrap_or(0), at.int("end"));
                let r = x.rank() as i64;
                let clampi = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
                let dims = &x.shape[clampi(start)..end.map_or(x.rank(), clampi).max(clampi(start))];
                vec![Val::konst(dims.iter().map(|&d| d as f64).collect(), vec![dims.len() as u64])]
            }
            "Size" => vec![Val::konst(vec![x.elements() as f64], vec![])],
            "Reshape" => {
                let target = match self.val(node, 1).and_then(Val::ints).or_else(|| at.ints("shape")) {
                    Some(t) => t,
                    None => return Ok(None),
                };
                vec![self.reshape(name, &x, &target)?]
            }
            "Flatten" => {
                let a = axis(at.int("axis").unwrap_or(1), x.rank() + 1).unwrap_or(1);
                let lead: u64 = x.shape[..a.min(x.rank())].iter().product();
                vec![Val { shape: vec![lead, x.elements() / lead.max(1)], ..x }]
            }
            "Squeeze" => {
                let axes = self.axes(node, &at, 1);
                let r = x.rank();
                let drop: Vec<usize> = match axes {
                    Some(a) => a.iter().filter_map(|&v| axis(v, r)).collect(),
                    None => (0..r).filter(|&i| x.shape[i] == 1).collect(),
                };
                let shape = x.shape.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, &d)| d).collect();
                vec![Val { shape, ..x }]
            }
            "Unsqueeze" => {
                let Some(axes) = self.axes(node, &at, 1) else { return Ok(None) };
                let r = x.rank() + axes.len();
                let mut ins: Vec<usize> = axes.iter().filter_map(|&v| axis(v, r)).collect();
                ins.sort();
                let mut shape = x.shape.clone();
                for i in ins {
                    shape.insert(i.min(shape.len()), 1);
                }
                vec![Val { shape, ..x }]
            }
            "Cast" | "CastLike" => {
                let to = at.int("to").map(|v| v as i32).unwrap_or(x.elem);
                if x.data.is_some() || !elem::is_float(to) || !elem::is_float(x.elem) {
                    vec![Val { elem: to, ..x }]
                } else {
                    self.push(name, self.ew(EwKind::Copy, x.elements(), 1));
                    vec![Val { elem: to, data: None, ..x }]
                }
            }
            "ConstantOfShape" => {
                let Some(dims) = x.ints() else { return Ok(None) };
                let shape: Vec<u64> = dims.iter().map(|&d| d.max(0) as u64).collect();
                let n = self.numel(&shape)?;
                let elem_type = at.get("value").and_then(|a| a.t.as_ref()).map_or(elem::FLOAT, |t| t.data_type);
                let fill = at.get("value").and_then(|a| a.t.as_ref()).and_then(|t| t.values(1)).and_then(|v| v.first().copied()).unwrap_or(0.0);
                if (n as usize) <= CONST_LIMIT {
                    vec![Val { shape, elem: elem_type, data: Some(vec![fill; n as usize]) }]
                } else {
                    self.push(name, self.ew(EwKind::Copy, n, 0));
                    vec![Val::new(shape, elem_type)]
                }
            }
            "Range" => {
                let (Some(s), Some(l), Some(d)) = (x.data.clone(), self.val(node, 1).and_then(|v| v.data.clone()), self.val(node, 2).and_then(|v| v.data.clone())) else {
                    return Ok(None);
                };
                let (s, l, d) = (s[0], l[0], d[0]);
                if d == 0.0 {
                    return Err(self.bad(format!("node '{name}': Range with a zero step")));
                }
                let n = ((l - s) / d).ceil().max(0.0) as usize;
                if n > CONST_LIMIT {
                    vec![Val::new(vec![n as u64], x.elem)]
                } else {
                    vec![Val { shape: vec![n as u64], elem: x.elem, data: Some((0..n).map(|i| s + i as f64 * d).collect()) }]
                }
            }
            "Dropout" => {
                if self.o.mode == Mode::Training {
                    self.push(name, self.ew(EwKind::Dropout, x.elements(), 1));
                }
                let mask = Val::new(x.shape.clone(), elem::BOOL);
                vec![float_out(&x), mask]
            }
            // ---- data movement
            "Transpose" => {
                let perm: Vec<usize> = at.ints("perm").map(|p| p.iter().map(|&v| v as usize).collect()).unwrap_or_else(|| (0..x.rank()).rev().collect());
                if perm.len() != x.rank() || perm.iter().any(|&p| p >= x.rank()) {
                    return Err(self.bad(format!("node '{name}': Transpose perm {perm:?} does not fit rank {}", x.rank())));
                }
                let shape: Vec<u64> = perm.iter().map(|&p| x.shape[p]).collect();
                if x.data.is_none() {
                    self.push(name, self.copy(x.elements()));
                }
                vec![Val { shape, data: None, ..x }]
            }
            "Concat" => {
                let inputs: Vec<Val> = (0..node.input.len()).filter_map(|i| self.val(node, i).cloned()).collect();
                let r = x.rank();
                let a = axis(at.int("axis").unwrap_or(0), r).ok_or_else(|| self.bad(format!("node '{name}': Concat axis out of range")))?;
                let mut shape = x.shape.clone();
                shape[a] = inputs.iter().map(|v| v.shape.get(a).copied().unwrap_or(0)).fold(0u64, u64::saturating_add);
                if inputs.iter().all(|v| v.data.is_some()) {
                    let data = inputs.iter().flat_map(|v| v.data.clone().unwrap_or_default()).collect();
                    vec![Val { shape, elem: x.elem, data: Some(data) }]
                } else {
                    let n = self.numel(&shape)?;
                    self.push(name, Op::Concat(Concat::new(n, inputs.len() as u32, self.dtype)));
                    vec![Val::new(shape, x.elem)]
                }
            }
            "Split" => {
                let r = x.rank();
                if r == 0 {
                    return Err(self.bad(format!("node '{name}': Split of a scalar")));
                }
                let a = axis(at.int("axis").unwrap_or(0), r).unwrap_or(0);
                let parts = node.output.len().max(1) as u64;
                let sizes: Vec<u64> = match self.val(node, 1).and_then(Val::ints).or_else(|| at.ints("split")) {
                    Some(s) => s.iter().map(|&v| v.max(0) as u64).collect(),
                    None => {
                        let each = x.shape[a].div_ceil(parts);
                        (0..parts).map(|i| each.min(x.shape[a].saturating_sub(i * each))).collect()
                    }
                };
                if x.data.is_none() {
                    self.push(name, self.copy(x.elements()));
                }
                sizes
                    .iter()
                    .map(|&s| {
                        let mut shape = x.shape.clone();
                        shape[a] = s;
                        Val::new(shape, x.elem)
                    })
                    .collect()
            }
            "Slice" => {
                let (starts, ends, axes_v, steps) = if self.opset >= 10 {
                    let get = |i| self.val(node, i).and_then(Val::ints);
                    (get(1), get(2), get(3), get(4))
                } else {
                    (at.ints("starts"), at.ints("ends"), at.ints("axes"), None)
                };
                let (Some(starts), Some(ends)) = (starts, ends) else { return Ok(None) };
                let r = x.rank();
                let axes_v: Vec<usize> = axes_v.map_or_else(|| (0..starts.len()).collect(), |a| a.iter().filter_map(|&v| axis(v, r)).collect());
                let mut shape = x.shape.clone();
                let mut data = x.data.clone();
                if axes_v.len() > starts.len() || axes_v.len() > ends.len() {
                    return Err(self.bad(format!("node '{name}': Slice has more axes than starts and ends")));
                }
                if axes_v.iter().any(|&a| a >= r) {
                    return Err(self.bad(format!("node '{name}': Slice axes {axes_v:?} are outside the input's {r} dimensions")));
                }
                for (j, &a) in axes_v.iter().enumerate() {
                    // i128: starts, ends and steps may be anywhere in i64 (INT64_MAX means "to the end").
                    let n = i128::from(x.shape[a]);
                    let step = i128::from(steps.as_ref().and_then(|s| s.get(j)).copied().unwrap_or(1));
                    if step == 0 {
                        return Err(self.bad(format!("node '{name}': Slice with a zero step")));
                    }
                    let norm = |v: i64, lo: i128, hi: i128| (if v < 0 { i128::from(v) + n } else { i128::from(v) }).clamp(lo, hi);
                    let (s, e) = if step > 0 { (norm(starts[j], 0, n), norm(ends[j], 0, n)) } else { (norm(starts[j], -1, n - 1), norm(ends[j], -1, n - 1)) };
                    let span = if step > 0 { (e - s).max(0) } else { (s - e).max(0) };
                    let len = (span + step.abs() - 1) / step.abs();
                    shape[a] = len as u64;
                    if r == 1 {
                        data = data.map(|d| (0..len).map(|i| d[(s + i * step) as usize]).collect());
                    } else {
                        data = None;
                    }
                }
                if data.is_none() && x.data.is_none() {
                    let n = self.numel(&shape)?;
                    self.push(name, self.copy(n));
                }
                vec![Val { shape, elem: x.elem, data }]
            }
            "Expand" => {
                let Some(target) = self.val(node, 1).and_then(Val::ints) else { return Ok(None) };
                let t: Vec<u64> = target.iter().map(|&v| v.max(1) as u64).collect();
                let shape = broadcast(&x.shape, &t).ok_or_else(|| self.bad(format!("node '{name}': cannot expand {:?} to {t:?}", x.shape)))?;
                let n = self.numel(&shape)?;
                if x.data.is_none() {
                    self.push(name, self.copy(n));
                }
                vec![Val::new(shape, x.elem)]
            }
            "Tile" => {
                let Some(reps) = self.val(node, 1).and_then(Val::ints) else { return Ok(None) };
                let shape: Vec<u64> = x.shape.iter().zip(reps.iter().chain(std::iter::repeat(&1))).map(|(&d, &r)| d.saturating_mul(r.max(1) as u64)).collect();
                let n = self.numel(&shape)?;
                self.push(name, self.copy(n));
                vec![Val::new(shape, x.elem)]
            }
            "Pad" => {
                let pads = if self.opset >= 11 { self.val(node, 1).and_then(Val::ints) } else { at.ints("pads") };
                let Some(pads) = pads else { return Ok(None) };
                let r = x.rank();
                let shape: Vec<u64> = (0..r).map(|i| (x.shape[i] as i64).saturating_add(pads.get(i).copied().unwrap_or(0)).saturating_add(pads.get(i + r).copied().unwrap_or(0)).max(1) as u64).collect();
                let n = self.numel(&shape)?;
                self.push(name, self.copy(n));
                vec![Val::new(shape, x.elem)]
            }
            "Gather" => {
                let idx = self.val(node, 1).cloned().ok_or_else(|| self.bad(format!("node '{name}': Gather without indices")))?;
                let a = axis(at.int("axis").unwrap_or(0), x.rank()).ok_or_else(|| self.bad(format!("node '{name}': Gather axis out of range for rank {}", x.rank())))?;
                let mut shape: Vec<u64> = x.shape[..a].to_vec();
                shape.extend(&idx.shape);
                shape.extend(&x.shape[a + 1..]);
                if let (Some(d), Some(i), 1) = (&x.data, &idx.data, x.rank()) {
                    let n = x.shape[0] as i64;
                    let data: Option<Vec<f64>> = i.iter().map(|&v| usize::try_from(if (v as i64) < 0 { v as i64 + n } else { v as i64 }).ok().and_then(|k| d.get(k).copied())).collect();
                    vec![Val { shape, elem: x.elem, data }]
                } else if self.is_weight(node, 0) && x.rank() == 2 && a == 0 {
                    self.mark_weight(node, 0);
                    self.push(name, Op::Embedding(Embedding { tokens: idx.elements(), hidden: x.shape[1], vocab: x.shape[0], dtype: self.dtype }));
                    vec![Val::new(shape, x.elem)]
                } else {
                    let n = self.numel(&shape)?;
                    if x.data.is_none() {
                        self.push(name, self.copy(n));
                    }
                    vec![Val::new(shape, x.elem)]
                }
            }
            // ---- element-wise
            "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Max" | "Min" | "Sum" | "Mean" | "Equal" | "Less" | "Greater" | "LessOrEqual"
            | "GreaterOrEqual" | "And" | "Or" | "Xor" | "Mod" | "PRelu" | "BitShift" => {
                let inputs: Vec<Val> = (0..node.input.len()).filter_map(|i| self.val(node, i).cloned()).collect();
                let mut shape = x.shape.clone();
                for v in &inputs[1..] {
                    shape = broadcast(&shape, &v.shape).ok_or_else(|| self.bad(format!("node '{name}' ({op}): shapes {:?} and {:?} do not broadcast", x.shape, v.shape)))?;
                }
                let n = self.numel(&shape)?;
                if inputs.iter().all(|v| v.data.is_some()) && n as usize <= CONST_LIMIT {
                    vec![Val { shape: shape.clone(), elem: x.elem, data: fold_binary(op, &inputs, &shape) }]
                } else {
                    let kind = match op {
                        "Add" | "Sub" | "Sum" | "Mean" | "Max" | "Min" | "PRelu" => EwKind::Add,
                        "Mul" => EwKind::Mul,
                        "Div" | "Mod" => EwKind::Div,
                        "Pow" => EwKind::Pow,
                        _ => EwKind::Where,
                    };
                    // Learned biases and scales added or multiplied in (more than one element).
                    for i in 0..node.input.len() {
                        if self.val(node, i).is_some_and(|v| elem::is_float(v.elem) && v.elements() > 1) {
                            self.mark_weight(node, i);
                        }
                    }
                    let tensors = inputs.iter().filter(|v| v.elements() * 4 > n).count().max(1) as u32;
                    self.push(name, self.ew(kind, n, tensors));
                    let logical = matches!(op, "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor");
                    vec![Val::new(shape, if logical { elem::BOOL } else { x.elem })]
                }
            }
            "Where" => {
                let (c, a, b) = (x.clone(), self.val(node, 1).cloned(), self.val(node, 2).cloned());
                let (Some(a), Some(b)) = (a, b) else { return Ok(None) };
                let shape = broadcast(&c.shape, &a.shape).and_then(|s| broadcast(&s, &b.shape)).ok_or_else(|| self.bad(format!("node '{name}': Where shapes do not broadcast")))?;
                let n = self.numel(&shape)?;
                if c.data.is_some() && a.data.is_some() && b.data.is_some() && n as usize <= CONST_LIMIT {
                    vec![Val { shape: shape.clone(), elem: a.elem, data: fold_binary("Where", &[c, a.clone(), b], &shape) }]
                } else {
                    self.push(name, self.ew(EwKind::Where, n, 2));
                    vec![Val::new(shape, a.elem)]
                }
            }
            "Relu" | "LeakyRelu" | "Clip" | "Abs" | "Neg" | "Sigmoid" | "HardSigmoid" | "Tanh" | "Exp" | "Log" | "Erf" | "Sqrt" | "Reciprocal"
            | "Elu" | "Selu" | "Celu" | "Softplus" | "Softsign" | "Gelu" | "HardSwish" | "Mish" | "Sin" | "Cos" | "Floor" | "Ceil" | "Round"
            | "Sign" | "Not" | "ThresholdedRelu" | "Shrink" | "IsNaN" | "IsInf" => {
                if x.data.is_some() {
                    let data = x.data.as_ref().and_then(|d| fold_unary(op, d));
                    vec![Val { data, ..x }]
                } else {
                    let kind = match op {
                        "Relu" | "LeakyRelu" | "Clip" | "Abs" | "Neg" | "Floor" | "Ceil" | "Round" | "Sign" | "Not" | "ThresholdedRelu" | "Shrink"
                        | "IsNaN" | "IsInf" => EwKind::Relu,
                        "Sigmoid" | "HardSigmoid" => EwKind::Sigmoid,
                        "Tanh" => EwKind::Tanh,
                        "Gelu" => EwKind::Gelu,
                        "HardSwish" | "Mish" => EwKind::Silu,
                        "Softsign" | "Reciprocal" => EwKind::Div,
                        _ => EwKind::Exp,
                    };
                    self.push(name, self.ew(kind, x.elements(), 1));
                    vec![float_out(&x)]
                }
            }
            // ---- matrix products
            "MatMul" => {
                let Some(b) = self.val(node, 1).cloned() else { return Ok(None) };
                vec![self.matmul(name, node, &x, &b)?]
            }
            "Gemm" => {
                let Some(b) = self.val(node, 1).cloned() else { return Ok(None) };
                if x.rank() != 2 || b.rank() != 2 {
                    return Err(self.bad(format!("node '{name}': Gemm needs 2-D inputs, got {:?} and {:?}", x.shape, b.shape)));
                }
                let (ta, tb) = (at.int("transA").unwrap_or(0) != 0, at.int("transB").unwrap_or(0) != 0);
                let (m, k) = if ta { (x.shape[1], x.shape[0]) } else { (x.shape[0], x.shape[1]) };
                let (kb, n) = if tb { (b.shape[1], b.shape[0]) } else { (b.shape[0], b.shape[1]) };
                if k != kb {
                    return Err(self.bad(format!("node '{name}': Gemm inner dimensions {k} and {kb} differ")));
                }
                let bias = self.input(node, 2).is_some();
                let op = if self.is_weight(node, 1) {
                    self.mark_weight(node, 1);
                    self.mark_weight(node, 2);
                    Gemm::linear(m, k, n, bias, self.dtype)?
                } else {
                    Gemm::bmm(1, m, k, n, self.dtype)?
                };
                self.push(name, Op::Gemm(op));
                vec![Val::new(vec![m, n], x.elem)]
            }
            // ---- convolution and pooling
            "Conv" | "ConvTranspose" => {
                let Some(w) = self.val(node, 1).cloned() else { return Ok(None) };
                match self.conv(name, node, &at, &x, &w, op == "ConvTranspose")? {
                    Some(v) => vec![v],
                    None => return Ok(None),
                }
            }
            "MaxPool" | "AveragePool" | "LpPool" => {
                let kind = if op == "MaxPool" { PoolKind::Max } else { PoolKind::Avg };
                match self.pool(name, &at, &x, kind)? {
                    Some(v) => {
                        let indices = Val::new(v.shape.clone(), elem::INT64);
                        vec![v, indices]
                    }
                    None => return Ok(None),
                }
            }
            "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
                if x.rank() < 3 {
                    return Ok(None);
                }
                let kind = if op == "GlobalMaxPool" { PoolKind::Max } else { PoolKind::Avg };
                let (n, c) = (x.shape[0], x.shape[1]);
                let hw = image_hw(&x.shape);
                self.push(name, Op::Pool(Pool::global(kind, n, c, hw, self.dtype)?));
                let mut shape = vec![n, c];
                shape.extend(std::iter::repeat_n(1, x.rank() - 2));
                vec![Val::new(shape, x.elem)]
            }
            // ---- normalisation
            "BatchNormalization" | "InstanceNormalization" | "GroupNormalization" => {
                if x.rank() < 2 {
                    return Ok(None);
                }
                let (n, c) = (x.shape[0], x.shape[1]);
                let spatial: u64 = x.shape[2..].iter().product();
                let train = self.o.mode == Mode::Training;
                let norm = match op {
                    "BatchNormalization" => {
                        for i in [3, 4] {
                            if let Some(t) = self.input(node, i) {
                                self.buffers.insert(t.to_string());
                            }
                        }
                        ChannelNorm::batch_norm(n, c, spatial, train, self.dtype)?
                    }
                    "InstanceNormalization" => ChannelNorm::instance_norm(n, c, spatial, true, self.dtype)?,
                    _ => {
                        let groups = at.int("num_groups").unwrap_or(1).max(1) as u64;
                        ChannelNorm::group_norm(n, c, spatial, groups, self.dtype)?
                    }
                };
                self.mark_weight(node, 1);
                self.mark_weight(node, 2);
                self.push(name, Op::ChannelNorm(norm));
                vec![float_out(&x)]
            }
            "LayerNormalization" | "SimplifiedLayerNormalization" | "RMSNormalization" => {
                let a = axis(at.int("axis").unwrap_or(-1), x.rank()).unwrap_or(x.rank().saturating_sub(1));
                let rows: u64 = x.shape[..a].iter().product();
                let cols: u64 = x.shape[a..].iter().product();
                let kind = if op == "LayerNormalization" { NormKind::LayerNorm } else { NormKind::RmsNorm };
                let mut norm = Norm::new(kind, rows.max(1), cols, self.dtype);
                norm.has_bias = kind == NormKind::LayerNorm && self.input(node, 2).is_some();
                self.mark_weight(node, 1);
                self.mark_weight(node, 2);
                self.push(name, Op::Norm(norm));
                vec![float_out(&x)]
            }
            "Softmax" | "LogSoftmax" => {
                let default_axis = if self.opset >= 13 { -1 } else { 1 };
                let a = axis(at.int("axis").unwrap_or(default_axis), x.rank()).ok_or_else(|| self.bad(format!("node '{name}': softmax axis out of range for rank {}", x.rank())))?;
                let cols: u64 = if self.opset >= 13 { x.shape[a] } else { x.shape[a..].iter().product() };
                let rows = x.elements() / cols.max(1);
                self.push(name, Op::Softmax(Softmax::new(rows.max(1), cols, self.dtype)));
                vec![float_out(&x)]
            }
            "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL2" | "ReduceL1" | "ReduceSumSquare"
            | "ReduceLogSumExp" | "ArgMax" | "ArgMin" => {
                let keep = at.int("keepdims").unwrap_or(1) != 0;
                let axes: Vec<usize> = if op.starts_with("Arg") {
                    vec![axis(at.int("axis").unwrap_or(0), x.rank()).unwrap_or(0)]
                } else {
                    match self.axes(node, &at, 1) {
                        Some(a) if !a.is_empty() => a.iter().filter_map(|&v| axis(v, x.rank())).collect(),
                        _ if at.int("noop_with_empty_axes").unwrap_or(0) != 0 => Vec::new(),
                        _ => (0..x.rank()).collect(),
                    }
                };
                let shape: Vec<u64> = x.shape.iter().enumerate().filter_map(|(i, &d)| if axes.contains(&i) { keep.then_some(1) } else { Some(d) }).collect();
                let n_out = self.numel(&shape)?;
                if x.data.is_none() {
                    self.push(name, Op::Reduction(Reduction { elements_in: x.elements(), elements_out: n_out.max(1), dtype: self.dtype.vector_storage() }));
                }
                vec![Val::new(shape, if op.starts_with("Arg") { elem::INT64 } else { x.elem })]
            }
            "Resize" | "Upsample" => match self.resize(name, node, &at, &x)? {
                Some(v) => vec![v],
                None => return Ok(None),
            },
            "LSTM" | "GRU" | "RNN" => match self.rnn(name, node, &at, &x)? {
                Some(v) => v,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        Ok(Some(out))
    }

    /// Axes from the attribute (older opsets) or from input `i` (newer ones).
    fn axes(&self, node: &NodeProto, at: &Attrs, i: usize) -> Option<Vec<i64>> {
        at.ints("axes").or_else(|| self.val(node, i).and_then(Val::ints))
    }

    fn reshape(&mut self, name: &str, x: &Val, target: &[i64]) -> Result<Val, WorkloadError> {
        let total = x.elements();
        let build = |t: &[i64]| -> Option<Vec<u64>> {
            let mut shape: Vec<u64> = Vec::new();
            let mut infer = None;
            for (i, &d) in t.iter().enumerate() {
                match d {
                    0 => shape.push(*x.shape.get(i)?),
                    -1 if infer.is_none() => {
                        infer = Some(i);
                        shape.push(1);
                    }
                    d if d > 0 => shape.push(d as u64),
                    _ => return None,
                }
            }
            let known = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))?;
            if let Some(i) = infer {
                if known == 0 || !total.is_multiple_of(known) {
                    return None;
                }
                shape[i] = total / known;
            }
            (shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))? == total).then_some(shape)
        };
        // A constant target written for the file's own fixed batch size follows our batch.
        let rebatched = match (self.file_batch, target.first(), x.shape.first()) {
            (Some(fb), Some(&t0), Some(&x0)) if t0 > 0 && t0 as u64 == fb && x0 == self.o.batch => {
                let mut t = target.to_vec();
                t[0] = self.o.batch as i64;
                build(&t)
            }
            _ => None,
        };
        let shape = rebatched.or_else(|| build(target)).ok_or_else(|| self.bad(format!("node '{name}': cannot reshape {:?} to {target:?}", x.shape)))?;
        let data = x.data.clone();
        Ok(Val { shape, elem: x.elem, data })
    }

    fn matmul(&mut self, name: &str, node: &NodeProto, a: &Val, b: &Val) -> Result<Val, WorkloadError> {
        let err = || self.bad(format!("node '{name}': MatMul of {:?} by {:?}", a.shape, b.shape));
        let (ra, rb) = (a.rank(), b.rank());
        if ra == 0 || rb == 0 {
            return Err(err());
        }
        // 1-D operands are promoted (a: row vector, b: column vector) and the unit dim dropped.
        let a2: Vec<u64> = if ra == 1 { vec![1, a.shape[0]] } else { a.shape.clone() };
        let b2: Vec<u64> = if rb == 1 { vec![b.shape[0], 1] } else { b.shape.clone() };
        let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
        let (kb, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
        if k != kb {
            return Err(err());
        }
        let batch_shape = broadcast(&a2[..a2.len() - 2], &b2[..b2.len() - 2]).ok_or_else(err)?;
        let batch = self.numel(&batch_shape)?;
        let mut shape = batch_shape.clone();
        if ra > 1 {
            shape.push(m);
        }
        if rb > 1 {
            shape.push(n);
        }
        if self.is_weight(node, 1) && b2.len() == 2 {
            // A weight shared by every row: a linear layer over all leading dimensions.
            self.mark_weight(node, 1);
            let rows = checked_mul("matmul rows", &[batch, m])?;
            self.push(name, Op::Gemm(Gemm::linear(rows, k, n, false, self.dtype)?));
        } else {
            if self.is_weight(node, 1) {
                self.mark_weight(node, 1);
            }
            self.push(name, Op::Gemm(Gemm::bmm(batch, m, k, n, self.dtype)?));
        }
        Ok(Val::new(shape, a.elem))
    }

    /// Spatial attributes of a convolution or pool over `spatial` dims: (kernel, strides,
    /// pads [begin.., end..], dilations), with auto_pad resolved.
    fn geometry(&self, at: &Attrs, input: &[u64], kernel: Vec<u64>, transposed: bool) -> (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>) {
        let d = input.len();
        let list = |name: &str, default: u64| -> Vec<u64> { at.ints(name).map(|v| v.iter().map(|&x| x.max(0) as u64).collect()).filter(|v: &Vec<u64>| v.len() == d).unwrap_or(vec![default; d]) };
        let strides = list("strides", 1);
        let dil = list("dilations", 1);
        let mut pads = at.ints("pads").map(|v| v.iter().map(|&x| x.max(0) as u64).collect()).filter(|v: &Vec<u64>| v.len() == 2 * d).unwrap_or(vec![0; 2 * d]);
        let auto = at.string("auto_pad").unwrap_or_default();
        if (auto == "SAME_UPPER" || auto == "SAME_LOWER") && !transposed {
            for i in 0..d {
                let out = input[i].div_ceil(strides[i].max(1));
                let span = out.saturating_sub(1).saturating_mul(strides[i]).saturating_add(kernel[i].saturating_sub(1).saturating_mul(dil[i])).saturating_add(1);
                let need = span.saturating_sub(input[i]).min(crate::net::MAX_PAD);
                let (small, big) = (need / 2, need - need / 2);
                let (b, e) = if auto == "SAME_UPPER" { (small, big) } else { (big, small) };
                pads[i] = b;
                pads[i + d] = e;
            }
        } else if auto == "VALID" {
            pads = vec![0; 2 * d];
        }
        (kernel, strides, pads, dil)
    }

    fn conv(&mut self, name: &str, node: &NodeProto, at: &Attrs, x: &Val, w: &Val, transposed: bool) -> Result<Option<Val>, WorkloadError> {
        let spatial = x.rank().saturating_sub(2);
        if !(1..=2).contains(&spatial) || w.rank() != x.rank() {
            return Ok(None); // 3-D convolutions are not modelled
        }
        let groups = at.int("group").unwrap_or(1).max(1) as u64;
        let (n, c_in) = (x.shape[0], x.shape[1]);
        let c_out = if transposed { w.shape[1].saturating_mul(groups) } else { w.shape[0] };
        let kernel: Vec<u64> = at.ints("kernel_shape").map(|k| k.iter().map(|&v| v.max(1) as u64).collect()).unwrap_or_else(|| w.shape[2..].to_vec());
        if kernel.len() != spatial {
            return Err(self.bad(format!("node '{name}': kernel_shape {kernel:?} does not fit a {spatial}-D input")));
        }
        let (kernel, strides, mut pads, dil) = self.geometry(at, &x.shape[2..], kernel, transposed);
        if transposed {
            // An explicit output shape (or SAME auto-padding: input × stride) fixes the padding:
            // total = stride·(in − 1) + output_padding + dilation·(k − 1) + 1 − out.
            let auto = at.string("auto_pad").unwrap_or_default();
            let input = &x.shape[2..];
            let out: Option<Vec<u64>> = at.ints("output_shape").filter(|v| v.len() == spatial).map(|v| v.iter().map(|&d| d.max(1) as u64).collect()).or_else(|| {
                auto.starts_with("SAME").then(|| input.iter().zip(&strides).map(|(&i, &s)| i.saturating_mul(s)).collect())
            });
            if let Some(out) = out {
                let op = at.ints("output_padding").unwrap_or_default();
                for i in 0..spatial {
                    // Saturating: absurd strides or dilations give huge pads, which Conv's checks reject.
                    let output_padding = op.get(i).copied().unwrap_or(0).max(0) as u64;
                    let full = strides[i].saturating_mul(input[i].saturating_sub(1)).saturating_add(output_padding).saturating_add(dil[i].saturating_mul(kernel[i].saturating_sub(1))).saturating_add(1);
                    let total = full.checked_sub(out[i]).ok_or_else(|| self.bad(format!("node '{name}': output_shape {out:?} is larger than the transposed convolution produces")))?;
                    let (small, big) = (total / 2, total - total / 2);
                    let (b, e) = if auto == "SAME_LOWER" { (big, small) } else { (small, big) };
                    pads[i] = b;
                    pads[i + spatial] = e;
                }
            }
        }
        // 1-D: height 1.
        let two = |v: &[u64], fill: u64| if v.len() == 1 { [fill, v[0]] } else { [v[0], v[1]] };
        let mut c = Conv::new(n, c_in, c_out, image_hw(&x.shape), two(&kernel, 1), self.dtype).groups(groups).bias(self.input(node, 2).is_some());
        c.stride = two(&strides, 1);
        c.dilation = two(&dil, 1);
        c.pads = if spatial == 1 { [0, pads[0], 0, pads[1]] } else { [pads[0], pads[1], pads[2], pads[3]] };
        if transposed {
            let op = at.ints("output_padding").unwrap_or_default();
            c.transposed = true;
            c.output_padding = if spatial == 1 { [0, op.first().copied().unwrap_or(0).max(0) as u64] } else { [op.first().copied().unwrap_or(0).max(0) as u64, op.get(1).copied().unwrap_or(0).max(0) as u64] };
        }
        // The first convolution applied to the data needs no input gradient.
        if std::mem::replace(&mut self.first_conv, false) && self.graph_inputs.contains(node.input[0].as_str()) {
            c = c.no_input_grad();
        }
        let c = c.build()?;
        self.mark_weight(node, 1);
        self.mark_weight(node, 2);
        let [oh, ow] = c.out_hw();
        self.push(name, Op::Conv(c));
        let shape = if spatial == 1 { vec![n, c_out, ow] } else { vec![n, c_out, oh, ow] };
        Ok(Some(Val::new(shape, x.elem)))
    }

    fn pool(&mut self, name: &str, at: &Attrs, x: &Val, kind: PoolKind) -> Result<Option<Val>, WorkloadError> {
        let spatial = x.rank().saturating_sub(2);
        let Some(kernel) = at.ints("kernel_shape") else { return Ok(None) };
        if !(1..=2).contains(&spatial) || kernel.len() != spatial {
            return Ok(None);
        }
        let kernel: Vec<u64> = kernel.iter().map(|&v| v.max(1) as u64).collect();
        let (kernel, strides, pads, dil) = self.geometry(at, &x.shape[2..], kernel, false);
        if dil.iter().any(|&d| d != 1) {
            return Ok(None);
        }
        let two = |v: &[u64], fill: u64| if v.len() == 1 { [fill, v[0]] } else { [v[0], v[1]] };
        let p4 = if spatial == 1 { [0, pads[0], 0, pads[1]] } else { [pads[0], pads[1], pads[2], pads[3]] };
        let ceil = at.int("ceil_mode").unwrap_or(0) != 0;
        let pool = Pool::window(kind, x.shape[0], x.shape[1], image_hw(&x.shape), two(&kernel, 1), two(&strides, 1), p4, ceil, self.dtype)?;
        let [oh, ow] = pool.out_hw;
        self.push(name, Op::Pool(pool));
        let shape = if spatial == 1 { vec![x.shape[0], x.shape[1], ow] } else { vec![x.shape[0], x.shape[1], oh, ow] };
        Ok(Some(Val::new(shape, x.elem)))
    }

    fn resize(&mut self, name: &str, node: &NodeProto, at: &Attrs, x: &Val) -> Result<Option<Val>, WorkloadError> {
        // Upsample(X, scales) and Resize(X, roi, scales, sizes) / Resize-10(X, scales).
        let (scales, sizes) = if node.op_type == "Upsample" {
            (self.val(node, 1).and_then(|v| v.data.clone()).or_else(|| at.floats("scales").map(|f| f.iter().map(|&v| v as f64).collect())), None)
        } else if self.opset < 11 {
            (self.val(node, 1).and_then(|v| v.data.clone()), None)
        } else {
            (self.val(node, 2).and_then(|v| v.data.clone()).filter(|s| !s.is_empty()), self.val(node, 3).and_then(Val::ints))
        };
        let shape: Vec<u64> = match (sizes, scales) {
            (Some(s), _) if s.len() == x.rank() => s.iter().map(|&v| v.max(1) as u64).collect(),
            (_, Some(s)) if s.len() == x.rank() => x.shape.iter().zip(&s).map(|(&d, &f)| ((d as f64 * f).floor() as u64).max(1)).collect(),
            _ => return Ok(None),
        };
        let mode = if at.string("mode").unwrap_or_default().contains("linear") || at.string("mode").unwrap_or_default() == "cubic" { UpsampleMode::Linear } else { UpsampleMode::Nearest };
        if x.rank() == 4 && shape[..2] == x.shape[..2] {
            let u = Upsample::new(mode, x.shape[0], x.shape[1], [x.shape[2], x.shape[3]], [shape[2], shape[3]], self.dtype)?;
            self.push(name, Op::Upsample(u));
        } else {
            let n = self.numel(&shape)?;
            self.push(name, self.ew(EwKind::Copy, n.max(x.elements()), 1));
        }
        Ok(Some(Val::new(shape, x.elem)))
    }

    fn rnn(&mut self, name: &str, node: &NodeProto, at: &Attrs, x: &Val) -> Result<Option<Vec<Val>>, WorkloadError> {
        let Some(w) = self.val(node, 1).cloned() else { return Ok(None) };
        if x.rank() != 3 || w.rank() != 3 {
            return Ok(None);
        }
        let cell = match node.op_type.as_str() {
            "LSTM" => RnnCell::Lstm,
            "GRU" => RnnCell::Gru,
            _ => RnnCell::Tanh,
        };
        let layout = at.int("layout").unwrap_or(0);
        let (seq, batch) = if layout == 0 { (x.shape[0], x.shape[1]) } else { (x.shape[1], x.shape[0]) };
        let hidden = match at.int("hidden_size") {
            Some(h) if h > 0 => h as u64,
            _ => w.shape[1] / cell.gates(),
        };
        let bidirectional = at.string("direction").unwrap_or_default() == "bidirectional";
        let dirs = if bidirectional { 2 } else { 1 };
        let mut r = Rnn::new(cell, batch, seq, x.shape[2], hidden, 1, bidirectional, self.dtype)?;
        r.bias = self.input(node, 3).is_some();
        for i in 1..=3 {
            self.mark_weight(node, i);
        }
        self.push(name, Op::Rnn(r));
        let y = if layout == 0 { vec![seq, dirs, batch, hidden] } else { vec![batch, seq, dirs, hidden] };
        let state = if layout == 0 { vec![dirs, batch, hidden] } else { vec![batch, dirs, hidden] };
        Ok(Some(vec![Val::new(y, x.elem), Val::new(state.clone(), x.elem), Val::new(state, x.elem)]))
    }

    fn finish(mut self, g: &GraphProto) -> Result<OnnxModel, WorkloadError> {
        let params: u64 = g
            .initializer
            .iter()
            .filter(|t| elem::is_float(t.data_type) && self.weights.contains(&t.name) && !self.buffers.contains(&t.name))
            .map(|t| t.dims.iter().map(|&d| d.max(0) as u64).product::<u64>())
            .sum();
        if self.graph.nodes.is_empty() && self.unsupported.is_empty() {
            return Err(self.bad("the ONNX graph has no operators that run on the GPU".into()));
        }
        if self.o.mode == Mode::Training {
            self.graph.add_backward();
            if params > 0 {
                self.graph.push("optimizer.step", Op::Optimizer(Optimizer::plain_pytorch(self.o.optimizer, params)), Phase::Optimizer, 1);
            }
        }
        if let Some(fb) = self.file_batch {
            self.notes.push(format!("the file fixes the batch at {fb}; it was rebound to {}", self.o.batch));
        }
        let input = self.input_desc.join(", ");
        let unsupported = self.unsupported.into_iter().map(|(op, (count, flops))| Unsupported { op, count, flops }).collect();
        Ok(OnnxModel { name: g.name.clone(), graph: self.graph, params, dtype: self.dtype, input, unsupported, notes: self.notes })
    }
}

/// Symbolic dimension names that mean a sequence length.
fn is_sequence_name(lower: &str) -> bool {
    ["seq", "len", "time", "token", "step", "sentence", "position"].iter().any(|k| lower.contains(k))
}

/// Height and width of an NCHW (or NCL: height 1) tensor.
fn image_hw(shape: &[u64]) -> [u64; 2] {
    match shape.len() {
        3 => [1, shape[2]],
        n if n >= 4 => [shape[2], shape[3..].iter().product()],
        _ => [1, 1],
    }
}

/// Folds a binary op over small constant tensors (shape arithmetic), broadcasting.
fn fold_binary(op: &str, inputs: &[Val], shape: &[u64]) -> Option<Vec<f64>> {
    let n: u64 = shape.iter().product();
    let get = |v: &Val, flat: u64| -> Option<f64> {
        let d = v.data.as_ref()?;
        // Index into v by broadcasting from the output's flat index.
        let mut idx = 0u64;
        let mut stride = 1u64;
        let mut rem = flat;
        let offset = shape.len() - v.shape.len();
        let mut coords = vec![0u64; shape.len()];
        for i in (0..shape.len()).rev() {
            coords[i] = rem % shape[i];
            rem /= shape[i];
        }
        for i in (0..v.shape.len()).rev() {
            let c = if v.shape[i] == 1 { 0 } else { coords[i + offset] };
            idx += c * stride;
            stride *= v.shape[i];
        }
        d.get(idx as usize).copied()
    };
    (0..n)
        .map(|i| {
            let a = get(&inputs[0], i)?;
            let b = inputs.get(1).map(|v| get(v, i)).unwrap_or(Some(0.0))?;
            Some(match op {
                "Add" | "Sum" => a + b,
                "Sub" => a - b,
                "Mul" => a * b,
                "Div" if b != 0.0 => {
                    let q = a / b;
                    if inputs[0].elem == elem::INT64 || inputs[0].elem == elem::INT32 {
                        q.trunc()
                    } else {
                        q
                    }
                }
                "Pow" => a.powf(b),
                "Max" => a.max(b),
                "Min" => a.min(b),
                "Equal" => (a == b) as u8 as f64,
                "Less" => (a < b) as u8 as f64,
                "Greater" => (a > b) as u8 as f64,
                "LessOrEqual" => (a <= b) as u8 as f64,
                "GreaterOrEqual" => (a >= b) as u8 as f64,
                "Mod" if b != 0.0 => a % b,
                "Where" => {
                    let c = get(&inputs[2], i)?;
                    if a != 0.0 {
                        b
                    } else {
                        c
                    }
                }
                _ => return None,
            })
        })
        .collect()
}

fn fold_unary(op: &str, d: &[f64]) -> Option<Vec<f64>> {
    let f: fn(f64) -> f64 = match op {
        "Neg" => |v| -v,
        "Abs" => f64::abs,
        "Sqrt" => f64::sqrt,
        "Floor" => f64::floor,
        "Ceil" => f64::ceil,
        "Relu" => |v| v.max(0.0),
        "Not" => |v| (v == 0.0) as u8 as f64,
        "Reciprocal" => |v| 1.0 / v,
        _ => return None,
    };
    Some(d.iter().map(|&v| f(v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_and_axes() {
        assert_eq!(broadcast(&[8, 1, 5], &[4, 5]), Some(vec![8, 4, 5]));
        assert_eq!(broadcast(&[3], &[4]), None);
        assert_eq!(axis(-1, 4), Some(3));
        assert_eq!(axis(4, 4), None);
    }

    #[test]
    fn folds_shape_arithmetic() {
        let a = Val::konst(vec![2.0, 3.0], vec![2]);
        let b = Val::konst(vec![4.0], vec![1]);
        assert_eq!(fold_binary("Mul", &[a.clone(), b], &[2]), Some(vec![8.0, 12.0]));
        let c = Val::konst(vec![7.0, 8.0], vec![2]);
        assert_eq!(fold_binary("Div", &[c, a], &[2]), Some(vec![3.0, 2.0]));
    }
}
