//! `wavecast predict --mode serve`: an LLM serving a batch of requests on one GPU or a
//! tensor-parallel group, as a report or `--json`.

use super::{check_html, print_json, print_notes, write_html, Result};
use crate::cli::PredictArgs;
use crate::table;
use wavecast::ServeReport;

pub fn run(a: PredictArgs) -> Result<()> {
    check_html(&a.html)?;
    let r = wavecast::serve(&a.req)?;
    print_notes(&r.notes);
    write_html(&a.html, wavecast::html::Kind::Serve, Some(&a.req), &r)?;
    if a.json {
        return print_json(&r);
    }
    print_human(&r);
    Ok(())
}

fn print_human(r: &ServeReport) {
    let weights = wavecast_sim::serve::formats_note(r.dtype, r.weights, r.quant, r.moe_quant, r.kv_dtype);
    let tp = if r.tp > 1 { format!("{} × ", r.tp) } else { String::new() };
    say!(
        "{} ({} params) · serve · batch {} × ({} in + {} out) · {}{weights} on {tp}{} · {} engine · predictor: {}",
        r.model,
        table::si(r.params as f64),
        r.batch,
        r.input_len,
        r.output_len,
        r.dtype,
        r.gpu_name,
        r.backend,
        r.predictor
    );
    let mut t = table::new(&["part", "prefill ms", "share", "decode step ms", "share"]);
    let mut classes: Vec<&String> = r.prefill_classes.keys().chain(r.decode_classes.keys()).collect();
    classes.sort();
    classes.dedup();
    classes.sort_by(|a, b| r.decode_classes.get(*b).unwrap_or(&0.0).total_cmp(r.decode_classes.get(*a).unwrap_or(&0.0)));
    let prefill_sum: f64 = r.prefill_classes.values().sum();
    let decode_sum: f64 = r.decode_classes.values().sum();
    for c in classes {
        let p = r.prefill_classes.get(c).copied().unwrap_or(0.0);
        let d = r.decode_classes.get(c).copied().unwrap_or(0.0);
        t.add_row(vec![
            c.to_string(),
            table::ms(p),
            table::pct(100.0 * p / prefill_sum.max(f64::MIN_POSITIVE)),
            table::ms(d),
            table::pct(100.0 * d / decode_sum.max(f64::MIN_POSITIVE)),
        ]);
    }
    println!("{t}");
    say!("priced by: {}", table::provenance(&r.provenance));
    say!(
        "time to first token (prefill, in the engine): {} ms · {:.0} prompt tokens/s · through the API server {} ms more (serve-sim counts it)",
        table::ms(r.prefill_ms),
        r.prefill_tokens_per_s,
        table::ms(r.api_server_ms)
    );
    say!(
        "decode step: {} ms median (first {}, last {}; {} steps after the prefill) · {:.0} tokens/s while decoding",
        table::ms(r.decode_ms),
        table::ms(r.decode_first_ms),
        table::ms(r.decode_last_ms),
        r.output_len - 1,
        r.decode_tokens_per_s
    );
    say!("total: {} ms for {} generated tokens · {:.0} tokens/s", table::ms(r.total_ms), r.batch * r.output_len, r.tokens_per_s);
    if let Some(link) = r.interconnect {
        say!("communication: {} ms, {} of total (collectives over {link})", table::ms(r.comm_ms), table::pct(100.0 * r.comm_share));
    }
    say!(
        "memory per GPU: weights {:.1} GB + KV cache {:.1} GB + activations {:.1} GB{} + runtime {:.1} GB = {:.1} GB ({} of the {:.0} GiB)",
        r.weight_gb,
        r.kv_cache_gb,
        r.activation_gb,
        linear_state(r.linear_state_gb, 0),
        r.runtime_gb,
        r.memory_gb,
        table::pct(100.0 * r.memory_fraction),
        r.gpu_memory_gb * 1e9 / (1u64 << 30) as f64
    );
    if let (Some(usd), Some(per_usd)) = (r.usd_per_hour, r.tokens_per_usd) {
        say!("cost: ${}/hour for {} GPU(s) → {} tokens per $ (${} per million tokens)", table::usd(usd), r.tp, table::significant(per_usd, 0), table::usd(1e6 / per_usd));
    }
    if let Some(source) = &r.price_source {
        say!("price: {source}");
    }
    for u in &r.unpriced {
        say!("unpriced: {u}");
    }
}

/// The linear-attention state's term of a memory line (for `seqs` sequences, where known),
/// empty for models without it.
pub(crate) fn linear_state(gb: f64, seqs: u64) -> String {
    match (gb > 0.0, seqs) {
        (false, _) => String::new(),
        (true, 0) => format!(" + linear-attention state {gb:.1} GB"),
        (true, n) => format!(" + linear-attention state {gb:.1} GB ({n} sequences)"),
    }
}
