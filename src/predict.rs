//! One workload on one GPU: the step time, per phase and per op class (`wavecast predict`).

use crate::request::{with_source, AttentionChoice, ModeChoice, PredictRequest, PredictRoute};
use crate::{Error, Result};
use serde::Serialize;
use wavecast_gpu::Gpu;
use wavecast_ir::{DType, OpClass, Phase};
use wavecast_predict::Predictor;
use wavecast_sim::Breakdown;
use wavecast_workload::{Kind, LoadOptions, LoadedWorkload, Mode};

/// A predicted step (the `--json` output of `predict`). Times in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub model: String,
    pub gpu: String,
    pub predictor: String,
    pub mode: &'static str,
    pub batch: u64,
    pub seq: u64,
    pub dtype: DType,
    pub params: u64,
    /// Predicted time of one step.
    pub total_ms: f64,
    /// Prediction interval.
    pub interval_ms: [f64; 2],
    pub phases: Phases,
    pub classes: Vec<ClassRow>,
    /// Share of the step's time by where its price came from (the price ladder's rung:
    /// `measured`, `transfer from GPU`, `physics`).
    pub provenance: std::collections::BTreeMap<String, f64>,
    pub tokens_per_s: f64,
    pub flops: f64,
    pub bytes: f64,
    /// Operators the predictor has no model for (reported, never dropped).
    pub unpriced: Vec<String>,
    /// One sample's input, for models that do not read `seq` tokens (vision, GAN, ONNX).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples_per_s: Option<f64>,
    /// ONNX operators wavecast cannot map, with their estimated share of the model's FLOPs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<UnsupportedRow>,
    /// A transformer's training step: the memory of its one GPU, the layout dp = tp = pp = 1's
    /// memory model and the same object `predict` with layout flags reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_gb: Option<wavecast_sim::MemoryGb>,
    /// What the importer assumed (e.g. ONNX dimensions bound to `--batch`), or what the answer
    /// leaves out (a sequence beyond the model's context); the CLI also prints them to stderr.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct UnsupportedRow {
    pub op: String,
    pub count: u64,
    /// Estimated forward FLOPs (one per output element when the output shape is known).
    pub flops: f64,
    pub share: f64,
}

/// Milliseconds per phase; backward and optimizer are absent for inference.
#[derive(Debug, Clone, Serialize)]
pub struct Phases {
    pub forward: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    pub class: OpClass,
    pub count: u64,
    pub ms: f64,
    pub share: f64,
    pub flops: f64,
    pub bytes: f64,
    /// Share of the class's time by where its price came from.
    pub provenance: std::collections::BTreeMap<String, f64>,
}

/// Prices every operator of `workload` on `gpu` with `predictor` and sums them into one step.
/// A transformer's training step is the layout dp = tp = pp = 1, whose memory model (every
/// tensor a layer keeps, the loss, allocator buffers) answers and refuses; any other workload is
/// refused when its resident floor (weights, gradients, optimizer states, the linears' saved
/// inputs) surely does not fit.
pub fn estimate(workload: &LoadedWorkload, gpu: &Gpu, predictor: &dyn Predictor) -> Result<Prediction> {
    let memory = match (&workload.spec, workload.mode) {
        // The layout route's memory model covers decoder stacks; an encoder-decoder's step is
        // checked against its graph's resident floor, as any other workload's.
        (Some(spec), Mode::Training) if spec.encdec.is_none() => Some(single_gpu_memory(workload, spec, gpu, predictor)?),
        _ => {
            wavecast_sim::check_fits(&workload.graph, gpu)?;
            None
        }
    };
    let b = wavecast_sim::estimate(&workload.graph, gpu, predictor)?;
    let mut prediction = report(workload, &b);
    prediction.memory_gb = memory;
    Ok(prediction)
}

