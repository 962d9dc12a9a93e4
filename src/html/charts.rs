//! Which figures and charts each kind of report shows. Everything is read from the report's
//! JSON by field name, so a report that lacks a field simply shows less.

use super::node::{pointer, Node};
use super::svg::{bars, Bar, Point, Scatter};
use super::Kind;

/// A headline number: its label, its JSON pointer and its unit.
pub struct Figure {
    pub label: &'static str,
    pub pointer: &'static str,
    pub unit: &'static str,
}

const fn fig(label: &'static str, pointer: &'static str, unit: &'static str) -> Figure {
    Figure { label, pointer, unit }
}

/// The node at a JSON pointer.
pub fn resolve<'a>(root: &'a Node, ptr: &str) -> Option<&'a Node> {
    let mut node = root;
    for raw in ptr.split('/').skip(1) {
        let key = raw.replace("~1", "/").replace("~0", "~");
        node = match node {
            Node::Obj(_) => node.get(&key)?,
            Node::Arr(items) => items.get(key.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

// The headline numbers of each kind of report, as tables: a report shows those its JSON has.
const PREDICT_FIGURES: &[Figure] = &[fig("step time", "/total_ms", "ms"), fig("tokens/s", "/tokens_per_s", ""), fig("samples/s", "/samples_per_s", "")];
const SERVE_FIGURES: &[Figure] = &[
    fig("time to first token", "/prefill_ms", "ms"),
    fig("decode step (median)", "/decode_ms", "ms"),
    fig("total", "/total_ms", "ms"),
    fig("tokens/s", "/tokens_per_s", ""),
    fig("memory per GPU", "/memory_gb", "GB"),
    fig("tokens per $", "/tokens_per_usd", ""),
];
const TRAIN_FIGURES: &[Figure] = &[fig("step time", "/step_ms", "ms"), fig("tokens/s per GPU", "/tokens_per_s_per_gpu", ""), fig("MFU", "/mfu", ""), fig("memory per GPU", "/memory_gb/total", "GB")];
const PLAN_TRAIN_FIGURES: &[Figure] = &[fig("layouts priced", "/evaluated", ""), fig("layouts that fit", "/fitting", ""), fig("best step time", "/rows/0/step_ms", "ms"), fig("best MFU", "/rows/0/mfu", "")];
const SERVE_SIM_FIGURES: &[Figure] = &[
    fig("TTFT p50", "/metrics/ttft_ms/p50", "ms"),
    fig("TPOT p50", "/metrics/tpot_ms/p50", "ms"),
    fig("output tokens/s per GPU", "/metrics/output_tokens_per_s_per_gpu", ""),
    fig("tokens/s per user", "/metrics/tokens_per_s_per_user", ""),
    fig("goodput", "/metrics/goodput_requests_per_s", "req/s"),
];
const PLAN_SERVE_FIGURES: &[Figure] = &[fig("best tokens/s per GPU", "/ranked/0/tokens_per_s_per_gpu", ""), fig("its tokens/s per user", "/ranked/0/tokens_per_s_per_user", ""), fig("its TTFT", "/ranked/0/ttft_ms", "ms"), fig("its TPOT", "/ranked/0/tpot_ms", "ms")];
const EVAL_E2E_FIGURES: &[Figure] = &[fig("mean APE", "/overall/mean_ape", "%"), fig("median APE", "/overall/median_ape", "%"), fig("workloads", "/overall/n", "")];

fn figure_table(kind: Kind) -> &'static [Figure] {
    match kind {
        Kind::Predict => PREDICT_FIGURES,
        Kind::Serve => SERVE_FIGURES,
        Kind::Train => TRAIN_FIGURES,
        Kind::PlanTrain => PLAN_TRAIN_FIGURES,
        Kind::ServeSim => SERVE_SIM_FIGURES,
        Kind::PlanServe => PLAN_SERVE_FIGURES,
        Kind::EvalE2e => EVAL_E2E_FIGURES,
        Kind::Compare | Kind::Scale | Kind::EvalIntervals | Kind::EvalPairs | Kind::EvalConv | Kind::EvalOps | Kind::EvalServing => &[],
    }
}

/// The headline numbers of a report of `kind` (those its JSON has).
pub fn figures(kind: Kind, root: &Node) -> Vec<&'static Figure> {
    figure_table(kind).iter().filter(|f| resolve(root, f.pointer).is_some_and(|n| n.num().is_some())).collect()
}

/// A bar for the number at `ptr` (none when it is absent or not a number).
fn bar(root: &Node, label: impl Into<String>, ptr: String) -> Option<Bar> {
    let Node::Num(n) = resolve(root, &ptr)? else { return None };
    Some(Bar { label: label.into(), value: n.as_f64()?, exact: n.to_string(), pointer: ptr })
}

/// Bars for every numeric field of the object at `ptr`, labelled by field name.
fn field_bars(root: &Node, ptr: &str) -> Vec<Bar> {
    let Some(obj) = resolve(root, ptr) else { return vec![] };
    obj.fields().iter().filter_map(|(k, _)| bar(root, k.replace('_', " "), pointer(ptr, k))).collect()
}

/// Bars for `field` (`a/b` for a field of a field) of every object in the list at `ptr`,
/// labelled by `name(row)`.
fn list_bars(root: &Node, ptr: &str, field: &str, name: impl Fn(&Node) -> String) -> Vec<Bar> {
    let Some(list) = resolve(root, ptr) else { return vec![] };
    let at = |i: usize| field.split('/').fold(pointer(ptr, &i.to_string()), |acc, k| pointer(&acc, k));
    list.arr().iter().enumerate().filter_map(|(i, row)| bar(root, name(row), at(i))).collect()
}

fn text(row: &Node, key: &str) -> String {
    match row.get(key) {
        Some(Node::Str(s)) => s.clone(),
        Some(Node::Num(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// `h100 ×2` for a serving row on two GPUs.
fn gpu_tp(row: &Node) -> String {
    match row.num_at("tp") {
        Some(tp) if tp > 1.0 => format!("{} ×{tp}", text(row, "gpu")),
        _ => text(row, "gpu"),
    }
}

fn sorted_desc(mut b: Vec<Bar>) -> Vec<Bar> {
    b.sort_by(|x, y| y.value.total_cmp(&x.value));
    b
}

/// The charts of a report of `kind`, as inline SVG.
pub fn charts(kind: Kind, root: &Node) -> Vec<String> {
    let out = match kind {
        Kind::Predict => vec![
            bars("Time by op class", "ms", &sorted_desc(list_bars(root, "/classes", "ms", |r| text(r, "class")))),
            bars("Time by phase", "ms", &field_bars(root, "/phases")),
        ],
        Kind::Serve => vec![
            bars("Prefill (time to first token) by part", "ms", &sorted_desc(field_bars(root, "/prefill_classes"))),
            bars("One decode step by part", "ms", &sorted_desc(field_bars(root, "/decode_classes"))),
            bars("Memory per GPU", "GB", &["weight_gb", "kv_cache_gb", "activation_gb", "gpu_memory_gb"].iter().filter_map(|k| bar(root, k.trim_end_matches("_gb").replace('_', " "), format!("/{k}"))).collect::<Vec<_>>()),
        ],
        Kind::Train => vec![bars("Step time by part", "ms", &field_bars(root, "/parts")), bars("Memory of the most loaded GPU", "GB", &field_bars(root, "/memory_gb/parts"))],
        Kind::PlanTrain => vec![
            bars("Step time of each layout that fits", "ms", &list_bars(root, "/rows", "step_ms", |r| format!("#{} {}", text(r, "rank"), text(r, "layout")))),
            bars("Memory per GPU of each layout", "GB", &list_bars(root, "/rows", "memory_gb", |r| format!("#{} {}", text(r, "rank"), text(r, "layout")))),
        ],
        Kind::ServeSim => ["ttft_ms", "tpot_ms", "e2e_ms"]
            .iter()
            .zip(["Time to first token", "Time per output token", "End-to-end latency"])
            .map(|(k, title)| bars(title, "ms", &field_bars(root, &format!("/metrics/{k}"))))
            .collect(),
        Kind::PlanServe => vec![pareto(root), bars("Ranked deployments: output tokens/s per GPU", "tokens/s/GPU", &list_bars(root, "/ranked", "tokens_per_s_per_gpu", plan_point_name).into_iter().take(15).collect::<Vec<_>>())],
        Kind::Compare => vec![
            bars("Total time (lower is better)", "ms", &list_bars(root, "/results", "total_ms", gpu_tp)),
            bars("Generated tokens/s", "tokens/s", &list_bars(root, "/results", "tokens_per_s", gpu_tp)),
            bars("Tokens per dollar (higher is better)", "tokens/$", &list_bars(root, "/results", "tokens_per_usd", gpu_tp)),
        ],
        Kind::Scale => vec![bars("Step time on each GPU", "ms", &list_bars(root, "/destinations", "per_step_ms", |r| text(r, "gpu")))],
        Kind::EvalE2e => vec![measured_vs_predicted(root, "/workloads", "measured_ms", "predicted_ms", "End-to-end time: predicted against measured", |r| format!("{} {}", text(r, "gpu"), text(r, "workload")))],
        Kind::EvalServing => vec![
            measured_vs_predicted(root, "/rows", "measured_ttft_ms", "predicted_ttft_ms", "TTFT: predicted against measured", |r| text(r, "id")),
            measured_vs_predicted(root, "/rows", "measured_tpot_ms", "predicted_tpot_ms", "TPOT: predicted against measured", |r| text(r, "id")),
        ],
        Kind::EvalOps => vec![bars("Mean APE by family", "%", &set_bars(root, "/sets", &["mean_ape"], |r| format!("{} {}", text(r, "family"), text(r, "dtype"))))],
        Kind::EvalConv => vec![bars("Mean APE per GPU and method", "%", &nested_bars(root, "/per_gpu", "methods", &["mean_ape"], |g, m| format!("{} · {}", text(g, "gpu"), text(m, "method"))))],
        Kind::EvalPairs => vec![
            bars("Mean APE per set and method", "%", &nested_bars(root, "/sets", "methods", &["all", "mean_ape"], |s, m| format!("{} · {}", text(s, "set"), text(m, "method")))),
            bars("Mean APE per family (pooled over pairs)", "%", &list_bars(root, "/families", "pooled/mean_ape", |r| format!("{} {}", text(r, "family"), text(r, "dtype")))),
        ],
        Kind::EvalIntervals => vec![],
    };
    out.into_iter().filter(|svg| !svg.is_empty()).collect()
}

fn plan_point_name(p: &Node) -> String {
    format!("{} {} · {} users", text(p, "layout"), text(p, "mode"), text(p, "concurrency"))
}

/// `plan serve`'s chart: every simulated point, aggregated and disaggregated in their own
/// colours, those missing the target pale, and the Pareto front as a line.
fn pareto(root: &Node) -> String {
    let points = root.get("points").map(Node::arr).unwrap_or_default();
    let dot = |p: &Node| -> Option<Point> {
        let (x, y) = (p.num_at("tokens_per_s_per_user")?, p.num_at("tokens_per_s_per_gpu")?);
        let label = format!(
            "{}: {} tokens/s/user, {} tokens/s/GPU, TTFT {} ms, TPOT {} ms{}",
            plan_point_name(p),
            text(p, "tokens_per_s_per_user"),
            text(p, "tokens_per_s_per_gpu"),
            text(p, "ttft_ms"),
            text(p, "tpot_ms"),
            if p.get("meets_slo") == Some(&Node::Bool(false)) { " (misses the target)" } else { "" }
        );
        Some(Point { x, y, label, series: usize::from(p.str_at("mode") == Some("disagg")), faded: p.get("meets_slo") == Some(&Node::Bool(false)) })
    };
    let mut line: Vec<(f64, f64)> = points.iter().filter(|p| p.get("pareto") == Some(&Node::Bool(true))).filter_map(|p| Some((p.num_at("tokens_per_s_per_user")?, p.num_at("tokens_per_s_per_gpu")?))).collect();
    line.sort_by(|a, b| a.0.total_cmp(&b.0));
    Scatter {
        title: "Throughput per GPU against speed per user",
        x_label: "output tokens/s per user (1000 / TPOT)",
        y_label: "output tokens/s per GPU",
        points: points.iter().filter_map(dot).collect(),
        legend: vec!["aggregated".into(), "disaggregated".into()],
        line,
        line_label: "Pareto front",
        diagonal: false,
        log: false,
    }
    .render()
}

/// Predicted against measured, log-log, with the y = x line.
fn measured_vs_predicted(root: &Node, ptr: &str, measured: &str, predicted: &str, title: &str, name: impl Fn(&Node) -> String) -> String {
    let rows = resolve(root, ptr).map(Node::arr).unwrap_or_default();
    let points = rows
        .iter()
        .filter_map(|r| {
            let (x, y) = (r.num_at(measured)?, r.num_at(predicted)?);
            Some(Point { x, y, label: format!("{}: measured {} ms, predicted {} ms", name(r), text(r, measured), text(r, predicted)), series: 0, faded: false })
        })
        .collect();
    Scatter { title, x_label: "measured ms", y_label: "predicted ms", points, legend: vec![], line: vec![], line_label: "", diagonal: true, log: true }.render()
}

/// Bars for `path` inside every row of every list in the object at `ptr` (`sets: {name: [rows]}`).
fn set_bars(root: &Node, ptr: &str, path: &[&str], name: impl Fn(&Node) -> String) -> Vec<Bar> {
    let Some(sets) = resolve(root, ptr) else { return vec![] };
    let mut out = Vec::new();
    for (set, rows) in sets.fields() {
        for (i, row) in rows.arr().iter().enumerate() {
            let p = path.iter().fold(pointer(&pointer(ptr, set), &i.to_string()), |acc, k| pointer(&acc, k));
            out.extend(bar(root, format!("{set} · {}", name(row)), p));
        }
    }
    out
}

/// Bars for `path` inside every entry of the list `inner` of every row of the list at `ptr`.
fn nested_bars(root: &Node, ptr: &str, inner: &str, path: &[&str], name: impl Fn(&Node, &Node) -> String) -> Vec<Bar> {
    let Some(outer) = resolve(root, ptr) else { return vec![] };
    let mut out = Vec::new();
    for (i, row) in outer.arr().iter().enumerate() {
        let base = pointer(&pointer(ptr, &i.to_string()), inner);
        for (j, entry) in row.get(inner).map(Node::arr).unwrap_or_default().iter().enumerate() {
            let p = path.iter().fold(pointer(&base, &j.to_string()), |acc, k| pointer(&acc, k));
            out.extend(bar(root, name(row, entry), p));
        }
    }
    out
}
