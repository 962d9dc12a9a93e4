//! The price ladder: one path that prices a kernel on a GPU, for every command.
//!
//! 1. **Measured**: the GPU has measurements of the kernel's family and format → its own table
//!    ([`tables`]), reproducing measured shapes and carrying the nearest ones by physics.
//! 2. **Transfer**: it has none, a GPU of its architecture has → that GPU's (interpolated) time
//!    of the same shape times the roofline ratio of the two GPUs ([`transfer`]). Measurements of
//!    a sibling carry its library's kernel choices and its clocks under load, which no datasheet
//!    does; the ratio carries only the difference between the two GPUs' figures. With no GPU of
//!    its architecture, for the families where it beat physics on GPUs left out, GPUs of other
//!    architectures' times times the physics model's ratio ([`across`]).
//! 3. **Physics**: nobody measured the family and format → the sustained roofline
//!    ([`crate::sustained`]).
//!
//! Every answer carries its [`Provenance`] and an interval that widens down the ladder.
//!
//! The measurements come from a measured-data folder's full tables ([`tables`], `--ops-data`)
//! and, for every GPU no folder covers, from the surfaces wavecast ships ([`surface`]): each
//! measured table reduced to a coarse grid of corrections over physics.
//!
//! FP32 ops (NeuSight's measurements) take the same rungs with the learned FP32 model in place
//! of physics ([`fp32`]).

pub mod across;
pub mod fp32;
pub mod ops;
pub mod surface;
pub mod tables;
pub mod transfer;

use crate::memo::Memo;
use crate::provenance::Provenance;
use crate::sustained::{Model, Work};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
pub use ops::LadderOps;
pub use surface::{Surface, Surfaces};
pub use tables::{Family, Lookup, Table, Tables};
pub use transfer::{roofline_ratio, similarity};
use wavecast_data::{Precision, Shape, Source, Timing};
use wavecast_gpu::{Catalog, Gpu};

/// Half-widths of each rung's interval in log space (ln(hi / time)), set from held-out errors
/// (`wavecast eval ops --data ../shared/data/aiconfigurator --predictor ladder`; a held-out tenth
/// of H100's own shapes interpolated from the rest missed by 3–11 % mean, 2–7 % median per
/// family): interpolation between measured points (plus a share per log2 step to the nearest
/// point), a transfer from a sibling (B200 and GB200 from each other: 56–94 % of GEMM,
/// attention and MoE rows inside), and physics alone.
const MEASURED_HALF_WIDTH: f64 = 0.1;
const MEASURED_PER_STEP: f64 = 0.03;
const TRANSFER_HALF_WIDTH: f64 = 0.12;
/// |ln(roofline ratio)| below which two siblings count as of like speed for a shape, so that a
/// host-bound table is carried as is: within a factor of 1.65 (GB200 over B200 is 0.90 at FP8
/// and FP4, H200 over H100 0.70 on memory-bound shapes; H20 over H100 is 6.7 on compute-bound
/// ones).
const LIKE_SPEED_LOG_RATIO: f64 = 0.5;

/// A transfer from a table that timed host work ([`tables::HOST_BOUND_SECONDS`]): the
/// host's CPU and runtime are not in any GPU's figures (GB200's Grace host took 1.2–2.5× B200's
/// x86 host on the same vLLM 0.24.0 kernels: MLA modules, block-scaled FP8 GEMMs, eager
/// all-reduces).
const HOST_BOUND_HALF_WIDTH: f64 = 0.9;
const PHYSICS_HALF_WIDTH: f64 = 0.55;

/// A table whose slowest shape takes this many times its fastest reaches down to the floor (the
/// collections time sizes from 1 up); a narrower one (a few large shapes) says nothing of it.
const FLOOR_SPAN: f64 = 4.0;

/// Most measured GPUs one transfer combines.
const MAX_SOURCES: usize = 2;

/// What is asked: a kernel shape in a format, as one source times it, the serving engine whose
/// kernels run it (empty: the default, [`wavecast_data::DEFAULT_ENGINE`]), and optionally the
/// kernel library (else the fastest the GPU's tables know, as an engine picks).
#[derive(Debug, Clone)]
pub struct Query {
    source: Source,
    shape: Shape,
    precision: Precision,
    library: Option<String>,
    engine: String,
    /// The kernel as its benchmark runs it, again and again on warm buffers that may sit in L2
    /// ([`Query::as_benchmarked`]), rather than as an op in a model, whose buffers the rest of
    /// the iteration evicts.
    benchmarked: bool,
    /// The family of the fields above, worked out once: pricing one shape asks for it several
    /// times (its tables, its siblings, whether it carries across GPUs).
    family: std::sync::OnceLock<Family>,
    default_family: std::sync::OnceLock<Family>,
}

impl Query {
    /// `shape` in `precision` as `source` times it, run by `engine`'s kernels (`sglang`,
    /// `trtllm`; empty or `vllm`: the default engine's), from `library` (`None`: the fastest
    /// the GPU's tables know).
    pub fn new(source: Source, shape: Shape, precision: Precision, library: Option<String>, engine: &str) -> Query {
        Query { source, shape, precision, library, engine: tables::engine_key(engine).to_ascii_lowercase(), benchmarked: false, family: std::sync::OnceLock::new(), default_family: std::sync::OnceLock::new() }
    }

    /// The kernel a measured row timed, as its benchmark ran it.
    pub fn of(t: &Timing) -> Query {
        Query::new(t.source, t.shape.clone(), t.precision, Some(t.kernel_source.clone()), t.engine_name()).as_benchmarked()
    }

