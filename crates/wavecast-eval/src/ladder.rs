//! The price ladder against modern GPUs' measurements, each GPU left out of everything: its
//! rows build no table and take part in no pair of the transfer ratio's fit, and the physics
//! numbers are refitted without it. Beside every figure, on the same rows, the naive
//! baselines: the most similar measured GPU's time copied as is, and scaled by the roofline's
//! ratio. A second pass checks the measured rung: a tenth of the test GPU's own shapes is held
//! out of its tables and interpolated from the rest.
//!
//! Beside the ladder on full tables, the ladder a user without the measured-data folder gets:
//! the shipped surfaces of every GPU but the test GPU (`weights/ladder.json`), with the same
//! refitted physics below them.

use crate::EvalError;
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_data::Timing;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_predict::ladder::{Family, Ladder, Query, Surfaces, Tables};
use wavecast_predict::sustained::{self, FitOptions, Model};
use wavecast_stats::{ape, mean, Summary};

/// One family and format on the left-out GPU: the ladder and each baseline on the same rows.
#[derive(Debug, Clone, Serialize)]
pub struct LadderFamily {
    pub source: String,
    pub family: String,
    pub dtype: String,
    /// Rows priced by every method compared.
    pub rows: u32,
    pub ladder: Summary,
    /// The same ladder from the shipped surfaces (never the test GPU's) instead of full tables.
    pub shipped_mape: f64,
    /// Share of rows inside the shipped-surface ladder's interval, %.
    pub shipped_coverage: f64,
    /// The most similar measured GPU's time, copied.
    pub copy_sibling_mape: f64,
    /// That time times roofline(test) / roofline(sibling).
    pub roofline_ratio_mape: f64,
    /// The sustained roofline alone (the physics rung).
    pub physics_mape: f64,
    /// The transfer across architectures ([`Ladder::across`]) on the rows it prices, whether or
    /// not the ladder uses it for the family: what decides whether it does. `None`: no row.
    pub across_mape: Option<f64>,
    /// Share of those rows inside its interval, %.
    pub across_coverage: Option<f64>,
    /// Rows the transfer across architectures priced.
    pub across_rows: u32,
    /// Share of rows whose measured time lies inside the ladder's interval, %.
    pub coverage: f64,
    /// The sibling the largest share of rows came from.
    pub main_sibling: String,
}

/// The measured rung: a tenth of the GPU's shapes held out of its own tables.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredFamily {
    pub source: String,
    pub family: String,
    pub dtype: String,
    #[serde(flatten)]
    pub stats: Summary,
    pub coverage: f64,
    /// Another engine's timing of the very same shape on this GPU taken as the answer (mean
    /// APE over every ordered pair of rows from two engines' collections, whatever library
    /// each ran). Where the engines run different kernels it is what choosing the engine's own
    /// tables is worth; where they run the same library (BF16 GEMMs: torch's linear in all
    /// three) it is how far two collections' timings of one call lie apart, which no
    /// interpolation of one collection can beat on the other. `None` where only one
    /// collection timed the family's shapes.
    pub other_engine_mape: Option<f64>,
    /// Shapes that two or more engines timed.
    pub other_engine_shapes: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct LadderEval {
    pub test_gpu: String,
    /// GPUs whose tables the transfer drew on (never the test GPU).
    pub measured_gpus: Vec<String>,
    /// Left out: every family priced by transfer (or physics where no GPU measured it).
    pub families: Vec<LadderFamily>,
    /// Mean of the families' ladder / copy / roofline-ratio / physics mean APEs.
    pub mean_ladder: f64,
    pub mean_shipped: f64,
    pub mean_copy_sibling: f64,
    pub mean_roofline_ratio: f64,
    pub mean_physics: f64,
    /// With its own measurements: a held-out tenth of its shapes.
    pub measured: Vec<MeasuredFamily>,
    /// Rows that could not be priced, by reason.
    pub unpriced: BTreeMap<String, usize>,
}

/// Whether a measured shape belongs to the held-out tenth (a hash of its sizes, so the split is
/// the same on every run and for every library that timed it).
pub fn held_out_tenth(t: &Timing) -> bool {
    // Measured rows never know whether a fused MoE's experts are gated; the split predates
    // that field and stays the one the shipped surfaces' intervals were fitted on.
    let text = format!("{:?}{}", t.shape, t.precision.as_str()).replace(", gated: None", "");
    let h = text.bytes().fold(0xcbf29ce484222325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3));
    h % 10 == 0
}

