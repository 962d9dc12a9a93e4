//! `wavecast._native`: the Rust side of the Python package.
//!
//! Every function takes the request as a JSON string (built by `wavecast/_api.py`),
//! deserializes it into the facade's request type, runs the facade with the GIL released and
//! returns the report as a JSON string — the same JSON the CLI prints with `--json`. Any error,
//! a malformed request included, is a `ValueError` carrying the CLI's one-line message.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// A serde message without serde_json's " at line 1 column 42" (the JSON is ours, not the user's).
fn request_error(e: serde_json::Error) -> String {
    let msg = e.to_string();
    let msg = match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => &msg,
    };
    format!("invalid request: {msg}")
}

/// The error's message as the CLI prints it (it strips a trailing newline some parsers add).
fn message(e: impl std::fmt::Display) -> String {
    e.to_string().trim_end().to_string()
}

/// Deserializes `request`, runs `f` without the GIL, serializes its report.
fn call<Q, R, E>(py: Python<'_>, request: &str, f: fn(&Q) -> Result<R, E>) -> PyResult<String>
where
    Q: DeserializeOwned,
    R: Serialize,
    E: std::fmt::Display,
{
    py.detach(|| {
        let req: Q = serde_json::from_str(request).map_err(request_error)?;
        let report = f(&req).map_err(message)?;
        wavecast::to_json(&report).map_err(message)
    })
    .map_err(PyValueError::new_err)
}

/// `wavecast predict --json`: one workload on one GPU. Takes and returns JSON.
#[pyfunction]
fn predict(py: Python<'_>, request: &str) -> PyResult<String> {
    // As the CLI's `--json`: a transformer's training step on the one training route.
    call(py, request, wavecast::predict_answer)
}

/// `wavecast predict --mode serve --json`: LLM serving on one GPU type. Takes and returns JSON.
#[pyfunction]
fn serve(py: Python<'_>, request: &str) -> PyResult<String> {
    call(py, request, wavecast::serve)
}

/// `wavecast predict --mode train --json` with layout flags: a multi-GPU training step.
#[pyfunction]
fn train(py: Python<'_>, request: &str) -> PyResult<String> {
    call(py, request, wavecast::train)
}

/// `wavecast plan train --json`: training layouts ranked by step time.
#[pyfunction]
fn plan_train(py: Python<'_>, request: &str) -> PyResult<String> {
    call(py, request, wavecast::plan_train)
}

/// `wavecast serve-sim --json`: LLM serving under load, simulated.
#[pyfunction]
fn serve_sim(py: Python<'_>, request: &str) -> PyResult<String> {
    call(py, request, wavecast::serve_sim)
}

/// `wavecast plan serve --json`: serving deployments ranked by tokens/s per GPU.
#[pyfunction]
fn plan_serve(py: Python<'_>, request: &str) -> PyResult<String> {
    call(py, request, |req| wavecast::plan_serve(req, &|_, _| {}))
}

/// `wavecast compare --json`: one serving workload on several GPUs and TP degrees.
#[pyfunction]
fn compare(py: Python<'_>, request: &str) -> PyResult<String> {
    call(py, request, wavecast::compare)
}

/// `wavecast scale --json`: a profiler trace carried to other GPUs.
#[pyfunction]
fn scale(py: Python<'_>, request: &str) -> PyResult<String> {
    call(py, request, wavecast::scale)
}

/// `wavecast gpus --json`: the catalog, with `gpu_file` merged over it when given.
#[pyfunction]
#[pyo3(signature = (gpu_file=None))]
fn gpus(py: Python<'_>, gpu_file: Option<String>) -> PyResult<String> {
    py.detach(|| {
        let list = wavecast::gpus(gpu_file.as_deref().map(Path::new)).map_err(message)?;
        wavecast::to_json(&list).map_err(message)
    })
    .map_err(PyValueError::new_err)
}

/// `wavecast gpus --sustained --json`: what the shipped modern-GPU kernel models imply each
/// GPU sustains, beside its datasheet.
#[pyfunction]
#[pyo3(signature = (gpu_file=None))]
fn sustained(py: Python<'_>, gpu_file: Option<String>) -> PyResult<String> {
    py.detach(|| {
        let list = wavecast::sustained(gpu_file.as_deref().map(Path::new)).map_err(message)?;
        wavecast::to_json(&list).map_err(message)
    })
    .map_err(PyValueError::new_err)
}

/// `wavecast models --json`: the built-in presets.
#[pyfunction]
fn models(py: Python<'_>) -> PyResult<String> {
    py.detach(|| {
        let list = wavecast::models().map_err(message)?;
        wavecast::to_json(&list).map_err(message)
    })
    .map_err(PyValueError::new_err)
}

/// The report page of `kind` (`predict`, `serve`, `train`, `plan_train`, `serve_sim`,
/// `plan_serve`, `compare`, `scale`, …) for `report` (its JSON) and the request that made it
/// (JSON; none: no inputs table): the HTML element a notebook shows, or with `page=True` the
/// self-contained document `--html FILE` writes. The same renderer as the CLI's.
#[pyfunction]
#[pyo3(signature = (kind, report, inputs=None, page=false))]
fn render_html(py: Python<'_>, kind: &str, report: &str, inputs: Option<&str>, page: bool) -> PyResult<String> {
    py.detach(|| {
        let kind = wavecast::html::Kind::from_name(kind).map_err(message)?;
        let inputs = inputs.unwrap_or("");
        let html = if page { wavecast::html::page_from_json(kind, inputs, report) } else { wavecast::html::fragment_from_json(kind, inputs, report) };
        html.map_err(message)
    })
    .map_err(PyValueError::new_err)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(predict, m)?)?;
    m.add_function(wrap_pyfunction!(serve, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(train, m)?)?;
    m.add_function(wrap_pyfunction!(plan_train, m)?)?;
    m.add_function(wrap_pyfunction!(serve_sim, m)?)?;
    m.add_function(wrap_pyfunction!(plan_serve, m)?)?;
    m.add_function(wrap_pyfunction!(scale, m)?)?;
    m.add_function(wrap_pyfunction!(gpus, m)?)?;
    m.add_function(wrap_pyfunction!(sustained, m)?)?;
    m.add_function(wrap_pyfunction!(models, m)?)?;
    m.add_function(wrap_pyfunction!(render_html, m)?)?;
    Ok(())
}