/// The memory of a transformer's single-GPU training step as the layout route counts it (the
/// whole batch in one micro-batch), or its refusal in that route's words. Its attention is the
/// priced graph's: a fused kernel keeps no score matrix for backward, eager attention does.
fn single_gpu_memory(w: &LoadedWorkload, spec: &wavecast_workload::TransformerSpec, gpu: &Gpu, predictor: &dyn Predictor) -> Result<wavecast_sim::MemoryGb> {
    let optimizer = w.graph.nodes.iter().find_map(|n| if let wavecast_ir::Op::Optimizer(o) = &n.op { Some(o.kind) } else { None });
    let fused = w.graph.nodes.iter().any(|n| matches!(n.op, wavecast_ir::Op::Attention(_)));
    let attention = if fused { wavecast_workload::AttentionImpl::Fused } else { wavecast_workload::AttentionImpl::Eager };
    let o = wavecast_workload::TrainOptions {
        global_batch: w.batch,
        seq: w.seq,
        dtype: w.dtype,
        optimizer: optimizer.unwrap_or(wavecast_ir::ops::OptimizerKind::Adam),
        layout: wavecast_workload::Layout { micro_batch: w.batch, ..Default::default() },
        stack: wavecast_workload::Stack { attention, ..wavecast_workload::Stack::EAGER },
        power_limit_w: None,
    };
    let topo = wavecast_sim::Topology::eight_per_node();
    let report = wavecast_sim::train_step(spec, &o, &topo, gpu, predictor, &wavecast_predict::comm::CommModel::default(), Some(1))?;
    Ok(report.memory_gb)
}

/// What a power limit does to the step, for the report: the clock it leaves compute-bound kernels.
pub fn power_limit_note(gpu: &Gpu, limit_w: f64) -> String {
    let clock = wavecast_predict::physics::power_limited_clock_fraction(gpu, limit_w);
    format!("power limit {limit_w:.0} W of {}'s {:.0} W board power: compute-bound kernels at {:.1} % of the clock, memory-bound ones unchanged", gpu.id, gpu.tdp_w, 100.0 * clock)
}

/// Answers a [`PredictRequest`] of one step on one GPU (`--mode inference|train`, no layout):
/// loads the workload, finds the GPU and predictor, estimates.
pub fn predict(req: &PredictRequest) -> Result<Prediction> {
    match req.route() {
        PredictRoute::Serve => return Err(Error::new("serving is its own request: use `predict --mode serve` (CLI) or `wavecast.serve` (Python)")),
        PredictRoute::Train => return Err(Error::new("layout flags and --tp make a multi-GPU training step: `wavecast.train` (Python) answers it, as the CLI's `predict` does")),
        PredictRoute::Step => req.check_flags()?,
    }
    // Every flag that does not apply is refused, never ignored: an image or latent model has no
    // sequence.
    if let Some(m) = req.model.as_deref().and_then(wavecast_workload::zoo::find).filter(|m| req.seq.is_some() && !matches!(m.input, wavecast_workload::zoo::Input::Tokens)) {
        return Err(Error::new(format!("--seq does not apply to {} (its input is images or a latent vector, not tokens)", m.name)));
    }
    let mut options = load_options(req)?;
    // A transformer takes the one default-format rule (the config's torch_dtype, else bf16;
    // fp32 for NeuSight's FP32 benchmark presets) in every mode, so one GPU and the layout
    // dp = tp = pp = 1 answer alike and inference runs in the format the model was released in.
    let transformer = is_transformer_request(req);
    let catalog = crate::price::catalog(req.gpu_file.as_deref(), &req.price, std::slice::from_ref(&req.gpu))?;
    let gpu = catalog.get(&req.gpu)?;
    if req.dtype.is_none() && transformer {
        options.dtype = Some(crate::train::train_dtype(None, req.model.as_deref(), req.config.as_ref(), gpu)?.0);
    }
    let mut workload = with_source(req.model.as_deref(), req.config.as_ref(), req.onnx.as_deref(), |source| Ok(wavecast_workload::load(source, &options)?))?;
    workload.graph.set_optimizer_implementation(req.optimizer_implementation());
    let predictor = wavecast_predict::by_name_with(req.predictor(), None, req.ops_data.as_deref())?;
    // A training step's kernels as the training stacks run them, as on the layout route.
    let kernels = wavecast_sim::TrainingKernels::new(predictor.as_ref());
    let predictor: &dyn wavecast_predict::Predictor = if options.mode == Mode::Training { &kernels } else { predictor.as_ref() };
    // A power limit goes outermost, so that the training kernels' measured floors slow with the clock too.
    let limited = wavecast_predict::power::limited(predictor, gpu, req.power_limit).map_err(Error::new)?;
    let predictor: &dyn wavecast_predict::Predictor = limited.as_ref().map_or(predictor, |p| p as &dyn wavecast_predict::Predictor);
    // One GPU is the layout dp = tp = pp = 1: `estimate` counts a transformer's training memory
    // with that route's model and refuses in its words.
    let mut prediction = estimate(&workload, gpu, predictor)?;
    crate::error::refuse_partial(&prediction.unpriced, req.allow_partial)?;
    if let Some(w) = req.power_limit {
        prediction.notes.push(power_limit_note(gpu, w));
    }
    Ok(prediction)
}

