//! `plan serve`: every way to serve a model on N GPUs of one type — aggregated workers of each
//! tensor, attention-data and expert-parallel layout, and disaggregated prefill and decode
//! pools — each simulated over a sweep of concurrencies. Points that meet the latency target
//! are ranked by output tokens per second per GPU; the Pareto front of throughput per GPU
//! against speed per user is what a chart shows.

use super::backend::Backend;
use super::cost::{Formats, Parallel};
use super::deploy::{Layout, Pool, Prepared, ServeSimOptions};
use super::load::{closed_loop_requests, Arrival, Lengths, Load, MAX_TOKENS};
use super::metrics::Slo;
use crate::reasons::SetAside;
use crate::SimError;
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_workload::TransformerSpec;

/// GPUs one server joins by NVLink; a worker's tensor-parallel group stays inside it.
const NODE_GPUS: u64 = wavecast_predict::comm::SERVER_GPUS;
/// Workers of a mixture-of-experts model may also be wider than one server, each GPU its own
/// attention rank and its share of the experts (attention-DP × EP, as wide-EP deployments run
/// DeepSeek-class models), their all-to-all over the network: these sizes, where they divide N.
const WIDE_EP_GPUS: [u64; 3] = [16, 32, 64];
/// Most users per worker a plan tries.
const MAX_USERS_PER_WORKER: u64 = 4096;

