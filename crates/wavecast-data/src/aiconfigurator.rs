//! Reader for NVIDIA AIConfigurator's per-op database, in its upstream layout:
//! `systems/data/<system>/<family>/<framework>/<version>/<table>.parquet`. Point it at the
//! database root (the folder holding `systems/`), at `systems/`, at `systems/data/` or at one
//! system's folder. Per system and family, by default one collection is read: the newest vLLM
//! version, else the newest version of the first framework by name ([`Engines::Default`]); with
//! [`Engines::All`], the newest version of every framework (vLLM, SGLang, TensorRT-LLM), each
//! row keyed by its engine and version (`Timing::engine`). For `comm`, always the newest of every
//! framework (NCCL and each framework's custom all-reduce), pooled with no engine: NCCL is the
//! same library under every engine.

use crate::table::{DeviceIds, LoadReport};
use crate::timing::{Collective, Precision, Shape, Source, Timing};
use crate::{measured_ms, DataError};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use wavecast_gpu::Catalog;

/// The folder holding one folder per system, when `root` is any of the accepted starting points.
fn systems_folder(root: &Path) -> Option<PathBuf> {
    [root.join("systems/data"), root.join("data"), root.to_path_buf()].into_iter().find(|p| p.is_dir() && subfolders(p).iter().any(|s| is_system(s)))
}

/// A system folder holds family folders such as `gemm` or `attention`.
fn is_system(dir: &Path) -> bool {
    ["gemm", "attention", "moe", "comm", "mla"].iter().any(|f| dir.join(f).is_dir())
}

fn subfolders(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()).unwrap_or_default();
    v.sort();
    v
}

/// True when `root` looks like (part of) an AIConfigurator database.
pub fn detect(root: &Path) -> bool {
    is_system(root) || systems_folder(root).is_some()
}

/// Version folders compare by their numeric parts (`0.24.0` > `0.9.1`, `1.3.0rc20` > `1.3.0rc3`).
fn version_key(p: &Path) -> Vec<u64> {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap_or(u64::MAX)).collect()
}

fn newest_version(framework: &Path) -> Option<PathBuf> {
    subfolders(framework).into_iter().max_by_key(|p| version_key(p))
}

