//! `wavecast eval ops`: per-op accuracy by family on one held-out GPU.

use super::{catalog, print_json, Result};
use crate::cli::EvalOpsArgs;
use crate::cmd::eval_e2e::{ape, stats, Stats};
use crate::table;
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_data::load_neusight_dir;
use wavecast_predict::physics::Family;
use wavecast_predict::sample::{samples, Sample};
use wavecast_predict::{Estimate, Predictor};

#[derive(Serialize)]
pub struct FamilyError {
    pub family: Family,
    #[serde(flatten)]
    pub stats: Stats,
}

#[derive(Serialize)]
pub struct EvalOps {
    pub predictor: String,
    pub test_gpu: String,
    /// `ops/train` (random shapes) and `ops/test` (model-shaped) rows of the test GPU.
    pub sets: BTreeMap<String, Vec<FamilyError>>,
}

/// APE statistics per family of `predictor` on `rows` (isolated latency).
pub fn family_errors(rows: &[&Sample], predictor: &dyn Predictor) -> Vec<FamilyError> {
    let mut by: BTreeMap<Family, Vec<f64>> = BTreeMap::new();
    for s in rows {
        if let Estimate::Time(t) = predictor.predict_isolated(&s.op, &s.gpu) {
            by.entry(s.family).or_default().push(ape(t.seconds, s.latency_s));
        }
    }
    by.into_iter().map(|(family, v)| FamilyError { family, stats: stats(&v) }).collect()
}

pub fn print_family_table(sets: &[(String, Vec<FamilyError>)]) {
    let mut t = table::new(&["set", "family", "n", "mean APE", "median", "max"]);
    for (name, errs) in sets {
        for e in errs {
            t.add_row(vec![
                name.clone(),
                e.family.as_str().to_string(),
                e.stats.n.to_string(),
                table::pct(e.stats.mean_ape),
                table::pct(e.stats.median_ape),
                table::pct(e.stats.max_ape),
            ]);
        }
    }
    println!("{t}");
}

pub fn run(a: EvalOpsArgs) -> Result<()> {
    let cat = catalog(&a.gpu_file)?;
    let gpu = cat.get(&a.test_gpu)?.id.clone();
    let predictor = wavecast_predict::by_name_holdout(&a.predictor, Some(&gpu))?;
    let mut sets = BTreeMap::new();
    for set in ["train", "test"] {
        let dir = a.data.join("ops").join(set);
        let report = load_neusight_dir(&dir, &cat)?;
        eprintln!("ops/{set}: {}", report.summary());
        let rows: Vec<Sample> = samples(&report.rows, &cat).into_iter().filter(|s| s.gpu.id == gpu).collect();
        if rows.is_empty() {
            eprintln!("ops/{set}: no rows for {gpu}");
            continue;
        }
        let refs: Vec<&Sample> = rows.iter().collect();
        sets.insert(format!("ops/{set}"), family_errors(&refs, predictor.as_ref()));
    }
    if sets.is_empty() {
        return Err(format!("no measurements of {gpu} under {}", a.data.join("ops").display()).into());
    }
    let out = EvalOps { predictor: predictor.name().to_string(), test_gpu: gpu, sets };
    if a.json {
        return print_json(&out);
    }
    println!("predictor '{}' on {} (learned predictors: trained without this GPU)", out.predictor, out.test_gpu);
    let rows: Vec<(String, Vec<FamilyError>)> = out.sets.into_iter().collect();
    print_family_table(&rows);
    Ok(())
}
