//! Training steps against published, measured runs: every row of a CSV in the layout of
//! `shared/data/training/published_runs.csv` (model config, GPU, GPU count and node size,
//! precision, sequence, global and micro batch, TP/PP/CP/VP/EP, FSDP or ZeRO, recomputation;
//! measured tokens/s per GPU or TFLOP/s per GPU) is replayed by the layout route of
//! [`wavecast_sim::train_step`] with the row's own inputs and nothing fitted to it. Rows that
//! cannot be replayed are listed with the reason, never dropped; every replayed row also says
//! how close its layout comes to the GPU's memory.

use crate::EvalError;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use wavecast_gpu::Catalog;
use wavecast_ir::ops::OptimizerKind;
use wavecast_ir::DType;
use wavecast_predict::comm::CommModel;
use wavecast_predict::Predictor;
use wavecast_sim::{train_step, SdpaFlashAttention, Topology, TrainReport};
use wavecast_stats::{ape, mean, median};
use wavecast_workload::{AttentionImpl, Layout, LossKernel, Recompute, Stack, TrainOptions, TransformerSpec};

/// One row of the file, as written (empty cells are `None`). Columns the replay does not read
/// (`notes`, `source`, measured MFU) may be present or absent.
#[derive(Debug, Clone, Deserialize)]
pub struct RunRow {
    pub source_id: String,
    pub model: String,
    pub hf_like_config: String,
    pub num_params_b: Option<f64>,
    pub gpu: String,
    pub num_gpus: u64,
    pub gpus_per_node: Option<u64>,
    pub precision: String,
    pub seq_len: Option<u64>,
    pub global_batch_seqs: Option<u64>,
    pub micro_batch: Option<u64>,
    pub tp: Option<u64>,
    pub pp: Option<u64>,
    pub cp: Option<u64>,
    pub vp: Option<u64>,
    pub ep: Option<u64>,
    pub dp: Option<u64>,
    #[serde(default)]
    pub fsdp_or_zero: Option<String>,
    #[serde(default)]
    pub recompute: Option<String>,
    pub measured_tokens_per_s_per_gpu: Option<f64>,
    pub measured_tflops_per_gpu: Option<f64>,
    /// The source's own words on the set-up; read for a stated power limit ([`power_limit_of`]).
    #[serde(default)]
    pub notes: Option<String>,
}

/// A replayed row.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `source_id` and the row's line in the file.
    pub id: String,
    pub model: String,
    pub gpu: String,
    pub gpus: u64,
    pub nodes: u64,
    pub precision: String,
    pub seq: u64,
    pub params_b: f64,
    /// The layout replayed (recomputation the row's, or the cheapest that fits when unstated).
    pub layout: String,
    /// Whether the measured tokens/s come from the file or from its TFLOP/s (see
    /// [`measured_tokens_per_s`]).
    pub measured_from: &'static str,
    pub measured_tokens_per_s_per_gpu: f64,
    pub predicted_tokens_per_s_per_gpu: f64,
    /// (predicted − measured) / measured, percent: positive is too fast.
    pub error_pct: f64,
    pub ape: f64,
    pub predicted_mfu: f64,
    pub memory_gb: f64,
    pub capacity_gb: f64,
    /// Percent of the GPU's memory the layout leaves free (negative: predicted not to fit).
    pub headroom_pct: f64,
    pub bands: Vec<&'static str>,
    /// The power limit the row's notes state and the replay used (W); null at board power.
    pub power_limit_w: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Unreplayed {
    pub id: String,
    pub model: String,
    pub reason: String,
}

/// Accuracy over a set of rows.
#[derive(Debug, Clone, Serialize)]
pub struct Band {
    pub band: String,
    pub n: usize,
    pub mean_ape: f64,
    pub median_ape: f64,
    /// Mean signed error, percent (positive: predicted too fast).
    pub mean_error_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrainingEval {
    pub predictor: String,
    pub rows: Vec<Row>,
    pub unreplayed: Vec<Unreplayed>,
    /// `all`, then the issue's bands (≤ 3B parameters, ≥ 16K tokens, multi-node, FP8), then per
    /// GPU and per source.
    pub bands: Vec<Band>,
    /// Replayed rows whose layout the memory model says does not fit (runs that ran): the
    /// target is none.
    pub refused_as_too_big: Vec<Unreplayed>,
}

/// The bands the issue reports: small models, long sequences, runs over several nodes, FP8.
pub const BANDS: [&str; 4] = ["params<=3B", "seq>=16K", "multi-node", "fp8"];

fn bands_of(params_b: f64, seq: u64, nodes: u64, precision: &str) -> Vec<&'static str> {
    let flags = [params_b <= 3.0, seq >= 16384, nodes > 1, precision == "fp8"];
    BANDS.iter().zip(flags).filter(|(_, on)| *on).map(|(b, _)| *b).collect()
}

