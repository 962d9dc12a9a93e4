//! A training step over many GPUs: one GPU's micro-batch graph is priced once, split into
//! pipeline stages, and the step is assembled from the schedule — 1F1B (or interleaved)
//! pipelining, gradient synchronisation overlapping the last backward pass, ZeRO's extra
//! collectives, recomputation — with every collective priced over the link its group uses.
//!
//! Model (each piece a small function below, each documented where it is):
//! - stage s runs n_s layers (plus the embedding on the first stage, the head and loss on the
//!   last); its forward and backward times per micro-batch are f_s and b_s;
//! - 1F1B over m micro-batches: step = Σ_s (f_s + b_s) + (m − 1)·max_s (f_s + b_s): each
//!   micro-batch crosses every stage once to fill and drain the pipeline and the slowest stage
//!   paces the rest. With v interleaved chunks per stage the fill and drain shrink v-fold. For
//!   equal stages that is the familiar bubble of (p − 1)/(m·v) of the ideal time;
//! - gradients (or, under ZeRO, their reduce-scatter) leave in 25 MiB buckets (PyTorch DDP's
//!   default) as the last micro-batch's backward produces them, and only what is still on the
//!   wire when backward ends is exposed; ZeRO-1/2 then all-gather the updated weights, and
//!   ZeRO-3 gathers every layer's weights before its forward and backward (prefetched, so
//!   only what outlasts the layer's compute shows);
//! - the optimizer updates this GPU's parameters (1/dp of them under ZeRO).

use crate::SimError;
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_ir::ops::{CommKind, GemmKind, Optimizer};
use wavecast_ir::{Graph, Node, Op, OpClass, Phase, Role};
use wavecast_predict::comm::{CommModel, Link};
use wavecast_predict::{Context, Estimate, PredictError, Predictor};
use wavecast_workload::train::{
    model_state_bytes, Recompute, TrainMemory, TrainOptions, ALLOCATOR_SLACK, RUNTIME_OVERHEAD_BYTES, SELECTIVE_LAYER_SHARE,
    SELECTIVE_OP_MATMUL_SHARE,
};
use wavecast_workload::{Layout, Stack, TransformerSpec};

/// PyTorch DDP's default gradient bucket (`bucket_cap_mb = 25`).
pub const BUCKET_BYTES: f64 = 25.0 * 1024.0 * 1024.0;

/// Where the GPUs sit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Topology {
    pub gpus_per_node: u64,
    /// Scale-out NIC per GPU, Gbit/s; the catalog's figure when `None`.
    pub nic_gbps: Option<f64>,
}

impl Topology {
    /// Eight GPUs per node, as in every vendor reference server of the catalog's data-centre parts.
    pub fn eight_per_node() -> Topology {
        Topology {
            gpus_per_node: wavecast_predict::comm::SERVER_GPUS,
            nic_gbps: None,
        }
    }
}

/// The parallel axis a collective runs along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    Tensor,
    Context,
    Expert,
    Pipeline,
    Data,
}

impl Axis {
    /// The axis of a collective the transformer builder emitted, from its node name.
    fn of_node(name: &str) -> Axis {
        if name.contains("cp_kv_exchange") {
            Axis::Context
        } else if name.contains("ep_dispatch") || name.contains("ep_combine") {
            Axis::Expert
        } else {
            Axis::Tensor
        }
    }
    fn group(self, l: &Layout) -> (u64, u64) {
        let s = l.strides();
        match self {
            Axis::Tensor => (s.tp, l.tp),
            Axis::Context => (s.cp, l.cp),
            // Expert groups are consecutive ranks of a stage, folded over the tensor-, context-
            // and data-parallel ranks (Megatron-Core's MoE parallel folding).
            Axis::Expert => (s.tp, l.ep),
            Axis::Pipeline => (s.pp, l.pp),
            Axis::Data => (s.dp, l.dp),
        }
    }
}

/// One kind of collective in a step, summed over the step (every stage of one model replica).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CollectiveRow {
    pub axis: Axis,
    pub kind: CommKind,
    pub group: u64,
    /// "nvlink", "pcie" or "network".
    pub link: &'static str,
    /// Calls per step and bytes of each call (the whole tensor reduced, gathered or sent).
    pub calls: u64,
    pub bytes_each: f64,
    /// Time on the wire, summed over the calls, whether or not compute hides it.
    pub ms: f64,
}

/// Where a step's time goes, in milliseconds on the critical path.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct StepParts {
    /// Forward and backward compute of every micro-batch on the slowest stage, tensor-parallel
    /// collectives included.
    pub compute_ms: f64,
    /// Forward passes repeated in backward (recomputation), within `compute_ms`.
    pub recompute_ms: f64,
    /// Time the pipeline fills and drains.
    pub bubble_ms: f64,
    /// Activations sent between stages on the critical path.
    pub pipeline_comm_ms: f64,
    /// Gradient synchronisation and ZeRO gathers not hidden behind compute.
    pub data_parallel_exposed_ms: f64,
    pub optimizer_ms: f64,
}

/// Memory per GPU in GB (1e9 bytes), for the most loaded stage.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MemoryGb {
    /// The parts, in GB (written at the top level of the JSON).
    #[serde(flatten)]
    pub parts: TrainMemory,
    pub total: f64,
    /// The GPU's memory in GB, and as its vendor states it (binary GB, GiB).
    pub capacity: f64,
    pub capacity_gib: f64,
    /// Capacity left over, GB, and whether the layout is within [`NEAR_LIMIT_FRACTION`] of
    /// the capacity (it fits, but allocator fragmentation or a longer sequence may tip it).
    pub headroom: f64,
    pub near_limit: bool,
    /// Micro-batches whose activations the first stage holds at once.
    pub in_flight_micro_batches: u64,
}

/// Share of a GPU's memory above which a layout that fits is marked close to the limit: the
/// count misses what a stack keeps beyond it (an H100's measured peaks of Hugging Face's eager
/// models were 0.95–1.05 times the count with [`wavecast_workload::train::ALLOCATOR_SLACK`],
/// `bench/results/h100_device.md`) and a longer sequence or another framework version moves it.
pub const NEAR_LIMIT_FRACTION: f64 = 0.9;

