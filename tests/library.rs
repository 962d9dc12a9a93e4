//! The `wavecast` library as another Rust program uses it: the step-by-step flow and the
//! one-call requests give the same numbers as the CLI's `--json`, and bad input is an `Error`
//! with one line.

use std::process::Command;
use wavecast::{estimate, CompareRequest, ConfigArg, DType, Gpu, LoadOptions, Mode, ModeChoice, PredictRequest, Predictors, Source, Workload};

fn cli_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).arg("--json").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn step_by_step_flow_equals_the_one_call_request_and_the_cli() {
    let workload = Workload::load(Source::Preset("gpt2"), &LoadOptions::new(4, 512, Mode::Training)).unwrap();
    let gpu = Gpu::find("NVIDIA A100-SXM4-80GB").unwrap();
    let predictor = Predictors::get(Predictors::DEFAULT).unwrap();
    let step = estimate(&workload, &gpu, predictor.as_ref()).unwrap();

    let mut req = PredictRequest::new("gpt2", "a100-sxm-80gb");
    req.batch = 4;
    req.seq = Some(512);
    req.mode = ModeChoice::Train;
    let one_call = wavecast::predict(&req).unwrap();
    assert_eq!(serde_json::to_value(&step).unwrap(), serde_json::to_value(&one_call).unwrap());

    // The CLI answers a transformer's training step on the one training route: the layout
    // report with the per-op detail beside it (`train_step`), whose per-op numbers are these.
    let cli = cli_json(&["predict", "--model", "gpt2", "--gpu", "a100-sxm-80gb", "--batch", "4", "--seq", "512", "--mode", "train"]);
    assert_eq!(serde_json::to_value(wavecast::train_step(&req).unwrap()).unwrap(), cli);
    let one_call = serde_json::to_value(&one_call).unwrap();
    for key in ["total_ms", "interval_ms", "phases", "classes", "provenance", "flops", "bytes", "memory_gb", "params"] {
        assert_eq!(one_call[key], cli[key], "{key}");
    }
    assert!(step.total_ms > 0.0 && step.phases.backward.is_some());
}

