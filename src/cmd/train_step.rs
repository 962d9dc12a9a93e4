//! `wavecast predict --mode train` with layout flags: one multi-GPU training step, where its
//! time goes, its collectives and the memory of the most loaded GPU.

use super::{check_html, print_json, print_notes, write_html, Result};
use crate::cli::PredictArgs;
use crate::table;
use wavecast::TrainReport;

pub fn run(a: PredictArgs) -> Result<()> {
    check_html(&a.html)?;
    let step = wavecast::train_step(&a.req)?;
    print_notes(&step.notes);
    write_html(&a.html, wavecast::html::Kind::Train, Some(&a.req), &step.report)?;
    if a.json {
        return print_json(&step);
    }
    print_human(&step.report, a.req.stack.unwrap_or_default());
    Ok(())
}

fn print_human(r: &TrainReport, stack: wavecast::StackChoice) {
    let stack = stack.name();
    say!(
        "{} · {} × {} ({} node{} of {}) · {} · {} · global batch {} × seq {} = {} micro-batch{} of {} per pipeline · stack: {stack} · predictor: {}",
        r.model,
        r.gpus,
        r.gpu,
        r.nodes,
        if r.nodes == 1 { "" } else { "s" },
        r.gpus_per_node,
        r.layout_label,
        r.dtype_source,
        r.global_batch,
        r.seq,
        r.micro_batches,
        if r.micro_batches == 1 { "" } else { "es" },
        r.layout.micro_batch,
        r.predictor
    );
    let p = &r.parts;
    let mut t = table::new(&["step part", "ms", "share"]);
    let parts = [
        ("forward + backward (slowest stage)", p.compute_ms),
        ("  of which recomputation", p.recompute_ms),
        ("pipeline fill and drain", p.bubble_ms),
        ("pipeline send/recv", p.pipeline_comm_ms),
        ("data-parallel sync (exposed)", p.data_parallel_exposed_ms),
        ("optimizer step", p.optimizer_ms),
    ];
    for (name, ms) in parts {
        t.add_row(vec![name.to_string(), table::ms(ms), table::pct(100.0 * ms / r.step_ms)]);
    }
    println!("{t}");
    if !r.collectives.is_empty() {
        let mut c = table::new(&["collective", "axis", "group", "link", "calls/step", "bytes each", "wire ms"]);
        for row in &r.collectives {
            c.add_row(vec![
                format!("{:?}", row.kind),
                format!("{:?}", row.axis).to_lowercase(),
                row.group.to_string(),
                row.link.to_string(),
                row.calls.to_string(),
                table::si(row.bytes_each),
                table::ms(row.ms),
            ]);
        }
        println!("{c}");
    }
    let m = &r.memory_gb;
    say!(
        "memory per GPU (most loaded stage): {:.1} of {:.1} GB ({:.0} GiB){} — weights {:.1}, gradients {:.1}, optimizer {:.1}, master {:.1}, activations {:.1} ({} micro-batch{} in flight), buffers {:.1}",
        m.total,
        m.capacity,
        m.capacity_gib,
        if m.near_limit { format!(" (close to the limit: {:.1} GB free)", m.headroom) } else { format!(" ({:.1} GB free)", m.headroom) },
        m.parts.weights,
        m.parts.gradients,
        m.parts.optimizer_states,
        m.parts.master_weights,
        m.parts.activations,
        m.in_flight_micro_batches,
        if m.in_flight_micro_batches == 1 { "" } else { "es" },
        m.parts.buffers
    );
    say!("step time: {} ms · {:.0} tokens/s ({:.0} per GPU) · MFU {:.1}%", table::ms(r.step_ms), r.tokens_per_s, r.tokens_per_s_per_gpu, 100.0 * r.mfu);
    for u in &r.unpriced {
        say!("unpriced: {u}");
    }
}
