//! `wavecast gpus`: the catalog.

use super::{print_json, Result};
use crate::cli::GpusArgs;
use crate::table;

/// One-letter code per public measurement set, for the `data` column (`AVP` = three sets).
fn source_code(source: &str) -> &'static str {
    match source {
        "aiconfigurator" => "A",
        "vidur" => "V",
        "pipeweave" => "P",
        "neusight" => "N",
        _ => "?",
    }
}

pub fn run(a: GpusArgs) -> Result<()> {
    if a.sustained {
        return sustained(&a);
    }
    let gpus = wavecast::gpus(a.gpu_file.gpu_file.as_deref())?;
    if a.json {
        return print_json(&gpus);
    }
    let mut t = table::new(&["GPU", "arch", "SMs", "mem GB", "BW GB/s", "FP32 TF", "BF16 TF", "FP8 TF", "FP4 TF", "TDP W", "$/h", "data"]);
    for g in &gpus {
        let opt = |v: Option<f64>| v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into());
        let data: Vec<&str> = g.measured.iter().map(|m| source_code(m)).collect();
        t.add_row(vec![
            g.id.clone(),
            g.architecture.clone(),
            g.sm_count.to_string(),
            format!("{:.0}", g.memory_gb),
            format!("{:.0}", g.memory_bandwidth_gbs),
            format!("{:.1}", g.peak_tflops.fp32),
            opt(g.peak_tflops.bf16),
            opt(g.peak_tflops.fp8),
            opt(g.peak_tflops.fp4),
            format!("{:.0}", g.tdp_w),
            g.price.as_ref().map(|p| format!("{:.2}", p.usd_per_hour)).unwrap_or_else(|| "-".into()),
            if data.is_empty() { "-".into() } else { data.concat() },
        ]);
    }
    println!("{t}");
    println!("{} GPUs. Dense tensor-core peaks (no sparsity). Aliases: `wavecast gpus --json`.", gpus.len());
    println!("data: public measurements (A = AIConfigurator, V = Vidur, P = PipeWeave, N = NeuSight; `measured` in --json).");
    for (g, p) in gpus.iter().filter_map(|g| Some((g, g.package.as_ref()?))) {
        println!("{}: one of the {} dies of the {} ({:.0} GB, {:.0} W in all), as PyTorch sees it; figures are per die.", g.id, p.devices, p.name, p.memory_gb, p.tdp_w);
    }
    Ok(())
}

/// `--sustained`: datasheet and implied figures side by side, the implied share in brackets.
fn sustained(a: &GpusArgs) -> Result<()> {
    let rows = wavecast::sustained(a.gpu_file.gpu_file.as_deref())?;
    if a.json {
        return print_json(&rows);
    }
    let pair = |implied: Option<f64>, peak: Option<f64>| match (implied, peak) {
        (Some(i), Some(p)) => format!("{i:.0}/{p:.0} {:.0}%", 100.0 * i / p),
        (None, Some(p)) => format!("-/{p:.0}"),
        _ => "-".into(),
    };
    let mut t = table::new(&["GPU", "BF16 TF", "FP8 TF", "FP4 TF", "GEMV GB/s", "KV GB/s"]);
    for r in &rows {
        let i = &r.implied;
        t.add_row(vec![
            r.id.clone(),
            pair(i.bf16_tflops, r.peak_bf16_tflops),
            pair(i.fp8_tflops, r.peak_fp8_tflops),
            pair(i.nvfp4_tflops, r.peak_fp4_tflops),
            pair(i.weight_stream_gbs, Some(r.bandwidth_gbs)),
            pair(i.kv_read_gbs, Some(r.bandwidth_gbs)),
        ]);
    }
    println!("{t}");
    println!("sustained/datasheet share, as the shipped modern-GPU kernel models assume (`--predictor sustained`,");
    println!("serve-sim). TF: an 8192^3 GEMM per format (dense). GEMV: 8192 x 8192 BF16 weights read once.");
    println!("KV: one decode step of 64 sequences x 8192 tokens, 8 KV heads x 128, BF16 cache.");
    Ok(())
}