    /// The same question of the kernel as a benchmark runs it, on buffers it has just used:
    /// where the shape's bytes fit in L2 they stream from there, so a transfer may undercut the
    /// DRAM bound ([`Work::warm_bound_seconds`]), and a streaming pass carried across
    /// architectures scales with what L2 saves on each GPU.
    pub fn as_benchmarked(self) -> Query {
        Query { benchmarked: true, ..self }
    }

    /// The same question asked of `engine`'s kernels, from whichever library is fastest.
    pub fn on_engine(&self, engine: &str) -> Query {
        Query { benchmarked: self.benchmarked, ..Query::new(self.source, self.shape.clone(), self.precision, None, engine) }
    }

    /// The least time `work` (this query's shape on `gpu`) may be given: on the benchmark's
    /// warm buffers, or in a model.
    fn bound(&self, work: &Work, gpu: &Gpu) -> f64 {
        if self.benchmarked {
            work.warm_bound_seconds(gpu)
        } else {
            work.bound_seconds()
        }
    }

    fn family(&self) -> &Family {
        self.family.get_or_init(|| Family::of_engine(self.source, &self.shape, self.precision, &self.engine))
    }

    /// The family as the default engine times it (the shipped surfaces' key).
    fn default_family(&self) -> &Family {
        self.default_family.get_or_init(|| Family { engine: String::new(), ..self.family().clone() })
    }

    fn timing(&self, shape: &Shape, gpu: &Gpu) -> Timing {
        Timing { source: self.source, gpu: gpu.id.clone(), shape: shape.clone(), precision: self.precision, kernel_source: self.library.clone().unwrap_or_default(), latency_ms: 0.0, provenance: String::new(), engine: String::new() }
    }
}

/// A priced query.
#[derive(Debug, Clone, PartialEq)]
pub struct Priced {
    pub seconds: f64,
    pub lo: f64,
    pub hi: f64,
    pub provenance: Provenance,
}

/// The ladder over a set of measured tables.
#[derive(Debug, Clone)]
pub struct Ladder {
    model: Model,
    tables: Tables,
    /// Shipped surfaces, read for GPUs and families `tables` lacks.
    surfaces: Arc<Surfaces>,
    /// The physics the surfaces correct (the shipped sustained model they were fitted against).
    reference: Model,
    catalog: Catalog,
    others: OthersMemo,
}

/// What [`Ladder::measured_others`] answers for a family and a GPU's figures: the index of each
/// other measured GPU in the catalog and its similarity.
type Others = Arc<[(usize, f64)]>;

/// [`Ladder::measured_others`] memoised by the family and the asking GPU's figures that decide
/// it: a deployment prices thousands of shapes of a handful of families, and finding and
/// ranking the GPUs that measured a family is the same work for each (it was most of pricing a
/// deployment on a GPU with no tables of its own).
type OthersMemo = Memo<RwLock<foldhash::HashMap<Family, Vec<(AskingGpu, Others)>>>>;

/// What [`similarity`] and the sibling test read of the asking GPU.
struct AskingGpu {
    id: String,
    architecture: String,
    compute_capability: String,
    peak_bits: u64,
    bandwidth_bits: u64,
    sm_count: u32,
}

impl AskingGpu {
    fn of(gpu: &Gpu, peak: f64) -> AskingGpu {
        AskingGpu { id: gpu.id.clone(), architecture: gpu.architecture.clone(), compute_capability: gpu.compute_capability.clone(), peak_bits: peak.to_bits(), bandwidth_bits: gpu.bandwidth().to_bits(), sm_count: gpu.sm_count }
    }

    /// Whether `gpu` (with `peak`) is this one, without copying its names.
    fn is(&self, gpu: &Gpu, peak: f64) -> bool {
        self.id == gpu.id && self.architecture == gpu.architecture && self.compute_capability == gpu.compute_capability && self.peak_bits == peak.to_bits() && self.bandwidth_bits == gpu.bandwidth().to_bits() && self.sm_count == gpu.sm_count
    }
}

impl Ladder {
    /// `model` prices physics (and carries table points between shapes), `tables` are the
    /// measurements the first two rungs use; `catalog` knows every
    /// GPU the tables name.
    pub fn new(model: Model, tables: Tables, catalog: Catalog) -> Ladder {
        Ladder { model, tables, surfaces: Arc::new(Surfaces::default()), reference: Model::shipped(), catalog, others: OthersMemo::default() }
    }

    /// The same ladder also reading `surfaces` where its tables have no GPU's measurements of
    /// a family (their physics: the shipped sustained model).
    pub fn with_surfaces(self, surfaces: Arc<Surfaces>) -> Ladder {
        Ladder { surfaces, others: OthersMemo::default(), ..self }
    }

    pub fn surfaces(&self) -> &Surfaces {
        &self.surfaces
    }

    /// A ladder from raw measurements, everything fitted without `held_out` (leave-one-GPU-out):
    /// its rows build no table.
    pub fn from_rows(model: Model, rows: &[Timing], catalog: &Catalog, held_out: Option<&str>) -> Ladder {
        let tables = Tables::new(rows, held_out);
        Ladder::new(model, tables, catalog.clone())
    }

    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The physics model's seconds for `shape` of `q` on `gpu`.
    fn physics(&self, q: &Query, shape: &Shape, gpu: &Gpu) -> Option<f64> {
        self.model.predict(&q.timing(shape, gpu), gpu).ok().filter(|s| s.is_finite() && *s > 0.0)
    }

    /// `q`'s family as each engine the tables hold times it: the asked engine first, then the
    /// default, then the others by name.
    fn engine_families(&self, q: &Query) -> Vec<Family> {
        std::iter::once(q.family().clone()).chain(self.other_engine_families(q).map(|(_, f)| f)).collect()
    }

