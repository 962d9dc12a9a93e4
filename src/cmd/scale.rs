//! `wavecast scale`: bring a PyTorch profiler trace from your GPU, get the time on others.
//!
//! The origin time is the sum of the trace's kernel durations (measured); each destination's
//! is the sum of every kernel carried over by `wavecast_trace::scale`. Per profiler step when
//! the trace marks steps (`ProfilerStep#N`), else for the whole trace as one iteration.

use super::{catalog, print_json, Result};
use crate::cli::{GammaArg, ScaleArgs, ScaleMethod};
use crate::table;
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_predict::wave_scaling::WaveForm;
use wavecast_predict::Predictor;
use wavecast_trace::scale::{scale, GammaSource, Options, ScalePath, Scaling};
use wavecast_trace::{load, match_device, Trace};

#[derive(Serialize)]
struct ClassRow {
    class: String,
    kernels: usize,
    origin_ms: f64,
    dest_ms: f64,
}

#[derive(Serialize)]
struct Destination {
    gpu: String,
    kernel_ms: f64,
    per_step_ms: f64,
    speedup: f64,
    steps_per_s: f64,
    usd_per_hour: Option<f64>,
    usd_per_1k_steps: Option<f64>,
    classes: Vec<ClassRow>,
    paths: BTreeMap<ScalePath, usize>,
    notes: BTreeMap<String, usize>,
}

#[derive(Serialize)]
struct Origin {
    gpu: String,
    matched: String,
    kernel_ms: f64,
    per_step_ms: f64,
    transfer_ms: f64,
    usd_per_hour: Option<f64>,
}

#[derive(Serialize)]
struct Report {
    trace: String,
    kernels: usize,
    steps: u32,
    shapes_recorded: bool,
    method: &'static str,
    predictor: Option<String>,
    wave_form: WaveForm,
    gamma: GammaSource,
    origin: Origin,
    destinations: Vec<Destination>,
}

/// The origin GPU: `--from`, else the trace's recorded device.
fn origin<'c>(a: &ScaleArgs, trace: &Trace, cat: &'c Catalog) -> Result<(&'c Gpu, String)> {
    let recorded = trace.main_device().map(|d| match_device(d, cat));
    match (&a.from, recorded) {
        (Some(name), rec) => {
            let g = cat.get(name)?;
            let note = match rec {
                Some(Ok(m)) if m.gpu != g.id => format!("--from {name} (the trace records {})", m.gpu),
                _ => format!("--from {name}"),
            };
            Ok((g, note))
        }
        (None, Some(Ok(m))) => Ok((cat.get(&m.gpu)?, m.how)),
        (None, Some(Err(e))) => Err(e.into()),
        (None, None) => Err("the trace records no deviceProperties; name the GPU it was recorded on with --from".into()),
    }
}

fn price(g: &Gpu) -> Option<f64> {
    g.price.as_ref().map(|p| p.usd_per_hour)
}

fn destination(s: Scaling, steps: f64, origin_ms: f64, gpu: &Gpu) -> Destination {
    let kernel_ms = s.dest_us / 1e3;
    let per_step_ms = kernel_ms / steps;
    let steps_per_s = 1e3 / per_step_ms;
    Destination {
        gpu: s.dest,
        kernel_ms,
        per_step_ms,
        speedup: origin_ms / kernel_ms,
        steps_per_s,
        usd_per_hour: price(gpu),
        usd_per_1k_steps: price(gpu).map(|p| p * 1000.0 / steps_per_s / 3600.0),
        classes: s.classes.into_iter().map(|c| ClassRow { class: c.class, kernels: c.kernels, origin_ms: c.origin_us / 1e3, dest_ms: c.dest_us / 1e3 }).collect(),
        paths: s.paths,
        notes: s.notes,
    }
}

