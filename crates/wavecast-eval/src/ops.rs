//! Per-op accuracy by op family on one GPU, as the model trained without that GPU predicts its
//! measured ops (NeuSight's `ops/train` random shapes and `ops/test` model-shaped ones, and the
//! AMD GPUs' `amd_ops/` counterparts).

use crate::EvalError;
use serde::Serialize;
use std::path::Path;
use wavecast_gpu::Catalog;
use wavecast_stats::{ape, decile_interval, rank_sorted, sorted, Summary};
use std::collections::BTreeMap;
use wavecast_data::{load_neusight_dir, op_sets};
use wavecast_predict::physics::Family;
use wavecast_predict::sample::{samples, Sample};
use wavecast_predict::ladder::fp32::Fp32Baselines;
use wavecast_predict::ladder::LadderOps;
use wavecast_predict::{Estimate, Predictor};

#[derive(Serialize)]
pub struct FamilyError {
    pub family: Family,
    /// The format the ops ran in (`fp32` on NeuSight's data), as the modern-GPU report names it.
    pub dtype: String,
    #[serde(flatten)]
    pub stats: Summary,
    /// Median of predicted / measured − 1, in percent: the systematic part of the error
    /// (positive = predicted too slow).
    pub median_bias: f64,
    /// The naive transfers from the most similar other measured GPU, on the rows they price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baselines: Option<FamilyBaselines>,
}

/// The naive transfers beside one family's figure (`eval ops --data NEUSIGHT_DIR`).
#[derive(Serialize)]
pub struct FamilyBaselines {
    /// The GPU most of the rows were copied from.
    pub from: String,
    /// Rows every method priced.
    pub rows: u32,
    /// The predictor's mean APE on those rows.
    pub mean_ape: f64,
    /// That GPU's measured (interpolated) time copied.
    pub copy_nearest_mape: f64,
    /// That time times roofline(test GPU) / roofline(that GPU).
    pub roofline_ratio_mape: f64,
}

/// One predicted measurement (the rows `eval ops --rows FILE` writes).
pub struct RowPrediction<'a> {
    pub set: &'a str,
    pub sample: &'a Sample,
    pub predicted_s: f64,
    /// The naive transfers for the row (isolated seconds).
    pub baselines: Option<Fp32Baselines>,
}

/// The `--json` output of `eval ops`.
#[derive(Serialize)]
pub struct EvalOps {
    pub predictor: String,
    pub test_gpu: String,
    /// Whether the GPU was predicted by a model trained without its measurements (always, unless
    /// `--no-holdout` asked for the model that learned from them).
    pub holdout: bool,
    /// Rows of the test GPU per set: `ops/train` and `amd_ops/train` (random shapes), `ops/test`
    /// and `amd_ops/test` (model-shaped).
    pub sets: BTreeMap<String, Vec<FamilyError>>,
}

/// APE statistics per family of `predictor` on `rows` (isolated latency).
pub fn family_errors(rows: &[&Sample], predictor: &dyn Predictor) -> Vec<FamilyError> {
    errors_of(&predictions("", rows, predictor))
}

pub fn predictions<'a>(set: &'a str, rows: &[&'a Sample], predictor: &dyn Predictor) -> Vec<RowPrediction<'a>> {
    rows.iter()
        .filter_map(|s| match predictor.predict(&s.op, &s.gpu, &wavecast_predict::Context::ISOLATED) {
            Estimate::Time(t) => Some(RowPrediction { set, sample: s, predicted_s: t.seconds, baselines: None }),
            Estimate::Unpriced(_) => None,
        })
        .collect()
}

fn errors_of(preds: &[RowPrediction]) -> Vec<FamilyError> {
    let mut by: BTreeMap<(Family, &'static str), Vec<&RowPrediction>> = BTreeMap::new();
    for p in preds {
        by.entry((p.sample.family, p.sample.op.dtype().as_str())).or_default().push(p);
    }
    by.into_iter()
        .map(|((family, dtype), v)| {
            let apes: Vec<f64> = v.iter().map(|p| ape(p.predicted_s, p.sample.latency_s)).collect();
            let ratios = sorted(&v.iter().map(|p| p.predicted_s / p.sample.latency_s).collect::<Vec<_>>());
            FamilyError { family, dtype: dtype.to_string(), stats: Summary::of(&apes), median_bias: (rank_sorted(&ratios, 0.5).unwrap_or(1.0) - 1.0) * 100.0, baselines: family_baselines(&v) }
        })
        .collect()
}

/// The naive transfers on the rows of `v` that have them (`None` when none has).
fn family_baselines(v: &[&RowPrediction]) -> Option<FamilyBaselines> {
    let with: Vec<(&RowPrediction, &Fp32Baselines)> = v.iter().filter_map(|p| Some((*p, p.baselines.as_ref()?))).collect();
    if with.is_empty() {
        return None;
    }
    let mut from: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, b) in &with {
        *from.entry(b.from.as_str()).or_default() += 1;
    }
    let mape = |f: &dyn Fn(&RowPrediction, &Fp32Baselines) -> f64| Summary::of(&with.iter().map(|(p, b)| ape(f(p, b), p.sample.latency_s)).collect::<Vec<_>>()).mean_ape;
    Some(FamilyBaselines {
        from: from.into_iter().max_by_key(|(_, n)| *n).map(|(g, _)| g.to_string()).unwrap_or_default(),
        rows: with.len() as u32,
        mean_ape: mape(&|p, _| p.predicted_s),
        copy_nearest_mape: mape(&|_, b| b.copy),
        roofline_ratio_mape: mape(&|_, b| b.roofline_ratio),
    })
}

/// Sets each prediction's naive transfers from `ladder`'s tables (which never hold the test
/// GPU's rows).
fn with_baselines(preds: &mut [RowPrediction], ladder: &LadderOps) {
    for p in preds {
        p.baselines = ladder.fp32_baselines(&p.sample.op, &p.sample.gpu);
    }
}

/// Writes every predicted measurement as one CSV row.
pub fn write_rows_csv(path: &Path, preds: &[RowPrediction]) -> Result<(), EvalError> {
    let cannot = |e: csv::Error| EvalError::Invalid(format!("cannot write {}: {e}", path.display()));
    let mut w = csv::Writer::from_path(path).map_err(cannot)?;
    w.write_record(["set", "family", "op", "gpu", "kernel", "measured_ms", "predicted_ms", "ape"]).map_err(cannot)?;
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
        ])
        .map_err(cannot)?;
    }
    w.flush().map_err(|e| EvalError::Invalid(format!("cannot write {}: {e}", path.display())))?;
    Ok(())
}

