//! Serving under load against measured runs: every row of AIConfigurator's
//! `silicon_sample.csv` layout (model, system, backend, precision, aggregated or disaggregated
//! layout, prompt and output length, concurrency; measured mean TTFT and TPOT) is replayed by
//! the continuous-batching simulator with the row's own inputs and nothing fitted to it. Rows
//! that cannot be replayed are listed with the reason, never dropped.

use crate::EvalError;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wavecast_data::silicon::{read_silicon, Deployment, ServingLayout, SiliconRow};
use wavecast_gpu::Catalog;
use wavecast_ir::{DType, Engine, Quant};
use wavecast_predict::ladder::{Ladder, LadderOps, Tables};
use wavecast_predict::sustained::{self, FitOptions};
use wavecast_sim::serving::{self, Arrival, Backend, Formats, Layout, Lengths, Load, Parallel, Pool, ServeSimOptions};
use wavecast_stats::{ape, mean, median, quantile_sorted, sorted};
use wavecast_workload::TransformerSpec;

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    pub system: String,
    pub model: String,
    pub backend: String,
    pub precision: String,
    pub mode: &'static str,
    /// Users in the closed loop (the file's batch size or silicon concurrency).
    pub concurrency: u64,
    pub measured_ttft_ms: f64,
    pub predicted_ttft_ms: f64,
    pub measured_tpot_ms: f64,
    pub predicted_tpot_ms: f64,
    /// Whose kernel measurements priced it ([`kernel_tables`]): `sglang`, `vllm (no sglang
    /// tables)`, `vllm (shipped)`.
    pub kernel_tables: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Unpredicted {
    pub id: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub group: String,
    pub n: usize,
    pub ttft_mean_ape: f64,
    pub tpot_mean_ape: f64,
    pub ttft_median_ape: f64,
    pub tpot_median_ape: f64,
    pub ttft_p90_ape: f64,
    pub tpot_p90_ape: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServingEval {
    pub predictor: &'static str,
    /// True when each row's per-op models were refitted without any measurement of its GPU.
    pub leave_one_gpu_out: bool,
    pub rows: Vec<Row>,
    pub unpredicted: Vec<Unpredicted>,
    pub summary: Vec<Group>,
}

/// The config file of a Hugging Face model id in `dir` (files named `org--name_config.json`):
/// the exact name, else the same name under any organisation, else without a checkpoint
/// suffix (`-Instruct`, `-FP8`, `-FP4`, `-NVFP4`: a quantized checkpoint has its base model's
/// architecture) or with Meta's `Meta-` prefix.
pub fn config_path(dir: &Path, model: &str) -> Option<PathBuf> {
    let exact = dir.join(format!("{}_config.json", model.replace('/', "--")));
    if exact.is_file() {
        return Some(exact);
    }
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    let mut candidates = vec![name.clone(), format!("meta-{name}")];
    for suffix in ["-instruct", "-nvfp4", "-fp4", "-fp8"] {
        if let Some(stem) = name.strip_suffix(suffix) {
            candidates.push(stem.to_string());
            candidates.push(format!("meta-{stem}"));
        }
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    candidates.iter().find_map(|c| {
        files.iter().find(|f| f.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix("_config.json")).and_then(|n| n.split("--").nth(1)).is_some_and(|n| n.eq_ignore_ascii_case(c))).cloned()
    })
}

/// The KV cache type of a run: FP8 where the layers' activations are quantized (FP8 and FP4
/// runs serve an FP8 cache), 16-bit for BF16 and weight-only runs.
fn kv_dtype(gemm: Option<Quant>, moe: Option<Quant>) -> DType {
    if gemm.or(moe).is_some_and(Quant::quantizes_activations) {
        DType::Fp8
    } else {
        DType::Bf16
    }
}

/// A worker's layout as the file gives it. Its MoE columns say 1 × 1 where the engine's
/// default applies (and for dense models): the experts then split like the rest, over every
/// GPU of the worker, by expert tensor parallelism unless an EP degree is given.
fn parallel(l: &ServingLayout) -> Result<Parallel, String> {
    let gpus = l.tp * l.attention_dp;
    let (moe_tp, ep) = match (l.moe_tp, l.moe_ep) {
        (t, e) if t * e == gpus => (t, e),
        (_, e) if e > 1 && gpus.is_multiple_of(e) => (gpus / e, e),
        _ => (gpus, 1),
    };
    Ok(Parallel { tp: l.tp, attention_dp: l.attention_dp, moe_tp, ep, pp: l.pp })
}

/// A disaggregated run needs both pools' worker counts. No other column implies them: the
/// file has no total GPU count, and the pools' batch sizes are missing exactly where the worker
/// counts are (all 393 such rows of the shared file: DeepSeek-R1 on SGLang and TensorRT-LLM,
/// which give each pool's parallel layout only). The reason names the empty columns.
fn check_worker_counts(prefill: &wavecast_data::silicon::Pool, decode: &wavecast_data::silicon::Pool) -> Result<(), String> {
    let missing: Vec<&str> = [(prefill.workers, "prefill_num_workers"), (decode.workers, "decode_num_workers")].into_iter().filter(|(w, _)| !w.is_some_and(|w| w > 0)).map(|(_, name)| name).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!("disaggregated run without worker counts: {} empty (no other column implies how many prefill and decode workers ran)", missing.join(" and ")))
}

