//! One LLM serving workload on several GPUs and tensor-parallel degrees: every combination that
//! runs, and the ones that cannot with the reason.

use crate::serve::{serve, ServeReport};
use crate::SimError;
use serde::Serialize;
use wavecast_gpu::Gpu;
use wavecast_ir::DType;
use crate::serving::Pricing;
use wavecast_workload::{ServeOptions, TransformerSpec};

/// A GPU/TP pair that could not run the workload, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub gpu: String,
    pub tp: u64,
    pub reason: String,
}

/// Every GPU × TP result (the `--json` output of `compare`).
#[derive(Debug, Clone, Serialize)]
pub struct CompareReport {
    pub model: String,
    pub predictor: String,
    pub batch: u64,
    pub input_len: u64,
    pub output_len: u64,
    pub dtype: DType,
    /// The format the layers' weights are stored in (see [`crate::ServeReport`]).
    #[serde(rename = "weights")]
    pub weight_format: String,
    #[serde(rename = "weight_dtype")]
    pub weights: DType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quant: Option<wavecast_ir::Quant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moe_quant: Option<wavecast_ir::Quant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_dtype: Option<DType>,
    pub results: Vec<ServeReport>,
    pub skipped: Vec<Skipped>,
    /// The results' notes, each once (a GPU without BF16 units runs FP16 activations).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Serves `base` (its `tp` is ignored) on every GPU of `gpus` at every degree of `tps`. A
/// combination that cannot run is listed in `skipped`; none running at all is an error. With
/// `checkpoint_formats` (no `--weights` given) a GPU without units for the checkpoint's own
/// formats is skipped in `predict --mode serve`'s words, which name `--weights bf16`.
pub fn compare(spec: &TransformerSpec, gpus: &[&Gpu], tps: &[u64], pricing: Pricing, base: &ServeOptions, backend: crate::serving::Backend, checkpoint_formats: bool) -> Result<CompareReport, SimError> {
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for gpu in gpus {
        // The checkpoint's formats are the GPU's question, asked once for all its degrees.
        let unsupported = if checkpoint_formats { crate::serve::check_served_quants(spec, gpu).err().map(|e| e.to_string()) } else { None };
        for &tp in tps {
            if let Some(reason) = &unsupported {
                skipped.push(Skipped { gpu: gpu.id.clone(), tp, reason: reason.clone() });
                continue;
            }
            let o = ServeOptions { tp, ..base.clone() };
            match serve(spec, gpu, pricing, &o, backend) {
                Ok(r) => results.push(r),
                Err(e) => skipped.push(Skipped { gpu: gpu.id.clone(), tp, reason: e.to_string() }),
            }
        }
    }
    if results.is_empty() {
        let reasons: Vec<String> = skipped.iter().map(|s| format!("{} TP {}: {}", s.gpu, s.tp, s.reason)).collect();
        return Err(SimError::Invalid(format!("no GPU/TP combination can serve this workload: {}", reasons.join("; "))));
    }
    // The formats every GPU runs, where they agree; else the ones asked for, and the notes say
    // which GPUs run others (FP16 where there are no BF16 units).
    let first = &results[0];
    let agreed = results.iter().all(|r| (r.dtype, r.weights, r.kv_dtype) == (first.dtype, first.weights, first.kv_dtype));
    let (dtype, weights, kv_dtype) = if agreed { (first.dtype, first.weights, first.kv_dtype) } else { (base.dtype, base.weights, base.kv_dtype.filter(|k| *k != base.dtype)) };
    Ok(CompareReport {
        model: spec.name.clone(),
        predictor: pricing.ops.name().to_string(),
        batch: base.batch,
        input_len: base.input_len,
        output_len: base.output_len,
        dtype,
        weight_format: crate::serve::weight_format_name(weights, base.quant),
        weights,
        quant: base.quant,
        // As the engines run them (every result runs the same checkpoint the same way).
        moe_quant: first.moe_quant,
        kv_dtype,
        notes: distinct_notes(&results),
        results,
        skipped,
    })
}

/// Every note of `results`, once each, in the order they first appear.
fn distinct_notes(results: &[ServeReport]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for note in results.iter().flat_map(|r| &r.notes) {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    notes
}
