//! The time of one engine iteration from the per-op models. An iteration's work splits into
//! parts that depend on different things: the layers' GEMMs, norms and collectives on the
//! tokens in the batch; the routed experts (one fused MoE kernel per layer) on the tokens of
//! every attention-data-parallel rank; decode attention on the sequences and their cache
//! lengths; each prompt chunk's attention on its length and what precedes it; the LM head on
//! the sequences that sample. Each part is priced once on a grid of sizes by the operator
//! graph the transformer builder emits for that size, and interpolated in between, so a
//! simulation of thousands of iterations costs table lookups.

use super::engine::{Batch, StepCost};
use super::Backend;
use crate::SimError;
use wavecast_data::{Precision, Shape};
use wavecast_gpu::Gpu;
use wavecast_ir::{DType, Graph, Node, Op, Quant, Role};
use wavecast_predict::ladder::LadderOps;
use wavecast_predict::{Context, Estimate, Predictor};
use wavecast_workload::transformer::{build, AttentionImpl, BuildOptions, Head, Mode};
use wavecast_workload::TransformerSpec;

/// How one serving worker splits the model: `pp` pipeline stages of `tp × attention_dp` GPUs
/// each (= `moe_tp × ep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Parallel {
    pub tp: u64,
    pub attention_dp: u64,
    pub moe_tp: u64,
    pub ep: u64,
    pub pp: u64,
}

impl Parallel {
    pub fn tp(tp: u64) -> Parallel {
        Parallel { tp, attention_dp: 1, moe_tp: tp, ep: 1, pp: 1 }
    }

    /// GPUs of one pipeline stage.
    pub fn stage_gpus(&self) -> u64 {
        self.tp * self.attention_dp
    }

    /// GPUs of the whole worker.
    pub fn gpus(&self) -> u64 {
        self.stage_gpus() * self.pp
    }
}

/// Number formats of a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Formats {
    /// Activations (BF16 or FP16).
    pub dtype: DType,
    /// Attention and dense-MLP GEMM weights, when quantized.
    pub quant: Option<Quant>,
    /// Routed-expert weights, when quantized.
    pub moe_quant: Option<Quant>,
    /// KV cache.
    pub kv: DType,
}

/// A piecewise-linear function known at increasing points.
#[derive(Debug, Clone)]
struct Curve {
    xs: Vec<f64>,
    ys: Vec<f64>,
}

/// Where `x` falls among `xs`: the segment's left index and the fraction into it (clamped at
/// the ends, extrapolated linearly past the last point).
fn locate(xs: &[f64], x: f64) -> (usize, f64) {
    if xs.len() < 2 {
        return (0, 0.0);
    }
    let i = xs.partition_point(|&p| p <= x).clamp(1, xs.len() - 1) - 1;
    let f = (x - xs[i]) / (xs[i + 1] - xs[i]);
    (i, f.max(0.0))
}

impl Curve {
    /// Never negative, even extrapolated past a falling last segment.
    fn at(&self, x: f64) -> f64 {
        let (i, f) = locate(&self.xs, x);
        let y = match self.ys.get(i + 1) {
            Some(y1) => self.ys[i] + (y1 - self.ys[i]) * f,
            None => self.ys[i],
        };
        y.max(0.0)
    }
}

/// A function of two sizes known on a grid, interpolated bilinearly.
#[derive(Debug, Clone)]
struct Grid {
    xs: Vec<f64>,
    ys: Vec<f64>,
    /// values[i][j] at (xs[i], ys[j]).
    values: Vec<Vec<f64>>,
}

impl Grid {
    fn at(&self, x: f64, y: f64) -> f64 {
        let (i, fx) = locate(&self.xs, x);
        self.at_located(i, fx, y)
    }

