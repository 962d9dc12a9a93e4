//! One vocabulary: the same option answers to the same name in every command (with the names
//! vLLM and SGLang users type as aliases), old names keep working, and a typo gets the closest
//! name. Each check compares the output of two spellings, so it fails if an alias is dropped or
//! starts to mean something else.

use std::process::{Command, Output};

fn wavecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).output().expect("run wavecast")
}

fn stdout(args: &[&str]) -> String {
    let o = wavecast(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `base` with `a` appended, and with `b` appended, print the same bytes.
fn same_output(base: &[&str], a: &[&str], b: &[&str]) {
    let with = |extra: &[&str]| stdout(&[base, extra].concat());
    assert_eq!(with(a), with(b), "{base:?}: {a:?} and {b:?} differ");
}

#[test]
fn mode_infer_is_inference_as_in_python() {
    let base = ["predict", "--model", "gpt2", "--gpu", "h100", "--json"];
    same_output(&base, &["--mode", "infer"], &["--mode", "inference"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&[&base[..], &["--mode", "infer"]].concat())).unwrap();
    assert_eq!(v["mode"], "inference");
}

#[test]
fn serving_lengths_and_weights_have_one_name_in_every_command() {
    let serve = ["predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "serve", "--batch", "4", "--json"];
    same_output(&serve, &["--input-len", "512", "--output-len", "32", "--weights", "fp8"], &["--input", "512", "--output", "32", "--quant", "fp8"]);
    same_output(&serve, &["--input-len", "512", "--output-len", "32", "--tp", "2"], &["--input-len", "512", "--output-len", "32", "--tensor-parallel-size", "2"]);

    let compare = ["compare", "--model", "llama-3.2-1b", "--gpus", "h100,l40s", "--json"];
    same_output(&compare, &["--input-len", "512", "--output-len", "32", "--weights", "fp8"], &["--input", "512", "--output", "32", "--quant", "fp8"]);

    let sim = ["serve-sim", "--model", "llama-3.2-1b", "--gpu", "h100", "--concurrency", "4", "--requests", "8", "--json"];
    same_output(&sim, &["--input-len", "512", "--output-len", "32", "--weights", "fp8"], &["--input", "512", "--output", "32", "--quant", "fp8"]);
    same_output(&sim, &["--max-seqs", "2", "--max-batched-tokens", "1024", "--kv-dtype", "fp8"], &["--max-num-seqs", "2", "--max-num-batched-tokens", "1024", "--kv-cache-dtype", "fp8"]);

    let plan = ["plan", "serve", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "2", "--concurrency", "1,4", "--json"];
    same_output(&plan, &["--input-len", "512", "--output-len", "32", "--weights", "fp8"], &["--input", "512", "--output", "32", "--quant", "fp8"]);
}

#[test]
fn the_predictor_fitting_command_is_fit_and_train_still_works_with_a_note() {
    let dir = std::env::temp_dir().join(format!("wavecast-fit-{}", std::process::id()));
    let out = dir.join("no-such-folder/w.json");
    let args = |command: &'static str| vec![command.to_string(), "--predictor".into(), "li".into(), "--data".into(), "unused".into(), "--out".into(), out.display().to_string()];
    let run = |command: &'static str| {
        let a = args(command);
        wavecast(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (fit, train) = (run("fit"), run("train"));
    let (fit_err, train_err) = (String::from_utf8_lossy(&fit.stderr), String::from_utf8_lossy(&train.stderr));
    // Same command, same answer (here: the output folder is missing) ...
    assert_eq!((fit.status.code(), train.status.code()), (Some(2), Some(2)), "{fit_err} / {train_err}");
    assert!(fit_err.contains("does not exist") && train_err.contains("does not exist"), "{fit_err} / {train_err}");
    // ... and the old name says, in one line, that it is the old name.
    assert!(!fit_err.contains("deprecated"), "{fit_err}");
    assert_eq!(train_err.lines().filter(|l| l.contains("`wavecast train` is deprecated; use `wavecast fit`")).count(), 1, "{train_err}");
    // `plan train` (a training plan) is not the old name of anything.
    let plan = wavecast(&["plan", "train", "--model", "gpt2", "--gpu", "h100", "--gpus", "2", "--batch", "8", "--json"]);
    assert!(plan.status.success() && !String::from_utf8_lossy(&plan.stderr).contains("deprecated"));
}

#[test]
fn common_model_names_work_and_typos_get_the_closest_name() {
    let base = ["predict", "--gpu", "h100", "--batch", "1", "--seq", "128", "--dtype", "bf16", "--json"];
    // A Hugging Face id and a release of the same config name the same preset.
    same_output(&base, &["--model", "meta-llama/Llama-3.1-8B-Instruct"], &["--model", "llama-3.1-8b"]);
    same_output(&["predict", "--gpu", "h200", "--batch", "1", "--seq", "128", "--dtype", "fp8", "--json"], &["--model", "llama-3.3-70b"], &["--model", "llama-3.1-70b"]);
    // Without --dtype too: another name of a preset takes the preset's route and format (an
    // alias once fell to the per-op route in FP32).
    for mode in ["inference", "train"] {
        let base = ["predict", "--gpu", "h100", "--batch", "2", "--seq", "128", "--mode", mode, "--json"];
        same_output(&base, &["--model", "meta-llama/Llama-3.2-1B-Instruct"], &["--model", "llama-3.2-1b"]);
        same_output(&base, &["--model", "gpt2-small"], &["--model", "gpt2"]);
    }
    let o = wavecast(&["predict", "--model", "qwen3-23b", "--gpu", "h100"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("did you mean qwen3-32b") && !err.contains("resnet50") && err.lines().count() == 1, "{err}");
    let models: serde_json::Value = serde_json::from_str(&stdout(&["models", "--json"])).unwrap();
    let llama = models.as_array().unwrap().iter().find(|m| m["name"] == "llama-3.1-70b").unwrap();
    assert!(llama["aliases"].as_array().unwrap().iter().any(|a| a == "llama-3.3-70b"), "{llama}");
}

#[test]
fn plan_serve_gives_real_numbers_for_what_it_set_aside() {
    // Llama 3.1 70B on one or two L40S: the small workers do not fit, with the sizes why.
    let text = stdout(&["plan", "serve", "--model", "llama-3.1-70b", "--gpu", "l40s", "--gpus", "4", "--concurrency", "1"]);
    let set_aside: Vec<&str> = text.lines().filter(|l| l.starts_with("set aside")).collect();
    assert!(!set_aside.is_empty(), "{text}");
    for line in set_aside {
        assert!(!line.contains(" N ") && !line.contains("N-GPU") && !line.contains("N GB"), "a placeholder: {line}");
        assert!(line.contains(" GB"), "{line}");
    }
}

#[test]
fn no_negative_zero_in_json() {
    for args in [
        &["predict", "--model", "gpt2", "--gpu", "h100", "--json"][..],
        &["predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "serve", "--input-len", "64", "--output-len", "8", "--json"][..],
        &["serve-sim", "--model", "llama-3.2-1b", "--gpu", "h100", "--concurrency", "2", "--requests", "4", "--json"][..],
        &["plan", "serve", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "2", "--concurrency", "1", "--json"][..],
        &["gpus", "--sustained", "--json"][..],
    ] {
        let out = stdout(args);
        assert!(!out.contains("-0.0,") && !out.contains("-0.0\n") && !out.contains("-0.0]"), "{args:?}: -0.0 in the JSON");
    }
}

#[test]
fn fp16_serving_on_a_gpu_without_bf16_prices_its_attention() {
    // A T4 has no BF16 units; its attention used to be priced as BF16, fail, and be left out of
    // the total (listed under "unpriced" only). Now it is priced in FP16 and nothing is dropped.
    let v: serde_json::Value = serde_json::from_str(&stdout(&["compare", "--model", "gpt2", "--gpus", "t4", "--input-len", "64", "--output-len", "8", "--dtype", "fp16", "--json"])).unwrap();
    let row = &v["results"][0];
    assert!(row["unpriced"].as_array().unwrap().is_empty(), "{row}");
    assert!(row["decode_classes"]["attention"].as_f64().is_some_and(|ms| ms > 0.0), "{}", row["decode_classes"]);
}

/// The set-up the README promises exists: its Python example's pandas and the tests' pytest are
/// extras of the package it tells to install (once neither was written down).
#[test]
fn the_python_extras_the_readme_names_are_declared() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let pyproject = std::fs::read_to_string(format!("{root}/python/pyproject.toml")).unwrap();
    let extras = pyproject.split("[project.optional-dependencies]").nth(1).expect("no extras in python/pyproject.toml");
    let extras = extras.split("\n[").next().unwrap();
    let extra = |name: &str| extras.lines().find(|l| l.starts_with(&format!("{name} = "))).unwrap_or_else(|| panic!("no extra {name}")).to_string();
    for name in ["pandas", "test"] {
        assert!(readme.contains(&format!("\"./python[{name}]\"")), "the README does not name the {name} extra");
    }
    assert!(extra("pandas").contains("\"pandas\""));
    assert!(extra("test").contains("pytest") && extra("test").contains("pandas"), "{}", extra("test"));
}

/// Issue 33: inference without --dtype follows the one default-format rule, as training does:
/// an LLM runs in its config's torch_dtype, a NeuSight FP32 benchmark preset in fp32, and the
/// run says which on stderr.
#[test]
fn inference_takes_the_configs_torch_dtype_and_says_so() {
    let dtype_of = |model: &str| {
        let o = wavecast(&["predict", "--model", model, "--gpu", "h100", "--batch", "1", "--seq", "128", "--json"]);
        assert!(o.status.success(), "{model}: {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("predict --json is JSON");
        (v["dtype"].as_str().unwrap_or_default().to_string(), String::from_utf8_lossy(&o.stderr).to_string())
    };
    let (llama, note) = dtype_of("llama-3-8b");
    assert_eq!(llama, "bf16");
    assert!(note.contains("inference format bf16: the config's torch_dtype"), "{note}");
    assert_eq!(dtype_of("gpt2-large").0, "fp32");
    let (given, quiet) = {
        let o = wavecast(&["predict", "--model", "llama-3-8b", "--gpu", "h100", "--batch", "1", "--seq", "128", "--dtype", "fp16", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        (v["dtype"].as_str().unwrap_or_default().to_string(), String::from_utf8_lossy(&o.stderr).to_string())
    };
    assert_eq!(given, "fp16");
    assert!(!quiet.contains("inference format"), "{quiet}");
}
