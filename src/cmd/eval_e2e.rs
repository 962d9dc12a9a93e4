//! `wavecast eval e2e`: end-to-end error of a predictor on every labelled workload.

use super::{check_html, print_json, write_html, Result};
use crate::cli::EvalE2eArgs;
use crate::table;
use wavecast::eval::e2e::{evaluate, is_transfer_baseline, BaselineStats, EvalE2e};
use wavecast::{Catalog, Predictors};

pub fn run(a: EvalE2eArgs) -> Result<()> {
    check_html(&a.html)?;
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    Predictors::get(&a.predictor)?;
    let r = evaluate(&a.data, &cat, &a.predictor, a.no_holdout)?;
    write_html(&a.html, wavecast::html::Kind::EvalE2e, None, &r)?;
    if a.json {
        return print_json(&r);
    }
    print_human(&r);
    Ok(())
}

fn print_baselines(r: &EvalE2e, rows: &[&BaselineStats], title: &str) {
    if rows.is_empty() {
        return;
    }
    let mut t = table::new(&["GPU", "method", "rows", "their mean APE", &format!("{} on same rows", r.predictor)]);
    for b in rows {
        t.add_row(vec![b.gpu.clone(), b.method.to_string(), b.n.to_string(), table::pct(b.mean_ape), table::pct(b.ours_mean_ape)]);
    }
    println!("{title}");
    println!("{t}");
}

fn print_human(r: &EvalE2e) {
    let mut t = table::new(&["GPU", "workload", "measured ms", "predicted ms", "APE"]);
    for w in &r.workloads {
        t.add_row(vec![w.gpu.clone(), w.workload.clone(), table::ms(w.measured_ms), table::ms(w.predicted_ms), table::pct(w.ape)]);
    }
    println!("{t}");
    let mut t = table::new(&["GPU", "n", "mean APE", "median", "max"]);
    for g in &r.per_gpu {
        t.add_row(vec![g.gpu.clone(), g.n.to_string(), table::pct(g.mean_ape), table::pct(g.median_ape), table::pct(g.max_ape)]);
    }
    for m in &r.per_mode {
        t.add_row(vec![format!("all {}", m.mode), m.n.to_string(), table::pct(m.mean_ape), table::pct(m.median_ape), table::pct(m.max_ape)]);
    }
    let o = &r.overall;
    t.add_row(vec!["overall".into(), o.n.to_string(), table::pct(o.mean_ape), table::pct(o.median_ape), table::pct(o.max_ape)]);
    let how = if r.holdout { "each GPU predicted by the model trained without its measurements" } else { "all-GPU model" };
    println!("predictor '{}' ({how}): absolute percentage error of end-to-end time", r.predictor);
    println!("{t}");
    let (transfers, published): (Vec<&BaselineStats>, Vec<&BaselineStats>) = r.baselines.iter().partition(|b| is_transfer_baseline(b.method));
    print_baselines(r, &published, "published predictions (paper_predictions.csv) on the same workloads:");
    print_baselines(r, &transfers, "naive transfers from the most similar other GPU with per-op measurements (its FP32 op times copied, or scaled by the roofline ratio; ops it has no table for as the ladder prices them), same workloads:");
    if !r.unpredicted.is_empty() {
        println!("not predicted ({}):", r.unpredicted.len());
        for u in &r.unpredicted {
            println!("  {} {}: {}", u.gpu, u.workload, u.reason);
        }
    }
}
