#![no_main]
//! ONNX protobuf → imported graph (inference, and training with backward and optimizer) →
//! priced step.

mod common;

use libfuzzer_sys::fuzz_target;
use wavecast_ir::ops::OptimizerKind;
use wavecast_workload::onnx::{import_bytes, OnnxOptions};
use wavecast_workload::Mode;

fuzz_target!(|data: &[u8]| {
    for mode in [Mode::Inference, Mode::Training] {
        let o = OnnxOptions { batch: 2, seq: 16, mode, dtype: None, optimizer: OptimizerKind::Adam, image: Some(32) };
        if let Ok(m) = import_bytes(data, "fuzz", &o) {
            common::assert_prices_finitely(&m.graph);
        }
    }
});
