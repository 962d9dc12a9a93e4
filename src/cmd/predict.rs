//! `wavecast predict`: one workload on one GPU, as a per-class table or `--json`.

use super::{check_html, print_json, print_notes, write_html, Result};
use crate::cli::PredictArgs;
use crate::table;
use wavecast::{ClassRow, Prediction};

pub fn run(a: PredictArgs) -> Result<()> {
    check_html(&a.html)?;
    let request = &a.req;
    let p = wavecast::predict(request)?;
    print_notes(wavecast::default_dtype_note(request).iter().chain(&p.notes));
    // A transformer's training step answers (JSON, page) with the layout route's report and
    // the per-op detail: one training route.
    if wavecast::trains_as_layout(request) && (a.json || a.html.html.is_some()) {
        let step = wavecast::train_step_given(request, Some(p.clone()))?;
        write_html(&a.html, wavecast::html::Kind::Predict, Some(request), &step)?;
        if a.json {
            return print_json(&step);
        }
    } else {
        write_html(&a.html, wavecast::html::Kind::Predict, Some(request), &p)?;
        if a.json {
            return print_json(&p);
        }
    }
    let gpu = wavecast::catalog(request.gpu_file.as_deref(), &request.price, std::slice::from_ref(&request.gpu))?.get(&request.gpu)?.clone();
    print_human(&p, &gpu);
    Ok(())
}

fn print_human(p: &Prediction, gpu: &wavecast::Gpu) {
    let shape = match &p.input {
        Some(input) => format!("batch {} × {input}", p.batch),
        None => format!("batch {} × seq {}", p.batch, p.seq),
    };
    say!("{} ({} params) · {} · {shape} · {} on {} · predictor: {}", p.model, table::si(p.params as f64), p.mode, p.dtype, gpu.name, p.predictor);
    let mut t = table::new(&["op class", "ops", "time ms", "share", "FLOP", "bytes", "TFLOP/s", "priced by"]);
    let mut classes: Vec<&ClassRow> = p.classes.iter().collect();
    classes.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    for c in classes {
        let achieved = if c.ms > 0.0 { c.flops / (c.ms / 1e3) / 1e12 } else { 0.0 };
        t.add_row(vec![
            c.class.to_string(),
            c.count.to_string(),
            table::ms(c.ms),
            table::pct(100.0 * c.share),
            table::si(c.flops),
            table::si(c.bytes),
            format!("{achieved:.1}"),
            table::provenance(&c.provenance),
        ]);
    }
    println!("{t}");
    let mut phases = vec![format!("forward {} ms", table::ms(p.phases.forward))];
    if let Some(b) = p.phases.backward {
        phases.push(format!("backward {} ms", table::ms(b)));
    }
    if let Some(o) = p.phases.optimizer {
        phases.push(format!("optimizer {} ms", table::ms(o)));
    }
    say!("phases: {}", phases.join(" · "));
    if let Some(m) = &p.memory_gb {
        let p = &m.parts;
        say!(
            "memory: {:.1} of {:.1} GB ({:.0} GiB){} — weights {:.1}, gradients {:.1}, optimizer {:.1}, master {:.1}, activations {:.1}, buffers {:.1}",
            m.total,
            m.capacity,
            m.capacity_gib,
            if m.near_limit { format!(" (close to the limit: {:.1} GB free)", m.headroom) } else { format!(" ({:.1} GB free)", m.headroom) },
            p.weights,
            p.gradients,
            p.optimizer_states,
            p.master_weights,
            p.activations,
            p.buffers
        );
    }
    let interval = if p.interval_ms[1] > p.interval_ms[0] {
        format!(" (interval {}–{} ms)", table::ms(p.interval_ms[0]), table::ms(p.interval_ms[1]))
    } else {
        String::new()
    };
    let price = gpu.price.as_ref().map(|p| p.usd_per_hour);
    match p.samples_per_s {
        Some(rate) => {
            say!("step time: {} ms{interval} · {rate:.1} samples/s", table::ms(p.total_ms));
            if let Some(usd) = price {
                say!("cost: ${}/GPU-hour → ${} per million samples", table::usd(usd), table::usd(usd / 3600.0 / rate * 1e6));
            }
        }
        None => {
            say!("step time: {} ms{interval} · {:.0} tokens/s", table::ms(p.total_ms), p.tokens_per_s);
            if let Some(usd) = price {
                say!("cost: ${}/GPU-hour → ${} per million tokens", table::usd(usd), table::usd(usd / 3600.0 / p.tokens_per_s * 1e6));
            }
        }
    }
    if let Some(price) = &gpu.price {
        say!("price: {}", price.describe());
    }
    for u in &p.unpriced {
        say!("unpriced: {u}");
    }
    for u in &p.unsupported {
        say!("unsupported ONNX op: {} ×{} (~{:.2}% of FLOPs, not in the time above)", u.op, u.count, 100.0 * u.share);
    }
}
