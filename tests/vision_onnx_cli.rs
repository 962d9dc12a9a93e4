//! `predict` on the built-in vision, GAN and recurrent models and on ONNX files the test builds
//! itself: every model works in both modes, output parses, bad files give one clear error.

use std::process::{Command, Output};
use wavecast_workload::onnx::proto::elem;
use wavecast_workload::onnx::samples::{self, Builder, D};

fn wavecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).output().expect("run wavecast")
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("--json output is JSON")
}

/// A temporary file holding `bytes`, deleted when dropped (also when a test fails).
fn temp(name: &str, bytes: &[u8]) -> tempfile::TempPath {
    let mut f = tempfile::Builder::new().prefix("wavecast-").suffix(&format!("-{name}")).tempfile().unwrap();
    std::io::Write::write_all(&mut f, bytes).unwrap();
    f.into_temp_path()
}

#[test]
fn every_builtin_model_predicts_in_both_modes() {
    let models = ["resnet18", "resnet50", "resnet152", "inception-v3", "vgg16", "mobilenet-v2", "efficientnet-b0", "vit-b16", "dcgan", "gnmt", "transformer-base"];
    for m in models {
        let mut times = Vec::new();
        for mode in ["inference", "train"] {
            // Only the token models take a sequence; an image model refuses one (never ignores it).
            let mut args = vec!["predict", "--model", m, "--gpu", "a100", "--batch", "64", "--mode", mode, "--json"];
            if ["gnmt", "transformer-base"].contains(&m) {
                args.extend(["--seq", "50"]);
            }
            let v = json(&wavecast(&args));
            let total = v["total_ms"].as_f64().unwrap();
            assert!(total > 0.0 && total.is_finite(), "{m} {mode}");
            assert!(v["unpriced"].as_array().unwrap().is_empty(), "{m} {mode}: {}", v["unpriced"]);
            assert!(v["samples_per_s"].as_f64().unwrap() > 0.0);
            times.push(total);
        }
        assert!(times[1] > 2.0 * times[0], "{m}: training {} ms vs inference {} ms", times[1], times[0]);
    }
    let o = wavecast(&["predict", "--model", "resnet18", "--gpu", "a100", "--seq", "50"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--seq does not apply to resnet18"));
}

#[test]
fn resnet50_training_table_and_json() {
    let o = wavecast(&["predict", "--model", "resnet50", "--gpu", "a100", "--batch", "64", "--mode", "train"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for needle in ["resnet50 (25.56M params)", "3×224×224 images", "conv", "norm", "pooling", "samples/s"] {
        assert!(out.contains(needle), "missing {needle} in:\n{out}");
    }
    let v = json(&wavecast(&["predict", "--model", "resnet50", "--gpu", "a100", "--batch", "64", "--mode", "train", "--json"]));
    assert_eq!(v["params"].as_u64(), Some(25_557_032));
    let classes = v["classes"].as_array().unwrap();
    let conv = classes.iter().find(|c| c["class"] == "conv").unwrap();
    assert!(conv["share"].as_f64().unwrap() > 0.5, "convolutions dominate ResNet-50: {conv}");
    // Half precision runs on tensor cores: much faster.
    let half = json(&wavecast(&["predict", "--model", "resnet50", "--gpu", "a100", "--batch", "64", "--mode", "train", "--dtype", "fp16", "--json"]));
    assert!(half["total_ms"].as_f64().unwrap() < 0.6 * v["total_ms"].as_f64().unwrap());
    // A larger image costs more.
    let big = json(&wavecast(&["predict", "--model", "resnet50", "--gpu", "a100", "--batch", "64", "--image-size", "320", "--json"]));
    let small = json(&wavecast(&["predict", "--model", "resnet50", "--gpu", "a100", "--batch", "64", "--json"]));
    assert!(big["total_ms"].as_f64().unwrap() > 1.5 * small["total_ms"].as_f64().unwrap());
}

#[test]
fn onnx_cnn_and_transformer_files_predict() {
    let cnn = temp("tiny_cnn.onnx", &samples::tiny_cnn());
    let v = json(&wavecast(&["predict", "--onnx", cnn.to_str().unwrap(), "--gpu", "t4", "--batch", "32", "--mode", "train", "--json"]));
    assert_eq!(v["model"], "tiny_cnn");
    assert_eq!(v["params"].as_u64(), Some(2954));
    assert!(v["classes"].as_array().unwrap().iter().any(|c| c["class"] == "conv"));
    assert!(v.get("unsupported").is_none(), "nothing unsupported: {v}");

    let block = temp("block.onnx", &samples::tiny_transformer());
    let o = wavecast(&["predict", "--onnx", block.to_str().unwrap(), "--gpu", "h100", "--batch", "8", "--seq", "256"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("attention_bmm") && out.contains("softmax") && out.contains("batch 8 × tokens 256"), "{out}");
    let short = json(&wavecast(&["predict", "--onnx", block.to_str().unwrap(), "--gpu", "h100", "--batch", "8", "--seq", "64", "--json"]));
    let long = json(&wavecast(&["predict", "--onnx", block.to_str().unwrap(), "--gpu", "h100", "--batch", "8", "--seq", "1024", "--json"]));
    assert!(long["flops"].as_f64().unwrap() > 16.0 * short["flops"].as_f64().unwrap(), "attention grows faster than linearly");
}

#[test]
fn bad_onnx_input_is_one_clear_error() {
    let garbage = temp("garbage.onnx", b"\x08\x96\x01 this is not a model \xff\xff");
    for (args, needle) in [
        (vec!["predict", "--onnx", garbage.to_str().unwrap(), "--gpu", "a100"], "not an ONNX model"),
        (vec!["predict", "--onnx", "/nonexistent/m.onnx", "--gpu", "a100"], "cannot read"),
        (vec!["predict", "--model", "resnet50", "--gpu", "a100", "--batch", "0"], "batch must be at least 1"),
        (vec!["predict", "--model", "vit-b16", "--gpu", "a100", "--image-size", "100"], "divisible by 16"),
        (vec!["predict", "--model", "gnmt", "--gpu", "a100", "--image-size", "100"], "does not apply"),
    ] {
        let o = wavecast(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle) && !err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn models_lists_the_new_presets() {
    let v = json(&wavecast(&["models", "--json"]));
    let rows = v.as_array().unwrap();
    for name in ["resnet50", "inception-v3", "vgg16", "vit-b16", "dcgan", "gnmt", "transformer-base"] {
        assert!(rows.iter().any(|r| r["name"] == name), "{name} missing");
    }
    let vgg = rows.iter().find(|r| r["name"] == "vgg16").unwrap();
    assert_eq!(vgg["params"].as_u64(), Some(138_357_544));
    assert!((vgg["macs"].as_f64().unwrap() / 15.47e9 - 1.0).abs() < 0.02);
}

#[test]
fn unsupported_onnx_ops_are_reported_with_their_share() {
    let mut b = Builder::new("odd", 13);
    b.input("x", elem::FLOAT, &[D::S("batch"), D::N(512)]);
    let w = b.weight("w", &[512, 512]);
    b.node("MatMul", &["x", &w], &["y"], vec![]);
    b.node("CumSum", &["y", "y"], &["z"], vec![]);
    b.value_info("z", &[D::S("batch"), D::N(512)]);
    b.node("Relu", &["z"], &["out"], vec![]);
    let path = temp("odd.onnx", &b.encode());
    let o = wavecast(&["predict", "--onnx", path.to_str().unwrap(), "--gpu", "l4", "--batch", "16"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("unsupported ONNX op: CumSum ×1"), "{out}");
    let v = json(&wavecast(&["predict", "--onnx", path.to_str().unwrap(), "--gpu", "l4", "--batch", "16", "--json"]));
    let u = &v["unsupported"][0];
    assert_eq!(u["op"], "CumSum");
    // 16·512 of 2·16·512² + 2·16·512 FLOPs.
    let share = u["share"].as_f64().unwrap();
    assert!((share - 1.0 / (2.0 * 512.0 + 2.0)).abs() < 1e-6, "{share}");
}

#[test]
fn an_onnx_file_with_only_unsupported_ops_is_an_error_not_infinite_throughput() {
    let mut b = Builder::new("all-odd", 13);
    b.input("x", elem::FLOAT, &[D::S("batch"), D::N(512)]);
    b.node("CumSum", &["x", "x"], &["out"], vec![]);
    let path = temp("all-odd.onnx", &b.encode());
    let o = wavecast(&["predict", "--onnx", path.to_str().unwrap(), "--gpu", "l4"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("nothing to predict: every operator is unsupported (CumSum×1)"), "{err}");
}
