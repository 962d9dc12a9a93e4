//! Per-kernel accuracy on modern GPUs (AIConfigurator, Vidur and PipeWeave measurements): every
//! measurement of the test GPU predicted by a model fitted on the other GPUs only — all of the
//! test GPU's rows, from every source and in every format, are left out of the fit.

use crate::EvalError;
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_data::Timing;
use wavecast_gpu::Catalog;
use wavecast_predict::sustained::{self, FitOptions, Model};
use wavecast_stats::{ape, rank_sorted, sorted, Summary};

/// Predictors `eval ops` runs on these layouts.
pub const PREDICTORS: [&str; 2] = ["sustained", "roofline"];

#[derive(Debug, Serialize)]
pub struct KernelFamilyError {
    pub family: String,
    pub dtype: String,
    #[serde(flatten)]
    pub stats: Summary,
    /// Median of predicted / measured − 1, in percent (positive = predicted too slow).
    pub median_bias: f64,
}

/// The `--json` output of `eval ops` on a modern-GPU layout (the NeuSight report's shape).
#[derive(Debug, Serialize)]
pub struct EvalKernels {
    pub predictor: String,
    pub test_gpu: String,
    /// Per source (`aiconfigurator`, `vidur`, `pipeweave`): errors by family and format.
    pub sets: BTreeMap<String, Vec<KernelFamilyError>>,
    /// GPUs the model was fitted on (never the test GPU).
    pub trained_on: Vec<String>,
    /// Rows of the test GPU that could not be priced, by reason.
    pub unpriced: BTreeMap<String, usize>,
}

/// One predicted row.
pub struct KernelPrediction<'a> {
    pub row: &'a Timing,
    pub predicted_s: f64,
}

/// Writes every predicted measurement as one CSV row.
pub fn write_rows_csv(path: &std::path::Path, preds: &[KernelPrediction]) -> Result<(), EvalError> {
    let cannot = |e: csv::Error| EvalError::Invalid(format!("cannot write {}: {e}", path.display()));
    let mut w = csv::Writer::from_path(path).map_err(cannot)?;
    w.write_record(["set", "family", "dtype", "shape", "gpu", "kernel", "measured_ms", "predicted_ms", "ape"]).map_err(cannot)?;
    for p in preds {
        let t = p.row;
        let measured_s = t.latency_ms * 1e-3;
        let record = [t.source.as_str().to_string(), t.shape.family(), t.precision.as_str().to_string(), t.shape.to_string(), t.gpu.clone(), t.kernel_source.clone(), format!("{:.6}", t.latency_ms), format!("{:.6}", p.predicted_s * 1e3), format!("{:.2}", ape(p.predicted_s, measured_s))];
        w.write_record(record).map_err(cannot)?;
    }
    w.flush().map_err(|e| EvalError::Invalid(format!("cannot write {}: {e}", path.display())))
}

/// Predicts every row of `test_gpu` in `rows` with `predictor` (`sustained`: fitted on the other
/// GPUs' rows; `roofline`: datasheet peak and bandwidth).
pub fn evaluate<'a>(rows: &'a [Timing], catalog: &Catalog, test_gpu: &str, predictor: &str) -> Result<(EvalKernels, Vec<KernelPrediction<'a>>), EvalError> {
    let gpu = catalog.get(test_gpu)?;
    let model = match predictor {
        // On these data the default predictor is its modern-GPU kernel model.
        "sustained" | "wavecast" => Some(sustained::fit(rows, catalog, Some(&gpu.id), &FitOptions::default())?),
        "roofline" => None,
        other => return Err(EvalError::Invalid(format!("predictor '{other}' has no model for these measurements (use one of: {})", PREDICTORS.join(", ")))),
    };
    let test_rows: Vec<&Timing> = rows.iter().filter(|t| t.gpu == gpu.id).collect();
    if test_rows.is_empty() {
        return Err(EvalError::Invalid(format!("no measurements of {} in these data", gpu.id)));
    }
    let mut unpriced: BTreeMap<String, usize> = BTreeMap::new();
    let mut predictions = Vec::new();
    for row in test_rows {
        let seconds = match &model {
            Some(m) => m.predict(row, gpu),
            None => Model::roofline(row, gpu),
        };
        match seconds {
            Ok(s) => predictions.push(KernelPrediction { row, predicted_s: s }),
            Err(reason) => *unpriced.entry(reason).or_default() += 1,
        }
    }
    let name = if predictor == "wavecast" { "sustained" } else { predictor };
    let report = EvalKernels { predictor: name.to_string(), test_gpu: gpu.id.clone(), sets: errors_by_set(&predictions), trained_on: model.map(|m| m.trained_on).unwrap_or_default(), unpriced };
    Ok((report, predictions))
}

fn errors_by_set(predictions: &[KernelPrediction]) -> BTreeMap<String, Vec<KernelFamilyError>> {
    let mut by: BTreeMap<(&str, String, &str), Vec<&KernelPrediction>> = BTreeMap::new();
    for p in predictions {
        by.entry((p.row.source.as_str(), p.row.shape.family(), p.row.precision.as_str())).or_default().push(p);
    }
    let mut sets: BTreeMap<String, Vec<KernelFamilyError>> = BTreeMap::new();
    for ((set, family, dtype), v) in by {
        let apes: Vec<f64> = v.iter().map(|p| ape(p.predicted_s, p.row.latency_ms * 1e-3)).collect();
        let ratios = sorted(&v.iter().map(|p| p.predicted_s / (p.row.latency_ms * 1e-3)).collect::<Vec<_>>());
        let median_bias = (rank_sorted(&ratios, 0.5).unwrap_or(1.0) - 1.0) * 100.0;
        sets.entry(set.to_string()).or_default().push(KernelFamilyError { family, dtype: dtype.to_string(), stats: Summary::of(&apes), median_bias });
    }
    sets
}
