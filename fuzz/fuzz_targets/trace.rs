#![no_main]
//! PyTorch profiler trace (JSON or gzip) → kernels linked to their aten ops → scaled from an A100
//! to an H100 (hybrid: roofline ratios for GEMM-like ops) and to a T4 (Habitat's equations):
//! every total and every kernel finite and non-negative.

mod common;

use libfuzzer_sys::fuzz_target;
use wavecast_predict::wave_scaling::WaveForm;
use wavecast_trace::scale::{scale as scale_trace, GammaSource, Options};

fuzz_target!(|data: &[u8]| {
    let Ok(trace) = wavecast_trace::parse(data, "fuzz") else { return };
    let catalog = common::catalog();
    let a100 = catalog.get("a100").unwrap();
    let roofline = wavecast_predict::by_name("roofline").unwrap();
    let runs = [
        (catalog.get("h100").unwrap(), Options { form: WaveForm::Wavecast, gamma: GammaSource::Wavecast, predictor: Some(roofline.as_ref()) }),
        (catalog.get("t4").unwrap(), Options { form: WaveForm::HabitatCode, gamma: GammaSource::Habitat, predictor: None }),
    ];
    for (dest, opts) in &runs {
        let scaled = scale_trace(&trace, a100, dest, opts);
        assert!(scaled.dest_us.is_finite() && scaled.dest_us >= 0.0, "{} µs", scaled.dest_us);
        for k in &scaled.kernels {
            assert!(k.dest_us.is_finite() && k.dest_us >= 0.0, "kernel {}: {} µs", k.kernel, k.dest_us);
        }
    }
});