/// One measured row of the left-out GPU, priced by the ladder and by each baseline (seconds).
pub struct Row<'a> {
    pub t: &'a Timing,
    pub ladder: f64,
    pub lo: f64,
    pub hi: f64,
    /// Where the ladder's answer came from (`transfer from b200`, `physics`).
    pub provenance: wavecast_predict::Provenance,
    pub shipped: wavecast_predict::ladder::Priced,
    pub copy: f64,
    pub roofline: f64,
    pub physics: f64,
    pub across: Option<wavecast_predict::ladder::Priced>,
    /// The most similar measured GPU the baselines copy.
    pub from: String,
}

/// Writes every priced row of the left-out GPU as one CSV row: the measurement, the ladder's
/// answer with its interval and provenance, and the baselines on the same row.
pub fn write_rows_csv(path: &std::path::Path, rows: &[Row]) -> Result<(), EvalError> {
    let cannot = |e: csv::Error| EvalError::Invalid(format!("cannot write {}: {e}", path.display()));
    let mut w = csv::Writer::from_path(path).map_err(cannot)?;
    let header = ["set", "family", "dtype", "shape", "gpu", "kernel", "measured_ms", "predicted_ms", "lo_ms", "hi_ms", "provenance", "ape", "sibling", "copy_sibling_ms", "roofline_ratio_ms", "physics_ms", "shipped_ms"];
    w.write_record(header).map_err(cannot)?;
    let ms = |s: f64| format!("{:.6}", s * 1e3);
    for r in rows {
        let t = r.t;
        let (source, family, dtype) = family_of(t);
        let record = [source, family, dtype, t.shape.to_string(), t.gpu.clone(), t.kernel_source.clone(), format!("{:.6}", t.latency_ms), ms(r.ladder), ms(r.lo), ms(r.hi), r.provenance.to_string(), format!("{:.2}", ape(r.ladder, t.latency_ms * 1e-3)), r.from.clone(), ms(r.copy), ms(r.roofline), ms(r.physics), ms(r.shipped.seconds)];
        w.write_record(record).map_err(cannot)?;
    }
    w.flush().map_err(|e| EvalError::Invalid(format!("cannot write {}: {e}", path.display())))
}

/// Evaluates the ladder on `test_gpu` (see the module comment); `say` hears progress.
/// `other_engines`: rows of engines' collections that `rows` does not hold (only the test GPU's
/// are read), for how far two engines' timings of one shape lie apart; may be empty.
/// Also gives every priced row ([`write_rows_csv`] writes them).
pub fn evaluate<'a>(rows: &'a [Timing], other_engines: &[Timing], catalog: &Catalog, test_gpu: &str, say: &dyn Fn(&str)) -> Result<(LadderEval, Vec<Row<'a>>), EvalError> {
    let gpu = catalog.get(test_gpu)?.clone();
    let test_rows: Vec<&Timing> = rows.iter().filter(|t| t.gpu == gpu.id).collect();
    if test_rows.is_empty() {
        return Err(EvalError::Invalid(format!("no measurements of {} in these data", gpu.id)));
    }
    say(&format!("fitting the physics numbers without {}", gpu.id));
    let model = sustained::fit(rows, catalog, Some(&gpu.id), &FitOptions::default())?;
    let ladder = Ladder::from_rows(model.clone(), rows, catalog, Some(&gpu.id));
    let shipped = Ladder::new(model.clone(), Tables::default(), catalog.clone()).with_surfaces(Surfaces::shipped_without(Some(&gpu.id)));
    let mut unpriced: BTreeMap<String, usize> = BTreeMap::new();
    let mut priced: Vec<Row> = Vec::new();
    for t in &test_rows {
        let q = Query::of(t);
        let physics = model.predict(t, &gpu);
        match (ladder.price(&q, &gpu).and_then(|p| Ok((p, shipped.price(&q, &gpu)?))), ladder.baselines(&q, &gpu), physics) {
            (Ok((p, from_surfaces)), Some(b), Ok(physics)) => priced.push(Row { t, ladder: p.seconds, lo: p.lo, hi: p.hi, provenance: p.provenance, shipped: from_surfaces, copy: b.copy, roofline: b.roofline_ratio.unwrap_or(b.copy), physics, across: ladder.across(&q, &gpu), from: b.from }),
            (Err(e), _, _) | (_, _, Err(e)) => *unpriced.entry(e).or_default() += 1,
            (Ok(_), None, Ok(_)) => *unpriced.entry(format!("no other GPU measured {}", t.shape.family())).or_default() += 1,
        }
    }
    let families = summarize(&priced);
    let measured = measured_rung(rows, other_engines, &model, catalog, &gpu);
    let family_mean = |f: fn(&LadderFamily) -> f64| mean(&families.iter().map(f).collect::<Vec<_>>());
    let eval = LadderEval {
        test_gpu: gpu.id.clone(),
        measured_gpus: ladder.tables().gpus().into_iter().map(str::to_string).collect(),
        mean_ladder: family_mean(|f| f.ladder.mean_ape),
        mean_shipped: family_mean(|f| f.shipped_mape),
        mean_copy_sibling: family_mean(|f| f.copy_sibling_mape),
        mean_roofline_ratio: family_mean(|f| f.roofline_ratio_mape),
        mean_physics: family_mean(|f| f.physics_mape),
        families,
        measured,
        unpriced,
    };
    Ok((eval, priced))
}

