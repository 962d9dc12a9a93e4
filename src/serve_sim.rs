//! LLM serving under load: one deployment simulated (`serve-sim`) and every deployment on N
//! GPUs ranked (`plan serve`).

use crate::request::{transformer_spec, PlanServeRequest, ServeSimRequest, ServingFormatArgs};
use crate::{Error, Result};
use wavecast_gpu::Catalog;
use wavecast_ir::Quant;
use wavecast_sim::serving::{self, Arrival, Backend, Formats, Layout, Lengths, Load, Pool, ServeSimOptions, Slo};
use wavecast_workload::TransformerSpec;

pub use wavecast_sim::serving::{PlanServeReport, ServeSimReport};


/// The format `flag` names, `None` for 16-bit weights.
fn quant(flag: &str, name: &Option<String>) -> Result<Option<Quant>> {
    Ok(name.as_deref().map(Quant::parse_optional).transpose().map_err(|e| Error::new(format!("{flag} {}: {e}", name.as_deref().unwrap_or_default())))?.flatten())
}

/// The deployment's number formats; without `--quant` or `--moe-quant` the checkpoint's own,
/// as the engines load it (see [`TransformerSpec::served_quants`]), with the notes they call
/// for (the activations' type a GPU settled, a checkpoint format not modelled).
fn formats(spec: &TransformerSpec, gpu: &wavecast_gpu::Gpu, a: &ServingFormatArgs) -> Result<(Formats, Backend, Vec<String>)> {
    let (dtype, dtype_note) = wavecast_sim::serve::settle_dtype(wavecast_sim::serve::activation_dtype(&a.dtype)?, gpu)?;
    let mut notes: Vec<String> = dtype_note.into_iter().collect();
    let (kv, kv_note) = wavecast_sim::serve::settle_kv_dtype(wavecast_sim::serve::kv_cache_dtype(a.kv_dtype.as_deref())?, dtype);
    notes.extend(kv_note);
    if a.moe_quant.is_some() && spec.moe.is_none() {
        return Err(Error::new(format!("--moe-quant sets the routed experts' weights, and {} has none: give --quant", spec.name)));
    }
    let (q, moe) = match (&a.quant, &a.moe_quant) {
        (None, None) => {
            wavecast_sim::serve::check_served_quants(spec, gpu)?;
            notes.extend(spec.quant_note());
            let served = spec.served_quants();
            (served.layers, served.experts)
        }
        _ => {
            let q = quant("--weights", &a.quant)?;
            (q, quant("--moe-quant", &a.moe_quant)?.or(q))
        }
    };
    let backend: Backend = a.backend.parse().map_err(Error::new)?;
    Ok((Formats { dtype, quant: q, moe_quant: moe, kv }, backend, notes))
}

fn slo(ttft: Option<f64>, tpot: Option<f64>) -> Result<Option<Slo>> {
    for (what, v) in [("TTFT", ttft), ("TPOT", tpot)] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(Error::new(format!("the {what} target must be a positive number of milliseconds, got {}", wavecast_ir::quoted(v))));
        }
    }
    Ok((ttft.is_some() || tpot.is_some()).then_some(Slo { ttft_ms: ttft, tpot_ms: tpot }))
}

fn pool(text: &str, max_seqs: Option<u64>) -> Result<Pool> {
    let mut p: Pool = text.parse().map_err(Error::new)?;
    p.max_seqs = max_seqs;
    Ok(p)
}

fn layout(req: &ServeSimRequest) -> Result<Layout> {
    if let Some(tp) = req.tp {
        if req.layout.is_some() || req.prefill.is_some() || req.decode.is_some() {
            return Err(Error::new("--tp is shorthand for --layout tpN: give one of them"));
        }
        return Ok(Layout::Agg { pool: pool(&format!("tp{tp}"), req.max_seqs)? });
    }
    match (&req.layout, &req.prefill, &req.decode) {
        (l, None, None) => Ok(Layout::Agg { pool: pool(l.as_deref().unwrap_or("tp1"), req.max_seqs)? }),
        (None, Some(p), Some(d)) => Ok(Layout::Disagg { prefill: pool(p, None)?, decode: pool(d, req.max_seqs)? }),
        (Some(_), _, _) => Err(Error::new("give either --layout (aggregated) or --prefill and --decode (disaggregated), not both")),
        _ => Err(Error::new("disaggregated serving needs both --prefill and --decode")),
    }
}