    /// The grid along y at x located (`locate(&self.xs, x)`), for increasing y.
    fn along_y(&self, i: usize, fx: f64) -> AlongY<'_> {
        let last = self.xs.len() - 1;
        AlongY { ys: &self.ys, lo: &self.values[i.min(last)], hi: &self.values[(i + 1).min(last)], fx, j: 0 }
    }

    /// [`Grid::at`] with x already located (`locate(&self.xs, x)`).
    fn at_located(&self, i: usize, fx: f64, y: f64) -> f64 {
        let (j, fy) = locate(&self.ys, y);
        let v = |a: usize, b: usize| self.values[a.min(self.xs.len() - 1)][b.min(self.ys.len() - 1)];
        let (i1, j1) = ((i + 1).min(self.xs.len() - 1), (j + 1).min(self.ys.len() - 1));
        let lo = v(i, j) + (v(i, j1) - v(i, j)) * fy;
        let hi = v(i1, j) + (v(i1, j1) - v(i1, j)) * fy;
        (lo + (hi - lo) * fx).max(0.0)
    }
}

/// A grid read at one x for ever larger y (a decode run's growing mean context): the same
/// numbers as [`Grid::at_located`], with y's segment found by stepping on from the last one
/// instead of searching the axis at every iteration.
struct AlongY<'a> {
    ys: &'a [f64],
    /// The grid's rows either side of x.
    lo: &'a [f64],
    hi: &'a [f64],
    fx: f64,
    /// y's segment: what [`locate`] would say for the last y asked (never further back).
    j: usize,
}

impl AlongY<'_> {
    /// The grid at (x, `y`); `y` no smaller than the last asked.
    fn at(&mut self, y: f64) -> f64 {
        let n = self.ys.len();
        if n < 2 {
            let (lo, hi) = (self.lo[0], self.hi[0]);
            return (lo + (hi - lo) * self.fx).max(0.0);
        }
        while self.j + 2 < n && self.ys[self.j + 1] <= y {
            self.j += 1;
        }
        let j = self.j;
        let fy = ((y - self.ys[j]) / (self.ys[j + 1] - self.ys[j])).max(0.0);
        let lo = self.lo[j] + (self.lo[j + 1] - self.lo[j]) * fy;
        let hi = self.hi[j] + (self.hi[j + 1] - self.hi[j]) * fy;
        (lo + (hi - lo) * self.fx).max(0.0)
    }
}

/// 1, 2, 3, 4, 6, 8, 12, 16, … up to and including `max`.
fn sizes(max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut p = 1u64;
    while p < max {
        v.push(p);
        if p >= 2 && p + p / 2 < max {
            v.push(p + p / 2);
        }
        p *= 2;
    }
    v.push(max.max(1));
    v.dedup();
    v
}

/// 1, 16, 64, 256, 1024, … (×2 from 1024) up to and including `max` tokens of context.
fn contexts(max: u64) -> Vec<u64> {
    let mut v = vec![1u64];
    let mut p = 16u64;
    while p < max {
        v.push(p);
        p = if p < 1024 { p * 4 } else { p * 2 };
    }
    v.push(max.max(1));
    v.dedup();
    v
}

/// What the iteration model needs to know about the engine's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Most tokens per iteration (prompt chunks plus decoding sequences) on the whole worker.
    pub max_tokens: u64,
    /// Most sequences decoding at once on the whole worker.
    pub max_seqs: u64,
    /// Longest context any sequence reaches.
    pub max_context: u64,
    /// The prompt chunk the engine sizes its buffers for, on the whole worker (SGLang's reserve).
    pub chunk_tokens: u64,
}

/// What prices an iteration's ops: a predictor for the graph's nodes and, when that predictor
/// is the price ladder (serving's default), the ladder itself, which prices the routed experts
/// as the fused MoE kernel its measurements time. Other predictors price the experts' nodes.
#[derive(Clone, Copy)]
pub struct Pricing<'a> {
    pub ops: &'a dyn Predictor,
    pub ladder: Option<&'a LadderOps>,
    /// Parts already priced by these same per-op models, shared between deployments.
    pub cache: Option<&'a PriceCache>,
}

/// Iteration parts already priced, by everything their price depends on (model, GPU, formats,
/// parallel layout, the pass's sizes and the part). Deployments that differ only in their
/// engine, limits or request lengths price many of the same graphs: an evaluation over many
/// runs keeps one cache per set of per-op models and builds each graph's price once. Only
/// share a cache between deployments priced by the same per-op models.
#[derive(Default)]
pub struct PriceCache(std::sync::Mutex<std::collections::HashMap<String, (f64, f64)>>);

