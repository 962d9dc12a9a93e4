//! What differs between serving engines, as inputs rather than per-run corrections: their
//! scheduler defaults (token budget, sequence limit, KV page size, memory they give the
//! cache) and their fixed cost per iteration (scheduling, input preparation, sampling and the
//! launch of the captured CUDA graph or the eager kernels).

use serde::Serialize;
use std::str::FromStr;
use wavecast_ir::Engine;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Backend {
    pub name: &'static str,
    /// Default tokens per iteration with chunked prefill.
    pub max_batched_tokens: u64,
    /// Default most running sequences.
    pub max_seqs: u64,
    /// KV page size in tokens.
    pub block_size: u64,
    /// How the engine sizes its KV cache.
    pub kv_rule: KvRule,
    /// Host-side time per iteration not hidden behind GPU work, ms: a fixed part, and a part
    /// per transformer layer the iteration runs (see [`Backend::overhead_ms`]).
    pub iteration_overhead_ms: f64,
    pub layer_overhead_ms: f64,
    /// Host time per sequence the iteration runs, ms, not hidden behind GPU work: scheduling
    /// it, preparing its inputs, detokenizing and streaming its token (see
    /// [`Backend::overhead_ms`]).
    pub seq_overhead_ms: f64,
    /// Prompts before decodes: an iteration with waiting prompts computes only them (SGLang
    /// without `--enable-mixed-chunk`); otherwise running sequences decode first and prompts
    /// fill the rest of the budget (vLLM V1, TensorRT-LLM in-flight batching).
    pub prefill_first: bool,
    /// From a client's request to the engine scheduling it (HTTP, tokenization, routing), ms.
    pub frontend_ms: f64,
    /// The API server's own time per request, which requests sent together wait for one after
    /// another: a fixed ms (HTTP parsing, validation, scheduling the request into the engine)
    /// and µs per prompt token (tokenization).
    pub server_ms: f64,
    pub server_us_per_token: f64,
    /// How far a benchmark's closed loop of identical requests stays in step, from 0 (users at
    /// independent phases) to 1 (every round's requests arriving together as one wave): the
    /// reported latencies lie between the two simulated extremes, this far on a log scale (see
    /// [`super::Prepared::run_steady`]). Prefill-first engines pause every decoding sequence
    /// for each new prompt, so sequences that started together finish together and come back
    /// together; decode-first engines let them drift.
    pub client_sync: f64,
}

/// How an engine sizes its KV cache from the GPU's memory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KvRule {
    /// The engine fills this share of memory with weights, activations, runtime and cache
    /// (vLLM's `gpu_memory_utilization`).
    ShareOfMemory(f64),
    /// The cache takes this share of what is free after weights, activations and runtime
    /// (TensorRT-LLM's `free_gpu_memory_fraction`).
    ShareOfFree(f64),
    /// Weights and cache fill a static share of memory; activations, CUDA graphs and the
    /// runtime live in the reserve left outside it (SGLang's `mem_fraction_static`, derived
    /// when not set from the reserve [`sglang_reserve_bytes`] gives).
    StaticReserve,
}

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

/// The memory SGLang keeps outside `mem_fraction_static` when the flag is not set, bytes: 512
/// MiB, 1.5 MiB per token of the prefill chunk (at least 2,048), 2 MiB per CUDA-graph batch
/// size and 1 GiB per eight GPUs of the TP × PP group, and at least 10 GiB on a GPU of more
/// than 60 GiB (SGLang's `server_args`; its `cuda_graph_max_bs` is taken as the worker's
/// sequence limit, at most 512). The static share is then (capacity − reserve) / capacity.
pub fn sglang_reserve_bytes(capacity_bytes: f64, chunk_tokens: u64, graph_batch: u64, tp_pp: u64) -> f64 {
    let mib = 512.0 + 1.5 * chunk_tokens.max(2048) as f64 + 2.0 * graph_batch.min(512) as f64 + 1024.0 * tp_pp as f64 / 8.0;
    let floor = if capacity_bytes > 60.0 * GIB { 10.0 * GIB } else { 0.0 };
    (mib * MIB).max(floor)
}

impl Backend {
    /// Milliseconds per iteration of a model of `layers` transformer layers that the engine's
    /// own time adds to the kernels. vLLM's is an empirical gap per layer, not a mechanism
    /// modelled: on its runs with at most four users the time per output token left beside the
    /// kernels is 0.5–1.1 ms for gpt-oss-120b (36 layers), 1.6–2.3 ms for Llama-3.1-70B (80) and
    /// 2.5 ms for Kimi-K2.5 (61), where one fixed time per iteration fits none of them; it
    /// absorbs whatever grows with the layers and the graph does not price (kernel gaps beyond the
    /// per-kernel one, small per-layer kernels and collectives missing from the graph).
    ///
    /// Each engine also spends host time per sequence it runs (15–20 µs): on the measured runs
    /// the time per output token left beside the kernels grows with the running sequences and
    /// not with the GPUs that run them. Qwen3-32B on vLLM on H100 at 128 users leaves 4.5–5.0
    /// ms on TP2, TP4 and TP8 alike (about 2 ms at 64 users, none at 16).
    pub fn overhead_ms(&self, layers: u64, seqs: u64) -> f64 {
        self.iteration_overhead_ms + self.layer_overhead_ms * layers as f64 + self.seq_overhead_ms * seqs as f64
    }