/// The compute format of a row: BF16, or FP8 training (FP8 layer GEMMs, the rest in BF16).
fn dtype(precision: &str) -> Result<DType, String> {
    match precision {
        "bf16" => Ok(DType::Bf16),
        "fp16" => Ok(DType::Fp16),
        "fp8" => Ok(DType::Fp8),
        other => Err(format!("precision '{other}' is not replayed (bf16, fp16 or fp8)")),
    }
}

/// ZeRO stage of the file's `fsdp_or_zero`: `fsdp`/`fsdp2` 3, else 1. `ddp` (a table's FSDP
/// column at 0) and empty (not stated) both keep Megatron-Core's distributed optimizer, ZeRO-1,
/// which every NeMo and Megatron-Bridge recipe turns on by default; FSDP off does not turn it
/// off. Megatron-LM's 2021 runs predate that optimizer (2022): unstated is plain data
/// parallelism there, ZeRO-0.
fn zero_stage(source_id: &str, cell: Option<&str>) -> Result<u8, String> {
    match cell.unwrap_or("") {
        "" if source_id.starts_with("megatronlm_2021") => Ok(0),
        "" | "zero1" | "ddp" => Ok(1),
        "zero2" => Ok(2),
        "fsdp" | "fsdp2" | "zero3" => Ok(3),
        other => Err(format!("unknown fsdp_or_zero '{other}'")),
    }
}

/// Recomputation policies to try, cheapest first: the row's own, or when it is not stated the
/// first of none, selective, full that fits (what a framework's user would have picked). A
/// source whose FLOP count includes recomputed work (Megatron-LM's 2021 table,
/// [`flops_per_token_counted`]) recomputed fully.
fn recompute_policies(source_id: &str, cell: Option<&str>) -> Result<Vec<Recompute>, String> {
    if counts_full_recomputation(source_id) {
        return Ok(vec![Recompute::Full]);
    }
    match cell.unwrap_or("unknown") {
        "unknown" | "" => Ok(vec![Recompute::None, Recompute::Selective, Recompute::Full]),
        "selective" if runs_torchtitan(source_id) => Ok(vec![Recompute::SelectiveOp]),
        other => Ok(vec![other.parse()?]),
    }
}

/// Sources whose runs are torchtitan's (torchao's benchmarks run torchtitan too): their
/// "selective" checkpointing is torchtitan's default, op-level selective AC, not Korthikanti's.
fn runs_torchtitan(source_id: &str) -> bool {
    source_id.starts_with("torchtitan") || source_id.starts_with("torchao")
}

/// Whether the row's attention ran FlashAttention-2: torchtitan's runs (PyTorch's
/// scaled_dot_product_attention of that time, whose first choice on Hopper was the
/// FlashAttention-2 kernel), and any row whose notes name it (the `flash-attn` package,
/// "FlashAttention-2", "FA2"). Everything else, a source `stack_of` does not know included, runs
/// what `predict --mode train` assumes: one fused kernel at cuDNN's measured speed, as Megatron
/// and NeMo run it through Transformer Engine and as PyTorch's SDPA picks it on Hopper today (our
/// H100 steps, `bench/steps.sh`, run it at that speed).
fn runs_flash_attention_2(row: &RunRow) -> bool {
    let notes = row.notes.as_deref().unwrap_or("").to_ascii_lowercase();
    let named = ["flash-attn", "flash_attn", "flashattention-2", "flashattention2", "flash attention 2", "flash-attention 2", "flash-attention-2"]
        .iter()
        .any(|n| notes.contains(n))
        || notes.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "fa2");
    runs_torchtitan(&row.source_id) || named
}