impl PriceCache {
    fn get_or(&self, key: String, price: impl FnOnce() -> Result<(f64, f64), SimError>) -> Result<(f64, f64), SimError> {
        if let Some(v) = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(*v);
        }
        let v = price()?;
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(key, v);
        Ok(v)
    }
}

impl<'a> Pricing<'a> {
    pub fn ladder(ladder: &'a LadderOps) -> Pricing<'a> {
        Pricing { ops: ladder, ladder: Some(ladder), cache: None }
    }

    /// Like [`Pricing::ladder`], remembering what it prices in `cache`.
    pub fn ladder_cached(ladder: &'a LadderOps, cache: &'a PriceCache) -> Pricing<'a> {
        Pricing { ops: ladder, ladder: Some(ladder), cache: Some(cache) }
    }

    /// `price()` of the part named by `key`, from the cache when there is one.
    fn cached(&self, key: impl FnOnce() -> String, price: impl FnOnce() -> Result<(f64, f64), SimError>) -> Result<(f64, f64), SimError> {
        match self.cache {
            Some(c) => c.get_or(key(), price),
            None => price(),
        }
    }

    /// One op inside a running model. The ladder prices collectives from its tables (over the
    /// network past one server); compute predictors know nothing of links, so the α–β link
    /// model prices them, as the ladder does past one server.
    fn predict(&self, op: &Op, gpu: &Gpu) -> Estimate {
        match (op, self.ladder) {
            (Op::Comm(c), None) => Estimate::Time(wavecast_predict::OpTime::exact(wavecast_predict::comm::CommModel::default().seconds_on_servers(c, gpu))),
            _ => self.ops.predict(op, gpu, &Context::IN_MODEL),
        }
    }
}

/// The priced parts of an iteration on one attention-data-parallel rank.
pub struct IterationModel {
    /// GEMMs, norms, element-wise kernels and collectives except attention, the routed
    /// experts and the LM head (priced apart), against this rank's tokens.
    layers: Curve,
    /// The collectives among `layers` (the tensor-parallel all-reduces and all-gathers).
    collectives: Curve,
    /// The fused MoE kernels of every MoE layer, against the tokens of all ranks.
    experts: Curve,
    /// LM head and sampling, against the rows sampled.
    head: Curve,
    /// Decode attention of every layer: (sequences, mean cache length).
    decode: Grid,
    /// One prompt chunk's attention in every layer: (chunk tokens, tokens before it).
    prefill: Grid,
    attention_dp: u64,
    /// The engine whose host time each iteration adds ([`Backend::overhead_ms`]), and the
    /// model's layers it is counted over.
    engine: Backend,
    model_layers: u64,
    /// Pipeline parallelism: handing a batch's hidden states from stage to stage (every stage
    /// but the last), fixed ms and ms per token.
    hop_ms: (f64, f64),
}

/// The graph-building options of one rank's pass.
pub fn build_options(formats: &Formats, par: &Parallel, batch: u64, seq: u64, past: u64, head: Head) -> BuildOptions {
    let mut o = BuildOptions::new(batch, seq, Mode::Inference, formats.dtype);
    o.past = past;
    o.head = head;
    o.attention = AttentionImpl::Fused;
    o.merged_projections = true;
    o.tp = par.tp;
    o.attention_dp = par.attention_dp;
    o.moe_tp = Some(par.moe_tp);
    o.ep = par.ep;
    o.serve_formats(formats.quant, formats.moe_quant, true);
    o.kv_dtype = Some(formats.kv).filter(|k| *k != formats.dtype);
    o
}

/// Which part of an iteration a graph node belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Layers,
    /// Routed experts (priced instead as one fused MoE kernel per layer).
    Experts,
    Attention,
    Head,
}

fn part(n: &Node) -> Part {
    match (&n.op, n.role) {
        // The gated delta rule goes with attention: per sequence in decode (its state), per
        // prompt chunk in prefill (chunked over the chunk's tokens). So does what grows with
        // the tokens each query sees (the sparse-attention indexer's scores and top-k pick):
        // per sequence and cache length in decode, per prompt chunk after the tokens before it
        // in prefill, not with the layers' ops that grow with the batch's tokens alone.
        _ if n.role.sees_context(&n.op) => Part::Attention,
        // The routed tokens' gather and weighted sum go with the experts: the fused MoE kernel
        // the expert part is priced as (AIConfigurator's `moe` measurements) does both, so
        // pricing them again as a copy and a multiply beside it would count them twice.
        (_, Role::Expert | Role::Routing) => Part::Experts,
        (_, Role::Head) => Part::Head,
        _ => Part::Layers,
    }
}

