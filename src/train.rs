//! Training over many GPUs: one layout's step (`predict --mode train --dp … --tp …`) and the
//! ranking of every layout (`plan train`).

use crate::request::{transformer_spec, ConfigArg, LayoutArgs, ModeChoice, PlanTrainRequest, PredictRequest};
use crate::{Error, Result};
use wavecast_ir::DType;
use wavecast_predict::comm::CommModel;
use wavecast_sim::{PlanReport, PlanRequest, Topology, TrainReport};
use wavecast_workload::{Layout, TrainOptions};


/// The micro-batch of a layout: the one given, else each data-parallel rank's whole share of
/// the batch (no gradient accumulation, as one GPU runs a batch) without pipeline parallelism,
/// and one sequence with it (so the pipeline has micro-batches to overlap).
fn micro_batch(given: Option<u64>, dp: u64, pp: u64, batch: u64) -> u64 {
    match given {
        Some(m) => m,
        None if pp <= 1 && dp > 0 && batch.is_multiple_of(dp) => (batch / dp).max(1),
        None => 1,
    }
}

/// The compute format a request gives, else the training rule's default for its model
/// ([`wavecast_workload::presets::default_train_dtype`]) as `gpu` can run it, with where it
/// came from: a BF16 default runs in FP16 on a part without BF16 units (V100, T4), as PyTorch
/// and the serving engines run a BF16 checkpoint there.
pub(crate) fn train_dtype(given: Option<&str>, model: Option<&str>, config: Option<&ConfigArg>, gpu: &wavecast_gpu::Gpu) -> Result<(DType, String)> {
    if let Some(d) = given {
        return Ok((d.parse()?, format!("{d}: given")));
    }
    let text = match config {
        Some(ConfigArg::Path(p)) => std::fs::read_to_string(p).ok(),
        Some(ConfigArg::Inline(map)) => serde_json::to_string(map).ok(),
        None => model.and_then(wavecast_workload::presets::preset_text).map(str::to_string),
    };
    let preset = if config.is_none() { model } else { None };
    let (dtype, why) = wavecast_workload::presets::default_train_dtype(preset, text.as_deref());
    if matches!(dtype, DType::Bf16 | DType::Fp16) && !gpu.supports(dtype) {
        let rule = why.split_once(": ").map_or(why, |(_, rule)| rule);
        if dtype == DType::Bf16 && gpu.supports(DType::Fp16) {
            return Ok((DType::Fp16, format!("fp16: {rule} is bf16, which {} has no units for", gpu.id)));
        }
        // A part without the 16-bit units (a P4) runs the model in FP32, as PyTorch does when
        // asked for nothing else: a default is never a refusal.
        return Ok((DType::Fp32, format!("fp32: {rule} is {dtype}, and {} has no {dtype} units", gpu.id)));
    }
    Ok((dtype, why.to_string()))
}

/// The layout the flags give (each absent one at its default: 1, ZeRO 0, no recomputation)
/// with tensor-parallel degree `tp`.
fn layout(a: &LayoutArgs, tp: u64, batch: u64) -> Layout {
    let (dp, pp) = (a.dp.unwrap_or(1), a.pp.unwrap_or(1));
    Layout {
        dp,
        tp,
        pp,
        cp: a.cp.unwrap_or(1),
        ep: a.ep.unwrap_or(1),
        zero: a.zero.unwrap_or(0),
        micro_batch: micro_batch(a.micro_batch, dp, pp, batch),
        interleave: a.interleave.unwrap_or(1),
        recompute: a.recompute.unwrap_or_default().into(),
        sequence_parallel: a.sequence_parallel,
    }
}

fn topology(gpus_per_node: u64, nic_gbps: Option<f64>) -> Result<Topology> {
    if gpus_per_node == 0 || gpus_per_node > 1024 {
        return Err(Error::new(format!("GPUs per node must be between 1 and 1024, got {gpus_per_node}")));
    }
    // Below 1 Gbit/s a step takes years and prints zero tokens per second: no cluster's
    // network is that slow, so such a figure is a typo.
    if let Some(n) = nic_gbps.filter(|n| !(n.is_finite() && (1.0..=1e5).contains(n))) {
        return Err(Error::new(format!("NIC rate must be a number of Gbit/s between 1 and 100000, got {}", wavecast_ir::quoted(n))));
    }
    Ok(Topology { gpus_per_node, nic_gbps })
}

