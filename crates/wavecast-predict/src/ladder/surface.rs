//! Shipped surfaces: each measured table reduced to a compact correction over physics, so that
//! the measured and transfer rungs work without the measured-data folder. A surface is a coarse
//! grid of knots in a table's log-shape space ([`super::tables::coordinates`]), each knot the
//! median of ln(measured / physics) over the measured shapes in its cell; a query is physics
//! times the inverse-distance average of its nearest knots' corrections — the same
//! physics-carried interpolation a full table does, over cell medians instead of rows. No
//! measured row ships, only the knots (`wavecast fit --predictor ladder` writes them to
//! `weights/ladder.json`; the fit lives in `wavecast-train`).
//!
//! The physics a surface corrects is the shipped sustained model ([`Model::shipped`]), the one
//! it was fitted against; a ladder whose physics rung was refitted (leave-one-GPU-out
//! evaluations) still reads surfaces against the shipped model, where corrections and physics
//! cancel at every knot.

use super::tables::{coordinates, Family};
use crate::sustained::Model;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use wavecast_data::Timing;
use wavecast_gpu::Gpu;

/// Knots a query averages over.
const NEIGHBOURS: usize = 4;

/// One GPU's table of one family, format and kernel library, reduced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    pub family: Family,
    pub gpu: String,
    pub library: String,
    /// Measured rows the knots summarize.
    pub rows: u32,
    /// ln(hi / time) of an answer at a knot: the 90th percentile of |ln(measured / surface)|
    /// on a tenth of the shapes held out of the surface's fit.
    pub half_width: f64,
    /// Width of a knot's cell, log2 units.
    pub step: f64,
    /// The knots, flattened: each the cell's mean coordinates then its median
    /// ln(measured / physics).
    pub knots: Knots,
    /// The knots as a k-d tree, built at the first query.
    #[serde(skip)]
    pub tree: KnotTree,
}

/// A surface's knots, written as one string of decimals and read at the surface's first query:
/// a process prices a few of the hundreds of shipped surfaces, and reading every surface's
/// numbers at start-up took longer than the pricing (a string is skipped at memory speed, an
/// array of numbers is parsed number by number).
#[derive(Debug, Clone, Default)]
pub struct Knots {
    text: String,
    values: OnceLock<Vec<f32>>,
}

impl Knots {
    /// The numbers; none when the text holds a word that is not a finite number (the shipped
    /// surfaces are checked by a test, and a surface without knots prices nothing).
    pub fn values(&self) -> &[f32] {
        self.values.get_or_init(|| read_knots(&self.text).unwrap_or_default())
    }

    pub fn len(&self) -> usize {
        self.values().len()
    }

    pub fn is_empty(&self) -> bool {
        self.values().is_empty()
    }
}

/// Each word read as `f64` and narrowed, as a JSON array of numbers read into `f32` is.
fn read_knots(text: &str) -> Option<Vec<f32>> {
    text.split_ascii_whitespace().map(|w| w.parse::<f64>().ok().filter(|v| v.is_finite()).map(|v| v as f32)).collect()
}

impl From<Vec<f32>> for Knots {
    fn from(values: Vec<f32>) -> Knots {
        Knots { text: String::new(), values: OnceLock::from(values) }
    }
}

impl PartialEq for Knots {
    fn eq(&self, other: &Knots) -> bool {
        self.values() == other.values()
    }
}

impl Serialize for Knots {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Shortest decimals that read back to the same `f32`.
        let words: Vec<String> = self.values().iter().map(f32::to_string).collect();
        s.serialize_str(&words.join(" "))
    }
}

impl<'de> Deserialize<'de> for Knots {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Knots, D::Error> {
        Ok(Knots { text: String::deserialize(d)?, values: OnceLock::new() })
    }
}

