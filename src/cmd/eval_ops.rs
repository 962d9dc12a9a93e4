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
    /// Median of predicted / measured − 1, in percent: the systematic part of the error
    /// (positive = predicted too slow).
    pub median_bias: f64,
}

/// One predicted measurement, for `--rows`.
struct RowPrediction<'a> {
    set: &'a str,
    sample: &'a Sample,
    predicted_s: f64,
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
    errors_of(&predictions("", rows, predictor))
}

fn predictions<'a>(set: &'a str, rows: &[&'a Sample], predictor: &dyn Predictor) -> Vec<RowPrediction<'a>> {
    rows.iter()
        .filter_map(|s| match predictor.predict_isolated(&s.op, &s.gpu) {
            Estimate::Time(t) => Some(RowPrediction { set, sample: s, predicted_s: t.seconds }),
            Estimate::Unpriced(_) => None,
        })
        .collect()
}

fn errors_of(preds: &[RowPrediction]) -> Vec<FamilyError> {
    let mut by: BTreeMap<Family, Vec<&RowPrediction>> = BTreeMap::new();
    for p in preds {
        by.entry(p.sample.family).or_default().push(p);
    }
    by.into_iter()
        .map(|(family, v)| {
            let apes: Vec<f64> = v.iter().map(|p| ape(p.predicted_s, p.sample.latency_s)).collect();
            let mut ratios: Vec<f64> = v.iter().map(|p| p.predicted_s / p.sample.latency_s).collect();
            ratios.sort_by(f64::total_cmp);
            FamilyError { family, stats: stats(&apes), median_bias: (ratios[ratios.len() / 2] - 1.0) * 100.0 }
        })
        .collect()
}

fn write_rows_csv(path: &std::path::Path, preds: &[RowPrediction]) -> Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    w.write_record(["set", "family", "op", "gpu", "kernel", "measured_ms", "predicted_ms", "ape"])?;
    for p in preds {
        let s = p.sample;
        w.write_record([
            p.set.to_string(),
            s.family.as_str().to_string(),
            s.op.describe(),
            s.gpu.id.clone(),
            s.kernel.clone().unwrap_or_default(),
            format!("{:.6}", s.latency_s * 1e3),
            format!("{:.6}", p.predicted_s * 1e3),
            format!("{:.2}", ape(p.predicted_s, s.latency_s)),
        ])?;
    }
    w.flush()?;
    Ok(())
}

pub fn print_family_table(sets: &[(String, Vec<FamilyError>)]) {
    let mut t = table::new(&["set", "family", "n", "mean APE", "median", "max", "bias"]);
    for (name, errs) in sets {
        for e in errs {
            t.add_row(vec![
                name.clone(),
                e.family.as_str().to_string(),
                e.stats.n.to_string(),
                table::pct(e.stats.mean_ape),
                table::pct(e.stats.median_ape),
                table::pct(e.stats.max_ape),
                format!("{:+.1}%", e.median_bias),
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
    let mut loaded = Vec::new();
    for set in ["train", "test"] {
        let dir = a.data.join("ops").join(set);
        let report = load_neusight_dir(&dir, &cat)?;
        eprintln!("ops/{set}: {}", report.summary());
        let rows: Vec<Sample> = samples(&report.rows, &cat).into_iter().filter(|s| s.gpu.id == gpu).collect();
        if rows.is_empty() {
            eprintln!("ops/{set}: no rows for {gpu}");
            continue;
        }
        loaded.push((format!("ops/{set}"), rows));
    }
    let mut all_preds = Vec::new();
    for (name, rows) in &loaded {
        let refs: Vec<&Sample> = rows.iter().collect();
        let preds = predictions(name, &refs, predictor.as_ref());
        sets.insert(name.clone(), errors_of(&preds));
        all_preds.extend(preds);
    }
    if let Some(path) = &a.rows {
        write_rows_csv(path, &all_preds)?;
        eprintln!("wrote {} predicted rows to {}", all_preds.len(), path.display());
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