fn layout(row: &SiliconRow) -> Result<Layout, String> {
    Ok(match row.deployment {
        Deployment::Agg { layout, workers } => {
            let users = row.concurrency.unwrap_or(0);
            let workers = workers.ok_or_else(|| format!("aggregated run of {users} users, more than one worker's batch_size x attention_dp_size and not batch_size x tp_size: the file gives no worker count"))?;
            Layout::Agg { pool: Pool { workers, parallel: parallel(&layout)?, max_seqs: None } }
        }
        Deployment::Disagg { prefill, decode } => {
            check_worker_counts(&prefill, &decode)?;
            let workers = |p: &wavecast_data::silicon::Pool, which: &str| p.workers.filter(|&w| w > 0).ok_or_else(|| format!("the file gives no {which}_num_workers"));
            // A pool's batch size is per attention-data-parallel rank, as the engines take it.
            let max_seqs = |p: &wavecast_data::silicon::Pool| p.batch.map(|b| b * p.layout.attention_dp);
            Layout::Disagg {
                prefill: Pool { workers: workers(&prefill, "prefill")?, parallel: parallel(&prefill.layout)?, max_seqs: max_seqs(&prefill) },
                decode: Pool { workers: workers(&decode, "decode")?, parallel: parallel(&decode.layout)?, max_seqs: max_seqs(&decode) },
            }
        }
    })
}

/// A slot filled once by whichever thread gets there first; the others wait for it.
type Once<T> = std::sync::Arc<std::sync::OnceLock<Result<T, String>>>;
type Slots<T> = std::sync::Mutex<std::collections::HashMap<String, Once<T>>>;

/// What the rows share, each built once however many rows ask.
#[derive(Default)]
struct Shared {
    /// Deployments priced, by everything a price depends on (model, GPU, options, the longest
    /// request and which per-op models): rows that differ only in their number of users share
    /// one, so the iteration tables are built once per deployment rather than once per row.
    deployments: Slots<std::sync::Arc<serving::Prepared>>,
    /// The iteration parts priced so far, per set of per-op models: deployments that differ in
    /// engine, limits or lengths share most of their graphs, each priced once.
    parts: std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<serving::PriceCache>>>,
    /// Mean TTFT and TPOT of a deployment under a load, by the deployment's key and the load's
    /// users and lengths: a third of the shared file's rows repeat another's inputs exactly
    /// (another engine version, another measurement) and get the same simulation.
    runs: Slots<(f64, f64)>,
}

fn once<T: Clone>(slots: &Slots<T>, key: String, build: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    let slot = slots.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default().clone();
    slot.get_or_init(build).clone()
}

impl Shared {
    fn parts(&self, ops_key: &str) -> std::sync::Arc<serving::PriceCache> {
        self.parts.lock().unwrap_or_else(|e| e.into_inner()).entry(ops_key.to_string()).or_default().clone()
    }
}