/// Which engines' collections to read (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engines {
    /// One per family: vLLM's, else the first framework's by name. What the fits and the
    /// evaluations read, so their figures stay those of one engine.
    Default,
    /// Every framework's newest collection, keyed by engine: a ladder built from these answers
    /// a query from the engine it names.
    All,
    /// The default's collection and the named framework's newest (`sglang`, `trtllm`): what a
    /// command serving on that engine reads with `--ops-data` (all three engines cost three
    /// times the load time and memory of one).
    DefaultAnd(&'static str),
    /// The named framework's newest collection only, where it is not the default's: what a
    /// reader that already holds the default's adds to answer for that engine. No `comm`
    /// (pooled with the default's) and no other source's rows.
    Only(&'static str),
}

/// One collection folder to read and the engine (`framework/version`) its rows are keyed by;
/// empty for `comm`.
struct Collection {
    dir: PathBuf,
    engine: String,
}

fn folder_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The collection folders read for one family folder (see the module comment).
fn collections(family: &Path, engines: Engines) -> Vec<Collection> {
    let frameworks = subfolders(family);
    let is_comm = family.file_name().is_some_and(|n| n == "comm");
    if is_comm && matches!(engines, Engines::Only(_)) {
        return Vec::new();
    }
    let chosen: Vec<&PathBuf> = if is_comm || engines == Engines::All {
        frameworks.iter().collect()
    } else {
        let default: Vec<&PathBuf> = match frameworks.iter().find(|f| folder_name(f).eq_ignore_ascii_case(crate::DEFAULT_ENGINE)) {
            Some(v) => vec![v],
            None => frameworks.first().into_iter().collect(),
        };
        let named = match engines {
            Engines::DefaultAnd(name) | Engines::Only(name) => frameworks.iter().find(|f| folder_name(f).eq_ignore_ascii_case(name) && !default.contains(f)),
            _ => None,
        };
        match engines {
            Engines::Only(_) => named.into_iter().collect(),
            _ => default.into_iter().chain(named).collect(),
        }
    };
    chosen
        .into_iter()
        .filter_map(|f| {
            let dir = newest_version(f)?;
            let engine = if is_comm { String::new() } else { format!("{}/{}", folder_name(f).to_ascii_lowercase(), folder_name(&dir)) };
            Some(Collection { dir, engine })
        })
        .collect()
}

/// Loads every table of every system under `root`, one engine's per family
/// ([`Engines::Default`]). Rows that cannot be read are skipped with their reason; a file that
/// is not parquet, or lacks a column its table needs, is an error.
pub fn load(root: &Path, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    load_engines(root, catalog, Engines::Default)
}

/// [`load`] reading the collections `engines` names.
pub fn load_engines(root: &Path, catalog: &Catalog, engines: Engines) -> Result<LoadReport<Timing>, DataError> {
    let systems = if is_system(root) { vec![root.to_path_buf()] } else { systems_folder(root).map(|s| subfolders(&s).into_iter().filter(|p| is_system(p)).collect()).unwrap_or_default() };
    if systems.is_empty() {
        return Err(DataError::Read { path: root.display().to_string(), reason: "no AIConfigurator systems here (expected systems/data/<system>/<family>/<framework>/<version>/*.parquet)".into() });
    }
    let mut report = LoadReport::default();
    for system in &systems {
        for family in subfolders(system) {
            for collection in collections(&family, engines) {
                for file in parquet_files(&collection.dir)? {
                    let mut table = load_table(&file, system, catalog)?;
                    for t in &mut table.rows {
                        t.engine.clone_from(&collection.engine);
                    }
                    report.extend(table);
                }
            }
        }
    }
    Ok(report)
}

fn parquet_files(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let rd = std::fs::read_dir(dir).map_err(|e| DataError::Read { path: dir.display().to_string(), reason: e.to_string() })?;
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "parquet")).collect();
    v.sort();
    Ok(v)
}

/// The kind of table, from the file name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Table {
    Gemm,
    ContextAttention,
    GenerationAttention,
    Moe,
    ContextMla,
    GenerationMla,
    Nccl,
    CustomAllReduce,
    GatedDelta,
    ScaleMatrix,
}

impl Table {
    /// The table a file stem names (`gemm_perf`, `moe_perf`, …).
    fn of(stem: &str) -> Option<Table> {
        Some(match stem {
            "gemm_perf" => Table::Gemm,
            "context_attention_perf" => Table::ContextAttention,
            "generation_attention_perf" => Table::GenerationAttention,
            "moe_perf" => Table::Moe,
            "context_mla_perf" | "mla_context_module_perf" => Table::ContextMla,
            "generation_mla_perf" | "mla_generation_module_perf" => Table::GenerationMla,
            "nccl_perf" => Table::Nccl,
            "custom_allreduce_perf" => Table::CustomAllReduce,
            "gdn_perf" => Table::GatedDelta,
            "scale_matrix_perf" => Table::ScaleMatrix,
            _ => return None,
        })
    }

    /// The columns a row of this table is read from (besides device, kernel_source, latency).
    fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Gemm => &["gemm_dtype", "m", "n", "k"],
            Table::ContextAttention | Table::GenerationAttention => &["batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "attn_dtype", "kv_cache_dtype", "step"],
            Table::Moe => &["moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size", "distribution"],
            Table::ContextMla | Table::GenerationMla => &["op_name", "mla_dtype", "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step"],
            Table::Nccl => &["op_name", "nccl_dtype", "num_gpus", "message_size"],
            Table::CustomAllReduce => &["allreduce_dtype", "num_gpus", "message_size"],
            Table::GatedDelta => &["phase", "batch_size", "seq_len", "num_k_heads", "head_k_dim", "num_v_heads", "head_v_dim"],
            Table::ScaleMatrix => &["m", "k", "quant_dtype"],
        }
    }

    /// The kernel sources (by a part of their name) whose rows in this table time another op,
    /// skipped quietly. The linear-attention tables also time the causal conv1d before the
    /// gated delta rule (`causal_conv1d_fn`, `causal_conv1d_update`), which the operator graph
    /// prices as an element-wise pass. `None`: every row is the table's op (no per-row check).
    fn foreign_kernels(self) -> Option<&'static str> {
        (self == Table::GatedDelta).then_some("conv1d")
    }
}

