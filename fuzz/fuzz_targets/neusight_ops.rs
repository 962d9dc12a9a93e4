#![no_main]
//! NeuSight per-op measurement CSV → measurements → IR ops → roofline times.

mod common;

use common::catalog;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(report) = wavecast_data::neusight_ops::parse_neusight_csv(text, "fuzz.csv", catalog()) else { return };
    for m in &report.rows {
        assert!(m.latency_ms.is_finite() && m.latency_ms > 0.0, "{}", m.latency_ms);
        if let (Some(op), Ok(gpu)) = (m.to_op(), catalog().get(&m.gpu)) {
            let t = wavecast_predict::roofline::roofline_seconds(&op, gpu);
            assert!(t.is_finite() && t >= 0.0, "{t}");
        }
    }
});