/// Milliseconds of the nodes of `g` in `want`.
fn price(g: &Graph, gpu: &Gpu, ops: Pricing, want: Part) -> Result<f64, SimError> {
    Ok(price_split(g, gpu, ops, want)?.0)
}

/// Milliseconds of the nodes of `g` in `want`, and of the collectives among them.
fn price_split(g: &Graph, gpu: &Gpu, ops: Pricing, want: Part) -> Result<(f64, f64), SimError> {
    let (mut ms, mut comm) = (0.0, 0.0);
    // A model's layer kinds (DeepSeek's dense and MoE layers) share most of their ops: each
    // distinct op is priced once per graph (a predictor gives one op one time).
    let mut priced: Vec<(&Op, f64)> = Vec::new();
    for n in g.nodes.iter().filter(|n| part(n) == want) {
        let seconds = match priced.iter().find(|(op, _)| **op == n.op) {
            Some(&(_, seconds)) => seconds,
            None => match ops.predict(&n.op, gpu) {
                Estimate::Time(t) => {
                    priced.push((&n.op, t.seconds));
                    t.seconds
                }
                Estimate::Unpriced(why) => return Err(SimError::Invalid(format!("cannot price {} ({}): {why}", n.name, n.op.describe()))),
            },
        };
        let node_ms = seconds * 1e3 * n.repeat as f64;
        ms += node_ms;
        if matches!(n.op, Op::Comm(_)) {
            comm += node_ms;
        }
    }
    Ok((ms, comm))
}

