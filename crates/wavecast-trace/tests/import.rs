//! Trace import on small traces built here: linking, formats, and every way a file can be bad.

use std::io::Write;
use wavecast_trace::{parse, TraceError};

/// A two-op trace: `aten::linear` → `aten::addmm` (one GEMM kernel), `aten::add_` (one kernel),
/// one kernel whose launch is missing, a memcpy, metadata and flow events.
fn fixture() -> String {
    r#"{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0,
    "numSms": 108, "totalGlobalMem": 84990623744, "warpSize": 32, "maxThreadsPerMultiprocessor": 2048,
    "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 167936, "sharedMemPerBlock": 49152}],
  "traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 90, "dur": 400},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 95, "dur": 60,
     "args": {"Input Dims": [[512, 768], [3072, 768], [3072]], "Input type": ["float", "float", "float"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 100, "dur": 50,
     "args": {"Input Dims": [[3072], [512, 768], [768, 3072], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 120, "dur": 5, "args": {"correlation": 7}},
    {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 120},
    {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7, "ts": 200, "dur": 30,
     "args": {"device": 0, "stream": 7, "correlation": 7, "registers per thread": 90, "shared memory": 49152,
              "blocks per SM": 0.888889, "grid": [24, 4, 1], "block": [256, 1, 1], "est. achieved occupancy %": 11}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 1, "tid": 1, "ts": 300, "dur": 10,
     "args": {"Input Dims": [[512, 3072], [512, 3072], []], "Input type": ["float", "float", "Scalar"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 305, "dur": 3, "args": {"correlation": 8}},
    {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", "pid": 0, "tid": 7,
     "ts": 320, "dur": 12.5, "args": {"device": 0, "stream": "0x7", "correlation": 8, "registers per thread": 16, "shared memory": 0,
     "grid": [1536, 1, 1], "block": [128, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "orphan_kernel", "pid": 0, "tid": 7, "ts": 340, "dur": 3, "args": {"correlation": 99, "grid": [1, 1, 1], "block": [32, 1, 1]}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 350, "dur": 4, "args": {"bytes": 4096, "device": 0}},
    {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 2}
  ]
}"#
    .to_string()
}

fn err(text: &str) -> String {
    match parse(text.as_bytes(), "t.json") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn kernels_link_to_the_innermost_launching_op() {
    let t = parse(fixture().as_bytes(), "fixture.json").unwrap();
    assert_eq!(t.events, 13);
    assert_eq!(t.kernels.len(), 3);
    assert_eq!(t.kernel_time_us(), 45.5);
    assert_eq!(t.transfers.len(), 1);
    assert_eq!(t.profiler_steps, 1);
    assert_eq!(t.devices[0].sm_count, 108);
    let names: Vec<Option<&str>> = t.kernels.iter().map(|k| t.op_of(k).map(|o| &*o.name)).collect();
    assert_eq!(names, vec![Some("aten::addmm"), Some("aten::add_"), None]);
    let k = &t.kernels[0];
    assert_eq!((k.grid, k.block, k.registers_per_thread, k.shared_mem_bytes), (Some([24, 4, 1]), Some([256, 1, 1]), Some(90), Some(49152)));
    assert_eq!(t.kernels[1].stream, Some(7)); // "0x7" read as hex
    assert!(t.has_shapes());
}

#[test]
fn gzip_and_bare_arrays_read_the_same() {
    let text = fixture();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let t = parse(&gz.finish().unwrap(), "fixture.json.gz").unwrap();
    assert_eq!(t.kernels.len(), 3);
    let start = text.find("\"traceEvents\": ").unwrap() + "\"traceEvents\": ".len();
    let end = text.rfind(']').unwrap() + 1;
    let bare = parse(&text.as_bytes()[start..end], "bare.json").unwrap();
    assert_eq!(bare.kernel_time_us(), 45.5);
    assert!(bare.devices.is_empty());
    assert_eq!(bare.op_of(&bare.kernels[0]).unwrap().name.as_ref(), "aten::addmm");
}

#[test]
fn truncated_trace_names_the_event_it_ends_in() {
    let text = fixture();
    let cut = text.find("\"aten::add_\"").unwrap();
    let e = err(&text[..cut]);
    assert!(e.contains("truncated") && e.contains("traceEvents[7]"), "{e}");
    assert!(e.contains("traceEvents[6], kernel 'ampere_sgemm_128x64_tn'"), "{e}");
}

#[test]
fn truncated_gzip_is_reported() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(fixture().as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    let e = parse(&bytes[..bytes.len() / 2], "cut.json.gz").unwrap_err();
    assert!(matches!(e, TraceError::Gzip { .. }), "{e}");
    assert!(e.to_string().contains("cut.json.gz"));
}

#[test]
fn malformed_json_names_the_event() {
    let text = fixture().replace("\"ts\": 305, \"dur\": 3,", "\"ts\": 305 \"dur\": 3,");
    let e = err(&text);
    assert!(e.contains("malformed JSON") && e.contains("traceEvents[8]"), "{e}");
}

#[test]
fn bad_kernel_fields_name_the_kernel() {
    let neg = fixture().replace("\"dur\": 12.5", "\"dur\": -12.5");
    let e = err(&neg);
    assert!(e.contains("traceEvents[9]") && e.contains("vectorized_elementwise_kernel") && e.contains("-12.5"), "{e}");
    let no_dur = fixture().replace("\"ts\": 340, \"dur\": 3,", "\"ts\": 340,");
    let e = err(&no_dur);
    assert!(e.contains("traceEvents[10]") && e.contains("orphan_kernel") && e.contains("'dur'"), "{e}");
    let grid = fixture().replace("\"grid\": [24, 4, 1]", "\"grid\": [24, 4]");
    let e = err(&grid);
    assert!(e.contains("traceEvents[6]") && e.contains("'grid'"), "{e}");
    let kind = fixture().replace("\"grid\": [1536, 1, 1]", "\"grid\": \"grid(1536,)\"");
    let e = err(&kind);
    assert!(e.contains("traceEvents[9]"), "{e}");
}

#[test]
fn not_a_trace_at_all() {
    for (text, want) in [
        ("", "truncated"),
        ("hello", "malformed"),
        ("{\"schemaVersion\": 1}", "no 'traceEvents'"),
        ("42", "not a PyTorch profiler trace"),
        ("{\"traceEvents\": 5}", "not a PyTorch profiler trace"),
        ("{\"traceEvents\": []} trailing", "malformed"),
    ] {
        let e = err(text);
        assert!(e.contains(want), "{text:?}: {e}");
    }
    let missing = wavecast_trace::load(std::path::Path::new("/nonexistent/trace.json")).unwrap_err();
    assert!(matches!(missing, TraceError::Read { .. }));
}

#[test]
fn every_truncation_is_an_error_never_a_panic() {
    let text = fixture();
    let closing = text.trim_end().len();
    for cut in (0..closing).step_by(3) {
        assert!(parse(&text.as_bytes()[..cut], "cut.json").is_err(), "cut at {cut} parsed");
    }
}
