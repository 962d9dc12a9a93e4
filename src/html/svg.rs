//! Inline SVG charts written by hand (no plotting crate: the library and the Python package
//! build without the CLI's plotters): horizontal bars and scatter plots, with axes, tick labels
//! and a `<title>` on every mark for hover details.

use super::text::{esc, short_f64};
use std::fmt::Write as _;

/// One bar: its label, value, and where the value is in the report.
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub exact: String,
    pub pointer: String,
}

/// One point of a scatter plot; `series` picks its colour, `faded` draws it pale.
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub label: String,
    pub series: usize,
    pub faded: bool,
}

const COLOURS: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b"];
const WIDTH: f64 = 640.0;

fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

/// Tick positions from 0 (or `lo`) to at least `hi` at a 1-2-5 step, about five of them.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * power).find(|s| *s >= raw).unwrap_or(10.0 * power);
    let first = (lo / step).floor() * step;
    let mut out = Vec::new();
    let mut t = first;
    while t <= hi + step * 1e-9 && out.len() < 12 {
        out.push(t);
        t += step;
    }
    if out.last().is_some_and(|&l| l < hi) {
        out.push(t);
    }
    out
}

/// A tick label: four figures at most, without trailing zeros (`100`, `0.25`).
fn tick(t: f64) -> String {
    let s = short_f64(t);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Decades covering `lo..hi` (both positive) for a log axis.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (a..=b.max(a + 1)).map(|e| 10f64.powi(e)).collect()
}

fn open(out: &mut String, width: f64, height: f64, title: &str) {
    let _ = write!(
        out,
        r#"<figure class="chart"><svg role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" font-family="sans-serif" font-size="11"><title>{t}</title><text class="chart-title" x="{x}" y="16" text-anchor="middle" font-size="13" font-weight="bold">{t}</text>"#,
        t = esc(title),
        x = width / 2.0
    );
}

fn close(out: &mut String) {
    out.push_str("</svg></figure>");
}

