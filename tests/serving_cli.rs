//! Serving under load as a user runs it: `serve-sim`, `plan serve` and `eval serving` — JSON
//! shapes, what the simulation must respect, and one-line errors with exit code 2.

use std::process::Command;

fn wavecast(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).output().expect("runs the binary")
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = wavecast(&all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The one-line error of a command that must fail with exit code 2.
fn error(args: &[&str]) -> String {
    let out = wavecast(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

const SIM: &[&str] = &["serve-sim", "--model", "llama-3.1-70b", "--gpu", "h100", "--layout", "tp4", "--quant", "fp8", "--input", "1024", "--output", "128"];

fn sim(extra: &[&str]) -> serde_json::Value {
    let mut args = SIM.to_vec();
    args.extend(extra);
    json(&args)
}

/// The number at a dotted path (`memory.0.kv_tokens`: digits index arrays).
fn f(v: &serde_json::Value, path: &str) -> f64 {
    path.split('.').fold(v, |v, k| match k.parse::<usize>() {
        Ok(i) => &v[i],
        Err(_) => &v[k],
    })
    .as_f64()
    .unwrap_or_else(|| panic!("{path} is not a number in {v}"))
}

#[test]
fn serve_sim_reports_latencies_throughput_memory_and_where_a_step_goes() {
    let v = sim(&["--concurrency", "16"]);
    for lat in ["ttft_ms", "tpot_ms", "e2e_ms"] {
        let (mean, p50, p90, p99) = (f(&v, &format!("metrics.{lat}.mean")), f(&v, &format!("metrics.{lat}.p50")), f(&v, &format!("metrics.{lat}.p90")), f(&v, &format!("metrics.{lat}.p99")));
        assert!(mean > 0.0 && p50 <= p90 && p90 <= p99, "{lat}: {mean} {p50} {p90} {p99}");
    }
    assert_eq!(v["requests"], 64, "4 requests per user by default");
    assert_eq!(v["gpus"], 4);
    // Every decode step streams each GPU's weights once: TPOT is never below that.
    let weights_gb = f(&v, "memory.0.weights_gb");
    let floor_ms = weights_gb * 1e9 / (3.35e12 * 0.92) * 1e3;
    assert!(f(&v, "metrics.tpot_ms.p50") > floor_ms, "TPOT {} below the weight read {floor_ms}", f(&v, "metrics.tpot_ms.p50"));
    let step = &v["decode_step"];
    let parts: f64 = ["layers_ms", "experts_ms", "decode_attention_ms", "prefill_attention_ms", "head_ms", "pipeline_ms", "overhead_ms"].iter().map(|k| step[k].as_f64().unwrap()).sum();
    assert!(parts > floor_ms && parts < 3.0 * f(&v, "metrics.tpot_ms.mean"), "{step}");
    // Throughput per GPU is the whole run's output over its duration and GPUs.
    let tokens = 64.0 * 128.0;
    assert!((f(&v, "metrics.output_tokens_per_s_per_gpu") - tokens / f(&v, "metrics.duration_s") / 4.0).abs() < 1e-6);
}

#[test]
fn more_users_share_each_step_so_tpot_grows_and_per_gpu_throughput_rises() {
    let one = sim(&["--concurrency", "1"]);
    let many = sim(&["--concurrency", "64"]);
    assert!(f(&many, "metrics.tpot_ms.mean") > f(&one, "metrics.tpot_ms.mean"));
    assert!(f(&many, "metrics.output_tokens_per_s_per_gpu") > 8.0 * f(&one, "metrics.output_tokens_per_s_per_gpu"));
}

#[test]
fn an_fp8_cache_holds_twice_the_tokens_and_the_seed_fixes_drawn_lengths() {
    let bf16 = sim(&["--concurrency", "4"]);
    let fp8 = sim(&["--concurrency", "4", "--kv-dtype", "fp8"]);
    let (a, b) = (f(&bf16, "memory.0.kv_tokens"), f(&fp8, "memory.0.kv_tokens"));
    assert!((b / a - 2.0).abs() < 0.01, "{a} {b}");
    let drawn = |seed: &str| {
        let mut args: Vec<&str> = SIM[..9].to_vec();
        args.extend(["--rate", "2", "--requests", "50", "--input", "uniform:100:2000", "--output", "lognormal:100:0.5", "--seed", seed]);
        json(&args)
    };
    assert_eq!(drawn("3"), drawn("3"));
    assert_ne!(drawn("3")["metrics"], drawn("4")["metrics"]);
}

#[test]
fn pipeline_stages_split_the_weights_and_hand_batches_on() {
    let with_layout = |layout: &str| {
        let mut args: Vec<&str> = SIM.iter().copied().filter(|a| *a != "--layout" && *a != "tp4").collect();
        args.extend(["--layout", layout, "--concurrency", "16"]);
        json(&args)
    };
    let tp4 = with_layout("tp4");
    let pp = with_layout("tp2,pp2");
    assert_eq!(pp["gpus"], 4);
    assert_eq!(pp["layout"], "tp2·pp2");
    // Each GPU holds half of tp2's share of the weights: the same as tp4's.
    assert!((f(&pp, "memory.0.weights_gb") / f(&tp4, "memory.0.weights_gb") - 1.0).abs() < 0.05);
    assert!(f(&pp, "decode_step.pipeline_ms") > 0.0 && f(&tp4, "decode_step.pipeline_ms") == 0.0);
    assert!(error(&["serve-sim", "--model", "llama-3.2-1b", "--gpu", "h100", "--layout", "tp1,pp32"]).contains("more than the model's 16 layers"));
}

#[test]
fn disaggregated_pools_and_goodput() {
    let v = sim(&["--concurrency", "16", "--slo-ttft", "1000", "--slo-tpot", "50"]);
    assert!(v["metrics"]["slo_attainment"].as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)));
    let mut args: Vec<&str> = SIM.iter().copied().filter(|a| *a != "--layout" && *a != "tp4").collect();
    args.extend(["--prefill", "tp4", "--decode", "tp4", "--concurrency", "16"]);
    let d = json(&args);
    assert_eq!(d["gpus"], 8);
    assert_eq!(d["memory"].as_array().unwrap().len(), 2, "prefill and decode pools");
    assert_eq!(d["layout"], "P tp4 + D tp4");
}

#[test]
fn a_trace_replays_its_own_arrivals_and_lengths() {
    let dir = std::env::temp_dir().join(format!("wavecast-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.csv");
    std::fs::write(&trace, "arrival_s,input_len,output_len\n0,500,20\n0.5,700,30\n1.0,300,10\n").unwrap();
    let mut args: Vec<&str> = SIM[..9].to_vec();
    let path = trace.to_str().unwrap();
    args.extend(["--trace", path]);
    let v = json(&args);
    assert_eq!(v["requests"], 3);
    assert!(f(&v, "metrics.duration_s") > 1.0, "the last request arrives at 1 s");
    std::fs::write(&trace, "arrival_s,input_len\n0,500\n").unwrap();
    assert!(error(&args).contains("no output_len column"));
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn bad_serving_input_is_one_line_and_exit_2() {
    fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut a: Vec<&'a str> = SIM[..5].to_vec();
        a.extend(extra);
        a
    }
    assert!(error(&with(&["--layout", "tp4,ep3"])).contains("ep 3 must divide"));
    assert!(error(&with(&["--layout", "tp3"])).contains("does not divide"));
    assert!(error(&with(&["--layout", "qq4"])).contains("unknown part 'qq'"));
    // A contradiction or nothing at all is refused, not read as its last part or as tp1.
    assert!(error(&with(&["--layout", "tp2,tp4"])).contains("gives tp twice"));
    assert!(error(&with(&["--layout", ""])).contains("names no parallelism"));
    assert!(error(&with(&["--kv-dtype", "fp4"])).contains("the KV cache must be bf16, fp16, fp8 or auto (vLLM's fp8_e4m3 and fp8_e5m2 are fp8), got fp4"));
    assert!(error(&with(&["--layout", "tp4", "--shared-prefix", "2000"])).contains("only with prefix caching"));
    assert!(error(&with(&["--concurrency", "0"])).contains("at least 1"));
    assert!(error(&with(&["--input", "uniform:9:3"])).contains("wrong way round"));
    assert!(error(&with(&["--backend", "tgi"])).contains("unknown serving backend"));
    assert!(error(&with(&["--layout", "tp4", "--quant", "nvfp4"])).contains("no fp4 units for nvfp4"), "H100 cannot run FP4");
    assert!(error(&with(&["--input", "200000"])).contains("context"));
    // A dense model has no routed experts for --moe-quant to store.
    assert!(error(&with(&["--moe-quant", "fp8"])).contains("llama-3.1-70b has none"));
    let e = error(&["serve-sim", "--model", "llama-3.1-70b", "--gpu", "l4", "--concurrency", "1"]);
    assert!(e.contains("does not fit in memory") && e.contains("GB for weights"), "{e}");
    assert!(error(&["serve-sim", "--model", "bert-base", "--gpu", "h100"]).contains("encoder"));
    // Malformed and unsupported configs: one line naming the file and the field.
    let dir = std::env::temp_dir().join(format!("wavecast-badcfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("config.json");
    for (text, needle) in [
        ("{\"model_type\": \"deepseek_v3\", \"hidden_size\": 7168", "config.json"),
        ("{\"model_type\": \"deepseek_v3\", \"hidden_size\": 7168, \"num_attention_heads\": 128}", "missing field"),
        ("{\"model_type\": \"nemotron_h\"}", "unsupported model_type 'nemotron_h'"),
        // Qwen3-Next is read now: a bare one names its first missing field.
        ("{\"model_type\": \"qwen3_next\"}", "missing field 'hidden_size'"),
    ] {
        std::fs::write(&cfg, text).unwrap();
        let e = error(&["serve-sim", "--config", cfg.to_str().unwrap(), "--gpu", "h100"]);
        assert!(e.contains(needle), "{e}");
    }
    std::fs::remove_dir_all(dir).ok();
}

/// A run in which no request decodes has no time per output token: JSON says `null`, not a
/// zero that reads as one; a 16-bit cache of the other kind than the activations is written in
/// theirs, and the answer says so.
#[test]
fn no_decoding_is_null_and_a_swapped_cache_type_is_noted() {
    let v = json(&["serve-sim", "--model", "llama-3.1-8b", "--gpu", "h100", "--output-len", "1"]);
    assert!(v["metrics"]["tpot_ms"].is_null() && v["metrics"]["tokens_per_s_per_user"].is_null(), "{}", v["metrics"]);
    assert!(v["metrics"]["ttft_ms"]["mean"].as_f64().is_some_and(|t| t > 0.0));
    let v = json(&["serve-sim", "--model", "llama-3.1-8b", "--gpu", "h100", "--dtype", "fp16", "--kv-dtype", "bf16"]);
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("KV cache in fp16, not bf16")), "{}", v["notes"]);
    assert!(v["metrics"]["tpot_ms"]["mean"].as_f64().is_some_and(|t| t > 0.0));
}

/// What no layout can change (a format the GPU lacks, a prompt past the model's context) is
/// refused before the search, in one line and with nothing on stdout, as serve-sim refuses it:
/// not an empty table with the reason repeated per layout.
#[test]
fn plan_serve_refuses_what_no_layout_changes_before_searching() {
    for (extra, needle) in [(&["--gpu", "a100", "--quant", "fp8"][..], "no fp8 units"), (&["--gpu", "h100", "--input-len", "200000"][..], "context"), (&["--gpu", "h100", "--quant", "nvfp4"][..], "no fp4 units")] {
        let mut args = vec!["plan", "serve", "--model", "llama-3.1-8b", "--gpus", "8"];
        args.extend(extra);
        assert!(error(&args).contains(needle), "{args:?}");
        assert!(wavecast(&args).stdout.is_empty(), "{args:?} printed a table");
    }
}

#[test]
fn plan_serve_ranks_layouts_within_the_target_and_draws_the_front() {
    let svg = std::env::temp_dir().join(format!("wavecast-pareto-{}.svg", std::process::id()));
    let svg_path = svg.to_str().unwrap();
    let v = json(&["plan", "serve", "--model", "qwen3-32b", "--gpu", "h100", "--gpus", "4", "--input-len", "512", "--output-len", "64", "--concurrency", "1,16", "--slo-tpot", "40", "--svg", svg_path]);
    let ranked = v["ranked"].as_array().unwrap();
    assert!(!ranked.is_empty());
    let tput: Vec<f64> = ranked.iter().map(|r| r["tokens_per_s_per_gpu"].as_f64().unwrap()).collect();
    assert!(tput.windows(2).all(|w| w[0] >= w[1]), "best first: {tput:?}");
    assert!(ranked.iter().all(|r| r["meets_slo"] == true && r["tpot_ms"].as_f64().unwrap() <= 40.0));
    let points = v["points"].as_array().unwrap();
    assert!(points.iter().any(|p| p["mode"] == "disagg") && points.iter().any(|p| p["mode"] == "agg"));
    assert!(points.iter().any(|p| p["pareto"] == true));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("Pareto front"));
    std::fs::remove_file(svg).ok();
}

#[test]
fn eval_serving_predicts_what_it_can_and_names_the_rest() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/serving/silicon_sample.csv");
    let v = json(&["eval", "serving", "--data", data]);
    assert_eq!(v["predictor"], "ladder");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{v}");
    // Qwen3.5's hybrid linear attention (SGLang on B200) is predicted.
    assert!(rows.iter().any(|r| r["model"].as_str().unwrap().contains("Qwen3.5") && r["system"] == "b200_sxm"), "{v}");
    for r in rows {
        for k in ["id", "system", "model", "backend", "precision", "mode"] {
            assert!(r[k].is_string(), "{k}");
        }
        for k in ["measured_ttft_ms", "predicted_ttft_ms", "measured_tpot_ms", "predicted_tpot_ms"] {
            assert!(r[k].as_f64().is_some_and(|x| x > 0.0 && x.is_finite()), "{k}");
        }
    }
    let unpredicted = v["unpredicted"].as_array().unwrap();
    assert_eq!(unpredicted.len(), 1);
    let reasons: Vec<&str> = unpredicted.iter().map(|u| u["reason"].as_str().unwrap()).collect();
    assert!(reasons.iter().any(|r| r.contains("prefill_num_workers and decode_num_workers empty")), "{reasons:?}");
    let groups: Vec<&str> = v["summary"].as_array().unwrap().iter().map(|g| g["group"].as_str().unwrap()).collect();
    for g in ["all", "system=h100_sxm", "backend=vllm", "backend=trtllm", "precision=fp8", "mode=agg"] {
        assert!(groups.contains(&g), "{groups:?}");
    }
    let all = &v["summary"][0];
    assert_eq!(all["n"], 3);
    assert!(all["ttft_mean_ape"].as_f64().unwrap() >= 0.0 && all["tpot_mean_ape"].as_f64().unwrap() >= 0.0);
}

