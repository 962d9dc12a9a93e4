#![no_main]
//! AIConfigurator parquet table (bytes, read as each table kind) → timings → the sustained
//! roofline's work and the shipped model's price: finite and non-negative.

mod common;

use libfuzzer_sys::fuzz_target;
use wavecast_data::aiconfigurator::parse_table;

const TABLES: [&str; 5] = ["gemm_perf.parquet", "generation_attention_perf.parquet", "context_attention_perf.parquet", "moe_perf.parquet", "nccl_perf.parquet"];

fuzz_target!(|data: &[u8]| {
    let catalog = common::catalog();
    let table = TABLES[data.len() % TABLES.len()];
    let Ok(report) = parse_table(data.to_vec(), table, "h100_sxm", catalog) else { return };
    let model = common::sustained();
    for t in &report.rows {
        assert!(t.latency_ms.is_finite() && t.latency_ms > 0.0, "{}", t.latency_ms);
        if let Ok(s) = model.predict(t, catalog.get(&t.gpu).unwrap()) {
            assert!(s.is_finite() && s > 0.0, "{s} for {t:?}");
        }
    }
});
