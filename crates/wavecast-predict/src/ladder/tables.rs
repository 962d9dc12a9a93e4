//! Measured tables: one GPU's timings of one kernel family, format and library, indexed for
//! lookup in log-shape space. A query on a measured shape returns the measurement. Between
//! measured shapes, along each size axis whose line through the query (every other size equal)
//! was measured on both sides, the log of measured / physics is interpolated linearly in the
//! log size between the two bracketing points, and the axes are averaged with weights
//! 1 / gap² (the nearer the bracket, the more it counts). Only points of the query's alignment
//! take part: the collections time sizes on and just past a tile boundary (256 and 257), and
//! the two sides of a boundary are different kernels' times, so 257 is carried from 129 and 513,
//! not from 256. Where no axis brackets the query (beyond the measured range, or off every
//! measured line), each of the nearest points is carried to the query by the physics model's
//! ratio (physics(query) / physics(point)) and the carried times are averaged with
//! inverse-distance weights in log space. The physics sets the slope, the measurement the level.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use wavecast_data::{Precision, Shape, Source, Timing};

/// Nearest measured points a query averages over.
const NEIGHBOURS: usize = 4;

/// What must match exactly for two measurements to sit in one table: everything but the
/// GPU-independent sizes that [`coordinates`] returns.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Family {
    pub source: Source,
    /// The engine whose collection timed it (`sglang`, `trtllm`); empty for the default engine
    /// ([`wavecast_data::DEFAULT_ENGINE`]) and for kernels no engine chooses (collectives, other
    /// sources), so the shipped surfaces, fitted on the default engine, keep their keys.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub engine: String,
    /// The shape's family and its categorical parts (head size, KV format, window, collective
    /// group), e.g. `attention_decode/hd128/kv:bf16/w0`.
    pub class: String,
    pub precision: Precision,
}

impl Family {
    /// The family as the default engine times it.
    pub fn of(source: Source, shape: &Shape, precision: Precision) -> Family {
        Family { source, engine: String::new(), class: class(shape), precision }
    }

    /// The family as `engine` (a name: `vllm`, `sglang`; empty: the default) times it.
    pub fn of_engine(source: Source, shape: &Shape, precision: Precision, engine: &str) -> Family {
        Family { engine: engine_key(engine).to_string(), ..Family::of(source, shape, precision) }
    }

    /// The engine's name as reports say it (`vllm` for the default).
    pub fn engine_name(&self) -> &str {
        if self.engine.is_empty() {
            wavecast_data::DEFAULT_ENGINE
        } else {
            &self.engine
        }
    }

    /// The family name reports group by (`gemm`, `attention_decode`, …).
    pub fn name(&self) -> &str {
        self.class.split('/').next().unwrap_or(&self.class)
    }
}

/// A [`Family::engine`] key: the default engine's name keys as empty.
pub fn engine_key(engine: &str) -> &str {
    if engine.eq_ignore_ascii_case(wavecast_data::DEFAULT_ENGINE) {
        ""
    } else {
        engine
    }
}

fn class(shape: &Shape) -> String {
    match shape {
        Shape::Gemm { .. } => "gemm".into(),
        Shape::Bmm { .. } => "bmm".into(),
        Shape::AttentionPrefill { head_dim, window, kv_precision, .. } => format!("attention_prefill/hd{head_dim}/kv:{}/w{}", kv_precision.as_str(), u8::from(*window > 0)),
        Shape::AttentionDecode { head_dim, window, kv_precision, .. } => format!("attention_decode/hd{head_dim}/kv:{}/w{}", kv_precision.as_str(), u8::from(*window > 0)),
        Shape::Moe { balanced, .. } => format!("moe/{}", if *balanced { "balanced" } else { "skewed" }),
        Shape::Mla { generation, module, kv_precision, attention_precision, .. } => {
            format!("mla/{}/{}/kv:{}/attn:{}", if *generation { "generation" } else { "context" }, if *module { "module" } else { "kernel" }, kv_precision.as_str(), attention_precision.as_str())
        }
        Shape::GatedDelta { head_k_dim, head_v_dim, .. } => format!("{}/dk{head_k_dim}/dv{head_v_dim}", shape.family()),
        Shape::Collective { op, gpus, gpus_per_node, .. } => format!("{}/g{gpus}/n{gpus_per_node}", op.as_str()),
        Shape::Vector { op, .. } => op.clone(),
    }
}

