//! Reader for Microsoft Vidur's profiles: per-layer operators of transformer models
//! (`compute/<gpu>/<org>/<model>/mlp.csv`, FP16) and collectives
//! (`network/<system>/{all_reduce,send_recv}.csv`). Times are the median of Vidur's repeats.
//! The collective CSV layout is shared with PipeWeave ([`collective_csv`]).

use crate::table::{records, Columns, DeviceIds, LoadReport};
use crate::timing::{Collective, Precision, Shape, Source, Timing};
use crate::{measured_ms, DataError};
use std::path::{Path, PathBuf};
use wavecast_gpu::Catalog;

/// True when `root` holds Vidur's `compute/` or `network/` folders.
pub fn detect(root: &Path) -> bool {
    !walk(&root.join("compute"), "mlp.csv").is_empty() || !walk(&root.join("network"), "all_reduce.csv").is_empty()
}

/// Every file called `name` under `dir`, sorted.
pub(crate) fn walk(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == name) {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

pub fn load(root: &Path, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    let mut report = LoadReport::default();
    let compute = root.join("compute");
    for file in walk(&compute, "mlp.csv") {
        // compute/<gpu>/<org>/<model>/mlp.csv
        let gpu_dir = file.strip_prefix(&compute).ok().and_then(|p| p.components().next()).map(|c| c.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
        let Some(gpu) = known_gpu(catalog, &gpu_dir, &file, &mut report) else { continue };
        report.extend(layer_ops_csv(&read(&file)?, &file.display().to_string(), &gpu)?);
    }
    let network = root.join("network");
    for file in walk(&network, "all_reduce.csv").into_iter().chain(walk(&network, "send_recv.csv")) {
        // network/<gpu>_<topology>/<op>.csv, e.g. a100_dgx, h100_pairwise_nvlink.
        let system = file.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let gpu_name = system.split('_').next().unwrap_or("");
        let Some(gpu) = known_gpu(catalog, gpu_name, &file, &mut report) else { continue };
        report.extend(collective_csv(&read(&file)?, &file.display().to_string(), &gpu, Source::Vidur)?);
    }
    if report.rows.is_empty() && report.skipped.is_empty() {
        return Err(DataError::Read { path: root.display().to_string(), reason: "no Vidur profiles here (expected compute/<gpu>/<org>/<model>/mlp.csv or network/<system>/all_reduce.csv)".into() });
    }
    Ok(report)
}

/// The catalog id for a GPU named by a folder; a GPU the catalog does not know skips the file
/// (reported, like any unreadable row) rather than failing the whole load.
pub(crate) fn known_gpu(catalog: &Catalog, name: &str, file: &Path, report: &mut LoadReport<Timing>) -> Option<String> {
    let id = DeviceIds::new(catalog).id(name);
    if let Err(reason) = &id {
        report.push(&file.display().to_string(), 0, Err(reason.clone()));
    }
    id.ok()
}

pub(crate) fn read(file: &Path) -> Result<String, DataError> {
    std::fs::read_to_string(file).map_err(|e| DataError::Read { path: file.display().to_string(), reason: e.to_string() })
}

/// The operators of Vidur's per-layer profile, with what each computes.
const LAYER_OPS: [&str; 10] = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj", "mlp_act", "input_layernorm", "post_attention_layernorm", "attn_rope", "add", "emb"];

/// The model columns of a row, and the shape one of its operators has on one TP shard.
struct Layer {
    heads: u64,
    kv_heads: u64,
    hidden: u64,
    inter: u64,
    gated: bool,
    tokens: u64,
    tp: u64,
}

impl Layer {
    fn shape(&self, op: &str) -> Shape {
        let head_dim = self.hidden / self.heads;
        let m = self.tokens;
        let per_tp = |n: u64| (n / self.tp).max(1);
        let up = self.inter * if self.gated { 2 } else { 1 };
        let vector = |width: u64| Shape::Vector { op: op.to_string(), tokens: m, width };
        match op {
            "attn_pre_proj" => Shape::Gemm { m, n: per_tp((self.heads + 2 * self.kv_heads) * head_dim), k: self.hidden },
            "attn_post_proj" => Shape::Gemm { m, n: self.hidden, k: per_tp(self.heads * head_dim) },
            "mlp_up_proj" => Shape::Gemm { m, n: per_tp(up), k: self.hidden },
            "mlp_down_proj" => Shape::Gemm { m, n: self.hidden, k: per_tp(self.inter) },
            "mlp_act" => vector(per_tp(self.inter)),
            "attn_rope" => vector(per_tp((self.heads + self.kv_heads) * head_dim)),
            _ => vector(self.hidden),
        }
    }
}

/// Vidur's per-layer profile (`mlp.csv`) of one GPU (a catalog id).
pub fn layer_ops_csv(text: &str, file: &str, gpu: &str) -> Result<LoadReport<Timing>, DataError> {
    let (cols, records) = records(text, file, &["n_head", "n_kv_head", "n_embd", "n_expanded_embd", "use_gated_mlp", "num_tokens", "num_tensor_parallel_workers"])?;
    let mut report = LoadReport::default();
    for (line, rec) in records {
        let row = rec.and_then(|rec| layer(&cols, &rec).map(|l| (rec, l)));
        let (rec, layer) = match row {
            Ok(r) => r,
            Err(reason) => {
                report.push(file, line, Err(reason));
                continue;
            }
        };
        for op in LAYER_OPS {
            let column = format!("time_stats.{op}.median");
            if !cols.has(&column) {
                continue;
            }
            let timing = cols.num::<f64>(&rec, &column).and_then(|ms| measured_ms(&column, ms)).map(|latency_ms| Timing {
                source: Source::Vidur,
                gpu: gpu.to_string(),
                shape: layer.shape(op),
                precision: Precision::Fp16,
                kernel_source: format!("vidur/{op}"),
                latency_ms,
                provenance: format!("{file}:{line}"),
                engine: String::new(),
            });
            report.push(file, line, timing);
        }
    }
    Ok(report)
}

/// The model columns of one row of a layer profile.
fn layer(cols: &Columns, rec: &csv::StringRecord) -> Result<Layer, String> {
    let l = Layer {
        heads: cols.dim(rec, "n_head")?,
        kv_heads: cols.dim(rec, "n_kv_head")?,
        hidden: cols.dim(rec, "n_embd")?,
        inter: cols.dim(rec, "n_expanded_embd")?,
        gated: cols.get(rec, "use_gated_mlp").is_some_and(|v| v.eq_ignore_ascii_case("true")),
        tokens: cols.dim(rec, "num_tokens")?,
        tp: cols.dim(rec, "num_tensor_parallel_workers")?,
    };
    if !l.hidden.is_multiple_of(l.heads) {
        return Err(format!("n_embd {} is not a multiple of n_head {}", l.hidden, l.heads));
    }
    Ok(l)
}

/// A collective profile (Vidur's and PipeWeave's layout): the median time of
/// `time_stats.<collective>.*` against `size` (bytes), `num_workers` and `devices_per_node`.
pub fn collective_csv(text: &str, file: &str, gpu: &str, source: Source) -> Result<LoadReport<Timing>, DataError> {
    let (cols, records) = records(text, file, &["num_workers", "size", "collective", "devices_per_node"])?;
    let mut report = LoadReport::default();
    for (line, rec) in records {
        let row = rec.and_then(|rec| {
            let name = cols.get(&rec, "collective").ok_or("missing value: column 'collective' is empty")?;
            let op = Collective::parse(name).ok_or_else(|| format!("unknown collective: '{name}'"))?;
            let column = format!("time_stats.{name}.median");
            let latency_ms = measured_ms(&column, cols.num(&rec, &column)?)?;
            let shape = Shape::Collective { op, gpus: cols.dim(&rec, "num_workers")?, bytes: cols.dim(&rec, "size")?, gpus_per_node: cols.dim(&rec, "devices_per_node")? };
            Ok(Timing { source, gpu: gpu.to_string(), shape, precision: Precision::Fp16, kernel_source: "NCCL".into(), latency_ms, provenance: format!("{file}:{line}"), engine: String::new() })
        });
        report.push(file, line, row);
    }
    Ok(report)
}