/// A predicted parallel training step (the `--json` of `predict --mode train` with a layout).
#[derive(Debug, Clone, Serialize)]
pub struct TrainReport {
    pub model: String,
    pub gpu: String,
    pub predictor: String,
    /// Compute format of the step, and why it is that one (given, or the default rule).
    pub dtype: wavecast_ir::DType,
    pub dtype_source: String,
    pub layout: Layout,
    pub layout_label: String,
    pub gpus: u64,
    pub nodes: u64,
    pub gpus_per_node: u64,
    pub global_batch: u64,
    pub seq: u64,
    pub micro_batches: u64,
    pub step_ms: f64,
    pub parts: StepParts,
    pub tokens_per_s: f64,
    pub tokens_per_s_per_gpu: f64,
    /// Model FLOPs per step (forward and backward, no recomputation) over all GPUs.
    pub model_flops: f64,
    /// Model FLOPs per second over the GPUs' dense peak at the compute format.
    pub mfu: f64,
    pub memory_gb: MemoryGb,
    pub collectives: Vec<CollectiveRow>,
    pub unpriced: Vec<String>,
    /// The power limit the step was priced under (`--power-limit`, W); absent at board power.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
    /// The training software the step was priced for (loss kernel, overlaps, what autograd
    /// keeps, optimizer kernel).
    pub stack: Stack,
}

/// A collective by (axis, kind, group size, bytes per call).
pub type CollectiveKey = (Axis, CommKind, u64, u64);
/// Calls, wire milliseconds and link name of one [`CollectiveKey`].
pub type CollectiveTally = (u64, f64, &'static str);

/// Per-micro-batch times of one GPU's graph, split into the pieces stages are built from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sections {
    /// Embedding (first stage) and head with loss (last stage), forward and backward, ms.
    pub prologue: (f64, f64),
    pub epilogue: (f64, f64),
    /// One layer, forward and backward, ms (tensor/context/expert collectives included).
    pub layer: (f64, f64),
    /// One layer's attention core forward (what selective recomputation repeats), ms.
    pub layer_core_fw: f64,
    /// One layer's forward linear layers, and its forward work that is neither a matmul, an
    /// attention kernel nor a collective (norms, element-wise ops), ms: what op-level selective
    /// recomputation repeats in part and in whole.
    pub layer_linear_fw: f64,
    pub layer_other_fw: f64,
    pub layer_params: f64,
    /// Of `layer_params`, the routed experts' (sharded over the expert-data-parallel GPUs).
    pub layer_expert_params: f64,
    pub prologue_params: f64,
    pub epilogue_params: f64,
    /// Collective calls of one micro-batch over all layers.
    pub collectives: BTreeMap<CollectiveKey, CollectiveTally>,
    pub unpriced: Vec<String>,
    /// FLOPs of the micro-batch graph (forward and backward, no recomputation).
    pub flops: f64,
    /// Collectives left to the schedule: axis → (bytes, calls) per micro-batch.
    pub deferred: BTreeMap<Axis, (f64, u64)>,
}

/// How [`sections`] treats a collective node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Route {
    /// Priced in place, on the critical path of its section (tensor, context, expert axes).
    Inline(Axis, Link),
    /// Not priced in place: its bytes are collected for the schedule to place (gradient
    /// synchronisation, activations between pipeline stages).
    Deferred(Axis),
    /// Priced, and pipelined with the layer's GEMMs in `chunks` pieces (tensor-parallel
    /// communication overlap): the first piece is exposed, the rest hides behind the layer's
    /// compute.
    Overlapped(Axis, Link, u32),
}

impl Sections {
    /// Forward work one layer repeats in backward under `recompute`, ms.
    pub fn recompute_per_layer(&self, recompute: Recompute) -> f64 {
        match recompute {
            Recompute::None => 0.0,
            Recompute::Selective => self.layer_core_fw,
            Recompute::Full => self.layer.0,
            Recompute::SelectiveOp => SELECTIVE_OP_MATMUL_SHARE * self.layer_linear_fw + self.layer_other_fw,
            Recompute::SelectiveLayer => SELECTIVE_LAYER_SHARE * self.layer.0,
        }
    }

    /// Parameters each stage holds: its layers, plus the embedding on the first and the head
    /// on the last.
    fn stage_params(&self, layers: &[u64]) -> Vec<f64> {
        let last = layers.len() - 1;
        layers
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let ends = if i == 0 { self.prologue_params } else { 0.0 }
                    + if i == last { self.epilogue_params } else { 0.0 };
                n as f64 * self.layer_params + ends
            })
            .collect()
    }
}

/// Which part of a graph a node belongs to: the nodes the transformer builder placed in the layer
/// block ([`Role::in_layers`]) are the layer block; its other scopes sit before or after it.
/// Graphs from elsewhere (NeuSight's) mark their layers by repeating a node a multiple of
/// `layers` times.
fn is_layer_node(n: &Node, layers: u64) -> bool {
    match n.role {
        Role::Layer | Role::Expert | Role::Routing | Role::OverContext => layers > 1,
        Role::Prologue | Role::Head => false,
        Role::Unscoped => layers > 1 && n.repeat >= layers && n.repeat.is_multiple_of(layers),
    }
}