/// The measurements of `gpu` in each per-op set under `data` (`ops/train`, `ops/test` and the AMD
/// GPUs' `amd_ops/…`), as (set name, samples); sets without rows of `gpu` are left out. Loading
/// summaries go to `log`.
pub fn load_gpu_sets(data: &Path, cat: &Catalog, gpu: &str, log: &dyn Fn(&str)) -> Result<Vec<(String, Vec<Sample>)>, EvalError> {
    let mut loaded = Vec::new();
    for set in op_sets(data) {
        let report = load_neusight_dir(&set.dir, cat)?;
        log(&format!("{}: {}", set.name, report.summary()));
        let rows: Vec<Sample> = samples(&report.rows, cat)
            .into_iter()
            .filter(|s| s.gpu.id == gpu)
            .map(|s| Sample { model_shaped: set.model_shaped, ..s })
            .collect();
        if rows.is_empty() {
            log(&format!("{}: no rows for {gpu}", set.name));
            continue;
        }
        loaded.push((set.name.to_string(), rows));
    }
    Ok(loaded)
}

/// Per-op accuracy on `test_gpu` of predictor `name` — its model trained without that GPU, or
/// when `holdout` is false its all-GPU model (which may have learned from these very rows) —
/// and every prediction made, per set. With `tables` (a NeuSight data folder), the price
/// ladder reads its tables there (never the test GPU's rows when `holdout`), and every family
/// gets the naive transfers from the most similar other GPU beside it.
pub fn evaluate<'a>(name: &str, test_gpu: &str, sets: &'a [(String, Vec<Sample>)], holdout: bool, tables: Option<&Path>) -> Result<(EvalOps, Vec<RowPrediction<'a>>), EvalError> {
    let predictor = wavecast_predict::by_name_with(name, holdout.then_some(test_gpu), tables)?;
    let transfers = tables.map(|t| LadderOps::load(Some(t), Some(test_gpu))).transpose().map_err(EvalError::Invalid)?;
    let mut out = BTreeMap::new();
    let mut all_preds = Vec::new();
    for (set, rows) in sets {
        let refs: Vec<&Sample> = rows.iter().collect();
        let mut preds = predictions(set, &refs, predictor.as_ref());
        if let Some(ladder) = &transfers {
            with_baselines(&mut preds, ladder);
        }
        out.insert(set.clone(), errors_of(&preds));
        all_preds.extend(preds);
    }
    Ok((EvalOps { predictor: predictor.name().to_string(), test_gpu: test_gpu.to_string(), holdout, sets: out }, all_preds))
}

/// Per family, the 10th and 90th percentiles of ln(measured / predicted) over every GPU under
/// `data`, each GPU predicted by predictor `name`'s model trained without it: the interval a
/// predictor without one of its own is given (`wavecast-predict/weights/intervals.json`).
pub fn held_out_intervals(data: &Path, cat: &Catalog, name: &str, log: &dyn Fn(&str)) -> Result<BTreeMap<Family, [f64; 2]>, EvalError> {
    let mut residuals: BTreeMap<Family, Vec<f64>> = BTreeMap::new();
    for gpu in measured_gpus(data, cat)? {
        log(&format!("{name}: predicting {gpu} without its measurements"));
        let sets = load_gpu_sets(data, cat, &gpu, &|_| {})?;
        let (_, preds) = evaluate(name, &gpu, &sets, true, None)?;
        for p in preds.iter().filter(|p| p.predicted_s > 0.0) {
            residuals.entry(p.sample.family).or_default().push((p.sample.latency_s / p.predicted_s).ln());
        }
    }
    if residuals.is_empty() {
        return Err(format!("no per-op measurements under {}", data.join("ops").display()).into());
    }
    Ok(residuals.into_iter().map(|(family, r)| (family, decile_interval(&r))).collect())
}

/// The catalog GPUs with random-shape per-op measurements under `data` (`ops/train`,
/// `amd_ops/train`), in catalog order.
fn measured_gpus(data: &Path, cat: &Catalog) -> Result<Vec<String>, EvalError> {
    let mut gpus = Vec::new();
    for set in op_sets(data).into_iter().filter(|s| !s.model_shaped) {
        let report = load_neusight_dir(&set.dir, cat)?;
        gpus.extend(samples(&report.rows, cat).into_iter().map(|s| s.gpu.id));
    }
    gpus.sort_by_key(|g| cat.all().iter().position(|c| &c.id == g));
    gpus.dedup();
    Ok(gpus)
}
