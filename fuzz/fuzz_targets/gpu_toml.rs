#![no_main]
//! GPU catalog TOML → validated GPUs → a step priced on each (occupancy and peaks used).

use libfuzzer_sys::fuzz_target;
use wavecast_gpu::occupancy::{occupancy, KernelResources};
use wavecast_gpu::Catalog;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(catalog) = Catalog::parse(text, "fuzz") else { return };
    let roofline = wavecast_predict::by_name("roofline").unwrap();
    let graph = wavecast_workload::build(
        &wavecast_workload::presets::preset("gpt2").unwrap(),
        &wavecast_workload::BuildOptions::new(1, 32, wavecast_workload::Mode::Inference, wavecast_ir::DType::Fp32),
    )
    .unwrap();
    for gpu in catalog.all() {
        let _ = occupancy(gpu, &KernelResources { threads_per_block: 256, registers_per_thread: 64, shared_mem_bytes: 16384 });
        if let Ok(step) = wavecast_sim::estimate(&graph, gpu, roofline.as_ref()) {
            assert!(step.total_ms.is_finite() && step.total_ms >= 0.0);
        }
    }
});
