#![no_main]
//! NeuSight operator-graph CSV → graph (layer block repeated num_layer times) → priced step.
//! The label's num_layer is part of the input: it is chosen from the text's length, so both
//! mutate together.

mod common;

use libfuzzer_sys::fuzz_target;

const LAYERS: [u64; 6] = [0, 1, 4, 36, 1 << 32, u64::MAX];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let num_layer = LAYERS[text.len() % LAYERS.len()];
    for workload in ["gpt2_fuzz-inf-8-4", "gpt2_fuzz-train-8-4"] {
        if let Ok(graph) = wavecast_workload::neusight::import_opgraph(text, workload, num_layer) {
            common::assert_prices_finitely(&graph);
        }
    }
});
