//! A serving deployment end to end: the model on its workers (aggregated, or prefill and
//! decode pools), each worker's memory and KV cache, its engine limits and iteration model,
//! the simulated load, and the report users read.

use super::backend::{sglang_reserve_bytes, Backend, KvRule};
use super::cost::{build_options, Formats, IterationModel, Limits, Parallel, Pricing, StepParts};
use super::engine::Batch;
use super::engine::{simulate, Deployment, EngineConfig, EngineStats, Role, StepCost};
use super::load::Load;
use super::metrics::{metrics, Metrics, Slo};
use crate::SimError;
use serde::Serialize;
use wavecast_gpu::Gpu;
use wavecast_predict::comm::CommModel;
use wavecast_predict::ladder::LadderOps;
use wavecast_workload::serve;
use wavecast_workload::transformer::{build, Head, Shard};
use wavecast_workload::TransformerSpec;

/// Bytes every GPU keeps for the CUDA context, library workspaces, CUDA graphs and allocator
/// slack, outside the engine's own accounting.
pub const RUNTIME_BYTES: f64 = 2.0e9;

/// One pool of identical workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pool {
    pub workers: u64,
    pub parallel: Parallel,
    /// Most sequences per worker (the engine default when absent).
    pub max_seqs: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Layout {
    Agg { pool: Pool },
    Disagg { prefill: Pool, decode: Pool },
}

impl Layout {
    pub fn gpus(&self) -> u64 {
        match self {
            Layout::Agg { pool } => pool.workers * pool.parallel.gpus(),
            Layout::Disagg { prefill, decode } => prefill.workers * prefill.parallel.gpus() + decode.workers * decode.parallel.gpus(),
        }
    }

    /// `tp4`, `tp1·dp8·ep8`, `2×tp4 + 1×tp8` — short enough for a table.
    /// The `serve-sim` flags that simulate this layout: `--layout tp4,ep4` or `--prefill tp2
    /// --decode 2xtp2`.
    pub fn serve_sim_flags(&self) -> String {
        let ascii = |label: String| label.replace('·', ",").replace('×', "x");
        match self {
            Layout::Agg { .. } => format!("--layout {}", ascii(self.label())),
            Layout::Disagg { prefill, decode } => {
                let one = |p: &Pool| ascii(Layout::Agg { pool: *p }.label());
                format!("--prefill {} --decode {}", one(prefill), one(decode))
            }
        }
    }

    pub fn label(&self) -> String {
        let one = |p: &Pool| {
            let q = p.parallel;
            let mut s = format!("tp{}", q.tp);
            if q.attention_dp > 1 {
                s += &format!("·dp{}", q.attention_dp);
            }
            if q.ep > 1 {
                s += &format!("·ep{}", q.ep);
            }
            if q.moe_tp != q.tp && q.moe_tp > 1 && q.ep > 1 {
                s += &format!("·etp{}", q.moe_tp);
            }
            if q.pp > 1 {
                s += &format!("·pp{}", q.pp);
            }
            if p.workers > 1 {
                s = format!("{}×{s}", p.workers);
            }
            s
        };
        match self {
            Layout::Agg { pool } => one(pool),
            Layout::Disagg { prefill, decode } => format!("P {} + D {}", one(prefill), one(decode)),
        }
    }
}

/// Everything about a deployment except the model, GPU and load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServeSimOptions {
    pub layout: Layout,
    pub formats: Formats,
    pub backend: Backend,
    /// Tokens per iteration (the backend's default when absent).
    pub max_batched_tokens: Option<u64>,
    /// The prompt chunk the engine sizes its buffers for (SGLang's `chunked_prefill_size`):
    /// `max_batched_tokens` when absent. A static batch schedules its whole batch in one
    /// iteration but runs in an engine configured with its own default chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_tokens: Option<u64>,
    pub chunked_prefill: bool,
    pub prefix_caching: bool,
    /// Prompt tokens every request shares (a system prompt).
    pub shared_prefix: u64,
    pub slo: Option<Slo>,
    /// The measured-data folder the price ladder reads its tables from (`--ops-data`); `None`:
    /// every op by physics.
    pub ops_data: Option<std::path::PathBuf>,
}

/// Whether a memory part is absent (serialised only where a model has it).
pub(crate) fn is_zero(gb: &f64) -> bool {
    *gb == 0.0
}

fn is_zero_count(n: &u64) -> bool {
    *n == 0
}

/// Memory of one GPU of a worker, GB.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WorkerMemory {
    pub weights_gb: f64,
    pub activations_gb: f64,
    pub runtime_gb: f64,
    /// The linear-attention layers' recurrent and convolution state, kept for every sequence
    /// the engine may run at once (hybrid models such as Qwen3.5; absent for others).
    #[serde(skip_serializing_if = "is_zero")]
    pub linear_state_gb: f64,
    /// Sequences one GPU keeps that state for: the engine's limit on running sequences, lower
    /// than its default where the default's state would not fit (see [`STATE_SHARE`]).
    #[serde(skip_serializing_if = "is_zero_count")]
    pub linear_state_seqs: u64,
    pub kv_cache_gb: f64,
    /// Tokens of KV cache the whole worker holds (all its pipeline stages' virtual engines).
    pub kv_tokens: u64,
}