#[test]
fn eval_serving_rejects_malformed_files_in_one_line() {
    let dir = std::env::temp_dir().join(format!("wavecast-silicon-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("model_configs")).unwrap();
    let csv = dir.join("s.csv");
    std::fs::write(&csv, "id,backend\na,vllm\n").unwrap();
    assert!(error(&["eval", "serving", "--data", csv.to_str().unwrap()]).contains("missing column 'model_path'"));
    let fixture = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/serving/silicon_sample.csv")).unwrap();
    let broken = fixture.replacen(",1024,128,", ",ten,128,", 1);
    std::fs::write(&csv, broken).unwrap();
    assert!(error(&["eval", "serving", "--data", csv.to_str().unwrap()]).contains("column 'isl'"));
    std::fs::remove_dir_all(dir).ok();
    assert!(error(&["eval", "serving", "--data", "/nonexistent/s.csv"]).contains("cannot read"));
}

#[test]
fn static_serve_and_compare_take_the_sustained_kernel_models() {
    let v = json(&["predict", "--model", "llama-3.1-70b", "--gpu", "h100", "--mode", "serve", "--batch", "16", "--input-len", "1024", "--output-len", "32", "--tp", "4", "--weights", "fp8", "--predictor", "sustained"]);
    assert_eq!(v["predictor"], "sustained");
    // One decode step streams each GPU's weights at least once.
    let floor_ms = f(&v, "weight_gb") * 1e9 / (3.35e12 * 0.92) * 1e3;
    assert!(f(&v, "decode_ms") > floor_ms, "{} vs {floor_ms}", f(&v, "decode_ms"));
    let c = json(&["compare", "--model", "qwen3-32b", "--gpus", "h100,b200", "--tp", "1,2", "--batch", "4", "--input-len", "512", "--output-len", "16", "--predictor", "sustained"]);
    assert_eq!(c["results"].as_array().unwrap().len(), 4);
}

#[test]
fn eval_serving_can_refit_the_kernel_models_without_each_rows_gpu() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/serving/silicon_sample.csv");
    let ops = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/modern");
    let out = wavecast(&["eval", "serving", "--data", data, "--ops-data", ops, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("without h100-sxm"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["leave_one_gpu_out"], true);
    // The fixtures hold too few kernels to price every op without the H100's own rows: what
    // cannot be priced is listed, never silently priced with the H100's numbers.
    let n = v["rows"].as_array().unwrap().len() + v["unpredicted"].as_array().unwrap().len();
    assert_eq!(n, 4);
}

/// The price ladder end to end: with measured tables (`--ops-data`) a measured GPU's ops are
/// priced from them, a GPU without tables from its measured sibling, and without a folder from
/// the shipped surfaces; reports say which, and the same question asked through the environment variable
/// gets the same answer.
#[test]
fn serving_prices_down_the_ladder_and_says_where_each_price_came_from() {
    let ops = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/modern");
    let ask = |gpu: &str, extra: &[&str]| {
        let mut args = vec!["predict", "--model", "llama-3.1-8b", "--gpu", gpu, "--mode", "serve", "--input-len", "1000", "--output-len", "8"];
        args.extend_from_slice(extra);
        json(&args)
    };
    let share = |v: &serde_json::Value, label: &str| v["provenance"][label].as_f64().unwrap_or(0.0);
    let measured = ask("h100", &["--ops-data", ops]);
    assert!(share(&measured, "measured") > 0.5, "{}", measured["provenance"]);
    let sibling = ask("h200", &["--ops-data", ops]);
    assert!(share(&sibling, "transfer from h100-sxm") > 0.5, "{}", sibling["provenance"]);
    // Without a folder the shipped surfaces answer (the public data's tables, reduced).
    let shipped = ask("h100", &[]);
    assert!(share(&shipped, "measured (shipped)") > 0.5, "{}", shipped["provenance"]);
    assert_ne!(measured["prefill_ms"], shipped["prefill_ms"], "the tables must change the answer");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wavecast"))
        .args(["predict", "--model", "llama-3.1-8b", "--gpu", "h100", "--mode", "serve", "--input-len", "1000", "--output-len", "8", "--json"])
        .env("WAVECAST_OPS_DATA", ops)
        .output()
        .unwrap();
    let via_env: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(via_env["prefill_ms"], measured["prefill_ms"]);
    assert!(error(&["predict", "--model", "llama-3.1-8b", "--gpu", "h100", "--mode", "serve", "--input-len", "10", "--output-len", "2", "--ops-data", "/nonexistent/ops"]).contains("/nonexistent/ops"));
}

#[test]
fn tensor_parallelism_is_asked_the_way_engines_name_it() {
    let base = ["serve-sim", "--model", "llama-3-8b", "--gpu", "h100", "--concurrency", "8", "--input", "512", "--output", "64"];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend(extra);
        json(&args)
    };
    let layout = with(&["--layout", "tp2"]);
    assert_eq!(layout["gpus"], 2);
    for flag in ["--tp", "--tensor-parallel-size", "--tp-size"] {
        assert_eq!(with(&[flag, "2"]), layout, "{flag} 2 and --layout tp2 are one question");
    }
    let mut both = base.to_vec();
    both.extend(["--tp", "2", "--layout", "tp2"]);
    assert!(error(&both).contains("--tp"));
    let mut zero = base.to_vec();
    zero.extend(["--tp", "0"]);
    assert!(error(&zero).contains("tp0"));
}

/// The routed experts are stored in `--moe-quant`'s format whatever `--quant` says of the rest
/// of the layer: gpt-oss-120b with FP8 attention and MXFP4 experts holds about what its MXFP4
/// checkpoint holds (attention is a small part), far less than with FP8 experts.
#[test]
fn the_experts_weights_are_counted_in_their_own_format() {
    let weights = |formats: &[&str]| {
        let mut args = vec!["serve-sim", "--model", "gpt-oss-120b", "--gpu", "h100", "--layout", "tp2", "--concurrency", "8"];
        args.extend(formats);
        f(&json(&args), "memory.0.weights_gb")
    };
    let (fp8, mixed, experts_only) = (weights(&["--quant", "fp8"]), weights(&["--quant", "fp8", "--moe-quant", "mxfp4"]), weights(&["--moe-quant", "mxfp4"]));
    assert!(mixed < 0.6 * fp8, "fp8 {fp8} GB, fp8 + mxfp4 experts {mixed} GB");
    // FP8 attention instead of BF16: a little less than the experts-only checkpoint.
    assert!(mixed < experts_only && mixed > 0.95 * experts_only, "{mixed} vs {experts_only}");
}

/// A checkpoint stored in block-scaled FP8 has no per-tensor expert weights: a run labelled
/// `fp8` throughout runs its experts block-scaled, so it is the same question as the run
/// labelled `fp8_block` for its experts and gets the same answer.
#[test]
fn a_block_fp8_checkpoints_experts_run_block_scaled_whatever_the_label() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/serving");
    let header = std::fs::read_to_string(format!("{fixtures}/silicon_sample.csv")).unwrap().lines().next().unwrap().to_string();
    let row = |id: &str, moe: &str| {
        let mut f: Vec<String> = vec![String::new(); header.split(',').count()];
        for (column, value) in [("id", id), ("backend", "trtllm"), ("backend_version", "1.3.0"), ("model_path", "deepseek-ai/DeepSeek-R1"), ("system", "b200_sxm"), ("precision", "fp8"), ("mode", "agg"), ("isl", "1024"), ("osl", "128"), ("gemm_quant_mode", "fp8"), ("moe_quant_mode", moe), ("batch_size", "4"), ("tp_size", "8"), ("pp_size", "1"), ("moe_tp_size", "1"), ("moe_ep_size", "8"), ("silicon_ttft_ms", "100"), ("silicon_tpot_ms", "10")] {
            f[header.split(',').position(|c| c == column).unwrap()] = value.to_string();
        }
        f.join(",")
    };
    let csv = std::env::temp_dir().join(format!("wavecast-block-fp8-{}.csv", std::process::id()));
    std::fs::write(&csv, format!("{header}\n{}\n{}\n", row("labelled-fp8", "fp8"), row("labelled-fp8-block", "fp8_block"))).unwrap();
    let v = json(&["eval", "serving", "--data", csv.to_str().unwrap(), "--configs", &format!("{fixtures}/model_configs")]);
    std::fs::remove_file(&csv).ok();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{}", v["unpredicted"]);
    for k in ["predicted_ttft_ms", "predicted_tpot_ms"] {
        assert_eq!(rows[0][k], rows[1][k], "{k}");
    }
}

/// The same rule in every command, not only in the evaluation: `serve-sim` and the static
/// batch asked for per-tensor FP8 on DeepSeek-V3 (stored in block-scaled FP8) run its experts
/// block-scaled, the same answer as asking for that outright, and say so.
#[test]
fn every_command_runs_a_block_fp8_checkpoints_experts_block_scaled() {
    let sim = |extra: &[&str]| {
        let mut args = vec!["serve-sim", "--model", "deepseek-v3", "--gpu", "b200", "--layout", "tp8", "--concurrency", "4", "--requests", "8", "--input", "1024", "--output", "64", "--quant", "fp8"];
        args.extend(extra);
        json(&args)
    };
    let (asked, outright) = (sim(&[]), sim(&["--moe-quant", "fp8_block"]));
    assert_eq!(asked["formats"]["moe_quant"], "fp8_block");
    assert_eq!(asked["metrics"], outright["metrics"]);
    let batch = json(&["predict", "--mode", "serve", "--model", "deepseek-v3", "--gpu", "b200", "--tp", "8", "--weights", "fp8", "--batch", "4", "--input-len", "1024", "--output-len", "64"]);
    assert_eq!(batch["moe_quant"], "fp8_block");
    let compared = json(&["compare", "--model", "deepseek-v3", "--gpus", "b200", "--tp", "8", "--weights", "fp8", "--input-len", "1024", "--output-len", "64"]);
    assert_eq!(compared["moe_quant"], "fp8_block");
    // A dense model's FP8 weights name no experts.
    let dense = json(&["predict", "--mode", "serve", "--model", "llama-3-8b", "--gpu", "h100", "--weights", "fp8", "--batch", "4", "--input-len", "1024", "--output-len", "64"]);
    assert!(dense["moe_quant"].is_null(), "{}", dense["moe_quant"]);
}

/// A negative number is the value it looks like, refused with what it must be, not mistaken
/// for an unknown flag.
#[test]
fn a_negative_number_is_refused_for_what_it_is() {
    assert!(error(&["serve-sim", "--model", "llama-3-8b", "--gpu", "h100", "--rate", "-1"]).contains("request rate"));
    assert!(error(&["serve-sim", "--model", "llama-3-8b", "--gpu", "h100", "--concurrency", "4", "--slo-ttft", "-5"]).contains("TTFT target must be a positive number"));
}

/// Every point `plan serve` ranks names the unit it simulated as `serve-sim` flags, and those
/// flags give `serve-sim` the same latencies: one question, one answer. Its `pooled` flags are
/// the whole deployment.
#[test]
fn a_plan_point_is_what_serve_sim_gives_for_its_unit() {
    let plan = json(&["plan", "serve", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "2", "--concurrency", "4"]);
    let ranked = plan["ranked"].as_array().unwrap();
    assert!(ranked.iter().any(|p| p["copies"] == 2) && ranked.iter().any(|p| p["mode"] == "disagg"), "{plan}");
    for p in ranked {
        let users = p["unit_users"].to_string();
        let mut args = vec!["serve-sim", "--model", "llama-3.1-8b", "--gpu", "h100", "--concurrency", &users];
        args.extend(p["unit"].as_str().unwrap().split(' '));
        let sim = json(&args);
        for (point, metric) in [("ttft_ms", "ttft_ms"), ("tpot_ms", "tpot_ms")] {
            assert_eq!(p[point].as_f64(), sim["metrics"][metric]["mean"].as_f64(), "{}: {point}", p["layout"]);
        }
        assert_eq!(p["concurrency"].as_u64().unwrap(), p["unit_users"].as_u64().unwrap() * p["copies"].as_u64().unwrap());
        // The whole deployment behind one router runs as the flags `pooled` gives.
        let users = p["concurrency"].to_string();
        let mut args = vec!["serve-sim", "--model", "llama-3.1-8b", "--gpu", "h100", "--concurrency", &users];
        args.extend(p["pooled"].as_str().unwrap().split(' '));
        let pooled = json(&args);
        assert_eq!(pooled["layout"], p["layout"], "{args:?}");
        assert_eq!(pooled["gpus"], p["gpus_used"], "{args:?}");
    }
}

/// An FP8 KV cache is storage, which the attention kernel dequantizes: a GPU without FP8 units
/// (A100) or without BF16 ones (T4, in FP16) runs it, and the static batch and `serve-sim`
/// agree on it, as they refuse FP8 weights there alike.
#[test]
fn an_fp8_kv_cache_runs_where_fp8_math_does_not() {
    for (gpu, model, dtype) in [("a100", "llama-3.1-8b", "bf16"), ("t4", "llama-3.2-1b", "fp16")] {
        let sim = json(&["serve-sim", "--model", model, "--gpu", gpu, "--dtype", dtype, "--kv-dtype", "fp8", "--concurrency", "1"]);
        assert_eq!(sim["formats"]["kv"], "fp8", "{gpu}: {}", sim["formats"]);
        json(&["predict", "--mode", "serve", "--model", model, "--gpu", gpu, "--dtype", dtype, "--kv-dtype", "fp8", "--input", "1000", "--output", "10"]);
        assert!(error(&["serve-sim", "--model", model, "--gpu", gpu, "--dtype", dtype, "--quant", "fp8"]).contains("no fp8 units"), "{gpu}");
    }
}
