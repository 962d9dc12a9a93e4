//! One GPU timed by two harnesses: a second collection of the test GPU's kernels (e.g. a user's
//! own timing) against the collection the ladder's tables come from, shape by shape, and the
//! ladder pricing the second collection's rows with the first's tables of that GPU left out
//! (the transfer rung) and with them (the measured rung). How far the two collections disagree
//! on identical shapes is how much of any "measured" figure is the harness, not the GPU.

use crate::ladder::covered;
use crate::EvalError;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use wavecast_data::Timing;
use wavecast_gpu::Catalog;
use wavecast_predict::ladder::{Ladder, Query};
use wavecast_predict::sustained::{self, FitOptions};
use wavecast_stats::{ape, median, quantile_sorted, sorted, Summary};

/// The other collection's time over the reference collection's, for one format and range of
/// the shape's first size (a GEMM's m, an attention's batch).
#[derive(Debug, Clone, Serialize)]
pub struct RatioBucket {
    pub dtype: String,
    /// The first size's range, e.g. `17-128`.
    pub first_size: String,
    pub rows: u32,
    pub median_ratio: f64,
    /// The 10th and 90th percentile of the ratio.
    pub p10_ratio: f64,
    pub p90_ratio: f64,
    /// Mean APE of the reference collection's time taken as the other's.
    pub mean_ape: f64,
}

/// The ladder on the other collection's rows of one format.
#[derive(Debug, Clone, Serialize)]
pub struct RungAccuracy {
    pub dtype: String,
    #[serde(flatten)]
    pub stats: Summary,
    /// Share of rows inside the ladder's interval, %.
    pub coverage: f64,
    /// The rung that answered most rows (`measured`, `transfer`, `physics`).
    pub rung: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct HarnessEval {
    pub test_gpu: String,
    /// The other collection's rows of the test GPU, and how many have an identical shape (and
    /// format) in the reference collection.
    pub rows: u32,
    pub matched: u32,
    pub by_first_size: Vec<RatioBucket>,
    /// All matched rows of each format.
    pub by_format: Vec<RatioBucket>,
    /// The reference collection's tables of the test GPU left out.
    pub transfer: Vec<RungAccuracy>,
    /// With them.
    pub measured: Vec<RungAccuracy>,
}

/// Compares `other`'s rows of `test_gpu` with `reference`'s (see the module comment); `say`
/// hears progress.
pub fn evaluate(reference: &[Timing], other: &[Timing], catalog: &Catalog, test_gpu: &str, say: &dyn Fn(&str)) -> Result<HarnessEval, EvalError> {
    let gpu = catalog.get(test_gpu)?.clone();
    let own: Vec<&Timing> = other.iter().filter(|t| t.gpu == gpu.id && t.latency_ms > 0.0).collect();
    if own.is_empty() {
        return Err(EvalError::Invalid(format!("the second collection has no measurements of {}", gpu.id)));
    }
    let mut fastest: HashMap<String, f64> = HashMap::new();
    for t in reference.iter().filter(|t| t.gpu == gpu.id && t.latency_ms > 0.0) {
        let e = fastest.entry(shape_key(t)).or_insert(f64::INFINITY);
        *e = e.min(t.latency_ms);
    }
    let pairs: Vec<(&Timing, f64)> = own.iter().filter_map(|t| fastest.get(&shape_key(t)).map(|r| (*t, *r))).collect();
    say(&format!("fitting the physics numbers without {}", gpu.id));
    let model = sustained::fit(reference, catalog, Some(&gpu.id), &FitOptions::default())?;
    let without = Ladder::from_rows(model.clone(), reference, catalog, Some(&gpu.id));
    let with = Ladder::from_rows(model, reference, catalog, None);
    Ok(HarnessEval {
        test_gpu: gpu.id.clone(),
        rows: own.len() as u32,
        matched: pairs.len() as u32,
        by_first_size: buckets(&pairs, |t| format!("{}/{}", t.precision.as_str(), size_range(first_size(t)))),
        by_format: buckets(&pairs, |t| t.precision.as_str().to_string()),
        transfer: priced(&without, &own, &gpu),
        measured: priced(&with, &own, &gpu),
    })
}

/// A row's shape and format, the key two collections' rows match on.
fn shape_key(t: &Timing) -> String {
    format!("{:?}/{}", t.shape, t.precision.as_str())
}

fn first_size(t: &Timing) -> u64 {
    wavecast_predict::ladder::tables::coordinates(&t.shape).first().map(|c| (c.exp2() - 1.0).round() as u64).unwrap_or(0)
}

/// Ranges of the first size: 1–16 (one tile, latency-bound), 17–128, 129–1024, 1025 and up.
fn size_range(x: u64) -> &'static str {
    match x {
        0..=16 => "1-16",
        17..=128 => "17-128",
        129..=1024 => "129-1024",
        _ => "1025+",
    }
}

