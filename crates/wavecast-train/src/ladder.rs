//! The price ladder's shipped surfaces ([`wavecast_predict::ladder::surface`]): every measured
//! table — one GPU, family, format and kernel library — reduced to knots of ln(measured /
//! physics) on a coarse grid of its log-shape space, so the measured and transfer rungs work
//! without the measured-data folder. Each knot is the median correction of the measured shapes
//! in its cell at their mean coordinates; no measured row is kept.
//!
//! The interval of a surface comes from held-out error: the surface is first fitted without a
//! tenth of its shapes (the same split `eval ops` holds out of the measured rung) and the 90th
//! percentile of |ln(measured / surface)| on that tenth is its half-width; then it is refitted
//! on every shape. The report's figures are that held-out tenth's error.
//!
//! The rows are read generically (every `Timing` the loaders give, any source and format), so
//! a new kind of measured table ships once its rows load.

use std::collections::BTreeMap;
use wavecast_data::Timing;
use wavecast_eval::ladder::held_out_tenth;
use wavecast_gpu::Catalog;
use wavecast_predict::ladder::tables::coordinates;
use wavecast_predict::ladder::{Family, Surface, Surfaces};
use wavecast_predict::sustained::Model;
use wavecast_stats::{mean, quantile_sorted, sorted, Summary};

/// Width of a knot's cell in log2 units: a factor of 2 in each size for families of up to three
/// sizes (GEMMs, collectives, vector ops), of 4 for attention, MLA and MoE (four to seven
/// sizes, where cells of 2 shipped 12.8 MB, nearly one knot per measured shape). Finer cells
/// follow the measurements more closely and ship more knots (`wavecast fit --predictor ladder`
/// prints the file's size and the held-out error).
pub fn step(dims: usize) -> f64 {
    if dims <= 3 {
        1.0
    } else {
        2.0
    }
}

/// The narrowest half-width a surface ships (its knots are medians, not the measurements).
const MIN_HALF_WIDTH: f64 = 0.03;

/// Fewest held-out shapes whose error sets a surface's own half-width; with fewer, the
/// family's pooled held-out error does.
const MIN_HELD_OUT: usize = 8;

/// One measured shape's correction: where it sits and ln(measured / physics).
#[derive(Debug, Clone)]
struct Point {
    at: Vec<f64>,
    correction: f64,
    held_out: bool,
}

/// The held-out tenth's error of one GPU's surfaces of one family and format.
#[derive(Debug, Clone)]
pub struct HeldOut {
    pub gpu: String,
    pub family: String,
    pub dtype: String,
    pub stats: Summary,
    /// Share of held-out shapes inside the shipped interval, %.
    pub coverage: f64,
}

/// What [`fit`] made.
pub struct Fitted {
    pub surfaces: Surfaces,
    pub held_out: Vec<HeldOut>,
    /// Rows no physics could price (skipped), by reason.
    pub skipped: BTreeMap<String, usize>,
}

type Key = (Family, String, String);

/// Per GPU, family name and format: held-out APEs and whether each was inside its interval.
type ByFamily = BTreeMap<(String, String, String), (Vec<f64>, Vec<f64>)>;