    /// `q`'s family as each engine the tables hold other than the asked one times it, in
    /// [`Ladder::engine_families`]' order, with that engine's key (empty: the default).
    fn other_engine_families<'a, 'q>(&'a self, q: &'q Query) -> impl Iterator<Item = (&'a str, Family)> + use<'a, 'q> {
        let asked = q.family();
        self.tables.engines().filter(move |e| *e != asked.engine).map(move |e| (e, Family { engine: e.to_string(), ..asked.clone() }))
    }

    /// `gpu`'s tables of `q`'s family by kernel library, from the asked engine's collection
    /// when it has one, else from the first other engine's ([`Ladder::engine_families`]), and
    /// that engine's name when it was not the one asked.
    fn own_tables(&self, q: &Query, gpu: &Gpu) -> Option<(&BTreeMap<String, Table>, Option<&str>)> {
        let asked = q.family();
        if let Some(libraries) = self.tables.of(asked, &gpu.id) {
            return Some((libraries, None));
        }
        // Looked through lazily, not as a built list: this runs for every shape priced.
        self.other_engine_families(q).find_map(|(engine, family)| {
            let libraries = self.tables.of(&family, &gpu.id)?;
            Some((libraries, Some(if engine.is_empty() { wavecast_data::DEFAULT_ENGINE } else { engine })))
        })
    }

    /// The engine whose measurements answer `q` on `gpu` when not the asked one: another
    /// engine's table, or the shipped surfaces (the default engine's) for a query naming
    /// another engine.
    fn answering_engine(&self, q: &Query, gpu: &Gpu) -> Option<&str> {
        match self.own_tables(q, gpu) {
            Some((_, engine)) => engine,
            None => (!tables::engine_key(&q.engine).is_empty()).then_some(wavecast_data::DEFAULT_ENGINE),
        }
    }

    /// `q` on a GPU from its own tables of the family (the asked engine's, else another's),
    /// else from its shipped surface of it; `None` when it has neither.
    pub fn measured(&self, q: &Query, gpu: &Gpu) -> Option<Lookup> {
        let Some((libraries, _)) = self.own_tables(q, gpu) else {
            let hit = self.surfaces.lookup(q.default_family(), &q.timing(&q.shape, gpu), gpu, &self.reference)?;
            // Beyond a cell of the nearest knot the answer is carried by physics, as a table's is.
            let half_width = hit.half_width + MEASURED_PER_STEP * (hit.distance - hit.step).max(0.0);
            return Some(Lookup { seconds: hit.seconds, distance: hit.distance, surface_half_width: Some(half_width) });
        };
        let physics = |s: &Shape| self.physics(q, s, gpu);
        lookup_library(libraries, q.library.as_deref(), &q.shape, &physics)
    }

    /// Every other GPU that measured `q`'s family (a table or a shipped surface), most similar
    /// first.
    fn measured_others(&self, q: &Query, gpu: &Gpu) -> Vec<(&Gpu, f64)> {
        let peak = crate::sustained::peak_flops(gpu, q.precision).unwrap_or(0.0);
        let known = self.others.0.read().ok().and_then(|memo| memo.get(q.family())?.iter().find(|(asking, _)| asking.is(gpu, peak)).map(|(_, others)| others.clone()));
        let others = match known {
            Some(others) => others,
            None => {
                let all = self.catalog.all();
                let others: Others = self.rank_measured_others(q, gpu).into_iter().filter_map(|(g, d)| all.iter().position(|c| std::ptr::eq(c, g)).map(|i| (i, d))).collect();
                if let Ok(mut memo) = self.others.0.write() {
                    memo.entry(q.family().clone()).or_default().push((AskingGpu::of(gpu, peak), others.clone()));
                }
                others
            }
        };
        let all = self.catalog.all();
        others.iter().map(|&(i, d)| (&all[i], d)).collect()
    }