/// The `--json` of `serve-sim`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServeSimReport {
    pub model: String,
    pub gpu: String,
    pub gpu_name: String,
    pub predictor: &'static str,
    pub backend: &'static str,
    pub layout: String,
    pub deployment: Layout,
    pub gpus: u64,
    pub formats: Formats,
    pub params_total: u64,
    pub params_active: u64,
    pub requests: usize,
    pub max_batched_tokens: u64,
    /// Memory of one GPU of each pool (one entry for aggregated serving; prefill then decode).
    pub memory: Vec<WorkerMemory>,
    pub metrics: Metrics,
    pub engine: EngineStats,
    /// One decode iteration at the run's mean batch (decoding sequences at their mean cache
    /// length), part by part, on a worker that decodes.
    pub decode_step: StepParts,
    /// What the answer settled that the request left open (the activations' type on a GPU
    /// without BF16 units); absent when nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One pool's engine limits and iteration model, shared by its identical workers.
pub(super) struct Worker {
    pub(super) role: Role,
    pub(super) count: u64,
    pub(super) config: EngineConfig,
    pub(super) cost: IterationModel,
    pub(super) memory: WorkerMemory,
}

/// A deployment priced and sized for loads up to a context length: run loads on it with
/// [`Prepared::run`]. Building it is the expensive part (pricing every part of an iteration
/// over its range of sizes); a run costs table lookups.
pub struct Prepared {
    model: String,
    gpu: String,
    gpu_name: String,
    pub(super) options: ServeSimOptions,
    params: wavecast_workload::hf::Params,
    pub(super) workers: Vec<Worker>,
    transfer: (f64, f64),
    pub(super) max_context: u64,
}

/// A worker of `pp` pipeline stages runs as `pp` virtual engines, each with its own batch, a
/// `pp`-th of the sequences and of the KV cache: while one batch is in one stage the others
/// fill the rest, and each batch's iteration passes every stage (the whole model's time, plus
/// the stage-to-stage sends).
fn worker(spec: &TransformerSpec, gpu: &Gpu, role: Role, pool: &Pool, o: &ServeSimOptions, max_context: u64, pricing: Pricing) -> Result<Worker, SimError> {
    let par = pool.parallel;
    if par.pp > spec.layers {
        return Err(SimError::Invalid(format!("{} pipeline stages is more than the model's {} layers", par.pp, spec.layers)));
    }
    // Every attention-data-parallel rank schedules its own token budget.
    let max_tokens = o.max_batched_tokens.unwrap_or(o.backend.max_batched_tokens) * par.attention_dp.max(1);
    let max_seqs = pool.max_seqs.unwrap_or(o.backend.max_seqs).div_ceil(par.pp);
    let chunk_tokens = o.chunk_tokens.map_or(max_tokens, |c| c * par.attention_dp.max(1));
    let mut limits = Limits { max_tokens, max_seqs, max_context, chunk_tokens };
    if pool.max_seqs.is_none() {
        limits.max_seqs = state_capped_seqs(spec, gpu, &par, &o.formats, &o.backend, &limits);
    }
    let max_seqs = limits.max_seqs;
    let memory = worker_memory(spec, gpu, &par, &o.formats, &o.backend, &limits)?;
    let cost = IterationModel::new(spec, gpu, &par, &o.formats, &limits, o.backend, pricing)?;
    let config = EngineConfig {
        max_seqs,
        max_batched_tokens: max_tokens,
        chunked_prefill: o.chunked_prefill,
        block_size: o.backend.block_size,
        kv_blocks: memory.kv_tokens / par.pp / o.backend.block_size,
        shared_prefix: o.shared_prefix,
        prefix_caching: o.prefix_caching,
        prefill_first: o.backend.prefill_first,
    };
    Ok(Worker { role, count: pool.workers * par.pp, config, cost, memory })
}

/// Bytes of the parameters one GPU stores: every layer's weights in their storage format, each
/// GPU's share of the experts. Priced on a pass with enough tokens to wake every expert.
fn weight_bytes(spec: &TransformerSpec, formats: &Formats, par: &Parallel) -> Result<f64, SimError> {
    let g = build(spec, &build_options(formats, par, serve::tokens_waking_every_expert(spec), 1, 0, Head::LastToken))?;
    Ok(serve::stored_param_bytes(&g))
}

/// Largest transient buffers of an iteration of `tokens` tokens per rank: the residual stream,
/// its normalised copy and the attention output, the MLP's gate and up projections, the
/// routed tokens' expert activations, and FP32 logits of the sampled sequences.
fn activation_bytes(spec: &TransformerSpec, par: &Parallel, tokens: u64, seqs: u64) -> f64 {
    let (t, h) = (tokens as f64, spec.hidden as f64);
    let dense_ffn = spec.moe.map_or(spec.ffn, |m| m.dense_ffn.max(m.shared_ffn)) as f64 / par.tp as f64;
    let routed = spec.moe.map_or(0.0, |m| t * par.attention_dp as f64 * m.top_k as f64 / par.ep as f64 * (h + 2.0 * spec.ffn as f64 / par.moe_tp as f64));
    (t * (3.0 * h + 2.0 * dense_ffn) + routed) * 2.0 + seqs as f64 * spec.vocab as f64 * 4.0
}