/// The sizes a table interpolates over, as log2(1 + size): GEMM m, n, k; attention batch,
/// lengths, heads, the query heads per KV head and any sliding window; MoE tokens and the
/// layer's dimensions; the gated delta rule's sequences, tokens and heads; a collective's
/// bytes; a vector op's rows and width.
pub fn coordinates(shape: &Shape) -> Vec<f64> {
    sizes(shape).into_iter().map(|x| (1.0 + x as f64).log2()).collect()
}

/// The sizes [`coordinates`] takes the logarithm of.
fn sizes(shape: &Shape) -> Vec<u64> {
    match *shape {
        Shape::Gemm { m, n, k } => vec![m, n, k],
        Shape::Bmm { batch, m, n, k } => vec![batch, m, n, k],
        Shape::AttentionPrefill { batch, isl, past, heads, kv_heads, window, .. } => with_window(vec![batch, isl, past, heads, heads / kv_heads.max(1)], window),
        Shape::AttentionDecode { batch, kv_len, heads, kv_heads, window, .. } => with_window(vec![batch, kv_len, heads, heads / kv_heads.max(1)], window),
        Shape::Moe { tokens, hidden, inter, topk, experts, tp, ep, .. } => vec![tokens, hidden, inter, topk, experts, tp, ep],
        Shape::Mla { batch, isl, kv_len, heads, tp, .. } => vec![batch, isl, kv_len, heads, tp],
        Shape::GatedDelta { batch, seq, k_heads, v_heads, .. } => vec![batch, seq, k_heads, v_heads],
        Shape::Collective { bytes, .. } => vec![bytes],
        Shape::Vector { tokens, width, .. } => vec![tokens.saturating_mul(width)],
    }
}

/// A sliding-window attention's sizes followed by its window (the tables time windows of 128,
/// 1,024 and 8,192 in one family, and a window of 128 over 8,192 cached tokens is a different
/// kernel's time than one of 8,192); full attention's as they are.
fn with_window(mut sizes: Vec<u64>, window: u64) -> Vec<u64> {
    if window > 0 {
        sizes.push(window);
    }
    sizes
}

/// Sizes up to this are timed one by one (1, 2, …, 16) and are all neighbours of each other.
const SMALL_SIZE: u64 = 16;

/// Whether a measured size may carry a query's size along one axis: small sizes always, larger
/// ones only on the same side of a tile boundary (both even, as 256 and 512, or both odd, as
/// 257 and 513).
fn same_alignment(point: u64, query: u64) -> bool {
    point <= SMALL_SIZE || query <= SMALL_SIZE || point % 2 == query % 2
}

/// One measured shape: the fastest time any timing of it took in the table's library.
#[derive(Debug, Clone)]
pub struct Point {
    pub at: Vec<f64>,
    pub sizes: Vec<u64>,
    pub shape: Shape,
    pub seconds: f64,
}

/// The points on one line through size space: every size but one (`axis`) fixed.
type LineKey = (usize, Vec<u64>);

fn line_key(sizes: &[u64], axis: usize) -> LineKey {
    let mut rest = sizes.to_vec();
    rest.remove(axis);
    (axis, rest)
}

/// One GPU's measurements of one [`Family`] in one kernel library.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub points: Vec<Point>,
    /// Index of each point by its coordinates' bits: most queries (every GPU's tables share the
    /// collection's shape grid) hit a measured shape.
    exact: HashMap<Vec<u64>, usize>,
    /// The points on each measured line, by axis and the other sizes (unsorted).
    lines: HashMap<LineKey, Vec<usize>>,
}

/// A table whose floor (its fastest measured shape) is this long timed host work with the
/// kernel: a CUDA-graph replay of a tiny kernel takes 2–7 µs on every GPU in the shared
/// data, while eager all-reduces, vLLM's MLA modules and its block-scaled FP8 GEMMs never go
/// below 20–300 µs.
pub const HOST_BOUND_SECONDS: f64 = 15e-6;