/// Source, family and format: what reports group rows by.
type FamilyKey = (String, String, String);

fn family_of(t: &Timing) -> FamilyKey {
    (t.source.as_str().to_string(), Family::of(t.source, &t.shape, t.precision).name().to_string(), t.precision.as_str().to_string())
}

/// 100 when `measured` lies inside [lo, hi], else 0: averaged, the interval's coverage in %.
pub(crate) fn covered(measured: f64, lo: f64, hi: f64) -> f64 {
    if (lo..=hi).contains(&measured) {
        100.0
    } else {
        0.0
    }
}

fn summarize(priced: &[Row]) -> Vec<LadderFamily> {
    let mut by: BTreeMap<(String, String, String), Vec<&Row>> = BTreeMap::new();
    for r in priced {
        by.entry(family_of(r.t)).or_default().push(r);
    }
    by.into_iter()
        .map(|((source, family, dtype), v)| {
            let measured = |r: &Row| r.t.latency_ms * 1e-3;
            let mape = |f: fn(&Row) -> f64| mean(&v.iter().map(|r| ape(f(r), measured(r))).collect::<Vec<_>>());
            let mut from: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &v {
                *from.entry(r.from.as_str()).or_default() += 1;
            }
            let across: Vec<(f64, &wavecast_predict::ladder::Priced)> = v.iter().filter_map(|r| Some((measured(r), r.across.as_ref()?))).collect();
            let across_mape = (!across.is_empty()).then(|| mean(&across.iter().map(|(m, p)| ape(p.seconds, *m)).collect::<Vec<_>>()));
            let across_coverage = (!across.is_empty()).then(|| mean(&across.iter().map(|(m, p)| covered(*m, p.lo, p.hi)).collect::<Vec<_>>()));
            LadderFamily {
                across_mape,
                across_coverage,
                across_rows: across.len() as u32,
                source,
                family,
                dtype,
                rows: v.len() as u32,
                ladder: Summary::of(&v.iter().map(|r| ape(r.ladder, measured(r))).collect::<Vec<_>>()),
                shipped_mape: mape(|r| r.shipped.seconds),
                shipped_coverage: mean(&v.iter().map(|r| covered(measured(r), r.shipped.lo, r.shipped.hi)).collect::<Vec<_>>()),
                copy_sibling_mape: mape(|r| r.copy),
                roofline_ratio_mape: mape(|r| r.roofline),
                physics_mape: mape(|r| r.physics),
                coverage: mean(&v.iter().map(|r| covered(measured(r), r.lo, r.hi)).collect::<Vec<_>>()),
                main_sibling: from.into_iter().max_by_key(|(_, n)| *n).map(|(g, _)| g.to_string()).unwrap_or_default(),
            }
        })
        .collect()
}

