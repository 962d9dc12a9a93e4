//! A PyTorch profiler trace from the GPU you have, carried to others (`wavecast scale`).
//!
//! The origin time is the sum of the trace's kernel durations (measured); each destination's
//! is the sum of every kernel carried over by `wavecast_trace::scale`. Per profiler step when
//! the trace marks steps (`ProfilerStep#N`), else for the whole trace as one iteration.

use crate::request::{GammaChoice, ScaleMethodChoice, ScaleRequest};
use crate::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_predict::wave_scaling::{scaling_interval, shipped_intervals, ScalingIntervals, WaveForm};
use wavecast_predict::kernels::gemm_tile;
use wavecast_predict::Predictor;
use wavecast_trace::scale::{scale as scale_trace, GammaSource, Options, ScalePath, Scaling};
use wavecast_trace::{load, match_device, Trace};

#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    pub class: String,
    pub kernels: usize,
    pub origin_ms: f64,
    pub dest_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Destination {
    pub gpu: String,
    pub kernel_ms: f64,
    pub per_step_ms: f64,
    /// Per step: every kernel at the low and at the high end of its class's held-out scaling
    /// interval (errors assumed not to cancel), ms.
    pub interval_ms: [f64; 2],
    pub speedup: f64,
    pub steps_per_s: f64,
    pub usd_per_hour: Option<f64>,
    pub usd_per_1k_steps: Option<f64>,
    pub classes: Vec<ClassRow>,
    pub paths: BTreeMap<ScalePath, usize>,
    pub notes: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Origin {
    pub gpu: String,
    pub matched: String,
    pub kernel_ms: f64,
    pub per_step_ms: f64,
    pub transfer_ms: f64,
    pub usd_per_hour: Option<f64>,
}

/// One kernel of the trace on every destination (`scale --kernels N`).
#[derive(Debug, Clone, Serialize)]
pub struct KernelRow {
    /// Position in the trace's kernel order.
    pub index: usize,
    pub name: String,
    pub class: String,
    /// Output tile a GEMM kernel's name gives (cuBLAS `sgemm_128x64`, Tensile `MT128x64x16`),
    /// as columns × rows.
    pub tile: Option<String>,
    pub origin_us: f64,
    pub destinations: Vec<KernelOnGpu>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelOnGpu {
    pub gpu: String,
    pub us: f64,
    pub path: ScalePath,
}

#[derive(Debug, Clone, Serialize)]
/// A trace carried to other GPUs (the `--json` output of `scale`).
pub struct ScaleReport {
    pub trace: String,
    pub kernels: usize,
    pub steps: u32,
    pub shapes_recorded: bool,
    pub method: &'static str,
    pub predictor: Option<String>,
    pub wave_form: WaveForm,
    pub gamma: GammaSource,
    pub origin: Origin,
    pub destinations: Vec<Destination>,
    /// The longest kernels one by one, when asked for (`--kernels N`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_rows: Vec<KernelRow>,
}

/// The `n` longest kernels of `trace` (by origin time), each on every destination.
fn kernel_rows(trace: &Trace, scalings: &[Scaling], n: usize) -> Vec<KernelRow> {
    let Some(first) = scalings.first() else { return Vec::new() };
    let mut order: Vec<usize> = (0..first.kernels.len()).collect();
    order.sort_by(|&a, &b| first.kernels[b].origin_us.total_cmp(&first.kernels[a].origin_us).then(a.cmp(&b)));
    order
        .into_iter()
        .take(n)
        .map(|i| {
            let k = &first.kernels[i];
            let name = trace.kernels[k.kernel].name.to_string();
            KernelRow {
                index: k.kernel,
                tile: gemm_tile(&name).map(|(c, r)| format!("{c}x{r}")),
                name,
                class: k.family.to_string(),
                origin_us: k.origin_us,
                destinations: scalings.iter().map(|s| KernelOnGpu { gpu: s.dest.clone(), us: s.kernels[i].dest_us, path: s.kernels[i].path }).collect(),
            }
        })
        .collect()
}

/// The origin GPU: `--from`, else the trace's recorded device.
fn origin<'c>(from: Option<&str>, trace: &Trace, cat: &'c Catalog) -> Result<(&'c Gpu, String)> {
    let recorded = trace.main_device().map(|d| match_device(d, cat));
    match (from, recorded) {
        (Some(name), rec) => {
            let g = cat.get(name)?;
            // The kernels a trace records are one vendor's libraries: another vendor's GPU
            // cannot be where they ran.
            if let Some(Ok(m)) = &rec {
                let recorded = cat.get(&m.gpu)?;
                if recorded.vendor != g.vendor {
                    return Err(Error::new(format!(
                        "--from {name} runs {}, but the trace was recorded on {}, which runs {}: its kernels ran there",
                        g.vendor.runtime(),
                        recorded.id,
                        recorded.vendor.runtime()
                    )));
                }
            }
            let note = match rec {
                Some(Ok(m)) if m.gpu != g.id => format!("--from {name} (the trace records {})", m.gpu),
                _ => format!("--from {name}"),
            };
            Ok((g, note))
        }
        (None, Some(Ok(m))) => Ok((cat.get(&m.gpu)?, m.how)),
        (None, Some(Err(e))) => Err(e.into()),
        (None, None) => Err(Error::new("the trace records no deviceProperties; name the GPU it was recorded on with --from")),
    }
}

fn price(g: &Gpu) -> Option<f64> {
    g.price.as_ref().map(|p| p.usd_per_hour)
}

/// Per step, the low and high ends of the destination's time: each kernel's carried time at its
/// class's held-out interval for the path that carried it.
fn interval_ms(s: &Scaling, steps: f64, intervals: &ScalingIntervals) -> [f64; 2] {
    let mut ends = [0.0, 0.0];
    for k in &s.kernels {
        let method = match k.path {
            ScalePath::Predictor => "hybrid",
            ScalePath::Wave => "wave",
            ScalePath::Unchanged => "unchanged",
        };
        let [lo, hi] = scaling_interval(intervals, method, k.family);
        ends[0] += k.dest_us * lo.exp();
        ends[1] += k.dest_us * hi.exp();
    }
    ends.map(|us| us / 1e3 / steps)
}

fn destination(s: Scaling, steps: f64, origin_ms: f64, gpu: &Gpu, intervals: &ScalingIntervals) -> Destination {
    let kernel_ms = s.dest_us / 1e3;
    let per_step_ms = kernel_ms / steps;
    let interval_ms = interval_ms(&s, steps, intervals);
    let steps_per_s = 1e3 / per_step_ms;
    Destination {
        gpu: s.dest,
        kernel_ms,
        per_step_ms,
        interval_ms,
        speedup: origin_ms / kernel_ms,
        steps_per_s,
        usd_per_hour: price(gpu),
        usd_per_1k_steps: price(gpu).map(|p| p * 1000.0 / steps_per_s / 3600.0),
        classes: s.classes.into_iter().map(|c| ClassRow { class: c.class, kernels: c.kernels, origin_ms: c.origin_us / 1e3, dest_ms: c.dest_us / 1e3 }).collect(),
        paths: s.paths,
        notes: s.notes,
    }
}

/// The destinations other than the origin, each once: the origin's own time is the trace's
/// measurement, already in the report, and carrying it to itself would only add an interval
/// around a measured number. Nothing left to carry to is refused.
fn other_gpus<'c>(dests: Vec<&'c Gpu>, origin: &Gpu, trace: &Trace) -> Result<Vec<&'c Gpu>> {
    let mut others: Vec<&Gpu> = Vec::new();
    for d in dests {
        if d.id != origin.id && !others.iter().any(|o| o.id == d.id) {
            others.push(d);
        }
    }
    if others.is_empty() {
        let per_step_ms = trace.kernel_time_us() / 1e3 / trace.profiler_steps.max(1) as f64;
        return Err(Error::new(format!("--to names only {}, the GPU the trace was recorded on ({} ms per step, measured): name another GPU to carry it to", origin.id, format_ms(per_step_ms))));
    }
    Ok(others)
}

