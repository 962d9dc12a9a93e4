//! `wavecast eval training`: published, measured training runs against the layout route.

use super::{print_json, Result};
use crate::cli::EvalTrainingArgs;
use crate::table;
use std::io::IsTerminal;
use wavecast::eval::training::eval_training;
use wavecast::Catalog;

pub fn run(a: EvalTrainingArgs) -> Result<()> {
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    let tty = std::io::stderr().is_terminal() && !a.json;
    let progress = |done: usize, total: usize| {
        if tty && (done.is_multiple_of(10) || done == total) {
            eprint!("\rreplaying run {done}/{total}…");
            if done == total {
                eprint!("\r\x1b[K");
            }
        }
    };
    let out = eval_training(&a.data, &cat, &a.predictor, &progress)?;
    if a.json {
        return print_json(&out);
    }
    say!(
        "{}: {} runs replayed, {} not · predictor: {} · tokens/s per GPU, error = (predicted − measured) / measured",
        a.data.display(),
        out.rows.len(),
        out.unreplayed.len(),
        out.predictor
    );
    if a.rows {
        let mut t = table::new(&["run", "model", "GPUs", "seq", "layout", "measured", "predicted", "error", "MFU", "mem GB", "headroom"]);
        for r in &out.rows {
            t.add_row(vec![
                r.id.clone(),
                r.model.clone(),
                format!("{}×{}", r.gpus, r.gpu),
                r.seq.to_string(),
                format!("{} {}", r.precision, r.layout),
                format!("{:.0}{}", r.measured_tokens_per_s_per_gpu, if r.measured_from == "tokens/s" { "" } else { "*" }),
                format!("{:.0}", r.predicted_tokens_per_s_per_gpu),
                format!("{:+.1}%", r.error_pct),
                table::pct(100.0 * r.predicted_mfu),
                format!("{:.1}/{:.0}", r.memory_gb, r.capacity_gb),
                table::pct(r.headroom_pct),
            ]);
        }
        println!("{t}");
        say!("* measured tokens/s derived from the source's TFLOP/s per GPU");
    }
    let mut t = table::new(&["band", "runs", "mean APE", "median APE", "mean error"]);
    for b in &out.bands {
        t.add_row(vec![b.band.clone(), b.n.to_string(), table::pct(b.mean_ape), table::pct(b.median_ape), format!("{:+.1}%", b.mean_error_pct)]);
    }
    println!("{t}");
    for u in &out.unreplayed {
        say!("not replayed {} ({}): {}", u.id, u.model, u.reason);
    }
    if !out.refused_as_too_big.is_empty() {
        say!("{} measured runs refused as not fitting in memory (they ran)", out.refused_as_too_big.len());
    }
    Ok(())
}