/// Column name → index in a parquet file's schema.
struct Columns(HashMap<String, usize>);

impl Columns {
    fn int(&self, row: &Row, name: &str) -> Result<u64, String> {
        let v = match row.get_column_iter().nth(self.0[name]).map(|(_, f)| f) {
            Some(Field::Long(v)) => *v,
            Some(Field::Int(v)) => i64::from(*v),
            Some(Field::Null) | None => return Err(format!("missing value: column '{name}' is null")),
            Some(other) => return Err(format!("not an integer: column '{name}' = {other}")),
        };
        u64::try_from(v).map_err(|_| format!("negative value: column '{name}' = {v}"))
    }

    /// A column older collections lack (e.g. `window_size` before sliding-window kernels were
    /// timed): 0 when absent.
    fn optional_int(&self, row: &Row, name: &str) -> Result<u64, String> {
        if self.0.contains_key(name) {
            self.int(row, name)
        } else {
            Ok(0)
        }
    }

    /// A size: positive and within the IR's dimension limit.
    fn dim(&self, row: &Row, name: &str) -> Result<u64, String> {
        wavecast_ir::dim(&format!("column '{name}'"), self.int(row, name)?).map_err(|e| e.to_string())
    }

    fn text<'r>(&self, row: &'r Row, name: &str) -> Result<&'r str, String> {
        match row.get_column_iter().nth(self.0[name]).map(|(_, f)| f) {
            Some(Field::Str(s)) => Ok(s),
            Some(other) => Err(format!("not text: column '{name}' = {other}")),
            None => Err(format!("missing value: column '{name}'")),
        }
    }

    fn float(&self, row: &Row, name: &str) -> Result<f64, String> {
        match row.get_column_iter().nth(self.0[name]).map(|(_, f)| f) {
            Some(Field::Double(v)) => Ok(*v),
            Some(Field::Float(v)) => Ok(f64::from(*v)),
            Some(Field::Long(v)) => Ok(*v as f64),
            Some(other) => Err(format!("not a number: column '{name}' = {other}")),
            None => Err(format!("missing value: column '{name}'")),
        }
    }

    /// The columns both attention tables share: heads, KV heads, head size, sliding window
    /// (0: none) and the KV cache's format.
    fn attention_heads(&self, row: &Row) -> Result<(u64, u64, u64, u64, Precision), String> {
        Ok((self.dim(row, "num_heads")?, self.dim(row, "num_key_value_heads")?, self.dim(row, "head_dim")?, self.optional_int(row, "window_size")?, self.precision(row, "kv_cache_dtype")?))
    }

    fn precision(&self, row: &Row, name: &str) -> Result<Precision, String> {
        let raw = self.text(row, name)?;
        Precision::parse(raw).ok_or_else(|| format!("unknown precision: column '{name}' = '{raw}'"))
    }
}

fn load_table(file: &Path, system: &Path, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    let path = file.display().to_string();
    let Some(table) = file.file_stem().and_then(|s| Table::of(&s.to_string_lossy())) else { return Ok(LoadReport::default()) };
    let f = std::fs::File::open(file).map_err(|e| DataError::Read { path: path.clone(), reason: e.to_string() })?;
    let system = system.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    read_table(f, table, &path, &system, catalog)
}