    /// [`Ladder::measured_others`] worked out.
    fn rank_measured_others(&self, q: &Query, gpu: &Gpu) -> Vec<(&Gpu, f64)> {
        let default = Family::of(q.source, &q.shape, q.precision);
        let mut ids: Vec<&str> = Vec::new();
        for family in self.engine_families(q) {
            ids.extend(self.tables.measured(&family).map(|(id, _)| id));
        }
        ids.extend(self.surfaces.measured(&default));
        ids.retain(|id| *id != gpu.id);
        ids.sort_unstable();
        ids.dedup();
        let mut v: Vec<(&Gpu, f64)> = ids.into_iter().filter_map(|id| self.catalog.get(id).ok()).map(|s| (s, similarity(s, gpu, q.precision))).collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.id.cmp(&b.0.id)));
        v
    }

    /// The measured GPUs that could stand in for `gpu` on `q`'s family, most similar first:
    /// those of its architecture and compute capability only (the same instruction set and
    /// kernel libraries). Left out in turn (`bench/ladder.sh`, mean family APE): an H100 priced
    /// from its nearest measured GPU of another architecture (an RTX PRO 6000) missed by 62 %
    /// against the physics rung's 41 %, and an RTX PRO 6000 (Blackwell, 12.0) from B200 and
    /// GB200 (Blackwell, 10.0: other tensor-core instructions, HBM) by 307 % against 42 %.
    pub fn siblings(&self, q: &Query, gpu: &Gpu) -> Vec<(&Gpu, f64)> {
        self.measured_others(q, gpu).into_iter().filter(|(s, _)| s.architecture == gpu.architecture && s.compute_capability == gpu.compute_capability).collect()
    }

    /// The time every measurement in `from`'s table of `q`'s family and library (else of any
    /// of its libraries) carries beyond its kernel: the table's fastest time, when the table
    /// spans shapes at least [`FLOOR_SPAN`] times apart in time (so its fastest is a shape too
    /// small to be anything but launch and host work); else 0. `None` from a surface.
    ///
    /// A fused MoE has none: its floor (15–40 µs at one token) is its own kernels' GPU time —
    /// routing, permutation, two grouped GEMMs reading every routed expert's weights — which
    /// the GPUs' figures scale like the rest. GB200 and B200 left out in turn, MoE mean APE per
    /// format with that floor kept as is 3.7–7.7 %, copying the sibling 4.4–9.9 %, the whole
    /// time scaled by the roofline ratio 3.1–7.4 % (`bench/results/ladder.md`).
    fn overhead(&self, q: &Query, from: &Gpu) -> Option<f64> {
        if matches!(q.shape, Shape::Moe { .. }) {
            return Some(0.0);
        }
        let (libraries, _) = self.own_tables(q, from)?;
        let table = match q.library.as_deref().and_then(|l| libraries.get(l)) {
            Some(table) => table,
            None => libraries.values().min_by(|a, b| a.fastest().map(|p| p.seconds).unwrap_or(f64::INFINITY).total_cmp(&b.fastest().map(|p| p.seconds).unwrap_or(f64::INFINITY)))?,
        };
        let (fastest, slowest) = (table.fastest()?.seconds, table.slowest()?.seconds);
        Some(if slowest >= FLOOR_SPAN * fastest { fastest } else { 0.0 })
    }

    /// `q` on `gpu` carried from the measured GPU `from`: its time of the shape, the part above
    /// its table's overhead scaled by the roofline ratio (the overhead is launch and host work,
    /// which no GPU figure scales), and whether that table timed host work. A kernel table that
    /// timed host work is carried as is: its host cost is not only its floor but grows with the
    /// shape (per-token quantisation, MLA's module glue on the CPU side), and scaling what lies
    /// above the floor by the GPUs' figures did worse than copying it (GB200 and B200 left out
    /// in turn: block-FP8 GEMMs 41.7 / 77.2 % against copying's 41.2 / 74.6 %, MLA 38.7–41.8 /
    /// 69.0–80.2 % against 36.2–39.9 / 63.2–75.4 %). Collectives keep the scaling: their part
    /// above the floor is link time, which the ratio carries (B200's eager all-reduces 34.4 %
    /// scaled against 40.1 % copied). So does the gated delta rule's chunked pass: its 18–25 µs
    /// floor is six eager launches, which do not grow with the shape, and above it the chunk
    /// steps and the state's traffic are GPU work (GB200 from B200 and back: 5.4 % copied, 3.5 %
    /// scaled).
    fn carried(&self, q: &Query, from: &Gpu, gpu: &Gpu) -> Option<(f64, Lookup, bool)> {
        let there = self.measured(q, from)?;
        let ratio = transfer::roofline_ratio(&q.shape, q.precision, from, gpu)?;
        let overhead = self.overhead(q, from).unwrap_or(0.0).min(there.seconds);
        let host_bound = overhead >= tables::HOST_BOUND_SECONDS;
        // Only between GPUs of like speed (B200 and GB200, H100 and H200): a much slower
        // sibling (H20 from H100) would otherwise inherit the fast GPU's kernel time.
        let like_speed = ratio.ln().abs() < LIKE_SPEED_LOG_RATIO;
        if host_bound && like_speed && !matches!(q.shape, Shape::Collective { .. } | Shape::GatedDelta { .. }) {
            return Some((there.seconds, there, true));
        }
        Some((overhead + (there.seconds - overhead) * ratio, there, host_bound))
    }

    /// `q` on `gpu`, down the ladder: its own measurements, a transfer from the most similar
    /// measured GPUs, or physics. `Err` when not even physics can price it (a format the GPU
    /// has no units for). A query of the kernel as its benchmark runs it
    /// ([`Query::as_benchmarked`]: every measured row's) is transferred like a measured time,
    /// which may beat the DRAM bound where the shape's bytes fit in L2; an op in a model is
    /// never below [`Work::bound_seconds`].
    pub fn price(&self, q: &Query, gpu: &Gpu) -> Result<Priced, String> {
        if let Some(hit) = self.measured(q, gpu) {
            let half_width = hit.surface_half_width.unwrap_or(MEASURED_HALF_WIDTH + MEASURED_PER_STEP * hit.distance);
            return Ok(widened(hit.seconds, half_width, Provenance::MEASURED.shipped(hit.surface_half_width.is_some()).from_engine(self.answering_engine(q, gpu))));
        }
        // The GPU must be able to run it at all before a sibling's time is carried over.
        let here = Work::of(&q.shape, q.precision, gpu)?;
        let mut carried: Vec<(f64, f64, &Gpu, Lookup, bool)> = Vec::new();
        for (from, distance) in self.siblings(q, gpu).into_iter().take(MAX_SOURCES) {
            if let Some((seconds, lookup, host_bound)) = self.carried(q, from, gpu) {
                carried.push((seconds, 1.0 / ((distance + 0.1).powi(2) * (1.0 + lookup.distance)), from, lookup, host_bound));
            }
        }
        if let Some((_, _, best, lookup, host_bound)) = carried.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
            let weights: f64 = carried.iter().map(|c| c.1).sum();
            let seconds = (carried.iter().map(|c| c.1 * c.0.ln()).sum::<f64>() / weights).exp().max(q.bound(&here, gpu));
            // A sibling's surface is only as good as its held-out error: never narrower than that.
            let sibling = if *host_bound { HOST_BOUND_HALF_WIDTH } else { TRANSFER_HALF_WIDTH };
            let half_width = sibling.max(lookup.surface_half_width.unwrap_or(0.0));
            return Ok(widened(seconds, half_width, Provenance::transfer(&best.id).shipped(lookup.surface_half_width.is_some()).from_engine(self.answering_engine(q, best))));
        }
        if across::carries(q.family()) {
            if let Some(p) = self.across(q, gpu) {
                return Ok(p);
            }
        }
        let seconds = self.model.predict(&q.timing(&q.shape, gpu), gpu)?;
        Ok(widened(seconds, PHYSICS_HALF_WIDTH, Provenance::PHYSICS))
    }

    /// `q` on `gpu` carried from measured GPUs of other architectures ([`across`]): each
    /// source's time of the shape times the physics model's ratio of the two GPUs for it (for
    /// a benchmarked pass that streams its bytes once, with what L2 saves on each), the
    /// sources weighted by similarity; never below the shape's bound (for a benchmarked kernel
    /// [`Work::warm_bound_seconds`], as for a sibling's transfer). `None` when no other
    /// GPU measured the family (or the GPU cannot run the format). Asked for any family (the
    /// evaluation reports it beside physics); [`Ladder::price`] uses it only where
    /// [`across::carries`] says it beat physics on GPUs left out.
    pub fn across(&self, q: &Query, gpu: &Gpu) -> Option<Priced> {
        let here = Work::of(&q.shape, q.precision, gpu).ok()?;
        let physics_here = self.physics(q, &q.shape, gpu)? * warm_share(q, gpu)?;
        let mut carried: Vec<(f64, f64, &Gpu, Lookup)> = Vec::new();
        for (from, distance) in self.measured_others(q, gpu).into_iter().filter(|(s, _)| s.architecture != gpu.architecture || s.compute_capability != gpu.compute_capability) {
            if carried.len() == across::MAX_SOURCES {
                break;
            }
            let (Some(there), Some(physics_there), Some(warm_there)) = (self.measured(q, from), self.physics(q, &q.shape, from), warm_share(q, from)) else { continue };
            // As within an architecture, the table's floor is launch and host work, which no
            // GPU figure scales: only the time above it follows the physics ratio.
            let overhead = self.overhead(q, from).unwrap_or(0.0).min(there.seconds);
            let seconds = overhead + (there.seconds - overhead) * physics_here / (physics_there * warm_there);
            if seconds.is_finite() && seconds > 0.0 {
                carried.push((seconds, 1.0 / ((distance + 0.1).powi(2) * (1.0 + there.distance)), from, there));
            }
        }
        let (_, _, best, lookup) = carried.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        let weights: f64 = carried.iter().map(|c| c.1).sum();
        let seconds = (carried.iter().map(|c| c.1 * c.0.ln()).sum::<f64>() / weights).exp().max(q.bound(&here, gpu));
        let half_width = across::HALF_WIDTH.max(lookup.surface_half_width.unwrap_or(0.0));
        Some(widened(seconds, half_width, Provenance::transfer(&best.id).shipped(lookup.surface_half_width.is_some()).from_engine(self.answering_engine(q, best))))
    }

    /// The naive baselines for `q` on `gpu` from its most similar measured GPU of any
    /// architecture: that GPU's time copied as is, and scaled by the plain roofline's ratio.
    /// `None` when no other GPU measured the family.
    pub fn baselines(&self, q: &Query, gpu: &Gpu) -> Option<Baselines> {
        let (from, _) = self.measured_others(q, gpu).into_iter().find(|(s, _)| self.measured(q, s).is_some())?;
        let there = self.measured(q, from)?.seconds;
        Some(Baselines { from: from.id.clone(), copy: there, roofline_ratio: transfer::roofline_ratio(&q.shape, q.precision, from, gpu).map(|r| there * r) })
    }
}

