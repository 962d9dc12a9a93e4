//! `wavecast ui`: a local web page. Each question (predict, serve, serve-sim, compare, plan
//! train, plan serve) is a server-rendered HTML form; submitting it builds the same library
//! request the CLI builds and shows the same report page as `--html`. No JavaScript.
//!
//! It listens on a loopback address unless `--allow-remote` is given: the page runs whatever
//! is asked of it and has no login.

use super::Result;
use crate::cli::UiArgs;
use axum::extract::{Form, Path, Query};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use wavecast::html::{esc, Kind, Node};

pub fn run(a: UiArgs) -> Result<()> {
    let host: IpAddr = a.host.parse().map_err(|_| format!("--host must be an IP address, got '{}'", a.host))?;
    if !host.is_loopback() && !a.allow_remote {
        return Err(format!("refusing to serve on {host}: it is not a loopback address and the page runs whatever it is asked; pass --allow-remote to accept other machines").into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    runtime.block_on(serve(SocketAddr::new(host, a.port)))
}

async fn serve(addr: SocketAddr) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr()?;
    // The first line of stdout says where the page is (tests read the port from it).
    println!("wavecast ui: serving on http://{bound}/ (Ctrl-C stops it)");
    use std::io::Write as _;
    std::io::stdout().flush()?;
    axum::serve(listener, router()).await.map_err(|e| format!("the page stopped: {e}"))?;
    Ok(())
}

fn router() -> Router {
    Router::new().route("/", get(index)).route("/{question}", get(form_or_answer).post(answer)).fallback(not_found)
}

async fn index() -> Html<String> {
    let mut body = nav(None);
    body.push_str("<p>Pick a question above. Each one is a form with the CLI's flags; the answer is the same report page <code style=\"display:inline\">--html</code> writes.</p><ul>");
    for q in QUESTIONS {
        let _ = write!(body, r#"<li><a href="/{}">{}</a> ({})</li>"#, q.path, esc(q.title), esc(q.kind.command()));
    }
    body.push_str("</ul>");
    Html(wavecast::html::document("wavecast ui", &body))
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, Html(wavecast::html::document("wavecast ui: not found", &format!("{}<p class=\"error\">no such page</p>", nav(None))))).into_response()
}

/// The form; with a query string (`/predict?model=gpt2&gpu=h100`), also its answer, so an
/// answer can be bookmarked or opened by a headless browser.
async fn form_or_answer(Path(question): Path<String>, Query(fields): Query<Vec<(String, String)>>) -> Response {
    match find(&question) {
        Some(_) if !fields.is_empty() => answer(Path(question), Form(fields)).await,
        Some(q) => Html(form_page(q, &[], None)).into_response(),
        None => not_found().await,
    }
}

async fn answer(Path(question): Path<String>, Form(fields): Form<Vec<(String, String)>>) -> Response {
    let Some(q) = find(&question) else { return not_found().await };
    let given = fields.clone();
    let outcome = tokio::task::spawn_blocking(move || run_question(q, &fields)).await;
    let result = match outcome {
        Ok(r) => r,
        Err(e) => Err(format!("the question stopped: {e}")),
    };
    let status = if result.is_ok() { StatusCode::OK } else { StatusCode::UNPROCESSABLE_ENTITY };
    (status, Html(form_page(q, &given, Some(result)))).into_response()
}

/// The questions the page asks, each a form whose field names are the library request's.
struct Question {
    path: &'static str,
    title: &'static str,
    kind: Kind,
    fields: &'static [Field],
}

/// A form field: its request name (`formats.dtype` is the `dtype` of the `formats` object),
/// label, type and default (empty: left to the library).
struct Field {
    name: &'static str,
    label: &'static str,
    ty: Ty,
    default: &'static str,
}

#[derive(Clone, Copy, PartialEq)]
enum Ty {
    Model,
    Config,
    Gpu,
    Int,
    Float,
    Text,
    Ints,
    Texts,
    Choice(&'static [&'static str]),
}

const fn f(name: &'static str, label: &'static str, ty: Ty, default: &'static str) -> Field {
    Field { name, label, ty, default }
}