/// Largest share of the memory left for the cache that a hybrid model's linear-attention
/// states take when the engine's default sequence limit is more than they fit: the engines run
/// fewer sequences rather than refuse (vLLM takes each running sequence's state from the cache
/// pool; SGLang caps its running requests so that the state pool is 0.9 of the attention
/// cache's, about half of the two).
const STATE_SHARE: f64 = 0.5;

/// The default sequence limit of `limits`, lowered for a hybrid model to the sequences whose
/// linear-attention state fits in [`STATE_SHARE`] of the memory left for the cache (at least one
/// per rank). Models without such layers, and a limit the state fits, keep the limit.
fn state_capped_seqs(spec: &TransformerSpec, gpu: &Gpu, par: &Parallel, formats: &Formats, backend: &Backend, limits: &Limits) -> u64 {
    let dp = par.attention_dp.max(1);
    let per_rank_seq = linear_state_bytes(spec, formats, par, &Limits { max_seqs: dp, ..*limits });
    if per_rank_seq <= 0.0 {
        return limits.max_seqs;
    }
    let pool = cache_bytes(spec, gpu, par, formats, backend, limits, 0.0);
    let fit = ((STATE_SHARE * pool / per_rank_seq).floor().max(1.0) as u64).saturating_mul(dp);
    limits.max_seqs.min(fit)
}

/// Bytes of one GPU the cache may hold beside `states` of linear-attention state, by the
/// engine's rule (≤ 0: nothing).
fn cache_bytes(spec: &TransformerSpec, gpu: &Gpu, par: &Parallel, formats: &Formats, backend: &Backend, limits: &Limits, states: f64) -> f64 {
    let stages = par.pp.max(1) as f64;
    let Ok(weights) = weight_bytes(spec, formats, par) else { return 0.0 };
    let weights = weights / stages;
    let dp = par.attention_dp.max(1);
    let activations = activation_bytes(spec, par, limits.max_tokens.div_ceil(dp), limits.max_seqs.div_ceil(dp));
    usable_bytes(gpu.memory_bytes(), weights, activations, states, backend, limits, par)
}

/// What the engine's rule leaves the cache of `capacity` beside the rest (≤ 0: nothing).
fn usable_bytes(capacity: f64, weights: f64, activations: f64, states: f64, backend: &Backend, limits: &Limits, par: &Parallel) -> f64 {
    let fixed = weights + activations + states + RUNTIME_BYTES;
    match backend.kv_rule {
        KvRule::ShareOfMemory(share) => capacity * share - fixed,
        KvRule::ShareOfFree(share) => share * (capacity - fixed),
        // Activations, CUDA graphs and the runtime live in the reserve, which SGLang sizes for
        // its chunk and graphs: an activation estimate above it is this model's, not a refusal
        // (a run SGLang made must not be refused).
        KvRule::StaticReserve => capacity - static_reserve(capacity, limits, par) - weights - states,
    }
}

/// Weights, activations and runtime of one GPU of a worker, and the KV cache the rest holds.
pub fn worker_memory(spec: &TransformerSpec, gpu: &Gpu, par: &Parallel, formats: &Formats, backend: &Backend, limits: &Limits) -> Result<WorkerMemory, SimError> {
    // A pipeline stage holds its share of the layers' weights and cache.
    let stages = par.pp.max(1) as f64;
    let weights = weight_bytes(spec, formats, par)? / stages;
    let dp = par.attention_dp.max(1);
    let activations = activation_bytes(spec, par, limits.max_tokens.div_ceil(dp), limits.max_seqs.div_ceil(dp));
    let capacity = gpu.memory_bytes();
    // Linear-attention layers keep a fixed state per sequence (no KV cache): the engine
    // reserves it for every sequence it may run at once.
    let states = linear_state_bytes(spec, formats, par, limits);
    let gb = |b: f64| b / 1e9;
    let usable = usable_bytes(capacity, weights, activations, states, backend, limits, par);
    if usable <= 0.0 {
        let state = if states > 0.0 { format!(", {:.1} GB for the linear-attention state of {} sequences", gb(states), limits.max_seqs.div_ceil(dp)) } else { String::new() };
        // Under SGLang's rule the activations and runtime live in its reserve, which the share
        // already names: only what its static share must hold is listed.
        let needs = match backend.kv_rule {
            KvRule::StaticReserve => format!("{:.1} GB for weights{state}", gb(weights)),
            _ => format!("{:.1} GB for weights, {:.1} GB for activations{state} and {:.1} GB for the runtime", gb(weights), gb(activations), gb(RUNTIME_BYTES)),
        };
        return Err(SimError::Invalid(format!(
            "does not fit in memory: each GPU of a {}-GPU worker needs {needs}, but {} has {:.1} GB ({}); use more GPUs per worker (serve-sim --layout, predict --tp), {}a GPU with more memory",
            par.gpus(),
            gpu.id,
            gb(capacity),
            engine_share(backend, capacity, limits, par),
            smaller_formats(gpu, formats)
        )));
    }
    // Every attention-data-parallel rank holds the cache of its own sequences.
    let kv_tokens = (usable * stages / kv_bytes_per_token(spec, formats, par, limits.max_context)?).floor() as u64 * dp;
    let linear_state_seqs = if states > 0.0 { limits.max_seqs.div_ceil(dp) } else { 0 };
    Ok(WorkerMemory { weights_gb: gb(weights), activations_gb: gb(activations), runtime_gb: gb(RUNTIME_BYTES), linear_state_gb: gb(states), linear_state_seqs, kv_cache_gb: gb(usable), kv_tokens })
}

