//! Per-engine tables on the shared AIConfigurator data: a query naming SGLang reads SGLang's
//! collection, one naming vLLM (or nothing) vLLM's, on a shape the two engines time apart.
//! Needs `../shared/data`; skipped without it.

use std::path::PathBuf;
use wavecast_data::{load_timings_of, Engines, Precision, Shape, Timing};
use wavecast_gpu::{Catalog, Gpu};
use wavecast_predict::ladder::{Ladder, Query};
use wavecast_predict::provenance::Rung;
use wavecast_predict::sustained::Model;

/// H100's GEMM collections of every engine, linked into a temporary folder of the upstream
/// layout (the whole system would load every family), one folder per `test`; `None` without
/// the shared data.
fn h100_gemm_collections(test: &str) -> Option<(PathBuf, Vec<Timing>)> {
    // Skips without ../shared, and fails then under WAVECAST_TEST_STRICT=1 (as CI runs it).
    let gemm = wavecast_test_support::shared("data/aiconfigurator/systems/data/h100_sxm/gemm")?;
    let root = std::env::temp_dir().join(format!("wavecast-engines-{test}-{}", std::process::id()));
    let family = root.join("systems/data/h100_sxm");
    std::fs::create_dir_all(&family).unwrap();
    let link = family.join("gemm");
    if !link.exists() {
        std::os::unix::fs::symlink(gemm.canonicalize().unwrap(), &link).unwrap();
    }
    let rows = load_timings_of(&root, &Catalog::builtin(), Engines::All).unwrap().rows;
    Some((root, rows))
}

#[test]
fn every_engines_collection_loads_keyed_by_engine_and_the_default_reads_vllm_only() {
    let Some((root, rows)) = h100_gemm_collections("load") else { return };
    let default = load_timings_of(&root, &Catalog::builtin(), Engines::Default).unwrap().rows;
    std::fs::remove_dir_all(&root).ok();
    let engines: std::collections::BTreeSet<&str> = rows.iter().map(Timing::engine_name).collect();
    assert_eq!(engines, ["sglang", "trtllm", "vllm"].into_iter().collect(), "every engine's collection");
    assert!(rows.iter().all(|t| t.engine.contains('/')), "each engine keyed with its version");
    assert!(!default.is_empty() && default.iter().all(|t| t.engine_name() == "vllm"));
    assert_eq!(default.len(), rows.iter().filter(|t| t.engine_name() == "vllm").count());
}

#[test]
fn an_sglang_query_reads_sglangs_rows_and_a_vllm_query_vllms() {
    let Some((root, rows)) = h100_gemm_collections("price") else { return };
    std::fs::remove_dir_all(&root).ok();
    // The fastest time each engine measured for each BF16 shape.
    let fastest = |engine: &str| {
        let mut by: std::collections::HashMap<(u64, u64, u64), f64> = std::collections::HashMap::new();
        for t in rows.iter().filter(|t| t.engine_name() == engine && t.precision == Precision::Bf16) {
            if let Shape::Gemm { m, n, k } = t.shape {
                let e = by.entry((m, n, k)).or_insert(f64::INFINITY);
                *e = e.min(t.latency_ms);
            }
        }
        by
    };
    let (vllm, sglang) = (fastest("vllm"), fastest("sglang"));
    // A shape both timed, the engines' times furthest apart.
    let (&(m, n, k), &ms_sglang) = sglang.iter().filter(|(s, _)| vllm.contains_key(s)).max_by(|a, b| (a.1 / vllm[a.0]).ln().abs().total_cmp(&(b.1 / vllm[b.0]).ln().abs())).unwrap();
    let ms_vllm = vllm[&(m, n, k)];
    assert!((ms_sglang / ms_vllm).ln().abs() > 0.1, "the engines time {m}x{n}x{k} {ms_sglang} and {ms_vllm} ms");
    let ladder = Ladder::from_rows(Model::shipped(), &rows, &Catalog::builtin(), None);
    let h100 = Gpu::find("h100-sxm").unwrap();
    let ask = |engine: &str| {
        let q = Query::new(rows[0].source, Shape::Gemm { m, n, k }, Precision::Bf16, None, engine);
        ladder.price(&q, &h100).unwrap()
    };
    let (s, v, default) = (ask("sglang"), ask("vllm"), ask(""));
    assert_eq!(s.provenance.rung, Rung::Measured);
    assert!((s.seconds / (ms_sglang * 1e-3) - 1.0).abs() < 1e-9, "SGLang: {s:?}, measured {ms_sglang} ms");
    assert!((v.seconds / (ms_vllm * 1e-3) - 1.0).abs() < 1e-9, "vLLM: {v:?}, measured {ms_vllm} ms");
    assert_eq!(default, ask("vllm"), "no engine named: vLLM's tables");
    assert_eq!(s.provenance.engine, None, "its own engine's tables: no fallback named");
}