/// Answers a [`PredictRequest`] in train mode as one parallel training step (`predict --mode
/// train` with layout flags; without them the layout dp = tp = pp = 1), with its collectives
/// and memory.
pub fn train(req: &PredictRequest) -> Result<TrainReport> {
    req.expect_mode(ModeChoice::Train, "train")?;
    req.check_flags()?;
    // The layout route runs fused attention: `--attention auto`, the default, is what it prices.
    if req.onnx.is_some() || req.image_size.is_some() || req.attention.is_some_and(|a| a != crate::request::AttentionChoice::Auto) {
        return Err(Error::new("a multi-GPU training step (layout flags) models transformers from --model or --config with fused attention; --onnx, --image-size and --attention apply to a one-GPU step without layout flags"));
    }
    // Every flag that does not apply is refused, never ignored.
    if req.layout.sequence_parallel && req.tp <= 1 {
        return Err(Error::new("--sequence-parallel splits activations over tensor parallelism: it needs --tp 2 or more"));
    }
    let catalog = crate::price::catalog(req.gpu_file.as_deref(), &req.price, std::slice::from_ref(&req.gpu))?;
    let gpu = catalog.get(&req.gpu)?;
    let spec = transformer_spec(&req.model, &req.config)?;
    let (dtype, dtype_source) = train_dtype(req.dtype.as_deref(), req.model.as_deref(), req.config.as_ref(), gpu)?;
    let o = TrainOptions { global_batch: req.batch, seq: req.seq(), dtype, optimizer: req.optimizer().into(), layout: layout(&req.layout, req.tp, req.batch), stack: req.training_stack(), power_limit_w: req.power_limit };
    let gpus_per_node = req.layout.gpus_per_node();
    let topo = topology(gpus_per_node, req.layout.nic_gbps)?;
    // The nodes a layout fills: its GPUs over whole nodes, the last one possibly part-used
    // (12 GPUs are 2 nodes of 8, whether --nodes says so or not).
    let used = o.layout.gpus();
    let given = match req.layout.nodes {
        Some(0) => return Err(Error::new("--nodes must be at least 1")),
        Some(n) if used.div_ceil(gpus_per_node.max(1)) == n => Some(used),
        Some(n) => Some(n.checked_mul(gpus_per_node).ok_or_else(|| Error::new("nodes × GPUs per node overflows"))?),
        None => None,
    };
    let predictor = wavecast_predict::by_name_with(req.predictor(), None, req.ops_data.as_deref())?;
    let mut report = wavecast_sim::train_step(&spec, &o, &topo, gpu, predictor.as_ref(), &CommModel::default(), given)?;
    crate::error::refuse_partial(&report.unpriced, req.allow_partial)?;
    report.dtype_source = dtype_source;
    Ok(report)
}

/// The per-op detail of a one-GPU training step, as `predict` without layout flags prices it:
/// the step by op class and phase, with its interval, where the prices came from, and the
/// graph's FLOPs and bytes.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PerOpDetail {
    pub mode: &'static str,
    pub batch: u64,
    pub params: u64,
    pub total_ms: f64,
    pub interval_ms: [f64; 2],
    pub phases: crate::Phases,
    pub classes: Vec<crate::ClassRow>,
    pub provenance: std::collections::BTreeMap<String, f64>,
    pub flops: f64,
    pub bytes: f64,
}

/// A transformer's training step as `predict --mode train --json` prints it on either route,
/// so one GPU and the layout dp = tp = pp = 1 answer with the same keys and numbers: the layout
/// report's keys, and — when the step is one GPU running its batch as one micro-batch with
/// nothing recomputed, the step the per-op route prices — the per-op detail's keys beside them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TrainStep {
    #[serde(flatten)]
    pub report: TrainReport,
    #[serde(flatten)]
    pub per_op: Option<PerOpDetail>,
    /// What the answer assumes or leaves out, as `predict` reports it on the per-op route: a
    /// sequence beyond the model's context, a power limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Answers a transformer's training request on either route (with or without layout flags)
/// as one [`TrainStep`].
pub fn train_step(req: &PredictRequest) -> Result<TrainStep> {
    train_step_given(req, None)
}

