//! Import of PyTorch profiler traces (Kineto's Chrome-trace JSON, plain or gzipped) and
//! runtime-based prediction: every kernel of an iteration recorded on one GPU is carried to
//! another GPU (Habitat's method, `wavecast scale`).
//!
//! - [`load`] / [`parse`]: stream the events, keep operators (names, input shapes and types),
//!   kernels (name, duration, grid, block, registers, shared memory), copies and the devices;
//!   link each kernel to its launching operator through the runtime call's correlation id.
//! - [`match_device`]: the recorded device as a catalog GPU.
//! - [`aten::to_ir`]: recorded aten calls as wavecast-ir operators (analytic FLOPs and bytes).
//! - [`scale`]: per-kernel wave scaling or predictor ratios to a destination GPU.

pub mod aten;
pub mod classify;
pub mod device;
mod error;
mod link;
pub mod model;
mod raw;
pub mod scale;

pub use device::{match_device, DeviceMatch};
pub use error::TraceError;
pub use model::{CpuOp, DeviceProps, Kernel, Metrics, Trace, Transfer};

use serde::de::DeserializeSeed;
use serde_json::error::Category;
use std::io::Read;
use std::path::Path;

/// Reads a trace file (gzip detected by its magic bytes, not its name).
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let label = path.display().to_string();
    let raw = std::fs::read(path).map_err(|e| TraceError::Read { path: label.clone(), reason: e.to_string() })?;
    parse(&raw, &label)
}

/// Parses trace bytes; `label` names the source in errors.
pub fn parse(bytes: &[u8], label: &str) -> Result<Trace, TraceError> {
    let text = decompress(bytes, label)?;
    let mut sink = raw::Sink::default();
    let mut de = serde_json::Deserializer::from_slice(&text);
    let read = raw::Top(&mut sink).deserialize(&mut de).and_then(|()| de.end());
    if let Err(e) = read {
        return Err(json_error(e, &mut sink, label));
    }
    if !sink.saw_events {
        return Err(TraceError::NotATrace { path: label.into(), reason: "no 'traceEvents' array".into() });
    }
    let mut trace = std::mem::take(&mut sink.trace);
    trace.source = label.to_string();
    link::link(&mut trace, &mut sink.launches);
    Ok(trace)
}

fn decompress<'a>(bytes: &'a [u8], label: &str) -> Result<std::borrow::Cow<'a, [u8]>, TraceError> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    let mut out = Vec::with_capacity(bytes.len() * 8);
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .map_err(|e| TraceError::Gzip { path: label.into(), reason: e.to_string() })?;
    Ok(std::borrow::Cow::Owned(out))
}

/// Turns a JSON error into one that says where in the event stream it happened.
fn json_error(e: serde_json::Error, sink: &mut raw::Sink, label: &str) -> TraceError {
    let path = label.to_string();
    if let Some((index, what, reason)) = sink.failure.take() {
        return TraceError::Event { path, index, what, reason };
    }
    let at = if sink.in_events { format!("event traceEvents[{}]", sink.index) } else { "the top-level object".to_string() };
    let after = if sink.last.is_empty() { String::new() } else { format!(" (the last complete event is traceEvents[{}], {})", sink.last_index, sink.last) };
    match e.classify() {
        Category::Eof => TraceError::Truncated { path, at, after },
        Category::Data if sink.in_events => TraceError::Event { path, index: sink.index, what: "unreadable event".into(), reason: e.to_string() },
        Category::Data if !sink.saw_events && sink.last.is_empty() => TraceError::NotATrace { path, reason: e.to_string() },
        _ => TraceError::Syntax { path, at, after, reason: e.to_string() },
    }
}
