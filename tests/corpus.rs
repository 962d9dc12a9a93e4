//! The malformed-input corpus (`tests/corpus/`, written by its `generate.py`) through the binary:
//! every file and argument vector ends in exit 0 with finite, non-negative times and costs, or
//! in exit 2 with exactly one line on stderr; never a panic, a signal or a hang. All failures
//! are collected and reported together.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(reader: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/corpus").join(reader)).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

/// Numbers that are times, rates, counts of work or money must be finite and non-negative
/// (serde_json writes NaN and infinity as null).
fn is_quantity(key: &str) -> bool {
    ["ms", "_s", "per_s", "usd", "flops", "bytes", "share", "speedup", "gb", "params", "tokens"].iter().any(|k| key.ends_with(k) || key.contains(&format!("{k}_")))
}

fn bad_numbers(v: &serde_json::Value, key: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, x)| bad_numbers(x, k, out)),
        serde_json::Value::Array(a) => a.iter().for_each(|x| bad_numbers(x, key, out)),
        serde_json::Value::Number(n) if is_quantity(key) && !n.as_f64().is_some_and(|f| f.is_finite() && f >= 0.0) => out.push(format!("{key} = {n}")),
        serde_json::Value::Null if is_quantity(key) && !key.starts_with("usd") => out.push(format!("{key} = null (NaN or infinity)")),
        _ => {}
    }
}

/// Runs `wavecast args`; `None` when it kept its promise, else what went wrong.
fn broken_promise(args: &[String]) -> Option<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).current_dir(root()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > LIMIT {
            child.kill().ok();
            return Some(format!("still running after {LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
                let words = text.split(|c: char| !c.is_alphanumeric());
                return words.filter(|w| ["NaN", "nan", "inf", "infinity", "Infinity"].contains(w)).map(|w| format!("printed {w}")).next();
            };
            let mut bad = Vec::new();
            bad_numbers(&json, "", &mut bad);
            (!bad.is_empty()).then(|| format!("exit 0 with {}", bad.join(", ")))
        }
        Some(2) if stderr.trim_end().lines().count() == 1 && !stderr.contains("panicked") => None,
        Some(2) => Some(format!("exit 2 but stderr is not one line: {stderr:?}")),
        code => Some(format!("exit {code:?}: {}", stderr.lines().next().unwrap_or(""))),
    }
}

fn with_json(args: &[&str], file: &Path) -> Vec<String> {
    args.iter().map(|a| if *a == "FILE" { file.display().to_string() } else { a.to_string() }).chain(["--json".to_string()]).collect()
}

#[test]
fn every_malformed_input_gets_one_line_and_exit_2_or_a_finite_answer() {
    let by_reader: [(&str, &[&[&str]]); 4] = [
        ("config", &[&["predict", "--config", "FILE", "--gpu", "h100"], &["predict", "--config", "FILE", "--gpu", "h100", "--mode", "serve", "--input-len", "100", "--output-len", "10"]]),
        ("gpu", &[&["gpus", "--gpu-file", "FILE"], &["predict", "--model", "gpt2", "--gpu", "corpus-gpu", "--gpu-file", "FILE", "--dtype", "fp16", "--mode", "serve", "--input-len", "100", "--output-len", "10"]]),
        ("trace", &[&["scale", "--trace", "FILE", "--from", "a100", "--to", "h100,l4"]]),
        ("onnx", &[&["predict", "--onnx", "FILE", "--gpu", "h100"]]),
    ];
    let mut failures = Vec::new();
    let mut runs = 0;
    for (reader, commands) in by_reader {
        for file in files(reader) {
            for command in commands {
                let args = with_json(command, &file);
                runs += 1;
                if let Some(why) = broken_promise(&args) {
                    failures.push(format!("{}: {why}", args.join(" ")));
                }
            }
        }
    }
    let lines = std::fs::read_to_string(root().join("tests/corpus/args.txt")).unwrap();
    for line in lines.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        runs += 1;
        if let Some(why) = broken_promise(&args) {
            failures.push(format!("{line}: {why}"));
        }
    }
    assert!(runs >= 600, "the corpus shrank: {runs} runs");
    assert!(failures.is_empty(), "{} of {runs} runs broke the promise:\n{}", failures.len(), failures.join("\n"));
}
