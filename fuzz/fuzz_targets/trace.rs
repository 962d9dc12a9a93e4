#![no_main]
//! PyTorch profiler trace (JSON or gzip) → kernels → scaled from an A100 to an H100.

use libfuzzer_sys::fuzz_target;
use wavecast_gpu::Catalog;
use wavecast_predict::wave_scaling::WaveForm;
use wavecast_trace::scale::{scale as scale_trace, GammaSource, Options};

fuzz_target!(|data: &[u8]| {
    let Ok(trace) = wavecast_trace::parse(data, "fuzz") else { return };
    let catalog = Catalog::builtin();
    let (a100, h100) = (catalog.get("a100").unwrap(), catalog.get("h100").unwrap());
    let roofline = wavecast_predict::by_name("roofline").unwrap();
    let opts = Options { form: WaveForm::Wavecast, gamma: GammaSource::Wavecast, predictor: Some(roofline.as_ref()) };
    let scaled = scale_trace(&trace, a100, h100, &opts);
    assert!(scaled.dest_us.is_finite() && scaled.dest_us >= 0.0, "{} µs", scaled.dest_us);
});