/// Prices `graph` (one GPU, one micro-batch, forward then backward) into [`Sections`]; `axis`
/// names the parallel axis of each collective and `link` the wire it crosses.
pub fn sections(
    graph: &Graph,
    layers: u64,
    gpu: &Gpu,
    predictor: &dyn Predictor,
    comm: &CommModel,
    mut route: impl FnMut(&Node) -> Route,
) -> Result<Sections, SimError> {
    let mut s = Sections::default();
    let first_layer = graph
        .nodes
        .iter()
        .position(|n| n.phase == Phase::Forward && is_layer_node(n, layers));
    let last_layer_bw = graph
        .nodes
        .iter()
        .rposition(|n| n.phase == Phase::Backward && is_layer_node(n, layers));
    let scores = score_elements(graph, layers);
    let per_layer = layers.max(1) as f64;
    // Overlappable layer collectives (ring attention) hide behind the layer's compute.
    let mut hidden_comm = [0.0f64; 2];
    for (i, n) in graph.nodes.iter().enumerate() {
        let reps = n.repeat as f64;
        let bw = n.phase != Phase::Forward;
        let seconds = match &n.op {
            Op::Comm(c) => {
                let (axis, link, chunks) = match route(n) {
                    Route::Inline(axis, link) => (axis, link, None),
                    Route::Overlapped(axis, link, chunks) => (axis, link, Some(f64::from(chunks.max(1)))),
                    Route::Deferred(axis) => {
                        let d = s.deferred.entry(axis).or_default();
                        d.0 += c.bytes * reps;
                        d.1 += n.repeat;
                        continue;
                    }
                };
                let t = comm.seconds_over(c, &link);
                let row = s
                    .collectives
                    .entry((axis, c.kind, u64::from(c.group), c.bytes as u64))
                    .or_insert((0, 0.0, link.kind.as_str()));
                row.0 += n.repeat;
                row.1 += t * 1e3 * reps;
                if c.overlappable && is_layer_node(n, layers) {
                    hidden_comm[bw as usize] += t * 1e3 * reps / per_layer;
                    continue;
                }
                match chunks {
                    // The first chunk has no GEMM to hide behind yet; the others run under
                    // the GEMM chunks before them.
                    Some(k) if is_layer_node(n, layers) => {
                        hidden_comm[bw as usize] += t * 1e3 * reps * (1.0 - 1.0 / k) / per_layer;
                        t / k
                    }
                    _ => t,
                }
            }
            op => match predictor.predict(op, gpu, &Context::IN_MODEL) {
                // Math or bytes at 0 ms is a missing price, listed rather than summed.
                Estimate::Time(t) if t.seconds == 0.0 && (op.flops() > 0.0 || op.bytes() > 0.0) => {
                    s.unpriced.push(format!("{} ×{}: {} priced it at 0 ms", n.name, n.repeat, predictor.name()));
                    continue;
                }
                Estimate::Time(t) if t.seconds.is_finite() && t.seconds >= 0.0 => t.seconds,
                Estimate::Time(_) => {
                    return Err(SimError::Predict(PredictError::NonFinite {
                        name: predictor.name().into(),
                        op: op.describe(),
                    }))
                }
                Estimate::Unpriced(reason) => {
                    s.unpriced
                        .push(format!("{} ×{}: {reason}", n.name, n.repeat));
                    continue;
                }
            },
        };
        let ms = seconds * 1e3 * reps;
        if is_layer_node(n, layers) {
            let slot = if bw { &mut s.layer.1 } else { &mut s.layer.0 };
            *slot += ms / per_layer;
            if !bw && is_attention_core(&n.op, scores) {
                s.layer_core_fw += ms / per_layer;
            }
            if !bw {
                match &n.op {
                    Op::Gemm(g) if g.kind == GemmKind::Linear => s.layer_linear_fw += ms / per_layer,
                    Op::Gemm(_) | Op::Attention(_) | Op::Comm(_) => {}
                    _ => s.layer_other_fw += ms / per_layer,
                }
            }
            if !bw {
                s.layer_params += n.op.params() as f64 * reps / per_layer;
                if n.role == Role::Expert {
                    s.layer_expert_params += n.op.params() as f64 * reps / per_layer;
                }
            }
        } else {
            let before = if bw {
                last_layer_bw.is_some_and(|l| i > l)
            } else {
                first_layer.is_none_or(|f| i < f)
            };
            let section = if before {
                &mut s.prologue
            } else {
                &mut s.epilogue
            };
            if bw {
                section.1 += ms;
            } else {
                section.0 += ms;
                let p = n.op.params() as f64 * reps;
                if before {
                    s.prologue_params += p;
                } else {
                    s.epilogue_params += p;
                }
            }
        }
    }
    // Experts no token reached stay resident, and are trained, all the same.
    if layers > 1 {
        s.layer_params += graph.idle_params as f64 / per_layer;
        s.layer_expert_params += graph.idle_params as f64 / per_layer;
    }
    // What outlasts the layer's own work shows.
    s.layer.0 = s.layer.0.max(hidden_comm[0]);
    s.layer.1 = s.layer.1.max(hidden_comm[1]);
    Ok(s)
}

/// Elements of a layer's attention-score matrix (its softmax rows × columns), if it has one.
fn score_elements(graph: &Graph, layers: u64) -> Option<u64> {
    graph
        .nodes
        .iter()
        .filter(|n| n.phase == Phase::Forward && is_layer_node(n, layers))
        .find_map(|n| match &n.op {
            Op::Softmax(s) => Some(s.rows * s.cols),
            _ => None,
        })
}

/// The attention core that selective recomputation repeats: the eager score BMMs, softmax and
/// the element-wise ops over the score matrix. A fused (flash) kernel keeps no scores, so there
/// is nothing to recompute.
fn is_attention_core(op: &Op, scores: Option<u64>) -> bool {
    match op {
        Op::Softmax(_) => true,
        Op::Gemm(g) => g.kind == GemmKind::Bmm,
        Op::Elementwise(e) => scores == Some(e.elements),
        _ => false,
    }
}

/// Layers on each of `pp` stages: as even as possible, the remainder on the middle stages
/// (the first holds the embedding, the last the head).
pub fn stage_layers(layers: u64, pp: u64) -> Vec<u64> {
    let base = layers / pp;
    let extra = layers % pp;
    // Hand the spare layers to stages 1.. first, the ends last.
    let mut order: Vec<u64> = (1..pp.saturating_sub(1)).collect();
    order.extend([0, pp - 1]);
    let mut v = vec![base; pp as usize];
    for &s in order.iter().take(extra as usize) {
        v[s as usize] += 1;
    }
    v
}

/// Forward and backward time of each stage for one micro-batch.
pub fn stage_times(s: &Sections, layers: &[u64], recompute: Recompute) -> Vec<(f64, f64)> {
    let extra = s.recompute_per_layer(recompute);
    let last = layers.len() - 1;
    layers
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let n = n as f64;
            let mut f = n * s.layer.0;
            let mut b = n * (s.layer.1 + extra);
            if i == 0 {
                f += s.prologue.0;
                b += s.prologue.1;
            }
            if i == last {
                f += s.epilogue.0;
                b += s.epilogue.1;
            }
            (f, b)
        })
        .collect()
}

/// 1F1B pipeline time for `m` micro-batches over stages of the given (forward, backward) times
/// with `v` interleaved chunks: returns (busy time of the slowest stage, fill-and-drain bubble).
pub fn pipeline(stages: &[(f64, f64)], m: u64, v: u64) -> (f64, f64) {
    let per: Vec<f64> = stages.iter().map(|(f, b)| f + b).collect();
    let slowest = per.iter().copied().fold(0.0, f64::max);
    let through: f64 = per.iter().sum();
    (m as f64 * slowest, (through - slowest) / v.max(1) as f64)
}

