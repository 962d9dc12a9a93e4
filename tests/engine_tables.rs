//! The serving engine reaches the price ladder: `--backend sglang` with `--ops-data` prices the
//! kernels from SGLang's tables, and says so, where a folder holding vLLM's alone answers from
//! vLLM's and names them; `eval serving --ops-data` prices each row from its own engine's tables.
//! Needs `../shared/data` (H100's GEMM and attention collections, GB200's, Vidur's, PipeWeave's
//! and the serving sample); skipped without it.

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

/// A measured-data folder (links to the shared data) with what a B200 row needs when B200 is
/// left out, one per `test`: GB200's collections (its measured sibling) of `engines` only, but
/// every collective library (`comm` is pooled across engines, so dropping SGLang's custom
/// all-reduce would change a vLLM row too); H100's attention and activation quantization of
/// `engines`, at its own system folder, since the physics refit gives a key numbers only from
/// two GPUs' rows and without a second GPU's decode attention or streaming kernel (which every
/// norm and element-wise pass is priced as) no B200 row can be priced; Vidur's and PipeWeave's
/// rows.
fn b200_left_out_folder(test: &str, engines: &[&str]) -> Option<PathBuf> {
    let data = wavecast_test_support::shared("data")?;
    let systems = data.join("aiconfigurator/systems/data");
    let root = std::env::temp_dir().join(format!("wavecast-engine-tables-{test}-{}", std::process::id()));
    let ours = root.join("aiconfigurator/systems/data");
    let link = |from: PathBuf, to: PathBuf| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        if !to.exists() {
            std::os::unix::fs::symlink(from.canonicalize().unwrap(), &to).unwrap();
        }
    };
    let names = |dir: PathBuf| -> Vec<std::ffi::OsString> { std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect() };
    let wanted = |family: &std::ffi::OsStr, folder: &std::ffi::OsStr| {
        let name = folder.to_string_lossy();
        family == "comm" || !["vllm", "sglang", "trtllm"].contains(&name.as_ref()) || engines.contains(&name.as_ref())
    };
    for family in names(systems.join("gb200")) {
        for folder in names(systems.join("gb200").join(&family)).into_iter().filter(|f| wanted(&family, f)) {
            link(systems.join("gb200").join(&family).join(&folder), ours.join("gb200").join(&family).join(&folder));
        }
    }
    for engine in engines {
        link(systems.join("h100_sxm/attention").join(engine), ours.join("h100_sxm/attention").join(engine));
        link(systems.join("h100_sxm/quantize").join(engine), ours.join("h100_sxm/quantize").join(engine));
    }
    for source in ["vidur", "pipeweave"] {
        link(data.join(source), root.join(source));
    }
    Some(root)
}

/// `eval serving --ops-data` prices each row from its own engine's tables: of two rows of one
/// B200 deployment (a measured vLLM row of the shared file and the same row run by SGLang),
/// the SGLang row reads SGLang's GEMM tables where the folder has them and vLLM's where it
/// does not, and says which; the vLLM row reads vLLM's either way.
#[test]
fn eval_serving_prices_each_row_from_its_own_engines_tables() {
    let Some(csv) = wavecast_test_support::shared("data/aiconfigurator/silicon_sample.csv") else { return };
    let Some(both) = b200_left_out_folder("eval-both", &["vllm", "sglang"]) else { return };
    let Some(vllm_only) = b200_left_out_folder("eval-vllm", &["vllm"]) else { return };
    let text = std::fs::read_to_string(&csv).unwrap();
    let header = text.lines().next().unwrap();
    let columns: Vec<&str> = header.split(',').collect();
    let column = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    let (model, system, backend, mode) = (column("model_path"), column("system"), column("backend"), column("mode"));
    let row = text.lines().skip(1).find(|l| {
        let f: Vec<&str> = l.split(',').collect();
        f.len() == columns.len() && f[model] == "meta-llama/Llama-3.1-70B" && f[system] == "b200_sxm" && f[backend] == "vllm" && f[mode] == "agg"
    });
    let row = row.expect("the shared file has a vLLM Llama-3.1-70B row on B200");
    let mut sglang: Vec<&str> = row.split(',').collect();
    sglang[backend] = "sglang";
    sglang[column("id")] = "same-row-on-sglang";
    let data = std::env::temp_dir().join(format!("wavecast-engine-tables-rows-{}.csv", std::process::id()));
    std::fs::write(&data, format!("{header}\n{row}\n{}\n", sglang.join(","))).unwrap();
    let configs = csv.parent().unwrap().join("model_configs");
    // Each run refits the physics without B200 (most of its time): the two overlap.
    let evals = wavecast_test_support::par_map(&[&both, &vllm_only], |ops| {
        json(&["eval", "serving", "--data", data.to_str().unwrap(), "--configs", configs.to_str().unwrap(), "--ops-data", ops.to_str().unwrap()])
    });
    std::fs::remove_dir_all(&both).ok();
    std::fs::remove_dir_all(&vllm_only).ok();
    std::fs::remove_file(&data).ok();
    let rows = |v: &serde_json::Value| v["rows"].as_array().unwrap().clone();
    let (own, borrowed) = (rows(&evals[0]), rows(&evals[1]));
    // Why a row went unpriced is in `unpredicted`: shown, since an empty list says nothing.
    assert_eq!((own.len(), borrowed.len()), (2, 2), "{} {}", evals[0]["unpredicted"], evals[1]["unpredicted"]);
    assert_eq!(own[0]["kernel_tables"], "vllm");
    assert_eq!(own[1]["kernel_tables"], "sglang");
    assert_eq!(borrowed[0]["kernel_tables"], "vllm");
    assert_eq!(borrowed[1]["kernel_tables"], "vllm (no sglang tables)");
    assert_ne!(own[1]["predicted_ttft_ms"], borrowed[1]["predicted_ttft_ms"], "SGLang's tables must change the SGLang row");
    assert_eq!(own[0]["predicted_ttft_ms"], borrowed[0]["predicted_ttft_ms"], "the vLLM row reads vLLM's tables whatever else the folder holds");
    assert_eq!(own[0]["predicted_tpot_ms"], borrowed[0]["predicted_tpot_ms"], "the vLLM row reads vLLM's tables whatever else the folder holds");
}