pub(crate) fn key(at: &[f64]) -> Vec<u64> {
    at.iter().map(|c| c.to_bits()).collect()
}

/// Where a query landed in a table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lookup {
    pub seconds: f64,
    /// Log2-space distance to the nearest measured point (0: the shape itself was measured).
    pub distance: f64,
    /// From a shipped surface ([`super::surface`]): its half-width (ln(hi / time)) where the
    /// query is within a cell of a knot; `None` from a full table.
    pub surface_half_width: Option<f64>,
}

impl Table {
    fn insert(&mut self, shape: &Shape, seconds: f64) {
        let at = coordinates(shape);
        match self.exact.get(&key(&at)) {
            Some(&i) => self.points[i].seconds = self.points[i].seconds.min(seconds),
            None => {
                let sizes = sizes(shape);
                let index = self.points.len();
                self.exact.insert(key(&at), index);
                for axis in 0..sizes.len() {
                    self.lines.entry(line_key(&sizes, axis)).or_default().push(index);
                }
                self.points.push(Point { at, sizes, shape: shape.clone(), seconds });
            }
        }
    }

    /// The fastest measured point: the launch (or host) cost no shape avoids is in its time.
    pub fn fastest(&self) -> Option<&Point> {
        self.points.iter().min_by(|a, b| a.seconds.total_cmp(&b.seconds))
    }

    /// The slowest measured point.
    pub fn slowest(&self) -> Option<&Point> {
        self.points.iter().max_by(|a, b| a.seconds.total_cmp(&b.seconds))
    }

    /// The measured time of exactly `shape`, if it was measured.
    pub fn exact(&self, shape: &Shape) -> Option<f64> {
        self.exact.get(&key(&coordinates(shape))).map(|&i| self.points[i].seconds)
    }

    /// The time of `shape`: measured where it was measured, else its nearest points carried by
    /// `physics` (seconds of a shape on this GPU; `None` when it cannot price one).
    pub fn lookup(&self, shape: &Shape, physics: &dyn Fn(&Shape) -> Option<f64>) -> Option<Lookup> {
        if let Some(seconds) = self.exact(shape) {
            return Some(Lookup { seconds, distance: 0.0, surface_half_width: None });
        }
        let query = physics(shape)?;
        if let Some(hit) = self.along_lines(shape, query, physics) {
            return Some(hit);
        }
        self.nearest(shape, query, physics)
    }

    /// The query's bracketing points on each measured line through it, interpolated (see the
    /// module comment); `None` when no line brackets it.
    fn along_lines(&self, shape: &Shape, query: f64, physics: &dyn Fn(&Shape) -> Option<f64>) -> Option<Lookup> {
        let sizes = sizes(shape);
        let at = coordinates(shape);
        let (mut sum, mut weights, mut nearest) = (0.0, 0.0, f64::INFINITY);
        for axis in 0..sizes.len() {
            let Some(line) = self.lines.get(&line_key(&sizes, axis)) else { continue };
            let aligned = line.iter().map(|&i| &self.points[i]).filter(|p| same_alignment(p.sizes[axis], sizes[axis]));
            let (mut below, mut above): (Option<&Point>, Option<&Point>) = (None, None);
            for p in aligned {
                if p.at[axis] < at[axis] && below.is_none_or(|b| p.at[axis] > b.at[axis]) {
                    below = Some(p);
                } else if p.at[axis] > at[axis] && above.is_none_or(|a| p.at[axis] < a.at[axis]) {
                    above = Some(p);
                }
            }
            let (Some(lo), Some(hi)) = (below, above) else { continue };
            let (Some(at_lo), Some(at_hi)) = (physics(&lo.shape).filter(|s| *s > 0.0), physics(&hi.shape).filter(|s| *s > 0.0)) else { continue };
            let gap = hi.at[axis] - lo.at[axis];
            let t = (at[axis] - lo.at[axis]) / gap;
            let log_ratio = (1.0 - t) * (lo.seconds / at_lo).ln() + t * (hi.seconds / at_hi).ln();
            let w = 1.0 / (gap * gap);
            sum += w * log_ratio;
            weights += w;
            nearest = nearest.min((at[axis] - lo.at[axis]).min(hi.at[axis] - at[axis]));
        }
        (weights > 0.0).then(|| Lookup { seconds: query * (sum / weights).exp(), distance: nearest, surface_half_width: None })
    }

