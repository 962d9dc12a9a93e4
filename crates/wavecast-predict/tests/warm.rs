//! The bound of a kernel as its benchmark runs it, against AIConfigurator's streaming tables:
//! no measured pass beats it on any GPU, while on the L40S (96 MB of L2 before 864 GB/s of
//! GDDR6) many beat the DRAM bound that ops in a model keep. Needs `../shared/data`; skipped
//! without it.

use std::path::PathBuf;
use wavecast_data::{load_timings_of, Engines, Shape, Timing};
use wavecast_gpu::{Catalog, Gpu};
use wavecast_predict::sustained::Work;

/// The streaming (`quantize`) and NCCL tables of `systems`, linked into a temporary folder of
/// the upstream layout (a system folder is read as one when it holds a `comm` folder).
fn streaming_rows(systems: &[&str]) -> Option<Vec<Timing>> {
    let root = std::env::temp_dir().join(format!("wavecast-warm-{}", std::process::id()));
    for system in systems {
        let folder = root.join("systems/data").join(system);
        std::fs::create_dir_all(&folder).unwrap();
        for family in ["quantize", "comm"] {
            let shared = wavecast_test_support::shared(&format!("data/aiconfigurator/systems/data/{system}/{family}"))?;
            let link: PathBuf = folder.join(family);
            if !link.exists() {
                std::os::unix::fs::symlink(shared.canonicalize().unwrap(), &link).unwrap();
            }
        }
    }
    let rows = load_timings_of(&root, &Catalog::builtin(), Engines::Default).unwrap().rows;
    std::fs::remove_dir_all(&root).ok();
    Some(rows.into_iter().filter(|t| matches!(t.shape, Shape::Vector { .. })).collect())
}

#[test]
fn no_measured_streaming_pass_beats_its_warm_bound_and_the_l40s_beats_its_dram_bound() {
    let Some(rows) = streaming_rows(&["l40s", "rtx_pro_6000_server", "h100_sxm", "b200_sxm"]) else { return };
    let mut l40s = (0, 0);
    for t in &rows {
        let gpu = Gpu::find(&t.gpu).unwrap();
        let work = Work::of(&t.shape, t.precision, &gpu).unwrap();
        let measured = t.latency_ms * 1e-3;
        assert!(work.warm_bound_seconds(&gpu) <= measured, "{t:?}: warm bound {} s", work.warm_bound_seconds(&gpu));
        assert!(work.warm_bound_seconds(&gpu) <= work.bound_seconds());
        if gpu.id == "l40s" {
            l40s.0 += 1;
            l40s.1 += usize::from(work.bound_seconds() > measured);
        }
    }
    let gpus: std::collections::BTreeSet<&str> = rows.iter().map(|t| t.gpu.as_str()).collect();
    assert_eq!(gpus.len(), 4, "{gpus:?}");
    // 41 % of the L40S's streaming rows ran faster than its DRAM allows: their tensors sat in L2.
    assert!(l40s.0 > 100 && l40s.1 * 4 > l40s.0, "{} of {} L40S rows below the DRAM bound", l40s.1, l40s.0);
}