/// The naive answers every figure is reported beside.
#[derive(Debug, Clone, PartialEq)]
pub struct Baselines {
    pub from: String,
    /// The sibling's measured time for the same shape.
    pub copy: f64,
    /// That time times roofline(here) / roofline(there).
    pub roofline_ratio: Option<f64>,
}

/// How much faster `q`'s shape runs on warm buffers than from DRAM on `gpu`: its warm roofline
/// over its roofline, for a benchmarked kernel that streams its bytes once ([`streams_once`]),
/// near 1 where its bytes do not fit in L2; 1 for any other query. The physics model
/// prices bytes from DRAM; a benchmark's pass over a tensor that fits in L2 was not, and
/// carried to a GPU whose L2 is as much faster than its DRAM (L40S to RTX PRO 6000) or not
/// (L40S to H100), the ratio must say so. An op in a model keeps the physics ratio of two
/// GPUs' DRAM-fed times.
fn warm_share(q: &Query, gpu: &Gpu) -> Option<f64> {
    if !q.benchmarked || !streams_once(&q.shape) {
        return Some(1.0);
    }
    let work = Work::of(&q.shape, q.precision, gpu).ok()?;
    let share = work.warm_roofline_seconds(gpu) / work.roofline_seconds();
    (share.is_finite() && share > 0.0).then_some(share)
}

