//! Measured serving runs under load in AIConfigurator's `silicon_sample.csv` layout: one row per
//! (model, system, backend, precision, layout, prompt and output length, concurrency) with the
//! measured mean time to first token and time per output token. Aggregated rows give one
//! layout; disaggregated rows give a prefill and a decode pool (workers and layout each).

use crate::DataError;
use serde::Serialize;

/// One serving layout: `tp × attention_dp` GPUs per worker (= `moe_tp × moe_ep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ServingLayout {
    pub tp: u64,
    pub pp: u64,
    pub attention_dp: u64,
    pub moe_tp: u64,
    pub moe_ep: u64,
}

/// A disaggregated deployment's pools; `workers` is `None` where the file leaves it blank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Pool {
    pub workers: Option<u64>,
    pub layout: ServingLayout,
    /// Most sequences per worker (`*_batch_size`), where given.
    pub batch: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Deployment {
    /// One worker of `layout` (`workers` is `Some(1)`), or `None` where the row's concurrency is
    /// more users than that worker's batch (`batch_size` × attention DP) and the file gives no
    /// worker count that would explain it.
    Agg { layout: ServingLayout, workers: Option<u64> },
    Disagg { prefill: Pool, decode: Pool },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiliconRow {
    pub id: String,
    pub backend: String,
    pub backend_version: String,
    /// Hugging Face id of the model (`deepseek-ai/DeepSeek-V3`).
    pub model: String,
    /// The file's system name (`h100_sxm`, `b200_sxm`).
    pub system: String,
    pub precision: String,
    pub gemm_quant: String,
    pub moe_quant: String,
    pub isl: u64,
    pub osl: u64,
    /// Concurrent requests the benchmark kept in flight: `silicon_concurrency` in the provenance
    /// field, else `batch_size` times the attention-data-parallel degree (the file's batch size
    /// is per attention rank; where both are given and differ, see [`one_worker`]); `None`
    /// where the file gives neither.
    pub concurrency: Option<u64>,
    pub deployment: Deployment,
    pub ttft_ms: f64,
    pub tpot_ms: f64,
}

impl SiliconRow {
    pub fn mode(&self) -> &'static str {
        match self.deployment {
            Deployment::Agg { .. } => "agg",
            Deployment::Disagg { .. } => "disagg",
        }
    }
}

/// Bounds past which a value is a typo: tokens per request, GPUs in one parallel degree,
/// workers, batch sizes and concurrency.
const MAX_TOKENS: u64 = 10_000_000;
const MAX_DEGREE: u64 = 1024;
const MAX_COUNT: u64 = 1_000_000;

/// Columns the reader needs.
const REQUIRED: &[&str] = &["id", "backend", "model_path", "system", "precision", "mode", "isl", "osl", "silicon_ttft_ms", "silicon_tpot_ms"];