/// [`train_step`] for a request without layout flags whose per-op prediction the caller has
/// already made (`predict` prints its notes and table from it), so it is not priced twice.
pub fn train_step_given(req: &PredictRequest, per_op_step: Option<crate::Prediction>) -> Result<TrainStep> {
    let report = train(req)?;
    // The per-op route prices the plain step: with recomputation the two would disagree.
    let plain = matches!(req.layout.recompute, None | Some(crate::request::RecomputeChoice::None));
    // and only plain PyTorch is priced op by op.
    let pytorch = req.stack.unwrap_or_default() == crate::request::StackChoice::Pytorch;
    let per_op = if report.gpus == 1 && report.micro_batches == 1 && plain && pytorch {
        let mut one = req.clone();
        one.layout = LayoutArgs::default();
        one.tp = crate::defaults::TP;
        // The caller's prediction answers the same request only when it had no layout flags.
        let p = match per_op_step {
            Some(p) if !req.layout.any() && req.tp == crate::defaults::TP => p,
            _ => crate::predict(&one)?,
        };
        Some(PerOpDetail { mode: p.mode, batch: p.batch, params: p.params, total_ms: p.total_ms, interval_ms: p.interval_ms, phases: p.phases, classes: p.classes, provenance: p.provenance, flops: p.flops, bytes: p.bytes })
    } else {
        None
    };
    Ok(TrainStep { notes: train_notes(req, &report)?, report, per_op })
}

fn train_notes(req: &PredictRequest, report: &TrainReport) -> Result<Vec<String>> {
    let mut notes: Vec<String> = wavecast_workload::beyond_context(&transformer_spec(&req.model, &req.config)?, report.seq).into_iter().collect();
    if let Some(w) = req.power_limit {
        let catalog = crate::price::catalog(req.gpu_file.as_deref(), &req.price, std::slice::from_ref(&req.gpu))?;
        notes.push(crate::power_limit_note(catalog.get(&req.gpu)?, w));
    }
    Ok(notes)
}

/// `predict`'s answer for one step as `--json` prints it: a transformer's training step on the
/// one training route ([`train_step`]), any other workload's step the per-op report.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum StepAnswer {
    Train(Box<TrainStep>),
    Step(Box<crate::Prediction>),
}

/// Answers a [`PredictRequest`] of one step (`--mode inference|train`, no layout flags) as
/// `predict --json` does.
pub fn predict_answer(req: &PredictRequest) -> Result<StepAnswer> {
    if crate::trains_as_layout(req) {
        Ok(StepAnswer::Train(Box::new(train_step(req)?)))
    } else {
        Ok(StepAnswer::Step(Box::new(crate::predict(req)?)))
    }
}

/// Answers a [`PlanTrainRequest`]: every layout of the run, the fitting ones ranked.
pub fn plan_train(req: &PlanTrainRequest) -> Result<PlanReport> {
    let catalog = crate::price::catalog(req.gpu_file.as_deref(), &req.price, std::slice::from_ref(&req.gpu))?;
    let gpu = catalog.get(&req.gpu)?;
    let spec = transformer_spec(&req.model, &req.config)?;
    // A quintillion tokens is ten thousand times the largest training runs published.
    if !(req.tokens.is_finite() && req.tokens > 0.0 && req.tokens <= 1e18) {
        return Err(Error::new(format!("--tokens must be a positive number of at most 1e18, got {}", wavecast_ir::quoted(req.tokens))));
    }
    if req.gpus == 0 || req.gpus > wavecast_workload::train::MAX_TRAINING_GPUS {
        return Err(Error::new(format!("--gpus must be between 1 and {}, got {}", wavecast_workload::train::MAX_TRAINING_GPUS, req.gpus)));
    }
    let (dtype, dtype_source) = train_dtype(req.dtype.as_deref(), req.model.as_deref(), req.config.as_ref(), gpu)?;
    let plan = PlanRequest {
        gpus: req.gpus,
        global_batch: wavecast_ir::dim("batch", req.batch).map_err(|e| Error::new(e.to_string()))?,
        seq: wavecast_ir::dim("sequence length", req.seq()).map_err(|e| Error::new(e.to_string()))?,
        dtype,
        optimizer: req.optimizer.into(),
        stack: req.stack.stack(req.fused_optimizer),
        topology: topology(req.gpus_per_node, req.nic_gbps)?,
        tokens: req.tokens,
        top: wavecast_ir::dim("--top", req.top as u64).map_err(|e| Error::new(e.to_string()))? as usize,
        power_limit_w: req.power_limit,
    };
    let predictor = wavecast_predict::by_name_with(&req.predictor, None, req.ops_data.as_deref())?;
    let mut report = wavecast_sim::plan_train(&spec, &plan, gpu, predictor.as_ref(), &CommModel::default())?;
    // Each row says where its format came from, as `predict` with that layout does.
    for row in &mut report.rows {
        row.report.dtype_source.clone_from(&dtype_source);
    }
    Ok(report)
}
