//! The serve mode and `compare` as a user runs them: JSON fields, exit codes, the plot file.

use std::process::Command;

fn wavecast(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).output().expect("runs the binary")
}

const SERVE: &[&str] = &["predict", "--model", "qwen2.5-14b", "--gpu", "h100", "--mode", "serve", "--batch", "8", "--input-len", "1000", "--output-len", "50"];

#[test]
fn serve_json_has_the_top_level_fields() {
    let mut args = SERVE.to_vec();
    args.extend(["--tp", "2", "--json"]);
    let out = wavecast(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in ["prefill_ms", "decode_ms", "total_ms", "tokens_per_s", "weight_gb", "kv_cache_gb", "memory_gb", "comm_ms", "comm_share"] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key} = {}", v[key]);
    }
    assert_eq!(v["tp"], 2);
    assert_eq!(v["dtype"], "bf16", "serve mode defaults to BF16");
    // total = prefill (which samples the first token) + 49 decode steps of about the median.
    let (p, d, t) = (v["prefill_ms"].as_f64().unwrap(), v["decode_ms"].as_f64().unwrap(), v["total_ms"].as_f64().unwrap());
    assert!((t - p - 49.0 * d).abs() / t < 0.01, "{t} vs {p} + 49 × {d}");
    // The breakdown is the iteration's parts, summing to the prefill and the decode step.
    let sum = |k: &str| v[k].as_object().unwrap().values().map(|x| x.as_f64().unwrap()).sum::<f64>();
    assert!((sum("prefill_classes") - p).abs() < 1e-6 * p && (sum("decode_classes") - d).abs() < 1e-2 * d);
    assert_eq!(v["backend"], "vllm");
}

/// The standard serve command with some flags replaced or added.
fn serve_with(changes: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = SERVE.iter().map(|s| s.to_string()).collect();
    for pair in changes.chunks(2) {
        match args.iter().position(|a| a == pair[0]) {
            Some(i) => args[i + 1] = pair[1].to_string(),
            None => args.extend(pair.iter().map(|s| s.to_string())),
        }
    }
    args
}