/// Reads a `silicon_sample.csv`; a missing column or a malformed value is one error naming the
/// file, line and column.
pub fn read_silicon(text: &str, path: &str) -> Result<Vec<SiliconRow>, DataError> {
    let fmt = |reason: String| DataError::Format { path: path.into(), reason };
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| fmt(e.to_string()))?.clone();
    let col = |name: &str| headers.iter().position(|h| h == name);
    if let Some(missing) = REQUIRED.iter().find(|c| col(c).is_none()) {
        return Err(fmt(format!("missing column '{missing}'")));
    }
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| fmt(format!("line {line}: {e}")))?;
        let get = |name: &str| col(name).and_then(|c| record.get(c)).unwrap_or("");
        let bad = |name: &str, why: &str| fmt(format!("line {line}: column '{name}' {why}, got '{}'", get(name)));
        let opt_u64 = |name: &str| -> Result<Option<u64>, DataError> {
            let v = get(name);
            if v.is_empty() {
                return Ok(None);
            }
            v.parse::<u64>().map(Some).map_err(|_| bad(name, "must be a whole number"))
        };
        let req_u64 = |name: &str| opt_u64(name)?.filter(|&n| (1..=MAX_TOKENS).contains(&n)).ok_or_else(|| bad(name, "must be a whole number of tokens in 1..=10000000"));
        let ms = |name: &str| get(name).parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| bad(name, "must be a positive number of milliseconds"));
        let layout = |prefix: &str| -> Result<ServingLayout, DataError> {
            let one = |n: &str| -> Result<u64, DataError> {
                let name = format!("{prefix}{n}");
                match opt_u64(&name)? {
                    Some(v) if v > MAX_DEGREE => Err(bad(&name, "must be at most 1024")),
                    v => Ok(v.filter(|&v| v > 0).unwrap_or(1)),
                }
            };
            Ok(ServingLayout { tp: one("tp_size")?, pp: one("pp_size")?, attention_dp: one("attention_dp_size")?, moe_tp: one("moe_tp_size")?, moe_ep: one("moe_ep_size")? })
        };
        let deployment = match get("mode") {
            "agg" => Deployment::Agg { layout: layout("")?, workers: Some(1) },
            "disagg" => {
                let bounded = |name: String| -> Result<Option<u64>, DataError> {
                    match opt_u64(&name)? {
                        Some(v) if v > MAX_COUNT => Err(bad(&name, "must be at most 1000000")),
                        v => Ok(v),
                    }
                };
                let pool = |p: &str| -> Result<Pool, DataError> { Ok(Pool { workers: bounded(format!("{p}num_workers"))?, layout: layout(p)?, batch: bounded(format!("{p}batch_size"))? }) };
                Deployment::Disagg { prefill: pool("prefill_")?, decode: pool("decode_")? }
            }
            _ => return Err(bad("mode", "must be 'agg' or 'disagg'")),
        };
        let per_rank_batch = opt_u64("batch_size")?.filter(|&c| c > 0);
        let reported = concurrency_from_source(get("silicon_data_source"));
        let mut deployment = deployment;
        if let (Deployment::Agg { layout, workers }, Some(users), Some(batch)) = (&mut deployment, reported, per_rank_batch) {
            (*layout, *workers) = one_worker(*layout, get("attention_dp_size").is_empty(), users, batch);
        }
        let attention_ranks = match deployment {
            Deployment::Agg { layout, .. } => layout.attention_dp.max(1),
            Deployment::Disagg { .. } => 1,
        };
        let concurrency = reported.or(per_rank_batch.map(|b| b.saturating_mul(attention_ranks)));
        if concurrency.is_some_and(|c| c > MAX_COUNT) {
            return Err(bad("batch_size", "(the concurrency) must be at most 1000000"));
        }
        rows.push(SiliconRow {
            id: get("id").to_string(),
            backend: get("backend").to_string(),
            backend_version: get("backend_version").to_string(),
            model: get("model_path").to_string(),
            system: get("system").to_string(),
            precision: get("precision").to_string(),
            gemm_quant: get("gemm_quant_mode").to_string(),
            moe_quant: get("moe_quant_mode").to_string(),
            isl: req_u64("isl")?,
            osl: req_u64("osl")?,
            concurrency,
            deployment,
            ttft_ms: ms("silicon_ttft_ms")?,
            tpot_ms: ms("silicon_tpot_ms")?,
        });
    }
    Ok(rows)
}

/// An aggregated row's layout and workers given its `users` and per-rank `batch`. Where the
/// attention-DP column is blank but the users are exactly `batch` × `tp` (12 TensorRT-LLM rows
/// of the shared file: DeepSeek-R1/V3.1 NVFP4 and gpt-oss-120b), the run used attention data
/// parallelism across the tensor-parallel group with the batch given per rank, as TensorRT-LLM's
/// attention DP does: read as `tp` attention ranks of TP1 (an inference from the file, which does
/// not say so). Any other concurrency above the worker's batch needs a worker count the file does
/// not give (`None`); a concurrency within it is the users, the batch a limit.
fn one_worker(layout: ServingLayout, dp_blank: bool, users: u64, batch: u64) -> (ServingLayout, Option<u64>) {
    if dp_blank && layout.tp > 1 && layout.attention_dp <= 1 && users == batch.saturating_mul(layout.tp) {
        return (ServingLayout { tp: 1, attention_dp: layout.tp, ..layout }, Some(1));
    }
    let per_worker = batch.saturating_mul(layout.attention_dp.max(1));
    (layout, if users > per_worker { None } else { Some(1) })
}