    /// `Ok` if the engine runs on `gpu`: TensorRT-LLM is built for NVIDIA GPUs from Ampere on.
    pub fn check_gpu(&self, gpu: &wavecast_gpu::Gpu) -> Result<(), String> {
        if self.engine() == Engine::Trtllm && gpu.vendor != wavecast_gpu::Vendor::Nvidia {
            return Err(format!("TensorRT-LLM runs on NVIDIA GPUs only, not on {} ({}); use --backend vllm or sglang", gpu.id, gpu.name));
        }
        // TensorRT-LLM's supported hardware starts at Ampere (compute capability 8.0); its
        // kernels for older parts are not built or tested.
        if self.engine() == Engine::Trtllm && gpu.compute_major() < 8 {
            return Err(format!("TensorRT-LLM supports Ampere (compute capability 8.0) and newer, not {} (compute capability {}); use --backend vllm or sglang", gpu.id, gpu.compute_capability));
        }
        Ok(())
    }

    /// Milliseconds of API-server time a request with `input_len` prompt tokens takes.
    pub fn server_time_ms(&self, input_len: u64) -> f64 {
        self.server_ms + self.server_us_per_token * input_len as f64 / 1e3
    }
}

/// The engines wavecast knows; values are each engine's documented defaults for GPUs with
/// 70 GB or more (vLLM 0.1x `max_num_batched_tokens` 8192 for the API server, `max_num_seqs`
/// 1024, 16-token pages, `gpu_memory_utilization` 0.9; SGLang `chunked_prefill_size` 8192,
/// page size 1, `mem_fraction_static` derived from its reserve ([`sglang_reserve_bytes`]); TensorRT-LLM `max_num_tokens` 8192,
/// `max_batch_size` 2048, 32-token pages, 90 % of free memory for the cache).
///
/// `client_sync` is fitted the same way, one value per admission policy over every predicted
/// row of both measured GPUs (0.65 prefill first, 0.3 decode first; README, *Clients and
/// engines*). Every constant here is refitted (the two below in their order, then `client_sync`,
/// then the two again, then the host time per sequence) when the kernel prices under them
/// change; when the host time per sequence was added (SGLang's iteration time 1.7 →
/// 1.6 ms, vLLM's per layer 20 → 15 µs; every other constant kept its value). Last, when
/// collectives of 2 and 4 GPUs first read their measured tables (they had been priced by
/// physics at about twice the measured time), only vLLM's per-layer time was refitted, 15 →
/// 25 µs (its runs with at most four users: TPOT 15.5 → 13.4 % mean APE; 30 µs gave 13.5,
/// 20 µs 14.2); the other constants were not refitted.
///
/// Two numbers per engine are fitted to measurements (`eval serving` on AIConfigurator's runs),
/// neither depending on the GPU: `frontend_ms`, the HTTP server, tokenizer and router in front
/// of the engine, the least mean TTFT APE of each engine's runs with at most four users (grid
/// of 10 ms: 20, 140 and 30 ms), and `iteration_overhead_ms`, the median gap of their time per
/// output token (SGLang 1.6 ms; TensorRT-LLM's is negative, −0.2 ms, so none). vLLM's host time
/// is per layer instead (`layer_overhead_ms`, 25 µs: the least mean TPOT APE of its runs with at
/// most four users, over gpt-oss-120b, Llama-3.1-70B, Kimi-K2.5 and MiniMax-M2.5 on H100 and
/// B200, grid of 5 µs). `seq_overhead_ms`, the host time per running sequence, is the least
/// mean TPOT APE of each engine's runs at every load (grid of 5 µs: 20, 20 and 15 µs), leaving
/// out the nine runs whose time per output token falls with load (gpt-oss-120b on H100 at 512
/// users: 3.6–5.6 ms, against 5.8–16.5 ms for the same deployments at 32 users).
pub const BACKENDS: &[Backend] = &[
    Backend { name: "vllm", max_batched_tokens: 8192, max_seqs: 1024, block_size: 16, kv_rule: KvRule::ShareOfMemory(0.90), iteration_overhead_ms: 0.0, layer_overhead_ms: 0.025, seq_overhead_ms: 0.02, prefill_first: false, frontend_ms: 20.0, server_ms: 1.9, server_us_per_token: 1.3, client_sync: 0.3 },
    Backend { name: "sglang", max_batched_tokens: 8192, max_seqs: 1024, block_size: 1, kv_rule: KvRule::StaticReserve, iteration_overhead_ms: 1.6, layer_overhead_ms: 0.0, seq_overhead_ms: 0.02, prefill_first: true, frontend_ms: 140.0, server_ms: 1.9, server_us_per_token: 1.3, client_sync: 0.65 },
    Backend { name: "trtllm", max_batched_tokens: 8192, max_seqs: 2048, block_size: 32, kv_rule: KvRule::ShareOfFree(0.90), iteration_overhead_ms: 0.0, layer_overhead_ms: 0.0, seq_overhead_ms: 0.015, prefill_first: false, frontend_ms: 30.0, server_ms: 1.9, server_us_per_token: 1.3, client_sync: 0.3 },
];