/// Whether a request's workload is a transformer from a preset or config (which trains with
/// the training route's default format).
fn is_transformer_request(req: &PredictRequest) -> bool {
    req.onnx.is_none() && (req.config.is_some() || req.model.as_deref().and_then(wavecast_workload::presets::preset_text).is_some())
}

/// Whether a request is a transformer's training step that the layout route also answers (one
/// GPU is the layout dp = tp = pp = 1). Eager/fused attention choices, ONNX graphs and vision
/// models are the per-op route's alone.
pub fn trains_as_layout(req: &PredictRequest) -> bool {
    req.mode == ModeChoice::Train && is_transformer_request(req) && req.attention.unwrap_or_default() == AttentionChoice::Auto && req.image_size.is_none() && !req.is_encoder_decoder()
}

/// Why a transformer request without `--dtype` runs in the format it does (`None` when a
/// format was given, the workload is not a transformer from a preset or config, or it is
/// served).
pub fn default_dtype_note(req: &PredictRequest) -> Option<String> {
    let what = match req.mode {
        ModeChoice::Train => "training",
        ModeChoice::Inference => "inference",
        ModeChoice::Serve => return None,
    };
    if req.dtype.is_some() || !is_transformer_request(req) {
        return None;
    }
    let catalog = crate::price::catalog(req.gpu_file.as_deref(), &req.price, std::slice::from_ref(&req.gpu)).ok()?;
    let gpu = catalog.get(&req.gpu).ok()?;
    crate::train::train_dtype(None, req.model.as_deref(), req.config.as_ref(), gpu).ok().map(|(_, why)| format!("{what} format {why} (--dtype to change)"))
}

fn load_options(req: &PredictRequest) -> Result<LoadOptions> {
    let mode = if req.mode == ModeChoice::Train { Mode::Training } else { Mode::Inference };
    let mut o = LoadOptions::new(req.batch, req.seq(), mode);
    o.dtype = req.dtype.as_deref().map(str::parse::<DType>).transpose()?;
    o.attention = req.attention.unwrap_or_default().into();
    o.optimizer = req.optimizer().into();
    o.image = req.image_size;
    Ok(o)
}

fn report(w: &LoadedWorkload, b: &Breakdown) -> Prediction {
    let classes = b
        .classes
        .iter()
        .map(|(c, t)| ClassRow {
            class: *c,
            count: t.count,
            ms: t.ms,
            share: if b.total_ms > 0.0 { t.ms / b.total_ms } else { 0.0 },
            flops: t.flops,
            bytes: t.bytes,
            provenance: wavecast_sim::step::shares(&t.provenance),
        })
        .collect();
    let phases = Phases {
        forward: b.phases.get(&Phase::Forward).copied().unwrap_or(0.0),
        backward: b.phases.get(&Phase::Backward).copied(),
        optimizer: b.phases.get(&Phase::Optimizer).copied(),
    };
    let seconds = b.total_ms / 1e3;
    // Transformers and op graphs read token sequences; the others report samples and inputs.
    let per_sample = !matches!(w.kind, Kind::Transformer | Kind::OpGraph);
    Prediction {
        model: w.name.clone(),
        gpu: b.gpu.clone(),
        predictor: b.predictor.clone(),
        mode: if w.mode == Mode::Training { "train" } else { "inference" },
        batch: w.batch,
        seq: w.seq,
        dtype: w.dtype,
        params: w.params,
        total_ms: b.total_ms,
        interval_ms: [b.total_lo_ms, b.total_hi_ms],
        phases,
        classes,
        provenance: b.provenance_shares(),
        tokens_per_s: (w.batch * w.seq) as f64 / seconds,
        flops: b.flops,
        bytes: b.bytes,
        unpriced: b.unpriced.iter().map(|u| format!("{} ×{}: {}", u.node, u.count, u.reason)).collect(),
        input: if per_sample { w.input.clone() } else { None },
        samples_per_s: per_sample.then(|| w.batch as f64 / seconds),
        unsupported: unsupported_rows(w),
        memory_gb: None,
        notes: w.notes.clone(),
    }
}

fn unsupported_rows(w: &LoadedWorkload) -> Vec<UnsupportedRow> {
    let total = w.graph.flops_in(Phase::Forward) + w.unsupported.iter().map(|u| u.flops).sum::<f64>();
    w.unsupported
        .iter()
        .map(|u| UnsupportedRow { op: u.op.clone(), count: u.count, flops: u.flops, share: if total > 0.0 { u.flops / total } else { 0.0 } })
        .collect()
}