/// The weight formats a refusal may suggest: only those `gpu` has units for ("fp8, fp8_block,
/// nvfp4, ..." on a B200; the weight-only ones on an A100, which has no FP8 units) that store
/// a weight in fewer bits than the widest format the deployment already uses.
fn smaller_formats(gpu: &Gpu, formats: &Formats) -> String {
    let widest = [formats.quant, formats.moe_quant].into_iter().map(|q| q.map_or(16.0, |q| q.weight_bits())).fold(0.0, f64::max);
    let smaller = |q: &wavecast_ir::Quant| q.weight_bits() < widest - 1.0;
    let runs: Vec<&str> = wavecast_ir::Quant::ALL.into_iter().filter(smaller).filter(|q| gpu.check_quant(*q).is_ok()).map(|q| q.as_str()).collect();
    if runs.is_empty() { String::new() } else { format!("a smaller weight format ({}) or ", runs.join(", ")) }
}

/// What the engine gives itself of a GPU's memory, in words for a refusal.
fn engine_share(backend: &Backend, capacity: f64, limits: &Limits, par: &Parallel) -> String {
    match backend.kv_rule {
        KvRule::ShareOfMemory(share) => format!("{} gives its engine {:.0} %, {:.1} GB", backend.name, 100.0 * share, share * capacity / 1e9),
        KvRule::ShareOfFree(share) => format!("{} gives its cache {:.0} % of what is free", backend.name, 100.0 * share),
        KvRule::StaticReserve => format!("{} keeps {:.1} GB outside its static share for activations and the runtime", backend.name, static_reserve(capacity, limits, par) / 1e9),
    }
}

/// SGLang's reserve outside its static share on one GPU. Each attention-data-parallel rank
/// chunks and captures graphs for its own share of the tokens and sequences; its `tp_size` is
/// the whole group, attention data parallelism included.
fn static_reserve(capacity: f64, limits: &Limits, par: &Parallel) -> f64 {
    let dp = par.attention_dp.max(1);
    sglang_reserve_bytes(capacity, limits.chunk_tokens.div_ceil(dp), limits.max_seqs.div_ceil(dp), par.gpus())
}

/// Bytes one GPU reserves for the linear-attention state of the most sequences a rank runs at
/// once (its pipeline stage's share of the layers); 0 for models without such layers.
pub(super) fn linear_state_bytes(spec: &TransformerSpec, formats: &Formats, par: &Parallel, limits: &Limits) -> f64 {
    let seqs = limits.max_seqs.div_ceil(par.attention_dp.max(1)) as f64;
    spec.linear_state_bytes(par.tp, formats.dtype) * seqs / par.pp.max(1) as f64
}

/// KV bytes per token on one GPU, averaged over a sequence of `context` tokens (sliding-window
/// layers stop growing at their window).
pub(super) fn kv_bytes_per_token(spec: &TransformerSpec, formats: &Formats, par: &Parallel, context: u64) -> Result<f64, SimError> {
    let shard = Shard::new(spec, par.tp)?;
    let context = context.max(1);
    Ok(spec.kv_cache_bytes(formats.kv, shard.kv_heads, context, 1) / context as f64)
}

impl Prepared {
    /// Prices and sizes the deployment `o` of `spec` on `gpu` for requests of up to
    /// `max_context` tokens (prompt plus output).
    pub fn new(spec: &TransformerSpec, gpu: &Gpu, o: &ServeSimOptions, max_context: u64) -> Result<Prepared, SimError> {
        // The engine's own kernel tables first: SGLang's and vLLM's times of one shape differ.
        let ops = LadderOps::load_for(o.ops_data.as_deref(), None, o.backend.name).map_err(SimError::Invalid)?;
        Prepared::with_ops(spec, gpu, o, max_context, &ops)
    }

    /// The number formats the deployment runs in (the experts' as the checkpoint gives them).
    pub fn formats(&self) -> &Formats {
        &self.options.formats
    }

    /// [`Prepared::new`] with the per-op models `ops` (a refit without some GPU, for
    /// leave-one-GPU-out evaluation).
    pub fn with_ops(spec: &TransformerSpec, gpu: &Gpu, o: &ServeSimOptions, max_context: u64, ops: &LadderOps) -> Result<Prepared, SimError> {
        Prepared::with_pricing(spec, gpu, o, max_context, Pricing::ladder(ops))
    }