/// The training software a source ran, as far as it changes the step (nothing fitted: each
/// choice follows what the source's framework does).
/// - Megatron-LM's 2024 weak-scaling table states `--tp-comm-overlap --overlap-grad-reduce
///   --overlap-param-gather`, and NeMo's and Megatron-Bridge's performance recipes run the same
///   Megatron-Core overlaps: [`Stack::MEGATRON_CORE`].
/// - Megatron-LM's 2021 runs predate userbuffers, the distributed optimizer, overlapped
///   gradient reduction and FlashAttention: its vocabulary-parallel loss, its local DDP
///   all-reducing the gradients after the backward pass (`allreduce_gradients` after
///   `forward_backward`), and attention as two BMMs around its fused scale-mask-softmax kernel
///   and a dropout (Narayanan et al. 2021, §4.2); its fused kernels keep what Korthikanti et
///   al. count, not eager autograd's extra tensors, and its Adam is apex's fused kernel.
/// - torchtitan and torchao compile the model (`torch.compile`), and NeMo AutoModel runs
///   Transformer Engine's kernels: one fused loss kernel ([`Stack::FUSED_LOSS`]).
/// - Any other source is plain PyTorch as `predict --mode train` prices it ([`Stack::EAGER`]):
///   PyTorch's eager cross entropy on the FP32 upcast of the logits (nothing says the loss was
///   compiled or fused), gradients reduced in buckets during the last backward pass, and under
///   FSDP (ZeRO-3) each layer's all-gather prefetched under the previous layer's compute.
fn stack_of(source_id: &str) -> Stack {
    if source_id.starts_with("megatronlm_2021") {
        Stack { loss: LossKernel::VocabParallel, grad_reduce_overlap: false, attention: AttentionImpl::EagerFusedSoftmax, eager_autograd: false, optimizer: wavecast_ir::ops::OptimizerImpl::Fused, ..Stack::EAGER }
    } else if source_id.starts_with("megatronlm") || source_id.starts_with("nemo") || source_id.starts_with("mbridge") {
        Stack::MEGATRON_CORE
    } else if runs_torchtitan(source_id) || source_id.starts_with("automodel") {
        Stack::FUSED_LOSS
    } else {
        Stack::EAGER
    }
}

/// Whether the source's FLOP count includes the forward pass full recomputation repeats.
fn counts_full_recomputation(source_id: &str) -> bool {
    source_id.starts_with("megatronlm_2021")
}

/// Floating-point operations per token the row's source divides its TFLOP/s by. Megatron-LM's
/// 2021 A100 table counts with its paper's formula (Narayanan et al. 2021, Appendix: 96·B·s·l·h²
/// ·(1 + s/6h + V/16lh) per batch of B sequences), which includes the forward pass full
/// recomputation repeats and the whole (not causal-halved) score matrix; every other source
/// counts the model FLOPs as wavecast does (forward and backward, no recomputation).
fn flops_per_token_counted(row: &RunRow, spec: &TransformerSpec, report: &TrainReport) -> f64 {
    if counts_full_recomputation(&row.source_id) {
        megatron_2021_flops_per_token(spec, report.seq)
    } else {
        report.model_flops / (report.global_batch * report.seq) as f64
    }
}

/// Narayanan et al.'s count per token of a GPT model trained with full recomputation: four
/// passes (forward, recomputed forward, backward at twice the forward) over the layers' GEMMs,
/// the whole s × s score matrix and the LM head.
fn megatron_2021_flops_per_token(spec: &TransformerSpec, seq: u64) -> f64 {
    let (h, l, s, v) = (spec.hidden as f64, spec.layers as f64, seq as f64, spec.vocab as f64);
    96.0 * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h))
}

/// Measured tokens/s per GPU: the file's own, else its TFLOP/s per GPU over the FLOPs per token
/// its source counts for the same model and sequence ([`flops_per_token_counted`]).
pub fn measured_tokens_per_s(row: &RunRow, spec: &TransformerSpec, report: &TrainReport) -> Option<(f64, &'static str)> {
    if let Some(t) = row.measured_tokens_per_s_per_gpu.filter(|t| *t > 0.0) {
        return Some((t, "tokens/s"));
    }
    let tflops = row.measured_tflops_per_gpu.filter(|t| *t > 0.0)?;
    Some((tflops * 1e12 / flops_per_token_counted(row, spec, report), "TFLOP/s"))
}

