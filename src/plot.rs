//! SVG charts: `compare --plot` draws three bar panels (total time, tokens/s, tokens per
//! dollar), one bar per GPU/TP configuration.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use std::path::Path;
use wavecast::{CompareReport, ServeReport};

fn label(r: &ServeReport) -> String {
    if r.tp > 1 {
        format!("{} ×{}", r.gpu, r.tp)
    } else {
        r.gpu.clone()
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
pub fn compare(c: &CompareReport, path: &Path) -> Result<(), String> {
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

/// Writes `plan serve`'s chart: every simulated point as tokens/s per GPU against tokens/s per
/// user, aggregated and disaggregated in their own colours, points missing the target faded,
/// and the Pareto front as a line.
pub fn pareto(r: &wavecast::PlanServeReport, path: &Path) -> Result<(), String> {
    let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<std::io::Error>| format!("cannot write plot {}: {e}", path.display());
    root.fill(&WHITE).map_err(err)?;
    let x_max = r.points.iter().map(|p| p.tokens_per_s_per_user).fold(1.0, f64::max) * 1.1;
    let y_max = r.points.iter().map(|p| p.tokens_per_s_per_gpu).fold(1.0, f64::max) * 1.1;
    let title = format!("{} on {} × {} · {} in + {} out · {}", r.model, r.gpus, r.gpu, r.input_len, r.output_len, r.backend);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("output tokens/s per user (1000 / TPOT)")
        .y_desc("output tokens/s per GPU")
        .x_label_formatter(&|x| short(*x))
        .y_label_formatter(&|y| short(*y))
        .draw()
        .map_err(err)?;
    for (mode, c) in [("agg", colour(0)), ("disagg", colour(1))] {
        let pts: Vec<_> = r.points.iter().filter(|p| p.mode == mode).collect();
        chart
            .draw_series(pts.iter().map(|p| Circle::new((p.tokens_per_s_per_user, p.tokens_per_s_per_gpu), 4, if p.meets_slo { c.filled() } else { c.mix(0.25).filled() })))
            .map_err(err)?
            .label(if mode == "agg" { "aggregated" } else { "disaggregated" })
            .legend(move |(x, y)| Circle::new((x + 8, y), 4, c.filled()));
    }
    let mut front: Vec<(f64, f64)> = r.points.iter().filter(|p| p.pareto).map(|p| (p.tokens_per_s_per_user, p.tokens_per_s_per_gpu)).collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart.draw_series(LineSeries::new(front, colour(2).stroke_width(2))).map_err(err)?.label("Pareto front").legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour(2).stroke_width(2)));
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// `eval serving --plot`: predicted over measured TTFT against the number of users, every row a
/// faint dot in its engine's colour and each engine's median per concurrency a line, with 1
/// (exact) marked; both axes logarithmic.
pub fn serving_ttft(e: &wavecast::eval::serving::ServingEval, path: &Path) -> Result<(), String> {
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<std::io::Error>| format!("cannot write plot {}: {e}", path.display());
    root.fill(&WHITE).map_err(err)?;
    let ratio = |r: &wavecast::eval::serving::Row| (r.predicted_ttft_ms / r.measured_ttft_ms).clamp(0.05, 20.0);
    let users_max = e.rows.iter().map(|r| r.concurrency).max().unwrap_or(1).max(2) as f64 * 1.5;
    let which = if e.leave_one_gpu_out { "per-op models without each row's GPU" } else { "shipped per-op models" };
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("TTFT predicted / measured over concurrency · {} runs · {which}", e.rows.len()), ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d((0.8..users_max).log_scale(), (0.05..20.0).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("users (closed-loop concurrency)")
        .y_desc("predicted / measured mean TTFT")
        .x_label_formatter(&|x| short(*x))
        .y_label_formatter(&|y| format!("{y}"))
        .draw()
        .map_err(err)?;
    chart.draw_series(LineSeries::new([(0.8, 1.0), (users_max, 1.0)], BLACK.stroke_width(1))).map_err(err)?;
    let mut engines: Vec<&str> = e.rows.iter().map(|r| r.backend.as_str()).collect();
    engines.sort_unstable();
    engines.dedup();
    for (i, engine) in engines.iter().enumerate() {
        let c = colour(i);
        let rows: Vec<_> = e.rows.iter().filter(|r| r.backend == *engine).collect();
        // Spread each engine's dots a little sideways so the engines do not hide each other.
        let nudge = 1.0 + 0.06 * (i as f64 - 1.0);
        chart.draw_series(rows.iter().map(|r| Circle::new((r.concurrency as f64 * nudge, ratio(r)), 2, c.mix(0.25).filled()))).map_err(err)?;
        let mut by: std::collections::BTreeMap<u64, Vec<f64>> = std::collections::BTreeMap::new();
        for r in &rows {
            by.entry(r.concurrency).or_default().push(ratio(r));
        }
        let medians: Vec<(f64, f64)> = by.into_iter().map(|(u, v)| (u as f64 * nudge, wavecast_stats::median(&v))).collect();
        chart
            .draw_series(LineSeries::new(medians.clone(), c.stroke_width(2)))
            .map_err(err)?
            .label(format!("{engine} (median per concurrency)"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
        chart.draw_series(medians.into_iter().map(|p| Circle::new(p, 4, c.filled()))).map_err(err)?;
    }
    chart.configure_series_labels().position(SeriesLabelPosition::UpperLeft).background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