/// Whether a kernel of `shape` is one streaming pass over its bytes: a vector op, or the gated
/// delta rule's recurrent state at decode (read, updated and written back once per step). Such a
/// pass streams from L2 at L2's bandwidth where its tensors fit: AIConfigurator's streaming
/// tables reach 17–27 bytes per SM per cycle there (L40S 17, RTX PRO 6000 21, H100 26, B200
/// and GB200 27; their launch time taken off). Carried across architectures with what L2
/// saves on each GPU, each GPU left out (`bench/results/ladder.md`, before → after): the
/// streaming kernel on L40S 132.6 → 14.9 %, RTX PRO 6000 96.5 → 17.1 %, H100 11.2 → 16.7 %;
/// the gated delta rule's decode on L40S 137.6 → 24.8 %, RTX PRO 6000 74.8 → 11.7 %, H100 8.4 →
/// 4.3 %, A100 29.9 → 36.3 %. Tiled kernels (GEMMs, attention, MoE, MLA, the chunked gated
/// delta rule) are held by their tile pipelines where their bytes fit in L2, and carried with
/// the warm ratio they missed more (FP8 GEMMs on L40S 40.8 % against 28.2 %, BF16 GEMMs on A100
/// 53.3 % against 26.4 %, decode attention on A100 45.9 against 32.9 % and on B200 266 % against
/// 62 %).
fn streams_once(shape: &Shape) -> bool {
    matches!(shape, Shape::Vector { .. } | Shape::GatedDelta { generation: true, .. })
}

fn widened(seconds: f64, half_width: f64, provenance: Provenance) -> Priced {
    Priced { seconds, lo: seconds * (-half_width).exp(), hi: seconds * half_width.exp(), provenance }
}