    /// [`Prepared::new`] with the ops priced by `pricing` (the price ladder, or another
    /// predictor named with `--predictor`). The routed experts run in the format the
    /// checkpoint can give them ([`TransformerSpec::experts_run_in`]), whatever command asks.
    pub fn with_pricing(spec: &TransformerSpec, gpu: &Gpu, o: &ServeSimOptions, max_context: u64, pricing: Pricing) -> Result<Prepared, SimError> {
        check_servable(spec, gpu, &o.formats, o.backend, max_context)?;
        let mut o = o.clone();
        o.formats.moe_quant = spec.experts_run_in(o.formats.moe_quant);
        let o = &o;
        let pools: Vec<(Role, &Pool, &str)> = match &o.layout {
            Layout::Agg { pool } => vec![(Role::Mixed, pool, "")],
            Layout::Disagg { prefill, decode } => vec![(Role::Prefill, prefill, "prefill "), (Role::Decode, decode, "decode ")],
        };
        // A disaggregated deployment moves each prompt's KV cache between GPUs: it needs a link.
        if matches!(o.layout, Layout::Disagg { .. }) {
            gpu.check_links(o.layout.gpus()).map_err(SimError::Invalid)?;
        }
        let mut workers = Vec::new();
        for (role, pool, which) in pools {
            check_pool(pool, which)?;
            gpu.check_links(pool.parallel.gpus()).map_err(SimError::Invalid)?;
            workers.push(worker(spec, gpu, role, pool, o, max_context, pricing)?);
        }
        Ok(Prepared {
            model: spec.name.clone(),
            gpu: gpu.id.clone(),
            gpu_name: gpu.name.clone(),
            options: o.clone(),
            params: spec.params(),
            workers,
            transfer: kv_transfer(spec, gpu, &o.layout, &o.formats, max_context)?,
            max_context,
        })
    }

    /// Replays a closed-loop `load` as a benchmark drives it in its steady state, between two
    /// extremes simulated both: every client's request of a round arriving at once (the first
    /// round, [`Load::first_round`]: each prompt queues behind the whole wave's prefill, and the
    /// decodes share iterations with its chunks), and each client starting at an independent
    /// random moment of one request's latency (see [`Load::staggered`]). Released together, the
    /// simulated users do not stay a wave: they finish one admission apart and return one
    /// admission apart, so from the second round on prompts barely queue; measured runs
    /// re-bunch partly every round, and their mean TTFT grows with the users as a wave's does.
    /// The reported latencies are the independent run's moved the engine's `client_sync` of
    /// the way toward the wave's on a log scale (throughput and engine counters are the
    /// independent run's). Open-loop loads, and a closed loop of one request per client (the
    /// first round alone), run as they are.
    pub fn run_steady(&self, load: &Load) -> Result<ServeSimReport, SimError> {
        // One request per user is the first round alone: every user released together, with
        // no later round to drift out of step in (a burst, as an unbounded rate sends it).
        let super::load::Arrival::Concurrency { clients } = load.arrival else { return self.run(load) };
        if clients <= 1 || load.requests.len() as u64 <= clients {
            return self.run(load);
        }
        let wave = self.run(&load.first_round())?;
        let mut report = self.run(&load.staggered(wave.metrics.e2e_ms.mean / 1e3))?;
        report.metrics = report.metrics.latencies_toward(&wave.metrics, self.options.backend.client_sync);
        Ok(report)
    }

    /// Replays `load` on the deployment exactly as it is given.
    pub fn run(&self, load: &Load) -> Result<ServeSimReport, SimError> {
        if load.max_context() > self.max_context {
            return Err(SimError::Invalid(format!("a request of {} tokens is longer than the {} the deployment was sized for", load.max_context(), self.max_context)));
        }
        let (fixed_ms, per_token_ms) = self.transfer;
        let transfer_ms = move |tokens: u64| fixed_ms + tokens as f64 * per_token_ms;
        let entries: Vec<(Role, EngineConfig, &dyn StepCost)> =
            self.workers.iter().flat_map(|w| (0..w.count).map(move |_| (w.role, w.config, &w.cost as &dyn StepCost))).collect();
        let backend = self.options.backend;
        let server_ms = move |tokens: u64| backend.server_time_ms(tokens);
        let outcome = simulate(load, &Deployment { workers: entries, transfer_ms: &transfer_ms, frontend_ms: backend.frontend_ms, server_ms: &server_ms })?;
        let o = &self.options;
        let gpus = o.layout.gpus();
        Ok(ServeSimReport {
            model: self.model.clone(),
            gpu: self.gpu.clone(),
            gpu_name: self.gpu_name.clone(),
            predictor: "ladder",
            backend: o.backend.name,
            layout: o.layout.label(),
            deployment: o.layout,
            gpus,
            formats: o.formats,
            params_total: self.params.total,
            params_active: self.params.active,
            requests: load.requests.len(),
            max_batched_tokens: o.max_batched_tokens.unwrap_or(o.backend.max_batched_tokens),
            memory: self.workers.iter().map(|w| w.memory).collect(),
            metrics: metrics(&outcome.timelines, gpus, o.slo),
            engine: outcome.stats,
            decode_step: self.typical_decode(load, &outcome.stats),
            notes: Vec::new(),
        })
    }