/// A surface's knots split in halves along the coordinate they spread most in, again and again,
/// so a query measures the knots of the cells near it and skips a whole cell once its least
/// distance to the box its knots span puts it further than the neighbours it holds. The same
/// knots as ranking every one, in far fewer distance computations.
#[derive(Debug, Clone, Default)]
pub struct KnotTree(OnceLock<Tree>);

/// Derived from the knots, so it never makes two surfaces unequal.
impl PartialEq for KnotTree {
    fn eq(&self, _: &KnotTree) -> bool {
        true
    }
}

#[derive(Debug, Clone)]
struct Tree {
    /// Coordinates per knot plus its value: the knots' layout the tree was built for.
    width: usize,
    /// Knot indices, each cell's a contiguous run.
    order: Vec<usize>,
    /// The knots in `order`'s order, so a cell's knots are read from one run of memory.
    packed: Vec<f32>,
    cells: Vec<Cell>,
    /// Per cell, the least then the greatest of its knots' coordinates, axis by axis: the box
    /// its knots span (the knots' grid leaves most of a split's half empty, so the box is a far
    /// tighter bound than the splitting planes).
    boxes: Vec<f32>,
}

/// Makes the box at the start of `b` (least coordinates, then greatest) hold `lo` and `hi` too.
fn widen(b: &mut [f32], lo: &[f32], hi: &[f32]) {
    let axes = lo.len();
    for axis in 0..axes {
        b[axis] = b[axis].min(lo[axis]);
        b[axes + axis] = b[axes + axis].max(hi[axis]);
    }
}

/// Knots a cell holds before it is split.
const CELL_KNOTS: usize = 8;

#[derive(Debug, Clone)]
enum Cell {
    /// `order[start..end]`.
    Leaf { start: usize, end: usize },
    /// Knots of `low` lie at or below `at` on `axis`, those of `high` at or above.
    Split { axis: usize, at: f64, low: usize, high: usize },
}

impl Tree {
    fn of(knots: &[f32], width: usize) -> Tree {
        let mut tree = Tree { width, order: (0..knots.len() / width).collect(), packed: Vec::new(), cells: Vec::new(), boxes: Vec::new() };
        let n = tree.order.len();
        tree.split(knots, 0, n);
        tree.packed = tree.order.iter().flat_map(|&i| knots[i * width..(i + 1) * width].iter().copied()).collect();
        tree
    }

    /// The least squared distance from `at` to any knot of `cell`, never above the true one.
    fn least(&self, cell: usize, at: &[f64]) -> f64 {
        let axes = self.width - 1;
        let b = &self.boxes[cell * 2 * axes..(cell + 1) * 2 * axes];
        let (lo, hi) = b.split_at(axes);
        at.iter().zip(lo.iter().zip(hi)).map(|(&q, (&l, &h))| (f64::from(l) - q).max(q - f64::from(h)).max(0.0).powi(2)).sum()
    }

    /// Cells for `order[start..end]`, returning the index of the first.
    fn split(&mut self, knots: &[f32], start: usize, end: usize) -> usize {
        let coord = |i: usize, axis: usize| f64::from(knots[i * self.width + axis]);
        let (me, axes) = (self.cells.len(), self.width - 1);
        self.boxes.extend(std::iter::repeat_n(f32::INFINITY, axes).chain(std::iter::repeat_n(f32::NEG_INFINITY, axes)));
        if end - start <= CELL_KNOTS {
            self.cells.push(Cell::Leaf { start, end });
            for &i in &self.order[start..end] {
                let k = &knots[i * self.width..][..axes];
                widen(&mut self.boxes[me * 2 * axes..], k, k);
            }
            return me;
        }
        let spread = |axis: usize| {
            let xs = self.order[start..end].iter().map(|&i| coord(i, axis));
            let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
            hi - lo
        };
        let axis = (0..self.width - 1).max_by(|&a, &b| spread(a).total_cmp(&spread(b))).unwrap_or(0);
        self.order[start..end].sort_by(|&a, &b| coord(a, axis).total_cmp(&coord(b, axis)).then(a.cmp(&b)));
        let mid = start + (end - start) / 2;
        let at = coord(self.order[mid], axis);
        self.cells.push(Cell::Split { axis, at, low: 0, high: 0 });
        let low = self.split(knots, start, mid);
        let high = self.split(knots, mid, end);
        self.cells[me] = Cell::Split { axis, at, low, high };
        // The halves' boxes come after this cell's (cells are numbered parent first).
        let (mine, after) = self.boxes.split_at_mut((me + 1) * 2 * axes);
        for half in [low, high] {
            let b = &after[(half - me - 1) * 2 * axes..][..2 * axes];
            widen(&mut mine[me * 2 * axes..], &b[..axes], &b[axes..]);
        }
        me
    }
}