fn load(req: &ServeSimRequest) -> Result<Load> {
    let lengths = |s: &Option<String>, default: u64| -> Result<Lengths> { s.as_deref().map_or(Ok(Lengths::Fixed { tokens: default }), |s| s.parse().map_err(Error::new)) };
    let arrival = match (req.concurrency, req.rate, &req.trace) {
        (Some(c), None, None) => Arrival::Concurrency { clients: c },
        (None, Some(r), None) => Arrival::Rate { per_s: r },
        (None, None, Some(path)) => {
            if req.input.is_some() || req.output.is_some() || req.requests.is_some() {
                return Err(Error::new("a trace gives its own lengths and request count: drop --input-len, --output-len and --requests"));
            }
            let text = std::fs::read_to_string(path).map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
            return Ok(Load::from_csv(&text, &path.display().to_string())?);
        }
        (None, None, None) => Arrival::Concurrency { clients: 1 },
        _ => return Err(Error::new("give one of --concurrency, --rate or --trace")),
    };
    let n = req.requests.unwrap_or(match arrival {
        Arrival::Concurrency { clients } => serving::closed_loop_requests(clients),
        _ => 500,
    });
    Ok(Load::synthetic(n, arrival, lengths(&req.input, 1024)?, lengths(&req.output, 256)?, req.seed)?)
}

/// Answers a [`ServeSimRequest`]: TTFT, TPOT, latency percentiles, throughput and memory.
pub fn serve_sim(req: &ServeSimRequest) -> Result<ServeSimReport> {
    let catalog = Catalog::load(req.gpu_file.as_deref())?;
    let gpu = catalog.get(&req.gpu)?;
    let spec = transformer_spec(&req.model, &req.config)?;
    let (formats, backend, notes) = formats(&spec, gpu, &req.formats)?;
    // Without prefix caching every prompt is prefilled whole: a shared prefix would change nothing.
    if req.shared_prefix > 0 && !req.prefix_caching {
        return Err(Error::new("a shared prefix (--shared-prefix) is reused only with prefix caching (--prefix-caching)"));
    }
    let options = ServeSimOptions {
        layout: layout(req)?,
        formats,
        backend,
        max_batched_tokens: req.max_batched_tokens,
        chunk_tokens: None,
        chunked_prefill: req.chunked_prefill,
        prefix_caching: req.prefix_caching,
        shared_prefix: req.shared_prefix,
        slo: slo(req.slo_ttft_ms, req.slo_tpot_ms)?,
        ops_data: req.ops_data.clone(),
    };
    let mut report = serving::serve_sim(&spec, gpu, &load(req)?, &options)?;
    report.notes.extend(notes);
    Ok(report)
}

/// Answers a [`PlanServeRequest`]; `progress(done, total)` after each layout.
pub fn plan_serve(req: &PlanServeRequest, progress: &dyn Fn(usize, usize)) -> Result<PlanServeReport> {
    let catalog = Catalog::load(req.gpu_file.as_deref())?;
    let gpu = catalog.get(&req.gpu)?;
    let spec = transformer_spec(&req.model, &req.config)?;
    let (formats, backend, notes) = formats(&spec, gpu, &req.formats)?;
    let slo = slo(req.slo_ttft_ms, req.slo_tpot_ms)?.unwrap_or(Slo { ttft_ms: None, tpot_ms: None });
    let plan = serving::PlanServeRequest { gpus: req.gpus, input_len: req.input_len, output_len: req.output_len, slo, formats, backend, concurrency: req.concurrency.clone(), disaggregated: req.disaggregated, ops_data: req.ops_data.clone() };
    let mut report = serving::plan_serve(&spec, gpu, &plan, progress)?;
    report.notes.extend(notes);
    Ok(report)
}