/// Every table of `rows` reduced to a surface against `model` (the shipped sustained physics).
pub fn fit(rows: &[Timing], catalog: &Catalog, model: &Model) -> Fitted {
    let mut groups: BTreeMap<Key, Vec<Point>> = BTreeMap::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    for t in rows.iter().filter(|t| t.latency_ms.is_finite() && t.latency_ms > 0.0) {
        let physics = catalog.get(&t.gpu).map_err(|e| e.to_string()).and_then(|gpu| model.predict(t, gpu));
        match physics {
            Ok(p) if p.is_finite() && p > 0.0 => {
                let key = (Family::of(t.source, &t.shape, t.precision), t.gpu.clone(), t.kernel_source.clone());
                groups.entry(key).or_default().push(Point { at: coordinates(&t.shape), correction: (t.latency_ms * 1e-3 / p).ln(), held_out: held_out_tenth(t) });
            }
            Ok(p) => *skipped.entry(format!("physics gave {p}")).or_default() += 1,
            Err(e) => *skipped.entry(e).or_default() += 1,
        }
    }
    let mut errors: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for (key, points) in &groups {
        errors.insert(key.clone(), held_out_errors(points));
    }
    let pooled = pooled_half_widths(&errors);
    let mut surfaces = Vec::new();
    let mut by_family: ByFamily = BTreeMap::new();
    for ((family, gpu, library), points) in groups {
        let key = (family, gpu, library);
        let errs = &errors[&key];
        let half_width = if errs.len() >= MIN_HELD_OUT { half_width_of(errs) } else { pooled.get(&(key.0.name().to_string(), key.0.precision.as_str().to_string())).copied().unwrap_or(MIN_HALF_WIDTH) };
        let slot = by_family.entry((key.1.clone(), key.0.name().to_string(), key.0.precision.as_str().to_string())).or_default();
        slot.0.extend(errs.iter().map(|e| (e.exp() - 1.0).abs() * 100.0));
        slot.1.extend(errs.iter().map(|e| if e.abs() <= half_width { 100.0 } else { 0.0 }));
        let (family, gpu, library) = key;
        let all: Vec<&Point> = points.iter().collect();
        surfaces.push(Surface { family, gpu, library, rows: points.len() as u32, half_width: round(half_width), step: step_of(&all), knots: knots(&all).into(), tree: Default::default() });
    }
    let held_out = by_family.into_iter().filter(|(_, (apes, _))| !apes.is_empty()).map(|((gpu, family, dtype), (apes, cov))| HeldOut { gpu, family, dtype, stats: Summary::of(&apes), coverage: mean(&cov) }).collect();
    Fitted { surfaces: Surfaces::new(surfaces), held_out, skipped }
}

/// ln(surface / measured) of each held-out point, the surface fitted on the rest.
fn held_out_errors(points: &[Point]) -> Vec<f64> {
    let kept: Vec<&Point> = points.iter().filter(|p| !p.held_out).collect();
    if kept.is_empty() {
        return Vec::new();
    }
    let probe = Surface { family: Family { source: wavecast_data::Source::Aiconfigurator, engine: String::new(), class: String::new(), precision: wavecast_data::Precision::Bf16 }, gpu: String::new(), library: String::new(), rows: 0, half_width: 0.0, step: step_of(&kept), knots: knots(&kept).into(), tree: Default::default() };
    points.iter().filter(|p| p.held_out).filter_map(|p| probe.correction(&p.at).map(|(c, _)| c - p.correction)).collect()
}

/// 90th percentile of |error|, at least [`MIN_HALF_WIDTH`].
fn half_width_of(errors: &[f64]) -> f64 {
    let abs = sorted(&errors.iter().map(|e| e.abs()).collect::<Vec<_>>());
    quantile_sorted(&abs, 0.9).unwrap_or(MIN_HALF_WIDTH).max(MIN_HALF_WIDTH)
}

/// Per family name and format, the half-width of every table's held-out errors pooled: for
/// tables too small to set their own.
fn pooled_half_widths(errors: &BTreeMap<Key, Vec<f64>>) -> BTreeMap<(String, String), f64> {
    let mut pooled: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for ((family, _, _), e) in errors {
        pooled.entry((family.name().to_string(), family.precision.as_str().to_string())).or_default().extend(e);
    }
    pooled.into_iter().filter(|(_, e)| !e.is_empty()).map(|(k, e)| (k, half_width_of(&e))).collect()
}

fn step_of(points: &[&Point]) -> f64 {
    step(points.first().map_or(0, |p| p.at.len()))
}