impl IterationModel {
    /// Prices the parts of `spec` served with `par` and `formats` on `gpu`, over every size
    /// `limits` allows; each iteration adds `engine`'s host time.
    pub fn new(spec: &TransformerSpec, gpu: &Gpu, par: &Parallel, formats: &Formats, limits: &Limits, engine: Backend, pricing: Pricing) -> Result<IterationModel, SimError> {
        let ops = pricing;
        let hop_ms = pipeline_hop_ms(spec, gpu, par, formats);
        let dp = par.attention_dp.max(1);
        let rank_tokens = limits.max_tokens.div_ceil(dp).max(1);
        let rank_seqs = limits.max_seqs.min(limits.max_tokens).div_ceil(dp).max(1);
        let graph = |batch: u64, seq: u64, past: u64, head: Head, want: Part| -> Result<Graph, SimError> {
            let mut o = build_options(formats, par, batch, seq, past, head);
            // The attention grids' hundreds of passes need only their attention's nodes.
            o.context_only = want == Part::Attention;
            Ok(build(spec, &o)?)
        };
        let key = |what: &str, a: u64, b: u64, c: u64| format!("{}|{}|{formats:?}|{par:?}|{what}|{a}|{b}|{c}", spec.name, gpu.id);
        // One rank's pass of `batch` × `seq` tokens after `past` cached ones: ms of `want`, and
        // of the collectives among them.
        let part_ms = |what: &str, want: Part, batch: u64, seq: u64, past: u64| -> Result<(f64, f64), SimError> {
            ops.cached(|| key(what, batch, seq, past), || price_split(&graph(batch, seq, past, Head::None, want)?, gpu, ops, want))
        };
        let curve = |xs: Vec<u64>, f: &dyn Fn(u64) -> Result<f64, SimError>| -> Result<Curve, SimError> {
            let ys = xs.iter().map(|&x| f(x)).collect::<Result<Vec<f64>, SimError>>()?;
            Ok(Curve { xs: xs.iter().map(|&x| x as f64).collect(), ys })
        };
        let token_sizes = sizes(rank_tokens);
        let split = token_sizes.iter().map(|&t| part_ms("layers", Part::Layers, t, 1, 0)).collect::<Result<Vec<(f64, f64)>, SimError>>()?;
        let xs: Vec<f64> = token_sizes.iter().map(|&t| t as f64).collect();
        let layers = Curve { xs: xs.clone(), ys: split.iter().map(|s| s.0).collect() };
        let collectives = Curve { xs, ys: split.iter().map(|s| s.1).collect() };
        let head = curve(sizes(rank_seqs), &|rows| {
            let sampled = || {
                let mut g = graph(rows, 1, 0, Head::LastToken, Part::Head)?;
                wavecast_workload::serve::add_sampling(spec, rows, &mut g);
                Ok((price(&g, gpu, ops, Part::Head)?, 0.0))
            };
            Ok(ops.cached(|| key("head", rows, 1, 0), sampled)?.0)
        })?;
        let experts = curve(sizes(rank_tokens * dp), &|t| match pricing.ladder {
            Some(ladder) => Ok(ops.cached(|| key("moe", t, 1, 0), || Ok((moe_ms(spec, gpu, par, formats, t, ladder)?, 0.0)))?.0),
            // Another predictor prices the experts' own nodes on the rank's share of the tokens.
            None => Ok(part_ms("experts", Part::Experts, t.div_ceil(dp), 1, 0)?.0),
        })?;
        let grid = |xs: Vec<u64>, ys: Vec<u64>, f: &dyn Fn(u64, u64) -> Result<f64, SimError>| -> Result<Grid, SimError> {
            let values = xs.iter().map(|&x| ys.iter().map(|&y| f(x, y)).collect::<Result<Vec<f64>, SimError>>()).collect::<Result<Vec<_>, SimError>>()?;
            Ok(Grid { xs: xs.iter().map(|&x| x as f64).collect(), ys: ys.iter().map(|&y| y as f64).collect(), values })
        };
        let max_ctx = limits.max_context.max(2);
        let decode = grid(sizes(rank_seqs), contexts(max_ctx), &|b, ctx| Ok(part_ms("attention", Part::Attention, b, 1, ctx.max(2) - 1)?.0))?;
        let mut pasts = vec![0];
        pasts.extend(contexts(max_ctx));
        let prefill = grid(sizes(limits.max_tokens.min(max_ctx)), pasts, &|c, past| Ok(part_ms("attention", Part::Attention, 1, c, past)?.0))?;
        Ok(IterationModel { layers, collectives, experts, head, decode, prefill, attention_dp: dp, engine, model_layers: spec.layers, hop_ms })
    }
}

/// Fixed ms and ms per token of the (pp − 1) stage-to-stage sends of an iteration: each
/// GPU of a stage sends its tokens' hidden states (16-bit) to its peer in the next stage over
/// NVLink, or through its NIC where the worker spans servers (the α–β link model of
/// `wavecast-predict::comm`).
fn pipeline_hop_ms(spec: &TransformerSpec, gpu: &Gpu, par: &Parallel, formats: &Formats) -> (f64, f64) {
    if par.pp <= 1 {
        return (0.0, 0.0);
    }
    let comm = wavecast_predict::comm::CommModel::default();
    let spans_servers = par.gpus() > wavecast_predict::comm::SERVER_GPUS.max(gpu.interconnect.nvlink_domain);
    let link = if spans_servers { comm.network_link(gpu, 2, None) } else { comm.link(gpu, 2) };
    let hops = (par.pp - 1) as f64;
    let bytes_per_token = spec.hidden as f64 * formats.dtype.size_bytes() as f64 / par.attention_dp.max(1) as f64;
    (hops * link.alpha * 1e3, hops * bytes_per_token / link.bandwidth * 1e3)
}