/// Reads one table from parquet bytes, as if it were the file `name` (e.g. `gemm_perf.parquet`)
/// of `system`; what `load` does per file, without the file system (fuzzing uses it).
pub fn parse_table(bytes: Vec<u8>, name: &str, system: &str, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    let Some(table) = Table::of(name.trim_end_matches(".parquet")) else { return Ok(LoadReport::default()) };
    read_table(bytes::Bytes::from(bytes), table, name, system, catalog)
}

thread_local! {
    /// Set while [`guarded`] runs a call into the parquet crate.
    static IN_PARQUET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs a call into the parquet crate, turning its panics into errors: it asserts on some
/// damaged metadata (e.g. a negative column offset) instead of returning an error, and a damaged
/// file must still end in one error line. Only the crate's own calls are wrapped, so a bug in
/// wavecast still panics. The panic hook, installed once, stays quiet only for panics inside
/// such a call, so guarding every row costs a flag, not a hook swap.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static QUIET_HOOK: std::sync::Once = std::sync::Once::new();
    QUIET_HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_PARQUET.with(std::cell::Cell::get) {
                default(info);
            }
        }));
    });
    IN_PARQUET.with(|q| q.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    IN_PARQUET.with(|q| q.set(false));
    result.map_err(|p| p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "the parquet reader failed".into()))
}

fn read_table<R: parquet::file::reader::ChunkReader + 'static>(source: R, table: Table, path: &str, system: &str, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    let bad = |reason: String| DataError::Format { path: path.to_string(), reason };
    let damaged = |e: String| bad(format!("not a readable parquet file ({e})"));
    let reader = guarded(|| SerializedFileReader::new(source)).map_err(damaged)?.map_err(|e| damaged(e.to_string()))?;
    let schema = reader.metadata().file_metadata().schema_descr();
    let cols = Columns(schema.columns().iter().enumerate().map(|(i, c)| (c.name().to_string(), i)).collect());
    let required = ["device", "kernel_source", "latency"].iter().chain(table.columns());
    if let Some(missing) = required.into_iter().find(|c| !cols.0.contains_key(**c)) {
        return Err(bad(format!("missing column '{missing}'")));
    }
    let mut devices = DeviceIds::new(catalog);
    let mut report = LoadReport::default();
    let mut rows = guarded(|| reader.get_row_iter(None)).map_err(damaged)?.map_err(|e| bad(format!("unreadable rows ({e})")))?;
    for i in 0.. {
        // A decoding error mid-file means the rest is unreadable too: the file is damaged.
        let Some(row) = guarded(|| rows.next()).map_err(damaged)? else { break };
        let row = row.map_err(|e| bad(format!("row {i}: {e}")))?;
        if let Some(foreign) = table.foreign_kernels() {
            if cols.text(&row, "kernel_source").is_ok_and(|k| k.contains(foreign)) {
                continue;
            }
        }
        let result = timing(&row, &cols, table, system, &mut devices).map(|mut t| {
            t.provenance = format!("{path}#{i}");
            t
        });
        report.push(path, i, result);
    }
    if table == Table::ScaleMatrix {
        if let Some(why) = not_streaming(&report.rows, catalog) {
            report.notes.push(format!("{path}: left out: {why}"));
            report.rows.clear();
        }
    }
    Ok(report)
}

/// Least share of the GPU's datasheet bandwidth a streaming table's largest call must reach.
/// vLLM's and TensorRT-LLM's quantization kernels reach 77-89 % on every shared GPU (L40S to
/// GB200); SGLang's reach 6-12 %: not one streaming pass (a per-group scale kernel).
const STREAMING_SHARE: f64 = 0.5;