/// Milliseconds to about three significant digits, for a message.
fn format_ms(ms: f64) -> String {
    let decimals = (2.0 - ms.abs().log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{ms:.decimals$}")
}

/// Answers a [`ScaleRequest`]: the trace's kernels carried from the GPU it was recorded on to
/// every destination.
pub fn scale(req: &ScaleRequest) -> Result<ScaleReport> {
    let cat = Catalog::load(req.gpu_file.as_deref())?;
    let form: WaveForm = req.wave_form.as_deref().unwrap_or(crate::defaults::WAVE_FORM).parse()?;
    let dests: Vec<&Gpu> = req.to.iter().map(|n| cat.get(n.trim())).collect::<std::result::Result<_, _>>()?;
    let trace = load(&req.trace)?;
    if trace.kernels.is_empty() {
        return Err(Error::new(format!("{}: the trace has no GPU kernel events (was the profiler run with ProfilerActivity.CUDA?)", req.trace.display())));
    }
    // Below a nanosecond (every timer's resolution) there is no time to scale, and ratios to it
    // would not be finite.
    let shortest_us = wavecast_data::MEASURED_MS.0 * 1e3;
    if trace.kernel_time_us() < shortest_us {
        return Err(Error::new(format!("{}: the trace's {} GPU kernels last {} µs in all, less than the 1 ns a profiler resolves; there is no time to scale", req.trace.display(), trace.kernels.len(), trace.kernel_time_us())));
    }
    let (from, matched) = origin(req.from.as_deref(), &trace, &cat)?;
    let dests = other_gpus(dests, from, &trace)?;
    wavecast_trace::scale::check_dtypes(&trace, &dests).map_err(Error::new)?;
    let predictor: Option<Box<dyn Predictor>> = match req.method {
        ScaleMethodChoice::Hybrid => Some(wavecast_predict::by_name(req.predictor.as_deref().unwrap_or(crate::defaults::PREDICTOR))?),
        // Every flag that does not apply is refused, never ignored.
        ScaleMethodChoice::Wave if req.predictor.is_some() => return Err(Error::new("--predictor applies to --method hybrid only: --method wave scales every kernel by waves")),
        ScaleMethodChoice::Wave => None,
    };
    let gamma = match req.gamma {
        GammaChoice::Wavecast => GammaSource::Wavecast,
        GammaChoice::Habitat => GammaSource::Habitat,
    };
    let opts = Options { form, gamma, predictor: predictor.as_deref() };
    let steps = trace.profiler_steps.max(1) as f64;
    let origin_ms = trace.kernel_time_us() / 1e3;
    let scalings: Vec<Scaling> = dests.iter().map(|d| scale_trace(&trace, from, d, &opts)).collect();
    let kernel_rows = kernel_rows(&trace, &scalings, req.kernels.unwrap_or(0));
    let intervals = shipped_intervals();
    let destinations = scalings.into_iter().zip(&dests).map(|(s, d)| destination(s, steps, origin_ms, d, &intervals)).collect();
    Ok(ScaleReport {
        trace: req.trace.display().to_string(),
        kernels: trace.kernels.len(),
        steps: trace.profiler_steps.max(1),
        shapes_recorded: trace.has_shapes(),
        method: if predictor.is_some() { "hybrid" } else { "wave" },
        predictor: predictor.as_ref().map(|p| p.name().to_string()),
        wave_form: form,
        gamma,
        origin: Origin {
            gpu: from.id.clone(),
            matched,
            kernel_ms: origin_ms,
            per_step_ms: origin_ms / steps,
            transfer_ms: trace.transfer_time_us() / 1e3,
            usd_per_hour: price(from),
        },
        destinations,
        kernel_rows,
    })
}
