//! `wavecast compare`: one LLM serving workload on several GPUs and tensor-parallel degrees,
//! in one table (latency, throughput, tokens per dollar) and optionally an SVG bar chart.

use super::serve::{predict_serving, weights, ServeJson};
use super::{catalog, print_json, Result};
use crate::cli::CompareArgs;
use crate::table;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use serde::Serialize;
use std::path::Path;
use wavecast_ir::DType;
use wavecast_workload::ServeOptions;

/// A GPU/TP pair that could not run the workload, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub gpu: String,
    pub tp: u64,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct CompareJson {
    pub model: String,
    pub predictor: String,
    pub batch: u64,
    pub input_len: u64,
    pub output_len: u64,
    pub dtype: DType,
    pub weights: DType,
    pub results: Vec<ServeJson>,
    pub skipped: Vec<Skipped>,
}

pub fn run(a: CompareArgs) -> Result<()> {
    let cat = catalog(&a.gpu_file)?;
    // Unknown GPU names are input errors, not rows to skip.
    let gpus = a.gpus.iter().map(|g| cat.get(g)).collect::<std::result::Result<Vec<_>, _>>()?;
    let spec = super::predict::load_spec(&a.model, &a.config)?;
    let dtype: DType = a.dtype.parse()?;
    let w = weights(a.weights.as_deref(), dtype)?;
    let predictor = wavecast_predict::by_name(&a.predictor)?;
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for gpu in &gpus {
        for &tp in &a.tp {
            let mut o = ServeOptions::new(a.batch, a.input_len, a.output_len, dtype);
            o.tp = tp;
            o.weights = w;
            match predict_serving(&spec, gpu, predictor.as_ref(), &o) {
                Ok(r) => results.push(r),
                Err(e) => skipped.push(Skipped { gpu: gpu.id.clone(), tp, reason: e.to_string() }),
            }
        }
    }
    if results.is_empty() {
        let reasons: Vec<String> = skipped.iter().map(|s| format!("{} TP {}: {}", s.gpu, s.tp, s.reason)).collect();
        return Err(format!("no GPU/TP combination can serve this workload: {}", reasons.join("; ")).into());
    }
    let out = CompareJson {
        model: spec.name.clone(),
        predictor: predictor.name().to_string(),
        batch: a.batch,
        input_len: a.input_len,
        output_len: a.output_len,
        dtype,
        weights: w,
        results,
        skipped,
    };
    if let Some(path) = &a.plot {
        plot(&out, path)?;
    }
    if a.json {
        return print_json(&out);
    }
    print_human(&out);
    if let Some(path) = &a.plot {
        println!("plot written to {}", path.display());
    }
    Ok(())
}

fn label(r: &ServeJson) -> String {
    if r.tp > 1 {
        format!("{} ×{}", r.gpu, r.tp)
    } else {
        r.gpu.clone()
    }
}

fn print_human(c: &CompareJson) {
    let weights = if c.weights != c.dtype { format!(" · {} weights", c.weights) } else { String::new() };
    println!(
        "{} · serve · batch {} × ({} in + {} out) · {}{weights} · predictor: {}",
        c.model, c.batch, c.input_len, c.output_len, c.dtype, c.predictor
    );
    let mut t = table::new(&["GPU", "TP", "TTFT ms", "decode ms", "total ms", "tokens/s", "$/hour", "tokens/$", "mem/GPU", "comm"]);
    for r in &c.results {
        t.add_row(vec![
            r.gpu.clone(),
            r.tp.to_string(),
            table::ms(r.prefill_ms),
            table::ms(r.decode_ms),
            table::ms(r.total_ms),
            format!("{:.0}", r.tokens_per_s),
            r.usd_per_hour.map_or("–".into(), |u| format!("{u:.2}")),
            r.tokens_per_usd.map_or("–".into(), table::si),
            format!("{:.0}%", 100.0 * r.memory_fraction),
            table::pct(100.0 * r.comm_share),
        ]);
    }
    println!("{t}");
    for s in &c.skipped {
        println!("skipped {} TP {}: {}", s.gpu, s.tp, s.reason);
    }
}

/// Axis and bar labels: three significant figures at most, k/M suffixes.
fn short(v: f64) -> String {
    let (x, suffix) = if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if x >= 100.0 || x == 0.0 { 0 } else if x >= 10.0 { 1 } else { 2 };
    format!("{x:.digits$}{suffix}")
}

/// Bar colour of panel `i`.
fn colour(i: usize) -> RGBColor {
    [RGBColor(31, 119, 180), RGBColor(255, 127, 14), RGBColor(44, 160, 44)][i % 3]
}

/// Writes three horizontal bar panels (total latency, tokens/s, tokens per dollar), one bar per
/// GPU/TP configuration.
fn plot(c: &CompareJson, path: &Path) -> Result<()> {
    let labels: Vec<String> = c.results.iter().map(label).collect();
    let height = 140 + 36 * labels.len() as u32;
    let root = SVGBackend::new(path, (1200, height)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<std::io::Error>| format!("cannot write plot {}: {e}", path.display());
    root.fill(&WHITE).map_err(err)?;
    let title = format!("{} · batch {} × ({} in + {} out) · {} · {}", c.model, c.batch, c.input_len, c.output_len, c.dtype, c.predictor);
    let root = root.titled(&title, ("sans-serif", 18)).map_err(err)?;
    let panels = root.split_evenly((1, 3));
    let series: [(&str, Vec<f64>); 3] = [
        ("total time (ms, lower is better)", c.results.iter().map(|r| r.total_ms).collect()),
        ("generated tokens/s", c.results.iter().map(|r| r.tokens_per_s).collect()),
        ("tokens per $ (higher is better)", c.results.iter().map(|r| r.tokens_per_usd.unwrap_or(0.0)).collect()),
    ];
    for (i, (panel, (name, values))) in panels.iter().zip(series.iter()).enumerate() {
        bars(panel, name, &labels, values, colour(i)).map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

fn bars(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    name: &str,
    labels: &[String],
    values: &[f64],
    colour: RGBColor,
) -> std::result::Result<(), DrawingAreaErrorKind<std::io::Error>> {
    // A one-bar chart would have a degenerate axis (0..0): give it an empty second row.
    let n = labels.len().max(2) as i32;
    let max = values.iter().copied().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let mut chart = ChartBuilder::on(area)
        .caption(name, ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(28)
        .y_label_area_size(130)
        // A discrete i32 range includes its end: 0..n-1 gives exactly n bars.
        .build_cartesian_2d(0.0..max * 1.25, (0..n - 1).into_segmented())?;
    // The first configuration is drawn at the top, as in the table.
    let row = |i: usize| n - 1 - i as i32;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n as usize)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => labels.get((n - 1 - *i) as usize).cloned().unwrap_or_default(),
            SegmentValue::Last => String::new(),
        })
        .x_label_formatter(&|x| short(*x))
        .draw()?;
    chart.draw_series(values.iter().enumerate().map(|(i, v)| {
        let i = row(i);
        let mut r = Rectangle::new([(0.0, SegmentValue::Exact(i)), (*v, SegmentValue::Exact(i + 1))], colour.filled());
        r.set_margin(5, 5, 0, 0);
        r
    }))?;
    chart.draw_series(values.iter().enumerate().map(|(i, v)| {
        Text::new(format!(" {}", short(*v)), (*v, SegmentValue::CenterOf(row(i))), ("sans-serif", 12))
    }))?;
    Ok(())
}