/// `silicon_concurrency=N` inside the `;`-separated provenance field.
fn concurrency_from_source(source: &str) -> Option<u64> {
    source.split(';').find_map(|part| part.trim().strip_prefix("silicon_concurrency=")?.parse().ok()).filter(|&c| c > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,prefill_batch_size,prefill_num_workers,prefill_tp_size,prefill_pp_size,prefill_attention_dp_size,prefill_moe_tp_size,prefill_moe_ep_size,decode_batch_size,decode_num_workers,decode_tp_size,decode_pp_size,decode_attention_dp_size,decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms";

    #[test]
    fn aggregated_and_disaggregated_rows() {
        let text = format!(
            "{HEAD}\na,x,vllm,0.1,m/M,h100_sxm,fp8,agg,1024,128,fp8,fp8,16,4,1,,4,1,,,,,,,,,,,,,,,50.5,7.25\n\
             b,config_id=1; silicon_concurrency=64,trtllm,1,m/M,b200_sxm,fp4,disagg,8192,1024,nvfp4,nvfp4,,,,,,,1,2,1,1,8,8,1,16,1,1,1,8,1,8,900,30\n"
        );
        let rows = read_silicon(&text, "s.csv").unwrap();
        assert_eq!(rows[0].concurrency, Some(16));
        assert_eq!(rows[0].deployment, Deployment::Agg { layout: ServingLayout { tp: 4, pp: 1, attention_dp: 1, moe_tp: 4, moe_ep: 1 }, workers: Some(1) });
        assert_eq!(rows[1].concurrency, Some(64), "from silicon_concurrency");
        // The batch size is per attention-data-parallel rank; the provenance's concurrency wins.
        let ranked_text = format!(
            "{HEAD}\nc,x,sglang,0.1,m/M,b200_sxm,fp8,agg,1024,128,fp8,fp8,8,1,1,4,1,4,,,,,,,,,,,,,,,50.5,7.25\n\
             d,silicon_concurrency=128,trtllm,1,m/M,b200_sxm,fp4,agg,1024,1024,nvfp4,nvfp4,2,1,1,8,1,8,,,,,,,,,,,,,,,700,20\n"
        );
        let ranked = read_silicon(&ranked_text, "s.csv").unwrap();
        assert_eq!((ranked[0].concurrency, ranked[1].concurrency), (Some(32), Some(128)));
        // 128 users, 2 per rank of 8 ranks: more than one worker holds, and no worker count.
        let workers = |r: &SiliconRow| match r.deployment {
            Deployment::Agg { workers, .. } => workers,
            Deployment::Disagg { .. } => Some(0),
        };
        assert_eq!((workers(&ranked[0]), workers(&ranked[1])), (Some(1), None));
        let Deployment::Disagg { prefill, decode } = rows[1].deployment else { panic!("disagg") };
        assert_eq!((prefill.workers, prefill.layout.attention_dp, decode.workers, decode.batch), (Some(2), 8, Some(1), Some(16)));
        assert_eq!(rows[1].mode(), "disagg");
    }

    /// Users = batch × TP with the DP column blank: attention DP across the TP group; more
    /// users than one worker's batch otherwise: no worker count; fewer: the batch is a limit.
    #[test]
    fn concurrency_beyond_the_batch_is_attention_dp_or_unexplained() {
        let tp8 = ServingLayout { tp: 8, pp: 1, attention_dp: 1, moe_tp: 8, moe_ep: 1 };
        let (l, w) = one_worker(tp8, true, 80, 10);
        assert_eq!((l.tp, l.attention_dp, l.moe_tp, w), (1, 8, 8, Some(1)));
        assert_eq!(one_worker(tp8, false, 80, 10), (tp8, None), "an explicit DP of 1 is not overridden");
        let tp2 = ServingLayout { tp: 2, moe_tp: 2, ..tp8 };
        assert_eq!(one_worker(tp2, true, 416, 13), (tp2, None), "416 users, 13 per rank of TP2");
        assert_eq!(one_worker(tp2, true, 8, 13), (tp2, Some(1)));
        assert_eq!(one_worker(ServingLayout { tp: 1, attention_dp: 64, ..tp8 }, false, 32, 32).1, Some(1));
    }

    #[test]
    fn malformed_files_name_line_and_column() {
        let e = read_silicon("id,backend\na,vllm\n", "s.csv").unwrap_err().to_string();
        assert!(e.contains("missing column 'model_path'"), "{e}");
        let row = "a,x,vllm,0.1,m/M,h100_sxm,fp8,agg,1024,128,fp8,fp8,16,4,1,,4,1,,,,,,,,,,,,,,,abc,7.25";
        let e = read_silicon(&format!("{HEAD}\n{row}\n"), "s.csv").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("silicon_ttft_ms"), "{e}");
        let row = "a,x,vllm,0.1,m/M,h100_sxm,fp8,sideways,1024,128,fp8,fp8,16,4,1,,4,1,,,,,,,,,,,,,,,1,1";
        assert!(read_silicon(&format!("{HEAD}\n{row}\n"), "s.csv").unwrap_err().to_string().contains("'agg' or 'disagg'"));
    }
}