/// Why a table read as the streaming kernel ([`crate::STREAM`]) does not time one: its
/// largest call, well past the GPU's L2 (so DRAM-bound), moves its bytes at under
/// [`STREAMING_SHARE`] of the GPU's bandwidth. `None` where it streams, or where no call is
/// large enough to tell.
fn not_streaming(rows: &[Timing], catalog: &Catalog) -> Option<String> {
    let bytes = |t: &Timing| match t.shape {
        Shape::Vector { tokens, width, .. } => Shape::vector_bytes(tokens, width),
        _ => 0.0,
    };
    let largest = rows.iter().max_by(|a, b| bytes(a).total_cmp(&bytes(b)))?;
    let gpu = catalog.get(&largest.gpu).ok()?;
    let moved = bytes(largest);
    if moved < 2.0 * gpu.l2_bytes() {
        return None;
    }
    let rate = moved / (largest.latency_ms * 1e-3);
    (rate < STREAMING_SHARE * gpu.bandwidth()).then(|| {
        format!("its largest call moves {:.1} GB at {:.0} GB/s, under {:.0} % of {}'s {:.0} GB/s: not one streaming pass", moved / 1e9, rate / 1e9, STREAMING_SHARE * 100.0, gpu.id, gpu.bandwidth() / 1e9)
    })
}

/// The catalog id of a row's GPU: its `device` string, else the system folder's name.
fn gpu_id(device: &str, system: &str, devices: &mut DeviceIds) -> Result<String, String> {
    devices.id(device).or_else(|_| devices.id(system))
}

fn timing(row: &Row, c: &Columns, table: Table, system: &str, devices: &mut DeviceIds) -> Result<Timing, String> {
    let gpu = gpu_id(c.text(row, "device")?, system, devices)?;
    let latency_ms = measured_ms("latency", c.float(row, "latency")?)?;
    let mut kernel_source = c.text(row, "kernel_source")?.to_string();
    let (shape, precision) = match table {
        Table::Gemm => (Shape::Gemm { m: c.dim(row, "m")?, n: c.dim(row, "n")?, k: c.dim(row, "k")? }, c.precision(row, "gemm_dtype")?),
        Table::ContextAttention => {
            let (heads, kv_heads, head_dim, window, kv_precision) = c.attention_heads(row)?;
            let (batch, isl, past) = (c.dim(row, "batch_size")?, c.dim(row, "isl")?, c.int(row, "step")?);
            (Shape::AttentionPrefill { batch, isl, past, heads, kv_heads, head_dim, window, kv_precision }, c.precision(row, "attn_dtype")?)
        }
        Table::GenerationAttention => {
            let (heads, kv_heads, head_dim, window, kv_precision) = c.attention_heads(row)?;
            let (batch, kv_len) = (c.dim(row, "batch_size")?, c.dim(row, "step")?);
            (Shape::AttentionDecode { batch, kv_len, heads, kv_heads, head_dim, window, kv_precision }, c.precision(row, "attn_dtype")?)
        }
        Table::Moe => {
            let shape = Shape::Moe {
                tokens: c.dim(row, "num_tokens")?,
                hidden: c.dim(row, "hidden_size")?,
                inter: c.dim(row, "inter_size")?,
                topk: c.dim(row, "topk")?,
                experts: c.dim(row, "num_experts")?,
                tp: c.dim(row, "moe_tp_size")?,
                ep: c.dim(row, "moe_ep_size")?,
                balanced: c.text(row, "distribution")? == "balanced",
                gated: None,
            };
            (shape, c.precision(row, "moe_dtype")?)
        }
        Table::ContextMla | Table::GenerationMla => {
            // The A100 collection times the attention kernel, newer ones the whole module:
            // the op name keeps them apart.
            let op_name = c.text(row, "op_name")?;
            kernel_source = format!("{op_name}/{kernel_source}");
            let module = op_name.contains("module");
            let generation = table == Table::GenerationMla;
            let attention_precision = c.precision(row, "mla_dtype")?;
            // Module tables name the projections' format; kernel tables have none to name.
            let precision = if c.0.contains_key("gemm_type") { c.precision(row, "gemm_type")? } else { attention_precision };
            let (kv_len, kv_precision) = (c.int(row, "step")?, c.precision(row, "kv_cache_dtype")?);
            let shape = Shape::Mla { batch: c.dim(row, "batch_size")?, isl: c.dim(row, "isl")?, kv_len, heads: c.dim(row, "num_heads")?, tp: c.dim(row, "tp_size")?, generation, module, kv_precision, attention_precision };
            (shape, precision)
        }
        Table::GatedDelta => {
            let generation = match c.text(row, "phase")? {
                "generation" => true,
                "context" => false,
                other => return Err(format!("unknown phase: column 'phase' = '{other}'")),
            };
            let shape = Shape::GatedDelta {
                batch: c.dim(row, "batch_size")?,
                seq: c.dim(row, "seq_len")?,
                k_heads: c.dim(row, "num_k_heads")?,
                v_heads: c.dim(row, "num_v_heads")?,
                head_k_dim: c.dim(row, "head_k_dim")?,
                head_v_dim: c.dim(row, "head_v_dim")?,
                generation,
            };
            // The tables name no format: the engines run the rule on 16-bit activations.
            (shape, Precision::Bf16)
        }
        Table::ScaleMatrix => {
            // An m × k 16-bit activation read once and written once in the quantized format.
            let elements = c.dim(row, "m")?.saturating_mul(c.dim(row, "k")?) as f64;
            let bytes = elements * (2.0 + c.precision(row, "quant_dtype")?.weight_bits() / 8.0);
            (Shape::stream(bytes), Precision::Fp16)
        }
        Table::Nccl | Table::CustomAllReduce => {
            let op = if table == Table::Nccl {
                let name = c.text(row, "op_name")?;
                Collective::parse(name).ok_or_else(|| format!("unknown collective: '{name}'"))?
            } else {
                Collective::AllReduce
            };
            let gpus_n = c.dim(row, "num_gpus")?;
            let dtype = if table == Table::Nccl { "nccl_dtype" } else { "allreduce_dtype" };
            let precision = c.precision(row, dtype)?;
            // `message_size` counts elements, not bytes: at the same size the tables time a
            // 16-bit all-reduce twice as long as an INT8 one (H100, 4 GPUs, 134M: 1.18 ms and
            // 0.63 ms), as moving twice the bytes does, and read as bytes the 16-bit rows would
            // have NVLink carry half of what it does.
            let bytes = c.dim(row, "message_size")?.saturating_mul(collective_element_bytes(precision));
            (Shape::Collective { op, gpus: gpus_n, bytes, gpus_per_node: gpus_n }, precision)
        }
    };
    Ok(Timing { source: Source::Aiconfigurator, gpu, shape, precision, kernel_source, latency_ms, provenance: String::new(), engine: String::new() })
}

