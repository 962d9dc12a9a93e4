//! The CLI as a user meets it: output that parses, and bad input that gets one clear line and
//! exit code 2 (never a panic).

use std::process::{Command, Output};
use wavecast_test_support::shared;

fn wavecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).output().expect("run wavecast")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2, one line naming `needle`, no panic or backtrace.
fn assert_clear_error(args: &[&str], needle: &str) {
    let o = wavecast(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{args:?}: {err}");
}

#[test]
fn readme_example_prints_a_table_and_json_parses() {
    let args = ["predict", "--model", "gpt2-large", "--gpu", "h100", "--batch", "4", "--seq", "1024", "--mode", "train"];
    let o = wavecast(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for needle in ["gemm", "attention_bmm", "elementwise", "softmax", "norm", "embedding", "optimizer", "step time"] {
        assert!(out.contains(needle), "missing {needle} in:\n{out}");
    }
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let o = wavecast(&with_json);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("predict --json is JSON");
    let total = v["total_ms"].as_f64().unwrap();
    let phases = &v["phases"];
    let sum = phases["forward"].as_f64().unwrap() + phases["backward"].as_f64().unwrap() + phases["optimizer"].as_f64().unwrap();
    assert!((sum - total).abs() < 1e-6 * total, "phases {sum} vs total {total}");
    assert_eq!(v["params"].as_u64(), Some(774_030_080));
    let lo = v["interval_ms"][0].as_f64().unwrap();
    let hi = v["interval_ms"][1].as_f64().unwrap();
    assert!(lo <= total && total <= hi, "interval [{lo}, {hi}] around {total}");
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    for args in [&["gpus"][..], &["predict", "--model", "gpt2", "--gpu", "h100", "--dtype", "fp32"][..], &["models", "--json"][..]] {
        // The reader is gone before wavecast writes a byte.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).stdout(writer).output().unwrap();
        let err = stderr(&o);
        assert_ne!(o.status.code(), Some(101), "{args:?} panicked: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn train_creates_no_folder_and_overwrites_nothing_unless_forced() {
    let dir = std::env::temp_dir().join(format!("wavecast-train-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("no-such-folder/w.json");
    assert_clear_error(&["fit", "--predictor", "li", "--data", "unused", "--out", missing.to_str().unwrap()], "does not exist");
    assert!(!dir.join("no-such-folder").exists(), "no folder is created");
    let existing = dir.join("w.json");
    std::fs::write(&existing, "keep").unwrap();
    assert_clear_error(&["fit", "--predictor", "li", "--data", "unused", "--out", existing.to_str().unwrap()], "pass --force");
    assert_clear_error(&["eval", "conv", "--data", "unused", "--retrain", existing.to_str().unwrap()], "pass --force");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn flags_the_mode_would_ignore_are_errors() {
    let serve = ["predict", "--model", "gpt2", "--gpu", "h100", "--mode", "serve", "--input-len", "10", "--output-len", "5"];
    for extra in [&["--seq", "512"][..], &["--optimizer", "sgd"][..], &["--attention", "eager"][..]] {
        assert_clear_error(&[&serve[..], extra].concat(), "do not apply to --mode serve");
    }
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--optimizer", "sgd"], "--optimizer applies to --mode train only");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--fused-optimizer"], "--fused-optimizer applies to --mode train only");
    assert_clear_error(&[&serve[..], &["--fused-optimizer"][..]].concat(), "--fused-optimizer applies to --mode train only");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--input-len", "5"], "apply to --mode serve only");
    assert!(wavecast(&["predict", "--model", "gpt2", "--gpu", "h100", "--optimizer", "sgd", "--mode", "train"]).status.success());
}

#[test]
fn eval_e2e_with_nothing_predictable_is_an_error_not_zero_percent() {
    let dir = std::env::temp_dir().join(format!("wavecast-e2e-empty-{}", std::process::id()));
    let gpu = dir.join("label/NVIDIA_A100-SXM4-40GB");
    std::fs::create_dir_all(&gpu).unwrap();
    std::fs::write(gpu.join("nosuchmodel-inf-512-16.json"), r#"{"e2e_latency": 10.0}"#).unwrap();
    assert_clear_error(&["eval", "e2e", "--data", dir.to_str().unwrap(), "--predictor", "roofline"], "could be predicted");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_same_input_gives_byte_identical_output() {
    let commands: [&[&str]; 3] = [
        &["predict", "--model", "llama-3.2-1b", "--gpu", "l4", "--dtype", "bf16", "--mode", "train", "--seq", "512", "--json"],
        &["predict", "--model", "qwen3-32b", "--gpu", "h100", "--mode", "serve", "--tp", "2", "--input-len", "500", "--output-len", "50", "--json"],
        &["compare", "--model", "llama-3-8b", "--gpus", "h100,a100,l40s,t4", "--input-len", "500", "--output-len", "50", "--json"],
    ];
    for args in commands {
        let (a, b) = (wavecast(args), wavecast(args));
        assert!(a.status.success(), "{args:?}: {}", stderr(&a));
        assert_eq!(a.stdout, b.stdout, "{args:?}");
    }
}

#[test]
fn gpus_and_models_list_and_json() {
    let o = wavecast(&["gpus", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.as_array().unwrap().len() >= 30);
    let o = wavecast(&["models", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.as_array().unwrap().iter().any(|m| m["name"] == "llama-3-8b"));
}

#[test]
fn gpus_sustained_never_claims_more_than_the_datasheet_and_names_missing_formats() {
    let o = wavecast(&["gpus", "--sustained", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("{id} missing"));
    for r in &rows {
        for (implied, peak) in [("bf16_tflops", "peak_bf16_tflops"), ("fp8_tflops", "peak_fp8_tflops"), ("nvfp4_tflops", "peak_fp4_tflops"), ("weight_stream_gbs", "bandwidth_gbs"), ("kv_read_gbs", "bandwidth_gbs")] {
            match (r[implied].as_f64(), r[peak].as_f64()) {
                (Some(i), Some(p)) => assert!(i > 0.0 && i <= p, "{}: {implied} {i} vs {p}", r["id"]),
                // A format without units is never given a throughput.
                (Some(i), None) => panic!("{}: {implied} {i} without a datasheet peak", r["id"]),
                _ => {}
            }
        }
    }
    assert!(row("a100-sxm-80gb")["fp8_tflops"].is_null() && row("h100-sxm")["nvfp4_tflops"].is_null());
    // A newer, larger part sustains more.
    assert!(row("b200")["bf16_tflops"].as_f64() > row("h100-sxm")["bf16_tflops"].as_f64());
    assert!(row("h200")["weight_stream_gbs"].as_f64() > row("h100-sxm")["weight_stream_gbs"].as_f64());
    let text = wavecast(&["gpus", "--sustained"]);
    assert!(String::from_utf8_lossy(&text.stdout).lines().any(|l| l.contains("h100-sxm") && l.contains("/989 ")));
}

#[test]
fn bad_input_is_one_clear_line_with_exit_code_2() {
    let dir = std::env::temp_dir().join(format!("wavecast-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"model_type\": \"gpt2\", ").unwrap();
    let unknown_type = dir.join("t5.json");
    std::fs::write(&unknown_type, "{\"model_type\": \"t5\"}").unwrap();
    let bad_gpu_file = dir.join("gpus.toml");
    std::fs::write(&bad_gpu_file, "[[gpu]]\nid = 3\n").unwrap();
    let (b, u, g) = (broken.to_str().unwrap(), unknown_type.to_str().unwrap(), bad_gpu_file.to_str().unwrap());

    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h1000"], "unknown GPU 'h1000'");
    assert_clear_error(&["predict", "--model", "gpt5", "--gpu", "h100"], "unknown model 'gpt5'");
    assert_clear_error(&["predict", "--model", "llama-3-8", "--gpu", "h100"], "did you mean llama-3-8b");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--batch", "0"], "batch must be at least 1");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--batch", "four"], "invalid value 'four'");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--seq", "99999999"], "exceeds");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--dtype", "fp64"], "unknown dtype 'fp64'");
    assert_clear_error(&["predict", "--config", b, "--gpu", "h100"], "malformed model config");
    assert_clear_error(&["predict", "--config", u, "--gpu", "h100"], "unsupported model_type 't5'");
    assert_clear_error(&["predict", "--config", "/nonexistent/c.json", "--gpu", "h100"], "cannot read");
    assert_clear_error(&["gpus", "--gpu-file", g], "malformed GPU file");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--predictor", "oracle"], "unknown predictor 'oracle'");
    assert_clear_error(&["eval", "e2e", "--data", "/nonexistent"], "cannot read");
    assert_clear_error(&["eval", "ops", "--data", "/nonexistent", "--test-gpu", "h100", "--against", "/nonexistent"], "give --predictor ladder");
    std::fs::remove_dir_all(&dir).ok();
}

/// A NeuSight-layout folder holding the first `rows` measurements of T4's linear layers, from
/// the shared data (random shapes in `ops/train`, model-shaped ones in `ops/test`).
/// `None` (skip) without ../shared.
fn t4_linear_fixture(rows: usize) -> Option<std::path::PathBuf> {
    let shared = shared("data/neusight/ops")?;
    let dir = std::env::temp_dir().join(format!("wavecast-evalops-{}", std::process::id()));
    let head = |from: std::path::PathBuf, to: std::path::PathBuf| {
        let text = std::fs::read_to_string(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        let mut lines = text.lines();
        let mut kept: Vec<&str> = lines.next().into_iter().collect();
        kept.extend(lines.filter(|l| l.contains("T4")).take(rows));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, kept.join("\n") + "\n").unwrap();
    };
    head(shared.join("train/linear/Tesla_T4.csv"), dir.join("ops/train/linear/Tesla_T4.csv"));
    head(shared.join("test/linear.csv"), dir.join("ops/test/linear.csv"));
    Some(dir)
}

#[test]
fn eval_ops_writes_one_csv_row_per_predicted_measurement_with_a_bias_column() {
    let Some(dir) = t4_linear_fixture(40) else { return };
    let csv_path = dir.join("rows.csv");
    let out = wavecast(&["eval", "ops", "--data", dir.to_str().unwrap(), "--test-gpu", "t4", "--rows", csv_path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("bias"));
    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert!(rows.iter().any(|r| &r[0] == "ops/train") && rows.iter().any(|r| &r[0] == "ops/test"), "both sets present");
    assert!(rows.len() > 40, "{} rows", rows.len());
    for r in &rows {
        assert_eq!(&r[1], "linear");
        let (measured, predicted): (f64, f64) = (r[5].parse().unwrap(), r[6].parse().unwrap());
        assert!(measured > 0.0 && predicted > 0.0 && predicted.is_finite());
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn eval_ops_reads_modern_gpu_layouts_and_reports_by_family_and_format() {
    let o = wavecast(&["eval", "ops", "--data", "tests/fixtures/modern", "--test-gpu", "NVIDIA H100 80GB HBM3", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("eval ops --json is JSON");
    assert_eq!((v["predictor"].as_str(), v["test_gpu"].as_str()), (Some("sustained"), Some("h100-sxm")));
    assert!(!v["trained_on"].as_array().unwrap().iter().any(|g| g == "h100-sxm"));
    let gemm = v["sets"]["aiconfigurator"].as_array().unwrap().iter().find(|e| e["family"] == "gemm" && e["dtype"] == "bf16").expect("bf16 gemm row");
    for key in ["n", "mean_ape", "median_ape", "max_ape", "median_bias"] {
        assert!(gemm[key].as_f64().is_some_and(f64::is_finite), "{key}: {gemm}");
    }
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("systems/data/h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet");
    std::fs::create_dir_all(table.parent().unwrap()).unwrap();
    std::fs::write(&table, b"PAR1 not really parquet").unwrap();
    assert_clear_error(&["eval", "ops", "--data", dir.path().to_str().unwrap(), "--test-gpu", "h100"], "not a readable parquet file");
    assert_clear_error(&["eval", "ops", "--data", "tests/fixtures/modern", "--test-gpu", "h100", "--predictor", "li"], "has no model for these measurements");
}

#[test]
fn eval_ops_ladder_with_nothing_priced_says_so_instead_of_a_zero_mean() {
    // Only the H100's tables: holding it out leaves no sibling and no physics fit, so nothing is
    // priced; the table of means used to read 0.0 %, which looks like a perfect score.
    let dir = tempfile::tempdir().unwrap();
    let from = std::path::Path::new("tests/fixtures/modern/aiconfigurator/systems/data/h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet");
    let to = dir.path().join("systems/data/h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet");
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, &to).unwrap();
    let o = wavecast(&["eval", "ops", "--data", dir.path().to_str().unwrap(), "--test-gpu", "h100", "--predictor", "ladder"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("nothing on h100-sxm was priced"), "{out}");
    assert!(!out.contains("mean of families"), "{out}");
    assert!(stderr(&o).contains("rows not priced"), "{}", stderr(&o));
}

/// `--rows` with the ladder writes every priced row of the left-out GPU: its measurement, the
/// ladder's answer inside its interval with where it came from, and the baselines beside it;
/// the rows' mean APE per family is the report's.
#[test]
fn eval_ops_ladder_rows_are_the_report_row_by_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.csv");
    let o = wavecast(&["eval", "ops", "--data", "tests/fixtures/modern", "--test-gpu", "h100", "--predictor", "ladder", "--rows", path.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut r = csv::Reader::from_path(&path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name} column in {header:?}"));
    let mut apes: std::collections::BTreeMap<(String, String), Vec<f64>> = Default::default();
    for rec in r.records() {
        let rec = rec.unwrap();
        let num = |name: &str| rec[col(name)].parse::<f64>().unwrap();
        assert_eq!(&rec[col("gpu")], "h100-sxm");
        assert!(num("lo_ms") <= num("predicted_ms") && num("predicted_ms") <= num("hi_ms"), "{rec:?}");
        assert!(["physics", "transfer from"].iter().any(|p| rec[col("provenance")].starts_with(p)), "{rec:?}");
        assert!(num("copy_sibling_ms") > 0.0 && num("physics_ms") > 0.0);
        apes.entry((rec[col("family")].to_string(), rec[col("dtype")].to_string())).or_default().push(num("ape"));
    }
    let families = v["families"].as_array().unwrap();
    assert_eq!(apes.len(), families.len());
    for f in families {
        let rows = &apes[&(f["family"].as_str().unwrap().to_string(), f["dtype"].as_str().unwrap().to_string())];
        assert_eq!(rows.len() as u64, f["rows"].as_u64().unwrap());
        let mean = rows.iter().sum::<f64>() / rows.len() as f64;
        assert!((mean - f["ladder"]["mean_ape"].as_f64().unwrap()).abs() < 0.01, "{mean} vs {f}");
    }
}

#[test]
fn the_measured_h200_tables_load_as_an_aiconfigurator_system() {
    // data/measurements/h200/aiconfigurator (tools/collect/aic_gemm.py and aic_attention.py on
    // one H200): read as it is, every row the catalog's h200, none skipped.
    use wavecast_data::{Precision, Shape};
    let r = wavecast_data::aiconfigurator::load(std::path::Path::new("data/measurements/h200/aiconfigurator"), &wavecast_gpu::Catalog::builtin()).unwrap();
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    assert_eq!(r.rows.len(), 448 + 780 + 573);
    assert!(r.rows.iter().all(|t| t.gpu == "h200"));
    let gemms = |p| r.rows.iter().filter(|t| matches!(t.shape, Shape::Gemm { .. }) && t.precision == p).count();
    assert_eq!((gemms(Precision::Bf16), gemms(Precision::Fp8)), (224, 224));
    // Decode attention, the KV length as AIConfigurator's `step` (the collector's cache also
    // held the token being decoded), at the H100 table's shapes: head dim 128, BF16, no window.
    let decode: Vec<_> = r.rows.iter().filter_map(|t| match t.shape {
        Shape::AttentionDecode { kv_len, head_dim, kv_precision, window, .. } => Some((kv_len, head_dim, kv_precision, window, t.latency_ms)),
        _ => None,
    }).collect();
    assert_eq!(decode.len(), 780);
    assert!(decode.iter().all(|&(kv, d, p, w, ms)| kv >= 1 && d == 128 && p == Precision::Bf16 && w == 0 && ms > 0.0));
    // Prefill: causal self-attention over the prompt, nothing cached before it.
    let prefill: Vec<_> = r.rows.iter().filter_map(|t| match t.shape {
        Shape::AttentionPrefill { isl, past, head_dim, .. } => Some((isl, past, head_dim, t.latency_ms)),
        _ => None,
    }).collect();
    assert_eq!(prefill.len(), 573);
    assert!(prefill.iter().all(|&(isl, past, d, ms)| isl >= 1 && past == 0 && d == 128 && ms > 0.0));
}

/// A mixture of experts holds every expert however few tokens route: one token of
/// DeepSeek-V3 does not fit an H200, and Mixtral's count is its whole 46.7 B at any length.
#[test]
fn a_few_tokens_of_a_mixture_of_experts_still_hold_every_expert() {
    assert_clear_error(&["predict", "--model", "deepseek-v3", "--gpu", "h200", "--seq", "1"], "does not fit in memory");
    for seq in ["4", "1024"] {
        let o = wavecast(&["predict", "--model", "mixtral-8x7b", "--gpu", "b200", "--seq", seq, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["params"], 46_702_792_704_u64, "seq {seq}");
    }
}

/// A module with no link to another GPU (Jetson Thor: no NVLink, no PCIe) runs alone; asked
/// for two, every route says why instead of pricing a collective over a link it lacks.
#[test]
fn a_gpu_with_no_link_is_refused_more_than_one_gpu() {
    let why = "jetson-thor has no link to another GPU";
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "jetson-thor", "--mode", "train", "--dp", "2", "--batch", "8"], why);
    assert_clear_error(&["predict", "--model", "llama-3.2-1b", "--gpu", "jetson-thor", "--mode", "serve", "--tp", "2", "--input-len", "100", "--output-len", "10"], why);
    assert_clear_error(&["serve-sim", "--model", "llama-3.2-1b", "--gpu", "jetson-thor", "--tp", "2", "--input", "100", "--output", "10", "--rate", "1"], why);
    assert_clear_error(&["plan", "train", "--model", "gpt2", "--gpu", "jetson-thor", "--gpus", "2", "--batch", "8", "--seq", "512"], why);
    // Disaggregated, the KV cache would cross the link it lacks.
    assert_clear_error(&["serve-sim", "--model", "llama-3.2-1b", "--gpu", "jetson-thor", "--prefill", "tp1", "--decode", "tp1", "--concurrency", "2"], why);
    let alone = wavecast(&["predict", "--model", "llama-3.2-1b", "--gpu", "jetson-thor", "--mode", "serve", "--input-len", "100", "--output-len", "10"]);
    assert!(alone.status.success(), "{}", stderr(&alone));
}

/// A cluster past any built is a typo, not a job: refused with the limit, not priced at
/// "0 tokens/s per GPU".
#[test]
fn a_billion_gpus_is_refused_with_the_limit() {
    assert_clear_error(&["predict", "--model", "llama-3-8b", "--gpu", "h100", "--mode", "train", "--dp", "1000000000", "--batch", "1000000000", "--zero", "3"], "is past the 1048576");
}

/// Serving activations are BF16 or FP16 on every serving route: FP8 is a weight or KV-cache
/// format (`--weights`, `--kv-dtype`), not an activation type (the static batch once priced
/// `--dtype fp8` with its parameters counted at half).
#[test]
fn every_serving_route_takes_the_same_activation_types() {
    let why = "serving activations must be bf16, fp16 or auto, got fp8";
    assert_clear_error(&["predict", "--model", "llama-3-8b", "--gpu", "h100", "--mode", "serve", "--input-len", "1024", "--output-len", "256", "--dtype", "fp8"], why);
    assert_clear_error(&["compare", "--model", "llama-3-8b", "--gpus", "h100", "--input-len", "1024", "--output-len", "256", "--dtype", "fp8"], why);
    assert_clear_error(&["serve-sim", "--model", "llama-3-8b", "--gpu", "h100", "--input", "1024", "--output", "256", "--rate", "1", "--dtype", "fp8"], why);
}

/// A negative number is refused for its value, naming the option, not read as a flag `-1`;
/// zero sizes of a comparison are bad input, not a skipped row.
#[test]
fn a_negative_or_zero_size_names_its_option() {
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--batch", "-1"], "invalid value '-1' for '--batch <BATCH>'");
    assert_clear_error(&["compare", "--model", "llama-3-8b", "--gpus", "h100", "--tp", "0,1", "--input-len", "100", "--output-len", "10"], "--tp must be at least 1");
    assert_clear_error(&["compare", "--model", "llama-3-8b", "--gpus", "h100", "--batch", "0", "--input-len", "100", "--output-len", "10"], "--batch must be at least 1");
}

/// What cannot run is said before what does not fit: BF16 on a T4 is refused for its units,
/// whatever the memory; a measured-data folder that does not exist is refused whichever
/// predictor would have read it; a batch no arithmetic holds names its likely cause.
#[test]
fn the_first_thing_wrong_is_the_one_named() {
    assert_clear_error(&["predict", "--model", "llama-3-8b", "--gpu", "t4", "--dtype", "bf16"], "has no bf16 units");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "a100", "--ops-data", "/nonexistent/ops"], "--ops-data /nonexistent/ops: no such folder");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "a100", "--batch", "1000000000"], "is the batch or sequence length a typo?");
}

/// Two names of one GPU are one column of `compare`.
#[test]
fn compare_counts_a_gpu_named_twice_once() {
    let o = wavecast(&["compare", "--model", "llama-3-8b", "--gpus", "h100,h100-sxm", "--tp", "1,2", "--input-len", "100", "--output-len", "10", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 2, "{v}");
}

/// Two prices for one GPU, by any of its names, are refused instead of the last one winning;
/// so is a price for a GPU the request does not ask about, which would change nothing.
#[test]
fn a_gpu_priced_twice_or_not_asked_about_is_refused() {
    assert_clear_error(&["compare", "--model", "llama-3-8b", "--gpus", "h100", "--input-len", "100", "--output-len", "10", "--price", "h100=1,h100-sxm=3"], "--price names h100-sxm twice");
    assert_clear_error(&["compare", "--model", "llama-3-8b", "--gpus", "h100,l40s", "--input-len", "100", "--output-len", "10", "--price", "a100=1"], "a100-sxm-80gb is not a GPU this request asks about");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--price", "l40s=1"], "l40s is not a GPU this request asks about");
    let o = wavecast(&["predict", "--model", "gpt2", "--gpu", "h100", "--price", "h100-sxm=1.5", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Inference is refused when even one layer's input and output cannot be resident beside the
/// weights: the LM head's logits over 64 × 8192 positions are 134 GB in BF16, on an 80 GB H100.
/// An eighth of the batch fits.
#[test]
fn inference_whose_largest_layer_cannot_be_resident_is_refused() {
    let args = |batch: &'static str| ["predict", "--model", "llama-3-8b", "--gpu", "h100", "--batch", batch, "--seq", "8192"];
    assert_clear_error(&args("64"), "the largest layer's input and output 138.8 GB");
    let o = wavecast(&args("8"));
    assert!(o.status.success(), "{}", stderr(&o));
}
