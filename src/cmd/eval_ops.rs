//! `wavecast eval ops`: per-op accuracy by family on one held-out GPU.

use super::{check_output_path, print_json, Result};
use crate::cli::EvalOpsArgs;
use crate::table;
use wavecast::eval::ops::{evaluate, load_gpu_sets, write_rows_csv};
use wavecast::Catalog;

pub fn run(a: EvalOpsArgs) -> Result<()> {
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    let gpu = cat.get(&a.test_gpu)?.id.clone();
    wavecast::Predictors::without(&a.predictor, &gpu)?;
    if let Some(path) = &a.rows {
        // A rows file is the user's own output: overwriting it is what they asked for.
        check_output_path(path, true)?;
    }
    let sets = load_gpu_sets(&a.data, &cat, &gpu, &|line| eprintln!("{line}"))?;
    let (out, rows) = evaluate(&a.predictor, &gpu, &sets)?;
    if let Some(path) = &a.rows {
        write_rows_csv(path, &rows)?;
        eprintln!("wrote {} predicted rows to {}", rows.len(), path.display());
    }
    if out.sets.is_empty() {
        return Err(format!("no measurements of {gpu} under {}", a.data.join("ops").display()).into());
    }
    if a.json {
        return print_json(&out);
    }
    println!("predictor '{}' on {} (learned predictors: trained without this GPU)", out.predictor, out.test_gpu);
    table::print_family_errors(&out.sets.into_iter().collect::<Vec<_>>());
    Ok(())
}