    /// The decode iteration of the run's mean batch, at the mean context a decoding sequence has.
    fn typical_decode(&self, load: &Load, stats: &EngineStats) -> StepParts {
        let Some(w) = self.workers.iter().find(|w| w.role != Role::Prefill) else { return StepParts::default() };
        let seqs = stats.mean_decode_seqs.round().max(1.0) as u64;
        let n = load.requests.len().max(1) as f64;
        let context = load.requests.iter().map(|r| r.input_len as f64 + r.output_len as f64 / 2.0).sum::<f64>() / n;
        w.cost.parts(&Batch { decode_seqs: seqs, decode_context: (context * seqs as f64) as u64, prefill: Vec::new() })
    }
}

/// `Ok` if `spec` can be served on `gpu` in `formats` by `backend` with requests of up to
/// `max_context` tokens, whatever the layout: a decoder, within its context, in formats the GPU
/// runs, on an engine built for it.
pub fn check_servable(spec: &TransformerSpec, gpu: &Gpu, formats: &Formats, backend: Backend, max_context: u64) -> Result<(), SimError> {
    if !spec.is_decoder() {
        return Err(SimError::Invalid(format!("{} is an encoder; serving needs a decoder model", spec.name)));
    }
    if max_context > spec.max_positions {
        return Err(SimError::Invalid(format!("requests of up to {max_context} tokens exceed the model's context of {} tokens", spec.max_positions)));
    }
    for q in [formats.quant, formats.moe_quant].into_iter().flatten() {
        gpu.check_quant(q).map_err(SimError::Invalid)?;
    }
    backend.check_gpu(gpu).map_err(SimError::Invalid)
}

/// Simulates `load` served by `spec` on `gpu` as `o` describes (closed loops in their steady
/// state, see [`Prepared::run_steady`]).
pub fn serve_sim(spec: &TransformerSpec, gpu: &Gpu, load: &Load, o: &ServeSimOptions) -> Result<ServeSimReport, SimError> {
    Prepared::new(spec, gpu, o, load.max_context())?.run_steady(load)
}

/// Most GPUs in one worker, and most workers in a pool.
const MAX_DEGREE: u64 = 1024;
const MAX_WORKERS: u64 = 4096;

fn check_pool(p: &Pool, which: &str) -> Result<(), SimError> {
    let q = p.parallel;
    let degrees = [q.tp, q.attention_dp, q.moe_tp, q.ep, q.pp];
    if p.workers == 0 || degrees.contains(&0) {
        return Err(SimError::Invalid(format!("{which}workers, tp, attention dp, expert tp and ep must all be at least 1")));
    }
    if p.workers > MAX_WORKERS || degrees.iter().any(|&d| d > MAX_DEGREE) || q.tp * q.attention_dp * q.pp > MAX_DEGREE {
        return Err(SimError::Invalid(format!("{which}layout: 1 to {MAX_WORKERS} workers of at most {MAX_DEGREE} GPUs each")));
    }
    if q.moe_tp * q.ep != q.stage_gpus() {
        return Err(SimError::Invalid(format!("{which}expert tp {} × ep {} must equal tp {} × attention dp {} (a stage's GPUs)", q.moe_tp, q.ep, q.tp, q.attention_dp)));
    }

    Ok(())
}

/// Fixed milliseconds and milliseconds per prompt token of moving a prompt's KV cache from a
/// prefill worker to a decode worker: over NVLink when both fit in one node, else the network.
fn kv_transfer(spec: &TransformerSpec, gpu: &Gpu, layout: &Layout, formats: &Formats, context: u64) -> Result<(f64, f64), SimError> {
    let Layout::Disagg { prefill, decode } = layout else { return Ok((0.0, 0.0)) };
    // Every GPU of the prefill worker sends its own share of the cache over its own link, in
    // parallel: the time is one GPU's bytes per token over one link.
    let share = kv_bytes_per_token(spec, formats, &prefill.parallel, context)?;
    let comm = CommModel::default();
    let gpus = prefill.parallel.gpus() + decode.parallel.gpus();
    let link = if gpus <= 8 { comm.link(gpu, 2) } else { comm.network_link(gpu, 2, None) };
    Ok((link.alpha * 1e3, share / link.bandwidth * 1e3))
}

impl std::str::FromStr for Pool {
    type Err = String;