fn layout_of(row: &RunRow, recompute: Recompute) -> Result<Layout, String> {
    let tp = row.tp.unwrap_or(1);
    let pp = row.pp.unwrap_or(1);
    let cp = row.cp.unwrap_or(1);
    let model_parallel = tp * pp * cp;
    if model_parallel == 0 || !row.num_gpus.is_multiple_of(model_parallel) {
        return Err(format!("tp {tp} × pp {pp} × cp {cp} does not divide {} GPUs", row.num_gpus));
    }
    let dp = row.num_gpus / model_parallel;
    if let Some(given) = row.dp.filter(|&d| d != dp) {
        return Err(format!("dp {given} disagrees with {} GPUs / (tp × pp × cp) = {dp}", row.num_gpus));
    }
    Ok(Layout {
        dp,
        tp,
        pp,
        cp,
        ep: expert_parallel_of(row)?,
        zero: zero_stage(&row.source_id, row.fsdp_or_zero.as_deref())?,
        // Not stated (long-sequence tables): one sequence per micro-batch.
        micro_batch: row.micro_batch.unwrap_or(1),
        interleave: if pp > 1 { row.vp.unwrap_or(1) } else { 1 },
        recompute,
        // Megatron and NeMo run tensor parallelism with sequence parallelism, since Megatron-LM
        // introduced it in 2022 (Korthikanti et al.); its 2021 runs predate it.
        sequence_parallel: tp > 1 && !row.source_id.starts_with("megatronlm_2021"),
    })
}

/// The row's expert-parallel degree, 1 when it gives none. A row whose notes name DeepEP (an
/// expert-parallel all-to-all library) but give no degree is not replayed, like a row without
/// its power limit: its experts were spread over an unstated number of GPUs, and read as
/// EP 1 every GPU would gather every expert's weights each micro-batch.
fn expert_parallel_of(row: &RunRow) -> Result<u64, String> {
    match row.ep {
        Some(ep) => Ok(ep),
        None if row.notes.as_deref().unwrap_or("").to_ascii_lowercase().contains("deepep") => {
            Err("expert-parallel degree not stated (the notes name DeepEP, so the experts were spread over GPUs)".into())
        }
        None => Ok(1),
    }
}

/// The power limit (W) a row's notes state, as "500W power limit" (Meta's Grand Teton H100s in
/// torchtitan's tables). A row whose notes say it was power-limited without the figure is not
/// replayed, like a row without its sequence length: its speed depends on a number it does not
/// give.
fn power_limit_of(row: &RunRow) -> Result<Option<f64>, String> {
    let notes = row.notes.as_deref().unwrap_or("").to_ascii_lowercase();
    if let Some(at) = notes.find("w power limit") {
        let digits: String = notes[..at].trim_end().chars().rev().take_while(char::is_ascii_digit).collect();
        let watts: f64 = digits.chars().rev().collect::<String>().parse().map_err(|_| "the notes' power limit has no figure".to_string())?;
        return Ok(Some(watts));
    }
    if notes.contains("power-limited") || notes.contains("power limited") {
        return Err("power limit not stated (the notes say the run was power-limited)".into());
    }
    Ok(None)
}