#[test]
fn bad_serving_input_is_one_line_and_exit_code_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--tp", "3"], "does not divide"),
        (&["--gpu", "h1000"], "unknown GPU"),
        (&["--input-len", "0"], "input length"),
        // 16-bit weights of either kind are the activations' type; 32-bit ones no engine serves.
        (&["--weights", "fp32"], "--weights fp32: fp32 weights are not a serving format"),
        (&["--kv-dtype", "fp32"], "KV cache must be"),
        (&["--weights", "nvfp4"], "no fp4"),
        // AMD's FP4 units take MX blocks, not NVIDIA's NVFP4.
        (&["--gpu", "mi355x", "--weights", "nvfp4"], "runs no nvfp4"),
        (&["--gpu", "t4", "--dtype", "fp16", "--weights", "mxfp4"], "need Ampere or later"),
        // FP8 weights are an FP8 GEMM: not on an A100, with either predictor.
        (&["--gpu", "a100-sxm-80gb", "--weights", "fp8"], "no fp8 units"),
        (&["--gpu", "a100-sxm-80gb", "--weights", "fp8", "--predictor", "wavecast"], "no fp8 units"),
        (&["--model", "llama-3.1-70b", "--gpu", "l40"], "does not fit in memory"),
        (&["--backend", "tgi"], "unknown serving backend 'tgi'"),
        (&["--gpu", "v100-sxm2", "--backend", "trtllm"], "TensorRT-LLM supports Ampere (compute capability 8.0) and newer"),
    ];
    for (changes, needle) in cases {
        let args = serve_with(changes);
        let out = wavecast(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{changes:?}: {err}");
        assert!(err.contains(needle) && err.trim().lines().count() == 1, "{changes:?}: {err}");
    }
    // serve-sim says the same of the same flag.
    let out = wavecast(&["serve-sim", "--model", "llama-3-8b", "--gpu", "h100", "--input", "100", "--output", "10", "--weights", "fp32"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--weights fp32: fp32 weights are not a serving format"));
    let out = wavecast(&["predict", "--model", "gpt2", "--gpu", "h100", "--input-len", "5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mode serve only"));
}

fn serve_json(changes: &[&str]) -> serde_json::Value {
    let mut args = serve_with(changes);
    args.push("--json".into());
    let out = wavecast(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{changes:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_static_batch_runs_in_the_engine_named_as_serve_sim_does() {
    let vllm = serve_json(&[]);
    let trtllm = serve_json(&["--backend", "trtllm"]);
    assert_eq!((vllm["backend"].as_str(), trtllm["backend"].as_str()), (Some("vllm"), Some("trtllm")));
    // TensorRT-LLM's engine spends less host time per iteration than vLLM's.
    let engine = |v: &serde_json::Value| v["decode_classes"]["engine"].as_f64().unwrap();
    assert!(engine(&trtllm) < engine(&vllm) && trtllm["decode_ms"].as_f64() < vllm["decode_ms"].as_f64());
    // serve-sim's flag name, and outside serve mode it is refused like the other serving flags.
    let out = wavecast(&["predict", "--model", "gpt2", "--gpu", "h100", "--backend", "sglang"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mode serve only"));
}

/// `compare --backend` runs every combination in that engine, as `predict --mode serve` does;
/// an engine wavecast does not know is one line and exit code 2.
#[test]
fn compare_runs_every_combination_in_the_engine_named() {
    // The standard serve workload (SERVE) on two GPUs.
    let compare = |extra: &[&str]| {
        let mut args = vec!["compare", "--model", "qwen2.5-14b", "--gpus", "h100,a100", "--batch", "8", "--input-len", "1000", "--output-len", "50", "--json"];
        args.extend_from_slice(extra);
        json_of(&args)
    };
    let (vllm, trtllm) = (compare(&[]), compare(&["--backend", "tensorrt-llm"]));
    let rows = |v: &serde_json::Value| v["results"].as_array().unwrap().clone();
    assert_eq!(rows(&trtllm).len(), 2);
    for (v, t) in rows(&vllm).iter().zip(rows(&trtllm).iter()) {
        assert_eq!((v["backend"].as_str(), t["backend"].as_str()), (Some("vllm"), Some("trtllm")));
        // The engine's own time per iteration differs, so the decode step does.
        assert_ne!(v["decode_ms"], t["decode_ms"], "{}", t["gpu"]);
    }
    let h100 = rows(&trtllm).into_iter().find(|r| r["gpu"] == "h100-sxm").unwrap();
    assert_eq!(h100["decode_ms"], serve_json(&["--backend", "trtllm"])["decode_ms"], "compare's row is predict --mode serve's answer");
    let out = wavecast(&["compare", "--model", "qwen2.5-14b", "--gpus", "h100", "--input-len", "10", "--output-len", "10", "--backend", "tgi"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown serving backend 'tgi'") && err.trim().lines().count() == 1, "{err}");
}

#[test]
fn quantized_weights_and_an_fp8_kv_cache_shrink_memory_and_decode_time() {
    for predictor in ["wavecast", "sustained"] {
        let base = serve_json(&["--gpu", "b200", "--batch", "64", "--input-len", "4000", "--predictor", predictor]);
        let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap();
        // An FP8 cache holds the same tokens in half the bytes, and decode reads half as much.
        let kv8 = serve_json(&["--gpu", "b200", "--batch", "64", "--input-len", "4000", "--predictor", predictor, "--kv-dtype", "fp8"]);
        assert!((f(&kv8, "kv_cache_gb") / f(&base, "kv_cache_gb") - 0.5).abs() < 0.01, "{predictor}: {} vs {}", kv8["kv_cache_gb"], base["kv_cache_gb"]);
        assert!(f(&kv8, "decode_ms") < f(&base, "decode_ms"), "{predictor}");
        assert_eq!(f(&kv8, "weight_gb"), f(&base, "weight_gb"));
        // NVFP4 layers (4.5 bits with their scales) are under a third of BF16's bytes; the
        // embedding and LM head stay in BF16.
        let fp4 = serve_json(&["--gpu", "b200", "--batch", "64", "--input-len", "4000", "--predictor", predictor, "--weights", "nvfp4"]);
        let share = f(&fp4, "weight_gb") / f(&base, "weight_gb");
        assert!(share > 0.25 && share < 0.4, "{predictor}: {share}");
        assert!(f(&fp4, "decode_ms") < f(&base, "decode_ms"), "{predictor}");
    }
}

#[test]
fn compare_prints_a_row_per_configuration_and_writes_the_plot() {
    let svg = std::env::temp_dir().join(format!("wavecast-compare-{}.svg", std::process::id()));
    let out = wavecast(&[
        "compare", "--model", "qwen3-32b", "--gpus", "h100,a40", "--tp", "1,2", "--batch", "8", "--input-len", "1000",
        "--output-len", "20", "--plot", svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tokens/$") && text.contains("h100-sxm") && text.contains("a40"), "{text}");
    assert!(text.contains("skipped a40 TP 1: does not fit"), "{text}");
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.contains("h100-sxm ×2") && plot.contains("tokens per $"));
    let _ = std::fs::remove_file(&svg);
}

/// One command's output, parsed, that must succeed.
fn json_of(args: &[&str]) -> serde_json::Value {
    let out = wavecast(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_checkpoint_is_served_in_its_own_format_unless_a_flag_says_otherwise() {
    // gpt-oss-120b's MXFP4 experts fit one H100 (as it is served); its 16-bit weights do not.
    let gpt_oss = ["--model", "gpt-oss-120b", "--gpu", "h100", "--input-len", "1000", "--output-len", "64"];
    let static_batch = |extra: &[&str]| {
        let mut args = vec!["predict", "--mode", "serve", "--batch", "4", "--json"];
        args.extend(gpt_oss);
        args.extend(extra);
        json_of(&args)
    };
    let default = static_batch(&[]);
    assert_eq!((default["quant"].as_str(), default["moe_quant"].as_str()), (None, Some("mxfp4")));
    let sim = |extra: &[&str]| {
        let mut args = vec!["serve-sim", "--concurrency", "4", "--requests", "8", "--json"];
        args.extend(gpt_oss);
        args.extend(extra);
        json_of(&args)
    };
    // The same question two ways: no flag, or the checkpoint's format named.
    let (plain, named) = (sim(&[]), sim(&["--moe-quant", "mxfp4"]));
    assert_eq!(plain["formats"]["moe_quant"].as_str(), Some("mxfp4"));
    let tpot = |v: &serde_json::Value| v["metrics"]["tpot_ms"]["mean"].as_f64().unwrap();
    assert_eq!(tpot(&plain), tpot(&named));
    // The static batch prices the experts in the checkpoint's format too: faster than BF16 ones.
    let bf16 = static_batch(&["--tp", "4", "--weights", "bf16"]);
    let ckpt = static_batch(&["--tp", "4"]);
    assert!(ckpt["decode_ms"].as_f64().unwrap() < bf16["decode_ms"].as_f64().unwrap() && ckpt["weight_gb"].as_f64() < bf16["weight_gb"].as_f64());
    let mut args = vec!["serve-sim", "--concurrency", "4", "--quant", "bf16"];
    args.extend(gpt_oss);
    let out = wavecast(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not fit in memory"));
    // DeepSeek-V3's FP8 checkpoint on a GPU without FP8 units: one line naming the way out.
    let out = wavecast(&["predict", "--mode", "serve", "--model", "deepseek-v3", "--gpu", "a100-sxm-80gb", "--tp", "8", "--input-len", "100", "--output-len", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("deepseek-v3's checkpoint stores fp8_block weights") && err.contains("--weights bf16") && err.trim().lines().count() == 1, "{err}");
}

/// A static batch schedules its whole prompt in one iteration, but SGLang sizes its reserve for
/// its own prefill chunk (8,192 tokens), not for that iteration: a batch that fits in vLLM's
/// share fits in SGLang's too (64 × 4,096 tokens once asked for a 413 GB reserve).
#[test]
fn a_large_static_batch_fits_in_sglang_where_it_fits_in_vllm() {
    let large = ["--model", "llama-3.1-8b", "--batch", "64", "--input-len", "4096"];
    let vllm = serve_json(&large);
    let sglang = serve_json(&[&large[..], &["--backend", "sglang"]].concat());
    assert_eq!(sglang["backend"].as_str(), Some("sglang"));
    assert!(vllm["memory_gb"].as_f64().is_some() && sglang["memory_gb"].as_f64().is_some(), "{sglang}");
}

/// A refusal for memory suggests only weight formats the GPU can run: an A100 has no FP8 or FP4
/// units, so it is pointed at the weight-only formats.
#[test]
fn a_memory_refusal_suggests_only_formats_the_gpu_runs() {
    let refusal = |gpu: &str| {
        let out = wavecast(&["predict", "--mode", "serve", "--model", "llama-3.1-70b", "--gpu", gpu, "--batch", "1", "--input-len", "100", "--output-len", "10"]);
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let a100 = refusal("a100");
    assert!(a100.contains("(mxfp4, int4)") && !a100.contains("fp8") && !a100.contains("nvfp4"), "{a100}");
    assert!(refusal("h100").contains("(fp8, fp8_block, mxfp4, int4)"));
}

/// A GPU without units for the checkpoint's own format is skipped by `compare` in the words
/// `predict --mode serve` refuses it with (which name `--weights bf16`).
#[test]
fn compare_skips_a_gpu_without_the_checkpoints_format_as_predict_refuses_it() {
    let args = ["--model", "deepseek-v3", "--tp", "8", "--batch", "1", "--input-len", "100", "--output-len", "10"];
    let compared = wavecast(&[&["compare", "--gpus", "a100,h200", "--json"][..], &args].concat());
    assert!(compared.status.success(), "{}", String::from_utf8_lossy(&compared.stderr));
    let v: serde_json::Value = serde_json::from_slice(&compared.stdout).unwrap();
    let reason = v["skipped"][0]["reason"].as_str().unwrap().to_string();
    let refused = wavecast(&[&["predict", "--mode", "serve", "--gpu", "a100"][..], &args].concat());
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(reason.contains("--weights bf16") && err.contains(&reason), "{reason} vs {err}");
}

/// SGLang keeps activations and its runtime in a reserve outside its static share, so its memory
/// refusal lists only what the share must hold, and names the reserve; vLLM's lists every part.
#[test]
fn an_sglang_memory_refusal_names_its_reserve_not_activations() {
    let refusal = |backend: &str| {
        let out = wavecast(&["predict", "--mode", "serve", "--model", "llama-3.1-70b", "--gpu", "h100", "--batch", "1", "--input-len", "100", "--output-len", "10", "--backend", backend]);
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let (sglang, vllm) = (refusal("sglang"), refusal("vllm"));
    assert!(sglang.contains("outside its static share") && !sglang.contains("GB for activations"), "{sglang}");
    assert!(vllm.contains("GB for activations") && vllm.contains("GB for the runtime"), "{vllm}");
}

/// One request alone: the static batch's time to first token plus what it names as the API
/// server's time is serve-sim's TTFT of that request, and the decode steps agree.
#[test]
fn one_request_static_and_simulated_differ_by_the_api_server_alone() {
    let common = ["--model", "llama-3.1-8b", "--gpu", "h100", "--input-len", "1024", "--output-len", "64", "--json"];
    let mut serve = vec!["predict", "--mode", "serve"];
    serve.extend(common);
    let mut sim = vec!["serve-sim", "--concurrency", "1", "--requests", "1"];
    sim.extend(common);
    let (s, m) = (json_of(&serve), json_of(&sim));
    let static_ttft = s["prefill_ms"].as_f64().unwrap() + s["api_server_ms"].as_f64().unwrap();
    let sim_ttft = m["metrics"]["ttft_ms"]["mean"].as_f64().unwrap();
    assert!(s["api_server_ms"].as_f64().unwrap() > 0.0);
    assert!((static_ttft - sim_ttft).abs() < 1e-6 * sim_ttft, "{static_ttft} vs {sim_ttft}");
    let sim_tpot = m["metrics"]["tpot_ms"]["mean"].as_f64().unwrap();
    assert!((s["decode_ms"].as_f64().unwrap() - sim_tpot).abs() < 0.01 * sim_tpot);
}

/// Fifty users sending one request each are one burst: the same TTFT as fifty requests at an
/// unbounded rate, and longer than the steady state of fifty users sending several rounds.
#[test]
fn one_request_per_user_is_a_burst() {
    let sim = |extra: &[&str]| {
        let mut args = vec!["serve-sim", "--model", "llama-3.1-8b", "--gpu", "h100", "--input-len", "1024", "--output-len", "128", "--json"];
        args.extend_from_slice(extra);
        json_of(&args)["metrics"]["ttft_ms"]["mean"].as_f64().unwrap()
    };
    let (closed, burst, steady) = (sim(&["--concurrency", "50", "--requests", "50"]), sim(&["--rate", "1e9", "--requests", "50"]), sim(&["--concurrency", "50"]));
    assert!((closed - burst).abs() < 0.01 * burst, "{closed} vs {burst}");
    assert!(steady < closed, "{steady} vs {closed}");
}

/// A checkpoint quantized in a format wavecast does not model (8-bit GPTQ) is priced in 16
/// bits, and every serving command says so in its notes; naming a format with --weights
/// leaves nothing to say.
#[test]
fn a_checkpoint_format_not_modelled_is_noted_by_every_serving_command() {
    let preset = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/wavecast-workload/presets/llama-3.1-8b.json");
    let mut cfg: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(preset).unwrap()).unwrap();
    cfg["quantization_config"] = serde_json::json!({"quant_method": "gptq", "bits": 8});
    let dir = std::env::temp_dir().join(format!("wavecast-gptq8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    std::fs::write(&path, cfg.to_string()).unwrap();
    let config = path.to_str().unwrap();
    let notes = |args: &[&str]| -> Vec<String> {
        let out = wavecast(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["notes"].as_array().map(|a| a.iter().map(|n| n.as_str().unwrap().to_string()).collect()).unwrap_or_default()
    };
    let said = |n: &[String]| n.iter().any(|n| n.contains("'gptq 8-bit'") && n.contains("priced in 16 bits"));
    let serve = ["predict", "--config", config, "--gpu", "h100", "--mode", "serve", "--input-len", "100", "--output-len", "10", "--json"];
    assert!(said(&notes(&serve)));
    assert!(said(&notes(&["serve-sim", "--config", config, "--gpu", "h100", "--input", "100", "--output", "10", "--concurrency", "2", "--json"])));
    assert!(said(&notes(&["compare", "--config", config, "--gpus", "h100,a100", "--input-len", "100", "--output-len", "10", "--json"])));
    let mut fp8 = serve.to_vec();
    fp8.extend(["--weights", "fp8"]);
    assert!(!said(&notes(&fp8)));
}
