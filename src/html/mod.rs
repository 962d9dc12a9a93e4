//! One-file HTML reports: a report's JSON (exactly what `--json` prints) rendered with the
//! inputs that produced it, its headline numbers, inline SVG charts with hover details and a
//! table of every field. The page references nothing outside itself (no scripts, fonts,
//! images or links), so it opens offline and can be mailed as it is.
//!
//! The same renderer serves the CLI's `--html FILE` ([`page`]), the local page of `wavecast ui`
//! and the Python package's notebook display ([`fragment`]).
//!
//! Every number of the answer appears with its JSON pointer and exact JSON text
//! (`data-json`, `data-exact`); the text shown is rounded to four significant figures.

mod charts;
mod node;
mod svg;
mod table;
mod text;

pub use node::Node;
pub use text::esc;

use crate::{Error, Result};
use std::fmt::Write as _;

/// Which question a report answers (it picks the headline numbers and the charts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `predict` (inference or one-GPU training).
    Predict,
    /// `predict --mode serve`.
    Serve,
    /// `predict --mode train` with layout flags.
    Train,
    PlanTrain,
    ServeSim,
    PlanServe,
    Compare,
    Scale,
    EvalE2e,
    EvalOps,
    EvalPairs,
    EvalConv,
    EvalIntervals,
    EvalServing,
}

impl Kind {
    pub const ALL: [Kind; 14] = [
        Kind::Predict,
        Kind::Serve,
        Kind::Train,
        Kind::PlanTrain,
        Kind::ServeSim,
        Kind::PlanServe,
        Kind::Compare,
        Kind::Scale,
        Kind::EvalE2e,
        Kind::EvalOps,
        Kind::EvalPairs,
        Kind::EvalConv,
        Kind::EvalIntervals,
        Kind::EvalServing,
    ];

    /// Its name in the Python package and [`Kind::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            Kind::Predict => "predict",
            Kind::Serve => "serve",
            Kind::Train => "train",
            Kind::PlanTrain => "plan_train",
            Kind::ServeSim => "serve_sim",
            Kind::PlanServe => "plan_serve",
            Kind::Compare => "compare",
            Kind::Scale => "scale",
            Kind::EvalE2e => "eval_e2e",
            Kind::EvalOps => "eval_ops",
            Kind::EvalPairs => "eval_pairs",
            Kind::EvalConv => "eval_conv",
            Kind::EvalIntervals => "eval_intervals",
            Kind::EvalServing => "eval_serving",
        }
    }

    /// The command that makes it, as a heading.
    pub fn command(self) -> &'static str {
        match self {
            Kind::Predict => "predict",
            Kind::Serve => "predict --mode serve",
            Kind::Train => "predict --mode train (multi-GPU step)",
            Kind::PlanTrain => "plan train",
            Kind::ServeSim => "serve-sim",
            Kind::PlanServe => "plan serve",
            Kind::Compare => "compare",
            Kind::Scale => "scale",
            Kind::EvalE2e => "eval e2e",
            Kind::EvalOps => "eval ops",
            Kind::EvalPairs => "eval pairs",
            Kind::EvalConv => "eval conv",
            Kind::EvalIntervals => "eval intervals",
            Kind::EvalServing => "eval serving",
        }
    }

    pub fn from_name(name: &str) -> Result<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
            Error::new(format!("unknown report kind '{name}' (one of {})", names.join(", ")))
        })
    }
}