/// Bytes of one element a collective moves in `p` (8-bit formats one, 16-bit two, FP32 four).
fn collective_element_bytes(p: Precision) -> u64 {
    (p.weight_bits() / 8.0).ceil().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(gpu: &str, bytes: f64, latency_ms: f64) -> Timing {
        Timing { source: Source::Aiconfigurator, gpu: gpu.into(), shape: Shape::stream(bytes), precision: Precision::Fp16, kernel_source: String::new(), latency_ms, provenance: String::new(), engine: String::new() }
    }

    /// H100's 3.35 TB/s: vLLM's 6.4 GB call at 3.0 TB/s streams; SGLang's at 0.33 TB/s does not.
    #[test]
    fn a_table_is_the_streaming_kernel_only_if_its_largest_call_streams() {
        let catalog = Catalog::shipped();
        let table = |ms_at_largest: f64| vec![streamed("h100-sxm", 1e5, 0.002), streamed("h100-sxm", 6.44e9, ms_at_largest)];
        assert_eq!(not_streaming(&table(2.12), catalog), None);
        let why = not_streaming(&table(19.3), catalog).expect("SGLang's rate is a tenth of H100's bandwidth");
        assert!(why.contains("334 GB/s") && why.contains("h100-sxm"), "{why}");
        // Calls that all fit in L2 cannot tell DRAM streaming apart: kept.
        assert_eq!(not_streaming(&[streamed("h100-sxm", 1e6, 1.0)], catalog), None);
    }
}
