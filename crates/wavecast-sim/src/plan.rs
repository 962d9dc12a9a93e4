//! `wavecast plan train`: every parallel layout of a training run on N GPUs — data, tensor,
//! pipeline and context parallelism, expert parallelism for MoE models, ZeRO stage,
//! micro-batch, recomputation, interleaving — priced by [`crate::train`] and ranked by step
//! time among those that fit in memory.
//!
//! Layouts share work: one GPU's micro-batch graph depends only on (tp, cp, ep, micro-batch,
//! sequence parallelism), so it is priced once for every ZeRO stage, pipeline depth and
//! recomputation policy that uses it.

use crate::train::{assemble, price_micro_batch, OptimizerTimes, Sections, Topology, TrainReport};
use crate::SimError;
use serde::Serialize;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use wavecast_gpu::Gpu;
use wavecast_ir::ops::OptimizerKind;
use wavecast_ir::DType;
use wavecast_predict::comm::CommModel;
use wavecast_predict::Predictor;
use wavecast_workload::{Layout, Recompute, Stack, TrainOptions, TransformerSpec};

/// What to plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRequest {
    pub gpus: u64,
    pub global_batch: u64,
    pub seq: u64,
    pub dtype: DType,
    pub optimizer: OptimizerKind,
    /// The training software every layout runs under.
    pub stack: Stack,
    pub topology: Topology,
    /// Tokens to train on, for the time and cost columns.
    pub tokens: f64,
    /// Rows to keep.
    pub top: usize,
    /// Power limit (W) of the GPUs, below their board power ([`TrainOptions::power_limit_w`]).
    pub power_limit_w: Option<f64>,
}

/// One ranked layout.
#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    pub rank: usize,
    pub layout: String,
    pub step_ms: f64,
    pub mfu: f64,
    pub tokens_per_s_per_gpu: f64,
    pub memory_gb: f64,
    /// Within [`crate::train::NEAR_LIMIT_FRACTION`] of the GPU's memory.
    pub near_memory_limit: bool,
    /// Days to train `tokens`, and the GPUs' price for that long (when the catalog has one).
    pub days: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub report: TrainReport,
}

/// The `--json` of `plan train`.
#[derive(Debug, Clone, Serialize)]
pub struct PlanReport {
    pub model: String,
    pub gpu: String,
    pub dtype: DType,
    pub predictor: String,
    pub gpus: u64,
    pub nodes: u64,
    pub global_batch: u64,
    pub seq: u64,
    pub tokens: f64,
    /// Layouts priced (selective recomputation is skipped where attention is fused, as it would
    /// change nothing), and how many fit.
    pub evaluated: usize,
    pub fitting: usize,
    /// Why the others were set aside, with counts (first words of the reason).
    pub rejected: BTreeMap<String, u64>,
    pub rows: Vec<PlanRow>,
}

fn divisors(n: u64) -> Vec<u64> {
    (1..=n).filter(|d| n.is_multiple_of(*d)).collect()
}