impl Backend {
    /// `engine`'s entry of [`BACKENDS`] (one per [`Engine`], tested).
    pub fn of(engine: Engine) -> Backend {
        *BACKENDS.iter().find(|b| b.name == engine.name()).expect("BACKENDS lists every engine (tested)")
    }

    /// The engine this is the table of.
    pub fn engine(&self) -> Engine {
        self.name.parse().expect("BACKENDS names only engines (tested)")
    }
}

impl FromStr for Backend {
    type Err = String;

    /// Any of [`Engine`]'s spellings.
    fn from_str(s: &str) -> Result<Backend, String> {
        s.parse().map(Backend::of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine table and the one list of engines name the same engines in the same order.
    #[test]
    fn the_engine_table_has_one_entry_per_engine() {
        let names: Vec<&str> = BACKENDS.iter().map(|b| b.name).collect();
        assert_eq!(names, Engine::NAMES);
        for e in Engine::ALL {
            assert_eq!(Backend::of(e).engine(), e);
        }
        assert_eq!("TensorRT-LLM".parse::<Backend>().map(|b| b.engine()), Ok(Engine::Trtllm));
        assert!("tgi".parse::<Backend>().unwrap_err().contains("vllm, sglang, trtllm"));
    }

    /// The README's table of engine constants states the values this table holds: each row's
    /// three engine columns (vLLM, SGLang, TensorRT-LLM; `same` repeats the column before)
    /// parse to the field it names, so a refit that leaves the README behind fails here.
    #[test]
    fn the_readme_states_the_engine_constants_this_table_holds() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let readme = std::fs::read_to_string(path).expect("README.md at the workspace root");
        let row = |name: &str| -> Vec<String> {
            let line = readme.lines().find(|l| l.starts_with(&format!("| `{name}`"))).unwrap_or_else(|| panic!("README has no row for `{name}`"));
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let mut out: Vec<String> = Vec::new();
            for cell in &cells[2..5] {
                let value = if *cell == "same" { out.last().cloned().expect("`same` follows a value") } else { cell.to_string() };
                out.push(value);
            }
            out
        };
        let leading = |cell: &str| -> f64 { cell.split_whitespace().next().and_then(|w| w.parse().ok()).unwrap_or_else(|| panic!("no number at the start of '{cell}'")) };
        let numbers = |name: &str, field: fn(&Backend) -> f64| {
            let stated: Vec<f64> = row(name).iter().map(|c| leading(c)).collect();
            let held: Vec<f64> = BACKENDS.iter().map(field).collect();
            assert_eq!(stated, held, "README's `{name}` row (vLLM, SGLang, TensorRT-LLM)");
        };
        numbers("max_batched_tokens", |b| b.max_batched_tokens as f64);
        numbers("frontend_ms", |b| b.frontend_ms);
        numbers("server_ms", |b| b.server_ms);
        numbers("iteration_overhead_ms", |b| b.iteration_overhead_ms);
        numbers("seq_overhead_ms", |b| b.seq_overhead_ms);
        numbers("layer_overhead_ms", |b| b.layer_overhead_ms);
        numbers("client_sync", |b| b.client_sync);
        let per_token: Vec<f64> = row("server_ms").iter().map(|c| c.split('+').nth(1).map(leading).expect("'… ms + … µs/token'")).collect();
        assert_eq!(per_token, BACKENDS.iter().map(|b| b.server_us_per_token).collect::<Vec<_>>(), "README's `server_us_per_token`");
        let first: Vec<bool> = row("prefill_first").iter().map(|c| c == "yes").collect();
        assert_eq!(first, BACKENDS.iter().map(|b| b.prefill_first).collect::<Vec<_>>(), "README's `prefill_first` row");
    }

    /// TensorRT-LLM is refused where it is not built: other vendors and NVIDIA parts before
    /// Ampere; the other engines run there.
    #[test]
    fn tensorrt_llm_runs_on_nvidia_from_ampere_on() {
        let cat = wavecast_gpu::Catalog::builtin();
        let trtllm = Backend::of(Engine::Trtllm);
        for (gpu, runs) in [("a100-sxm-80gb", true), ("h100-sxm", true), ("l40s", true), ("v100-sxm2", false), ("t4", false), ("mi300x", false)] {
            let g = cat.get(gpu).unwrap();
            assert_eq!(trtllm.check_gpu(g).is_ok(), runs, "{gpu}: {:?}", trtllm.check_gpu(g));
            assert!(Backend::of(Engine::Vllm).check_gpu(g).is_ok(), "{gpu}");
        }
        assert!(trtllm.check_gpu(cat.get("t4").unwrap()).unwrap_err().contains("compute capability 7.5"));
    }
}