/// Predicts one row's mean TTFT and TPOT with the per-op models `ops` (`ops_key` names them), or
/// says why it cannot. Returns the row's users too.
fn predict_row(row: &SiliconRow, spec: &TransformerSpec, catalog: &Catalog, ops: &LadderOps, ops_key: &str, shared: &Shared) -> Result<(u64, f64, f64, String), String> {
    let gpu = catalog.get(&row.system).map_err(|e| e.to_string())?;
    let backend: Backend = row.backend.parse()?;
    // The row's engine asks for its own kernel tables first; its parts are cached apart.
    let ops = &ops.with_engine(backend.name);
    let ops_key = &format!("{ops_key}|{}", backend.name);
    let gemm_quant = Quant::parse_optional(&row.gemm_quant)?;
    let (mut gemm, mut moe) = (gemm_quant, Quant::parse_optional(&row.moe_quant)?.or(gemm_quant));
    if moe == Some(Quant::Nvfp4) && gpu.peak_tflops.fp4.is_none() {
        // A GPU without FP4 units runs a weight-only 4-bit checkpoint (gpt-oss's MXFP4 on
        // Hopper) dequantized to 16 bits: the model's own format, where it has one.
        match spec.checkpoint_quant.filter(|q| !q.quantizes_activations()) {
            Some(q) => (gemm, moe) = (None, Some(q)),
            None => return Err(format!("{} has no FP4 units and the checkpoint has no weight-only 4-bit format to run instead", gpu.id)),
        }
    }
    let formats = Formats { dtype: DType::Bf16, quant: gemm, moe_quant: moe, kv: kv_dtype(gemm, moe) };
    let options = ServeSimOptions { layout: layout(row)?, formats, backend, max_batched_tokens: None, chunk_tokens: None, chunked_prefill: true, prefix_caching: false, shared_prefix: 0, slo: None, ops_data: None };
    let clients = row.concurrency.ok_or("the file gives no concurrency (batch_size or silicon_concurrency)")?;
    let load = Load::synthetic(serving::benchmark_requests(clients), Arrival::Concurrency { clients }, Lengths::Fixed { tokens: row.isl }, Lengths::Fixed { tokens: row.osl }, 0).map_err(|e| e.to_string())?;
    let key = format!("{}|{}|{}|{:?}|{}", spec.name, gpu.id, ops_key, options, load.max_context());
    let run_key = format!("{key}|{clients}|{}|{}", row.isl, row.osl);
    let (ttft, tpot) = once(&shared.runs, run_key, || {
        let parts = shared.parts(ops_key);
        let prepared = once(&shared.deployments, key, || serving::Prepared::with_pricing(spec, gpu, &options, load.max_context(), serving::Pricing::ladder_cached(ops, &parts)).map(std::sync::Arc::new).map_err(|e| e.to_string()))?;
        let r = prepared.run_steady(&load).map_err(|e| e.to_string())?;
        Ok((r.metrics.ttft_ms.mean, r.metrics.tpot_ms.mean))
    })?;
    Ok((clients, ttft, tpot, kernel_tables(ops, backend.engine())))
}

/// Mean, median and 90th-percentile APE of TTFT and TPOT over `rows`.
fn group(name: String, rows: &[&Row]) -> Group {
    let ttft: Vec<f64> = rows.iter().map(|r| ape(r.predicted_ttft_ms, r.measured_ttft_ms)).collect();
    let tpot: Vec<f64> = rows.iter().map(|r| ape(r.predicted_tpot_ms, r.measured_tpot_ms)).collect();
    let p90 = |v: &[f64]| quantile_sorted(&sorted(v), 0.9).unwrap_or(0.0);
    Group { group: name, n: rows.len(), ttft_mean_ape: mean(&ttft), tpot_mean_ape: mean(&tpot), ttft_median_ape: median(&ttft), tpot_median_ape: median(&tpot), ttft_p90_ape: p90(&ttft), tpot_p90_ape: p90(&tpot) }
}

type RowKey = fn(&Row) -> String;

/// The concurrency band of a run: a few users (queueing small), a loaded engine, a crowded one.
pub fn users_band(users: u64) -> &'static str {
    match users {
        0..=4 => "1-4",
        5..=64 => "5-64",
        _ => "65+",
    }
}

/// Groups: all rows, then per system, backend, precision, mode and concurrency band.
fn summarize(rows: &[Row]) -> Vec<Group> {
    let mut out = vec![group("all".into(), &rows.iter().collect::<Vec<_>>())];
    let keys: [(&str, RowKey); 5] =
        [("system", |r| r.system.clone()), ("backend", |r| r.backend.clone()), ("precision", |r| r.precision.clone()), ("mode", |r| r.mode.to_string()), ("users", |r| users_band(r.concurrency).to_string())];
    for (dim, key) in keys {
        let mut by: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
        for r in rows {
            by.entry(key(r)).or_default().push(r);
        }
        out.extend(by.into_iter().map(|(k, v)| group(format!("{dim}={k}"), &v)));
    }
    out
}