/// Horizontal bars, one per item, labelled on the left, values at their ends; `unit` names the
/// axis. Empty when no bar has a positive finite value.
pub fn bars(title: &str, unit: &str, items: &[Bar]) -> String {
    let max = items.iter().map(|b| b.value).filter(|v| v.is_finite()).fold(0.0, f64::max);
    if items.is_empty() || max <= 0.0 {
        return String::new();
    }
    // The label column is as wide as the longest label (about 6.3 px a character at 11 px).
    let longest = items.iter().map(|b| b.label.chars().count()).max().unwrap_or(0) as f64;
    let (left, right, top, row) = ((6.3 * longest + 14.0).clamp(80.0, 330.0), 70.0, 30.0, 22.0);
    let plot_w = 400.0;
    let width = left + plot_w + right;
    let plot_h = row * items.len() as f64;
    let height = top + plot_h + 42.0;
    let ts = ticks(0.0, max);
    let axis_max = *ts.last().unwrap_or(&max);
    let x = |v: f64| left + plot_w * (v.max(0.0) / axis_max);
    let mut out = String::new();
    open(&mut out, width, height, title);
    out.push_str(r#"<g class="axis x-axis">"#);
    for t in &ts {
        let _ = write!(
            out,
            r##"<line x1="{px:.1}" y1="{top}" x2="{px:.1}" y2="{bottom:.1}" stroke="#ddd"/><text x="{px:.1}" y="{ty:.1}" text-anchor="middle">{}</text>"##,
            tick(*t),
            px = x(*t),
            bottom = top + plot_h,
            ty = top + plot_h + 14.0
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{left}" y1="{b:.1}" x2="{r:.1}" y2="{b:.1}" stroke="#333"/><line x1="{left}" y1="{top}" x2="{left}" y2="{b:.1}" stroke="#333"/><text class="axis-label" x="{cx:.1}" y="{ly:.1}" text-anchor="middle">{}</text></g>"##,
        esc(unit),
        b = top + plot_h,
        r = left + plot_w,
        cx = left + plot_w / 2.0,
        ly = top + plot_h + 32.0
    );
    for (i, b) in items.iter().enumerate() {
        let y = top + row * i as f64;
        let w = (x(b.value) - left).max(0.0);
        let _ = write!(
            out,
            r##"<g class="bar"><text x="{lx}" y="{ty:.1}" text-anchor="end">{label}</text><rect x="{left}" y="{ry:.1}" width="{w:.1}" height="{h:.1}" fill="{c}" data-json="{p}" data-exact="{e}"><title>{label}: {e} {unit}</title></rect><text x="{vx:.1}" y="{ty:.1}">{v}</text></g>"##,
            label = esc(&b.label),
            lx = left - 6.0,
            ty = y + row * 0.68,
            ry = y + 3.0,
            h = row - 6.0,
            c = colour(0),
            p = esc(&b.pointer),
            e = esc(&b.exact),
            unit = esc(unit),
            vx = left + w + 4.0,
            v = short_f64(b.value)
        );
    }
    close(&mut out);
    out
}

/// Axis geometry of one scatter dimension: linear from 0, or log over the data's decades.
#[derive(Clone)]
struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Scale {
    fn new(values: impl Iterator<Item = f64> + Clone, log: bool) -> Scale {
        let hi = values.clone().fold(f64::MIN_POSITIVE, f64::max);
        if log {
            let lo = values.filter(|v| *v > 0.0).fold(hi, f64::min);
            let ticks = log_ticks(lo, hi);
            Scale { lo: ticks[0], hi: *ticks.last().unwrap_or(&hi), log, ticks }
        } else {
            let ticks = ticks(0.0, hi * 1.05);
            Scale { lo: 0.0, hi: *ticks.last().unwrap_or(&hi), log, ticks }
        }
    }

    /// Where `v` falls between 0 and 1.
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()).max(f64::MIN_POSITIVE)
        } else {
            (v - self.lo) / (self.hi - self.lo).max(f64::MIN_POSITIVE)
        }
    }
}

/// A scatter plot: `points` by series (named in `legend`), an optional `line` through its own
/// points (a Pareto front), and with `diagonal` the y = x line (predicted against measured).
pub struct Scatter<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub points: Vec<Point>,
    pub legend: Vec<String>,
    pub line: Vec<(f64, f64)>,
    pub line_label: &'a str,
    pub diagonal: bool,
    pub log: bool,
}

