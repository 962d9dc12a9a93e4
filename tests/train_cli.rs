//! Multi-GPU training from the command line: `predict --mode train` with layout flags and
//! `plan train`, and nonsense layouts refused with one line and exit code 2.

use std::process::{Command, Output};

fn wavecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast"))
        .args(args)
        .output()
        .expect("run wavecast")
}

fn assert_clear_error(args: &[&str], needle: &str) {
    let o = wavecast(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

const TRAIN: [&str; 12] = [
    "predict",
    "--model",
    "gpt2-large",
    "--gpu",
    "h100",
    "--mode",
    "train",
    "--batch",
    "16",
    "--seq",
    "1024",
    "--json",
];

/// The `--json` answer of a command that must succeed.
fn answer(args: &[&str]) -> serde_json::Value {
    let o = wavecast(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

fn train(extra: &[&str]) -> serde_json::Value {
    answer(&[&TRAIN[..], extra].concat())
}

#[test]
fn a_layout_reports_its_step_collectives_and_memory() {
    let v = train(&[
        "--tp",
        "2",
        "--pp",
        "2",
        "--dp",
        "2",
        "--micro-batch",
        "2",
        "--recompute",
        "selective",
    ]);
    assert_eq!(v["gpus"], 8);
    assert_eq!(v["micro_batches"], 4);
    let step = v["step_ms"].as_f64().unwrap();
    assert!(step > 0.0 && step.is_finite());
    let axes: Vec<&str> = v["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["axis"].as_str().unwrap())
        .collect();
    for axis in ["tensor", "pipeline", "data"] {
        assert!(axes.contains(&axis), "{axes:?}");
    }
    assert!(
        v["memory_gb"]["total"].as_f64().unwrap() < v["memory_gb"]["capacity"].as_f64().unwrap()
    );
    // More micro-batches in the same pipeline shrink its bubble's share.
    let few = train(&["--pp", "4", "--micro-batch", "4"]);
    let many = train(&["--pp", "4", "--micro-batch", "1"]);
    let share = |v: &serde_json::Value| {
        v["parts"]["bubble_ms"].as_f64().unwrap() / v["step_ms"].as_f64().unwrap()
    };
    assert!(
        share(&many) < share(&few),
        "{} vs {}",
        share(&many),
        share(&few)
    );
}

#[test]
fn nonsense_layouts_get_one_line_and_exit_2() {
    // TRAIN without --seq and --json.
    let base = &TRAIN[..9];
    let with = |extra: &[&'static str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        a
    };
    assert_clear_error(
        &with(&["--tp", "3"]),
        "does not divide the model's 20 attention heads",
    );
    assert_clear_error(
        &with(&["--pp", "39"]),
        "need at least 37 layers (the embedding and the loss count as one each); the model has 36",
    );
    assert_clear_error(&with(&["--sequence-parallel"]), "it needs --tp 2 or more");
    // Four GPUs fill one node (part-used, as without --nodes), not two.
    assert_clear_error(
        &with(&["--dp", "4", "--nodes", "2"]),
        "= 4 GPUs but 16 are given",
    );
    assert_clear_error(&with(&["--dp", "3"]), "global batch 16 is not a multiple");
    assert_clear_error(
        &with(&["--tp", "4", "--gpus-per-node", "2"]),
        "exceeds the 2 GPUs of a node",
    );
    assert_clear_error(
        &with(&["--ep", "2", "--dp", "2"]),
        "needs a mixture-of-experts model",
    );
    assert_clear_error(&with(&["--zero", "5", "--dp", "2"]), "ZeRO stage 5");
    assert_clear_error(&with(&["--interleave", "2"]), "need pipeline parallelism");
    assert_clear_error(&with(&["--recompute", "some"]), "invalid value 'some'");
    assert_clear_error(
        &[
            "predict",
            "--model",
            "gpt2-large",
            "--gpu",
            "h100",
            "--dp",
            "2",
        ],
        "apply to --mode train",
    );
    assert_clear_error(
        &[
            "predict",
            "--model",
            "gpt2-large",
            "--gpu",
            "t4",
            "--mode",
            "train",
            "--dp",
            "2",
            "--batch",
            "2",
            "--dtype",
            "bf16",
        ],
        "bf16",
    );
    assert_clear_error(
        &with(&["--dp", "2", "--nodes", "0"]),
        "--nodes must be at least 1",
    );
}

/// What no layout changes (an encoder-decoder, a sequence past the learned positions) is
/// refused before the search in one line, with nothing on stdout: not "1812 layouts priced,
/// 0 fit" and the reason repeated per layout.
#[test]
fn plan_train_refuses_what_no_layout_changes_before_searching() {
    for (model, seq, needle) in [("switch-base-8", "512", "encoder-decoder"), ("gpt2-large", "4096", "learned positions")] {
        let args = ["plan", "train", "--model", model, "--gpu", "h100", "--gpus", "8", "--batch", "64", "--seq", seq];
        assert_clear_error(&args, needle);
        assert!(wavecast(&args).stdout.is_empty(), "{args:?} printed a table");
    }
}

/// Without `--seq`, `plan train` takes the sequence `predict` takes: 1024 tokens, or the
/// model's learned positions where fewer (BERT's 512), so a default call is not refused.
#[test]
fn plan_train_defaults_the_sequence_as_predict_does() {
    let plan = answer(&["plan", "train", "--model", "bert-base", "--gpu", "h100", "--gpus", "8", "--batch", "64", "--json"]);
    let step = answer(&["predict", "--mode", "train", "--model", "bert-base", "--gpu", "h100", "--batch", "8", "--json"]);
    assert_eq!(plan["seq"], 512, "{}", plan["seq"]);
    assert_eq!(step["seq"], plan["seq"]);
    assert_eq!(answer(&["plan", "train", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--batch", "64", "--json"])["seq"], 1024);
}

#[test]
fn plan_train_ranks_fitting_layouts_fastest_first() {
    let o = wavecast(&[
        "plan",
        "train",
        "--model",
        "gpt2-large",
        "--gpu",
        "a100-sxm-80gb",
        "--gpus",
        "8",
        "--batch",
        "32",
        "--top",
        "50",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty() && rows.len() <= 50);
    let steps: Vec<f64> = rows
        .iter()
        .map(|r| r["step_ms"].as_f64().unwrap())
        .collect();
    assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{steps:?}");
    for r in rows {
        let l = &r["report"]["layout"];
        let gpus = l["dp"].as_u64().unwrap()
            * l["tp"].as_u64().unwrap()
            * l["pp"].as_u64().unwrap()
            * l["cp"].as_u64().unwrap();
        assert_eq!(gpus, 8);
        // An H100's 80 GiB, in GB.
        assert!(r["memory_gb"].as_f64().unwrap() <= 80.0 * (1u64 << 30) as f64 / 1e9);
    }
    assert!(v["fitting"].as_u64().unwrap() <= v["evaluated"].as_u64().unwrap());
    // A model that fits nowhere is an error, not an empty table.
    assert_clear_error(
        &[
            "plan",
            "train",
            "--config",
            "bench/gpt3-175b.json",
            "--gpu",
            "t4",
            "--gpus",
            "2",
            "--batch",
            "2",
            "--dtype",
            "fp16",
        ],
        "no layout of 2 GPUs fits",
    );
}

/// One training route: a single-GPU step and the layout dp = tp = pp = 1 share their defaults
/// (format by the training rule, the whole batch in one micro-batch) and their answer.
/// A step's JSON never holds two times for one step: with recomputation the per-op detail
/// (which prices the plain step) is left out rather than shown beside a different step_ms.
#[test]
fn one_step_has_one_time_in_its_json() {
    for extra in [&[][..], &["--recompute", "full"][..], &["--recompute", "selective"][..]] {
        let mut args = vec!["predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "train", "--batch", "4", "--seq", "512", "--json"];
        args.extend(extra);
        let o = wavecast(&args);
        assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let step = v["step_ms"].as_f64().unwrap();
        if let Some(total) = v.get("total_ms").and_then(|t| t.as_f64()) {
            assert!((total / step - 1.0).abs() < 1e-9, "{extra:?}: per-op total {total} ms beside step {step} ms");
        } else {
            assert!(!extra.is_empty(), "the plain step carries its per-op detail");
        }
    }
}

#[test]
fn one_gpu_and_the_trivial_layout_answer_alike() {
    for (model, dtype) in [("gpt2-large", "fp32"), ("llama-3.2-1b", "bf16")] {
        let base = ["predict", "--model", model, "--gpu", "h100", "--mode", "train", "--batch", "4", "--seq", "512", "--json"];
        let single = wavecast(&base);
        assert!(single.status.success(), "{}", String::from_utf8_lossy(&single.stderr));
        assert!(String::from_utf8_lossy(&single.stderr).contains(&format!("training format {dtype}")), "{}", String::from_utf8_lossy(&single.stderr));
        let single: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
        let mut args = base.to_vec();
        args.extend(["--dp", "1"]);
        let o = wavecast(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let layout: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(single["dtype"], dtype, "{model}");
        assert_eq!(layout["dtype"], dtype, "{model}");
        assert_eq!(layout["micro_batches"], 1, "{model}: the whole batch in one micro-batch");
        // One JSON: the same keys (the layout report's and the per-op detail's), the same numbers.
        let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<std::collections::BTreeSet<_>>();
        assert_eq!(keys(&single), keys(&layout), "{model}");
        for key in ["step_ms", "parts", "classes", "phases", "memory_gb", "layout"] {
            assert!(single.get(key).is_some(), "{model}: no {key}");
        }
        let (a, b) = (single["step_ms"].as_f64().unwrap(), layout["step_ms"].as_f64().unwrap());
        assert!((a / b - 1.0).abs() < 1e-9, "{model}: single GPU {a} ms, layout dp1 {b} ms");
        let (p, s) = (single["total_ms"].as_f64().unwrap(), single["step_ms"].as_f64().unwrap());
        assert!((p / s - 1.0).abs() < 1e-9, "{model}: per-op total {p} ms, layout step {s} ms");
        assert_eq!(single, layout, "{model}");
        // The same memory, counted by one model (the single-GPU route once checked a floor of
        // its own that counted half the activations, and printed none).
        assert!(layout["memory_gb"]["total"].as_f64().unwrap() > 0.0, "{model}");
        assert_eq!(single["memory_gb"], layout["memory_gb"], "{model}");
    }
}

/// What the layout route does not model (a vision model, an encoder-decoder, eager attention)
/// trains op by op on one GPU, and layout flags that say one GPU ask the same question: the
/// same JSON, not a refusal ("not a transformer LLM") for `--dp 1`.
#[test]
fn one_gpu_flags_on_a_per_op_model_give_the_one_gpu_answer() {
    for extra in [&["--model", "resnet50"][..], &["--model", "switch-base-8", "--seq", "128"], &["--model", "llama-3.2-1b", "--seq", "128", "--attention", "eager"]] {
        let base = [&["predict", "--gpu", "h100", "--mode", "train", "--batch", "8", "--json"][..], extra].concat();
        let one = answer(&base);
        for flags in [&["--dp", "1"][..], &["--dp", "1", "--pp", "1", "--zero", "0"]] {
            assert_eq!(answer(&[&base[..], flags].concat()), one, "{extra:?} {flags:?}");
        }
    }
}

/// Llama 3 8B at batch 2 × 2048 on an H100 is refused with one answer either way: the single-GPU
/// route once said "at least 138.7 GB (activations 10.2 GB)" while the layout dp1 said 150.4 GB
/// (activations 20.4 GB, the count the measured H100/H200 steps confirm).
#[test]
fn one_gpu_and_the_trivial_layout_refuse_with_the_same_words() {
    let base = ["predict", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--mode", "train", "--batch", "2", "--seq", "2048"];
    let single = wavecast(&base);
    let mut args = base.to_vec();
    args.extend(["--dp", "1"]);
    let layout = wavecast(&args);
    assert_eq!(single.status.code(), Some(2));
    assert_eq!(layout.status.code(), Some(2));
    let (a, b) = (String::from_utf8_lossy(&single.stderr), String::from_utf8_lossy(&layout.stderr));
    assert!(a.contains("does not fit in memory") && a.contains("activations"), "{a}");
    assert_eq!(a.lines().filter(|l| l.contains("error")).collect::<Vec<_>>(), b.lines().filter(|l| l.contains("error")).collect::<Vec<_>>());
}

/// What the layout route's memory model refuses on one GPU the per-op route refuses too: Llama 3
/// 8B at batch 8 × 2048 needs ~220 GB on a B200 (180 GB) with its activations counted term by
/// term; batch 3 fits both ways with one answer (batch 4, 180.2 GB with the eager loss's
/// measured 12.94 bytes per token and vocabulary entry, just does not).
#[test]
fn one_gpu_refuses_what_the_trivial_layout_refuses() {
    let base = ["predict", "--model", "llama-3-8b", "--gpu", "b200", "--mode", "train", "--seq", "2048", "--dtype", "bf16", "--json"];
    for extra in [&[][..], &["--dp", "1"][..]] {
        let mut args = base.to_vec();
        args.extend(["--batch", "8"]);
        args.extend(extra);
        assert_clear_error(&args, "does not fit in memory");
    }
    let mut args = base.to_vec();
    args.extend(["--batch", "3"]);
    let single: serde_json::Value = serde_json::from_slice(&wavecast(&args).stdout).unwrap();
    args.extend(["--dp", "1"]);
    let layout: serde_json::Value = serde_json::from_slice(&wavecast(&args).stdout).unwrap();
    let (a, b) = (single["step_ms"].as_f64().unwrap(), layout["step_ms"].as_f64().unwrap());
    assert!((a / b - 1.0).abs() < 1e-9, "single GPU {a} ms, layout dp1 {b} ms");
    assert_eq!(single["memory_gb"], layout["memory_gb"]);
}

/// A config's `torch_dtype` is the training format on one GPU and with a layout alike, and the
/// run says which format it used (the single-GPU step once trained in FP32 whatever the config
/// said, and a layout flag switched the default).
#[test]
fn a_configs_torch_dtype_is_the_training_format_with_or_without_a_layout() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        r#"{"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 4,
            "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 32000, "torch_dtype": "float16"}"#,
    )
    .unwrap();
    let config = config.to_str().unwrap();
    for layout in [&[][..], &["--dp", "2"][..]] {
        let mut args = vec!["predict", "--config", config, "--gpu", "h100", "--mode", "train", "--batch", "4", "--seq", "512", "--json"];
        args.extend_from_slice(layout);
        let o = wavecast(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{layout:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["dtype"], "fp16", "{layout:?}");
        // One GPU says it on stderr beside the JSON, a layout in its report's dtype_source.
        let says = err.contains("training format fp16: the config's torch_dtype") || v["dtype_source"].as_str().is_some_and(|s| s.contains("fp16: the config's torch_dtype"));
        assert!(says, "{layout:?}: the run does not say its format and why: {err} / {}", v["dtype_source"]);
    }
}

/// Memory against the whole steps measured on our own H100 and H200
/// (`data/measurements/*/physics/train_step.csv`, the `amp_fp32_master` rows: FP32 weights and
/// Adam states, 16 bytes of states per parameter as wavecast counts them; plain PyTorch, no
/// recomputation, eager cross entropy): every measured step fits on its GPU, and the predicted
/// total lies within −20 … +25 % of the measured peak allocated plus the allocator's slack. `predict` counts the eager loss these
/// steps ran (12.94 bytes per token and vocabulary entry, measured); short sequences sit highest
/// (their peak is the optimizer step: PyTorch allocates gradients only as backward frees activations,
/// while wavecast counts both at once, as Megatron's persistent gradient buffers hold them). See
/// bench/results/steps.md.
#[test]
fn memory_against_the_single_gpu_steps_measured_on_h100_and_h200() {
    let dir = tempfile::tempdir().unwrap();
    let config = |model: &str, layers: &str| {
        // Llama 3 8B's published config, and the Llama-3.2-1B shape the collector builds.
        let (h, ffn, d, tied) = if model == "llama-8b" { (4096, 14336, 128, false) } else { (2048, 8192, 64, true) };
        let path = dir.path().join(format!("{model}-{layers}.json"));
        let json = format!(
            r#"{{"model_type": "llama", "hidden_size": {h}, "intermediate_size": {ffn}, "num_hidden_layers": {layers},
               "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": {d}, "vocab_size": 128256,
               "max_position_embeddings": 131072, "hidden_act": "silu", "tie_word_embeddings": {tied}, "torch_dtype": "bfloat16"}}"#
        );
        std::fs::write(&path, json).unwrap();
        path
    };
    let mut checked = 0;
    for (folder, gpu) in [("h100", "h100-sxm"), ("h200", "h200")] {
        let text = std::fs::read_to_string(format!("data/measurements/{folder}/physics/train_step.csv")).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |cells: &[&str], name: &str| cells[header.iter().position(|h| *h == name).unwrap()].to_string();
        for line in lines {
            let cells: Vec<&str> = line.split(',').collect();
            if col(&cells, "recipe") != "amp_fp32_master" || col(&cells, "peak_alloc_gib").is_empty() {
                continue;
            }
            let (model, layers, seq, mb) = (col(&cells, "model"), col(&cells, "layers"), col(&cells, "seq"), col(&cells, "micro_batch"));
            let measured = col(&cells, "peak_alloc_gib").parse::<f64>().unwrap() * (1u64 << 30) as f64 / 1e9;
            let path = config(&model, &layers);
            let o = wavecast(&["predict", "--config", path.to_str().unwrap(), "--gpu", gpu, "--mode", "train", "--batch", &mb, "--seq", &seq, "--json"]);
            assert!(o.status.success(), "{gpu} {model} {layers} layers {seq}×{mb} ran, but: {}", String::from_utf8_lossy(&o.stderr));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let predicted = v["memory_gb"]["total"].as_f64().unwrap();
            // What the allocator holds at that peak, by wavecast's rule.
            let held = measured * (1.0 + wavecast_workload::train::ALLOCATOR_SLACK);
            let error = predicted / held - 1.0;
            // Short sequences sit high (their peak is the optimizer step, where PyTorch has freed
            // the activations wavecast still adds to the gradients): up to a quarter above.
            assert!((-0.20..=0.25).contains(&error), "{gpu} {model} {layers} layers {seq}×{mb}: {predicted:.1} GB predicted, {measured:.1} GB measured");
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} measured steps");
}

/// Plain PyTorch's Adam runs its default foreach passes, which move each parameter's FP32
/// tensors 18 times (measured on an H100: 32.6 ms for Llama-3.2-1B's 1.24 B parameters);
/// `--fused-optimizer` prices one fused kernel, 7 times. The bytes say so, the time follows
/// and stays above the bandwidth bound, and one GPU and the layout dp1 answer alike either way.
#[test]
fn the_optimizer_runs_as_pytorchs_foreach_passes_unless_fused() {
    let base = ["predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "train", "--batch", "1", "--seq", "512", "--json"];
    let optimizer = |extra: &[&str]| {
        let v = answer(&[&base[..], extra].concat());
        let class = v["classes"].as_array().unwrap().iter().find(|c| c["class"] == "optimizer").unwrap().clone();
        (class["ms"].as_f64().unwrap(), class["bytes"].as_f64().unwrap(), v["params"].as_f64().unwrap(), v["parts"]["optimizer_ms"].as_f64().unwrap())
    };
    let (foreach_ms, foreach_bytes, params, foreach_step) = optimizer(&[]);
    let (fused_ms, fused_bytes, _, fused_step) = optimizer(&["--fused-optimizer"]);
    assert_eq!(foreach_bytes, 18.0 * 4.0 * params);
    assert_eq!(fused_bytes, 7.0 * 4.0 * params);
    assert!(foreach_ms > 2.0 * fused_ms, "foreach {foreach_ms} ms, fused {fused_ms} ms");
    // An H100 SXM moves at most 3.35 TB/s.
    assert!(foreach_ms >= foreach_bytes / 3.35e12 * 1e3, "{foreach_ms} ms");
    assert!(foreach_step > fused_step);
    let (_, _, _, layout_step) = optimizer(&["--fused-optimizer", "--dp", "1"]);
    assert_eq!(layout_step, fused_step);
}

/// `--stack` names the training software: Megatron-Core keeps only the fused-kernel count and a
/// vocabulary-parallel loss's buffers and runs a fused Adam, so the same step needs less memory
/// and less time than plain PyTorch; one GPU and the layout dp1 answer alike under it; the JSON
/// says which stack was priced; `plan train` takes it; outside train mode it is refused.
#[test]
fn the_stack_decides_what_the_step_keeps_and_how_its_optimizer_runs() {
    let base = ["predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "train", "--batch", "4", "--seq", "2048", "--json"];
    let step = |extra: &[&str]| answer(&[&base[..], extra].concat());
    let pytorch = step(&[]);
    let megatron = step(&["--stack", "megatron"]);
    assert_eq!(pytorch["stack"]["optimizer"], "foreach");
    assert_eq!(pytorch["stack"]["eager_autograd"], true);
    assert_eq!(megatron["stack"]["loss"], "vocab_parallel");
    assert_eq!(megatron["stack"]["optimizer"], "fused");
    let gb = |v: &serde_json::Value| v["memory_gb"]["activations"].as_f64().unwrap();
    assert!(gb(&megatron) < gb(&pytorch) - 1.0, "{} vs {} GB", gb(&megatron), gb(&pytorch));
    assert!(megatron["parts"]["optimizer_ms"].as_f64().unwrap() < pytorch["parts"]["optimizer_ms"].as_f64().unwrap());
    assert_eq!(megatron, step(&["--stack", "megatron", "--dp", "1"]));
    assert_eq!(step(&["--stack", "pytorch", "--fused-optimizer"])["stack"]["optimizer"], "fused");
    let plan = answer(&["plan", "train", "--model", "gpt2-large", "--gpu", "h100", "--gpus", "8", "--batch", "16", "--seq", "1024", "--stack", "compiled", "--top", "2", "--json"]);
    assert_eq!(plan["rows"][0]["report"]["stack"]["loss"], "fused");
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "h100", "--stack", "megatron"], "--stack applies to --mode train only");
}

/// Set-ups run to the edge of an H100's memory with Hugging Face's eager models
/// (`bench/data/h100_device/memory.json`, our own measurement: PyTorch's peak allocated, or
/// out of memory): what ran is said to fit, what ran out of memory is refused. GPT-2 large in
/// FP32 (eager and SDPA attention) and Llama-3.2-1B under autocast each ran at one batch and
/// failed at the next, so the count (eager autograd's tensors, the allocator's cache, the
/// GPU's binary capacity) has to land between the two.
#[test]
fn memory_agrees_with_what_ran_and_what_ran_out_of_memory_on_an_h100() {
    let text = std::fs::read_to_string("bench/data/h100_device/memory.json").unwrap();
    let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let (mut ran, mut failed) = (0, 0);
    for case in &cases {
        let mut args = vec!["predict", "--gpu", "h100-sxm", "--json"];
        args.extend(case["wavecast_args"].as_str().unwrap().split_whitespace());
        let o = wavecast(&args);
        let name = case["name"].as_str().unwrap();
        if case["ran"].as_bool().unwrap() {
            assert!(o.status.success(), "{name} ran, but: {}", String::from_utf8_lossy(&o.stderr));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let predicted = v["memory_gb"]["total"].as_f64().unwrap();
            let measured = case["peak_allocated_gb"].as_f64().unwrap();
            // Never below what the step allocated; no more than a fifth above it.
            assert!((1.0..=1.2).contains(&(predicted / measured)), "{name}: {predicted:.1} GB predicted, {measured:.1} GB measured");
            ran += 1;
        } else {
            assert_eq!(o.status.code(), Some(2), "{name} ran out of memory, but wavecast says it fits");
            assert!(String::from_utf8_lossy(&o.stderr).contains("does not fit in memory"), "{name}");
            failed += 1;
        }
    }
    assert!(ran >= 3 && failed >= 8, "{ran} ran, {failed} out of memory");
}

/// `--power-limit`: a step on H100s held to 500 W is slower than at the 700 W board power, but by
/// no more than the clock's (700/500)^(1/3) = 1.119 (memory-bound kernels keep their speed); the
/// single-GPU route and the layout route slow alike; a limit outside the board's range is one line
/// and exit 2.
#[test]
fn a_power_limit_slows_the_step_by_at_most_the_clock() {
    let base = ["predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "train", "--batch", "4", "--seq", "2048", "--json"];
    let step = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend(extra);
        let o = wavecast(&args);
        assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["step_ms"].as_f64().unwrap(), v["total_ms"].as_f64(), v["power_limit_w"].as_f64())
    };
    let (full, _, no_limit) = step(&[]);
    let (capped, per_op, limit) = step(&["--power-limit", "500"]);
    assert_eq!((no_limit, limit), (None, Some(500.0)), "the JSON names the limit it was priced under");
    let ratio = capped / full;
    assert!(ratio > 1.03 && ratio <= 1.1187 + 1e-6, "500 W over 700 W: {ratio}");
    assert!((per_op.unwrap() / capped - 1.0).abs() < 1e-9, "per-op total {per_op:?} beside step {capped}");
    let (layout, _, limit) = step(&["--power-limit", "500", "--dp", "1"]);
    assert!((layout / capped - 1.0).abs() < 1e-9, "layout dp1 {layout} ms, single GPU {capped} ms");
    assert_eq!(limit, Some(500.0));
    assert_eq!(step(&["--power-limit", "700"]).0, full, "at the board power nothing changes");
    // Both routes say what the limit does, on stderr.
    for extra in [&[][..], &["--dp", "2"][..]] {
        let mut args = base[..base.len() - 1].to_vec();
        args.extend(["--power-limit", "500"]);
        args.extend(extra);
        let o = wavecast(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && err.contains("power limit 500 W of h100-sxm's 700 W board power: compute-bound kernels at 89.4 % of the clock"), "{extra:?}: {err}");
    }
    let mut args = base.to_vec();
    args.extend(["--power-limit", "900"]);
    assert_clear_error(&args, "outside h100-sxm's range 175–700 W");
    args.extend(["--dp", "2"]);
    assert_clear_error(&args, "outside h100-sxm's range 175–700 W");
    assert_clear_error(&["predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "serve", "--input-len", "128", "--output-len", "8", "--power-limit", "500"], "--power-limit applies to");
    // plan train ranks under the limit too: the fastest layout is slower, by no more than the clock.
    let plan = ["plan", "train", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8", "--batch", "16", "--seq", "2048", "--json"];
    let best = |extra: &[&str]| {
        let mut args = plan.to_vec();
        args.extend(extra);
        let o = wavecast(&args);
        assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["rows"][0]["step_ms"].as_f64().unwrap()
    };
    let ratio = best(&["--power-limit", "500"]) / best(&[]);
    assert!(ratio > 1.0 && ratio <= 1.1187 + 1e-6, "plan train at 500 W: {ratio}");
    let mut args = plan.to_vec();
    args.extend(["--power-limit", "100"]);
    assert_clear_error(&args, "outside h100-sxm's range 175–700 W");
    // A quarter of MI250's 250 W is 62.5 W: the range shown holds the limit it refuses.
    assert_clear_error(&["predict", "--model", "gpt2", "--gpu", "mi250", "--power-limit", "62"], "outside mi250's range 62.5–250 W");
}

/// `eval training` replays a row from a source it has no stack for as `predict --mode train`
/// prices the same layout: one default stack for both.
#[test]
fn eval_training_and_predict_agree_on_a_row_of_an_unknown_source() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = r#"{"model_type":"gpt2","n_embd":1024,"n_layer":4,"n_head":16,"vocab_size":50304,"n_positions":8192,"torch_dtype":"bfloat16"}"#;
    std::fs::write(dir.path().join("c.json"), cfg).unwrap();
    let csv = "source_id,model,hf_like_config,num_params_b,gpu,num_gpus,gpus_per_node,precision,seq_len,global_batch_seqs,micro_batch,tp,pp,cp,vp,ep,dp,fsdp_or_zero,recompute,measured_tokens_per_s_per_gpu,measured_tflops_per_gpu,measured_mfu,notes\n\
               somebody_else,m,c.json,0.1,h100-sxm,16,8,bf16,8192,32,2,1,1,1,,,16,fsdp,full,1000,,,FSDP full shard\n";
    let data = dir.path().join("runs.csv");
    std::fs::write(&data, csv).unwrap();
    let o = wavecast(&["eval", "training", "--data", data.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let eval: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let replayed = eval["rows"][0]["predicted_tokens_per_s_per_gpu"].as_f64().expect("one replayed row");
    let config = dir.path().join("c.json");
    let o = wavecast(&[
        "predict", "--config", config.to_str().unwrap(), "--gpu", "h100-sxm", "--mode", "train", "--batch", "32", "--seq", "8192",
        "--dp", "16", "--zero", "3", "--micro-batch", "2", "--recompute", "full", "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cli: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let predicted = cli["tokens_per_s_per_gpu"].as_f64().unwrap();
    assert!((replayed / predicted - 1.0).abs() < 1e-9, "eval {replayed} vs predict {predicted}");
    // The same row with no measurement: nothing is replayed, so there is no error to report
    // (not "0 runs, mean APE 0.0 %").
    std::fs::write(&data, csv.replace(",1000,,,FSDP", ",,,,FSDP")).unwrap();
    assert_clear_error(&["eval", "training", "--data", data.to_str().unwrap()], "no run of");
}

/// A fused attention kernel keeps no score matrix for backward, so choosing it shrinks the
/// activations the step reports; forcing eager attention on a model that defaults to fused
/// grows them. Measured on an H100 (bench/results/h100_device.md): gpt2-large, FP32, 4 × 1024,
/// peaked at 60.7 GB eager and 35.0 GB with PyTorch's SDPA kernel.
#[test]
fn the_attention_kernel_decides_whether_the_scores_are_kept() {
    let activations = |model: &str, seq: &str, attention: &str| {
        let args = ["predict", "--model", model, "--gpu", "h100", "--mode", "train", "--batch", "4", "--seq", seq, "--attention", attention, "--json"];
        let o = wavecast(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["memory_gb"]["activations"].as_f64().unwrap()
    };
    let (eager, fused) = (activations("gpt2-large", "1024", "eager"), activations("gpt2-large", "1024", "fused"));
    // The FP32 scores, probabilities and dropout mask of 20 heads over 1024² positions in 36
    // layers: 4 · 20 · 1024² · (4 + 4 + 1) bytes · 36 = 27.2 GB, less the second copy of the
    // attention output that SDPA's backward keeps (4 · 1024 · 1280 · 4 bytes · 36 = 0.75 GB).
    assert!((eager - fused - (27.2 - 0.75)).abs() < 0.5, "eager {eager} GB, fused {fused} GB");
    assert!(activations("llama-3.2-1b", "2048", "eager") > activations("llama-3.2-1b", "2048", "fused") + 10.0);
}

/// An encoder-decoder trains on one GPU op by op (the layout route models decoder stacks only),
/// in text and in `--json` alike; flags that say one GPU (`--dp 1 --zero 0`) give that same
/// answer, and a layout of more GPUs is refused in one line.
#[test]
fn an_encoder_decoder_trains_on_one_gpu() {
    let args = ["predict", "--model", "switch-base-8", "--gpu", "h100", "--mode", "train", "--batch", "8", "--json"];
    let o = wavecast(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["total_ms"].as_f64().is_some_and(|t| t > 0.0), "{v}");
    assert!(wavecast(&args[..9]).status.success());
    assert_eq!(answer(&[&args[..], &["--dp", "1", "--zero", "0", "--micro-batch", "8"]].concat()), v);
    assert_clear_error(&["predict", "--model", "switch-base-8", "--gpu", "h100", "--mode", "train", "--batch", "8", "--dp", "2"], "encoder-decoder");
    assert_clear_error(&["predict", "--model", "switch-base-8", "--gpu", "h100", "--mode", "train", "--batch", "8", "--dp", "1", "--micro-batch", "4"], "encoder-decoder");
}

/// A sequence beyond a model's context is priced but said, in `--json` as on stderr, on the
/// per-op route and on the layout route alike: llama-3-8b's and llama-3-70b's context is 8192.
#[test]
fn a_sequence_beyond_the_context_is_noted_on_every_route() {
    let per_op = ["predict", "--model", "llama-3-8b", "--gpu", "h100", "--seq", "16384", "--json"];
    let layout = ["predict", "--model", "llama-3-70b", "--gpu", "h100", "--mode", "train", "--batch", "8", "--seq", "16384", "--tp", "8", "--cp", "2", "--dp", "4", "--zero", "3", "--recompute", "full", "--json"];
    for args in [&per_op[..], &layout[..]] {
        let o = wavecast(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["notes"][0].as_str().is_some_and(|n| n.contains("16384 tokens are beyond")), "{args:?}: {}", v["notes"]);
        assert!(err.contains("16384 tokens are beyond"), "{args:?}: {err}");
    }
}