/// The price ladder each row's GPU and engine is priced with (by `gpu|engine`): physics by the
/// shipped numbers, or with `ops_data` (the modern-GPU kernel measurements) a ladder that never
/// saw that GPU: its physics refitted without it (on the default engine's collections, as every
/// fit), its tables and transfer pairs built from the other GPUs. A row's tables are the default
/// engine's collections and its own engine's, as `--backend` with `--ops-data` reads them (a
/// vLLM row never reads another engine's); each collection is read once and every ladder shares
/// one copy of it.
fn per_gpu_models(rows: &[SiliconRow], ops_data: Option<&Path>, catalog: &Catalog, say: &dyn Fn(&str)) -> Result<BTreeMap<String, LadderOps>, EvalError> {
    let mut models = BTreeMap::new();
    let Some(dir) = ops_data else { return Ok(models) };
    let loaded = wavecast_data::load_timings(dir, catalog)?;
    let gpus: std::collections::BTreeSet<String> = rows.iter().filter_map(|r| catalog.get(&r.system).ok().map(|g| g.id.clone())).collect();
    let mut fits = Vec::new();
    for gpu in gpus {
        say(&format!("fitting the physics without {gpu}"));
        fits.push((sustained::fit(&loaded.rows, catalog, Some(&gpu), &FitOptions::default())?, gpu));
    }
    let default = Tables::new(&loaded.rows, None);
    drop(loaded);
    let mut engines = vec![(Engine::DEFAULT, Tables::default())];
    for engine in engines_named(rows) {
        say(&format!("reading {engine}'s kernel tables"));
        match wavecast_data::load_timings_of(dir, catalog, wavecast_data::Engines::Only(engine.name())) {
            Ok(more) => engines.push((engine, Tables::new(&more.rows, None))),
            // The vLLM fallback answers its rows, and each row's `kernel_tables` says so.
            Err(e) => say(&format!("no {engine} kernel tables in {}: {e}", dir.display())),
        }
    }
    for (model, gpu) in fits {
        for (engine, own) in &engines {
            let ladder = Ladder::new(model.clone(), default.merged(own).without(&gpu), catalog.clone());
            models.insert(format!("{gpu}|{engine}"), LadderOps::new(ladder, ops_data.map(Path::to_path_buf)));
        }
    }
    Ok(models)
}

/// The engines other than the default that some row runs in.
fn engines_named(rows: &[SiliconRow]) -> std::collections::BTreeSet<Engine> {
    rows.iter().filter_map(|r| r.backend.parse::<Engine>().ok()).filter(|e| !e.is_default()).collect()
}

/// Whose kernel measurements price a row of `engine` with `ops`: the engine's own tables where
/// the ladder holds any of them, else the default engine's, naming the missing ones; the shipped
/// surfaces (the default engine's) without a measured-data folder.
fn kernel_tables(ops: &LadderOps, engine: Engine) -> String {
    let default = Engine::DEFAULT.name();
    let own = engine.is_default() || ops.ladder().tables().engines().any(|e| e == engine.name());
    match (ops.ops_data().is_some(), own) {
        (true, true) => engine.name().to_string(),
        (true, false) => format!("{default} (no {engine} tables)"),
        (false, _) if engine.is_default() => format!("{default} (shipped)"),
        (false, _) => format!("{default} (shipped; no {engine} tables)"),
    }
}

