//! `wavecast scale` and `wavecast eval pairs` as a user runs them: JSON fields, the origin time
//! equal to the trace's kernel sum, and one-line errors with exit code 2 on bad input.

use std::process::{Command, Output};
use wavecast_test_support::shared;

fn wavecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).output().expect("runs the binary")
}

/// A trace of HolisticTraceAnalysis's test data in ../shared, or `None` (skip) without it.
fn kineto(file: &str) -> Option<String> {
    shared("data/kineto").map(|dir| dir.join(file).display().to_string())
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fails_with(args: &[&str], needle: &str) {
    let out = wavecast(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

/// A one-kernel trace with no device recorded, written to a temporary file.
fn tiny_trace(name: &str, body: &str) -> String {
    let p = std::env::temp_dir().join(format!("wavecast-scale-{}-{name}", std::process::id()));
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

const TINY: &str = r#"{"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 0, "tid": 7, "ts": 10, "dur": 250,
  "args": {"correlation": 1, "registers per thread": 16, "shared memory": 0, "grid": [65536, 1, 1], "block": [128, 1, 1]}},
 {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7, "ts": 300, "dur": 750.5,
  "args": {"correlation": 2, "registers per thread": 122, "shared memory": 16384, "grid": [16, 32, 1], "block": [128, 1, 1]}}
]}"#;

#[test]
fn several_destinations_give_a_comparison_with_prices() {
    let Some(trace) = kineto("v100_sxm2_rank0.json.gz") else { return };
    let v = json(&wavecast(&["scale", "--trace", &trace, "--to", "h100,l4", "--to", "a100", "--json"]));
    assert_eq!(v["origin"]["gpu"], "v100-sxm2");
    let dests = v["destinations"].as_array().unwrap();
    let ids: Vec<&str> = dests.iter().map(|d| d["gpu"].as_str().unwrap()).collect();
    assert_eq!(ids, ["h100-sxm", "l4", "a100-sxm-80gb"]);
    for d in dests {
        for key in ["kernel_ms", "per_step_ms", "speedup", "steps_per_s", "usd_per_hour", "usd_per_1k_steps"] {
            assert!(d[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {}", d[key]);
        }
        let classes: f64 = d["classes"].as_array().unwrap().iter().map(|c| c["dest_ms"].as_f64().unwrap()).sum();
        assert!((classes - d["kernel_ms"].as_f64().unwrap()).abs() < 1e-6);
    }
    assert_eq!(v["steps"], 5);
}

/// The trace's own GPU among the destinations is its measurement, already the origin: it is
/// not carried to itself (a second row with an interval around a measured time), a GPU named
/// twice is listed once, and naming only the origin is refused.
#[test]
fn the_origin_and_repeats_are_not_destinations() {
    let Some(trace) = kineto("v100_sxm2_rank0.json.gz") else { return };
    let v = json(&wavecast(&["scale", "--trace", &trace, "--to", "v100-sxm2,h100,h100-sxm", "--json"]));
    let ids: Vec<&str> = v["destinations"].as_array().unwrap().iter().map(|d| d["gpu"].as_str().unwrap()).collect();
    assert_eq!(ids, ["h100-sxm"]);
    fails_with(&["scale", "--trace", &trace, "--to", "v100-sxm2"], "the GPU the trace was recorded on");
}

#[test]
fn origin_time_is_the_sum_of_kernel_durations() {
    let trace = tiny_trace("tiny.json", TINY);
    let v = json(&wavecast(&["scale", "--trace", &trace, "--from", "a100", "--to", "h100", "--json"]));
    assert_eq!(v["origin"]["kernel_ms"].as_f64().unwrap(), (250.0 + 750.5) / 1e3);
    assert_eq!(v["steps"], 1);
    let d = &v["destinations"][0];
    let h100 = d["kernel_ms"].as_f64().unwrap();
    assert!(h100 < 1.0005 && h100 > 0.3, "{h100}");
    // No shapes: the GEMM kernel is wave-scaled, and the report says so.
    assert_eq!(d["paths"]["wave"], 2);
    let text = wavecast(&["scale", "--trace", &trace, "--from", "a100", "--to", "h100"]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("a100-sxm-80gb (measured)") && out.contains(" 1.00 "), "{out}");
}

#[test]
fn bad_input_is_one_line_and_exit_code_two() {
    if let (Some(v100), Some(no_device)) = (kineto("v100_sxm2_rank0.json.gz"), kineto("sampled_rank0.json.gz")) {
        fails_with(&["scale", "--trace", &v100, "--to", "h1000"], "unknown GPU 'h1000'");
        fails_with(&["scale", "--trace", &v100, "--to", "h100", "--wave-form", "eq3"], "unknown wave form");
        fails_with(&["scale", "--trace", &v100, "--to", "h100", "--predictor", "oracle"], "unknown predictor");
        fails_with(&["scale", "--trace", &no_device, "--to", "h100"], "--from");
        assert!(wavecast(&["scale", "--trace", &no_device, "--from", "a100", "--to", "h100"]).status.success());
    }
    fails_with(&["scale", "--trace", "/nonexistent.json", "--to", "h100"], "cannot read trace");
    let cut = tiny_trace("cut.json", &TINY[..TINY.find("ampere_sgemm").unwrap()]);
    fails_with(&["scale", "--trace", &cut, "--from", "a100", "--to", "h100"], "truncated: it ends inside event traceEvents[1]");
    let empty = tiny_trace("empty.json", r#"{"traceEvents": []}"#);
    fails_with(&["scale", "--trace", &empty, "--from", "a100", "--to", "h100"], "no GPU kernel events");
    // All-zero durations would give a NaN speedup and infinite steps/s; 1e300 µs is corrupt.
    let zero = tiny_trace("zero.json", &TINY.replace("\"dur\": 250", "\"dur\": 0").replace("\"dur\": 750.5", "\"dur\": 0"));
    fails_with(&["scale", "--trace", &zero, "--from", "a100", "--to", "h100"], "last 0 µs");
    let huge = tiny_trace("huge.json", &TINY.replace("\"dur\": 250", "\"dur\": 1e300"));
    fails_with(&["scale", "--trace", &huge, "--from", "a100", "--to", "h100"], "longer than a day");
    // A GPU without units for the trace's type is refused, not priced at some other type's rate.
    let bf16 = tiny_trace("bf16.json", &TINY.replace("ampere_sgemm_128x64_tn", "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn"));
    fails_with(&["scale", "--trace", &bf16, "--from", "a100", "--to", "h100,v100"], "1 of the trace's kernels compute in bf16, which v100-sxm2 has no units for");
    assert!(wavecast(&["scale", "--trace", &bf16, "--from", "a100", "--to", "h100"]).status.success());
    for f in [cut, empty, zero, huge, bf16] {
        std::fs::remove_file(f).unwrap();
    }
}

#[test]
fn eval_pairs_covers_every_ordered_pair() {
    let Some(data) = shared("data/neusight") else { return };
    let data = data.display().to_string();
    // One run gives both the report and the held-out intervals `scale` ships: written on
    // request, never over a file unasked, and the same numbers as the shipped ones.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scale_intervals.json");
    let out_s = out.to_str().unwrap();
    let v = json(&wavecast(&["eval", "pairs", "--data", &data, "--json", "--intervals-out", out_s]));
    let test = &v["sets"][0];
    let methods = test["methods"].as_array().unwrap();
    let names: Vec<&str> = methods.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(names[..4], ["habitat-code (γ=1)", "eq1", "eq2", "wave (wavecast)"]);
    assert_eq!(names[4], format!("hybrid ({})", wavecast_predict::DEFAULT_PREDICTOR));
    for m in methods {
        assert_eq!(m["pairs"].as_array().unwrap().len(), 20, "5 GPUs → 20 ordered pairs");
        let mean = m["all"]["mean_ape"].as_f64().unwrap();
        assert!(mean.is_finite() && mean > 0.0);
        assert!(m["per_class"]["elementwise"]["n"].as_u64().unwrap() > 1000);
    }
    // Conv is only in the random-shape set (four GPUs → 12 ordered pairs of conv).
    assert!(v["sets"][1]["methods"][3]["per_class"]["conv"]["n"].as_u64().unwrap() > 10_000);
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    for method in ["wave", "hybrid"] {
        for class in ["elementwise", "softmax", "layernorm", "linear", "bmm", "conv"] {
            let [lo, hi] = [0, 1].map(|i| written[method][class][i].as_f64().unwrap());
            assert!(lo < 0.0 && hi > 0.0, "{method} {class}: [{lo}, {hi}]");
        }
    }
    let shipped: serde_json::Value = serde_json::from_str(include_str!("../crates/wavecast-predict/weights/scale_intervals.json")).unwrap();
    assert_eq!(written, shipped, "regenerate with `wavecast eval pairs --data ../shared/data/neusight --intervals-out crates/wavecast-predict/weights/scale_intervals.json --force`");
    fails_with(&["eval", "pairs", "--data", &data, "--intervals-out", out_s], "exists");
}

/// The MI250 ROCm trace (no launch grids) kernel by kernel: the longest first, hipBLASLt GEMMs
/// with the tile their names give, every time finite, and the per-kernel times adding up to
/// each destination's total.
#[test]
fn a_rocm_trace_is_carried_kernel_by_kernel() {
    let Some(trace) = kineto("mi250_minitoy_train.json.gz") else { return };
    let v = json(&wavecast(&["scale", "--trace", &trace, "--to", "mi300x,h100", "--kernels", "20", "--json"]));
    assert_eq!(v["origin"]["gpu"], "mi250", "one MI250 die as ROCm reports it");
    let rows = v["kernel_rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14, "every kernel, no more than the trace has");
    let origin: Vec<f64> = rows.iter().map(|r| r["origin_us"].as_f64().unwrap()).collect();
    assert!(origin.windows(2).all(|w| w[0] >= w[1]), "longest first: {origin:?}");
    let tiled: Vec<&str> = rows.iter().filter_map(|r| r["tile"].as_str()).collect();
    assert_eq!(tiled, ["64x16", "64x16"], "the two hipBLASLt GEMMs' macro-tiles");
    for (i, d) in v["destinations"].as_array().unwrap().iter().enumerate() {
        let sum: f64 = rows.iter().map(|r| r["destinations"][i]["us"].as_f64().unwrap()).sum();
        assert!((sum / 1e3 - d["kernel_ms"].as_f64().unwrap()).abs() < 1e-9, "{}", d["gpu"]);
    }
    // Wave scaling alone: the GEMMs get their launch from the macro-tile and the op's shape, so
    // only the kernels without a tile are scaled as many waves.
    let w = json(&wavecast(&["scale", "--trace", &trace, "--to", "mi300x", "--method", "wave", "--json"]));
    let notes = w["destinations"][0]["notes"].as_object().unwrap();
    let many_waves: u64 = notes.iter().filter(|(k, _)| k.contains("scaled as many waves")).map(|(_, n)| n.as_u64().unwrap()).sum();
    assert_eq!(many_waves, 12, "{notes:?}");
    // Every destination carries an interval around its time (held-out scaling errors).
    for d in v["destinations"].as_array().unwrap() {
        let (t, lo, hi) = (d["per_step_ms"].as_f64().unwrap(), d["interval_ms"][0].as_f64().unwrap(), d["interval_ms"][1].as_f64().unwrap());
        assert!(lo < t && t < hi, "{}: {lo} < {t} < {hi}", d["gpu"]);
    }
    let plain = json(&wavecast(&["scale", "--trace", &trace, "--to", "mi300x", "--json"]));
    assert!(plain.get("kernel_rows").is_none(), "no per-kernel rows unless asked");
}

/// A CUDA trace's kernels cannot have run on an AMD GPU: `--from` naming one is refused.
#[test]
fn an_origin_of_another_vendor_than_the_trace_is_refused() {
    let Some(trace) = kineto("a100_alexnet_train.json.gz") else { return };
    fails_with(&["scale", "--trace", &trace, "--from", "mi250", "--to", "h100"], "runs rocm, but the trace was recorded on a100-sxm-40gb");
    json(&wavecast(&["scale", "--trace", &trace, "--from", "a100-sxm-80gb", "--to", "h100", "--json"]));
    fails_with(&["scale", "--trace", &trace, "--to", "h100", "--method", "wave", "--predictor", "roofline"], "--predictor applies to --method hybrid only");
}