/// Sends between stages on the critical path of 1F1B: one forward and one backward per
/// boundary while the pipeline fills and drains (p − 1 each), then one of each per further
/// micro-batch of the slowest stage; `t` is one send's time.
pub fn pipeline_p2p_ms(t: f64, m: u64, p: u64) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    2.0 * t * (m + p - 2) as f64
}

/// Exposed time of gradient buckets whose collective takes `bucket_ms(bytes)`, produced evenly
/// over a backward pass of `backward_ms` and sent one after another.
///
/// All buckets but the last are full, so the wire's queue has a closed form (a large model has
/// thousands of buckets, and the planner prices this for every layout): after the full buckets
/// the wire is free at the later of "the last full bucket was ready, plus one bucket" and "the
/// first was ready, plus all of them back to back"; the last bucket waits for the end of
/// backward and for the wire.
pub fn exposed_after_backward(
    total_bytes: f64,
    backward_ms: f64,
    bucket_ms: impl Fn(f64) -> f64,
) -> f64 {
    if total_bytes <= 0.0 {
        return 0.0;
    }
    let buckets = (total_bytes / BUCKET_BYTES).ceil().max(1.0);
    let full = buckets - 1.0;
    let last_bytes = total_bytes - full * BUCKET_BYTES;
    let mut wire_free = 0.0f64;
    if full > 0.0 {
        let interval = backward_ms * BUCKET_BYTES / total_bytes;
        let t = bucket_ms(BUCKET_BYTES);
        wire_free = (interval * full + t).max(interval + full * t);
    }
    wire_free = wire_free.max(backward_ms) + bucket_ms(last_bytes);
    (wire_free - backward_ms).max(0.0)
}

/// Where one layout's collectives run: which GPUs form each group, and over what wire.
#[derive(Clone, Copy)]
struct Fabric<'a> {
    layout: &'a Layout,
    topo: &'a Topology,
    gpu: &'a Gpu,
    comm: &'a CommModel,
}

impl Fabric<'_> {
    /// The link of the group along `axis` ([`CommModel::group_link`]: the node's own links, or
    /// hierarchically over the network once the group leaves the node or NVLink domain).
    fn link(&self, axis: Axis) -> Link {
        let (stride, size) = axis.group(self.layout);
        self.comm.group_link(self.gpu, stride, size, self.topo.gpus_per_node, self.topo.nic_gbps)
    }

    /// Milliseconds of one collective of `bytes` along `axis`.
    fn ms(&self, kind: CommKind, bytes: f64, axis: Axis) -> f64 {
        let (_, size) = axis.group(self.layout);
        let c = wavecast_ir::ops::Comm::new(kind, bytes, size as u32, wavecast_ir::DType::Bf16, true);
        self.comm.seconds_over(&c, &self.link(axis)) * 1e3
    }

    /// The report row of `calls` collectives of `bytes_each` that take `ms` on the wire in all.
    fn row(&self, axis: Axis, kind: CommKind, calls: u64, bytes_each: f64, ms: f64) -> CollectiveRow {
        let (_, group) = axis.group(self.layout);
        let link = self.link(axis).kind.as_str();
        CollectiveRow { axis, kind, group, link, calls, bytes_each, ms }
    }
}

/// Prices a parallel training step of `spec` on GPUs of kind `gpu`.
pub fn train_step(
    spec: &TransformerSpec,
    o: &TrainOptions,
    topo: &Topology,
    gpu: &Gpu,
    predictor: &dyn Predictor,
    comm: &CommModel,
    gpus: Option<u64>,
) -> Result<TrainReport, SimError> {
    o.validate(spec, gpus)?;
    let l = o.layout;
    gpu.check_links(l.gpus()).map_err(SimError::Invalid)?;
    if topo.gpus_per_node == 0 {
        return Err(SimError::Invalid("GPUs per node must be at least 1".into()));
    }
    // An NVLink domain wider than a node (GB200 NVL72: trays of 4 in a rack of 72) holds
    // tensor-parallel groups across its trays.
    let domain = topo.gpus_per_node.max(gpu.interconnect.nvlink_domain);
    if l.tp > domain {
        return Err(SimError::Invalid(format!("tensor parallelism {} exceeds the {domain} GPUs of a node's NVLink domain; tensor-parallel groups stay inside it", l.tp)));
    }
    gpu.check_dtype(o.dtype)
        .map_err(|e| SimError::Predict(wavecast_predict::PredictError::Unsupported(e)))?;
    let kernels = crate::TrainingKernels::new(predictor);
    // The limit goes outermost, so that the training kernels' measured floors slow with the clock too.
    let limited = wavecast_predict::power::limited(&kernels, gpu, o.power_limit_w).map_err(SimError::Invalid)?;
    let predictor: &dyn Predictor = match &limited {
        Some(p) => p,
        None => &kernels,
    };
    let graph = o.micro_batch_graph(spec)?;
    graph
        .check_scale()
        .map_err(wavecast_workload::WorkloadError::from)?;
    let sec = price_micro_batch(&graph, spec, &l, o.stack, topo, gpu, predictor, comm)?;
    assemble(spec, o, topo, gpu, predictor, comm, &sec, &mut OptimizerTimes::default())
}

/// Optimizer-step milliseconds by the parameters one GPU updates, for one run's options, GPU and
/// predictor (one plan, or one step): its layouts share a handful of shard sizes, and within
/// the run the update's price depends on nothing else.
#[derive(Default)]
pub(crate) struct OptimizerTimes(std::collections::HashMap<u64, f64>);

/// Prices one GPU's micro-batch graph of a transformer built for layout `l`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn price_micro_batch(
    graph: &Graph,
    spec: &TransformerSpec,
    l: &Layout,
    stack: Stack,
    topo: &Topology,
    gpu: &Gpu,
    predictor: &dyn Predictor,
    comm: &CommModel,
) -> Result<Sections, SimError> {
    let fabric = Fabric { layout: l, topo, gpu, comm };
    let mut sec = sections(graph, spec.layers, gpu, predictor, comm, |n| {
        let axis = Axis::of_node(&n.name);
        match &n.op {
            Op::Comm(c) if stack.tp_comm_overlap && axis == Axis::Tensor && l.tp > 1 && matches!(c.kind, CommKind::AllGather | CommKind::ReduceScatter) => {
                Route::Overlapped(axis, fabric.link(axis), u32::try_from(l.tp).unwrap_or(u32::MAX))
            }
            _ => Route::Inline(axis, fabric.link(axis)),
        }
    })?;
    sec.flops = graph
        .nodes
        .iter()
        .filter(|n| !matches!(n.op, Op::Comm(_)))
        .map(|n| n.op.flops() * n.repeat as f64)
        .sum();
    Ok(sec)
}