// The fields several questions ask, written once so their labels and defaults agree.
const MODEL: Field = f("model", "model preset", Ty::Model, "gpt2-large");
const CONFIG: Field = f("config", "or paste a Hugging Face config.json", Ty::Config, "");
const SERVE_MODEL: Field = f("model", "model preset", Ty::Model, "qwen2.5-7b");
const GPU: Field = f("gpu", "GPU", Ty::Gpu, "h100");
const GPU_COUNT: Field = f("gpus", "GPUs", Ty::Int, "8");
const SEQ: Field = f("seq", "sequence length", Ty::Int, "1024");
const REQUESTS_BATCH: Field = f("batch", "batch (requests)", Ty::Int, "8");
const INPUT_LEN: Field = f("input_len", "prompt tokens", Ty::Int, "1024");
const OUTPUT_LEN: Field = f("output_len", "generated tokens", Ty::Int, "256");
const HALF_DTYPE: Ty = Ty::Choice(&[wavecast::defaults::SERVE_DTYPE, "bf16", "fp16"]);
const SERVE_DTYPE: Field = f("dtype", "precision", HALF_DTYPE, wavecast::defaults::SERVE_DTYPE);
// Empty: the request's own default (a training run's format rule, FP32 for inference), as the
// CLI without --dtype; a pre-filled bf16 would override the rule.
const DTYPE: Field = f("dtype", "precision (fp32, tf32, fp16, bf16, fp8)", Ty::Text, "");
const SLO_TTFT: Field = f("slo_ttft_ms", "TTFT target, ms", Ty::Float, "");
const FORMATS_DTYPE: Field = f("formats.dtype", "precision", HALF_DTYPE, wavecast::defaults::SERVE_DTYPE);
const WEIGHTS: Field = f("weights", "weight format (fp8, fp8_block, nvfp4, mxfp4, int4)", Ty::Text, "");
const FORMATS_QUANT: Field = f("formats.quant", "weight format (fp8, nvfp4, …)", Ty::Text, "");
const ENGINES: Ty = Ty::Choice(&wavecast_ir::Engine::NAMES);
const FORMATS_BACKEND: Field = f("formats.backend", "engine", ENGINES, wavecast_ir::Engine::DEFAULT.name());
const BACKEND: Field = f("backend", "engine", ENGINES, wavecast_ir::Engine::DEFAULT.name());

const QUESTIONS: &[Question] = &[
    Question {
        path: "predict",
        title: "One step on one GPU",
        kind: Kind::Predict,
        fields: &[
            MODEL,
            CONFIG,
            GPU,
            f("mode", "mode", Ty::Choice(&["inference", "train"]), "inference"),
            f("batch", "batch", Ty::Int, "1"),
            SEQ,
            DTYPE,
            f("predictor", "predictor", Ty::Text, ""),
        ],
    },
    Question {
        path: "serve",
        title: "Serving a batch",
        kind: Kind::Serve,
        fields: &[
            SERVE_MODEL,
            CONFIG,
            GPU,
            f("tp", "tensor-parallel GPUs", Ty::Int, "1"),
            REQUESTS_BATCH,
            INPUT_LEN,
            OUTPUT_LEN,
            SERVE_DTYPE,
            WEIGHTS,
            f("kv_dtype", "KV cache type", Ty::Text, ""),
            BACKEND,
        ],
    },
    Question {
        path: "serve-sim",
        title: "Serving under load",
        kind: Kind::ServeSim,
        fields: &[
            SERVE_MODEL,
            CONFIG,
            GPU,
            f("layout", "workers (tp1, tp4, 2xtp4, tp1,dp8,ep8)", Ty::Text, "tp1"),
            f("concurrency", "users (closed loop)", Ty::Int, "16"),
            f("input", "prompt tokens (1024, uniform:512:2048)", Ty::Text, "1024"),
            f("output", "output tokens", Ty::Text, "256"),
            f("requests", "requests to simulate", Ty::Int, ""),
            FORMATS_DTYPE,
            FORMATS_QUANT,
            FORMATS_BACKEND,
            SLO_TTFT,
            f("slo_tpot_ms", "TPOT target, ms", Ty::Float, ""),
        ],
    },
    Question {
        path: "compare",
        title: "Compare GPUs",
        kind: Kind::Compare,
        fields: &[
            SERVE_MODEL,
            CONFIG,
            f("gpus", "GPUs, comma-separated", Ty::Texts, "h100,a100,l40s"),
            f("tp", "tensor-parallel degrees, comma-separated", Ty::Ints, "1"),
            REQUESTS_BATCH,
            INPUT_LEN,
            OUTPUT_LEN,
            SERVE_DTYPE,
            WEIGHTS,
            BACKEND,
        ],
    },
    Question {
        path: "plan-train",
        title: "Plan a training run",
        kind: Kind::PlanTrain,
        fields: &[
            MODEL,
            CONFIG,
            GPU,
            GPU_COUNT,
            f("batch", "global batch (sequences)", Ty::Int, "64"),
            SEQ,
            DTYPE,
            f("stack", "training software", Ty::Choice(&["pytorch", "compiled", "megatron"]), "pytorch"),
            f("top", "layouts to list", Ty::Int, "10"),
        ],
    },
    Question {
        path: "plan-serve",
        title: "Plan a serving deployment",
        kind: Kind::PlanServe,
        fields: &[
            SERVE_MODEL,
            CONFIG,
            GPU,
            GPU_COUNT,
            INPUT_LEN,
            OUTPUT_LEN,
            SLO_TTFT,
            f("slo_tpot_ms", "TPOT target, ms", Ty::Float, "50"),
            f("concurrency", "users per worker to try, comma-separated", Ty::Ints, ""),
            FORMATS_DTYPE,
            FORMATS_QUANT,
            FORMATS_BACKEND,
        ],
    },
];

