#![no_main]
//! Hugging Face config.json → transformer graph (training step) → priced step.

mod common;

use libfuzzer_sys::fuzz_target;
use wavecast_workload::{load, LoadOptions, Mode, Source};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(w) = load(Source::ConfigText { text, name: "fuzz" }, &LoadOptions::new(2, 64, Mode::Training)) {
        common::assert_prices_finitely(&w.graph);
    }
});