/// Builds the report from priced sections: schedule, data-parallel traffic, optimizer, memory.
#[allow(clippy::too_many_arguments)]
pub(crate) fn assemble(
    spec: &TransformerSpec,
    o: &TrainOptions,
    topo: &Topology,
    gpu: &Gpu,
    predictor: &dyn Predictor,
    comm: &CommModel,
    sec: &Sections,
    optimizer_times: &mut OptimizerTimes,
) -> Result<TrainReport, SimError> {
    let l = o.layout;
    let fabric = Fabric { layout: &l, topo, gpu, comm };
    let m = o.micro_batches();
    let layers = stage_layers(spec.layers, l.pp);
    let stage_params = sec.stage_params(&layers);
    // Memory needs no times: a layout that does not fit is turned away before they are summed
    // (most of what `plan train` prices does not fit).
    let memory = memory(spec, o, sec, &layers, &stage_params, gpu);
    check_memory(&memory, gpu, &l)?;
    let mut stages = stage_times(sec, &layers, l.recompute);
    let d = o.storage_dtype().size_bytes() as f64;
    let mut collectives = collective_rows(sec, m);

    // ZeRO-3: every layer's weights are gathered before its forward and again before its
    // backward, and its gradients reduce-scattered after; prefetching hides what the layer's
    // compute covers.
    if l.zero == 3 && l.dp > 1 {
        let bytes = sec.layer_params * d;
        let ag = fabric.ms(CommKind::AllGather, bytes, Axis::Data);
        let rs = fabric.ms(CommKind::ReduceScatter, bytes, Axis::Data);
        for (st, &n) in stages.iter_mut().zip(&layers) {
            st.0 += n as f64 * (ag - sec.layer.0).max(0.0);
            st.1 += n as f64 * (ag + rs - sec.layer.1).max(0.0);
        }
        // Nothing runs before the first layer's gather or after the last reduce-scatter.
        if let Some(first) = stages.first_mut() {
            first.0 += ag;
            first.1 += rs;
        }
        let calls = spec.layers * m;
        collectives.push(fabric.row(Axis::Data, CommKind::AllGather, 2 * calls, bytes, 2.0 * calls as f64 * ag));
        collectives.push(fabric.row(Axis::Data, CommKind::ReduceScatter, calls, bytes, calls as f64 * rs));
        // The embedding and the head are sharded too, gathered once per micro-batch (the root
        // unit stays gathered through backward). The embedding's gather opens the forward and its
        // reduce-scatter closes the backward with nothing to hide under; the head's hide under
        // the last layer's forward and the first layer's backward.
        let ends = [(sec.prologue_params, true), (sec.epilogue_params, false)];
        for (params, opens) in ends.into_iter().filter(|(p, _)| *p > 0.0) {
            let bytes = params * d;
            let ag = fabric.ms(CommKind::AllGather, bytes, Axis::Data);
            let rs = fabric.ms(CommKind::ReduceScatter, bytes, Axis::Data);
            let stage = if opens { stages.first_mut() } else { stages.last_mut() };
            if let Some(st) = stage {
                let (cover_fw, cover_bw) = if opens { (0.0, 0.0) } else { sec.layer };
                st.0 += (ag - cover_fw).max(0.0);
                st.1 += (rs - cover_bw).max(0.0);
            }
            collectives.push(fabric.row(Axis::Data, CommKind::AllGather, m, bytes, m as f64 * ag));
            collectives.push(fabric.row(Axis::Data, CommKind::ReduceScatter, m, bytes, m as f64 * rs));
        }
    }
    let (busy, bubble) = pipeline(&stages, m, l.interleave);
    let slowest_layers = layers.iter().copied().max().unwrap_or(0) as f64;
    let recompute_per_mb = sec.recompute_per_layer(l.recompute) * slowest_layers;

    // Activations between stages: one send forward and one back per micro-batch and boundary;
    // fill and drain put p − 1 of each on the critical path, the steady state one per micro-batch.
    let mut pipeline_comm = 0.0;
    if l.pp > 1 {
        let tokens = (l.micro_batch * o.seq / l.cp) as f64;
        let share = if l.sequence_parallel && l.tp > 1 { l.tp as f64 } else { 1.0 };
        let bytes = tokens * spec.hidden as f64 * d / share;
        let t = fabric.ms(CommKind::SendRecv, bytes, Axis::Pipeline);
        pipeline_comm = pipeline_p2p_ms(t, m, l.pp);
        let calls = 2 * m * (l.pp - 1) * l.interleave;
        collectives.push(fabric.row(Axis::Pipeline, CommKind::SendRecv, calls, bytes, calls as f64 * t));
    }

    // Gradient synchronisation of the first stage (the last to finish backward in 1F1B).
    let grad_bytes = stage_params[0] * d;
    let mut dp_exposed = 0.0;
    if l.dp > 1 {
        if l.zero < 3 {
            let kind = if l.zero == 0 { CommKind::AllReduce } else { CommKind::ReduceScatter };
            dp_exposed += if o.stack.grad_reduce_overlap {
                exposed_after_backward(grad_bytes, stages[0].1, |b| fabric.ms(kind, b, Axis::Data))
            } else {
                fabric.ms(kind, grad_bytes, Axis::Data)
            };
            let buckets = (grad_bytes / BUCKET_BYTES).ceil().max(1.0) as u64;
            let whole = fabric.ms(kind, grad_bytes, Axis::Data);
            collectives.push(fabric.row(Axis::Data, kind, buckets, grad_bytes / buckets as f64, whole));
        }
        if l.zero == 1 || l.zero == 2 {
            // Updated weight shards are gathered after the optimizer step, before the next one;
            // a stack that overlaps the gather runs it under the first micro-batch's forward.
            let ag = fabric.ms(CommKind::AllGather, grad_bytes, Axis::Data);
            let cover = if o.stack.param_gather_overlap { stages[0].0 } else { 0.0 };
            dp_exposed += (ag - cover).max(0.0);
            collectives.push(fabric.row(Axis::Data, CommKind::AllGather, 1, grad_bytes, ag));
        }
    }

    // Each GPU updates its shard: dense parameters split over dp, routed experts over the
    // GPUs that hold the same experts.
    let sharded = |sharers: u64| if l.zero >= 1 { sharers } else { 1 } as f64;
    let optimizer_params = layers
        .iter()
        .zip(&stage_params)
        .map(|(&n, &params)| {
            let experts = n as f64 * sec.layer_expert_params;
            (params - experts) / sharded(l.dp) + experts / sharded(l.expert_data_parallel())
        })
        .fold(0.0, f64::max)
        .ceil() as u64;
    let optimizer_ms = match optimizer_times.0.get(&optimizer_params) {
        Some(&ms) => ms,
        None => {
            let ms = optimizer_ms(o, optimizer_params, gpu, predictor)?;
            optimizer_times.0.insert(optimizer_params, ms);
            ms
        }
    };
    let step_ms = busy + bubble + pipeline_comm + dp_exposed + optimizer_ms;

    // The graph is one tensor- and context-parallel share of the whole model.
    let model_flops = sec.flops * (l.tp * l.cp) as f64 * (m * l.dp) as f64;
    let peak = gpu.peak_flops(OpClass::Gemm, o.dtype);
    let seconds = step_ms / 1e3;
    let tokens = (o.global_batch * o.seq) as f64;
    let gpus = l.gpus();
    Ok(TrainReport {
        model: spec.name.clone(),
        gpu: gpu.id.clone(),
        predictor: predictor.name().to_string(),
        dtype: o.dtype,
        dtype_source: "given".into(),
        layout: l,
        layout_label: l.label(),
        gpus,
        nodes: gpus.div_ceil(topo.gpus_per_node),
        gpus_per_node: topo.gpus_per_node,
        global_batch: o.global_batch,
        seq: o.seq,
        micro_batches: m,
        step_ms,
        parts: StepParts {
            compute_ms: busy,
            recompute_ms: m as f64 * recompute_per_mb,
            bubble_ms: bubble,
            pipeline_comm_ms: pipeline_comm,
            data_parallel_exposed_ms: dp_exposed,
            optimizer_ms,
        },
        tokens_per_s: tokens / seconds,
        tokens_per_s_per_gpu: tokens / seconds / gpus as f64,
        model_flops,
        mfu: model_flops / seconds / (gpus as f64 * peak),
        memory_gb: memory,
        collectives,
        unpriced: sec.unpriced.clone(),
        power_limit_w: o.power_limit_w,
        stack: o.stack,
    })
}

