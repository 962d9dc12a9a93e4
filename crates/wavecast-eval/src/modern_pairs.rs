//! Habitat's protocol on the modern-GPU measurements (`wavecast eval pairs --data` on
//! AIConfigurator, Vidur or PipeWeave data). Every GPU in turn is the origin ("the GPU you have")
//! and every other one the destination; for each kernel both measured — the same source, family,
//! format and shape — the destination's time is predicted as the origin's measurement times
//! predicted(destination) / predicted(origin), the per-op model fitted without the destination
//! (none of its rows, from any source or in any format) and asked about the origin's kernel on
//! both GPUs, so nothing of the destination is used but its datasheet. Where a GPU measured a
//! shape with several kernels (FlashAttention 2 and 3, say), its fastest is the op's time, the
//! one a serving engine would pick.

use crate::kernels::PREDICTORS;
use crate::EvalError;
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_data::Timing;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_predict::sustained::{self, FitOptions, Model};
use wavecast_stats::{ape, mean, Summary};

/// One ordered pair's error on one family and format.
#[derive(Debug, Serialize)]
pub struct PairError {
    pub origin: String,
    pub dest: String,
    pub family: String,
    pub dtype: String,
    #[serde(flatten)]
    pub stats: Summary,
}

/// One family and format over every ordered pair.
#[derive(Debug, Serialize)]
pub struct FamilyPairs {
    pub family: String,
    pub dtype: String,
    /// Ordered pairs with at least one shared kernel.
    pub pairs: usize,
    /// Every (pair, kernel) pooled.
    #[serde(flatten)]
    pub pooled: Summary,
    /// Mean over pairs of each pair's mean APE (Habitat's way of averaging).
    pub mean_of_pairs: f64,
}

/// The `--json` output of `eval pairs` on modern-GPU data.
#[derive(Debug, Serialize)]
pub struct ModernPairs {
    pub predictor: String,
    /// The GPUs that took part (each was origin and destination).
    pub gpus: Vec<String>,
    pub families: Vec<FamilyPairs>,
    /// Mean over every (ordered pair, family, format) of its mean APE.
    pub mean_of_pairs: f64,
    pub pairs: Vec<PairError>,
    /// Kernels that could not be carried over, by reason.
    pub unpriced: BTreeMap<String, usize>,
}

/// What makes two measurements the same op on two GPUs.
type OpKey = (&'static str, String, &'static str, String);

fn op_key(t: &Timing) -> OpKey {
    (t.source.as_str(), t.shape.family(), t.precision.as_str(), t.shape.to_string())
}

/// Per op, per GPU: the fastest measurement.
fn fastest_per_gpu(rows: &[Timing]) -> BTreeMap<OpKey, BTreeMap<&str, &Timing>> {
    let mut by: BTreeMap<OpKey, BTreeMap<&str, &Timing>> = BTreeMap::new();
    for t in rows {
        let slot = by.entry(op_key(t)).or_default().entry(t.gpu.as_str()).or_insert(t);
        if t.latency_ms < slot.latency_ms {
            *slot = t;
        }
    }
    by.retain(|_, per_gpu| per_gpu.len() >= 2);
    by
}

/// Seconds of the origin's kernel on `gpu` under `model` (`None`: the plain roofline).
fn predicted(model: Option<&Model>, row: &Timing, gpu: &Gpu) -> Result<f64, String> {
    let s = match model {
        Some(m) => m.predict(row, gpu)?,
        None => Model::roofline(row, gpu)?,
    };
    if s.is_finite() && s > 0.0 {
        Ok(s)
    } else {
        Err(format!("no finite positive time for {} {}", row.shape.family(), row.precision.as_str()))
    }
}

/// Every ordered pair of GPUs in `rows` with predictor `name` (`sustained`, its alias
/// `wavecast`, or `roofline`); `log` hears each refit.
pub fn evaluate(rows: &[Timing], catalog: &Catalog, name: &str, log: &dyn Fn(&str)) -> Result<ModernPairs, EvalError> {
    let fitted = match name {
        "sustained" | "wavecast" => true,
        "roofline" => false,
        other => return Err(EvalError::Invalid(format!("predictor '{other}' has no model for these measurements (use one of: {})", PREDICTORS.join(", ")))),
    };
    let ops = fastest_per_gpu(rows);
    let mut gpus: Vec<&str> = ops.values().flat_map(|per| per.keys().copied()).collect();
    gpus.sort_by_key(|g| catalog.all().iter().position(|c| c.id == *g));
    gpus.dedup();
    if gpus.len() < 2 {
        return Err(EvalError::Invalid("no kernel was measured on two GPUs in these data; pairs need at least two".into()));
    }
    let mut errors: BTreeMap<PairKey, Vec<f64>> = BTreeMap::new();
    let mut unpriced: BTreeMap<String, usize> = BTreeMap::new();
    for &dest in &gpus {
        let dest_gpu = catalog.get(dest)?;
        let model = if fitted {
            log(&format!("fitting without {dest}"));
            Some(sustained::fit(rows, catalog, Some(dest), &FitOptions::default())?)
        } else {
            None
        };
        for ((_, family, dtype, _), per_gpu) in &ops {
            let Some(target) = per_gpu.get(dest) else { continue };
            for (&origin, &row) in per_gpu.iter().filter(|(g, _)| **g != dest) {
                let origin_gpu = catalog.get(origin)?;
                match (predicted(model.as_ref(), row, dest_gpu), predicted(model.as_ref(), row, origin_gpu)) {
                    (Ok(d), Ok(o)) => {
                        let carried = row.latency_ms * d / o;
                        errors.entry((origin.to_string(), dest.to_string(), family.clone(), dtype)).or_default().push(ape(carried, target.latency_ms));
                    }
                    (Err(reason), _) | (_, Err(reason)) => *unpriced.entry(reason).or_default() += 1,
                }
            }
        }
    }
    if errors.is_empty() {
        let first = unpriced.keys().next().map(|r| format!(" (e.g. {r})")).unwrap_or_default();
        return Err(EvalError::Invalid(format!("no kernel could be carried between any two GPUs{first}")));
    }
    Ok(report(name, gpus, errors, unpriced))
}