/// The routed experts of every MoE layer for `tokens` tokens (all ranks'), as the fused MoE
/// kernel the measurements time: tokens routed to top-k of the experts, split by expert
/// tensor and expert parallelism.
fn moe_ms(spec: &TransformerSpec, gpu: &Gpu, par: &Parallel, formats: &Formats, tokens: u64, ops: &LadderOps) -> Result<f64, SimError> {
    let Some(moe) = spec.moe else { return Ok(0.0) };
    let layers = spec.layers.saturating_sub(moe.dense_layers);
    let shape = Shape::Moe { tokens, hidden: spec.hidden, inter: spec.ffn, topk: moe.top_k, experts: moe.experts, tp: par.moe_tp, ep: par.ep, balanced: true, gated: Some(spec.activation == wavecast_workload::Activation::SwiGlu) };
    let precision = formats.moe_quant.map(Precision::from).unwrap_or(if formats.dtype == DType::Fp16 { Precision::Fp16 } else { Precision::Bf16 });
    let s = ops.shape_seconds(shape, precision, gpu).map_err(|e| SimError::Invalid(format!("cannot price the MoE layers: {e}")))?;
    Ok(s * 1e3 * layers as f64)
}

/// Where an iteration's time goes, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct StepParts {
    /// GEMMs, norms, element-wise kernels and collectives outside attention and experts.
    pub layers_ms: f64,
    /// Routed experts (fused MoE kernels).
    pub experts_ms: f64,
    pub decode_attention_ms: f64,
    pub prefill_attention_ms: f64,
    /// LM head and sampling.
    pub head_ms: f64,
    /// Pipeline stages handing the batch on (0 without pipeline parallelism).
    pub pipeline_ms: f64,
    /// The engine's own host time in the iteration (fixed, per layer, per sequence).
    pub overhead_ms: f64,
}

impl StepParts {
    pub fn total_ms(&self) -> f64 {
        self.layers_ms + self.experts_ms + self.decode_attention_ms + self.prefill_attention_ms + self.head_ms + self.pipeline_ms + self.overhead_ms
    }
}

impl IterationModel {
    /// The parts of one iteration's time on the slowest rank.
    pub fn parts(&self, b: &Batch) -> StepParts {
        let dp = self.attention_dp as f64;
        let tokens = b.tokens() as f64;
        let decode_attention_ms = if b.decode_seqs > 0 {
            let seqs = b.decode_seqs as f64;
            self.decode.at((seqs / dp).ceil(), b.decode_context as f64 / seqs)
        } else {
            0.0
        };
        // Prompt chunks are spread over the ranks; the slowest rank holds at least the largest.
        let chunks: Vec<f64> = b.prefill.iter().map(|c| self.prefill.at(c.tokens as f64, c.past as f64)).collect();
        let prefill_attention_ms = (chunks.iter().sum::<f64>() / dp).max(chunks.iter().copied().fold(0.0, f64::max));
        // Sequences that sample a token: the decoding ones and the prompts this iteration ends.
        let sampled = b.decode_seqs as f64 + b.prefill.iter().filter(|c| c.last).count() as f64;
        StepParts {
            layers_ms: self.layers.at((tokens / dp).ceil()),
            experts_ms: self.experts.at(tokens),
            decode_attention_ms,
            prefill_attention_ms,
            head_ms: self.head.at((sampled / dp).ceil().max(1.0)),
            pipeline_ms: if self.hop_ms.0 > 0.0 { self.hop_ms.0 + self.hop_ms.1 * tokens } else { 0.0 },
            // Each rank's scheduler runs its own sequences.
            overhead_ms: self.engine.overhead_ms(self.model_layers, (b.decode_seqs + b.prefill.len() as u64).div_ceil(self.attention_dp)),
        }
    }
}

impl IterationModel {
    /// Milliseconds of an iteration in collectives: the layers' tensor-parallel collectives and
    /// the pipeline's stage-to-stage sends.
    pub fn collectives_ms(&self, b: &Batch) -> f64 {
        let tokens = b.tokens() as f64;
        let hops = if self.hop_ms.0 > 0.0 { self.hop_ms.0 + self.hop_ms.1 * tokens } else { 0.0 };
        self.collectives.at((tokens / self.attention_dp as f64).ceil()) + hops
    }
}

impl StepCost for IterationModel {
    fn step_ms(&self, b: &Batch) -> f64 {
        self.parts(b).total_ms()
    }