    /// The nearest points carried by physics (see the module comment).
    fn nearest(&self, shape: &Shape, query: f64, physics: &dyn Fn(&Shape) -> Option<f64>) -> Option<Lookup> {
        let at = coordinates(shape);
        let mut near: Vec<(f64, &Point)> = self.points.iter().filter(|p| p.at.len() == at.len()).map(|p| (distance(&p.at, &at), p)).collect();
        if near.len() > NEIGHBOURS {
            near.select_nth_unstable_by(NEIGHBOURS, |a, b| a.0.total_cmp(&b.0));
            near.truncate(NEIGHBOURS);
        }
        near.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (nearest, _) = *near.first()?;
        let (mut sum, mut weights) = (0.0, 0.0);
        for &(d, p) in near.iter().take(NEIGHBOURS) {
            let Some(at_point) = physics(&p.shape).filter(|s| *s > 0.0) else { continue };
            let carried = p.seconds * query / at_point;
            let w = 1.0 / (d * d);
            sum += w * carried.ln();
            weights += w;
        }
        (weights > 0.0).then(|| Lookup { seconds: (sum / weights).exp(), distance: nearest, surface_half_width: None })
    }
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt()
}

/// Every measured table, by GPU, family and kernel library.
#[derive(Debug, Clone, Default)]
pub struct Tables {
    /// By family, GPU and kernel library; each GPU's tables shared between the sets that hold
    /// them ([`Tables::without`]).
    tables: BTreeMap<Family, BTreeMap<String, Arc<BTreeMap<String, Table>>>>,
    /// Every [`Family::engine`] key some table has (the default's, empty, sorts first).
    engines: BTreeSet<String>,
}

impl Tables {
    /// The tables of `rows`, leaving out every row of `held_out` (all sources, all formats).
    pub fn new(rows: &[Timing], held_out: Option<&str>) -> Tables {
        Tables::filtered(rows, |t| Some(t.gpu.as_str()) != held_out)
    }

    /// The tables of the rows `keep` accepts.
    pub fn filtered(rows: &[Timing], keep: impl Fn(&Timing) -> bool) -> Tables {
        let mut tables = Tables::default();
        tables.extend(rows.iter().filter(|t| keep(t)));
        tables
    }