impl Surface {
    /// The interpolated ln(measured / physics) at `at` and the log2 distance to the nearest
    /// knot; `None` for an empty surface or coordinates of another dimension.
    pub fn correction(&self, at: &[f64]) -> Option<(f64, f64)> {
        let width = at.len() + 1;
        let knots = self.knots.values();
        if knots.is_empty() || !knots.len().is_multiple_of(width) {
            return None;
        }
        let mut near = nearest_knots(knots, width, at, &self.tree);
        near.iter_mut().for_each(|n| n.0 = n.0.sqrt());
        let nearest = near.iter().map(|n| n.0).fold(f64::INFINITY, f64::min);
        // A query on a knot takes that knot's value (the floor keeps the weight finite).
        let (sum, weights) = near.iter().fold((0.0, 0.0), |(s, w), &(d, r)| {
            let weight = 1.0 / d.max(1e-6).powi(2);
            (s + weight * r, w + weight)
        });
        (weights > 0.0).then(|| (sum / weights, nearest))
    }
}

/// The [`NEIGHBOURS`] knots nearest `at` (fewer when the surface has fewer), as (squared
/// distance, value), nearest first. Among knots at the same distance the first in the surface
/// wins, so the kept set and its order (the order the correction sums them in) are fixed by the
/// surface alone, however they are searched.
fn nearest_knots(knots: &[f32], width: usize, at: &[f64], tree: &KnotTree) -> Vec<(f64, f64)> {
    let built = tree.0.get_or_init(|| Tree::of(knots, width));
    // A query of another dimension than the first reads the knots its own way.
    let other;
    let tree = if built.width == width {
        built
    } else {
        other = Tree::of(knots, width);
        &other
    };
    let mut near = Near { width, at, kept: Vec::with_capacity(NEIGHBOURS + 1) };
    if !tree.cells.is_empty() {
        near.visit(tree, 0);
    }
    near.kept.into_iter().map(|(d, _, v)| (d, v)).collect()
}

/// A search in progress: (squared distance, knot index, value), nearest first, the lower
/// index first among equals.
struct Near<'a> {
    width: usize,
    at: &'a [f64],
    kept: Vec<(f64, usize, f64)>,
}

/// Rounding slack on a cell's least distance, so that pruning never drops a knot the exact
/// ranking keeps (one at exactly the farthest kept distance may still win a tie by its index).
const PRUNE_SLACK: f64 = 1e-9;

impl Near<'_> {
    /// Searches `cell`, the half nearer the query first, and of each half only what may hold
    /// a knot nearer than the farthest kept.
    fn visit(&mut self, tree: &Tree, cell: usize) {
        match tree.cells[cell] {
            Cell::Leaf { start, end } => (start..end).for_each(|j| self.keep(tree.order[j], &tree.packed[j * self.width..(j + 1) * self.width])),
            Cell::Split { axis, at, low, high } => {
                let (near, far) = if self.at[axis] <= at { (low, high) } else { (high, low) };
                for half in [near, far] {
                    if self.kept.len() < NEIGHBOURS || tree.least(half, self.at) <= self.kept[NEIGHBOURS - 1].0 * (1.0 + PRUNE_SLACK) {
                        self.visit(tree, half);
                    }
                }
            }
        }
    }

    /// Keeps knot `i` (coordinates then value, `k`) if it is among the nearest so far.
    fn keep(&mut self, i: usize, k: &[f32]) {
        let d = squared_distance(&k[..self.width - 1], self.at);
        let full = self.kept.len() == NEIGHBOURS;
        if d.is_nan() || (full && (d, i) >= (self.kept[NEIGHBOURS - 1].0, self.kept[NEIGHBOURS - 1].1)) {
            return;
        }
        let slot = self.kept.partition_point(|n| (n.0, n.1) < (d, i));
        self.kept.insert(slot, (d, i, f64::from(k[self.width - 1])));
        self.kept.truncate(NEIGHBOURS);
    }
}