    /// `tp8`, `tp1,dp8,ep8`, `2xtp4` (two workers), `tp4,ep4,etp1`, `tp4,pp2`: tensor
    /// parallelism of attention (`tp`), attention data parallelism (`dp`), expert parallelism
    /// (`ep`), expert tensor parallelism (`etp`, by default the rest: tp × dp / ep) and pipeline
    /// stages (`pp`, each of tp × dp GPUs). `·` and `×` are accepted
    /// as in wavecast's own labels.
    fn from_str(s: &str) -> Result<Pool, String> {
        let text = s.trim().replace('×', "x").replace('·', ",");
        let (workers, rest) = match text.split_once('x') {
            Some((n, rest)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => (n.parse::<u64>().ok().filter(|w| (1..=MAX_WORKERS).contains(w)).ok_or_else(|| format!("layout '{s}': the worker count must be in 1..={MAX_WORKERS}"))?, rest.to_string()),
            _ => (1, text.clone()),
        };
        let (mut tp, mut dp, mut ep, mut etp, mut pp) = (None, 1, 1, None, 1);
        let mut seen: Vec<String> = Vec::new();
        if rest.trim().is_empty() {
            return Err(format!("layout '{s}' names no parallelism (e.g. tp8, tp1,dp8,ep8, 2xtp4)"));
        }
        for part in rest.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let key_len = part.find(|c: char| c.is_ascii_digit()).ok_or_else(|| format!("layout '{s}': '{part}' has no number (expected e.g. tp8, dp8, ep8, etp1)"))?;
            let (key, value) = part.split_at(key_len);
            if seen.iter().any(|k| k == key) {
                return Err(format!("layout '{s}' gives {key} twice"));
            }
            seen.push(key.to_string());
            let n: u64 = value.parse().ok().filter(|&n| (1..=MAX_DEGREE).contains(&n)).ok_or_else(|| format!("layout '{s}': '{part}' needs a whole number in 1..={MAX_DEGREE}"))?;
            match key {
                "tp" => tp = Some(n),
                "dp" => dp = n,
                "ep" => ep = n,
                "etp" => etp = Some(n),
                "pp" => pp = n,
                other => return Err(format!("layout '{s}': unknown part '{other}' (use tp, dp, ep, etp, pp)")),
            }
        }
        let tp = tp.unwrap_or(1);
        let gpus = tp * dp;
        if gpus * pp > MAX_DEGREE {
            return Err(format!("layout '{s}': 1 to {MAX_WORKERS} workers of at most {MAX_DEGREE} GPUs each"));
        }
        if !gpus.is_multiple_of(ep) {
            return Err(format!("layout '{s}': ep {ep} must divide tp × dp = {gpus}"));
        }
        let moe_tp = etp.unwrap_or(gpus / ep);
        Ok(Pool { workers, parallel: Parallel { tp, attention_dp: dp, moe_tp, ep, pp }, max_seqs: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_ir::DType;

    #[test]
    fn sglang_keeps_activations_outside_its_static_share() {
        // SGLang's reserve for a TP4 worker with an 8,192-token chunk and 1,024 sequences:
        // 512 + 1.5 x 8192 + 2 x 512 + 1024 x 4 / 8 = 14,336 MiB (above the 10 GiB floor of a
        // GPU over 60 GiB); on a 24 GB GPU the floor does not apply.
        let mib = 1024.0 * 1024.0;
        assert_eq!(sglang_reserve_bytes(193.3e9, 8192, 1024, 4), 14336.0 * mib);
        assert_eq!(sglang_reserve_bytes(24e9, 1024, 8, 1), (512.0 + 1.5 * 2048.0 + 16.0 + 128.0) * mib);
        assert_eq!(sglang_reserve_bytes(193.3e9, 2048, 8, 1), 10.0 * 1024.0 * mib);
        // DeepSeek-V3 in FP8 on 4 x B200 (169 GB of weights per GPU), as SGLang ran it: the
        // cache is what the static share leaves beside the weights; counting activations and
        // the runtime inside an 88 % share as well had refused it.
        let spec = wavecast_workload::presets::preset("deepseek-v3").unwrap();
        let gpu = wavecast_gpu::Catalog::shipped().get("b200").unwrap().clone();
        let f = Formats { dtype: DType::Bf16, quant: Some(wavecast_ir::Quant::Fp8Block), moe_quant: Some(wavecast_ir::Quant::Fp8Block), kv: DType::Bf16 };
        let sglang: Backend = "sglang".parse().unwrap();
        let limits = Limits { max_tokens: 8192, max_seqs: 1024, max_context: 9216, chunk_tokens: 8192 };
        let m = worker_memory(&spec, &gpu, &Parallel::tp(4), &f, &sglang, &limits).unwrap();
        let reserve = sglang_reserve_bytes(gpu.memory_bytes(), 8192, 1024, 4);
        assert!((m.kv_cache_gb - (gpu.memory_bytes() - reserve) / 1e9 + m.weights_gb).abs() < 1e-9, "{m:?}");
        assert!(m.kv_tokens > 0);
    }

    #[test]
    fn kv_heads_are_replicated_when_tp_outnumbers_them() {
        // Qwen3-235B-A22B has 4 KV heads: TP 2 keeps 2 per GPU, TP 4 one, and TP 8 still one
        // (each head on two GPUs, as the engines replicate it), not half of one.
        let spec = wavecast_workload::presets::preset("qwen3-235b-a22b").unwrap();
        assert_eq!(spec.kv_heads, 4);
        let f = Formats { dtype: DType::Bf16, quant: None, moe_quant: None, kv: DType::Bf16 };
        let per_gpu = |tp| kv_bytes_per_token(&spec, &f, &Parallel::tp(tp), 4096).unwrap();
        assert!((per_gpu(2) - 2.0 * per_gpu(4)).abs() < 1e-6);
        assert_eq!(per_gpu(8), per_gpu(4));
        // One token's cache on a GPU: every layer's key and value of one 128-wide head, 16-bit.
        assert_eq!(per_gpu(8), (spec.layers * 2 * 128 * 2) as f64);
    }

    /// Qwen3.5-397B on 8 B200s: only its 15 full-attention layers cache tokens, and each
    /// sequence the engine may run reserves its 45 linear layers' state (4 MiB of FP32
    /// recurrent state per layer over 8 GPUs, plus the conv state), so allowing more sequences
    /// leaves fewer cache tokens by exactly that state.
    #[test]
    fn linear_attention_state_is_reserved_per_sequence() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wavecast-workload/tests/fixtures/Qwen--Qwen3.5-397B-A17B_config.json");
        let spec = TransformerSpec::from_json(&std::fs::read_to_string(path).unwrap(), "qwen3.5").unwrap();
        let f = Formats { dtype: DType::Bf16, quant: Some(wavecast_ir::Quant::Fp8), moe_quant: Some(wavecast_ir::Quant::Fp8), kv: DType::Bf16 };
        let par = Parallel::tp(8);
        let gpu = wavecast_gpu::Catalog::shipped().get("b200").unwrap().clone();
        // vLLM's share of memory, so that only the state and the activations move with the
        // sequences (SGLang's reserve also grows with its CUDA-graph batch sizes).
        let backend: Backend = "vllm".parse().unwrap();
        let limits = |max_seqs| Limits { max_tokens: 8192, max_seqs, max_context: 2048, chunk_tokens: 8192 };
        let state = spec.linear_state_bytes(8, DType::Bf16);
        assert_eq!(linear_state_bytes(&spec, &f, &par, &limits(64)), 64.0 * state);
        assert!(state > 45.0 * 4.0 * 1024.0 * 1024.0 / 8.0 * 4.0 / 4.0);
        let few = worker_memory(&spec, &gpu, &par, &f, &backend, &limits(1)).unwrap();
        let many = worker_memory(&spec, &gpu, &par, &f, &backend, &limits(257)).unwrap();
        // The reports show the state beside the other parts (and only for models that have it).
        assert!((many.linear_state_gb - 257.0 * state / 1e9).abs() < 1e-9, "{many:?}");
        assert!(serde_json::to_value(many).unwrap()["linear_state_gb"].as_f64().is_some());
        let per_token = kv_bytes_per_token(&spec, &f, &par, 2048).unwrap();
        assert_eq!(per_token, 15.0 * 2.0 * 256.0 * 2.0, "full-attention layers only, one KV head per GPU");
        // The activations also grow with the sequences (their logits); the state dominates.
        let lost = (few.kv_tokens - many.kv_tokens) as f64 * per_token;
        assert!(lost > 256.0 * state && lost < 256.0 * state * 1.05, "{lost} vs {}", 256.0 * state);
        // Models without linear layers reserve nothing.
        let qwen3 = wavecast_workload::presets::preset("qwen3-235b-a22b").unwrap();
        assert_eq!(linear_state_bytes(&qwen3, &f, &par, &limits(64)), 0.0);
        let plain = worker_memory(&qwen3, &gpu, &par, &f, &backend, &limits(64)).unwrap();
        assert!(serde_json::to_value(plain).unwrap().get("linear_state_gb").is_none());
        assert_eq!(state_capped_seqs(&qwen3, &gpu, &par, &f, &backend, &limits(1024)), 1024);
    }

    /// Qwen3.5-27B on one H200: the state of vLLM's default 1,024 sequences (~158 GB) does not
    /// fit beside the weights, so the engine runs fewer — those whose state takes half the
    /// memory left for the cache — instead of refusing a model the engines serve.
    #[test]
    fn a_default_sequence_limit_is_lowered_to_the_states_that_fit() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wavecast-workload/tests/fixtures/Qwen--Qwen3.5-27B_config.json");
        let spec = TransformerSpec::from_json(&std::fs::read_to_string(path).unwrap(), "qwen3.5-27b").unwrap();
        let f = Formats { dtype: DType::Bf16, quant: None, moe_quant: None, kv: DType::Bf16 };
        let (par, backend) = (Parallel::tp(1), "vllm".parse::<Backend>().unwrap());
        let gpu = wavecast_gpu::Catalog::shipped().get("h200").unwrap().clone();
        let limits = Limits { max_tokens: 8192, max_seqs: 1024, max_context: 1024, chunk_tokens: 8192 };
        assert!(worker_memory(&spec, &gpu, &par, &f, &backend, &limits).is_err(), "1,024 sequences' state does not fit");
        let seqs = state_capped_seqs(&spec, &gpu, &par, &f, &backend, &limits);
        assert!(seqs > 1 && seqs < 1024, "{seqs}");
        let m = worker_memory(&spec, &gpu, &par, &f, &backend, &Limits { max_seqs: seqs, ..limits }).unwrap();
        assert_eq!(m.linear_state_seqs, seqs);
        let pool = cache_bytes(&spec, &gpu, &par, &f, &backend, &Limits { max_seqs: seqs, ..limits }, 0.0);
        assert!(m.linear_state_gb * 1e9 <= STATE_SHARE * pool * 1.001 && m.kv_cache_gb > 0.0, "{m:?}");
    }
}
