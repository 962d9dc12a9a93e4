#![no_main]
//! Vidur's per-layer and collective CSVs and PipeWeave's FP8 GEMM CSV → timings → the shipped
//! sustained roofline's price: finite and non-negative. Every row is checked as read; the first
//! 32 of each report are priced (pricing every one of the hundreds a few kilobytes can hold
//! made a run crawl at ~290 executions per second without reaching more code).

mod common;

use libfuzzer_sys::fuzz_target;
use wavecast_data::{pipeweave, vidur, Source};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let catalog = common::catalog();
    let model = common::sustained();
    let reports = [vidur::layer_ops_csv(text, "fuzz", "h100-sxm"), vidur::collective_csv(text, "fuzz", "a100-sxm-80gb", Source::Vidur), pipeweave::gemm_csv(text, "fuzz", catalog)];
    for report in reports.into_iter().flatten() {
        for t in &report.rows {
            assert!(t.latency_ms.is_finite() && t.latency_ms > 0.0, "{}", t.latency_ms);
        }
        for t in report.rows.iter().take(32) {
            if let Ok(s) = model.predict(t, catalog.get(&t.gpu).unwrap()) {
                assert!(s.is_finite() && s > 0.0, "{s} for {t:?}");
            }
        }
    }
});
