//! The malformed-input corpus (`tests/corpus/`, written by its `generate.py`) through the binary.
//! The promise of issue "Never wrong with confidence": every input ends either in exit 0 with
//! finite, non-negative times, rates and costs in the `--json` output, or in exit 2 with exactly
//! one line on stderr naming the problem; never a panic (exit 101), a signal, or a hang. Every
//! failure is collected and all are reported together, grouped by what went wrong.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wavecast_test_support::par_map;

/// Longest a single run may take before it counts as a hang.
const LIMIT: Duration = Duration::from_secs(20);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus() -> PathBuf {
    root().join("tests/corpus")
}

/// The entries of `tests/corpus/<folder>`, sorted: files for the file readers, folders for the
/// data-folder readers.
fn entries(folder: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus().join(folder)).unwrap_or_else(|e| panic!("tests/corpus/{folder}: {e}")).map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

/// Keys whose numbers may legitimately be negative (signed errors).
fn signed(key: &str) -> bool {
    key.contains("bias") || key.contains("log")
}

/// Keys that are legitimately `null` (absent figures). Anywhere else a `null` number is how
/// serde_json writes NaN or infinity.
fn nullable(key: &str) -> bool {
    matches!(key, "fp64" | "tf32" | "fp16" | "bf16" | "fp8" | "fp4" | "int8" | "fp32_matrix" | "usd_per_hour" | "tokens_per_usd" | "usd_per_1k_steps" | "price" | "predictor")
}

fn bad_numbers(v: &serde_json::Value, key: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, x)| bad_numbers(x, k, out)),
        serde_json::Value::Array(a) => a.iter().for_each(|x| bad_numbers(x, key, out)),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if !f.is_finite() => out.push(format!("{key} = {n}")),
            Some(f) if f < 0.0 && !signed(key) => out.push(format!("{key} = {n} (negative)")),
            _ => {}
        },
        serde_json::Value::Null if !nullable(key) => out.push(format!("{key} = null (NaN or infinity)")),
        _ => {}
    }
}

/// The words a float formatter writes for NaN and infinity.
fn non_finite_words(text: &str) -> Option<String> {
    text.split(|c: char| !c.is_alphanumeric()).find(|w| ["NaN", "nan", "inf", "Inf", "infinity", "Infinity"].contains(w)).map(|w| format!("printed '{w}'"))
}

/// The `panicked at FILE:LINE:COL:` line and the message after it; when the panic is inside the
/// standard library, also the first wavecast function of the backtrace.
fn panic_site(stderr: &str) -> String {
    let mut lines = stderr.lines().skip_while(|l| !l.contains("panicked at") && !l.contains("overflowed its stack"));
    let site = match (lines.next(), lines.next()) {
        (Some(at), Some(msg)) if at.contains("panicked at") => format!("{} {}", at.split("panicked at").nth(1).unwrap_or("").trim(), msg.trim()),
        (Some(at), _) => at.trim().to_string(),
        _ => return stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string(),
    };
    if !site.starts_with("/rustc/") {
        return site;
    }
    let frame = stderr.lines().map(str::trim).filter_map(|l| l.split_once(": ").map(|(_, f)| f)).find(|f| f.starts_with("wavecast"));
    match frame {
        Some(f) => format!("{site} (in {f})"),
        None => site,
    }
}

/// The rejection is the last line of stderr and the only one naming an error; progress lines
/// a long command printed before it (`ops/train: 30 rows loaded, none skipped`) may precede it.
fn rejected_in_one_line(stderr: &str) -> bool {
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    lines.last().is_some_and(|l| l.starts_with("wavecast: error: ")) && lines.iter().filter(|l| l.contains("error")).count() == 1
}

