//! `wavecast eval intervals`: the held-out intervals of predictors that return bare times
//! (`wavecast::eval::ops::held_out_intervals`), printed as JSON or written to `--out` (and printed
//! too with `--json`), which is how `crates/wavecast-predict/weights/intervals.json` is made.

use super::{check_html, check_output_path, print_json, write_atomically, write_html, Result};
use crate::cli::EvalIntervalsArgs;
use std::collections::BTreeMap;
use wavecast::eval::ops::held_out_intervals;
use wavecast::Catalog;

pub fn run(a: EvalIntervalsArgs) -> Result<()> {
    if let Some(out) = &a.out {
        check_output_path(out, a.force)?;
    }
    check_html(&a.html)?;
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    let mut all = BTreeMap::new();
    for name in &a.predictors {
        wavecast::Predictors::get(name)?;
        all.insert(name.clone(), held_out_intervals(&a.data, &cat, name, &|line| eprintln!("{line}"))?);
    }
    write_html(&a.html, wavecast::html::Kind::EvalIntervals, None, &all)?;
    if let Some(out) = &a.out {
        write_atomically(out, &(serde_json::to_string_pretty(&all)? + "\n"))?;
        eprintln!("wrote {}", out.display());
    }
    if a.out.is_none() || a.json {
        print_json(&all)?;
    }
    Ok(())
}
