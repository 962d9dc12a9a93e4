//! `wavecast serve-sim`: LLM serving under load, simulated iteration by iteration.

use super::{check_html, print_json, print_notes, write_html, Result};
use crate::cli::ServeSimArgs;
use crate::table;
use wavecast::ServeSimReport;
use wavecast_sim::serving::Latency;

pub fn run(a: ServeSimArgs) -> Result<()> {
    check_html(&a.html)?;
    let request = &a.req;
    let r = wavecast::serve_sim(request)?;
    print_notes(&r.notes);
    write_html(&a.html, wavecast::html::Kind::ServeSim, Some(request), &r)?;
    if a.json {
        return print_json(&r);
    }
    print_human(&r);
    Ok(())
}

fn latency_row(name: &str, l: &Latency) -> Vec<String> {
    vec![name.to_string(), table::ms(l.mean), table::ms(l.p50), table::ms(l.p90), table::ms(l.p99)]
}

fn print_human(r: &ServeSimReport) {
    let f = &r.formats;
    let quant = f.quant.map_or(String::new(), |q| format!(" · {} weights", q.as_str()));
    let moe = match (f.moe_quant, f.quant) {
        (Some(m), q) if Some(m) != q => format!(" · {} experts", m.as_str()),
        _ => String::new(),
    };
    say!(
        "{} ({} params, {} active) on {} × {} · {} · {}{quant}{moe} · {} KV · {} · {} requests · predictor: {}",
        r.model,
        table::si(r.params_total as f64),
        table::si(r.params_active as f64),
        r.gpus,
        r.gpu_name,
        r.layout,
        f.dtype,
        f.kv,
        r.backend,
        r.requests,
        r.predictor
    );
    let m = &r.metrics;
    let mut t = table::new(&["latency", "mean ms", "p50", "p90", "p99"]);
    t.add_row(latency_row("time to first token", &m.ttft_ms));
    // No request decodes past its first token: there is no time per output token (the JSON
    // reports 0, as serving benchmarks do), and no per-user decoding rate.
    let decodes = m.tpot_ms.mean > 0.0;
    if decodes {
        t.add_row(latency_row("time per output token", &m.tpot_ms));
    } else {
        t.add_row(["time per output token", "–", "–", "–", "–"].map(String::from).to_vec());
    }
    t.add_row(latency_row("end to end", &m.e2e_ms));
    println!("{t}");
    if !decodes {
        say!("time per output token: none, every request generates one token");
    }
    let per_user = if decodes { format!("{:.1} tokens/s per user", m.tokens_per_s_per_user) } else { "no decoding".into() };
    say!(
        "throughput: {} output tokens/s ({} per GPU) · {per_user} · {} requests/s over {:.1} s",
        table::significant(m.output_tokens_per_s, 0),
        table::significant(m.output_tokens_per_s_per_gpu, 0),
        table::significant(m.requests_per_s, 2),
        m.duration_s
    );
    if let (Some(g), Some(share)) = (m.goodput_requests_per_s, m.slo_attainment) {
        say!("goodput: {g:.2} requests/s meet the target ({})", table::pct(100.0 * share));
    }
    let e = &r.engine;
    say!(
        "engine: {} iterations · {:.0} tokens and {:.1} decoding sequences per iteration · {} preemption(s) · KV cache peak {}",
        e.iterations,
        e.mean_batch_tokens,
        e.mean_decode_seqs,
        e.preemptions,
        table::pct(100.0 * e.peak_kv_usage)
    );
    let d = &r.decode_step;
    say!(
        "decode step at {:.0} sequences: {} ms = layers {} + experts {} + attention {} + LM head {} + pipeline {} + engine {}",
        e.mean_decode_seqs.round().max(1.0),
        table::ms(d.total_ms()),
        table::ms(d.layers_ms),
        table::ms(d.experts_ms),
        table::ms(d.decode_attention_ms),
        table::ms(d.head_ms),
        table::ms(d.pipeline_ms),
        table::ms(d.overhead_ms)
    );
    let pools = if r.memory.len() == 2 { vec!["prefill GPU", "decode GPU"] } else { vec!["per GPU"] };
    for (name, w) in pools.iter().zip(&r.memory) {
        say!(
            "memory {name}: weights {:.1} GB + activations {:.1} GB{} + runtime {:.1} GB; KV cache {:.1} GB = {} tokens per worker",
            w.weights_gb,
            w.activations_gb,
            super::serve::linear_state(w.linear_state_gb, w.linear_state_seqs),
            w.runtime_gb,
            w.kv_cache_gb,
            table::si(w.kv_tokens as f64)
        );
    }
}
