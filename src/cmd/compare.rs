//! `wavecast compare`: one LLM serving workload on several GPUs and tensor-parallel degrees,
//! in one table (latency, throughput, tokens per dollar) and optionally an SVG bar chart.

use super::{check_html, print_json, print_notes, write_html, Result};
use crate::cli::CompareArgs;
use crate::{plot, table};
use wavecast::CompareReport;

pub fn run(a: CompareArgs) -> Result<()> {
    check_html(&a.html)?;
    let request = &a.req;
    let out = wavecast::compare(request)?;
    print_notes(&out.notes);
    write_html(&a.html, wavecast::html::Kind::Compare, Some(request), &out)?;
    if let Some(path) = &a.plot {
        plot::compare(&out, path)?;
    }
    if a.json {
        return print_json(&out);
    }
    print_human(&out);
    if let Some(path) = &a.plot {
        say!("plot written to {}", path.display());
    }
    Ok(())
}

/// The GPUs that run another activation type than the header's, as " (fp16 on t4, v100-sxm2)";
/// empty when every GPU runs the header's.
fn other_types(c: &CompareReport) -> String {
    let mut by_type: Vec<(wavecast::DType, Vec<&str>)> = Vec::new();
    for r in c.results.iter().filter(|r| r.dtype != c.dtype) {
        match by_type.iter_mut().find(|(d, _)| *d == r.dtype) {
            Some((_, gpus)) if gpus.contains(&r.gpu.as_str()) => {}
            Some((_, gpus)) => gpus.push(&r.gpu),
            None => by_type.push((r.dtype, vec![&r.gpu])),
        }
    }
    by_type.iter().map(|(d, gpus)| format!(" ({d} on {})", gpus.join(", "))).collect()
}

fn print_human(c: &CompareReport) {
    let weights = wavecast_sim::serve::formats_note(c.dtype, c.weights, c.quant, c.moe_quant, c.kv_dtype);
    say!(
        "{} · serve · batch {} × ({} in + {} out) · {}{}{weights} · predictor: {}",
        c.model,
        c.batch,
        c.input_len,
        c.output_len,
        c.dtype,
        other_types(c),
        c.predictor
    );
    let mut t = table::new(&["GPU", "TP", "TTFT ms", "decode ms", "total ms", "tokens/s", "$/hour", "tokens/$", "mem/GPU", "comm"]);
    for r in &c.results {
        t.add_row(vec![
            r.gpu.clone(),
            r.tp.to_string(),
            table::ms(r.prefill_ms),
            table::ms(r.decode_ms),
            table::ms(r.total_ms),
            format!("{:.0}", r.tokens_per_s),
            r.usd_per_hour.map_or("–".into(), |u| format!("{u:.2}")),
            r.tokens_per_usd.map_or("–".into(), table::si),
            format!("{:.0}%", 100.0 * r.memory_fraction),
            table::pct(100.0 * r.comm_share),
        ]);
    }
    println!("{t}");
    let mut priced: Vec<(&str, &str)> = c.results.iter().filter_map(|r| Some((r.gpu.as_str(), r.price_source.as_deref()?))).collect();
    priced.dedup();
    for (gpu, source) in priced {
        say!("price {gpu}: {source}");
    }
    for s in &c.skipped {
        say!("skipped {} TP {}: {}", s.gpu, s.tp, s.reason);
    }
}
