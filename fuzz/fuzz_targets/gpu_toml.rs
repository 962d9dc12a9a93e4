#![no_main]
//! GPU catalog TOML → validated GPUs → a step priced on each (occupancy and peaks used).

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use wavecast_gpu::occupancy::{occupancy, KernelResources};
use wavecast_gpu::Catalog;
use wavecast_ir::Graph;

/// GPT-2 inference, built once: the fuzzed part is the GPU, not the workload.
fn graph() -> &'static Graph {
    static GRAPH: OnceLock<Graph> = OnceLock::new();
    GRAPH.get_or_init(|| {
        let spec = wavecast_workload::presets::preset("gpt2").unwrap();
        wavecast_workload::build(&spec, &wavecast_workload::BuildOptions::new(1, 32, wavecast_workload::Mode::Inference, wavecast_ir::DType::Fp32)).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(catalog) = Catalog::parse(text, "fuzz") else { return };
    let roofline = wavecast_predict::by_name("roofline").unwrap();
    for gpu in catalog.all() {
        let _ = occupancy(gpu, &KernelResources { threads_per_block: 256, registers_per_thread: 64, shared_mem_bytes: 16384 });
        if let Ok(step) = wavecast_sim::estimate(graph(), gpu, roofline.as_ref()) {
            assert!(step.total_ms.is_finite() && step.total_ms >= 0.0);
        }
    }
});
