#![no_main]
//! NeuSight operator-graph CSV → graph → priced step.

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(graph) = wavecast_workload::neusight::import_opgraph(text, "fuzz", 4) {
        common::assert_prices_finitely(&graph);
    }
});