/// The knots of `points`: per cell of width [`step`], the mean coordinates and the median
/// correction, flattened and rounded to a thousandth.
fn knots(points: &[&Point]) -> Vec<f32> {
    let width = step_of(points);
    let mut cells: BTreeMap<Vec<i64>, Vec<&Point>> = BTreeMap::new();
    for p in points {
        cells.entry(p.at.iter().map(|c| (c / width).round() as i64).collect()).or_default().push(p);
    }
    let mut out = Vec::new();
    for members in cells.values() {
        let dims = members[0].at.len();
        for d in 0..dims {
            out.push(round(mean(&members.iter().map(|p| p.at[d]).collect::<Vec<_>>())) as f32);
        }
        out.push(round(wavecast_stats::median(&members.iter().map(|p| p.correction).collect::<Vec<_>>())) as f32);
    }
    out
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_data::{Precision, Shape, Source};
    use wavecast_gpu::Gpu;
    use wavecast_predict::ladder::{Ladder, Query, Tables};
    use wavecast_predict::Rung;

    fn timing(gpu: &str, m: u64, ms: f64) -> Timing {
        Timing { source: Source::Aiconfigurator, gpu: gpu.into(), shape: Shape::Gemm { m, n: 4096, k: 4096 }, precision: Precision::Bf16, kernel_source: "lib".into(), latency_ms: ms, provenance: String::new(), engine: String::new() }
    }

    /// Measured times 1.3× physics on a grid of GEMMs.
    fn rows(gpu: &str) -> Vec<Timing> {
        let model = Model::shipped();
        let g = Gpu::find(gpu).unwrap();
        (0..14).map(|i| 1u64 << i).map(|m| { let t = timing(gpu, m, 1.0); timing(gpu, m, model.predict(&t, &g).unwrap() * 1.3e3) }).collect()
    }

    fn ladder(surfaces: Surfaces) -> Ladder {
        Ladder::new(Model::shipped(), Tables::default(), Catalog::builtin()).with_surfaces(std::sync::Arc::new(surfaces))
    }

    /// A shipped surface reproduces its GPU's measured points within its interval, and says
    /// it was shipped.
    #[test]
    fn a_surface_reproduces_its_measured_points_within_its_interval() {
        let measured = rows("h100-sxm");
        let fitted = fit(&measured, &Catalog::builtin(), &Model::shipped());
        assert_eq!(fitted.surfaces.trained_on, ["h100-sxm"]);
        let l = ladder(fitted.surfaces);
        let gpu = Gpu::find("h100-sxm").unwrap();
        for t in &measured {
            let p = l.price(&Query::of(t), &gpu).unwrap();
            assert_eq!(p.provenance.rung, Rung::Measured);
            assert!(p.provenance.shipped);
            let seconds = t.latency_ms * 1e-3;
            assert!(p.lo <= seconds && seconds <= p.hi, "{t:?} {p:?}");
            assert!((p.seconds / seconds - 1.0).abs() < 0.01, "{t:?} {p:?}");
        }
    }

    /// Poisoning: a held-out GPU's surface never reaches its own prediction — its sibling's
    /// does (a transfer), and without any surface of the family the price is physics.
    #[test]
    fn a_held_out_gpus_surface_never_reaches_its_prediction() {
        let mut poisoned: Vec<Timing> = rows("h200").into_iter().map(|t| Timing { latency_ms: t.latency_ms * 50.0, ..t }).collect();
        poisoned.extend(rows("h100-sxm"));
        let all = fit(&poisoned, &Catalog::builtin(), &Model::shipped()).surfaces;
        let h200 = Gpu::find("h200").unwrap();
        let q = Query::of(&timing("h200", 4096, 1.0));
        let own = ladder(all.clone()).price(&q, &h200).unwrap();
        let left_out = ladder(all.without("h200")).price(&q, &h200).unwrap();
        assert_eq!(own.provenance.rung, Rung::Measured);
        assert_eq!(left_out.provenance.rung, Rung::Transfer);
        assert!(own.seconds > 10.0 * left_out.seconds, "the poison is read when kept, never when left out: {own:?} {left_out:?}");
        let physics = ladder(all.without("h200").without("h100-sxm")).price(&q, &h200).unwrap();
        assert_eq!(physics.provenance.rung, Rung::Physics);
        let expected = Model::shipped().predict(&timing("h200", 4096, 1.0), &h200).unwrap();
        assert!((physics.seconds / expected - 1.0).abs() < 1e-9);
    }
}