/// Runs `wavecast args`; `None` when it kept its promise, else (cause, detail).
fn broken_promise(args: &[String]) -> Option<(String, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wavecast"))
        .args(args)
        .current_dir(root())
        // A backtrace names the wavecast function when a panic is inside the standard library.
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain both pipes while waiting so a large output cannot block the child.
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut b).ok();
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut b).ok();
        b
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > LIMIT {
            child.kill().ok();
            child.wait().ok();
            return Some(("hang".into(), format!("still running after {LIMIT:?}")));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = String::from_utf8_lossy(&out_t.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_t.join().unwrap()).into_owned();
    let first = stderr.lines().next().unwrap_or("").to_string();
    match status.code() {
        Some(0) => {
            let bad = match serde_json::from_str::<serde_json::Value>(&stdout) {
                Ok(json) => {
                    let mut bad = Vec::new();
                    bad_numbers(&json, "", &mut bad);
                    let mut seen = std::collections::BTreeSet::new();
                    bad.retain(|b| seen.insert(b.clone()));
                    let more = bad.len().saturating_sub(6);
                    bad.truncate(6);
                    (!bad.is_empty()).then(|| bad.join(", ") + &if more > 0 { format!(" and {more} more") } else { String::new() })
                }
                Err(_) => non_finite_words(&stdout),
            };
            bad.map(|b| ("exit 0 with non-finite or negative numbers".into(), b))
        }
        Some(2) if ["panicked", "RUST_BACKTRACE", "stack backtrace"].iter().any(|p| stderr.contains(p)) => Some(("exit 2 after a panic message".into(), panic_site(&stderr))),
        Some(2) if rejected_in_one_line(&stderr) => None,
        Some(2) if stderr.trim().is_empty() => Some(("exit 2 with nothing on stderr".into(), String::new())),
        Some(2) => Some(("exit 2 but stderr is not one line".into(), format!("{} lines: {:?}", stderr.trim_end().lines().count(), stderr.trim_end()))),
        Some(101) => Some(("panic (exit 101)".into(), panic_site(&stderr))),
        Some(code) => Some((format!("exit {code}"), first)),
        None => {
            #[cfg(unix)]
            let sig = std::os::unix::process::ExitStatusExt::signal(&status).map_or("?".to_string(), |s| s.to_string());
            #[cfg(not(unix))]
            let sig = "?".to_string();
            Some((format!("killed by signal {sig}"), panic_site(&stderr)))
        }
    }
}