/// The asked library's table when the GPU has it; else the fastest of its libraries among
/// those whose nearest point is about as near as the best one's (a far table's carried time is
/// a guess, not a faster kernel).
fn lookup_library(libraries: &BTreeMap<String, Table>, library: Option<&str>, shape: &Shape, physics: &dyn Fn(&Shape) -> Option<f64>) -> Option<Lookup> {
    if let Some(hit) = library.and_then(|l| libraries.get(l)).and_then(|t| t.lookup(shape, physics)) {
        return Some(hit);
    }
    let hits: Vec<Lookup> = libraries.values().filter_map(|t| t.lookup(shape, physics)).collect();
    let nearest = hits.iter().map(|h| h.distance).fold(f64::INFINITY, f64::min);
    hits.into_iter().filter(|h| h.distance <= nearest + 1.0).min_by(|a, b| a.seconds.total_cmp(&b.seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::Rung;

    fn timing(gpu: &str, m: u64, ms: f64) -> Timing {
        Timing { source: Source::Aiconfigurator, gpu: gpu.into(), shape: Shape::Gemm { m, n: 64, k: 64 }, precision: Precision::Bf16, kernel_source: "lib".into(), latency_ms: ms, provenance: String::new(), engine: String::new() }
    }

    fn price_on_h200(rows: &[Timing], m: u64) -> Priced {
        let ladder = Ladder::from_rows(Model::shipped(), rows, &Catalog::builtin(), None);
        let q = Query::of(&timing("h200", m, 0.0));
        ladder.price(&q, &Gpu::find("h200").unwrap()).unwrap()
    }

    fn timing_by(engine: &str, gpu: &str, m: u64, ms: f64) -> Timing {
        Timing { engine: engine.into(), ..timing(gpu, m, ms) }
    }

    /// Each engine's query reads its own engine's table; an engine nobody measured reads the
    /// default engine's and says so; a GPU without the family carries the asked engine's
    /// sibling table.
    #[test]
    fn a_query_reads_its_engines_tables_and_names_a_fallback() {
        let rows = [timing_by("vllm/0.24.0", "h100-sxm", 64, 0.010), timing_by("sglang/0.5.14", "h100-sxm", 64, 0.020)];
        let ladder = Ladder::from_rows(Model::shipped(), &rows, &Catalog::builtin(), None);
        let h100 = Gpu::find("h100-sxm").unwrap();
        let ask = |engine: &str, gpu: &Gpu| ladder.price(&Query::of(&rows[0]).on_engine(engine), gpu).unwrap();
        let (vllm, sglang, trtllm) = (ask("vllm", &h100), ask("sglang", &h100), ask("trtllm", &h100));
        assert_eq!((vllm.seconds, vllm.provenance), (0.010e-3, Provenance::MEASURED), "{vllm:?}");
        assert_eq!((sglang.seconds, sglang.provenance), (0.020e-3, Provenance::MEASURED), "{sglang:?}");
        assert_eq!(trtllm.seconds, 0.010e-3, "{trtllm:?}");
        assert_eq!(trtllm.provenance.to_string(), "measured (vllm tables)");
        // H200 has no table: SGLang's H100 time is the one carried over.
        let h200 = Gpu::find("h200").unwrap();
        let (vllm, sglang) = (ask("vllm", &h200), ask("sglang", &h200));
        assert_eq!(sglang.provenance.to_string(), "transfer from h100-sxm");
        assert!((sglang.seconds / vllm.seconds - 2.0).abs() < 1e-9, "{vllm:?} {sglang:?}");
    }

    /// With no measured GPU of its architecture, a GPU is priced from other architectures'
    /// measurements of the same shape, the part above the table's floor times the physics
    /// model's ratio of the two GPUs; never
    /// from its own rows when left out (they are poisoned here: 50× the truth), and with no
    /// other GPU measured, nothing is carried.
    #[test]
    fn a_gpu_without_a_sibling_of_its_architecture_transfers_across_and_never_from_itself() {
        let (h100, b200) = (Gpu::find("h100-sxm").unwrap(), Gpu::find("b200").unwrap());
        let model = Model::shipped();
        let big = |gpu: &str, m: u64, ms: f64| Timing { shape: Shape::Gemm { m, n: 8192, k: 8192 }, ..timing(gpu, m, ms) };
        let honest = [big("b200", 1, 0.02), big("b200", 4096, 0.3)];
        let mut poisoned: Vec<Timing> = honest.to_vec();
        poisoned.extend([big("h100-sxm", 1, 1.0), big("h100-sxm", 4096, 15.0)]);
        let q = Query::of(&big("h100-sxm", 4096, 0.0));
        let clean = Ladder::from_rows(model.clone(), &honest, &Catalog::builtin(), None).across(&q, &h100).unwrap();
        let left_out = Ladder::from_rows(model.clone(), &poisoned, &Catalog::builtin(), Some("h100-sxm")).across(&q, &h100).unwrap();
        assert_eq!(clean, left_out, "the left-out GPU's rows reach no pair");
        assert_eq!(clean.provenance.to_string(), "transfer from b200");
        let ratio = model.predict(&q.timing(&q.shape, &h100), &h100).unwrap() / model.predict(&q.timing(&q.shape, &b200), &b200).unwrap();
        assert!(ratio > 1.2, "H100 is the slower GPU for a 4096x8192x8192 GEMM: {ratio}");
        // B200's table spans 15×: its fastest time (20 µs) is launch and host work, carried
        // as is; only the time above it follows the physics ratio.
        assert!((clean.seconds / (0.02e-3 + 0.28e-3 * ratio) - 1.0).abs() < 1e-9, "{clean:?} ratio {ratio}");
        assert!(clean.lo < clean.seconds && clean.seconds < clean.hi);
        // Kept, its own rows answer (measured); with B200 left out too, no one is carried.
        let kept = Ladder::from_rows(model.clone(), &poisoned, &Catalog::builtin(), None);
        assert_eq!(kept.price(&q, &h100).unwrap().provenance, Provenance::MEASURED);
        let none = Ladder::from_rows(model, &honest, &Catalog::builtin(), Some("b200"));
        assert!(none.across(&q, &h100).is_none());
        assert_eq!(none.price(&q, &h100).unwrap().provenance, Provenance::PHYSICS);
    }

    /// The ladder carries a family across architectures only where that beat physics on GPUs
    /// left out: an FP8 fused MoE is carried from B200, a BF16 GEMM stays physics.
    #[test]
    fn only_families_that_beat_physics_are_carried_across() {
        let h100 = Gpu::find("h100-sxm").unwrap();
        let moe = Timing { shape: Shape::Moe { tokens: 64, hidden: 4096, inter: 1536, topk: 8, experts: 128, tp: 1, ep: 1, balanced: true, gated: None }, precision: Precision::Fp8, ..timing("b200", 1, 0.1) };
        let gemm = timing("b200", 64, 0.01);
        let ladder = Ladder::from_rows(Model::shipped(), &[moe.clone(), gemm.clone()], &Catalog::builtin(), None);
        let ask = |t: &Timing| Query::of(&Timing { gpu: "h100-sxm".into(), ..t.clone() });
        let carried = ladder.price(&ask(&moe), &h100).unwrap();
        assert_eq!(Some(carried.clone()), ladder.across(&ask(&moe), &h100));
        assert_eq!(carried.provenance.to_string(), "transfer from b200");
        assert!(ladder.across(&ask(&gemm), &h100).is_some(), "a BF16 GEMM could be carried");
        assert_eq!(ladder.price(&ask(&gemm), &h100).unwrap().provenance, Provenance::PHYSICS);
        // The streaming kernel is carried too, its floor as is: 2 µs of launch on B200 stays
        // 2 µs, and the 64 MB pass above it follows the physics ratio, with the pass warm in
        // B200's 126 MB of L2 (9.3 TB/s to its SMs against 7.7 TB/s of DRAM) and 50 of its 64 MB
        // warm in H100's (8.4 against 3.35).
        let stream = |bytes: f64, ms: f64| Timing { shape: Shape::stream(bytes), precision: Precision::Fp16, ..timing("b200", 1, ms) };
        let rows = [stream(4e3, 0.002), stream(64e6, 0.022)];
        let ladder = Ladder::from_rows(Model::shipped(), &rows, &Catalog::builtin(), None);
        let p = ladder.price(&ask(&rows[1]), &h100).unwrap();
        assert_eq!(p.provenance.to_string(), "transfer from b200");
        let q = ask(&rows[1]);
        let b200 = Gpu::find("b200").unwrap();
        let physics = ladder.physics(&q, &q.shape, &h100).unwrap() / ladder.physics(&q, &q.shape, &b200).unwrap();
        let (warm_h100, warm_b200) = (warm_share(&q, &h100).unwrap(), warm_share(&q, &b200).unwrap());
        assert!(warm_h100 < 0.6 && (0.75..0.9).contains(&warm_b200), "{warm_h100} {warm_b200}");
        // A tiled kernel whose bytes fit in L2 keeps the physics ratio; so does the same pass
        // as an op in a model.
        let small_gemm = ask(&timing("b200", 16, 0.01));
        assert!(matches!(small_gemm.shape, Shape::Gemm { .. }) && Work::of(&small_gemm.shape, small_gemm.precision, &h100).unwrap().warm_roofline_seconds(&h100) < 0.5 * Work::of(&small_gemm.shape, small_gemm.precision, &h100).unwrap().roofline_seconds());
        assert_eq!(warm_share(&small_gemm, &h100), Some(1.0));
        assert_eq!(warm_share(&Query::new(q.source, q.shape.clone(), q.precision, None, ""), &h100), Some(1.0));
        let ratio = physics * warm_h100 / warm_b200;
        let expected = (0.002e-3 + 0.020e-3 * ratio).max(Work::of(&q.shape, q.precision, &h100).unwrap().warm_bound_seconds(&h100));
        assert!((p.seconds / expected - 1.0).abs() < 1e-9, "{p:?}, ratio {ratio}");
    }

    /// A fused MoE's floor is GPU work, scaled with the rest: its transfer is the sibling's
    /// time times the roofline ratio, where a GEMM table of the same times keeps its floor.
    #[test]
    fn a_fused_moes_floor_is_scaled_with_the_rest() {
        let moe = |tokens: u64, ms: f64| Timing { shape: Shape::Moe { tokens, hidden: 4096, inter: 1536, topk: 8, experts: 128, tp: 1, ep: 1, balanced: true, gated: None }, ..timing("h100-sxm", 1, ms) };
        let rows = [moe(1, 0.2), moe(8192, 4.0)];
        let ladder = Ladder::from_rows(Model::shipped(), &rows, &Catalog::builtin(), None);
        let (h100, h200) = (Gpu::find("h100-sxm").unwrap(), Gpu::find("h200").unwrap());
        let p = ladder.price(&Query::of(&Timing { gpu: "h200".into(), ..rows[0].clone() }), &h200).unwrap();
        let ratio = transfer::roofline_ratio(&rows[0].shape, Precision::Bf16, &h100, &h200).unwrap();
        assert!(ratio < 0.9, "H200's memory is faster: {ratio}");
        assert!((p.seconds / (0.2e-3 * ratio) - 1.0).abs() < 1e-9, "{p:?}, ratio {ratio}");
        // A GEMM table with the same span keeps its 30 µs floor as host work.
        let gemm = price_on_h200(&[timing("h100-sxm", 1, 0.03), timing("h100-sxm", 4096, 1.0)], 1);
        assert!((gemm.seconds / 0.03e-3 - 1.0).abs() < 1e-9, "{gemm:?}");
    }

    /// A transfer is lifted only to what the shape must do on the GPU: B200's 1.0 ms for a
    /// skewed routing of Nemotron 3's experts reaches GB200 scaled by the roofline ratio, not
    /// raised to the 2.2 ms that 256 expected gated experts would take at achievable bandwidth.
    #[test]
    fn a_skewed_moe_transfer_is_not_lifted_by_an_expected_count() {
        let moe = |tokens: u64, ms: f64| Timing { shape: Shape::Moe { tokens, hidden: 2048, inter: 5120, topk: 22, experts: 512, tp: 1, ep: 1, balanced: false, gated: None }, ..timing("b200", 1, ms) };
        let rows = [moe(16, 1.0), moe(8192, 9.0)];
        let ladder = Ladder::from_rows(Model::shipped(), &rows, &Catalog::builtin(), None);
        let (b200, gb200) = (Gpu::find("b200").unwrap(), Gpu::find("gb200").unwrap());
        let p = ladder.price(&Query::of(&Timing { gpu: "gb200".into(), ..rows[0].clone() }), &gb200).unwrap();
        let ratio = transfer::roofline_ratio(&rows[0].shape, Precision::Bf16, &b200, &gb200).unwrap();
        assert_eq!(p.provenance.rung, Rung::Transfer);
        assert!((p.seconds / (1.0e-3 * ratio) - 1.0).abs() < 1e-9, "{p:?}, ratio {ratio}");
    }

    /// A sibling whose every measurement carries 200 µs of host work passes that floor on as
    /// is (no GPU figure scales a host), and says it is unsure by a host's worth; a table of
    /// kernel-only times is scaled and keeps the narrow interval.
    #[test]
    fn a_host_bound_sibling_passes_its_floor_on_unscaled_with_a_wider_interval() {
        let host_bound = price_on_h200(&[timing("h100-sxm", 1, 0.2), timing("h100-sxm", 4096, 1.0)], 1);
        assert_eq!(host_bound.provenance.rung, Rung::Transfer);
        assert!((host_bound.seconds / 0.2e-3 - 1.0).abs() < 1e-9, "{host_bound:?}");
        assert!((host_bound.hi / host_bound.seconds).ln() >= HOST_BOUND_HALF_WIDTH - 1e-9, "{host_bound:?}");
        // Above its floor too: a kernel table that timed host work is carried as is.
        let above = price_on_h200(&[timing("h100-sxm", 1, 0.2), timing("h100-sxm", 4096, 1.0)], 4096);
        assert!((above.seconds / 1.0e-3 - 1.0).abs() < 1e-9, "{above:?}");
        let kernel_only = price_on_h200(&[timing("h100-sxm", 1, 0.004), timing("h100-sxm", 4096, 0.02)], 4096);
        assert_eq!(kernel_only.provenance.rung, Rung::Transfer);
        assert!((kernel_only.hi / kernel_only.seconds).ln() < HOST_BOUND_HALF_WIDTH, "{kernel_only:?}");
        // Above the floor the roofline ratio applies: H200's faster memory makes it faster.
        assert!(kernel_only.seconds < 0.02e-3, "{kernel_only:?}");
        // A sibling of another speed class does not inherit the fast GPU's time above the
        // floor: an 8192³ GEMM (compute-bound) on an H20, a sixth of the H100's tensor peak.
        let big = |gpu: &str, m: u64, ms: f64| Timing { shape: Shape::Gemm { m, n: 8192, k: 8192 }, ..timing(gpu, m, ms) };
        let ladder = Ladder::from_rows(Model::shipped(), &[big("h100-sxm", 1, 0.2), big("h100-sxm", 8192, 1.6)], &Catalog::builtin(), None);
        let h20 = ladder.price(&Query::of(&big("h20", 8192, 0.0)), &Gpu::find("h20").unwrap()).unwrap();
        assert_eq!(h20.provenance.rung, Rung::Transfer, "{h20:?}");
        // Copied, 1.6 ms would be lifted only to the H20's roofline floor (1.1 TFLOP at 148
        // TFLOP/s: 7.4 ms); scaled, the time above the floor grows by the peak ratio (~9.6 ms).
        assert!(h20.seconds > 8.5e-3, "{h20:?}");
    }
}