impl Scatter<'_> {
    /// The SVG; empty without a finite point.
    pub fn render(&self) -> String {
        let pts: Vec<&Point> = self.points.iter().filter(|p| p.x.is_finite() && p.y.is_finite() && (!self.log || (p.x > 0.0 && p.y > 0.0))).collect();
        if pts.is_empty() {
            return String::new();
        }
        let (left, right, top, bottom, height) = (70.0, 20.0, 30.0, 50.0, 420.0);
        let (pw, ph) = (WIDTH - left - right, height - top - bottom);
        let all_x = pts.iter().map(|p| p.x).chain(self.line.iter().map(|l| l.0));
        let all_y = pts.iter().map(|p| p.y).chain(self.line.iter().map(|l| l.1));
        let (sx, sy) = if self.diagonal {
            let both = Scale::new(all_x.chain(all_y), self.log);
            (both.clone(), both)
        } else {
            (Scale::new(all_x, self.log), Scale::new(all_y, self.log))
        };
        let px = |v: f64| left + pw * sx.frac(v);
        let py = |v: f64| top + ph * (1.0 - sy.frac(v));
        let mut out = String::new();
        open(&mut out, WIDTH, height, self.title);
        out.push_str(r#"<g class="axis x-axis">"#);
        for t in &sx.ticks {
            let _ = write!(out, r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{b:.1}" stroke="#eee"/><text x="{x:.1}" y="{ty:.1}" text-anchor="middle">{}</text>"##, tick(*t), x = px(*t), b = top + ph, ty = top + ph + 14.0);
        }
        let _ = write!(out, r##"<line x1="{left}" y1="{b:.1}" x2="{r:.1}" y2="{b:.1}" stroke="#333"/><text class="axis-label" x="{cx:.1}" y="{ly:.1}" text-anchor="middle">{}</text></g>"##, esc(self.x_label), b = top + ph, r = left + pw, cx = left + pw / 2.0, ly = height - 12.0);
        out.push_str(r#"<g class="axis y-axis">"#);
        for t in &sy.ticks {
            let _ = write!(out, r##"<line x1="{left}" y1="{y:.1}" x2="{r:.1}" y2="{y:.1}" stroke="#eee"/><text x="{tx:.1}" y="{ty:.1}" text-anchor="end">{}</text>"##, tick(*t), y = py(*t), r = left + pw, tx = left - 6.0, ty = py(*t) + 4.0);
        }
        let _ = write!(out, r##"<line x1="{left}" y1="{top}" x2="{left}" y2="{b:.1}" stroke="#333"/><text class="axis-label" transform="translate(16 {cy:.1}) rotate(-90)" text-anchor="middle">{}</text></g>"##, esc(self.y_label), b = top + ph, cy = top + ph / 2.0);
        if self.diagonal {
            let (a, b) = (sx.lo.max(sy.lo), sx.hi.min(sy.hi));
            let _ = write!(out, r##"<line class="diagonal" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#888" stroke-dasharray="4 3"><title>predicted = measured</title></line>"##, px(a), py(a), px(b), py(b));
        }
        if self.line.len() > 1 {
            let path: Vec<String> = self.line.iter().map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y))).collect();
            let _ = write!(out, r#"<polyline class="front" points="{}" fill="none" stroke="{}" stroke-width="2"><title>{}</title></polyline>"#, path.join(" "), colour(2), esc(self.line_label));
        }
        for p in &pts {
            let opacity = if p.faded { 0.3 } else { 0.9 };
            let _ = write!(out, r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{}" fill-opacity="{opacity}"><title>{}</title></circle>"#, px(p.x), py(p.y), colour(p.series), esc(&p.label));
        }
        let mut entries: Vec<(String, &str)> = self.legend.iter().enumerate().filter(|(i, _)| pts.iter().any(|p| p.series == *i)).map(|(i, name)| (name.clone(), colour(i))).collect();
        if self.line.len() > 1 {
            entries.push((self.line_label.to_string(), colour(2)));
        }
        for (i, (name, c)) in entries.iter().enumerate() {
            let y = top + 8.0 + 16.0 * i as f64;
            // Top right: a Pareto front and predicted-against-measured points rarely reach it.
            let lx = left + pw - 140.0;
            let _ = write!(out, r#"<g class="legend"><rect x="{x:.1}" y="{ry:.1}" width="10" height="10" fill="{c}"/><text x="{tx:.1}" y="{ty:.1}">{}</text></g>"#, esc(name), x = lx, ry = y - 8.0, tx = lx + 14.0, ty = y + 1.0);
        }
        close(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_cover_the_range_at_a_round_step() {
        assert_eq!(ticks(0.0, 9.3), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let decades: Vec<i32> = log_ticks(0.03, 450.0).iter().map(|t| t.log10().round() as i32).collect();
        assert_eq!(decades, vec![-2, -1, 0, 1, 2, 3]);
    }

    #[test]
    fn bars_draw_axes_labels_and_hover_titles() {
        let svg = bars("time", "ms", &[Bar { label: "gemm".into(), value: 3.5, exact: "3.5".into(), pointer: "/a".into() }]);
        assert!(svg.contains(r#"class="axis x-axis""#) && svg.contains("<title>gemm: 3.5 ms</title>"), "{svg}");
        assert!(bars("none", "ms", &[]).is_empty());
    }
}
