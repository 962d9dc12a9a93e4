//! `cargo bench`: how long one prediction takes. Prints figures; asserts nothing.
//!
//! The target: a full GPT-3 175B training step (graph build + per-op prediction + aggregation)
//! in under 5 ms on one core with the default predictor.

use std::time::Instant;
use wavecast_gpu::Catalog;
use wavecast_ir::DType;
use wavecast_workload::{build, presets, BuildOptions, Mode};

fn time<F: FnMut()>(label: &str, runs: u32, mut f: F) {
    f();
    let start = Instant::now();
    for _ in 0..runs {
        f();
    }
    let per = start.elapsed().as_secs_f64() / runs as f64;
    println!("{label:<58} {:>9.3} ms", per * 1e3);
}

fn main() {
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gpt3-175b.json");
    let spec = presets::load_config(&config).expect("bench/gpt3-175b.json");
    let cat = Catalog::builtin();
    let gpu = cat.get("a100").unwrap().clone();
    let load = Instant::now();
    let predictor = wavecast_predict::by_name(wavecast_predict::DEFAULT_PREDICTOR).unwrap();
    println!("{:<58} {:>9.3} ms", "load default predictor (once per process)", load.elapsed().as_secs_f64() * 1e3);
    let opts = BuildOptions::new(1, 2048, Mode::Training, DType::Bf16);
    time("GPT-3 175B training step: build graph", 200, || {
        std::hint::black_box(build(&spec, &opts).unwrap());
    });
    let graph = build(&spec, &opts).unwrap();
    println!("  ({} nodes, {:.3e} FLOP)", graph.nodes.len(), graph.total_flops());
    time("GPT-3 175B training step: predict + aggregate", 200, || {
        std::hint::black_box(wavecast_sim::estimate(&graph, &gpu, predictor.as_ref()).unwrap());
    });
    time("GPT-3 175B training step: build + predict + aggregate", 200, || {
        let g = build(&spec, &opts).unwrap();
        std::hint::black_box(wavecast_sim::estimate(&g, &gpu, predictor.as_ref()).unwrap());
    });
    let all_gpus = cat.all().len();
    time(&format!("same, on all {all_gpus} catalog GPUs"), 20, || {
        let g = build(&spec, &opts).unwrap();
        for gpu in cat.all() {
            std::hint::black_box(wavecast_sim::estimate(&g, gpu, predictor.as_ref()).unwrap());
        }
    });
}
