//! LLM serving questions: one static batch on one GPU or a TP group, and the same workload
//! compared across GPUs and TP degrees.

use crate::request::{transformer_spec, CompareRequest, ModeChoice, PredictRequest};
use crate::{Error, Result};
use wavecast_gpu::Gpu;
use wavecast_ir::DType;
use wavecast_predict::ladder::LadderOps;
use wavecast_sim::serve::{kv_cache_dtype, weight_format};
use wavecast_sim::serving::Pricing;
use wavecast_sim::{CompareReport, ServeReport};
use wavecast_workload::{ServeOptions, TransformerSpec};


/// The static batch's options; without `--weights` the checkpoint's own formats, as the
/// engines load it (see [`TransformerSpec::served_quants`]).
fn options(spec: &TransformerSpec, batch: u64, input_len: u64, output_len: u64, dtype: &str, weights: Option<&str>, kv_dtype: Option<&str>) -> Result<ServeOptions> {
    // Left to `auto`, BF16 here; the simulator runs FP16 on a GPU without BF16 units.
    let given = wavecast_sim::serve::activation_dtype(dtype)?;
    let dtype = given.unwrap_or(DType::Bf16);
    let mut o = ServeOptions::new(batch, input_len, output_len, dtype);
    o.dtype_auto = given.is_none();
    match weights {
        Some(_) => (o.weights, o.quant) = weight_format(weights, dtype)?,
        None => {
            let served = spec.served_quants();
            (o.quant, o.moe_quant) = (served.layers, served.experts);
        }
    }
    o.kv_dtype = kv_cache_dtype(kv_dtype)?;
    Ok(o)
}

/// The price ladder itself when `predictor` names it, reading the serving engine `engine`'s
/// tables first (empty: the default's): the simulator then prices the routed experts as the
/// fused MoE kernel, exactly as `serve-sim` does.
fn ladder_for(predictor: &str, ops_data: Option<&std::path::Path>, engine: &str) -> Result<Option<LadderOps>> {
    if predictor != "ladder" {
        return Ok(None);
    }
    Ok(Some(LadderOps::load_for(ops_data, None, engine).map_err(crate::Error::new)?))
}

fn pricing<'a>(predictor: &'a dyn wavecast_predict::Predictor, ladder: Option<&'a LadderOps>) -> Pricing<'a> {
    match ladder {
        Some(l) => Pricing::ladder(l),
        None => Pricing { ops: predictor, ladder: None, cache: None },
    }
}

/// Answers a [`PredictRequest`] in serve mode (`predict --mode serve`): prefill, decode steps,
/// memory and cost of one static batch.
pub fn serve(req: &PredictRequest) -> Result<ServeReport> {
    req.expect_mode(ModeChoice::Serve, "serve")?;
    req.check_flags()?;
    if req.image_size.is_some() || req.onnx.is_some() {
        return Err(Error::new("--mode serve models LLM decoding: give a transformer with --model or --config (no --onnx or --image-size)"));
    }
    let (Some(input_len), Some(output_len)) = (req.input_len, req.output_len) else {
        return Err(Error::new("serve mode needs --input-len and --output-len"));
    };
    let catalog = crate::price::catalog(req.gpu_file.as_deref(), &req.price, std::slice::from_ref(&req.gpu))?;
    let gpu = catalog.get(&req.gpu)?;
    let spec = transformer_spec(&req.model, &req.config)?;
    let dtype = req.dtype.as_deref().unwrap_or(crate::defaults::SERVE_DTYPE);
    if req.weights.is_none() {
        wavecast_sim::serve::check_served_quants(&spec, gpu)?;
    }
    let mut o = options(&spec, req.batch, input_len, output_len, dtype, req.weights.as_deref(), req.kv_dtype.as_deref())?;
    o.tp = req.tp;
    let predictor = wavecast_predict::by_name_with(req.predictor(), None, req.ops_data.as_deref())?;
    let backend = backend(req.backend.as_deref())?;
    let ladder = ladder_for(req.predictor(), req.ops_data.as_deref(), backend.name)?;
    let report = wavecast_sim::serve(&spec, gpu, pricing(predictor.as_ref(), ladder.as_ref()), &o, backend)?;
    crate::error::refuse_partial(&report.unpriced, req.allow_partial)?;
    Ok(report)
}

/// The engine `--backend` names, the default one when none.
fn backend(name: Option<&str>) -> Result<wavecast_sim::serving::Backend> {
    match name {
        Some(name) => name.parse().map_err(Error::new),
        None => Ok(wavecast_sim::serve::default_backend()),
    }
}

/// Answers a [`CompareRequest`]: every GPU × TP combination that runs, and why the others don't.
pub fn compare(req: &CompareRequest) -> Result<CompareReport> {
    // Sizes are the request's, not one GPU's: a zero is bad input, not a row to skip.
    for (name, value) in [("--batch", req.batch), ("--input-len", req.input_len), ("--output-len", req.output_len)].into_iter().chain(req.tp.iter().map(|t| ("--tp", *t))) {
        wavecast_ir::dim(name, value).map_err(|e| Error::new(e.to_string()))?;
    }
    let catalog = crate::price::catalog(req.gpu_file.as_deref(), &req.price, &req.gpus)?;
    // Unknown GPU names are input errors, not rows to skip.
    let mut gpus = req.gpus.iter().map(|g| catalog.get(g)).collect::<std::result::Result<Vec<&Gpu>, _>>()?;
    // Two names of one GPU (`h100`, `h100-sxm`) are one column, not two identical ones.
    let mut seen = std::collections::HashSet::new();
    gpus.retain(|g| seen.insert(g.id.clone()));
    let spec = transformer_spec(&req.model, &req.config)?;
    let o = options(&spec, req.batch, req.input_len, req.output_len, &req.dtype, req.weights.as_deref(), req.kv_dtype.as_deref())?;
    let predictor = wavecast_predict::by_name_with(&req.predictor, None, req.ops_data.as_deref())?;
    let backend = backend(req.backend.as_deref())?;
    let ladder = ladder_for(&req.predictor, req.ops_data.as_deref(), backend.name)?;
    // A degree named twice is one row.
    let mut tps = req.tp.clone();
    let mut seen_tp = std::collections::HashSet::new();
    tps.retain(|t| seen_tp.insert(*t));
    let report = wavecast_sim::compare(&spec, &gpus, &tps, pricing(predictor.as_ref(), ladder.as_ref()), &o, backend, req.weights.is_none())?;
    for row in &report.results {
        crate::error::refuse_partial(&row.unpriced, req.allow_partial).map_err(|e| crate::Error::new(format!("{} tp{}: {e}", row.gpu, row.tp)))?;
    }
    Ok(report)
}
