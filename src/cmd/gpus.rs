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
