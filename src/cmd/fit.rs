//! `wavecast fit` (formerly `train`): fit a learned predictor on per-op measurements, on all GPUs and (unless
//! `--no-holdout`) once per left-out GPU, and report its own held-out error. The training is
//! `wavecast-train`'s; this module reads the arguments, writes the weights and prints.

use super::{check_output_path, write_atomically, Result};
use crate::cli::FitArgs;
use crate::table;
use wavecast::Catalog;

pub fn run(a: FitArgs) -> Result<()> {
    check_output_path(&a.out, a.force)?;
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    if a.predictor == "sustained" {
        return sustained(&a, &cat);
    }
    if a.predictor == "ladder" {
        return ladder(&a, &cat);
    }
    let kind = wavecast_train::trainable(&a.predictor)?;
    let samples = wavecast_train::load_samples(&a.data, &cat, &|line| eprintln!("{line}"))?;
    let trained = wavecast_train::train(kind, &samples, &a.data, &cat, a.seed, !a.no_holdout, true)?;
    write_atomically(&a.out, &serde_json::to_string(&trained.weights)?)?;
    eprintln!("wrote {} ({} models)", a.out.display(), trained.models());
    if !trained.validation.is_empty() {
        println!("validation: each GPU predicted by the model trained without it (isolated latency)");
        table::print_family_errors(&trained.validation);
    }
    Ok(())
}

/// The sustained roofline on modern-GPU measurements (AIConfigurator, Vidur, PipeWeave): its
/// numbers fitted on every GPU of `--data` (`eval ops` refits without the GPU it tests).
fn sustained(a: &FitArgs, cat: &Catalog) -> Result<()> {
    let loaded = wavecast_data::load_timings(&a.data, cat)?;
    eprintln!("{}: {}", a.data.display(), loaded.summary());
    let model = wavecast_predict::sustained::fit(&loaded.rows, cat, None, &Default::default())?;
    write_atomically(&a.out, &serde_json::to_string_pretty(&model)?)?;
    eprintln!("wrote {} ({} keys, fitted on {})", a.out.display(), model.keys().len(), model.trained_on.join(", "));
    Ok(())
}

/// The price ladder's shipped surfaces on modern-GPU measurements: every measured table
/// reduced against the shipped sustained numbers, with each surface's held-out error.
fn ladder(a: &FitArgs, cat: &Catalog) -> Result<()> {
    let loaded = wavecast_data::load_timings(&a.data, cat)?;
    eprintln!("{}: {}", a.data.display(), loaded.summary());
    let fitted = wavecast_train::ladder::fit(&loaded.rows, cat, &wavecast_predict::sustained::Model::shipped());
    for (reason, n) in &fitted.skipped {
        eprintln!("  {n} rows skipped: {reason}");
    }
    let text = serde_json::to_string(&fitted.surfaces)?;
    write_atomically(&a.out, &text)?;
    let knots: usize = fitted.surfaces.surfaces.iter().map(|s| s.knots.len()).sum();
    eprintln!("wrote {} ({} surfaces, {knots} numbers, {} bytes; fitted on {})", a.out.display(), fitted.surfaces.surfaces.len(), text.len(), fitted.surfaces.trained_on.join(", "));
    println!("held-out tenth of each GPU's shapes, priced from its surface fitted on the rest");
    table::print_surface_errors(&fitted.held_out);
    Ok(())
}
