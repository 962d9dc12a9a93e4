//! `wavecast scale`: bring a PyTorch profiler trace from your GPU, get the time on others.

use super::{print_json, Result};
use crate::cli::ScaleArgs;
use crate::table;
use wavecast::ScaleReport;
use wavecast_trace::scale::{GammaSource, ScalePath};

pub fn run(a: ScaleArgs) -> Result<()> {
    let report = wavecast::scale(&a.req)?;
    if a.json {
        return print_json(&report);
    }
    print_report(&report);
    Ok(())
}

fn print_report(r: &ScaleReport) {
    say!(
        "trace {}: {} kernels, {} step{}, op shapes {}",
        r.trace,
        r.kernels,
        r.steps,
        if r.steps == 1 { "" } else { "s" },
        if r.shapes_recorded { "recorded" } else { "not recorded" }
    );
    let gamma = match r.gamma {
        GammaSource::Wavecast => "",
        GammaSource::Habitat => ", Habitat's γ",
    };
    say!(
        "origin {} ({}); method {} (wave form {}{gamma}{})",
        r.origin.gpu,
        r.origin.matched,
        r.method,
        r.wave_form,
        r.predictor.as_ref().map(|p| format!(", predictor {p}")).unwrap_or_default()
    );
    println!();
    print_classes(r);
    println!();
    print_comparison(r);
    if !r.kernel_rows.is_empty() {
        println!();
        print_kernels(r);
    }
    for d in &r.destinations {
        for (note, n) in &d.notes {
            say!("note ({}): {note} — {n} kernel{}", d.gpu, if *n == 1 { "" } else { "s" });
        }
    }
    if r.origin.transfer_ms > 0.0 {
        say!("memcpy/memset on the origin: {} ms, not included above", table::ms(r.origin.transfer_ms));
    }
}

/// Per kernel family: measured origin ms and predicted ms on each destination, per step.
fn print_classes(r: &ScaleReport) {
    let steps = r.steps as f64;
    let mut headers = vec!["class".to_string(), "kernels".to_string(), format!("{} ms", r.origin.gpu)];
    headers.extend(r.destinations.iter().map(|d| format!("{} ms", d.gpu)));
    let mut t = table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
    let Some(first) = r.destinations.first() else { return };
    for (i, c) in first.classes.iter().enumerate() {
        let mut row = vec![c.class.clone(), c.kernels.to_string(), table::ms(c.origin_ms / steps)];
        row.extend(r.destinations.iter().map(|d| table::ms(d.classes[i].dest_ms / steps)));
        t.add_row(row);
    }
    let mut total = vec!["total".to_string(), r.kernels.to_string(), table::ms(r.origin.per_step_ms)];
    total.extend(r.destinations.iter().map(|d| table::ms(d.per_step_ms)));
    t.add_row(total);
    println!("{t}");
    say!("times per step: origin measured (sum of kernel durations), others predicted");
}

/// The longest kernels one by one: measured on the origin, predicted on each destination.
fn print_kernels(r: &ScaleReport) {
    let mut headers = vec!["#".to_string(), "kernel".to_string(), "class".to_string(), "tile".to_string(), format!("{} µs", r.origin.gpu)];
    headers.extend(r.destinations.iter().map(|d| format!("{} µs", d.gpu)));
    let mut t = table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
    for k in &r.kernel_rows {
        let mut row = vec![k.index.to_string(), table::short_name(&k.name, 40), k.class.clone(), k.tile.clone().unwrap_or_else(|| "-".into()), format!("{:.2}", k.origin_us)];
        row.extend(k.destinations.iter().map(|d| format!("{:.2}{}", d.us, if d.path == ScalePath::Predictor { "*" } else { "" })));
        t.add_row(row);
    }
    println!("{t}");
    say!("per kernel, whole trace: origin measured, others predicted (* through the per-op predictor, else wave-scaled)");
}

fn print_comparison(r: &ScaleReport) {
    let mut t = table::new(&["GPU", "ms/step", "interval", "speedup", "steps/s", "$/h", "$ per 1k steps"]);
    let money = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into());
    let cents = |v: Option<f64>| v.map(table::usd).unwrap_or_else(|| "-".into());
    let o = &r.origin;
    let origin_rate = 1e3 / o.per_step_ms;
    t.add_row(vec![
        format!("{} (measured)", o.gpu),
        table::ms(o.per_step_ms),
        "-".into(),
        "1.00".into(),
        format!("{origin_rate:.2}"),
        money(o.usd_per_hour),
        cents(o.usd_per_hour.map(|p| p * 1000.0 / origin_rate / 3600.0)),
    ]);
    for d in &r.destinations {
        t.add_row(vec![
            d.gpu.clone(),
            table::ms(d.per_step_ms),
            format!("{}–{}", table::ms(d.interval_ms[0]), table::ms(d.interval_ms[1])),
            format!("{:.2}", d.speedup),
            format!("{:.2}", d.steps_per_s),
            money(d.usd_per_hour),
            cents(d.usd_per_1k_steps),
        ]);
    }
    println!("{t}");
    say!("interval: every kernel at the 10th / 90th percentile of its class's held-out scaling error (NeuSight's GPU pairs)");
}