/// Replays one row: the layout's step, with the row's recomputation or the cheapest that fits.
fn replay(row: &RunRow, spec: &TransformerSpec, catalog: &Catalog, predictor: &dyn Predictor, comm: &CommModel) -> Result<TrainReport, String> {
    let gpu = catalog.get(&row.gpu).map_err(|e| e.to_string())?;
    let seq = row.seq_len.ok_or("the source does not state the sequence length")?;
    let global_batch = row.global_batch_seqs.ok_or("the source does not state the global batch")?;
    let topo = Topology { gpus_per_node: row.gpus_per_node.unwrap_or(8), nic_gbps: None };
    let flash;
    let predictor: &dyn Predictor = if runs_flash_attention_2(row) {
        flash = SdpaFlashAttention::new(predictor);
        &flash
    } else {
        predictor
    };
    let power_limit_w = power_limit_of(row)?.filter(|&w| w < gpu.tdp_w);
    let mut last = String::new();
    for recompute in recompute_policies(&row.source_id, row.recompute.as_deref())? {
        let o = TrainOptions { global_batch, seq, dtype: dtype(&row.precision)?, optimizer: OptimizerKind::Adam, layout: layout_of(row, recompute)?, stack: stack_of(&row.source_id), power_limit_w };
        match train_step(spec, &o, &topo, gpu, predictor, comm, Some(row.num_gpus)) {
            Ok(r) => return Ok(r),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

fn band(name: String, rows: &[&Row]) -> Band {
    let apes: Vec<f64> = rows.iter().map(|r| r.ape).collect();
    let signed: Vec<f64> = rows.iter().map(|r| r.error_pct).collect();
    Band { band: name, n: rows.len(), mean_ape: mean(&apes), median_ape: median(&apes), mean_error_pct: mean(&signed) }
}

/// `all`, the issue's bands, then per GPU and per source.
fn summarize(rows: &[Row]) -> Vec<Band> {
    let mut out = vec![band("all".into(), &rows.iter().collect::<Vec<_>>())];
    for b in BANDS {
        let members: Vec<&Row> = rows.iter().filter(|r| r.bands.contains(&b)).collect();
        if !members.is_empty() {
            out.push(band(b.into(), &members));
        }
    }
    let mut by: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by.entry(format!("gpu={}", r.gpu)).or_default().push(r);
        let source = r.id.rsplit_once(':').map_or(r.id.as_str(), |(s, _)| s);
        by.entry(format!("source={source}")).or_default().push(r);
    }
    out.extend(by.into_iter().map(|(k, v)| band(k, &v)));
    out
}

/// Reads the rows of `data` (CSV, header as `published_runs.csv`).
pub fn read_runs(data: &Path) -> Result<Vec<RunRow>, EvalError> {
    let path = data.display().to_string();
    let read = |reason: String| wavecast_data::DataError::Read { path: path.clone(), reason };
    let text = std::fs::read_to_string(data).map_err(|e| read(e.to_string()))?;
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for (i, rec) in reader.deserialize::<RunRow>().enumerate() {
        rows.push(rec.map_err(|e| read(format!("row {}: {e}", i + 2)))?);
    }
    if rows.is_empty() {
        return Err(read("no rows".into()).into());
    }
    Ok(rows)
}

/// Replays every row of `data` with the predictor named `predictor`; model configs are the
/// files the rows name, relative to the CSV's folder. `progress` is called after each row.
pub fn eval_training(data: &Path, catalog: &Catalog, predictor: &str, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<TrainingEval, EvalError> {
    let predictor = wavecast_predict::by_name(predictor)?;
    let predictor = predictor.as_ref();
    let rows = read_runs(data)?;
    let dir = data.parent().unwrap_or(Path::new("."));
    let mut specs: BTreeMap<String, Result<TransformerSpec, String>> = BTreeMap::new();
    for r in &rows {
        specs.entry(r.hf_like_config.clone()).or_insert_with(|| {
            let p = dir.join(&r.hf_like_config);
            let text = std::fs::read_to_string(&p).map_err(|e| format!("cannot read config {}: {e}", p.display()))?;
            TransformerSpec::from_json(&text, &r.model).map_err(|e| e.to_string())
        });
    }
    let comm = CommModel::default();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<(TrainReport, f64, &'static str), String>> = rows
        .par_iter()
        .map(|r| {
            let out = specs[&r.hf_like_config].as_ref().map_err(Clone::clone).and_then(|spec| {
                let rep = replay(r, spec, catalog, predictor, &comm)?;
                let (measured, from) = measured_tokens_per_s(r, spec, &rep).ok_or("the row gives no positive measured tokens/s or TFLOP/s per GPU")?;
                Ok((rep, measured, from))
            });
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, rows.len());
            out
        })
        .collect();
    let mut out = TrainingEval { predictor: predictor.name().to_string(), rows: Vec::new(), unreplayed: Vec::new(), bands: Vec::new(), refused_as_too_big: Vec::new() };
    for (i, (r, res)) in rows.iter().zip(results).enumerate() {
        let id = format!("{}:{}", r.source_id, i + 2);
        match res {
            Ok((rep, measured, from)) => {
                let predicted = rep.tokens_per_s_per_gpu;
                let params_b = r.num_params_b.unwrap_or(0.0);
                let m = &rep.memory_gb;
                out.rows.push(Row {
                    id,
                    model: r.model.clone(),
                    gpu: rep.gpu.clone(),
                    gpus: rep.gpus,
                    nodes: rep.nodes,
                    precision: r.precision.clone(),
                    seq: rep.seq,
                    params_b,
                    layout: rep.layout_label.clone(),
                    measured_from: from,
                    measured_tokens_per_s_per_gpu: measured,
                    predicted_tokens_per_s_per_gpu: predicted,
                    error_pct: 100.0 * (predicted - measured) / measured,
                    ape: ape(predicted, measured),
                    predicted_mfu: rep.mfu,
                    memory_gb: m.total,
                    capacity_gb: m.capacity,
                    headroom_pct: 100.0 * (1.0 - m.total / m.capacity),
                    bands: bands_of(params_b, rep.seq, rep.nodes, &r.precision),
                    power_limit_w: rep.power_limit_w,
                });
            }
            Err(reason) => {
                let entry = Unreplayed { id, model: r.model.clone(), reason };
                if entry.reason.starts_with("does not fit in memory") {
                    out.refused_as_too_big.push(entry.clone());
                }
                out.unreplayed.push(entry);
            }
        }
    }
    // With nothing replayed every band would read 0 % error: that is no answer.
    if let (true, Some(first)) = (out.rows.is_empty(), out.unreplayed.first()) {
        return Err(EvalError::Invalid(format!("no run of {} could be replayed ({} rows; {}: {})", data.display(), out.unreplayed.len(), first.id, first.reason)));
    }
    out.bands = summarize(&out.rows);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_cells_map_to_a_layout() {
        let csv = "source_id,model,hf_like_config,num_params_b,gpu,num_gpus,gpus_per_node,precision,seq_len,global_batch_seqs,micro_batch,tp,pp,cp,vp,ep,dp,fsdp_or_zero,recompute,measured_tokens_per_s_per_gpu,measured_tflops_per_gpu,measured_mfu,notes\n\
                   s,m,c.json,8,h100-sxm,64,8,bf16,4096,128,1,2,4,1,5,,8,,unknown,1000,,,n\n";
        let row: RunRow = csv::Reader::from_reader(csv.as_bytes()).deserialize().next().unwrap().unwrap();
        let l = layout_of(&row, Recompute::None).unwrap();
        assert_eq!((l.dp, l.tp, l.pp, l.cp, l.interleave, l.zero), (8, 2, 4, 1, 5, 1));
        assert!(l.sequence_parallel);
        assert_eq!(recompute_policies(&row.source_id, row.recompute.as_deref()).unwrap().len(), 3);
        assert_eq!(recompute_policies("megatronlm_2021_a100", None).unwrap(), vec![Recompute::Full]);
        assert_eq!(recompute_policies("torchao_float8_h100", Some("selective")).unwrap(), vec![Recompute::SelectiveOp]);
        assert_eq!(recompute_policies("nemo_24.07_h100", Some("selective")).unwrap(), vec![Recompute::Selective]);
        assert_eq!(recompute_policies("torchtitan_perf_a100", Some("selective-layer")).unwrap(), vec![Recompute::SelectiveLayer]);
        let bad = RunRow { dp: Some(4), ..row.clone() };
        assert!(layout_of(&bad, Recompute::None).unwrap_err().contains("disagrees"));
        assert_eq!(zero_stage("s", Some("fsdp2")).unwrap(), 3);
        assert!(zero_stage("s", Some("zero9")).is_err());
        assert_eq!(zero_stage("s", Some("ddp")).unwrap(), 1);
        assert_eq!(zero_stage("s", None).unwrap(), 1);
        assert_eq!(zero_stage("megatronlm_2021_a100", None).unwrap(), 0);
        assert!(stack_of("nemo_24.07_h100").tp_comm_overlap && !stack_of("megatronlm_2021_a100").grad_reduce_overlap);
        assert!(stack_of("megatronlm_2021_a100").attention == AttentionImpl::EagerFusedSoftmax && stack_of("megatronlm_2024_h100").attention == AttentionImpl::Auto);
        assert_eq!(stack_of("torchtitan_2412_h100").loss, LossKernel::Fused);
        assert_eq!(bands_of(1.7, 32768, 2, "fp8"), BANDS.to_vec());
        assert!(bands_of(70.0, 4096, 1, "bf16").is_empty());
    }

    #[test]
    fn megatron_2021_counts_about_eight_flops_per_parameter_and_token() {
        // GPT-3 175B at 2048 tokens: the paper approximates its count by 8·P per token (forward,
        // recomputed forward, backward); the exact formula adds the score matrix and the head.
        let cfg = r#"{"model_type":"gpt2","n_embd":12288,"n_layer":96,"n_head":96,"vocab_size":51200,"n_positions":2048}"#;
        let spec = TransformerSpec::from_json(cfg, "gpt3-175b").unwrap();
        let eight_p = 8.0 * spec.params().total as f64;
        let counted = megatron_2021_flops_per_token(&spec, 2048);
        assert!(counted > eight_p && counted < 1.05 * eight_p, "{counted:e} vs 8P = {eight_p:e}");
        // The score matrix grows with the sequence: at 8K the count is larger by 2·96·l·h·Δs.
        let longer = megatron_2021_flops_per_token(&spec, 8192);
        let expect = 96.0 * 96.0 * 12288.0 * 6144.0 / 6.0;
        assert!(((longer - counted) / expect - 1.0).abs() < 1e-9);
    }

    /// A row from a source `stack_of` does not know replays as `predict --mode train` prices the
    /// same layout (plain PyTorch, cuDNN-speed attention), unless its notes name FlashAttention-2,
    /// whose measured floor then holds on Hopper.
    #[test]
    fn an_unknown_source_replays_as_the_command_line_prices_it() {
        let cfg = r#"{"model_type":"gpt2","n_embd":1024,"n_layer":4,"n_head":16,"vocab_size":50304,"n_positions":16384}"#;
        let spec = TransformerSpec::from_json(cfg, "gpt-small").unwrap();
        let csv = "source_id,model,hf_like_config,num_params_b,gpu,num_gpus,gpus_per_node,precision,seq_len,global_batch_seqs,micro_batch,tp,pp,cp,vp,ep,dp,fsdp_or_zero,recompute,measured_tokens_per_s_per_gpu,measured_tflops_per_gpu,measured_mfu,notes\n\
                   somebody_else,m,c.json,0.1,h100-sxm,16,8,bf16,16384,16,1,1,1,1,,,16,fsdp,none,1000,,,FSDP full shard\n\
                   somebody_else,m,c.json,0.1,h100-sxm,16,8,bf16,16384,16,1,1,1,1,,,16,fsdp,none,1000,,,FSDP full shard; flash-attn 2.5.8\n";
        let rows: Vec<RunRow> = csv::Reader::from_reader(csv.as_bytes()).deserialize().map(Result::unwrap).collect();
        let catalog = Catalog::builtin();
        let predictor = wavecast_predict::by_name(wavecast_predict::DEFAULT_PREDICTOR).unwrap();
        let comm = CommModel::default();
        let replayed = replay(&rows[0], &spec, &catalog, predictor.as_ref(), &comm).unwrap();
        let layout = Layout { dp: 16, zero: 3, micro_batch: 1, ..Layout::default() };
        let o = TrainOptions { global_batch: 16, seq: 16384, dtype: DType::Bf16, optimizer: OptimizerKind::Adam, layout, stack: Stack::EAGER, power_limit_w: None };
        let gpu = catalog.get("h100-sxm").unwrap();
        let cli = train_step(&spec, &o, &Topology::eight_per_node(), gpu, predictor.as_ref(), &comm, Some(16)).unwrap();
        assert_eq!(replayed.step_ms, cli.step_ms);
        assert!(!runs_flash_attention_2(&rows[0]) && runs_flash_attention_2(&rows[1]));
        let fa2 = replay(&rows[1], &spec, &catalog, predictor.as_ref(), &comm).unwrap();
        assert!(fa2.step_ms > 1.02 * cli.step_ms, "{} vs {}", fa2.step_ms, cli.step_ms);
    }

    #[test]
    fn a_stated_power_limit_is_read_and_an_unstated_one_is_not_replayed() {
        let csv = "source_id,model,hf_like_config,num_params_b,gpu,num_gpus,gpus_per_node,precision,seq_len,global_batch_seqs,micro_batch,tp,pp,cp,vp,ep,dp,fsdp_or_zero,recompute,measured_tokens_per_s_per_gpu,measured_tflops_per_gpu,measured_mfu,notes\n\
                   s,m,c.json,8,h100-sxm,8,8,bf16,8192,8,1,1,1,1,,,8,fsdp2,selective,1000,,,\"H100 (96GB HBM2e, 500W power limit; 8 GPUs/host)\"\n\
                   s,m,c.json,8,b200,8,8,bf16,8192,8,1,1,1,1,,,8,fsdp2,selective,1000,,,\"single node 8x B200, POWER-LIMITED (limit not stated); torchtitan\"\n\
                   s,m,c.json,8,b200,8,8,bf16,8192,8,1,1,1,1,,,8,fsdp2,selective,1000,,,\"single node\"\n";
        let rows: Vec<RunRow> = csv::Reader::from_reader(csv.as_bytes()).deserialize().map(Result::unwrap).collect();
        assert_eq!(power_limit_of(&rows[0]).unwrap(), Some(500.0));
        assert!(power_limit_of(&rows[1]).unwrap_err().starts_with("power limit not stated"));
        assert_eq!(power_limit_of(&rows[2]).unwrap(), None);
    }

    #[test]
    fn an_expert_parallel_run_without_its_degree_is_not_replayed() {
        let csv = "source_id,model,hf_like_config,num_params_b,gpu,num_gpus,gpus_per_node,precision,seq_len,global_batch_seqs,micro_batch,tp,pp,cp,vp,ep,dp,fsdp_or_zero,recompute,measured_tokens_per_s_per_gpu,measured_tflops_per_gpu,measured_mfu,notes\n\
                   s,m,c.json,117,h100-sxm,64,8,bf16,4096,512,2,1,1,1,,,64,fsdp2,unknown,1000,,,\"FSDP=64; kernels: TE + DeepEP + FlexAttn\"\n\
                   s,m,c.json,117,h100-sxm,64,8,bf16,4096,512,2,1,1,1,,8,64,fsdp2,unknown,1000,,,\"kernels: TE + DeepEP\"\n\
                   s,m,c.json,117,h100-sxm,64,8,bf16,4096,512,2,1,1,1,,,64,fsdp2,unknown,1000,,,\"FSDP=64\"\n";
        let rows: Vec<RunRow> = csv::Reader::from_reader(csv.as_bytes()).deserialize().map(Result::unwrap).collect();
        assert!(layout_of(&rows[0], Recompute::None).unwrap_err().starts_with("expert-parallel degree not stated"));
        assert_eq!(layout_of(&rows[1], Recompute::None).unwrap().ep, 8);
        assert_eq!(layout_of(&rows[2], Recompute::None).unwrap().ep, 1);
    }

    /// Every published run that ran is replayed without being refused as too big, and its
    /// predicted memory stays within the GPU (skipped where ../shared is absent).
    #[test]
    fn published_runs_that_ran_fit_in_memory() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/training/published_runs.csv");
        if !data.is_file() {
            eprintln!("skipped: {} not present", data.display());
            return;
        }
        let out = eval_training(&data, &Catalog::builtin(), wavecast_predict::DEFAULT_PREDICTOR, &|_, _| {}).unwrap();
        assert!(out.rows.len() >= 100, "only {} runs replayed", out.rows.len());
        assert!(out.refused_as_too_big.is_empty(), "{:?}", out.refused_as_too_big);
        for r in &out.rows {
            assert!(r.memory_gb <= r.capacity_gb && r.headroom_pct >= 0.0, "{}: {} of {} GB", r.id, r.memory_gb, r.capacity_gb);
            assert!(r.predicted_tokens_per_s_per_gpu.is_finite() && r.predicted_tokens_per_s_per_gpu > 0.0, "{}", r.id);
        }
        // The bands the issue names are all populated.
        for b in BANDS {
            assert!(out.bands.iter().any(|g| g.band == b && g.n > 0), "band {b} empty");
        }
    }

    #[test]
    fn the_projects_own_runs_replay_with_their_sources() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/data/training_runs.csv");
        let rows = read_runs(&data).unwrap();
        let text = std::fs::read_to_string(&data).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let sources: Vec<String> = reader.deserialize::<std::collections::HashMap<String, String>>().map(|r| r.unwrap()["source"].clone()).collect();
        assert_eq!(sources.len(), rows.len());
        assert!(sources.iter().all(|s| !s.trim().is_empty()), "every row cites its source");
        let out = eval_training(&data, &Catalog::builtin(), wavecast_predict::DEFAULT_PREDICTOR, &|_, _| {}).unwrap();
        assert_eq!(out.rows.len() + out.unreplayed.len(), rows.len(), "no row is dropped");
        assert!(!out.rows.is_empty());
    }
}
