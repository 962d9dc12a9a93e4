//! Our transformer builder against NeuSight's traced operator graphs of the same models: total
//! FLOPs within 1 % and exactly the same number of GEMMs (BMMs included).

use std::path::PathBuf;
use wavecast_ir::{DType, Op};
use wavecast_test_support::shared;
use wavecast_workload::neusight::{import_opgraph, WorkloadName};
use wavecast_workload::{build, presets, AttentionImpl, BuildOptions, Head, Mode};

/// NeuSight's model-config file for a workload's model name, in its data folder `neusight`.
fn config_for(neusight: &std::path::Path, model: &str) -> PathBuf {
    neusight.join("model_configs").join(format!("{model}.json"))
}

fn gemms(g: &wavecast_ir::Graph) -> u64 {
    g.nodes.iter().filter(|n| matches!(n.op, Op::Gemm(_))).map(|n| n.repeat).sum()
}

#[test]
fn builder_matches_neusight_graphs() {
    let Some(neusight) = shared("data/neusight") else { return };
    let dir = neusight.join("opgraph");
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir).expect("shared NeuSight data beside the repo").flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let name = WorkloadName::parse(&stem).unwrap();
        if name.option.is_some() {
            continue; // distributed and fused variants are rewrites of these same graphs
        }
        let spec = presets::load_config(&config_for(&neusight, &name.model)).unwrap();
        let mode = if name.training { Mode::Training } else { Mode::Inference };
        let mut o = BuildOptions::new(name.batch, name.seq, mode, DType::Fp32);
        o.attention = AttentionImpl::Eager;
        if name.model.starts_with("bert") && !name.training {
            o.head = Head::Classification;
        }
        let ours = build(&spec, &o).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        // Switch graphs are traced at full depth.
        let layers = if spec.encdec.is_some() { 0 } else { spec.layers };
        let theirs = import_opgraph(&text, &stem, layers).unwrap();
        let our_flops = ours.total_flops() - ours.flops_in(wavecast_ir::Phase::Optimizer);
        let rel = (our_flops - theirs.total_flops()) / theirs.total_flops();
        println!("{stem}: flops ours {our_flops:.4e} theirs {:.4e} ({:+.3}%), gemms {} vs {}", theirs.total_flops(), 100.0 * rel, gemms(&ours), gemms(&theirs));
        assert!(rel.abs() < 0.01, "{stem}: FLOPs differ by {:.2}%", 100.0 * rel);
        assert_eq!(gemms(&ours), gemms(&theirs), "{stem}: GEMM count");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} workloads checked");
}
