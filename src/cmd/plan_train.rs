//! `wavecast plan train`: layouts of a training run ranked by step time among those that fit.

use super::{check_html, print_json, write_html, Result};
use crate::cli::PlanTrainArgs;
use crate::table;

pub fn run(a: PlanTrainArgs) -> Result<()> {
    check_html(&a.html)?;
    let request = &a.req;
    let r = wavecast::plan_train(request)?;
    write_html(&a.html, wavecast::html::Kind::PlanTrain, Some(request), &r)?;
    if a.json {
        return print_json(&r);
    }
    let stack = request.stack.name();
    say!(
        "{} on {} × {} ({} node{}) · {} · global batch {} × seq {} · {} layouts priced, {} fit · stack: {stack} · predictor: {}",
        r.model,
        r.gpus,
        r.gpu,
        r.nodes,
        if r.nodes == 1 { "" } else { "s" },
        r.dtype,
        r.global_batch,
        r.seq,
        r.evaluated,
        r.fitting,
        r.predictor
    );
    let tokens = table::si(r.tokens);
    let days = format!("days for {tokens} tok");
    let cost = format!("cost for {tokens} tok");
    let mut t = table::new(&["#", "layout", "step ms", "MFU", "tok/s/GPU", "mem GB", &days, &cost]);
    for row in &r.rows {
        t.add_row(vec![
            row.rank.to_string(),
            row.layout.clone(),
            table::ms(row.step_ms),
            table::pct(100.0 * row.mfu),
            format!("{:.0}", row.tokens_per_s_per_gpu),
            format!("{:.1}{}", row.memory_gb, if row.near_memory_limit { " !" } else { "" }),
            table::significant(row.days, 1),
            row.cost_usd.map_or("–".into(), |c| format!("${}", table::si(c))),
        ]);
    }
    if !r.rows.is_empty() {
        println!("{t}");
    }
    if r.rows.iter().any(|row| row.near_memory_limit) {
        say!("! within {:.0} % of the GPU's memory: fits by the model, but close to the limit", 100.0 * wavecast_sim::train::NEAR_LIMIT_FRACTION);
    }
    for (reason, n) in &r.rejected {
        say!("set aside {n}: {reason}");
    }
    if r.rows.is_empty() {
        // Memory advice only where memory is what set the layouts aside.
        if r.rejected.keys().any(|reason| reason.contains("does not fit in memory")) {
            return Err(format!("no layout of {} GPUs fits {} in memory; try more GPUs, a smaller batch or sequence, or GPUs with more memory", r.gpus, r.model).into());
        }
        return Err(format!("no layout of {} GPUs can train {} (see the reasons above)", r.gpus, r.model).into());
    }
    Ok(())
}