fn squared_distance(knot: &[f32], at: &[f64]) -> f64 {
    knot.iter().zip(at).map(|(k, a)| (f64::from(*k) - a).powi(2)).sum::<f64>()
}

/// Every shipped surface, with the GPUs they were fitted on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Surfaces {
    /// GPUs with at least one surface.
    pub trained_on: Vec<String>,
    pub surfaces: Vec<Surface>,
    /// By family (hashed: every priced shape looks its family up), GPU and kernel library.
    #[serde(skip)]
    index: foldhash::HashMap<Family, BTreeMap<String, BTreeMap<String, usize>>>,
}

/// `wavecast fit --predictor ladder --data ../shared/data`: every measured GPU's tables,
/// reduced.
const SHIPPED: &str = include_str!("../../weights/ladder.json");

impl Surfaces {
    pub fn new(surfaces: Vec<Surface>) -> Surfaces {
        let mut trained_on: Vec<String> = surfaces.iter().map(|s| s.gpu.clone()).collect();
        trained_on.sort();
        trained_on.dedup();
        Surfaces { trained_on, surfaces, index: foldhash::HashMap::default() }.indexed()
    }

    fn indexed(mut self) -> Surfaces {
        self.index.clear();
        for (i, s) in self.surfaces.iter().enumerate() {
            self.index.entry(s.family.clone()).or_default().entry(s.gpu.clone()).or_default().insert(s.library.clone(), i);
        }
        self
    }

    pub fn from_json(text: &str) -> Result<Surfaces, String> {
        serde_json::from_str::<Surfaces>(text).map(Surfaces::indexed).map_err(|e| format!("shipped ladder surfaces: {e}"))
    }

    /// The surfaces wavecast ships, parsed once per process.
    pub fn shipped() -> Arc<Surfaces> {
        static SHIPPED_SURFACES: OnceLock<Arc<Surfaces>> = OnceLock::new();
        SHIPPED_SURFACES.get_or_init(|| Arc::new(Surfaces::from_json(SHIPPED).expect("shipped ladder surfaces parse (tested)"))).clone()
    }

    /// The shipped surfaces without `gpu`'s (leave-one-GPU-out: its measurements never reach
    /// its own prediction).
    pub fn shipped_without(gpu: Option<&str>) -> Arc<Surfaces> {
        let all = Surfaces::shipped();
        match gpu {
            Some(g) if all.trained_on.iter().any(|t| t == g) => Arc::new(all.without(g)),
            _ => all,
        }
    }

    /// These surfaces less every one of `gpu`.
    pub fn without(&self, gpu: &str) -> Surfaces {
        Surfaces::new(self.surfaces.iter().filter(|s| s.gpu != gpu).cloned().collect())
    }

    pub fn is_empty(&self) -> bool {
        self.surfaces.is_empty()
    }

    /// The GPUs with a surface of `family`.
    pub fn measured(&self, family: &Family) -> impl Iterator<Item = &str> {
        self.index.get(family).into_iter().flat_map(|g| g.keys().map(String::as_str))
    }

    /// `gpu`'s surfaces of `family`, by kernel library.
    pub fn of(&self, family: &Family, gpu: &str) -> Vec<&Surface> {
        self.index.get(family).and_then(|g| g.get(gpu)).map(|libs| libs.values().map(|&i| &self.surfaces[i]).collect()).unwrap_or_default()
    }