#[test]
fn requests_deserialize_with_the_cli_defaults_and_an_inline_config() {
    let req: PredictRequest = serde_json::from_str(
        r#"{"config": {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 4,
            "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 32000}, "gpu": "h100"}"#,
    )
    .unwrap();
    assert_eq!((req.batch, req.seq(), req.mode, req.predictor()), (1, 1024, ModeChoice::Inference, "wavecast"));
    let p = wavecast::predict(&req).unwrap();
    assert_eq!(p.mode, "inference");
    assert!(p.params > 100_000_000 && p.total_ms > 0.0, "{} params, {} ms", p.params, p.total_ms);
    assert!(serde_json::from_str::<PredictRequest>(r#"{"gpu": "h100", "bogus": 1}"#).is_err(), "unknown fields are rejected");
    let in_layout = serde_json::from_str::<PredictRequest>(r#"{"gpu": "h100", "layout": {"dp": 2, "bogus": 1}}"#).unwrap_err().to_string();
    assert!(in_layout.contains("unknown field `bogus`"), "unknown fields of the layout group are rejected: {in_layout}");
}

#[test]
fn a_choice_is_read_once_from_its_name_or_alias_and_a_bad_one_is_one_line() {
    let mode = |m: &str| serde_json::from_value::<PredictRequest>(serde_json::json!({"gpu": "h100", "mode": m})).map(|r| r.mode);
    assert_eq!(mode("infer").unwrap(), ModeChoice::Inference, "Python's spelling");
    assert_eq!(mode("training").unwrap(), ModeChoice::Train);
    assert_eq!(mode("Train").unwrap(), ModeChoice::Train, "JSON forgives case as the string parser did");
    let e = mode("sideways").unwrap_err().to_string();
    assert!(e.starts_with("unknown mode 'sideways' (inference, train or serve)"), "{e}");
    let recompute = serde_json::from_value::<PredictRequest>(serde_json::json!({"gpu": "h100", "mode": "train", "layout": {"recompute": "sometimes"}})).unwrap_err().to_string();
    assert!(recompute.starts_with("unknown recomputation 'sometimes' (none, selective, full, selective-op or selective-layer)"), "{recompute}");
    // Serialized back, a choice is its command-line name.
    let req: PredictRequest = serde_json::from_value(serde_json::json!({"gpu": "h100", "mode": "inf", "optimizer": "sgd-momentum"})).unwrap();
    let back = serde_json::to_value(&req).unwrap();
    assert_eq!((back["mode"].as_str(), back["optimizer"].as_str()), (Some("inference"), Some("sgd-momentum")));
}

#[test]
fn serve_request_matches_the_cli() {
    let req: PredictRequest = serde_json::from_str(r#"{"model": "llama-3.2-1b", "gpu": "l4", "mode": "serve", "batch": 2, "input_len": 256, "output_len": 16}"#).unwrap();
    let r = wavecast::serve(&req).unwrap();
    let cli = cli_json(&["predict", "--model", "llama-3.2-1b", "--gpu", "l4", "--mode", "serve", "--batch", "2", "--input-len", "256", "--output-len", "16"]);
    assert_eq!(serde_json::to_value(&r).unwrap(), cli);
}

#[test]
fn bad_input_is_one_line_naming_the_problem() {
    let cases: Vec<(PredictRequest, &str)> = vec![
        (PredictRequest::new("gpt2", "no-such-gpu"), "no-such-gpu"),
        (PredictRequest::new("no-such-model", "h100"), "no-such-model"),
        (PredictRequest { predictor: Some("oracle".into()), ..PredictRequest::new("gpt2", "h100") }, "oracle"),
        (PredictRequest { dtype: Some("fp7".into()), ..PredictRequest::new("gpt2", "h100") }, "fp7"),
        (PredictRequest { mode: ModeChoice::Serve, ..PredictRequest::new("gpt2", "h100") }, "serving is its own request"),
        (PredictRequest { input_len: Some(8), ..PredictRequest::new("gpt2", "h100") }, "apply to --mode serve only"),
        (PredictRequest { batch: 0, ..PredictRequest::new("gpt2", "h100") }, "batch"),
        (PredictRequest { config: Some(ConfigArg::Path("gpt2.json".into())), ..PredictRequest::new("gpt2", "h100") }, "not several"),
        (PredictRequest { model: None, ..PredictRequest::new("gpt2", "h100") }, "no workload"),
        (PredictRequest { dtype: Some("bf16".into()), ..PredictRequest::new("gpt2", "t4") }, "no bf16 units; it runs fp32, fp16"),
        (PredictRequest { dtype: Some("fp8".into()), ..PredictRequest::new("gpt2", "a100") }, "no fp8 units"),
        // A transformer's training step is refused in the layout route's words (one memory model).
        (PredictRequest { mode: ModeChoice::Train, ..PredictRequest::new("llama-3.1-70b", "l4") }, "does not fit in memory: dp1·tp1·pp1"),
        (PredictRequest { dtype: Some("bf16".into()), ..PredictRequest::new("llama-3.1-70b", "l4") }, "workspaces not counted"),
        // GPT-2 XL trains in 80 GB only with a small batch: at 64 × 1024 tokens its activations
        // alone pass 80 GB.
        (PredictRequest { mode: ModeChoice::Train, batch: 64, seq: Some(1024), ..PredictRequest::new("gpt2-xl", "h100") }, "recompute activations"),
        // A CNN keeps every convolution's input for its weight gradient: ResNet-50 at 4,096
        // images needs about 175 GB of them, and one 2,048-pixel layer of 100,000 images far more.
        (PredictRequest { mode: ModeChoice::Train, batch: 4096, ..PredictRequest::new("resnet50", "t4") }, "activations saved for backward 174"),
        (PredictRequest { batch: 100_000, image_size: Some(2048), ..PredictRequest::new("resnet50", "p4") }, "the largest layer's input and output"),
    ];
    for (req, needle) in cases {
        let e = wavecast::predict(&req).unwrap_err().to_string();
        assert!(e.contains(needle), "expected '{needle}' in: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// A BF16 model on a part without BF16 units (T4, V100) runs in FP16 by default, as PyTorch
/// and the engines run it there, on the one-GPU route and the layout route alike; asked for
/// BF16 it is refused.
#[test]
fn a_bf16_default_runs_in_fp16_where_the_gpu_has_no_bf16() {
    let one = wavecast::predict(&PredictRequest::new("llama-3.2-1b", "t4")).unwrap();
    assert_eq!(one.dtype, wavecast_ir::DType::Fp16);
    let train = PredictRequest { mode: ModeChoice::Train, batch: 2, seq: Some(256), ..PredictRequest::new("llama-3.2-1b", "v100") };
    let mut layout = train.clone();
    layout.layout.dp = Some(1);
    let step = wavecast::train(&layout).unwrap();
    assert_eq!(step.dtype, wavecast_ir::DType::Fp16);
    assert!(step.dtype_source.contains("no units for"), "{}", step.dtype_source);
    assert_eq!(wavecast::predict(&train).unwrap().dtype, wavecast_ir::DType::Fp16);
    assert!(wavecast::predict(&PredictRequest { dtype: Some("bf16".into()), ..train }).unwrap_err().to_string().contains("no bf16 units"));
}

/// On a part with no 16-bit units at all (P4) a BF16 model runs in FP32 by default, as PyTorch
/// runs it there, saying why; the default is not a refusal.
#[test]
fn a_sixteen_bit_default_runs_in_fp32_where_the_gpu_has_no_sixteen_bit_units() {
    let one = wavecast::predict(&PredictRequest { seq: Some(256), ..PredictRequest::new("llama-3.2-1b", "p4") }).unwrap();
    assert_eq!(one.dtype, wavecast_ir::DType::Fp32);
    let layout = PredictRequest { mode: ModeChoice::Train, batch: 8, seq: Some(256), layout: wavecast::LayoutArgs { dp: Some(8), zero: Some(3), ..Default::default() }, ..PredictRequest::new("llama-3.2-1b", "p4") };
    let step = wavecast::train(&layout).unwrap();
    assert_eq!(step.dtype, wavecast_ir::DType::Fp32);
    assert!(step.dtype_source.contains("no bf16 units"), "{}", step.dtype_source);
}

/// FP8 runs a CNN's linear layers only: its convolutions are priced in BF16, with a note.
#[test]
fn fp8_leaves_convolutions_in_bf16() {
    let train = |dtype: &str| wavecast::predict(&PredictRequest { mode: ModeChoice::Train, batch: 64, dtype: Some(dtype.into()), ..PredictRequest::new("resnet50", "h100") }).unwrap();
    let (fp8, bf16) = (train("fp8"), train("bf16"));
    let conv_ms = |p: &wavecast::Prediction| p.classes.iter().filter(|c| c.class.to_string() == "conv").map(|c| c.ms).sum::<f64>();
    assert!(conv_ms(&bf16) > 0.0 && (conv_ms(&fp8) - conv_ms(&bf16)).abs() < 1e-9 * conv_ms(&bf16));
    assert!(fp8.notes.iter().any(|n| n.contains("convolutions run in bf16")), "{:?}", fp8.notes);
}

/// `--attention auto` is the default: giving it changes neither route's answer.
#[test]
fn attention_auto_given_is_the_default() {
    let args = ["predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "train", "--batch", "2", "--seq", "512"];
    let auto: Vec<&str> = args.iter().copied().chain(["--attention", "auto"]).collect();
    assert_eq!(cli_json(&args), cli_json(&auto));
    let dp1: Vec<&str> = auto.iter().copied().chain(["--dp", "1"]).collect();
    assert_eq!(cli_json(&dp1)["step_ms"], cli_json(&args)["step_ms"]);
}

#[test]
fn every_learned_predictor_gives_an_interval_around_its_time() {
    for name in ["wavecast", "li", "neusight", "pm2lat"] {
        let p = wavecast::predict(&PredictRequest { predictor: Some(name.into()), ..PredictRequest::new("gpt2", "t4") }).unwrap();
        let [lo, hi] = p.interval_ms;
        assert!(lo < p.total_ms && p.total_ms < hi, "{name}: [{lo}, {hi}] around {}", p.total_ms);
    }
}

#[test]
fn compare_skips_gpus_without_units_for_the_dtype() {
    let req: CompareRequest = serde_json::from_str(r#"{"model": "llama-3.2-1b", "gpus": ["h100", "t4"], "input_len": 128, "output_len": 8, "dtype": "bf16"}"#).unwrap();
    let r = wavecast::compare(&req).unwrap();
    assert!(!r.results.is_empty() && r.results.iter().all(|row| row.gpu == "h100-sxm"), "only the H100 runs bf16");
    assert!(r.skipped.iter().any(|s| s.gpu == "t4" && s.reason.contains("no bf16 units")), "{:?}", r.skipped);
}

/// Left to its default, the activations' type is the GPU's: a T4 runs a bf16 checkpoint in
/// fp16, as the engines' auto does, with a note, and the same as asking for fp16.
#[test]
fn a_gpu_without_bf16_units_serves_in_fp16_by_default() {
    let req: CompareRequest = serde_json::from_str(r#"{"model": "llama-3.2-1b", "gpus": ["h100", "t4"], "input_len": 128, "output_len": 8}"#).unwrap();
    let r = wavecast::compare(&req).unwrap();
    let t4 = r.results.iter().find(|row| row.gpu == "t4").expect("the T4 serves");
    let h100 = r.results.iter().find(|row| row.gpu == "h100-sxm").expect("the H100 serves");
    assert_eq!((t4.dtype, h100.dtype), (DType::Fp16, DType::Bf16));
    assert!(t4.notes.iter().any(|n| n.contains("t4 has no bf16 units")) && h100.notes.is_empty(), "{:?}", t4.notes);
    assert!(r.notes.len() == 1 && r.dtype == DType::Bf16, "the GPUs differ: the report keeps bf16 and notes the T4");
    let fp16 = CompareRequest { dtype: "fp16".into(), gpus: vec!["t4".into()], ..req.clone() };
    let asked = wavecast::compare(&fp16).unwrap();
    assert_eq!(asked.results[0].total_ms, t4.total_ms);
    assert!(asked.results[0].notes.is_empty(), "a type asked for needs no note");
    let sim = |gpu: &str| serde_json::from_str::<wavecast::ServeSimRequest>(&format!(r#"{{"model": "llama-3.2-1b", "gpu": "{gpu}", "input": "128", "output": "8", "requests": 4}}"#)).unwrap();
    let t4_sim = wavecast::serve_sim(&sim("t4")).unwrap();
    assert_eq!(t4_sim.formats.dtype, DType::Fp16);
    assert_eq!(t4_sim.notes, t4.notes);
    assert!(wavecast::serve_sim(&sim("h100")).unwrap().notes.is_empty());
}

#[test]
fn listings_name_every_gpu_model_and_predictor() {
    assert!(wavecast::gpus(None).unwrap().iter().any(|g| g.id == "h100-sxm"));
    let models = wavecast::models().unwrap();
    assert!(models.iter().any(|m| m.name == "resnet50") && models.iter().any(|m| m.name == "llama-3-8b"));
    let names: Vec<&str> = Predictors::list().into_iter().map(|(n, _)| n).collect();
    assert!(names.contains(&Predictors::DEFAULT) && names.contains(&"roofline"), "{names:?}");
}

/// Twelve GPUs fill two nodes of eight whether `--nodes 2` is said or not; three nodes are
/// refused.
#[test]
fn a_layout_fills_the_nodes_it_needs_said_or_not() {
    let mut req = PredictRequest { mode: ModeChoice::Train, batch: 12, seq: Some(256), ..PredictRequest::new("llama-3.2-1b", "h100") };
    req.layout.dp = Some(12);
    let implicit = wavecast::train(&req).unwrap();
    req.layout.nodes = Some(2);
    let explicit = wavecast::train(&req).unwrap();
    assert_eq!((implicit.nodes, implicit.step_ms), (explicit.nodes, explicit.step_ms));
    req.layout.nodes = Some(3);
    assert!(wavecast::train(&req).unwrap_err().to_string().contains("12 GPUs but 24"));
}