fn collective_rows(sec: &Sections, m: u64) -> Vec<CollectiveRow> {
    sec.collectives
        .iter()
        .map(
            |(&(axis, kind, group, bytes), &(calls, ms, link))| CollectiveRow {
                axis,
                kind,
                group,
                link,
                calls: calls * m,
                bytes_each: bytes as f64,
                ms: ms * m as f64,
            },
        )
        .collect()
}

fn optimizer_ms(
    o: &TrainOptions,
    params: u64,
    gpu: &Gpu,
    predictor: &dyn Predictor,
) -> Result<f64, SimError> {
    if params == 0 {
        return Ok(0.0);
    }
    let op = Op::Optimizer(Optimizer {
        kind: o.optimizer,
        params,
        state_dtype: wavecast_ir::DType::Fp32,
        implementation: o.stack.optimizer,
    });
    let clip: f64 = wavecast_ir::grad_clip_ops(params)
        .iter()
        .map(|op| match predictor.predict(op, gpu, &Context::IN_MODEL) {
            Estimate::Time(t) if t.seconds.is_finite() && t.seconds >= 0.0 => t.seconds,
            _ => wavecast_predict::roofline::roofline_seconds(op, gpu),
        })
        .sum::<f64>()
        * 1e3;
    match predictor.predict(&op, gpu, &Context::IN_MODEL) {
        Estimate::Time(t) if t.seconds.is_finite() && t.seconds >= 0.0 => Ok(t.seconds * 1e3 + clip),
        Estimate::Time(_) => Err(SimError::Invalid(format!(
            "predictor '{}' gave no finite optimizer time",
            predictor.name()
        ))),
        // A predictor without an optimizer model: the update streams its states once.
        Estimate::Unpriced(_) => Ok(wavecast_predict::roofline::roofline_seconds(&op, gpu) * 1e3 + clip),
    }
}


/// Memory of the most loaded stage: model states of its parameters (ZeRO-sharded), the
/// activations of the micro-batches 1F1B keeps in flight there, and buffers.
fn memory(
    spec: &TransformerSpec,
    o: &TrainOptions,
    sec: &Sections,
    layers: &[u64],
    stage_params: &[f64],
    gpu: &Gpu,
) -> MemoryGb {
    let l = o.layout;
    let m = o.micro_batches();
    let per_layer = o.layer_activation_bytes(spec);
    let d = o.storage_dtype().size_bytes() as f64;
    let tokens = (l.micro_batch * o.seq / l.cp) as f64;
    let mut worst = TrainMemory::default();
    let mut worst_in_flight = 1;
    for (i, (&n, &params)) in layers.iter().zip(stage_params).enumerate() {
        // Stage i of p starts p − i micro-batches before its first backward (1F1B); interleaving
        // adds a fraction of a round (Narayanan et al. 2021, §2.2.2).
        let in_flight = m.min(l.pp - i as u64);
        let interleave = if l.interleave > 1 {
            1.0 + (l.pp - 1) as f64 / (l.pp * l.interleave) as f64
        } else {
            1.0
        };
        // Megatron's distributed optimizer and FSDP shard over the context-parallel ranks too:
        // they hold the same weights and sum the same gradients. Routed experts are shared by
        // fewer GPUs (the expert-data-parallel ones), so their states shard fewer ways.
        let experts = n as f64 * sec.layer_expert_params;
        let state = |params: f64, sharers: u64| model_state_bytes(params, o.storage_dtype(), o.optimizer, l.zero, sharers);
        let mut mem = state(params - experts, l.dp * l.cp) + state(experts, l.expert_data_parallel());
        mem.activations = per_layer * n as f64 * in_flight as f64 * interleave;
        if i == 0 {
            mem.activations += tokens * spec.hidden as f64 * d * in_flight as f64;
        }
        if i + 1 == layers.len() {
            // The loss of one micro-batch when backward starts: the vocabulary-wide tensors
            // the stack's loss kernel keeps (logits, FP32 work, gradient).
            mem.activations += tokens * spec.vocab.div_ceil(l.tp) as f64 * o.stack.loss.bytes_per_token_entry(d);
        }
        let gathered = if l.zero == 3 {
            2.0 * sec.layer_params * d
        } else {
            0.0
        };
        let buckets = if l.dp > 1 { 2.0 * BUCKET_BYTES } else { 0.0 };
        mem.buffers = gathered + buckets;
        mem.buffers += ALLOCATOR_SLACK * mem.total() + RUNTIME_OVERHEAD_BYTES;
        if mem.total() > worst.total() {
            worst = mem;
            worst_in_flight = in_flight;
        }
    }
    let total = worst.total() / 1e9;
    // The catalog's capacities are binary (an "80 GB" H100 holds 80 GiB); the report is in GB.
    let capacity = gpu.memory_bytes() / 1e9;
    MemoryGb {
        parts: worst.in_units(1e9),
        total,
        capacity,
        capacity_gib: gpu.memory_gb,
        headroom: capacity - total,
        near_limit: total > NEAR_LIMIT_FRACTION * capacity,
        in_flight_micro_batches: worst_in_flight,
    }
}

