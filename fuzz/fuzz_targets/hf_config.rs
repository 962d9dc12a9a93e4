#![no_main]
//! Hugging Face config.json → transformer graph (inference and training step) → priced step,
//! and the same spec served (prefill + a few decode steps, TP 1 and 2) on the largest GPU.

mod common;

use libfuzzer_sys::fuzz_target;
use wavecast_ir::DType;
use wavecast_workload::{load, LoadOptions, Mode, ServeOptions, Source, TransformerSpec};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for mode in [Mode::Inference, Mode::Training] {
        if let Ok(w) = load(Source::ConfigText { text, name: "fuzz" }, &LoadOptions::new(2, 64, mode)) {
            common::assert_prices_finitely(&w.graph);
        }
    }
    let Ok(spec) = TransformerSpec::from_json(text, "fuzz") else { return };
    let catalog = common::catalog();
    let gpu = catalog.get("mi300x").unwrap();
    let roofline = wavecast_predict::by_name("roofline").unwrap();
    for tp in [1, 2] {
        let o = ServeOptions { tp, ..ServeOptions::new(2, 32, 4, DType::Bf16) };
        if let Ok(r) = wavecast_sim::serve(&spec, gpu, roofline.as_ref(), &o) {
            for (what, v) in [("prefill", r.prefill_ms), ("decode", r.decode_ms), ("total", r.total_ms), ("tokens/s", r.tokens_per_s), ("comm", r.comm_ms)] {
                assert!(v.is_finite() && v >= 0.0, "serve {what} = {v}");
            }
        }
    }
});