fn buckets(pairs: &[(&Timing, f64)], key: impl Fn(&Timing) -> String) -> Vec<RatioBucket> {
    let mut by: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (t, reference) in pairs {
        by.entry(key(t)).or_default().push((t.latency_ms, *reference));
    }
    by.into_iter()
        .map(|(k, v)| {
            let ratios = sorted(&v.iter().map(|(own, r)| own / r).collect::<Vec<_>>());
            let (dtype, range) = k.split_once('/').map_or((k.clone(), "all".to_string()), |(d, r)| (d.to_string(), r.to_string()));
            RatioBucket {
                dtype,
                first_size: range,
                rows: v.len() as u32,
                median_ratio: median(&ratios),
                p10_ratio: quantile_sorted(&ratios, 0.1).unwrap_or(0.0),
                p90_ratio: quantile_sorted(&ratios, 0.9).unwrap_or(0.0),
                mean_ape: wavecast_stats::mean(&v.iter().map(|(own, r)| ape(*r, *own)).collect::<Vec<_>>()),
            }
        })
        .collect()
}

fn priced(ladder: &Ladder, rows: &[&Timing], gpu: &wavecast_gpu::Gpu) -> Vec<RungAccuracy> {
    let mut by: BTreeMap<String, Priced> = BTreeMap::new();
    for t in rows {
        let Ok(p) = ladder.price(&Query::of(t), gpu) else { continue };
        let measured = t.latency_ms * 1e-3;
        let e = by.entry(t.precision.as_str().to_string()).or_default();
        e.apes.push(ape(p.seconds, measured));
        e.covered.push(covered(measured, p.lo, p.hi));
        *e.rungs.entry(p.provenance.rung.as_str()).or_default() += 1;
    }
    by.into_iter()
        .map(|(dtype, p)| RungAccuracy { dtype, stats: Summary::of(&p.apes), coverage: wavecast_stats::mean(&p.covered), rung: p.rungs.into_iter().max_by_key(|(_, n)| *n).map(|(r, _)| r.to_string()).unwrap_or_default() })
        .collect()
}

/// One format's priced rows: APEs, in-interval shares (100 or 0) and rows per rung.
#[derive(Default)]
struct Priced {
    apes: Vec<f64>,
    covered: Vec<f64>,
    rungs: BTreeMap<&'static str, usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_data::{Precision, Shape, Source};

    fn gemm(m: u64, ms: f64) -> Timing {
        Timing { source: Source::Aiconfigurator, gpu: "h100-sxm".into(), shape: Shape::Gemm { m, n: 4096, k: 4096 }, precision: Precision::Bf16, kernel_source: "lib".into(), latency_ms: ms, provenance: String::new(), engine: String::new() }
    }

    /// Our harness 10 % slower on small m and 20 % faster on large m: each range reports its
    /// own ratio, the format all of them, and the error of taking the other harness's time.
    #[test]
    fn ratios_are_reported_per_first_size_range_and_format() {
        let ours = [gemm(1, 1.1), gemm(8, 1.1), gemm(4096, 0.8), gemm(8192, 0.8)];
        let theirs = [1.0, 1.0, 1.0, 1.0];
        let pairs: Vec<(&Timing, f64)> = ours.iter().zip(theirs).collect();
        let by_m = buckets(&pairs, |t| format!("{}/{}", t.precision.as_str(), size_range(first_size(t))));
        let small = by_m.iter().find(|b| b.first_size == "1-16").unwrap();
        let large = by_m.iter().find(|b| b.first_size == "1025+").unwrap();
        assert_eq!((small.rows, large.rows), (2, 2));
        assert!((small.median_ratio - 1.1).abs() < 1e-9 && (large.median_ratio - 0.8).abs() < 1e-9, "{by_m:?}");
        assert!((large.mean_ape - 25.0).abs() < 1e-9, "{large:?}");
        let all = buckets(&pairs, |t| t.precision.as_str().to_string());
        assert_eq!((all.len(), all[0].rows, all[0].first_size.as_str()), (1, 4, "all"));
    }
}