    /// Seconds of `t`'s shape on `gpu` from its surfaces of `family` (`t`'s, as the default
    /// engine times it): its own library's when it has one, else the fastest, with the
    /// surface's half-width and the distance to the nearest knot; `None` without a surface or
    /// without physics for the shape. `reference` is the physics the surfaces were fitted
    /// against.
    pub fn lookup(&self, family: &Family, t: &Timing, gpu: &Gpu, reference: &Model) -> Option<SurfaceHit> {
        let surfaces = self.of(family, &gpu.id);
        let own: Vec<&Surface> = surfaces.iter().copied().filter(|s| s.library == t.kernel_source).collect();
        let candidates = if own.is_empty() { surfaces } else { own };
        if candidates.is_empty() {
            return None;
        }
        let at = coordinates(&t.shape);
        let mut asked = t.clone();
        candidates
            .into_iter()
            .filter_map(|s| {
                asked.kernel_source.clone_from(&s.library);
                price(s, &at, &asked, gpu, reference)
            })
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
    }
}

/// A shape priced from a surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurfaceHit {
    pub seconds: f64,
    pub half_width: f64,
    /// Log2 distance to the nearest knot.
    pub distance: f64,
    pub step: f64,
}

/// `asked` (timed by `s`'s library) priced from `s` at its coordinates `at`.
fn price(s: &Surface, at: &[f64], asked: &Timing, gpu: &Gpu, reference: &Model) -> Option<SurfaceHit> {
    let (correction, distance) = s.correction(at)?;
    let physics = reference.predict(asked, gpu).ok().filter(|p| p.is_finite() && *p > 0.0)?;
    let seconds = physics * correction.exp();
    (seconds.is_finite() && seconds > 0.0).then_some(SurfaceHit { seconds, half_width: s.half_width, distance, step: s.step })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_data::{Precision, Shape, Source};

    fn surface(gpu: &str, knots: Vec<f32>) -> Surface {
        let family = Family::of(Source::Aiconfigurator, &Shape::Gemm { m: 1, n: 1, k: 1 }, Precision::Bf16);
        Surface { family, gpu: gpu.into(), library: "lib".into(), rows: 2, half_width: 0.05, step: 1.0, knots: knots.into(), tree: KnotTree::default() }
    }

    #[test]
    fn a_query_on_a_knot_takes_its_correction_and_between_knots_a_weighted_mean() {
        let s = surface("g", vec![0.0, 0.0, 0.0, 0.5, 2.0, 0.0, 0.0, -0.5]);
        let (on, d) = s.correction(&[0.0, 0.0, 0.0]).unwrap();
        assert!((on - 0.5).abs() < 1e-6 && d == 0.0);
        let (mid, _) = s.correction(&[1.0, 0.0, 0.0]).unwrap();
        assert!(mid.abs() < 1e-9, "{mid}");
        assert_eq!(s.correction(&[1.0, 2.0]), None, "another family's dimensions");
    }

    /// Every knot ranked by its squared distance to `at` (a stable sort: the earlier knot first
    /// among equals), the first [`NEIGHBOURS`] kept.
    fn ranked(knots: &[f32], width: usize, at: &[f64]) -> Vec<(f64, f64)> {
        let mut ranked: Vec<(f64, f64)> = knots.chunks_exact(width).map(|k| (squared_distance(&k[..width - 1], at), f64::from(k[width - 1]))).collect();
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
        ranked.truncate(NEIGHBOURS);
        ranked
    }

    /// The tree search keeps what ranking every knot would: the four nearest, nearest first,
    /// the earlier knot first among equals (checked on a grid full of ties, on knots repeated at
    /// the same place, and on scattered knots).
    #[test]
    fn the_nearest_knots_are_those_a_full_ranking_keeps() {
        let mut knots = Vec::new();
        for i in 0..40u32 {
            let (x, y) = ((i % 7) as f32 * 0.5, (i * 13 % 11) as f32 * 0.37);
            knots.extend([x, y, i as f32]);
        }
        for at in [[0.0, 0.0], [1.0, 1.0], [1.25, 0.74], [3.0, 3.7], [-2.0, 9.0]] {
            assert_eq!(nearest_knots(&knots, 3, &at, &KnotTree::default()), ranked(&knots, 3, &at), "at {at:?}");
        }
        assert_eq!(nearest_knots(&knots[..6], 3, &[0.0, 0.0], &KnotTree::default()).len(), 2, "fewer knots than neighbours");
        let twice: Vec<f32> = knots.chunks_exact(3).chain(knots.chunks_exact(3)).enumerate().flat_map(|(i, k)| [k[0], k[1], i as f32]).collect();
        for at in [[0.5, 0.37], [1.0, 1.11], [2.9, 0.0]] {
            assert_eq!(nearest_knots(&twice, 3, &at, &KnotTree::default()), ranked(&twice, 3, &at), "at {at:?}, knots twice");
        }
        // Scattered knots in three coordinates, queried inside and outside their range.
        let mut state = 12345u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32 * 14.0 - 2.0
        };
        let knots: Vec<f32> = (0..300).flat_map(|i| [next(), next(), next(), i as f32]).collect();
        let tree = KnotTree::default();
        for _ in 0..60 {
            let at = [f64::from(next()), f64::from(next()), f64::from(next())];
            assert_eq!(nearest_knots(&knots, 4, &at, &tree), ranked(&knots, 4, &at), "at {at:?}");
        }
    }

    #[test]
    fn knots_are_written_as_decimals_and_a_word_that_is_no_number_leaves_none() {
        let s = surface("a", vec![1.0, -0.25, 12.5, 0.001]);
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains(r#""knots":"1 -0.25 12.5 0.001""#), "{text}");
        let back: Surface = serde_json::from_str(&text).unwrap();
        assert_eq!(back.knots.values(), [1.0, -0.25, 12.5, 0.001]);
        assert_eq!(back, s);
        for bad in ["1 x 2", "1 NaN", "1 inf"] {
            let broken: Surface = serde_json::from_str(&text.replace("1 -0.25 12.5 0.001", bad)).unwrap();
            assert!(broken.knots.is_empty(), "{bad}");
            assert_eq!(broken.correction(&[0.0]), None, "{bad}");
        }
    }

    #[test]
    fn leaving_a_gpu_out_drops_every_surface_of_it() {
        let all = Surfaces::new(vec![surface("a", vec![0.0, 0.0, 0.0, 0.1]), surface("b", vec![0.0, 0.0, 0.0, 0.2])]);
        let family = all.surfaces[0].family.clone();
        assert_eq!(all.measured(&family).collect::<Vec<_>>(), ["a", "b"]);
        let without = all.without("a");
        assert_eq!(without.measured(&family).collect::<Vec<_>>(), ["b"]);
        assert_eq!(without.trained_on, ["b"]);
    }

    #[test]
    fn the_shipped_surfaces_parse_and_name_their_gpus() {
        let shipped = Surfaces::shipped();
        assert!(shipped.surfaces.iter().all(|s| shipped.trained_on.contains(&s.gpu)));
        // Every knot reads as a finite number (knots are read in use, where an unreadable word
        // would only show as a surface that prices nothing).
        for s in &shipped.surfaces {
            assert!(!s.knots.is_empty(), "{} {:?}: no knots read", s.gpu, s.family);
        }
        // What `wavecast fit --predictor ladder` writes is what ships, number for number.
        assert_eq!(serde_json::to_string(&*shipped).unwrap(), SHIPPED.trim_end());
        let without = Surfaces::shipped_without(shipped.trained_on.first().map(String::as_str));
        assert!(shipped.trained_on.is_empty() || without.trained_on.len() + 1 == shipped.trained_on.len());
    }
}