/// The version every report names.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Styles of the report, scoped to `.wavecast-report` so a notebook's own styles and the
/// report's do not mix.
const STYLE: &str = "\
.wavecast-report{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d2330;line-height:1.4;max-width:1400px}
.wavecast-report h2{font-size:1.35em;margin:.2em 0}
.wavecast-report h3{font-size:1.05em;margin:1.2em 0 .4em;border-bottom:1px solid #e3e6eb;padding-bottom:.2em}
.wavecast-report .meta{color:#5b6474;font-size:.9em;margin:.2em 0 .8em}
.wavecast-report .figures{display:flex;flex-wrap:wrap;gap:.6em;margin:.6em 0}
.wavecast-report .figure{border:1px solid #d9dde4;border-radius:6px;padding:.45em .8em;background:#f7f9fc;min-width:9em}
.wavecast-report .figure .what{font-size:.8em;color:#5b6474}
.wavecast-report .figure .value{font-size:1.35em;font-weight:600}
.wavecast-report .figure .range{font-size:.8em;color:#5b6474}
.wavecast-report .charts{display:flex;flex-wrap:wrap;gap:1em}
.wavecast-report figure.chart{margin:0;border:1px solid #e3e6eb;border-radius:6px;background:#fff;padding:.3em;max-width:100%;overflow-x:auto}
.wavecast-report figure.chart svg{max-width:100%;height:auto}
.wavecast-report table{border-collapse:collapse;font-size:.88em;margin:.2em 0}
.wavecast-report th,.wavecast-report td{border:1px solid #e3e6eb;padding:.2em .5em;text-align:left;vertical-align:top}
.wavecast-report thead th{background:#f1f3f7;position:sticky;top:0}
.wavecast-report table.kv th{background:#f7f9fc;font-weight:500;white-space:nowrap}
.wavecast-report .scroll{overflow-x:auto;max-width:100%}
.wavecast-report .n{font-variant-numeric:tabular-nums;white-space:nowrap}
.wavecast-report .prov{background:#eef3ff;border:1px solid #c9d6f5;border-radius:3px;padding:0 .3em;font-size:.85em}
.wavecast-report code{font-size:.85em;word-break:break-all;display:block;max-height:8em;overflow:auto}
.wavecast-report details summary{cursor:pointer;color:#2a5db0}
";

/// A report rendered as an HTML element with its own styles: what a notebook displays and
/// what the local page embeds. `inputs` is the request (or flags) that produced `report`.
pub fn fragment(kind: Kind, inputs: &Node, report: &Node) -> String {
    let mut out = String::new();
    let _ = write!(out, r#"<div class="wavecast-report" data-kind="{}"><style>{STYLE}</style>"#, kind.name());
    let _ = write!(out, "<h2>{}</h2>", esc(&headline(kind, report)));
    let _ = write!(out, r#"<p class="meta">wavecast {VERSION} · <code style="display:inline">wavecast {}</code></p>"#, esc(kind.command()));
    figures(&mut out, kind, report);
    let svgs = charts::charts(kind, report);
    if !svgs.is_empty() {
        out.push_str(r#"<section class="charts">"#);
        svgs.iter().for_each(|s| out.push_str(s));
        out.push_str("</section>");
    }
    if !inputs.fields().is_empty() {
        let _ = write!(out, "<h3>Inputs</h3>{}", table::inputs(inputs));
    }
    out.push_str(&table::sections(report, "Answer"));
    out.push_str("</div>");
    out
}

/// A whole HTML document holding `body`, titled `title`.
pub fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><meta name=\"generator\" content=\"wavecast {VERSION}\"><title>{}</title><style>body{{margin:1.2em 2em;background:#fff}}</style></head><body>{body}</body></html>\n",
        esc(title)
    )
}

/// A self-contained HTML page of one report (what `--html FILE` writes).
pub fn page(kind: Kind, inputs: &Node, report: &Node) -> String {
    document(&format!("wavecast {} · {}", kind.command(), headline(kind, report)), &fragment(kind, inputs, report))
}

/// [`page`] from JSON texts (`inputs` may be empty: no inputs table).
pub fn page_from_json(kind: Kind, inputs: &str, report: &str) -> Result<String> {
    let (i, r) = parse_both(inputs, report)?;
    Ok(page(kind, &i, &r))
}

/// [`fragment`] from JSON texts (`inputs` may be empty: no inputs table).
pub fn fragment_from_json(kind: Kind, inputs: &str, report: &str) -> Result<String> {
    let (i, r) = parse_both(inputs, report)?;
    Ok(fragment(kind, &i, &r))
}

fn parse_both(inputs: &str, report: &str) -> Result<(Node, Node)> {
    let i = if inputs.trim().is_empty() { Node::Obj(vec![]) } else { Node::parse(inputs)? };
    Ok((i, Node::parse(report)?))
}

/// `gpt2-large on h100 · predictor wavecast`: what the report is about, from its string fields.
fn headline(kind: Kind, report: &Node) -> String {
    let s = |k: &str| report.str_at(k).map(str::to_string);
    let gpu = s("gpu_name").or_else(|| s("gpu")).or_else(|| s("test_gpu"));
    let gpus = report.get("results").map(|r| r.arr().iter().filter_map(|x| x.str_at("gpu")).fold(Vec::<&str>::new(), |mut v, g| {
        if !v.contains(&g) {
            v.push(g);
        }
        v
    }));
    let mut parts = Vec::new();
    match (s("model"), gpu, gpus) {
        (Some(m), Some(g), _) => parts.push(format!("{m} on {g}")),
        (Some(m), None, Some(g)) if !g.is_empty() => parts.push(format!("{m} on {}", g.join(", "))),
        (Some(m), _, _) => parts.push(m),
        (None, Some(g), _) => parts.push(g),
        _ => parts.push(kind.command().to_string()),
    }
    if let Some(p) = s("predictor") {
        parts.push(format!("predictor {p}"));
    }
    parts.join(" · ")
}

/// The headline numbers as cards; an `interval_ms` beside `total_ms` shows under it, and a
/// `provenance` field (where a report has one) as a badge.
fn figures(out: &mut String, kind: Kind, report: &Node) {
    let figs = charts::figures(kind, report);
    if figs.is_empty() {
        return;
    }
    out.push_str(r#"<section class="figures">"#);
    for f in figs {
        let Some(Node::Num(n)) = charts::resolve(report, f.pointer) else { continue };
        let value = text::num_span(n, f.pointer);
        let _ = write!(out, r#"<div class="figure"><div class="what">{}</div><div class="value">{value} {}</div>"#, esc(f.label), esc(f.unit));
        let parent = &f.pointer[..f.pointer.rfind('/').unwrap_or(0)];
        let field = &f.pointer[f.pointer.rfind('/').map_or(0, |i| i + 1)..];
        if field == "total_ms" {
            let ptr = format!("{parent}/interval_ms");
            if let Some(iv @ Node::Arr(items)) = charts::resolve(report, &ptr) {
                if items.len() == 2 && items[0].num() != items[1].num() {
                    let _ = write!(out, r#"<div class="range">interval {} ms</div>"#, table::cell(iv, &ptr, "interval_ms"));
                }
            }
        }
        let prov = format!("{parent}/provenance");
        if let Some(p @ Node::Str(_)) = charts::resolve(report, &prov) {
            let _ = write!(out, r#"<div class="range">{}</div>"#, table::cell(p, &prov, "provenance"));
        }
        out.push_str("</div>");
    }
    out.push_str("</section>");
}