/// Replays every row of `data` (model configs from `configs`, by default the
/// `model_configs/` folder beside the file); with `ops_data`, each row's GPU is priced by
/// per-op models refitted without it (leave-one-GPU-out). `progress` is called after each row.
pub fn eval_serving(data: &Path, configs: Option<&Path>, ops_data: Option<&Path>, catalog: &Catalog, say: &dyn Fn(&str), progress: &(dyn Fn(usize, usize) + Sync)) -> Result<ServingEval, EvalError> {
    let path = data.display().to_string();
    let text = std::fs::read_to_string(data).map_err(|e| wavecast_data::DataError::Read { path: path.clone(), reason: e.to_string() })?;
    let rows = read_silicon(&text, &path)?;
    let dir = configs.map(Path::to_path_buf).unwrap_or_else(|| data.parent().unwrap_or(Path::new(".")).join("model_configs"));
    if !dir.is_dir() {
        return Err(EvalError::Invalid(format!("model configs folder {} does not exist (pass --configs DIR)", dir.display())));
    }
    let mut specs: BTreeMap<String, Result<TransformerSpec, String>> = BTreeMap::new();
    for r in &rows {
        specs.entry(r.model.clone()).or_insert_with(|| {
            let p = config_path(&dir, &r.model).ok_or_else(|| format!("no config for {} in {}", r.model, dir.display()))?;
            let text = std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            TransformerSpec::from_json(&text, &p.display().to_string()).map_err(|e| e.to_string())
        });
    }
    let refitted = per_gpu_models(&rows, ops_data, catalog, say)?;
    // Without the folder: the shipped surfaces less the row's GPU's own (leave-one-GPU-out
    // for the measured rung; the physics numbers below them are the shipped ones).
    let gpus: std::collections::BTreeSet<&str> = rows.iter().filter_map(|r| catalog.get(&r.system).ok()).map(|g| g.id.as_str()).collect();
    let shipped: BTreeMap<String, LadderOps> = gpus.into_iter().map(|g| (g.to_string(), LadderOps::shipped(Some(g)))).collect();
    let physics = LadderOps::physics_only();
    // A row of an engine whose tables were not read (or of no known engine) asks the default's ladder.
    let refitted_for = |gpu: &str, r: &SiliconRow| {
        let engine = r.backend.parse::<Engine>().unwrap_or(Engine::DEFAULT);
        refitted.get(&format!("{gpu}|{engine}")).or_else(|| refitted.get(&format!("{gpu}|{}", Engine::DEFAULT)))
    };
    let ops_for = |r: &SiliconRow| match catalog.get(&r.system).ok().and_then(|g| refitted_for(&g.id, r).map(|m| (m, g.id.as_str()))) {
        Some((m, gpu)) => (m, format!("without {gpu}")),
        None => match catalog.get(&r.system).ok().and_then(|g| shipped.get(&g.id).map(|m| (m, g.id.as_str()))) {
            Some((m, gpu)) => (m, format!("shipped without {gpu}")),
            None => (&physics, "physics".to_string()),
        },
    };
    let shared = Shared::default();
    let done = std::sync::atomic::AtomicUsize::new(0);
    // One row at a time per thread (rows cost from microseconds to seconds).
    let results: Vec<Result<(u64, f64, f64, String), String>> = rows.par_iter().with_max_len(1).map(|r| {
        let (ops, ops_key) = ops_for(r);
        let out = specs[&r.model].as_ref().map_err(Clone::clone).and_then(|spec| predict_row(r, spec, catalog, ops, &ops_key, &shared));
        progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, rows.len());
        out
    }).collect();
    let mut out = ServingEval { predictor: "ladder", leave_one_gpu_out: ops_data.is_some(), rows: Vec::new(), unpredicted: Vec::new(), summary: Vec::new() };
    for (r, res) in rows.iter().zip(results) {
        match res {
            Ok((concurrency, ttft, tpot, kernel_tables)) => out.rows.push(Row {
                id: r.id.clone(),
                system: r.system.clone(),
                model: r.model.clone(),
                backend: r.backend.clone(),
                precision: if r.precision.is_empty() { "bf16".into() } else { r.precision.clone() },
                mode: r.mode(),
                concurrency,
                measured_ttft_ms: r.ttft_ms,
                predicted_ttft_ms: ttft,
                measured_tpot_ms: r.tpot_ms,
                predicted_tpot_ms: tpot,
                kernel_tables,
            }),
            Err(reason) => out.unpredicted.push(Unpredicted { id: r.id.clone(), reason }),
        }
    }
    out.summary = summarize(&out.rows);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_find_their_config_files() {
        let dir = tempdir();
        for f in ["meta-llama--Meta-Llama-3.1-70B_config.json", "deepseek-ai--DeepSeek-R1_config.json", "Qwen--Qwen3-32B_config.json"] {
            std::fs::write(dir.join(f), "{}").unwrap();
        }
        let name = |m: &str| config_path(&dir, m).map(|p| p.file_name().unwrap().to_string_lossy().into_owned());
        assert_eq!(name("deepseek-ai/DeepSeek-R1").as_deref(), Some("deepseek-ai--DeepSeek-R1_config.json"));
        assert_eq!(name("meta-llama/Llama-3.1-70B").as_deref(), Some("meta-llama--Meta-Llama-3.1-70B_config.json"));
        assert_eq!(name("nvidia/Qwen3-32B-NVFP4").as_deref(), Some("Qwen--Qwen3-32B_config.json"));
        assert_eq!(name("nvidia/DeepSeek-R1-FP4").as_deref(), Some("deepseek-ai--DeepSeek-R1_config.json"));
        assert_eq!(name("Qwen/Qwen3-32B-FP8").as_deref(), Some("Qwen--Qwen3-32B_config.json"));
        assert_eq!(name("x/Unknown"), None);
        std::fs::remove_dir_all(dir).ok();
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("wavecast-serving-{}-{:?}", std::process::id(), std::thread::current().id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
