//! `wavecast eval serving`: measured serving runs under load against the simulator.

use super::{check_html, check_output_path, print_json, write_html, Result};
use crate::cli::EvalServingArgs;
use crate::table;
use std::io::IsTerminal;
use wavecast::eval::serving::{eval_serving, ServingEval};
use wavecast::Catalog;

pub fn run(a: EvalServingArgs) -> Result<()> {
    check_html(&a.html)?;
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    for path in [&a.rows, &a.plot].into_iter().flatten() {
        check_output_path(path, true)?;
    }
    let tty = std::io::stderr().is_terminal() && !a.json;
    let progress = |done: usize, total: usize| {
        if tty && (done.is_multiple_of(20) || done == total) {
            eprint!("\rreplaying row {done}/{total}…");
            if done == total {
                eprint!("\r\x1b[K");
            }
        }
    };
    let out = eval_serving(&a.data, a.configs.as_deref(), a.ops_data.as_deref(), &cat, &|line| eprintln!("{line}"), &progress)?;
    write_html(&a.html, wavecast::html::Kind::EvalServing, None, &out)?;
    if let Some(path) = &a.rows {
        write_rows(path, &out)?;
        eprintln!("wrote {} rows to {}", out.rows.len(), path.display());
    }
    if let Some(path) = &a.plot {
        crate::plot::serving_ttft(&out, path)?;
        eprintln!("wrote {}", path.display());
    }
    if a.json {
        return print_json(&out);
    }
    let models = if out.leave_one_gpu_out { "per-op models refitted without each row's GPU" } else { "shipped per-op models" };
    say!("{}: {} rows predicted, {} not · predictor: {} ({models}) · errors are absolute % of the measured mean", a.data.display(), out.rows.len(), out.unpredicted.len(), out.predictor);
    let mut t = table::new(&["group", "rows", "TTFT mean", "median", "p90", "TPOT mean", "median", "p90"]);
    for g in &out.summary {
        t.add_row(vec![
            g.group.clone(),
            g.n.to_string(),
            table::pct(g.ttft_mean_ape),
            table::pct(g.ttft_median_ape),
            table::pct(g.ttft_p90_ape),
            table::pct(g.tpot_mean_ape),
            table::pct(g.tpot_median_ape),
            table::pct(g.tpot_p90_ape),
        ]);
    }
    println!("{t}");
    // Reasons that differ only in their numbers are one line, with the numbers' range (each
    // row's own text is in --json).
    let mut reasons = wavecast_sim::reasons::SetAside::default();
    for u in &out.unpredicted {
        reasons.add(&u.reason);
    }
    for (reason, n) in reasons.into_counts() {
        say!("not predicted ({n}): {reason}");
    }
    Ok(())
}

fn write_rows(path: &std::path::Path, out: &ServingEval) -> Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    for r in &out.rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}