pub fn run(a: ScaleArgs) -> Result<()> {
    let cat = catalog(&a.gpu_file)?;
    let form: WaveForm = a.wave_form.parse()?;
    let dests: Vec<&Gpu> = a.to.iter().map(|n| cat.get(n.trim())).collect::<std::result::Result<_, _>>()?;
    let trace = load(&a.trace)?;
    if trace.kernels.is_empty() {
        return Err(format!("{}: the trace has no GPU kernel events (was the profiler run with ProfilerActivity.CUDA?)", a.trace.display()).into());
    }
    let (from, matched) = origin(&a, &trace, &cat)?;
    let predictor: Option<Box<dyn Predictor>> = match a.method {
        ScaleMethod::Hybrid => Some(wavecast_predict::by_name(a.predictor.as_deref().unwrap_or(wavecast_predict::DEFAULT_PREDICTOR))?),
        ScaleMethod::Wave => None,
    };
    let gamma = match a.gamma {
        GammaArg::Wavecast => GammaSource::Wavecast,
        GammaArg::Habitat => GammaSource::Habitat,
    };
    let opts = Options { form, gamma, predictor: predictor.as_deref() };
    let steps = trace.profiler_steps.max(1) as f64;
    let origin_ms = trace.kernel_time_us() / 1e3;
    let destinations = dests.iter().map(|d| destination(scale(&trace, from, d, &opts), steps, origin_ms, d)).collect();
    let report = Report {
        trace: a.trace.display().to_string(),
        kernels: trace.kernels.len(),
        steps: trace.profiler_steps.max(1),
        shapes_recorded: trace.has_shapes(),
        method: match a.method {
            ScaleMethod::Hybrid => "hybrid",
            ScaleMethod::Wave => "wave",
        },
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
    };
    if a.json {
        return print_json(&report);
    }
    print_report(&report);
    Ok(())
}

fn print_report(r: &Report) {
    println!(
        "trace {}: {} kernels, {} step{}, op shapes {}",
        r.trace,
        r.kernels,
        r.steps,
        if r.steps == 1 { "" } else { "s" },
        if r.shapes_recorded { "recorded" } else { "not recorded" }
    );
    let gamma = match r.gamma {
        GammaSource::Wavecast => "",
        GammaSource::Habitat => ", Habitat's γ",
    };
    println!(
        "origin {} ({}); method {} (wave form {}{gamma}{})",
        r.origin.gpu,
        r.origin.matched,
        r.method,
        r.wave_form,
        r.predictor.as_ref().map(|p| format!(", predictor {p}")).unwrap_or_default()
    );
    println!();
    print_classes(r);
    println!();
    print_comparison(r);
    for d in &r.destinations {
        for (note, n) in &d.notes {
            println!("note ({}): {note} — {n} kernel{}", d.gpu, if *n == 1 { "" } else { "s" });
        }
    }
    if r.origin.transfer_ms > 0.0 {
        println!("memcpy/memset on the origin: {} ms, not included above", table::ms(r.origin.transfer_ms));
    }
}

/// Per kernel family: measured origin ms and predicted ms on each destination, per step.
fn print_classes(r: &Report) {
    let steps = r.steps as f64;
    let mut headers = vec!["class".to_string(), "kernels".to_string(), format!("{} ms", r.origin.gpu)];
    headers.extend(r.destinations.iter().map(|d| format!("{} ms", d.gpu)));
    let mut t = table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
    let Some(first) = r.destinations.first() else { return };
    for (i, c) in first.classes.iter().enumerate() {
        let mut row = vec![c.class.clone(), c.kernels.to_string(), table::ms(c.origin_ms / steps)];
        row.extend(r.destinations.iter().map(|d| table::ms(d.classes[i].dest_ms / steps)));
        t.add_row(row);
    }
    let mut total = vec!["total".to_string(), r.kernels.to_string(), table::ms(r.origin.per_step_ms)];
    total.extend(r.destinations.iter().map(|d| table::ms(d.per_step_ms)));
    t.add_row(total);
    println!("{t}");
    println!("times per step: origin measured (sum of kernel durations), others predicted");
}

fn print_comparison(r: &Report) {
    let mut t = table::new(&["GPU", "ms/step", "speedup", "steps/s", "$/h", "$ per 1k steps"]);
    let money = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into());
    // Per-step costs are fractions of a cent: four decimals.
    let cents = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_else(|| "-".into());
    let o = &r.origin;
    let origin_rate = 1e3 / o.per_step_ms;
    t.add_row(vec![
        format!("{} (measured)", o.gpu),
        table::ms(o.per_step_ms),
        "1.00".into(),
        format!("{origin_rate:.2}"),
        money(o.usd_per_hour),
        cents(o.usd_per_hour.map(|p| p * 1000.0 / origin_rate / 3600.0)),
    ]);
    for d in &r.destinations {
        t.add_row(vec![
            d.gpu.clone(),
            table::ms(d.per_step_ms),
            format!("{:.2}", d.speedup),
            format!("{:.2}", d.steps_per_s),
            money(d.usd_per_hour),
            cents(d.usd_per_1k_steps),
        ]);
    }
    println!("{t}");
}
