//! `wavecast eval ops`: per-op accuracy by family on one held-out GPU.

use super::{check_html, check_output_path, print_json, write_html, Result};
use crate::cli::EvalOpsArgs;
use crate::table;
use wavecast::eval::kernels;
use wavecast::eval::ops::{evaluate, load_gpu_sets, write_rows_csv};
use wavecast::Catalog;
use wavecast_data::{load_timings, Layout};

pub fn run(a: EvalOpsArgs) -> Result<()> {
    check_html(&a.html)?;
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    let gpu = cat.get(&a.test_gpu)?.id.clone();
    if let Some(path) = &a.rows {
        // A rows file is the user's own output: overwriting it is what they asked for.
        check_output_path(path, true)?;
    }
    if a.against.is_some() && a.predictor != "ladder" {
        return Err("--against compares two collections through the price ladder: give --predictor ladder".into());
    }
    if Layout::detect(&a.data) != Some(Layout::NeuSight) {
        if a.no_holdout {
            return Err("--no-holdout applies to NeuSight's data; the modern-GPU models are always refitted without the test GPU".into());
        }
        return modern_gpus(&a, &cat, &gpu);
    }
    if a.no_holdout {
        wavecast::Predictors::get(&a.predictor)?;
    } else {
        wavecast::Predictors::without(&a.predictor, &gpu)?;
    }
    let sets = load_gpu_sets(&a.data, &cat, &gpu, &|line| eprintln!("{line}"))?;
    let (out, rows) = evaluate(&a.predictor, &gpu, &sets, !a.no_holdout, Some(a.data.as_path()))?;
    if let Some(path) = &a.rows {
        write_rows_csv(path, &rows)?;
        eprintln!("wrote {} predicted rows to {}", rows.len(), path.display());
    }
    if out.sets.is_empty() {
        return Err(format!("no measurements of {gpu} under {}", a.data.join("ops").display()).into());
    }
    write_html(&a.html, wavecast::html::Kind::EvalOps, None, &out)?;
    if a.json {
        return print_json(&out);
    }
    let model = if out.holdout { "learned predictors: trained without this GPU" } else { "all-GPU model: may have learned from these rows" };
    println!("predictor '{}' on {} ({model})", out.predictor, out.test_gpu);
    table::print_family_errors(&out.sets.into_iter().collect::<Vec<_>>());
    Ok(())
}

/// AIConfigurator, Vidur and PipeWeave data (or a folder holding several): BF16/FP8/FP4
/// kernels, the sustained roofline fitted without the test GPU.
fn modern_gpus(a: &EvalOpsArgs, cat: &Catalog, gpu: &str) -> Result<()> {
    let loaded = load_timings(&a.data, cat)?;
    eprintln!("{}: {}", a.data.display(), loaded.summary());
    if a.predictor == "ladder" {
        return ladder(a, &loaded.rows, cat, gpu);
    }
    let (out, rows) = kernels::evaluate(&loaded.rows, cat, gpu, &a.predictor)?;
    write_html(&a.html, wavecast::html::Kind::EvalOps, None, &out)?;
    if let Some(path) = &a.rows {
        kernels::write_rows_csv(path, &rows)?;
        eprintln!("wrote {} predicted rows to {}", rows.len(), path.display());
    }
    if a.json {
        return print_json(&out);
    }
    println!("predictor '{}' on {} (fitted on {}; never on this GPU)", out.predictor, out.test_gpu, if out.trained_on.is_empty() { "nothing: datasheet figures".to_string() } else { out.trained_on.join(", ") });
    table::print_kernel_errors(&out.sets);
    for (reason, n) in &out.unpriced {
        eprintln!("  {n} rows not priced: {reason}");
    }
    Ok(())
}

/// The price ladder with `gpu` left out of everything, beside the naive baselines.
fn ladder(a: &EvalOpsArgs, rows: &[wavecast_data::Timing], cat: &Catalog, gpu: &str) -> Result<()> {
    if let Some(dir) = &a.against {
        if a.rows.is_some() {
            return Err("--rows writes the rows of the left-out GPU; with --against the answer is the two collections' comparison: drop one of them".into());
        }
        return against(a, dir, rows, cat, gpu);
    }
    let other_engines = other_engines_rows(&a.data, cat, gpu)?;
    let (out, priced) = wavecast::eval::ladder::evaluate(rows, &other_engines, cat, gpu, &|line| eprintln!("{line}"))?;
    if let Some(path) = &a.rows {
        wavecast::eval::ladder::write_rows_csv(path, &priced)?;
        eprintln!("wrote {} priced rows to {}", priced.len(), path.display());
    }
    write_html(&a.html, wavecast::html::Kind::EvalOps, None, &out)?;
    if a.json {
        return print_json(&out);
    }
    println!("price ladder on {} (left out: its tables unused, transfer fitted without it; siblings: {})", out.test_gpu, out.measured_gpus.join(", "));
    table::print_ladder_families(&out);
    for (reason, n) in &out.unpriced {
        eprintln!("  {n} rows not priced: {reason}");
    }
    Ok(())
}

/// The test GPU's rows from the engines' collections that the default load leaves out (SGLang's
/// and TensorRT-LLM's where vLLM's answer), read one engine at a time so that only one
/// engine's tables of every GPU are held at once.
fn other_engines_rows(data: &std::path::Path, cat: &Catalog, gpu: &str) -> Result<Vec<wavecast_data::Timing>> {
    let id = &cat.get(gpu)?.id;
    let mut rows = Vec::new();
    for engine in wavecast_ir::Engine::ALL.iter().filter(|e| **e != wavecast_ir::Engine::DEFAULT) {
        let loaded = wavecast_data::load_timings_of(data, cat, wavecast_data::Engines::Only(engine.name()))?;
        rows.extend(loaded.rows.into_iter().filter(|t| &t.gpu == id));
    }
    Ok(rows)
}

/// `--against DIR`: the test GPU timed by two harnesses, shape by shape, and the ladder on the
/// second collection's rows.
fn against(a: &EvalOpsArgs, dir: &std::path::Path, rows: &[wavecast_data::Timing], cat: &Catalog, gpu: &str) -> Result<()> {
    let other = load_timings(dir, cat)?;
    eprintln!("{}: {}", dir.display(), other.summary());
    let out = wavecast::eval::harness::evaluate(rows, &other.rows, cat, gpu, &|line| eprintln!("{line}"))?;
    if a.json {
        return print_json(&out);
    }
    println!("{} timed by two harnesses: {} rows of {}, {} with an identical shape in {}", out.test_gpu, out.rows, dir.display(), out.matched, a.data.display());
    println!("{:<8} {:<10} {:>5} {:>8} {:>8} {:>8} {:>8}", "format", "first size", "rows", "median", "p10", "p90", "APE %");
    for b in out.by_format.iter().chain(&out.by_first_size) {
        println!("{:<8} {:<10} {:>5} {:>8.3} {:>8.3} {:>8.3} {:>8.1}", b.dtype, b.first_size, b.rows, b.median_ratio, b.p10_ratio, b.p90_ratio, b.mean_ape);
    }
    for (name, rung) in [("without its tables", &out.transfer), ("with its tables", &out.measured)] {
        for r in rung {
            println!("ladder {name}: {} mean APE {:.1} % (median {:.1}), {:.0} % in interval, mostly {}", r.dtype, r.stats.mean_ape, r.stats.median_ape, r.coverage, r.rung);
        }
    }
    Ok(())
}
