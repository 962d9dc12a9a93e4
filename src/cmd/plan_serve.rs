//! `wavecast plan serve`: serving deployments on N GPUs ranked by tokens/s per GPU within a
//! latency target, with the Pareto chart.

use super::{check_html, print_json, print_notes, write_html, Result};
use crate::cli::PlanServeArgs;
use crate::{plot, table};
use std::io::IsTerminal;

pub fn run(a: PlanServeArgs) -> Result<()> {
    check_html(&a.html)?;
    wavecast_ir::dim("--top", a.top as u64)?;
    let tty = std::io::stderr().is_terminal() && !a.json;
    let progress = |done: usize, total: usize| {
        if tty {
            eprint!("\rsimulating layout {done}/{total}…");
            if done == total {
                eprint!("\r\x1b[K");
            }
        }
    };
    let request = &a.req;
    let r = wavecast::plan_serve(request, &progress)?;
    print_notes(&r.notes);
    write_html(&a.html, wavecast::html::Kind::PlanServe, Some(request), &r)?;
    if let Some(path) = &a.svg {
        plot::pareto(&r, path)?;
        eprintln!("wrote {}", path.display());
    }
    if a.json {
        // `ranked` lists what the table would; `points` keeps every simulated point.
        let mut r = r;
        r.ranked.truncate(a.top);
        print_json(&r)?;
        // The object says why (`rejected`); the exit status says what the text answer does.
        return nothing_ranked(&r).map_or(Ok(()), |why| Err(why.into()));
    }
    let slo = |v: Option<f64>| v.map_or("none".to_string(), |x| format!("{x} ms"));
    say!(
        "{} on {} × {} · {} in + {} out · target TTFT {} and TPOT {} · {} · {} points simulated",
        r.model,
        r.gpus,
        r.gpu,
        r.input_len,
        r.output_len,
        slo(r.slo.ttft_ms),
        slo(r.slo.tpot_ms),
        r.backend,
        r.points.len()
    );
    let mut t = table::new(&["#", "layout", "mode", "users", "TTFT ms", "TPOT ms", "tok/s/GPU", "tok/s/user"]);
    for (i, p) in r.ranked.iter().take(a.top).enumerate() {
        t.add_row(vec![
            (i + 1).to_string(),
            // A layout that cannot use every GPU (tp1·pp2 on 3) says how many it does.
            if p.gpus_used < r.gpus { format!("{} ({} of {} GPUs)", p.layout, p.gpus_used, r.gpus) } else { p.layout.clone() },
            p.mode.to_string(),
            p.concurrency.to_string(),
            table::ms(p.ttft_ms),
            table::ms(p.tpot_ms),
            format!("{:.0}", p.tokens_per_s_per_gpu),
            format!("{:.1}", p.tokens_per_s_per_user),
        ]);
    }
    println!("{t}");
    if let Some(p) = r.ranked.iter().take(a.top).find(|p| p.copies > 1) {
        say!(
            "each row simulates one unit of its layout with its share of the users, times its copies, as if each client kept to one copy: {} is `serve-sim {} --concurrency {}` × {}; `serve-sim {} --concurrency {}` routes each request to the least loaded copy, which evens out their queues (TTFT up to about a quarter shorter where prompts queue)",
            p.layout, p.unit, p.unit_users, p.copies, p.pooled, p.concurrency
        );
    }
    for (reason, n) in &r.rejected {
        say!("set aside {n}: {reason}");
    }
    if let Some(why) = nothing_ranked(&r) {
        return Err(why.into());
    }
    Ok(())
}

/// Why no deployment is ranked (none serves the model, or none meets the target); `None` when
/// some is.
fn nothing_ranked(r: &wavecast::PlanServeReport) -> Option<String> {
    if r.points.is_empty() {
        // Memory advice only where memory is what set the layouts aside.
        let memory = r.rejected.iter().any(|(reason, _)| reason.contains("does not fit in memory") || reason.contains("KV cache holds"));
        let remedy = if memory { "; use more GPUs, a smaller format or a GPU with more memory" } else { "" };
        return Some(format!("no deployment of {} GPUs can serve {} (see the reasons set aside){remedy}", r.gpus, r.model));
    }
    r.ranked.is_empty().then(|| format!("no deployment of {} GPUs meets the target; relax --slo-ttft/--slo-tpot or use more GPUs", r.gpus))
}
