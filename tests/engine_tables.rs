//! The serving engine reaches the price ladder: `--backend sglang` with `--ops-data` prices the
//! kernels from SGLang's tables, and says so, where a folder holding vLLM's alone answers from
//! vLLM's and names them. Needs `../shared/data` (H100's GEMM collections); skipped without it.

use std::path::PathBuf;
use std::process::Command;

/// A folder of the upstream layout holding H100's GEMM collections of `engines` only (links to
/// the shared data), one per `test`; `None` without the shared data.
fn h100_gemm_folder(test: &str, engines: &[&str]) -> Option<PathBuf> {
    // Skips without ../shared, and fails then under WAVECAST_TEST_STRICT=1 (as CI runs it).
    let gemm = wavecast_test_support::shared("data/aiconfigurator/systems/data/h100_sxm/gemm")?;
    let root = std::env::temp_dir().join(format!("wavecast-engine-tables-{test}-{}", std::process::id()));
    let family = root.join("systems/data/h100_sxm/gemm");
    std::fs::create_dir_all(&family).unwrap();
    for engine in engines {
        let link = family.join(engine);
        if !link.exists() {
            std::os::unix::fs::symlink(gemm.join(engine).canonicalize().unwrap(), &link).unwrap();
        }
    }
    Some(root)
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).arg("--json").output().unwrap();
    assert!(out.status.success(), "wavecast {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn serve(backend: &str, ops: &str) -> serde_json::Value {
    json(&["predict", "--model", "llama-3.1-8b", "--gpu", "h100", "--mode", "serve", "--input-len", "2000", "--output-len", "8", "--backend", backend, "--ops-data", ops])
}

fn serve_sim(backend: &str, ops: &str) -> serde_json::Value {
    json(&["serve-sim", "--model", "llama-3.1-8b", "--gpu", "h100", "--concurrency", "4", "--input", "2000", "--output", "16", "--backend", backend, "--ops-data", ops])
}

fn share(v: &serde_json::Value, label: &str) -> f64 {
    v["provenance"][label].as_f64().unwrap_or(0.0)
}

#[test]
fn an_sglang_deployment_is_priced_from_sglangs_tables_and_says_so() {
    let Some(both) = h100_gemm_folder("both", &["vllm", "sglang"]) else { return };
    let Some(vllm_only) = h100_gemm_folder("vllm", &["vllm"]) else { return };
    let (both_dir, vllm_dir) = (both.to_str().unwrap(), vllm_only.to_str().unwrap());
    let own = serve("sglang", both_dir);
    let borrowed = serve("sglang", vllm_dir);
    let vllm = serve("vllm", both_dir);
    let vllm_alone = serve("vllm", vllm_dir);
    let sim_own = serve_sim("sglang", both_dir);
    let sim_borrowed = serve_sim("sglang", vllm_dir);
    std::fs::remove_dir_all(&both).ok();
    std::fs::remove_dir_all(&vllm_only).ok();
    // The GEMMs (most of a dense model's prefill) come from SGLang's own table: measured, no
    // other engine named; from a folder without SGLang's, from vLLM's, named.
    assert!(share(&own, "measured") > 0.3, "{}", own["provenance"]);
    assert_eq!(share(&own, "measured (vllm tables)"), 0.0, "{}", own["provenance"]);
    assert!(share(&borrowed, "measured (vllm tables)") > 0.3, "{}", borrowed["provenance"]);
    // The engines' kernels take different times, and the answers follow them.
    assert_ne!(own["prefill_ms"], borrowed["prefill_ms"], "SGLang's tables must change the answer");
    assert_eq!(vllm["prefill_ms"], vllm_alone["prefill_ms"], "a vLLM deployment reads vLLM's tables whatever else the folder holds");
    // serve-sim asks the same way: one engine, one layout, two folders, two answers.
    assert_ne!(sim_own["metrics"], sim_borrowed["metrics"], "serve-sim --backend sglang must read SGLang's tables");
}