/// Users per worker a plan tries when none are given: powers of two from one to the batch a
/// serving engine typically caps (256 sequences).
pub const DEFAULT_USERS_PER_WORKER: [u64; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanServeRequest {
    pub gpus: u64,
    pub input_len: u64,
    pub output_len: u64,
    pub slo: Slo,
    pub formats: Formats,
    pub backend: Backend,
    /// Concurrent requests per worker to try (per decode worker when disaggregated).
    pub concurrency: Vec<u64>,
    /// Also search disaggregated prefill/decode pools.
    pub disaggregated: bool,
    /// The price ladder's measured tables (see [`super::ServeSimOptions::ops_data`]).
    pub ops_data: Option<std::path::PathBuf>,
}

/// One simulated point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanPoint {
    pub layout: String,
    pub mode: &'static str,
    pub gpus_used: u64,
    pub concurrency: u64,
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    pub tokens_per_s_per_gpu: f64,
    pub tokens_per_s_per_user: f64,
    pub meets_slo: bool,
    /// On the Pareto front of (tokens/s/user, tokens/s/GPU) among all points.
    pub pareto: bool,
    /// What was simulated: one unit of the layout (a worker, or the smallest prefill:decode
    /// set) with its share of the users, as `serve-sim` flags; the point is that unit's
    /// latencies and its throughput per GPU, `copies` times over.
    pub unit: String,
    pub unit_users: u64,
    pub copies: u64,
    /// The whole deployment as `serve-sim` flags: all copies behind one router.
    pub pooled: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanServeReport {
    pub model: String,
    pub gpu: String,
    pub gpus: u64,
    pub input_len: u64,
    pub output_len: u64,
    pub slo: Slo,
    pub backend: &'static str,
    /// Best point of each layout that meets the SLO, best first.
    pub ranked: Vec<PlanPoint>,
    /// Every simulated point.
    pub points: Vec<PlanPoint>,
    /// Layouts set aside, grouped by reason (where numbers differ within a group, their range),
    /// with how many.
    pub rejected: BTreeMap<String, u64>,
    /// What the answer settled that the request left open (see the serve-sim report's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn divisors_up_to(n: u64, most: u64) -> Vec<u64> {
    (1..=n.min(most)).filter(|d| n.is_multiple_of(*d)).collect()
}

/// Worker sizes an aggregated deployment of `n` GPUs is searched with: every divisor of `n` in
/// a node, and every power of two in a node below `n`, whose copies leave the remainder idle
/// (7 GPUs serve a model that needs four as one TP4 worker, "4 of 7 GPUs").
fn worker_sizes(n: u64) -> Vec<u64> {
    let mut sizes = divisors_up_to(n, NODE_GPUS);
    sizes.extend([2, 4, 8].into_iter().filter(|&g| g < n && g <= NODE_GPUS));
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The parallel layouts of a worker of `g` GPUs: tensor parallel everywhere; two pipeline
/// stages of g/2 GPUs; and for a mixture of experts also expert parallel under tensor-parallel
/// attention, and under data-parallel attention.
fn worker_layouts(spec: &TransformerSpec, g: u64) -> Vec<Parallel> {
    let mut v = vec![Parallel::tp(g)];
    if g > 1 && g.is_multiple_of(2) {
        v.push(Parallel { pp: 2, ..Parallel::tp(g / 2) });
    }
    if spec.moe.is_some() && g > 1 {
        v.push(Parallel { tp: g, attention_dp: 1, moe_tp: 1, ep: g, pp: 1 });
        v.push(Parallel { tp: 1, attention_dp: g, moe_tp: 1, ep: g, pp: 1 });
    }
    v
}

/// Pipeline stages a worker may span servers with: a model too large for one server's GPUs
/// runs as a server's GPUs in tensor parallel per stage, the stages on servers of their own.
const SERVER_STAGES: [u64; 2] = [2, 4];

/// Workers of `n` GPUs that span servers ([`SERVER_STAGES`]): each whole, so `n` must be a
/// multiple of their size.
fn across_servers(n: u64) -> impl Iterator<Item = (u64, Parallel)> {
    SERVER_STAGES.into_iter().map(|pp| (NODE_GPUS * pp, pp)).filter(move |&(g, _)| n.is_multiple_of(g)).map(|(g, pp)| (g, Parallel { pp, ..Parallel::tp(NODE_GPUS) }))
}

/// A deployment of all N GPUs and the smallest unit of it, which is what is simulated, with the
/// users divided by `copies`: the copies are taken to serve their shares independently (as
/// routers that pin a client to one copy do), which a search over every layout and load can
/// afford at any GPU count. A router pooling all copies (`serve-sim` with the full layout)
/// sends each request to the least loaded copy, which evens out their queues: its TTFT came
/// out 2–22 % shorter on H100 (Llama-3.1-70B as 2×tp4 at 128 users each: 736 ms one copy,
/// 577 ms pooled; Llama-3.1-8B as 8×tp1 at 256 each: 318 against 311 ms), TPOT within 4 %.
struct Candidate {
    full: Layout,
    unit: Layout,
    copies: u64,
}

/// Most workers in a disaggregated unit (prefill plus decode): wider ratios are not searched.
const MAX_UNIT_WORKERS: u64 = 8;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Aggregated deployments of identical workers using all `n` GPUs, and disaggregated ones
/// splitting them into prefill and decode pools in a ratio of at most [`MAX_UNIT_WORKERS`].
fn candidates(spec: &TransformerSpec, n: u64, disaggregated: bool) -> Vec<Candidate> {
    let pool = |workers, parallel| Pool { workers, parallel, max_seqs: None };
    let mut out = Vec::new();
    let wide_ep = WIDE_EP_GPUS.into_iter().filter(|&g| spec.moe.is_some() && g > NODE_GPUS && n.is_multiple_of(g));
    let wide_ep = wide_ep.map(|g| (g, Parallel { tp: 1, attention_dp: g, moe_tp: 1, ep: g, pp: 1 }));
    let in_node = worker_sizes(n).into_iter().flat_map(|g| worker_layouts(spec, g).into_iter().map(move |p| (g, p)));
    for (g, parallel) in in_node.chain(wide_ep).chain(across_servers(n)) {
        out.push(Candidate { full: Layout::Agg { pool: pool(n / g, parallel) }, unit: Layout::Agg { pool: pool(1, parallel) }, copies: n / g });
    }
    if !disaggregated {
        return out;
    }
    let sizes: Vec<u64> = [1, 2, 4, 8].into_iter().filter(|&g| g < n && g <= NODE_GPUS).collect();
    for &gp in &sizes {
        for &gd in &sizes {
            for p in 1..MAX_UNIT_WORKERS {
                for d in 1..=(MAX_UNIT_WORKERS - p) {
                    let unit_gpus = p * gp + d * gd;
                    if gcd(p, d) != 1 || !n.is_multiple_of(unit_gpus) {
                        continue;
                    }
                    let copies = n / unit_gpus;
                    let prefill = worker_layouts(spec, gp)[0];
                    for decode in worker_layouts(spec, gd) {
                        out.push(Candidate {
                            full: Layout::Disagg { prefill: pool(p * copies, prefill), decode: pool(d * copies, decode) },
                            unit: Layout::Disagg { prefill: pool(p, prefill), decode: pool(d, decode) },
                            copies,
                        });
                    }
                }
            }
        }
    }
    out
}

fn decode_workers(l: &Layout) -> u64 {
    match l {
        Layout::Agg { pool } => pool.workers,
        Layout::Disagg { decode, .. } => decode.workers,
    }
}

/// Marks the points no other point beats on both axes.
fn mark_pareto(points: &mut [PlanPoint]) {
    for i in 0..points.len() {
        let (u, g) = (points[i].tokens_per_s_per_user, points[i].tokens_per_s_per_gpu);
        points[i].pareto = !points.iter().any(|q| q.tokens_per_s_per_user >= u && q.tokens_per_s_per_gpu >= g && (q.tokens_per_s_per_user > u || q.tokens_per_s_per_gpu > g));
    }
}

/// Searches layouts and concurrencies; `progress(done, total)` after each layout. A point meets
/// the target when its mean TTFT and mean TPOT are within it.
pub fn plan_serve(spec: &TransformerSpec, gpu: &Gpu, req: &PlanServeRequest, progress: &dyn Fn(usize, usize)) -> Result<PlanServeReport, SimError> {
    if req.gpus == 0 || req.gpus > 1024 {
        return Err(SimError::Invalid(format!("--gpus {} must be in 1..=1024", req.gpus)));
    }
    if req.concurrency.is_empty() || req.concurrency.contains(&0) {
        return Err(SimError::Invalid("concurrencies must be at least 1".into()));
    }
    if req.input_len == 0 || req.output_len == 0 || req.input_len > MAX_TOKENS || req.output_len > MAX_TOKENS {
        return Err(SimError::Invalid(format!("input and output lengths must be in 1..={MAX_TOKENS} tokens")));
    }
    if let Some(&c) = req.concurrency.iter().find(|&&c| c > MAX_USERS_PER_WORKER) {
        return Err(SimError::Invalid(format!("{c} users per worker is past the {MAX_USERS_PER_WORKER} plan serve tries")));
    }
    if req.slo.tpot_ms.is_some() && req.output_len < 2 {
        return Err(SimError::Invalid("a TPOT target needs an output of at least 2 tokens".into()));
    }
    let context = req.input_len + req.output_len;
    // What no layout changes is refused once, as serve-sim refuses it, not set aside per layout.
    super::deploy::check_servable(spec, gpu, &req.formats, req.backend, context)?;
    let candidates = candidates(spec, req.gpus, req.disaggregated);
    let mut points = Vec::new();
    let mut rejected = SetAside::default();
    for (i, c) in candidates.iter().enumerate() {
        progress(i, candidates.len());
        let options = ServeSimOptions { layout: c.unit, formats: req.formats, backend: req.backend, max_batched_tokens: None, chunk_tokens: None, chunked_prefill: true, prefix_caching: false, shared_prefix: 0, slo: Some(req.slo), ops_data: req.ops_data.clone() };
        let prepared = match Prepared::new(spec, gpu, &options, context) {
            Ok(p) => p,
            Err(e) => {
                rejected.add(&e.to_string());
                continue;
            }
        };
        for &users in &req.concurrency {
            let clients = users * decode_workers(&c.unit);
            let load = Load::synthetic(closed_loop_requests(clients), Arrival::Concurrency { clients }, Lengths::Fixed { tokens: req.input_len }, Lengths::Fixed { tokens: req.output_len }, 0)?;
            let r = match prepared.run_steady(&load) {
                Ok(r) => r,
                Err(e) => {
                    rejected.add(&e.to_string());
                    continue;
                }
            };
            let m = &r.metrics;
            points.push(PlanPoint {
                layout: c.full.label(),
                mode: if matches!(c.full, Layout::Agg { .. }) { "agg" } else { "disagg" },
                gpus_used: c.full.gpus(),
                concurrency: clients * c.copies,
                ttft_ms: m.ttft_ms.mean,
                tpot_ms: m.tpot_ms.mean,
                tokens_per_s_per_gpu: m.output_tokens_per_s_per_gpu,
                tokens_per_s_per_user: m.tokens_per_s_per_user,
                meets_slo: req.slo.met(m.ttft_ms.mean, m.tpot_ms.mean),
                pareto: false,
                unit: c.unit.serve_sim_flags(),
                unit_users: clients,
                copies: c.copies,
                pooled: c.full.serve_sim_flags(),
            });
        }
    }
    progress(candidates.len(), candidates.len());
    mark_pareto(&mut points);
    let mut best: BTreeMap<String, PlanPoint> = BTreeMap::new();
    for p in points.iter().filter(|p| p.meets_slo) {
        let slot = best.entry(p.layout.clone()).or_insert_with(|| p.clone());
        if p.tokens_per_s_per_gpu > slot.tokens_per_s_per_gpu {
            *slot = p.clone();
        }
    }
    let mut ranked: Vec<PlanPoint> = best.into_values().collect();
    ranked.sort_by(|a, b| b.tokens_per_s_per_gpu.total_cmp(&a.tokens_per_s_per_gpu));
    Ok(PlanServeReport {
        model: spec.name.clone(),
        gpu: gpu.id.clone(),
        gpus: req.gpus,
        input_len: req.input_len,
        output_len: req.output_len,
        slo: req.slo,
        backend: req.backend.name,
        ranked,
        points,
        rejected: rejected.into_counts(),
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(u: f64, g: f64) -> PlanPoint {
        PlanPoint { layout: String::new(), mode: "agg", gpus_used: 1, concurrency: 1, ttft_ms: 1.0, tpot_ms: 1.0, tokens_per_s_per_gpu: g, tokens_per_s_per_user: u, meets_slo: true, pareto: false, unit: String::new(), unit_users: 1, copies: 1, pooled: String::new() }
    }

    /// A MoE model on 32 GPUs is also tried as wide attention-DP × EP workers of 16 and 32
    /// GPUs; a dense model's workers stay inside one server.
    #[test]
    fn moe_models_get_wide_expert_parallel_workers_across_servers() {
        let widest = |name: &str| -> Vec<u64> {
            let spec = wavecast_workload::presets::preset(name).unwrap();
            candidates(&spec, 32, false)
                .iter()
                .filter_map(|c| match c.unit {
                    Layout::Agg { pool } if pool.parallel.gpus() > NODE_GPUS && pool.parallel.pp == 1 => Some(pool.parallel.ep),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(widest("deepseek-v3"), [16, 32]);
        assert!(widest("llama-3.1-70b").is_empty());
    }

    /// On 16 and 32 GPUs any model is also tried as a server's GPUs in tensor parallel per
    /// pipeline stage, the stages on servers of their own (Llama-3.1-70B on 16 T4s fits no
    /// server); on 12 no whole worker of two servers fits.
    #[test]
    fn workers_span_servers_by_pipeline_stages() {
        let spec = wavecast_workload::presets::preset("llama-3.1-70b").unwrap();
        let spanning = |n| -> Vec<(u64, u64)> {
            candidates(&spec, n, false)
                .iter()
                .filter_map(|c| match c.unit {
                    Layout::Agg { pool } if pool.parallel.gpus() > NODE_GPUS => Some((pool.parallel.tp, pool.parallel.pp)),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(spanning(16), [(8, 2)]);
        assert_eq!(spanning(32), [(8, 2), (8, 4)]);
        assert!(spanning(12).is_empty());
    }

    /// Seven GPUs are searched as workers of 1, 2, 4 (leaving GPUs idle) and 7, so a model
    /// that needs four GPUs finds a deployment on seven as it does on four, five or eight.
    #[test]
    fn worker_sizes_leave_a_remainder_idle_rather_than_skip_a_size() {
        assert_eq!(worker_sizes(7), [1, 2, 4, 7]);
        assert_eq!(worker_sizes(8), [1, 2, 4, 8]);
        assert_eq!(worker_sizes(6), [1, 2, 3, 4, 6]);
        assert_eq!(worker_sizes(1), [1]);
        assert_eq!(worker_sizes(16), [1, 2, 4, 8]);
    }

    #[test]
    fn the_pareto_front_keeps_only_undominated_points() {
        let mut p = vec![point(10.0, 100.0), point(20.0, 50.0), point(5.0, 90.0), point(20.0, 40.0), point(10.0, 100.0)];
        mark_pareto(&mut p);
        assert_eq!(p.iter().map(|p| p.pareto).collect::<Vec<_>>(), vec![true, true, false, false, true]);
    }
}