type PairKey = (String, String, String, &'static str);

fn report(name: &str, gpus: Vec<&str>, errors: BTreeMap<PairKey, Vec<f64>>, unpriced: BTreeMap<String, usize>) -> ModernPairs {
    // Per family and format: every kernel's APE, and each pair's mean.
    type Errors = (Vec<f64>, Vec<f64>);
    let mut by_family: BTreeMap<(String, &'static str), Errors> = BTreeMap::new();
    for ((_, _, family, dtype), apes) in &errors {
        let (pooled, pair_means) = by_family.entry((family.clone(), dtype)).or_default();
        pooled.extend(apes);
        pair_means.push(mean(apes));
    }
    let families = by_family
        .into_iter()
        .map(|((family, dtype), (pooled, pair_means))| FamilyPairs {
            family,
            dtype: dtype.to_string(),
            pairs: pair_means.len(),
            pooled: Summary::of(&pooled),
            mean_of_pairs: mean(&pair_means),
        })
        .collect();
    let pairs: Vec<PairError> = errors
        .into_iter()
        .map(|((origin, dest, family, dtype), apes)| PairError { origin, dest, family, dtype: dtype.to_string(), stats: Summary::of(&apes) })
        .collect();
    let mean_of_pairs = mean(&pairs.iter().map(|p| p.stats.mean_ape).collect::<Vec<_>>());
    let predictor = if name == "wavecast" { "sustained" } else { name };
    ModernPairs { predictor: predictor.to_string(), gpus: gpus.into_iter().map(String::from).collect(), families, mean_of_pairs, pairs, unpriced }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use wavecast_data::load_timings;

    fn fixture_rows(cat: &Catalog) -> Vec<Timing> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/modern");
        load_timings(&dir, cat).unwrap().rows
    }

    #[test]
    fn the_roofline_carries_the_origin_time_by_the_ratio_of_the_two_roofs() {
        let cat = Catalog::builtin();
        let rows = fixture_rows(&cat);
        let r = evaluate(&rows, &cat, "roofline", &|_| {}).unwrap();
        assert_eq!(r.gpus, ["l40s", "h100-sxm", "b200"].map(String::from));
        assert!(r.pairs.iter().all(|p| p.origin != p.dest));
        // By hand for one shared BF16 GEMM: origin time × roofline(dest) / roofline(origin).
        let ops = fastest_per_gpu(&rows);
        let (key, per_gpu) = ops.iter().find(|(k, _)| k.1 == "gemm" && k.2 == "bf16").expect("a BF16 GEMM measured on two GPUs");
        let mut measured_on = per_gpu.keys();
        let (o, d) = (*measured_on.next().unwrap(), *measured_on.next().unwrap());
        let origin = per_gpu[o];
        let carried = origin.latency_ms * Model::roofline(origin, cat.get(d).unwrap()).unwrap() / Model::roofline(origin, cat.get(o).unwrap()).unwrap();
        let same_pair = ops.iter().filter(|(k, v)| k.1 == "gemm" && k.2 == "bf16" && v.contains_key(o) && v.contains_key(d)).count();
        let pair = r.pairs.iter().find(|p| p.origin == o && p.dest == d && p.family == "gemm" && p.dtype == "bf16").unwrap();
        assert_eq!((pair.stats.n, same_pair), (1, 1), "the fixture shares one BF16 GEMM per pair: {key:?}");
        assert!((pair.stats.mean_ape - ape(carried, per_gpu[d].latency_ms)).abs() < 1e-9);
    }

    /// Nothing measured on the destination but the compared kernel's own time enters: slowing
    /// every other destination row tenfold changes no carried prediction.
    #[test]
    fn the_destination_s_other_measurements_never_reach_its_prediction() {
        let cat = Catalog::builtin();
        let rows = fixture_rows(&cat);
        let shared: std::collections::BTreeSet<OpKey> = fastest_per_gpu(&rows).into_iter().filter(|(_, v)| v.contains_key("b200")).map(|(k, _)| k).collect();
        let poisoned: Vec<Timing> = rows
            .iter()
            .map(|t| if t.gpu == "b200" && !shared.contains(&op_key(t)) { Timing { latency_ms: t.latency_ms * 10.0, ..t.clone() } } else { t.clone() })
            .collect();
        let into_b200 = |r: ModernPairs| -> Vec<(String, String, f64)> {
            r.pairs.into_iter().filter(|p| p.dest == "b200").map(|p| (p.origin, p.family, p.stats.mean_ape)).collect()
        };
        let (a, b) = (evaluate(&rows, &cat, "sustained", &|_| {}).unwrap(), evaluate(&poisoned, &cat, "sustained", &|_| {}).unwrap());
        let (a, b) = (into_b200(a), into_b200(b));
        assert!(!a.is_empty());
        assert_eq!(a, b);
        assert!(evaluate(&rows[..1], &cat, "sustained", &|_| {}).is_err(), "one GPU makes no pair");
        assert!(evaluate(&rows, &cat, "li", &|_| {}).is_err());
    }
}