    /// Everything but decode attention is the same in each of these iterations: priced once,
    /// the attention grid's sequence axis located once; the sums are the ones `step_ms` makes.
    fn decode_steps(&self, seqs: u64, context: u64, each: &mut dyn FnMut(f64) -> bool) {
        let p = self.parts(&Batch { decode_seqs: seqs, decode_context: context, prefill: Vec::new() });
        let (i, fx) = locate(&self.decode.xs, (seqs as f64 / self.attention_dp as f64).ceil());
        let mut attention = self.decode.along_y(i, fx);
        let mut context = context;
        loop {
            let decode_attention_ms = attention.at(context as f64 / seqs as f64);
            let parts = StepParts { decode_attention_ms, ..p };
            if !each(parts.total_ms()) {
                break;
            }
            context += seqs;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A predictor that counts the ops it is asked for and prices each at 1 µs.
    struct Counting(std::sync::atomic::AtomicUsize);

    impl Predictor for Counting {
        fn name(&self) -> &str {
            "counting"
        }
        fn predict(&self, _: &Op, _: &Gpu, _: &Context) -> Estimate {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Estimate::Time(wavecast_predict::OpTime::exact(1e-6))
        }
    }

    /// DeepSeek-V3's dense and MoE layers share their attention projections and norms: a graph
    /// is priced one distinct op at a time, and every node still counts with its repeats.
    #[test]
    fn each_distinct_op_of_a_graph_is_priced_once() {
        let spec = wavecast_workload::presets::preset("deepseek-v3").unwrap();
        let par = Parallel { tp: 8, attention_dp: 1, moe_tp: 1, ep: 8, pp: 1 };
        let formats = Formats { dtype: DType::Bf16, quant: None, moe_quant: None, kv: DType::Bf16 };
        let g = build(&spec, &build_options(&formats, &par, 64, 1, 0, Head::None)).unwrap();
        let layers: Vec<&Node> = g.nodes.iter().filter(|n| part(n) == Part::Layers).collect();
        let mut distinct: Vec<&Op> = Vec::new();
        for n in &layers {
            if !distinct.contains(&&n.op) {
                distinct.push(&n.op);
            }
        }
        assert!(distinct.len() < layers.len(), "the layer kinds share ops");
        let counting = Counting(std::sync::atomic::AtomicUsize::new(0));
        let gpu = Gpu::find("h200").unwrap();
        let (ms, comm) = price_split(&g, &gpu, Pricing { ops: &counting, ladder: None, cache: None }, Part::Layers).unwrap();
        // Collectives go to the link model, not the predictor, when no ladder prices them.
        let computed = distinct.iter().filter(|op| !matches!(op, Op::Comm(_))).count();
        assert_eq!(counting.0.load(std::sync::atomic::Ordering::Relaxed), computed);
        let repeats: u64 = layers.iter().filter(|n| !matches!(n.op, Op::Comm(_))).map(|n| n.repeat).sum();
        assert!((ms - comm - repeats as f64 * 1e-3).abs() < 1e-9, "{} vs {repeats} µs", ms - comm);
    }

    /// The part comes from the node's role, whatever its name says.
    #[test]
    fn parts_follow_roles_not_names() {
        use wavecast_ir::ops::{Elementwise, EwKind};
        use wavecast_ir::Phase;
        let ew = Op::Elementwise(Elementwise::new(EwKind::Add, 1024, 2, DType::Bf16));
        let mut g = Graph::new("roles");
        g.push_in(Role::Expert, "head.misleading", ew.clone(), Phase::Forward, 1);
        g.push_in(Role::Head, "layer.expert.misleading", ew.clone(), Phase::Forward, 1);
        g.push_in(Role::Layer, "x", ew.clone(), Phase::Forward, 1);
        g.push("unscoped", ew, Phase::Forward, 1);
        let parts: Vec<Part> = g.nodes.iter().map(part).collect();
        assert_eq!(parts, [Part::Experts, Part::Head, Part::Layers, Part::Layers]);
    }

    /// The gated delta rule is priced with attention: per sequence in the decode grid (its
    /// state), per prompt chunk in the prefill grid, not per token with the GEMMs.
    #[test]
    fn the_gated_delta_rule_goes_with_attention() {
        use wavecast_ir::ops::GatedDelta;
        use wavecast_ir::Phase;
        let d = GatedDelta { batch: 4, seq: 1, with_state: true, k_heads: 2, v_heads: 8, head_k_dim: 128, head_v_dim: 128, dtype: DType::Bf16, state_dtype: DType::Fp32 };
        let mut g = Graph::new("gdn");
        g.push_in(Role::Layer, "linear_layer.gated_delta", Op::GatedDelta(d), Phase::Forward, 45);
        assert_eq!(part(&g.nodes[0]), Part::Attention);
    }

    /// What grows with the tokens each query sees (the sparse-attention indexer's scores and
    /// top-k) goes with attention, whatever its op; the indexer's projections grow with the
    /// batch's tokens and stay with the layers; the routed tokens' gather goes with the experts.
    /// The node's role decides, never its name.
    #[test]
    fn roles_not_names_choose_the_part() {
        use wavecast_ir::ops::{Gemm, MemCopy, Reduction};
        use wavecast_ir::Phase;
        let mut g = Graph::new("dsa");
        g.push_in(Role::OverContext, "layer.scores", Op::Gemm(Gemm::bmm(4, 32, 128, 8192, DType::Fp8).unwrap()), Phase::Forward, 75);
        g.push_in(Role::OverContext, "layer.pick", Op::Reduction(Reduction { elements_in: 4 * 8192, elements_out: 4 * 2048, dtype: DType::Fp32 }), Phase::Forward, 75);
        g.push_in(Role::Layer, "layer.indexer_scores", Op::Gemm(Gemm::bmm(1, 4, 2048, 4096, DType::Bf16).unwrap()), Phase::Forward, 75);
        g.push_in(Role::Routing, "layer.gather", Op::MemCopy(MemCopy::copy(4096, DType::Bf16)), Phase::Forward, 75);
        g.push_in(Role::Layer, "layer.dispatch", Op::MemCopy(MemCopy::copy(4096, DType::Bf16)), Phase::Forward, 75);
        let parts: Vec<Part> = g.nodes.iter().map(part).collect();
        assert_eq!(parts, [Part::Attention, Part::Attention, Part::Layers, Part::Experts, Part::Layers]);
    }

    #[test]
    fn grids_of_sizes_cover_the_range() {
        assert_eq!(sizes(1), vec![1]);
        assert_eq!(sizes(10), vec![1, 2, 3, 4, 6, 8, 10]);
        assert_eq!(contexts(5000), vec![1, 16, 64, 256, 1024, 2048, 4096, 5000]);
    }

    #[test]
    fn curves_and_grids_interpolate_linearly() {
        let c = Curve { xs: vec![1.0, 3.0, 7.0], ys: vec![10.0, 30.0, 50.0] };
        assert_eq!(c.at(2.0), 20.0);
        assert_eq!(c.at(5.0), 40.0);
        assert_eq!(c.at(0.0), 10.0, "clamped below");
        assert_eq!(c.at(9.0), 60.0, "extrapolated above");
        let g = Grid { xs: vec![0.0, 2.0], ys: vec![0.0, 10.0], values: vec![vec![0.0, 10.0], vec![2.0, 32.0]] };
        // f = x + y + xy at the corners; bilinear interpolation is exact for it.
        assert!((g.at(1.0, 5.0) - 11.0).abs() < 1e-12);
    }

    /// Walking y upward (a decode run's growing context) reads exactly what a fresh lookup
    /// reads, below, inside and past the axis, on a grid of one y too.
    #[test]
    fn walking_along_y_reads_what_a_lookup_reads() {
        let g = Grid { xs: vec![1.0, 4.0, 16.0], ys: vec![1.0, 16.0, 64.0, 256.0], values: vec![vec![1.0, 3.0, 2.0, 9.0], vec![2.0, 5.0, 8.0, 7.0], vec![4.0, 4.5, 30.0, 31.0]] };
        let one = Grid { xs: vec![1.0, 4.0], ys: vec![8.0], values: vec![vec![3.0], vec![5.0]] };
        for grid in [&g, &one] {
            for x in [0.5, 3.0, 16.0, 40.0] {
                let (i, fx) = locate(&grid.xs, x);
                let mut walk = grid.along_y(i, fx);
                let mut y = 0.25;
                while y < 600.0 {
                    assert_eq!(walk.at(y).to_bits(), grid.at(x, y).to_bits(), "x {x} y {y}");
                    y += 2.75;
                }
            }
        }
    }
}
