//! One loader for every workload front-end: a preset name (transformer or built-in model), a
//! Hugging Face `config.json` (a file or its text), an ONNX file or a NeuSight operator graph
//! all become one [`LoadedWorkload`] — the operator graph plus what reports say about it.

use crate::onnx::{self, OnnxOptions, Unsupported};
use crate::zoo::{self, Input, ZooOptions};
use crate::{build, presets, AttentionImpl, BuildOptions, Mode, TransformerSpec, WorkloadError};
use std::path::Path;
use wavecast_ir::ops::OptimizerKind;
use wavecast_ir::{DType, Graph};

/// Where a workload comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// A built-in model: a transformer preset or a vision/GAN/recurrent model (`wavecast models`).
    Preset(&'a str),
    /// A Hugging Face `config.json` file.
    ConfigFile(&'a Path),
    /// The text of a Hugging Face `config.json`, with a name for messages and reports.
    ConfigText { text: &'a str, name: &'a str },
    /// An ONNX model file.
    Onnx(&'a Path),
    /// A NeuSight operator-graph CSV with the model's layer count.
    OpGraph { path: &'a Path, layers: u64 },
}

/// How the workload runs.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOptions {
    pub batch: u64,
    pub seq: u64,
    pub mode: Mode,
    /// Compute type; None: FP32, or an ONNX file's own type.
    pub dtype: Option<DType>,
    pub attention: AttentionImpl,
    pub optimizer: OptimizerKind,
    /// Square image side for image models and symbolic ONNX height/width.
    pub image: Option<u64>,
}

impl LoadOptions {
    pub fn new(batch: u64, seq: u64, mode: Mode) -> LoadOptions {
        LoadOptions { batch, seq, mode, dtype: None, attention: AttentionImpl::Auto, optimizer: OptimizerKind::Adam, image: None }
    }
}

/// What kind of front-end produced the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Transformer,
    /// A built-in vision, GAN or recurrent model.
    Zoo,
    Onnx,
    OpGraph,
}

/// A workload as an operator graph, with what reports need to describe it.
#[derive(Debug, Clone)]
pub struct LoadedWorkload {
    pub name: String,
    pub kind: Kind,
    pub graph: Graph,
    pub params: u64,
    pub batch: u64,
    pub mode: Mode,
    pub dtype: DType,
    /// Tokens per sample (1 for models whose input is not a token sequence).
    pub seq: u64,
    /// One sample's input, for models that do not read `seq` tokens.
    pub input: Option<String>,
    /// ONNX operators that could not be mapped (never silently dropped).
    pub unsupported: Vec<Unsupported>,
    /// Remarks the importer made (e.g. assumed dimensions).
    pub notes: Vec<String>,
    /// The transformer the graph was built from, for transformer workloads.
    pub spec: Option<TransformerSpec>,
}

/// A `--model` name that is a built-in non-transformer model.
pub fn is_zoo_model(name: &str) -> bool {
    presets::canonical(name).is_none() && zoo::find(name).is_some()
}

/// The transformer a source describes (serving models LLM decoding, so it needs one).
pub fn transformer_spec(source: Source) -> Result<TransformerSpec, WorkloadError> {
    match source {
        Source::Preset(name) if is_zoo_model(name) => Err(WorkloadError::Invalid(format!(
            "'{name}' is not a transformer LLM: serving, `compare` and training layouts (--dp, --tp, --pp, `plan train`) model transformers; predict it on one GPU with `predict --mode inference|train` and no layout flags"
        ))),
        Source::Preset(name) => presets::preset(name),
        Source::ConfigFile(path) => presets::load_config(path),
        Source::ConfigText { text, name } => {
            let mut spec = TransformerSpec::from_json(text, name)?;
            if spec.name.is_empty() {
                spec.name = name.to_string();
            }
            Ok(spec)
        }
        Source::Onnx(_) | Source::OpGraph { .. } => Err(WorkloadError::Invalid("serving needs a transformer: give a preset name or a config.json".into())),
    }
}

/// Loads `source` as an operator graph run as `o` says.
pub fn load(source: Source, o: &LoadOptions) -> Result<LoadedWorkload, WorkloadError> {
    let w = match source {
        Source::Preset(name) if is_zoo_model(name) => load_zoo(name, o),
        Source::Onnx(path) => load_onnx(path, o),
        Source::OpGraph { path, layers } => load_opgraph(path, layers, o),
        _ => load_transformer(transformer_spec(source)?, o),
    }?;
    let mut w = w;
    run_convolutions_in_bf16(&mut w);
    require_priceable(w)
}

/// FP8 runs linear layers (Transformer Engine, torchao); PyTorch has no FP8 convolution or
/// recurrent kernels, so those layers run in BF16 (as Transformer Engine leaves them), never at
/// an FP8 rate no stack reaches.
fn run_convolutions_in_bf16(w: &mut LoadedWorkload) {
    let mut kinds = std::collections::BTreeSet::new();
    for n in &mut w.graph.nodes {
        match &mut n.op {
            wavecast_ir::Op::Conv(c) if c.dtype == DType::Fp8 => {
                c.dtype = DType::Bf16;
                kinds.insert("convolutions");
            }
            wavecast_ir::Op::Rnn(r) if r.dtype == DType::Fp8 => {
                r.dtype = DType::Bf16;
                kinds.insert("recurrent layers");
            }
            _ => {}
        }
    }
    if !kinds.is_empty() {
        let kinds: Vec<&str> = kinds.into_iter().collect();
        w.notes.push(format!("fp8 runs the linear layers; {}'s {} run in bf16 (PyTorch has no fp8 kernels for them)", w.name, kinds.join(" and ")));
    }
}

/// A workload with no operator to price would report a zero time and infinite throughput.
/// One whose sizes are past exact arithmetic cannot be priced at all.
fn require_priceable(w: LoadedWorkload) -> Result<LoadedWorkload, WorkloadError> {
    w.graph.check_scale().map_err(|e| WorkloadError::Invalid(format!("{}: {e}", w.name)))?;
    if !w.graph.nodes.is_empty() {
        return Ok(w);
    }
    let skipped: Vec<String> = w.unsupported.iter().map(|u| format!("{}×{}", u.op, u.count)).collect();
    let why = if skipped.is_empty() { "it has no operators".to_string() } else { format!("every operator is unsupported ({})", skipped.join(", ")) };
    Err(WorkloadError::Invalid(format!("{}: nothing to predict: {why}", w.name)))
}

fn load_transformer(spec: TransformerSpec, o: &LoadOptions) -> Result<LoadedWorkload, WorkloadError> {
    if o.image.is_some() {
        return Err(WorkloadError::Invalid("--image-size applies to the built-in vision models and ONNX files only".into()));
    }
    let dtype = o.dtype.unwrap_or(DType::Fp32);
    let mut b = BuildOptions::new(o.batch, o.seq, o.mode, dtype);
    b.attention = o.attention;
    b.optimizer = o.optimizer;
    let graph = build(&spec, &b)?;
    let notes = beyond_context(&spec, o.seq).into_iter().collect();
    Ok(LoadedWorkload {
        name: spec.name.clone(),
        kind: Kind::Transformer,
        params: graph.params(),
        graph,
        batch: o.batch,
        mode: o.mode,
        dtype,
        seq: o.seq,
        input: None,
        unsupported: Vec::new(),
        notes,
        spec: Some(spec),
    })
}

/// What to say of a sequence longer than a rotary-position model's context: it is priced (the
/// same layers at that length; context-extension fine-tunes train there), but not silently. A
/// model with learned positions cannot run it at all, and the builder refuses it.
pub fn beyond_context(spec: &TransformerSpec, seq: u64) -> Option<String> {
    (!spec.learned_positions && seq > spec.max_positions).then(|| {
        format!("{seq} tokens are beyond {}'s context of {} (max_position_embeddings): priced as its layers at that length", spec.name, spec.max_positions)
    })
}

/// Largest square image side accepted: 16K pixels, four times the largest inputs published
/// for these networks; beyond it the size is a typo.
const MAX_IMAGE_SIDE: u64 = 16_384;

fn load_zoo(name: &str, o: &LoadOptions) -> Result<LoadedWorkload, WorkloadError> {
    let m = zoo::find(name).ok_or_else(|| WorkloadError::Invalid(format!("unknown model '{name}'")))?;
    let mut z = ZooOptions::new(o.batch, o.seq, o.mode, o.dtype.unwrap_or(DType::Fp32));
    z.optimizer = o.optimizer;
    z.image = o.image;
    z.attention = o.attention;
    if o.image.is_some() && !matches!(m.input, Input::Image(_)) {
        return Err(WorkloadError::Invalid(format!("--image-size does not apply to {} (its input is {})", m.name, m.describe_input(&z))));
    }
    if let Some(side) = o.image.filter(|&s| s == 0 || s > MAX_IMAGE_SIDE) {
        return Err(WorkloadError::Invalid(format!("image size must be in 1..={MAX_IMAGE_SIDE} pixels, got {side}")));
    }
    let graph = m.build(&z)?;
    Ok(LoadedWorkload {
        name: m.name.to_string(),
        kind: Kind::Zoo,
        graph,
        params: m.param_count()?,
        batch: o.batch,
        mode: o.mode,
        dtype: z.dtype,
        seq: if m.input == Input::Tokens { o.seq } else { 1 },
        input: Some(m.describe_input(&z)),
        unsupported: Vec::new(),
        notes: Vec::new(),
        spec: None,
    })
}

fn load_onnx(path: &Path, o: &LoadOptions) -> Result<LoadedWorkload, WorkloadError> {
    let x = OnnxOptions { batch: o.batch, seq: o.seq, mode: o.mode, dtype: o.dtype, optimizer: o.optimizer, image: o.image };
    let m = onnx::import_file(path, &x)?;
    Ok(LoadedWorkload {
        name: m.name,
        kind: Kind::Onnx,
        graph: m.graph,
        params: m.params,
        batch: o.batch,
        mode: o.mode,
        dtype: m.dtype,
        seq: o.seq,
        input: Some(m.input),
        unsupported: m.unsupported,
        notes: m.notes,
        spec: None,
    })
}

fn load_opgraph(path: &Path, layers: u64, o: &LoadOptions) -> Result<LoadedWorkload, WorkloadError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| WorkloadError::Read { path: origin.clone(), reason: e.to_string() })?;
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or(origin);
    let graph = crate::neusight::import_opgraph(&text, &name, layers)?;
    Ok(LoadedWorkload {
        name,
        kind: Kind::OpGraph,
        params: graph.params(),
        graph,
        batch: o.batch,
        mode: o.mode,
        dtype: DType::Fp32,
        seq: o.seq,
        input: None,
        unsupported: Vec::new(),
        notes: Vec::new(),
        spec: None,
    })
}