/// Every layout worth pricing for `spec` on `req.gpus` GPUs, in a fixed order.
pub fn candidates(spec: &TransformerSpec, req: &PlanRequest) -> Vec<Layout> {
    let mut out = Vec::new();
    let n = req.gpus;
    let per_node = req.topology.gpus_per_node;
    for tp in divisors(n)
        .into_iter()
        .filter(|&t| t <= per_node && spec.heads.is_multiple_of(t))
    {
        for cp in divisors(n / tp)
            .into_iter()
            .filter(|&c| c <= 16 && req.seq.is_multiple_of(c) && (c == 1 || req.seq >= 16384))
        {
            for pp in divisors(n / (tp * cp))
                .into_iter()
                .filter(|&p| p <= spec.layers)
            {
                let dp = n / (tp * cp * pp);
                let eps: Vec<u64> = match spec.moe {
                    Some(m) => divisors(tp * cp * dp)
                        .into_iter()
                        .filter(|e| m.experts.is_multiple_of(*e))
                        .collect(),
                    None => vec![1],
                };
                for ep in eps {
                    for mb in [1u64, 2, 4, 8, 16]
                        .into_iter()
                        .filter(|mb| req.global_batch.is_multiple_of(dp * mb))
                    {
                        for zero in 0..=if dp > 1 { 3u8 } else { 0 } {
                            for recompute in
                                [Recompute::None, Recompute::Selective, Recompute::Full]
                            {
                                for interleave in if pp > 1 { vec![1u64, 2] } else { vec![1] } {
                                    out.push(Layout {
                                        dp,
                                        tp,
                                        pp,
                                        cp,
                                        ep,
                                        zero,
                                        micro_batch: mb,
                                        interleave,
                                        recompute,
                                        sequence_parallel: tp > 1,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// The head of an error (before its details), without the layout labels it names.
fn reason_head(e: &SimError) -> String {
    // A memory refusal's head is fixed: its figures need not be written out to be dropped.
    let text = match e {
        SimError::OutOfMemory(_) => std::borrow::Cow::Borrowed(crate::train::MemoryShort::HEAD),
        _ => std::borrow::Cow::Owned(e.to_string()),
    };
    let head = text.split([':', ';']).next().unwrap_or("").trim();
    head.split_whitespace().filter(|w| !w.contains('·')).collect::<Vec<_>>().join(" ")
}

/// Prices every candidate layout and ranks those that fit by step time.
pub fn plan_train(
    spec: &TransformerSpec,
    req: &PlanRequest,
    gpu: &Gpu,
    predictor: &dyn Predictor,
    comm: &CommModel,
) -> Result<PlanReport, SimError> {
    if req.gpus == 0 || req.topology.gpus_per_node == 0 {
        return Err(SimError::Invalid(
            "plan train needs at least one GPU and one GPU per node".into(),
        ));
    }
    gpu.check_dtype(req.dtype)
        .map_err(|e| SimError::Predict(wavecast_predict::PredictError::Unsupported(e)))?;
    gpu.check_links(req.gpus).map_err(SimError::Invalid)?;
    // What no layout changes is refused once, as predict refuses it, not set aside per layout.
    wavecast_workload::train::check_trainable(spec, req.seq)?;
    let all = candidates(spec, req);
    if all.is_empty() {
        return Err(SimError::Invalid(format!(
            "no layout of {} GPUs suits {} with global batch {} (tensor parallelism must divide its {} heads and fit a node of {}; the batch must split over the data-parallel GPUs)",
            req.gpus, spec.name, req.global_batch, spec.heads, req.topology.gpus_per_node
        )));
    }
    let kernels = crate::TrainingKernels::new(predictor);
    // The limit goes outermost, so that the training kernels' measured floors slow with the clock too.
    let limited = wavecast_predict::power::limited(&kernels, gpu, req.power_limit_w).map_err(SimError::Invalid)?;
    let predictor: &dyn Predictor = match &limited {
        Some(p) => p,
        None => &kernels,
    };
    let mut cache: HashMap<SectionKey, Sections> = HashMap::new();
    let mut optimizer_times = OptimizerTimes::default();
    let mut fits = Vec::new();
    let mut rejected = crate::reasons::SetAside::default();
    let mut skipped = 0;
    for layout in &all {
        match price(spec, req, layout, gpu, predictor, comm, &mut cache, &mut optimizer_times) {
            Ok(Some(r)) => fits.push(r),
            Ok(None) => skipped += 1,
            Err(e) => rejected.add(&reason_head(&e)),
        }
    }
    let fitting = fits.len();
    fits.sort_by(|a, b| {
        a.step_ms
            .total_cmp(&b.step_ms)
            .then_with(|| a.layout_label.cmp(&b.layout_label))
    });
    let usd = gpu.price.as_ref().map(|p| p.usd_per_hour);
    let rows = fits
        .into_iter()
        .take(req.top)
        .enumerate()
        .map(|(i, r)| {
            let days = req.tokens / r.tokens_per_s / 86400.0;
            PlanRow {
                rank: i + 1,
                layout: r.layout_label.clone(),
                step_ms: r.step_ms,
                mfu: r.mfu,
                tokens_per_s_per_gpu: r.tokens_per_s_per_gpu,
                memory_gb: r.memory_gb.total,
                near_memory_limit: r.memory_gb.near_limit,
                days,
                cost_usd: usd.map(|p| p * req.gpus as f64 * days * 24.0),
                report: r,
            }
        })
        .collect();
    Ok(PlanReport {
        model: spec.name.clone(),
        gpu: gpu.id.clone(),
        dtype: req.dtype,
        predictor: predictor.name().to_string(),
        gpus: req.gpus,
        nodes: req.gpus.div_ceil(req.topology.gpus_per_node),
        global_batch: req.global_batch,
        seq: req.seq,
        tokens: req.tokens,
        evaluated: all.len() - skipped,
        fitting,
        rejected: rejected.into_counts(),
        rows,
    })
}

type SectionKey = (u64, u64, u64, u64, bool, Vec<u64>);

#[allow(clippy::too_many_arguments)]
fn price(
    spec: &TransformerSpec,
    req: &PlanRequest,
    layout: &Layout,
    gpu: &Gpu,
    predictor: &dyn Predictor,
    comm: &CommModel,
    cache: &mut HashMap<SectionKey, Sections>,
    optimizer_times: &mut OptimizerTimes,
) -> Result<Option<TrainReport>, SimError> {
    let o = TrainOptions {
        global_batch: req.global_batch,
        seq: req.seq,
        dtype: req.dtype,
        optimizer: req.optimizer,
        layout: *layout,
        stack: req.stack,
        power_limit_w: None,
    };
    o.validate(spec, Some(req.gpus))?;
    // The graph's collectives run over links that depend on where the groups sit.
    let spans: Vec<u64> = {
        let s = layout.strides();
        vec![s.cp * layout.cp, s.tp * layout.ep]
    };
    let key = (
        layout.tp,
        layout.cp,
        layout.ep,
        layout.micro_batch,
        layout.sequence_parallel,
        spans,
    );
    let sec = match cache.entry(key) {
        Entry::Occupied(e) => e.into_mut(),
        Entry::Vacant(e) => {
            let graph = o.micro_batch_graph(spec)?;
            e.insert(price_micro_batch(&graph, spec, layout, o.stack, &req.topology, gpu, predictor, comm)?)
        }
    };
    // With fused attention there is nothing for selective recomputation to drop: the same
    // layout twice would only crowd the ranking.
    if layout.recompute == Recompute::Selective && sec.layer_core_fw == 0.0 {
        return Ok(None);
    }
    assemble(spec, &o, &req.topology, gpu, predictor, comm, sec, optimizer_times).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_respect_heads_nodes_and_batch() {
        let cfg = r#"{"model_type":"gpt2","n_embd":1280,"n_layer":36,"n_head":20,"vocab_size":50257,"n_positions":1024}"#;
        let spec = TransformerSpec::from_json(cfg, "gpt2-large").unwrap();
        let req = PlanRequest {
            gpus: 16,
            global_batch: 32,
            seq: 1024,
            dtype: DType::Bf16,
            optimizer: OptimizerKind::Adam,
            stack: Stack::EAGER,
            topology: Topology::eight_per_node(),
            tokens: 1e9,
            power_limit_w: None,
            top: 5,
        };
        let c = candidates(&spec, &req);
        assert!(!c.is_empty());
        for l in &c {
            assert_eq!(l.gpus(), 16);
            assert!(spec.heads.is_multiple_of(l.tp) && l.tp <= 8, "{l:?}");
            assert!(req.global_batch.is_multiple_of(l.dp * l.micro_batch));
            assert_eq!(l.cp, 1, "short sequences get no context parallelism");
        }
        // tp 8 does not divide 20 heads; tp 4 does.
        assert!(c.iter().all(|l| l.tp != 8));
        assert!(c.iter().any(|l| l.tp == 4));
    }

    /// A memory refusal is counted under its head without writing its figures out: the same
    /// head its written message gives.
    #[test]
    fn a_memory_refusal_is_counted_under_the_head_of_its_message() {
        let cfg = r#"{"model_type":"gpt2","n_embd":12288,"n_layer":96,"n_head":96,"vocab_size":50257,"n_positions":2048}"#;
        let spec = TransformerSpec::from_json(cfg, "gpt3").unwrap();
        let o = TrainOptions { global_batch: 8, seq: 2048, dtype: DType::Bf16, optimizer: OptimizerKind::Adam, layout: Layout { dp: 8, ..Layout::default() }, stack: Stack::EAGER, power_limit_w: None };
        let gpu = wavecast_gpu::Catalog::builtin().get("a100-sxm-80gb").unwrap().clone();
        let predictor = wavecast_predict::by_name("roofline").unwrap();
        let e = crate::train_step(&spec, &o, &Topology::eight_per_node(), &gpu, predictor.as_ref(), &CommModel::default(), None).unwrap_err();
        assert!(matches!(e, SimError::OutOfMemory(_)), "{e}");
        let written = SimError::Invalid(e.to_string());
        assert_eq!(reason_head(&e), reason_head(&written));
        assert_eq!(reason_head(&e), "does not fit in memory");
    }
}