/// One reader: a corpus folder, whether its cases are files or folders, and the argument
/// vectors each case is run with (`CASE` is replaced by the case's path).
struct Reader {
    folder: &'static str,
    commands: &'static [&'static [&'static str]],
}

const FIXTURE_TRACE: &str = "tests/corpus/fixtures/trace-valid.json";

const READERS: &[Reader] = &[
    Reader {
        folder: "config",
        commands: &[
            &["predict", "--config", "CASE", "--gpu", "h100", "--json"],
            &["predict", "--config", "CASE", "--gpu", "b200", "--dtype", "bf16", "--json"],
            &["predict", "--config", "CASE", "--gpu", "h100", "--mode", "serve", "--input-len", "100", "--output-len", "10", "--json"],
            &["predict", "--config", "CASE", "--gpu", "h100", "--mode", "train", "--json"],
            &["compare", "--config", "CASE", "--gpus", "h100,l4", "--tp", "1,2", "--input-len", "100", "--output-len", "10", "--json"],
        ],
    },
    Reader {
        folder: "gpu",
        commands: &[
            &["gpus", "--gpu-file", "CASE", "--json"],
            &["predict", "--model", "gpt2", "--gpu", "corpus-gpu", "--gpu-file", "CASE", "--json"],
            &["predict", "--model", "gpt2", "--gpu", "corpus-gpu", "--gpu-file", "CASE", "--dtype", "fp16", "--mode", "serve", "--input-len", "100", "--output-len", "10", "--json"],
            &["scale", "--trace", FIXTURE_TRACE, "--from", "a100", "--to", "corpus-gpu", "--gpu-file", "CASE", "--json"],
            &["compare", "--model", "gpt2", "--gpus", "corpus-gpu,h100", "--input-len", "100", "--output-len", "10", "--gpu-file", "CASE", "--json"],
        ],
    },
    Reader {
        folder: "trace",
        commands: &[
            &["scale", "--trace", "CASE", "--from", "a100", "--to", "h100,l4", "--json"],
            &["scale", "--trace", "CASE", "--to", "h100", "--json"],
            &["scale", "--trace", "CASE", "--from", "a100", "--to", "t4", "--method", "wave", "--wave-form", "habitat-code", "--gamma", "habitat", "--json"],
        ],
    },
    Reader {
        folder: "onnx",
        commands: &[
            &["predict", "--onnx", "CASE", "--gpu", "h100", "--json"],
            &["predict", "--onnx", "CASE", "--gpu", "h100", "--mode", "train", "--batch", "3", "--seq", "7", "--image-size", "64", "--json"],
            &["predict", "--onnx", "CASE", "--gpu", "t4", "--predictor", "pm2lat", "--json"],
        ],
    },
    Reader {
        folder: "neusight/e2e",
        commands: &[&["eval", "e2e", "--data", "CASE", "--json"], &["eval", "e2e", "--data", "CASE", "--predictor", "roofline", "--json"]],
    },
    Reader {
        folder: "neusight/ops",
        commands: &[
            &["eval", "ops", "--data", "CASE", "--test-gpu", "t4", "--json"],
            &["eval", "pairs", "--data", "CASE", "--json"],
            &["eval", "conv", "--data", "CASE", "--json"],
        ],
    },
    Reader {
        folder: "neusight/amd_ops",
        commands: &[
            &["eval", "ops", "--data", "CASE", "--test-gpu", "mi100", "--json"],
            &["eval", "ops", "--data", "CASE", "--test-gpu", "mi100", "--no-holdout", "--predictor", "pm2lat", "--json"],
        ],
    },
    Reader {
        folder: "modern",
        commands: &[
            &["eval", "ops", "--data", "CASE", "--test-gpu", "h100", "--json"],
            &["eval", "ops", "--data", "CASE", "--test-gpu", "h20", "--predictor", "roofline", "--json"],
        ],
    },
];

fn relative(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[test]
fn every_malformed_input_gets_one_line_and_exit_2_or_a_finite_answer() {
    let mut runs: Vec<Vec<String>> = Vec::new();
    let mut per_reader = Vec::new();
    for r in READERS {
        let cases = entries(r.folder);
        per_reader.push(format!("{} {}", r.folder, cases.len()));
        for case in &cases {
            for command in r.commands {
                runs.push(command.iter().map(|a| if *a == "CASE" { relative(case) } else { a.to_string() }).collect());
            }
        }
    }
    let lines = std::fs::read_to_string(corpus().join("args.txt")).unwrap();
    let arg_lines: Vec<&str> = lines.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect();
    per_reader.push(format!("args.txt {}", arg_lines.len()));
    runs.extend(arg_lines.iter().map(|l| l.split_whitespace().map(str::to_string).collect()));

    // A few runs at once: most are a few milliseconds of work after process start-up.
    let failures: Vec<(String, String, String)> = par_map(&runs, |args| broken_promise(args).map(|(cause, detail)| (cause, args.join(" "), detail))).into_iter().flatten().collect();
    assert!(runs.len() >= 3000, "the corpus shrank: {} runs ({})", runs.len(), per_reader.join(", "));
    if failures.is_empty() {
        return;
    }
    let mut by_cause: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (cause, args, detail) in &failures {
        by_cause.entry(cause).or_default().push((args, detail));
    }
    let mut report = format!("{} of {} runs broke the promise (cases: {}):\n", failures.len(), runs.len(), per_reader.join(", "));
    for (cause, mut list) in by_cause {
        list.sort();
        report.push_str(&format!("\n== {cause} ({})\n", list.len()));
        for (args, detail) in list {
            report.push_str(&format!("wavecast {args}\n    -> {detail}\n"));
        }
    }
    panic!("{report}");
}