/// Errors when the most loaded GPU needs more than it has ([`MemoryShort`]).
fn check_memory(m: &MemoryGb, gpu: &Gpu, l: &Layout) -> Result<(), SimError> {
    if m.total <= m.capacity {
        return Ok(());
    }
    Err(SimError::OutOfMemory(Box::new(MemoryShort { layout: *l, memory: m.clone(), gpu: gpu.id.clone() })))
}

/// A training layout whose most loaded GPU needs more memory than it has. Its message says by
/// how much and which knob attacks the largest part; it is written only when shown, since
/// `plan train` turns away most of the layouts it prices for this and counts them under
/// [`MemoryShort::HEAD`] alone.
#[derive(Debug)]
pub struct MemoryShort {
    layout: Layout,
    memory: MemoryGb,
    gpu: String,
}

impl MemoryShort {
    /// What the message says before its figures.
    pub const HEAD: &str = "does not fit in memory";

    fn remedy(&self) -> &'static str {
        let (p, l) = (&self.memory.parts, &self.layout);
        let states = p.gradients + p.optimizer_states + p.master_weights;
        if p.activations >= states.max(p.weights) {
            match l.recompute {
                Recompute::None => "recompute activations (--recompute full or selective-op), a smaller --micro-batch, or more --tp/--pp",
                Recompute::Full => "a smaller --micro-batch, a shorter sequence, or more --tp/--pp/--cp",
                Recompute::Selective | Recompute::SelectiveOp | Recompute::SelectiveLayer => "full recomputation (--recompute full), a smaller --micro-batch, or more --tp/--pp",
            }
        } else if l.zero < 3 && l.dp > 1 {
            "a higher ZeRO stage (--zero) to shard model states over the data-parallel GPUs, or more --tp/--pp"
        } else {
            "more --tp/--pp (or more data-parallel GPUs with --zero), or GPUs with more memory"
        }
    }
}

impl std::fmt::Display for MemoryShort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (m, p) = (&self.memory, &self.memory.parts);
        write!(
            f,
            "{}: {} needs {:.1} GB per GPU (weights {:.1}, gradients {:.1}, optimizer states {:.1}, master weights {:.1}, activations {:.1}, buffers {:.1}) but {} has {:.1} GB, {:.1} GB short; try {}",
            MemoryShort::HEAD,
            self.layout.label(),
            m.total,
            p.weights,
            p.gradients,
            p.optimizer_states,
            p.master_weights,
            p.activations,
            p.buffers,
            self.gpu,
            m.capacity,
            m.total - m.capacity,
            self.remedy()
        )
    }
}

/// A measured multi-GPU run's layout, as NeuSight's workload names give it (`dp4`, `tp4`,
/// `pp4_1`): the graph is already one GPU's share, with its collectives in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphLayout {
    pub dp: u64,
    pub pp: u64,
    pub micro_batches: u64,
}