    /// Adds `rows` to the tables (another engine's collections, read after the default's).
    pub fn extend<'a>(&mut self, rows: impl IntoIterator<Item = &'a Timing>) {
        for t in rows.into_iter().filter(|t| t.latency_ms.is_finite() && t.latency_ms > 0.0) {
            let family = Family::of_engine(t.source, &t.shape, t.precision, t.engine_name());
            self.engines.insert(family.engine.clone());
            let per_gpu = Arc::make_mut(self.tables.entry(family).or_default().entry(t.gpu.clone()).or_default());
            per_gpu.entry(t.kernel_source.clone()).or_default().insert(&t.shape, t.latency_ms * 1e-3);
        }
    }

    /// These tables less every one of `gpu`'s: what [`Tables::new`] with `gpu` held out builds,
    /// sharing the other GPUs' tables instead of building them again (leave-one-GPU-out over
    /// several GPUs holds one copy of the measurements, not one per GPU left out).
    pub fn without(&self, gpu: &str) -> Tables {
        let tables: BTreeMap<Family, BTreeMap<String, Arc<BTreeMap<String, Table>>>> = self
            .tables
            .iter()
            .filter_map(|(family, per_gpu)| {
                let rest: BTreeMap<String, Arc<BTreeMap<String, Table>>> = per_gpu.iter().filter(|(id, _)| *id != gpu).map(|(id, t)| (id.clone(), t.clone())).collect();
                (!rest.is_empty()).then(|| (family.clone(), rest))
            })
            .collect();
        let engines = tables.keys().map(|f| f.engine.clone()).collect();
        Tables { tables, engines }
    }

    /// These tables and `other`'s, sharing both (another engine's collections beside the
    /// default's; a GPU's tables of a family come from one of the two, never both).
    pub fn merged(&self, other: &Tables) -> Tables {
        let mut out = self.clone();
        for (family, per_gpu) in &other.tables {
            let mine = out.tables.entry(family.clone()).or_default();
            for (gpu, t) in per_gpu {
                mine.entry(gpu.clone()).or_insert_with(|| t.clone());
            }
        }
        out.engines.extend(other.engines.iter().cloned());
        out
    }

    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The GPUs with at least one table.
    pub fn gpus(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.tables.values().flat_map(|g| g.keys().map(String::as_str)).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The GPUs that measured `family`, with their tables by kernel library.
    pub fn measured(&self, family: &Family) -> impl Iterator<Item = (&str, &BTreeMap<String, Table>)> {
        self.tables.get(family).into_iter().flat_map(|g| g.iter().map(|(gpu, t)| (gpu.as_str(), &**t)))
    }

    /// `gpu`'s tables of `family`, by kernel library.
    pub fn of(&self, family: &Family, gpu: &str) -> Option<&BTreeMap<String, Table>> {
        self.tables.get(family)?.get(gpu).map(|t| &**t)
    }

    /// Every family measured anywhere.
    pub fn families(&self) -> impl Iterator<Item = &Family> {
        self.tables.keys()
    }

    /// Every engine key some table has, the default's (empty) first.
    pub fn engines(&self) -> impl Iterator<Item = &str> {
        self.engines.iter().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemm(m: u64, n: u64, k: u64) -> Shape {
        Shape::Gemm { m, n, k }
    }

    fn timing(gpu: &str, shape: Shape, ms: f64) -> Timing {
        Timing { source: Source::Aiconfigurator, gpu: gpu.into(), shape, precision: Precision::Bf16, kernel_source: "lib".into(), latency_ms: ms, provenance: String::new(), engine: String::new() }
    }

    fn flops(shape: &Shape) -> Option<f64> {
        match *shape {
            Shape::Gemm { m, n, k } => Some(2.0 * (m * n * k) as f64 * 1e-15),
            _ => None,
        }
    }

    #[test]
    fn a_measured_shape_is_reproduced_and_the_fastest_library_run_kept() {
        let rows = [timing("g", gemm(64, 4096, 4096), 0.05), timing("g", gemm(64, 4096, 4096), 0.04), timing("g", gemm(128, 4096, 4096), 0.07)];
        let tables = Tables::new(&rows, None);
        let family = Family::of(Source::Aiconfigurator, &gemm(1, 1, 1), Precision::Bf16);
        let table = &tables.of(&family, "g").unwrap()["lib"];
        let hit = table.lookup(&gemm(64, 4096, 4096), &flops).unwrap();
        assert_eq!(hit, Lookup { seconds: 0.04e-3, distance: 0.0, surface_half_width: None });
    }

    #[test]
    fn between_points_the_physics_ratio_carries_each_neighbour() {
        // Measured times exactly proportional to FLOPs: interpolation must stay on that line.
        let rows: Vec<Timing> = [256, 1024, 4096].iter().map(|&m| timing("g", gemm(m, 2048, 2048), flops(&gemm(m, 2048, 2048)).unwrap() * 3e3)).collect();
        let tables = Tables::new(&rows, None);
        let family = Family::of(Source::Aiconfigurator, &gemm(1, 1, 1), Precision::Bf16);
        let q = gemm(512, 2048, 2048);
        let got = tables.of(&family, "g").unwrap()["lib"].lookup(&q, &flops).unwrap();
        assert!((got.seconds / (flops(&q).unwrap() * 3.0) - 1.0).abs() < 1e-9, "{got:?}");
        assert!(got.distance > 0.0);
    }

    /// 257 sits past a tile boundary, as 129 and 513 do: it is carried from those, not from
    /// 256 (0.006 away in log space, but another kernel's time).
    #[test]
    fn a_size_past_a_tile_boundary_is_carried_from_its_own_side() {
        let rows: Vec<Timing> = [(128, 1.0), (129, 2.0), (256, 1.0), (512, 1.0), (513, 2.0)].iter().map(|&(m, ms)| timing("g", gemm(m, 2048, 2048), ms)).collect();
        let tables = Tables::new(&rows, None);
        let family = Family::of(Source::Aiconfigurator, &gemm(1, 1, 1), Precision::Bf16);
        let flat = |_: &Shape| Some(1.0);
        let got = tables.of(&family, "g").unwrap()["lib"].lookup(&gemm(257, 2048, 2048), &flat).unwrap();
        assert!((got.seconds / 2e-3 - 1.0).abs() < 1e-9, "{got:?}");
        let aligned = tables.of(&family, "g").unwrap()["lib"].lookup(&gemm(384, 2048, 2048), &flat).unwrap();
        assert!((aligned.seconds / 1e-3 - 1.0).abs() < 1e-9, "{aligned:?}");
    }

    /// Between two measured sizes on a line the log of measured / physics moves linearly in
    /// the log size: halfway between a ratio of 1 and 4 it is 2.
    #[test]
    fn along_a_line_the_ratio_to_physics_is_interpolated_in_log_space() {
        let rows = [timing("g", gemm(1024, 1024, 1024), flops(&gemm(1024, 1024, 1024)).unwrap() * 1e3), timing("g", gemm(4096, 1024, 1024), 4.0 * flops(&gemm(4096, 1024, 1024)).unwrap() * 1e3)];
        let tables = Tables::new(&rows, None);
        let family = Family::of(Source::Aiconfigurator, &gemm(1, 1, 1), Precision::Bf16);
        let q = gemm(2048, 1024, 1024);
        let got = tables.of(&family, "g").unwrap()["lib"].lookup(&q, &flops).unwrap();
        // log2(1 + m) is not exactly linear in log2 m: allow that sliver.
        assert!((got.seconds / (2.0 * flops(&q).unwrap()) - 1.0).abs() < 2e-3, "{got:?}");
    }

    #[test]
    fn a_held_out_gpu_has_no_table() {
        let rows = [timing("a", gemm(1, 2, 3), 1.0), timing("b", gemm(1, 2, 3), 2.0)];
        assert_eq!(Tables::new(&rows, Some("a")).gpus(), vec!["b"]);
    }

    /// Leaving a GPU out of tables already built gives what building them without it gives:
    /// the same GPUs, families (none left empty), engines and answers.
    #[test]
    fn tables_without_a_gpu_are_the_tables_built_without_it() {
        let sglang = |mut t: Timing| {
            t.engine = "sglang/0.5".into();
            t
        };
        let rows = [timing("a", gemm(64, 4096, 4096), 1.0), timing("b", gemm(64, 4096, 4096), 2.0), timing("b", gemm(128, 4096, 4096), 3.0), sglang(timing("a", gemm(64, 4096, 4096), 0.5))];
        let all = Tables::new(&rows, None);
        for gpu in ["a", "b"] {
            let (shared, built) = (all.without(gpu), Tables::new(&rows, Some(gpu)));
            assert_eq!(shared.gpus(), built.gpus());
            assert_eq!(shared.families().collect::<Vec<_>>(), built.families().collect::<Vec<_>>());
            assert_eq!(shared.engines().collect::<Vec<_>>(), built.engines().collect::<Vec<_>>());
            let flat = |_: &Shape| Some(1.0);
            for family in built.families() {
                for (id, libraries) in built.measured(family) {
                    assert_eq!(shared.of(family, id).unwrap()["lib"].lookup(&gemm(96, 4096, 4096), &flat), libraries["lib"].lookup(&gemm(96, 4096, 4096), &flat));
                }
            }
        }
        assert_eq!(all.without("a").engines().collect::<Vec<_>>(), vec![""], "SGLang's only table was a's");
    }
}