/// The measured rung on `gpu`: tables of every GPU with `gpu`'s held-out tenth removed, each
/// of those shapes interpolated from the rest of `gpu`'s own table.
fn measured_rung(rows: &[Timing], other_engines: &[Timing], model: &Model, catalog: &Catalog, gpu: &Gpu) -> Vec<MeasuredFamily> {
    let tables = Tables::filtered(rows, |t| !(t.gpu == gpu.id && held_out_tenth(t)));
    let ladder = Ladder::new(model.clone(), tables, catalog.clone());
    let mut by: BTreeMap<FamilyKey, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for t in rows.iter().filter(|t| t.gpu == gpu.id && held_out_tenth(t)) {
        let Some(hit) = ladder.measured(&Query::of(t), gpu) else { continue };
        let Ok(p) = ladder.price(&Query::of(t), gpu) else { continue };
        let measured = t.latency_ms * 1e-3;
        let e = by.entry(family_of(t)).or_default();
        e.0.push(ape(hit.seconds, measured));
        e.1.push(covered(measured, p.lo, p.hi));
    }
    let mut spread = engines_spread(rows.iter().chain(other_engines), gpu);
    by.into_iter()
        .map(|(key, (apes, cov))| {
            let (other_engine_mape, other_engine_shapes) = spread.remove(&key).unwrap_or((None, 0));
            let (source, family, dtype) = key;
            MeasuredFamily { source, family, dtype, stats: Summary::of(&apes), coverage: mean(&cov), other_engine_mape, other_engine_shapes }
        })
        .collect()
}

/// Per family on `gpu`: the mean APE of one engine's timing of a shape as the answer for
/// another engine's timing of the same shape, and how many shapes two engines timed.
fn engines_spread<'a>(rows: impl Iterator<Item = &'a Timing>, gpu: &Gpu) -> BTreeMap<FamilyKey, (Option<f64>, u32)> {
    let mut by_shape: BTreeMap<(FamilyKey, String), Vec<(&str, f64)>> = BTreeMap::new();
    for t in rows.filter(|t| t.gpu == gpu.id && !t.engine.is_empty()) {
        by_shape.entry((family_of(t), format!("{:?}", t.shape))).or_default().push((t.engine.as_str(), t.latency_ms));
    }
    let mut by_family: BTreeMap<FamilyKey, (Vec<f64>, u32)> = BTreeMap::new();
    for ((family, _), timings) in by_shape {
        let pairs: Vec<f64> = timings.iter().flat_map(|a| timings.iter().filter(move |b| b.0 != a.0).map(move |b| ape(a.1, b.1))).collect();
        if !pairs.is_empty() {
            let e = by_family.entry(family).or_default();
            e.0.extend(pairs);
            e.1 += 1;
        }
    }
    by_family.into_iter().map(|(k, (apes, shapes))| (k, (Some(mean(&apes)), shapes))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_data::{Precision, Shape, Source};

    fn gemm(gpu: &str, m: u64, engine: &str, ms: f64) -> Timing {
        Timing { source: Source::Aiconfigurator, gpu: gpu.into(), shape: Shape::Gemm { m, n: 4096, k: 4096 }, precision: Precision::Bf16, kernel_source: "linear".into(), latency_ms: ms, provenance: String::new(), engine: engine.into() }
    }

    /// Two engines' timings of one shape answer for each other both ways; a shape one engine
    /// timed, another GPU's rows and rows of no engine take no part.
    #[test]
    fn another_engines_timing_of_the_same_shape_is_scored_both_ways() {
        let gpu = Catalog::builtin().get("h100-sxm").unwrap().clone();
        let rows = [gemm("h100-sxm", 64, "vllm/0.24.0", 1.0), gemm("h100-sxm", 128, "vllm/0.24.0", 2.0), gemm("b200", 64, "sglang/0.5.14", 9.0), gemm("h100-sxm", 64, "", 5.0)];
        let other = [gemm("h100-sxm", 64, "sglang/0.5.14", 1.1)];
        let spread = engines_spread(rows.iter().chain(&other), &gpu);
        let (mape, shapes) = spread[&family_of(&rows[0])];
        assert_eq!(shapes, 1);
        let expected = (ape(1.0, 1.1) + ape(1.1, 1.0)) / 2.0;
        assert!((mape.unwrap() - expected).abs() < 1e-9, "{mape:?} vs {expected}");
        assert!(engines_spread(rows.iter(), &gpu).is_empty(), "one engine per shape: nothing to compare");
    }
}