/// Forward and backward time of one GPU's graph under `layout` (no optimizer step, as NeuSight
/// timed it): the same stage split, 1F1B schedule and bucketed gradient overlap as
/// [`train_step`]. Blocking collectives (tensor parallelism) are priced in place; gradient
/// all-reduces (`overlappable`) and sends between stages are placed by the schedule.
pub fn graph_step(
    graph: &Graph,
    layers: u64,
    layout: GraphLayout,
    gpu: &Gpu,
    predictor: &dyn Predictor,
    comm: &CommModel,
) -> Result<(f64, Vec<String>), SimError> {
    let sec = sections(graph, layers, gpu, predictor, comm, |n| match &n.op {
        Op::Comm(c) if c.kind == CommKind::SendRecv => Route::Deferred(Axis::Pipeline),
        Op::Comm(c) if c.overlappable => Route::Deferred(Axis::Data),
        Op::Comm(c) => Route::Inline(Axis::Tensor, comm.link(gpu, c.group)),
        _ => Route::Inline(Axis::Tensor, comm.link(gpu, 1)),
    })?;
    let pp = layout.pp.max(1);
    let m = layout.micro_batches.max(1);
    let stages = stage_times(&sec, &stage_layers(layers.max(pp), pp), Recompute::None);
    let (busy, bubble) = pipeline(&stages, m, 1);
    let mut ms = busy + bubble;
    if let Some(&(bytes, calls)) = sec.deferred.get(&Axis::Pipeline) {
        let each = bytes / calls.max(1) as f64;
        let c = wavecast_ir::ops::Comm::new(CommKind::SendRecv, each, pp as u32, wavecast_ir::DType::Fp32, false);
        ms += pipeline_p2p_ms(comm.seconds(&c, gpu) * 1e3, m, pp);
    }
    if let Some(&(bytes, _)) = sec.deferred.get(&Axis::Data) {
        let dp = layout.dp.max(2) as u32;
        let link = comm.link(gpu, dp);
        ms += exposed_after_backward(bytes, stages[0].1, |b| {
            let c = wavecast_ir::ops::Comm::new(CommKind::AllReduce, b, dp, wavecast_ir::DType::Fp32, true);
            comm.seconds_over(&c, &link) * 1e3
        });
    }
    Ok((ms, sec.unpriced))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layer block is the nodes the builder placed in it, whatever their names; a graph
    /// without roles falls back to repeat counts.
    #[test]
    fn layer_nodes_follow_roles_then_repeats() {
        use wavecast_ir::ops::{Elementwise, EwKind};
        let ew = Op::Elementwise(Elementwise::new(EwKind::Add, 1024, 2, wavecast_ir::DType::Bf16));
        let node = |name: &str, role: Role, repeat: u64| Node { name: name.into(), op: ew.clone(), phase: Phase::Forward, repeat, role };
        assert!(is_layer_node(&node("embed.misleading", Role::Layer, 1), 4));
        assert!(is_layer_node(&node("head.misleading", Role::Expert, 3), 4));
        assert!(!is_layer_node(&node("layer.misleading", Role::Head, 8), 4));
        assert!(!is_layer_node(&node("layer.misleading", Role::Prologue, 8), 4));
        assert!(is_layer_node(&node("neusight.fw0", Role::Unscoped, 8), 4));
        assert!(!is_layer_node(&node("neusight.fw1", Role::Unscoped, 6), 4));
        assert!(!is_layer_node(&node("layer.one", Role::Layer, 1), 1), "one layer is no block");
    }

    #[test]
    fn torchtitan_selective_policies_repeat_their_share_of_the_forward() {
        let s = Sections { layer: (20.0, 40.0), layer_linear_fw: 10.0, layer_other_fw: 2.0, layer_core_fw: 1.0, ..Sections::default() };
        assert_eq!(s.recompute_per_layer(Recompute::SelectiveOp), 0.5 * 10.0 + 2.0);
        assert_eq!(s.recompute_per_layer(Recompute::SelectiveLayer), 0.5 * 20.0);
        assert_eq!(s.recompute_per_layer(Recompute::Selective), 1.0);
        assert_eq!(s.recompute_per_layer(Recompute::Full), 20.0);
    }

    /// Megatron-Bridge's Qwen3-235B on 64 B200s (tp1·pp8·dp8·ep8): with pipeline stages
    /// outermost the expert group is the eight GPUs of one node, so its all-to-all runs over
    /// NVLink; the pipeline's sends cross the network. Folded over TP (tp2·dp32·ep64) the
    /// expert group is 64 consecutive ranks.
    #[test]
    fn expert_groups_fold_inside_a_stage_and_pipelines_cross_nodes() {
        let l = Layout { dp: 8, pp: 8, ep: 8, ..Layout::default() };
        let (stride, size) = Axis::Expert.group(&l);
        assert_eq!((stride, size), (1, 8));
        assert!(!Layout::spans_nodes(stride, size, 8));
        let (stride, size) = Axis::Pipeline.group(&l);
        assert!(Layout::spans_nodes(stride, size, 8));
        let folded = Layout { tp: 2, dp: 32, ep: 64, ..Layout::default() };
        assert_eq!(Axis::Expert.group(&folded), (1, 64));
    }

    #[test]
    fn layers_split_evenly_with_spares_in_the_middle() {
        assert_eq!(stage_layers(36, 4), vec![9, 9, 9, 9]);
        assert_eq!(stage_layers(10, 4), vec![2, 3, 3, 2]);
        assert_eq!(stage_layers(5, 2), vec![3, 2]);
        assert_eq!(stage_layers(7, 1), vec![7]);
    }

    #[test]
    fn equal_stages_give_the_textbook_bubble() {
        // p stages of (f, b) = (1, 2), m micro-batches: bubble (p − 1)/m of the ideal m·(f+b).
        let (p, m) = (4u64, 8u64);
        let stages = vec![(1.0, 2.0); p as usize];
        let (busy, bubble) = pipeline(&stages, m, 1);
        assert_eq!(busy, 24.0);
        assert!((bubble / busy - (p - 1) as f64 / m as f64).abs() < 1e-12);
        let (_, interleaved) = pipeline(&stages, m, 2);
        assert!((interleaved / busy - (p - 1) as f64 / (m * 2) as f64).abs() < 1e-12);
        // One micro-batch: the stages run one after another.
        let (busy, bubble) = pipeline(&[(1.0, 2.0), (3.0, 4.0)], 1, 1);
        assert_eq!(busy + bubble, 10.0);
    }

    #[test]
    fn buckets_hide_behind_backward_until_the_wire_is_slower() {
        // 100 MiB in four buckets of 1 ms each over a 10 ms backward: only the last shows.
        let bytes = 4.0 * BUCKET_BYTES;
        let exposed = exposed_after_backward(bytes, 10.0, |_| 1.0);
        assert!((exposed - 1.0).abs() < 1e-12, "{exposed}");
        // A wire slower than compute exposes nearly all of it.
        let slow = exposed_after_backward(bytes, 1.0, |_| 5.0);
        assert!((slow - (0.25 + 20.0 - 1.0)).abs() < 1e-12, "{slow}");
        assert_eq!(exposed_after_backward(0.0, 1.0, |_| 5.0), 0.0);
    }

    /// The bucket queue simulated one bucket at a time, as the closed form must reproduce.
    fn queue_bucket_by_bucket(total: f64, backward: f64, bucket_ms: impl Fn(f64) -> f64) -> f64 {
        let buckets = (total / BUCKET_BYTES).ceil().max(1.0) as u64;
        let (mut wire_free, mut sent) = (0.0f64, 0.0);
        for _ in 0..buckets {
            let bytes = (total - sent).min(BUCKET_BYTES);
            sent += bytes;
            wire_free = wire_free.max(backward * sent / total) + bucket_ms(bytes);
        }
        (wire_free - backward).max(0.0)
    }

    proptest::proptest! {
        #[test]
        fn closed_form_bucket_queue_matches_the_queue(
            buckets in 0.01f64..300.0,
            backward in 0.0f64..500.0,
            ms_per_mib in 0.0f64..2.0,
            latency in 0.0f64..0.05,
        ) {
            let total = buckets * BUCKET_BYTES;
            let cost = |b: f64| latency + ms_per_mib * b / (1024.0 * 1024.0);
            let closed = exposed_after_backward(total, backward, cost);
            let queued = queue_bucket_by_bucket(total, backward, cost);
            proptest::prop_assert!((closed - queued).abs() <= 1e-9 * queued.max(1.0), "{closed} vs {queued}");
        }
    }
}