fn find(path: &str) -> Option<&'static Question> {
    QUESTIONS.iter().find(|q| q.path == path)
}

fn nav(current: Option<&str>) -> String {
    let mut out = String::from(r#"<style>nav a{margin-right:1em}nav a.here{font-weight:bold}.layout{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}.answer{flex:1 1 40em;min-width:0}form.ask{flex:0 0 22em;display:grid;grid-template-columns:max-content minmax(8em,1fr);gap:.3em .6em;align-items:center;font-size:.85em;background:#f7f9fc;border:1px solid #e3e6eb;border-radius:6px;padding:.8em}form.ask textarea{height:4em;font-family:monospace}form.ask input,form.ask select,form.ask textarea{width:100%;box-sizing:border-box}h1{font-size:1.5em;margin:.4em 0}.error{color:#a40000;background:#fff0f0;border:1px solid #f0c0c0;padding:.5em .8em;border-radius:4px;font-family:monospace}body{font-family:system-ui,sans-serif}</style><nav><a href="/"><b>wavecast ui</b></a>"#);
    for q in QUESTIONS {
        let here = if current == Some(q.path) { r#" class="here""# } else { "" };
        let _ = write!(out, r#"<a href="/{}"{here}>{}</a>"#, q.path, esc(q.title));
    }
    out.push_str("</nav>");
    out
}

/// The value the form shows for `field`: what was submitted, else the default.
fn shown<'a>(field: &Field, given: &'a [(String, String)]) -> &'a str {
    given.iter().find(|(k, _)| k == field.name).map_or(field.default, |(_, v)| v.as_str())
}

fn form_page(q: &Question, given: &[(String, String)], result: Option<std::result::Result<(Node, Node), String>>) -> String {
    let mut body = nav(Some(q.path));
    let _ = write!(body, r#"<h1>{}</h1><div class="layout"><form class="ask" method="post" action="/{}">"#, esc(q.title), q.path);
    for field in q.fields {
        let value = if given.is_empty() { field.default } else { shown(field, given) };
        let _ = write!(body, r#"<label for="{n}">{}</label>{}"#, esc(field.label), input(field, value), n = field.name);
    }
    body.push_str(r#"<span></span><button type="submit">Predict</button></form><div class="answer">"#);
    match result {
        Some(Ok((inputs, report))) => body.push_str(&wavecast::html::fragment(q.kind, &inputs, &report)),
        Some(Err(message)) => {
            let _ = write!(body, r#"<p class="error">wavecast: error: {}</p>"#, esc(&message));
        }
        None => body.push_str("<p>Fill in the form; the answer appears here.</p>"),
    }
    body.push_str("</div></div>");
    wavecast::html::document(&format!("wavecast ui · {}", q.title), &body)
}

fn options(items: impl Iterator<Item = String>, value: &str) -> String {
    items.map(|o| format!(r#"<option value="{v}"{}>{v}</option>"#, if o == value { " selected" } else { "" }, v = esc(&o))).collect()
}

fn input(field: &Field, value: &str) -> String {
    let n = field.name;
    match field.ty {
        Ty::Model => {
            let names = wavecast::models().map(|m| m.into_iter().map(|m| m.name).collect::<Vec<_>>()).unwrap_or_default();
            format!(r#"<select id="{n}" name="{n}">{}</select>"#, options(std::iter::once(String::new()).chain(names), value))
        }
        Ty::Gpu => {
            let ids = wavecast::gpus(None).map(|g| g.into_iter().map(|g| g.id).collect::<Vec<_>>()).unwrap_or_default();
            let mut ids = ids;
            if !ids.iter().any(|i| i == value) {
                ids.insert(0, value.to_string());
            }
            format!(r#"<select id="{n}" name="{n}">{}</select>"#, options(ids.into_iter(), value))
        }
        Ty::Choice(items) => format!(r#"<select id="{n}" name="{n}">{}</select>"#, options(items.iter().map(|s| s.to_string()), value)),
        Ty::Config => format!(r#"<textarea id="{n}" name="{n}" placeholder="{{&quot;model_type&quot;: &quot;llama&quot;, …}}">{}</textarea>"#, esc(value)),
        _ => format!(r#"<input id="{n}" name="{n}" value="{}">"#, esc(value)),
    }
}

/// Builds the request from the submitted fields, runs it, and returns the inputs and report.
fn run_question(q: &Question, given: &[(String, String)]) -> std::result::Result<(Node, Node), String> {
    let request = request_json(q, given)?;
    let inputs = Node::of(&request).map_err(|e| e.to_string())?;
    let report = match q.kind {
        // A transformer's training step answers as the CLI's `--json` does (one route).
        Kind::Predict => node(wavecast::predict_answer(&parse(request)?)),
        Kind::Serve => node(wavecast::serve(&parse(request)?)),
        Kind::ServeSim => node(wavecast::serve_sim(&parse(request)?)),
        Kind::Compare => node(wavecast::compare(&parse(request)?)),
        Kind::PlanTrain => node(wavecast::plan_train(&parse(request)?)),
        Kind::PlanServe => node(wavecast::plan_serve(&parse(request)?, &|_, _| {})),
        _ => Err("this page does not ask that question".into()),
    }?;
    Ok((inputs, report))
}

fn parse<T: serde::de::DeserializeOwned>(request: Value) -> std::result::Result<T, String> {
    serde_json::from_value(request).map_err(|e| format!("invalid request: {e}"))
}

fn node<T: serde::Serialize>(r: wavecast::Result<T>) -> std::result::Result<Node, String> {
    let report = r.map_err(|e| e.to_string())?;
    Node::of(&report).map_err(|e| e.to_string())
}

/// The library request (JSON) of the submitted fields: numbers parsed, empty fields left to
/// the library's defaults, a pasted config.json used instead of the preset.
fn request_json(q: &Question, given: &[(String, String)]) -> std::result::Result<Value, String> {
    let mut request = Map::new();
    let config_given = given.iter().any(|(k, v)| k == "config" && !v.trim().is_empty());
    for field in q.fields {
        let raw = shown(field, given).trim();
        if raw.is_empty() || (field.ty == Ty::Model && config_given) {
            continue;
        }
        let value = typed(field, raw)?;
        match field.name.split_once('.') {
            Some((outer, inner)) => {
                let entry = request.entry(outer).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(m) = entry {
                    m.insert(inner.to_string(), value);
                }
            }
            None => {
                request.insert(field.name.to_string(), value);
            }
        }
    }
    // The serve page asks `predict --mode serve`: the one request of `predict`, in its mode.
    if matches!(q.kind, Kind::Serve) {
        request.insert("mode".into(), Value::from("serve"));
    }
    Ok(Value::Object(request))
}

fn typed(field: &Field, raw: &str) -> std::result::Result<Value, String> {
    let whole = |s: &str| s.trim().parse::<u64>().map_err(|_| format!("{} must be a whole number, got '{s}'", field.label));
    Ok(match field.ty {
        Ty::Int => Value::from(whole(raw)?),
        Ty::Float => Value::from(raw.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| format!("{} must be a number, got '{raw}'", field.label))?),
        Ty::Ints => Value::Array(raw.split(',').map(|s| whole(s).map(Value::from)).collect::<std::result::Result<_, _>>()?),
        Ty::Texts => Value::Array(raw.split(',').map(|s| Value::from(s.trim())).filter(|v| v.as_str() != Some("")).collect()),
        Ty::Config => {
            let parsed: Value = serde_json::from_str(raw).map_err(|e| format!("the pasted config.json is not JSON: {e}"))?;
            if !parsed.is_object() {
                return Err("the pasted config.json must be a JSON object".into());
            }
            parsed
        }
        Ty::Model | Ty::Gpu | Ty::Text | Ty::Choice(_) => Value::from(raw),
    })
}

/// The forms write the request's field names again (with example values, not defaults): each
/// must be a field of its request and each listed choice a value it takes, which the requests'
/// `deny_unknown_fields` and typed choices check here rather than on a user's first submit.
#[cfg(test)]
mod tests {
    use super::*;

    /// A value to submit for `field`: its pre-filled one, else one of its type.
    fn example(field: &Field) -> String {
        let raw = match field.ty {
            _ if !field.default.is_empty() => field.default,
            Ty::Int | Ty::Ints => "2",
            Ty::Float => "1.5",
            Ty::Config => "{}",
            _ => "x",
        };
        raw.to_string()
    }

    /// Whether the request JSON of `given` deserializes into the request type of `q`.
    fn takes(q: &Question, given: &[(String, String)]) -> std::result::Result<(), String> {
        let request = request_json(q, given)?;
        match q.kind {
            Kind::Predict | Kind::Serve => parse::<wavecast::PredictRequest>(request).map(drop),
            Kind::ServeSim => parse::<wavecast::ServeSimRequest>(request).map(drop),
            Kind::Compare => parse::<wavecast::CompareRequest>(request).map(drop),
            Kind::PlanTrain => parse::<wavecast::PlanTrainRequest>(request).map(drop),
            Kind::PlanServe => parse::<wavecast::PlanServeRequest>(request).map(drop),
            _ => Err(format!("/{}: no request of this kind", q.path)),
        }
    }

    fn every_field_given(q: &Question) -> Vec<(String, String)> {
        q.fields.iter().map(|f| (f.name.to_string(), example(f))).collect()
    }

    #[test]
    fn every_form_field_and_choice_is_its_requests() {
        for q in QUESTIONS {
            let given = every_field_given(q);
            takes(q, &given).unwrap_or_else(|e| panic!("/{}: {e}", q.path));
            for field in q.fields {
                let Ty::Choice(choices) = field.ty else { continue };
                for choice in choices {
                    let with: Vec<(String, String)> = given.iter().map(|(k, v)| (k.clone(), if k == field.name { choice.to_string() } else { v.clone() })).collect();
                    takes(q, &with).unwrap_or_else(|e| panic!("/{} {}={choice}: {e}", q.path, field.name));
                }
            }
        }
    }

    #[test]
    fn the_form_check_can_fail() {
        const FIELDS: &[Field] = &[f("gpu", "GPU", Ty::Gpu, "h100"), f("sequence", "sequence length", Ty::Int, "1024")];
        let q = Question { path: "probe", title: "probe", kind: Kind::Predict, fields: FIELDS };
        let e = takes(&q, &every_field_given(&q)).unwrap_err();
        assert!(e.contains("unknown field `sequence`"), "{e}");
    }
}
