//! FP32 ops through the ladder: NeuSight's per-op measurements (PyTorch calls on P4, P100,
//! T4, V100, A100-40GB and MI100) as tables, read the way NeuSight measured them.
//!
//! 1. **Measured**: the GPU has a table of the op's family → its time there, interpolated
//!    between measured shapes by the learned FP32 model's ratio (the model sets the slope, the
//!    measurements the level).
//! 2. **Transfer**: a measured GPU of its vendor (same architecture first) → that GPU's time of
//!    the shape times the roofline ratio of the two GPUs.
//! 3. **Model**: neither → the learned FP32 predictor ([`LEARNED`], its left-out model when a
//!    GPU is held out), which also prices every FP32 op NeuSight never measured (convolutions,
//!    gradients).
//!
//! Measured times are isolated calls (host launch included); inside a running model each is
//! scaled by the learned model's ratio of in-model to isolated time for the same op.

use super::{widened, Family, Lookup, Tables, MEASURED_HALF_WIDTH, MEASURED_PER_STEP, TRANSFER_HALF_WIDTH};
use crate::provenance::Provenance;
use crate::{Context, Estimate, OpTime, Predictor, Roofline};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use wavecast_data::{Precision, Shape, Source};
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::ops::{Elementwise, EwKind, Gemm, GemmKind, Norm, NormKind, Softmax};
use wavecast_ir::{DType, Op};

/// The learned FP32 predictor: the model rung, and the slope between measured shapes.
pub const LEARNED: &str = "wavecast";

/// Whether a measured GPU of another architecture (same vendor) may stand in for an unmeasured
/// one. Left out in turn on NeuSight's end-to-end labels (`wavecast eval e2e --data
/// ../shared/data/neusight --predictor ladder`, mean APE over all GPUs): same architecture
/// only 8.4 %, the most similar of the vendor's GPUs 11.2 % (T4 from V100 23.3 % against the
/// learned model's 9.1 %, A100-40GB from V100 10.8 % against 5.2 %).
const CROSS_ARCHITECTURE: bool = false;

/// Whether the ladder's FP32 rungs price `op`: every FP32 op but collectives (priced by the
/// interconnect model like any other format's).
pub fn is_fp32(op: &Op) -> bool {
    op.dtype() == DType::Fp32 && !matches!(op, Op::Comm(_))
}

/// The NeuSight element-wise op name of an IR kind with `inputs` tensor inputs (`addu`: a
/// scalar operand), `None` for kinds NeuSight never measured.
fn vector_name(kind: EwKind, inputs: u32) -> Option<&'static str> {
    let scalar = inputs < 2;
    Some(match kind {
        EwKind::Add => if scalar { "addu" } else { "add" },
        EwKind::Mul => if scalar { "mulu" } else { "mul" },
        EwKind::Div => if scalar { "divu" } else { "div" },
        EwKind::Pow => if scalar { "powu" } else { "pow" },
        EwKind::Tanh => "tanh",
        EwKind::Relu => "relu",
        EwKind::Gelu => "gelu",
        _ => return None,
    })
}

/// The measured shape an FP32 forward op corresponds to in NeuSight's tables (as
/// `wavecast_data::neusight_ops::timing` writes them), `None` for ops NeuSight never timed.
pub fn neusight_shape(op: &Op) -> Option<Shape> {
    if !is_fp32(op) {
        return None;
    }
    let vector = |name: &str, tokens: u64, width: u64| Shape::Vector { op: name.to_string(), tokens, width };
    Some(match op {
        Op::Gemm(g) if g.quant.is_none() && g.weight_dtype.is_none() => match g.kind {
            GemmKind::Linear if g.batch == 1 => Shape::Gemm { m: g.m, n: g.n, k: g.k },
            GemmKind::Linear => return None,
            GemmKind::Bmm => Shape::Bmm { batch: g.batch, m: g.m, n: g.n, k: g.k },
        },
        Op::Softmax(s) if !s.backward => vector("softmax", s.rows, s.cols),
        Op::Norm(n) if !n.backward && n.kind == NormKind::LayerNorm => vector("ln", n.rows, n.cols),
        Op::Elementwise(e) => vector(vector_name(e.kind, e.tensor_inputs)?, 1, e.elements),
        _ => return None,
    })
}

/// The FP32 op a NeuSight table shape was measured as (the inverse of [`neusight_shape`]).
fn op_of(shape: &Shape) -> Option<Op> {
    let dt = DType::Fp32;
    Some(match shape {
        Shape::Gemm { m, n, k } => Op::Gemm(Gemm::linear(*m, *k, *n, true, dt).ok()?),
        Shape::Bmm { batch, m, n, k } => Op::Gemm(Gemm::bmm(*batch, *m, *k, *n, dt).ok()?),
        Shape::Vector { op, tokens, width } => match op.as_str() {
            "softmax" => Op::Softmax(Softmax::new(*tokens, *width, dt)),
            "ln" => Op::Norm(Norm::new(NormKind::LayerNorm, *tokens, *width, dt)),
            name => {
                let (kind, inputs) = wavecast_data::measurement::vector_kind(name)?;
                Op::Elementwise(Elementwise::new(kind, tokens.checked_mul(*width)?, inputs, dt))
            }
        },
        _ => return None,
    })
}

/// The naive answers FP32 figures are reported beside, isolated seconds (as measured).
#[derive(Debug, Clone, PartialEq)]
pub struct Fp32Baselines {
    /// The measured GPU they came from: the most similar of any architecture or vendor.
    pub from: String,
    /// Its (interpolated) time for the same shape, copied.
    pub copy: f64,
    /// That time times roofline(here) / roofline(there).
    pub roofline_ratio: f64,
}

/// The FP32 rungs over a set of tables (see the module comment).
#[derive(Clone)]
pub struct Fp32Rungs {
    learned: Arc<dyn Predictor>,
}

impl Fp32Rungs {
    /// The rungs with the learned model trained without `held_out` (all GPUs when `None`);
    /// read once per process and left-out GPU (a leave-one-out evaluation asks per label).
    pub fn new(held_out: Option<&str>) -> Result<Fp32Rungs, String> {
        static BUILT: OnceLock<Mutex<BTreeMap<Option<String>, Fp32Rungs>>> = OnceLock::new();
        let built = BUILT.get_or_init(Default::default);
        let key = held_out.map(str::to_string);
        if let Some(rungs) = built.lock().map_err(|e| e.to_string())?.get(&key) {
            return Ok(rungs.clone());
        }
        let learned = crate::by_name_unbounded(LEARNED, held_out).map_err(|e| e.to_string())?;
        let rungs = Fp32Rungs { learned: Arc::from(learned) };
        built.lock().map_err(|e| e.to_string())?.insert(key, rungs.clone());
        Ok(rungs)
    }

    /// The rungs for `tables` when they hold any NeuSight FP32 table (without one, FP32 ops
    /// keep the physics rung: serving's few FP32 ops are priced as they always were).
    pub fn for_tables(tables: &Tables, held_out: Option<&str>) -> Option<Fp32Rungs> {
        tables.families().any(|f| f.source == Source::Neusight).then(|| Fp32Rungs::new(held_out).ok()).flatten()
    }

    /// The learned model's time of `op` on `gpu`.
    fn learned(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Option<f64> {
        match self.learned.predict(op, gpu, ctx) {
            Estimate::Time(t) if t.seconds.is_finite() && t.seconds > 0.0 => Some(t.seconds),
            _ => None,
        }
    }

    /// `shape`'s isolated time in `gpu`'s own table of `family`, `None` when it has none.
    fn measured(&self, tables: &Tables, family: &Family, shape: &Shape, gpu: &Gpu) -> Option<Lookup> {
        let libraries = tables.of(family, &gpu.id)?;
        let physics = |s: &Shape| op_of(s).and_then(|op| self.learned(&op, gpu, &Context::ISOLATED));
        libraries.values().filter_map(|t| t.lookup(shape, &physics)).min_by(|a, b| a.distance.total_cmp(&b.distance))
    }

    /// Every other GPU with a table of `family`, most similar first.
    fn others<'c>(tables: &Tables, catalog: &'c Catalog, family: &Family, gpu: &Gpu) -> Vec<&'c Gpu> {
        let mut v: Vec<(&Gpu, f64)> = tables.measured(family).filter(|(id, _)| *id != gpu.id).filter_map(|(id, _)| catalog.get(id).ok()).map(|s| (s, super::similarity(s, gpu, Precision::Fp32))).collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.id.cmp(&b.0.id)));
        v.into_iter().map(|(g, _)| g).collect()
    }

    /// The measured GPUs that may stand in for `gpu`: its vendor's, same architecture first
    /// (another architecture only when [`CROSS_ARCHITECTURE`]).
    fn siblings<'c>(tables: &Tables, catalog: &'c Catalog, family: &Family, gpu: &Gpu) -> Vec<&'c Gpu> {
        let mut v: Vec<&Gpu> = Self::others(tables, catalog, family, gpu).into_iter().filter(|s| s.vendor == gpu.vendor).filter(|s| CROSS_ARCHITECTURE || s.architecture == gpu.architecture).collect();
        v.sort_by_key(|s| s.architecture != gpu.architecture);
        v
    }

    /// learned(to) / learned(from) for `op`, isolated calls: the transfer's ratio. It carries
    /// what the roofline does not, power-capped boards' clocks under load above all: left out
    /// in turn on the end-to-end labels, P4 from P100 missed by 13.3 % with it against 31.3 %
    /// with the roofline ratio (all GPUs: 8.4 % against 9.0 %).
    fn learned_ratio(&self, op: &Op, from: &Gpu, to: &Gpu) -> Option<f64> {
        Some(self.learned(op, to, &Context::ISOLATED)? / self.learned(op, from, &Context::ISOLATED)?)
    }

    /// roofline(to) / roofline(from) for `op`.
    fn roofline_ratio(op: &Op, from: &Gpu, to: &Gpu) -> Option<f64> {
        let roofline = |g: &Gpu| match Roofline.predict(op, g, &Context::ISOLATED) {
            Estimate::Time(t) if t.seconds.is_finite() && t.seconds > 0.0 => Some(t.seconds),
            _ => None,
        };
        Some(roofline(to)? / roofline(from)?)
    }

    /// The isolated time of `op` on `gpu` from the tables, with its rung: its own table, else
    /// the nearest sibling's carried by the roofline ratio. `None`: no table answers.
    fn priced_by_tables(&self, tables: &Tables, catalog: &Catalog, op: &Op, gpu: &Gpu) -> Option<OpTime> {
        let shape = neusight_shape(op)?;
        let family = Family::of(Source::Neusight, &shape, Precision::Fp32);
        if let Some(hit) = self.measured(tables, &family, &shape, gpu) {
            let p = widened(hit.seconds, MEASURED_HALF_WIDTH + MEASURED_PER_STEP * hit.distance, Provenance::MEASURED);
            return Some(OpTime { seconds: p.seconds, lo: p.lo, hi: p.hi, provenance: p.provenance });
        }
        Self::siblings(tables, catalog, &family, gpu).into_iter().find_map(|from| {
            let there = self.measured(tables, &family, &shape, from)?;
            let p = widened(there.seconds * self.learned_ratio(op, from, gpu)?, TRANSFER_HALF_WIDTH, Provenance::transfer(&from.id));
            Some(OpTime { seconds: p.seconds, lo: p.lo, hi: p.hi, provenance: p.provenance })
        })
    }

    /// `op` (an FP32 op, [`is_fp32`]) on `gpu` in `ctx`, down the FP32 rungs; never below the
    /// op's physical floor.
    pub fn price(&self, tables: &Tables, catalog: &Catalog, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        let Some(isolated) = self.priced_by_tables(tables, catalog, op, gpu) else { return self.learned.predict(op, gpu, ctx) };
        let scale = if ctx.isolated { 1.0 } else { self.in_model_ratio(op, gpu) };
        let t = OpTime { seconds: isolated.seconds * scale, lo: isolated.lo * scale, hi: isolated.hi * scale, provenance: isolated.provenance };
        Estimate::Time(crate::bounds::at_least(t, crate::bounds::floor_seconds(op, gpu)))
    }

    /// learned(in a model) / learned(isolated) for `op`: the share of an isolated call that is
    /// not host launch.
    fn in_model_ratio(&self, op: &Op, gpu: &Gpu) -> f64 {
        match (self.learned(op, gpu, &Context::IN_MODEL), self.learned(op, gpu, &Context::ISOLATED)) {
            (Some(inside), Some(alone)) => (inside / alone).min(1.0),
            _ => 1.0,
        }
    }

    /// The naive baselines for `op` on `gpu` (isolated seconds) from the most similar other
    /// GPU with a table of its family, of any vendor: `None` when there is none.
    pub fn baselines(&self, tables: &Tables, catalog: &Catalog, op: &Op, gpu: &Gpu) -> Option<Fp32Baselines> {
        let shape = neusight_shape(op)?;
        let family = Family::of(Source::Neusight, &shape, Precision::Fp32);
        Self::others(tables, catalog, &family, gpu).into_iter().find_map(|from| {
            let copy = self.measured(tables, &family, &shape, from)?.seconds;
            Some(Fp32Baselines { from: from.id.clone(), copy, roofline_ratio: copy * Self::roofline_ratio(op, from, gpu)? })
        })
    }
}

/// Which naive transfer a [`Fp32Baseline`] prices by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// The most similar measured GPU's time, copied.
    Copy,
    /// That time times roofline(here) / roofline(there).
    RooflineRatio,
}

impl Baseline {
    pub const ALL: [Baseline; 2] = [Baseline::Copy, Baseline::RooflineRatio];

    pub fn as_str(self) -> &'static str {
        match self {
            Baseline::Copy => "copy nearest GPU",
            Baseline::RooflineRatio => "roofline ratio",
        }
    }
}

/// A naive baseline as a whole predictor, so an end-to-end figure can be set beside one: FP32
/// ops with a table on another GPU priced by [`Baseline`] (scaled into a running model like the
/// ladder's), every other op as the ladder prices it.
pub struct Fp32Baseline {
    pub ops: super::LadderOps,
    pub kind: Baseline,
}

impl Predictor for Fp32Baseline {
    fn name(&self) -> &str {
        self.kind.as_str()
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        let (Some(rungs), Some(b)) = (self.ops.fp32(), self.ops.fp32_baselines(op, gpu)) else { return self.ops.predict(op, gpu, ctx) };
        let isolated = match self.kind {
            Baseline::Copy => b.copy,
            Baseline::RooflineRatio => b.roofline_ratio,
        };
        let scale = if ctx.isolated { 1.0 } else { rungs.in_model_ratio(op, gpu) };
        let t = OpTime { provenance: Provenance::transfer(&b.from), ..OpTime::exact(isolated * scale) };
        Estimate::Time(crate::bounds::at_least(t, crate::bounds::floor_seconds(op, gpu)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::Rung;
    use wavecast_data::Timing;

    const NAMES: [&str; 13] = ["add", "addu", "mul", "mulu", "div", "divu", "pow", "powu", "tanh", "relu", "gelu", "softmax", "ln"];

    fn row(gpu: &str, shape: Shape, ms: f64) -> Timing {
        Timing { source: Source::Neusight, gpu: gpu.into(), shape, precision: Precision::Fp32, kernel_source: "pytorch".into(), latency_ms: ms, provenance: String::new(), engine: String::new() }
    }

    fn linear(m: u64, n: u64, k: u64) -> Op {
        Op::Gemm(Gemm::linear(m, k, n, true, DType::Fp32).unwrap())
    }

    fn seconds(e: Estimate) -> OpTime {
        match e {
            Estimate::Time(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_neusight_shape_maps_to_an_op_and_back() {
        let mut shapes: Vec<Shape> = NAMES.iter().map(|n| Shape::Vector { op: n.to_string(), tokens: 1, width: 4096 }).collect();
        shapes.push(Shape::Gemm { m: 64, n: 1024, k: 512 });
        shapes.push(Shape::Bmm { batch: 12, m: 128, n: 64, k: 128 });
        for s in shapes {
            let op = op_of(&s).unwrap_or_else(|| panic!("{s:?}"));
            assert_eq!(neusight_shape(&op), Some(s));
        }
        let bf16 = Op::Gemm(Gemm::linear(64, 512, 1024, true, DType::Bf16).unwrap());
        assert_eq!(neusight_shape(&bf16), None, "only FP32 ops have NeuSight tables");
    }

    #[test]
    fn a_measured_fp32_point_is_reproduced_and_says_measured() {
        let rows = [row("v100-pcie", Shape::Gemm { m: 4096, n: 4096, k: 4096 }, 12.5)];
        let rungs = Fp32Rungs::new(None).unwrap();
        let tables = Tables::new(&rows, None);
        let v100 = &Gpu::find("v100-pcie").unwrap();
        let t = seconds(rungs.price(&tables, &Catalog::builtin(), &linear(4096, 4096, 4096), v100, &Context::ISOLATED));
        assert_eq!(t.provenance, Provenance::MEASURED);
        assert!((t.seconds / 12.5e-3 - 1.0).abs() < 1e-9, "{t:?}");
        assert!(t.lo < t.seconds && t.seconds < t.hi);
    }

    /// A100-80GB has no table: the A100-40GB's time, scaled by the roofline ratio (same FP32
    /// peak), with a poisoned table showing through; left out, it falls to the model.
    #[test]
    fn an_unmeasured_gpu_transfers_from_its_sibling_else_the_learned_model() {
        let shape = Shape::Gemm { m: 8192, n: 8192, k: 8192 };
        let op = linear(8192, 8192, 8192);
        let a100 = &Gpu::find("a100-pcie-80gb").unwrap();
        let cat = Catalog::builtin();
        let rungs = Fp32Rungs::new(None).unwrap();
        let at = |ms: f64, held_out: Option<&str>| seconds(rungs.price(&Tables::new(&[row("a100-pcie-40gb", shape.clone(), ms)], held_out), &cat, &op, a100, &Context::ISOLATED));
        let honest = at(60.0, None);
        assert_eq!(honest.provenance, Provenance::transfer("a100-pcie-40gb"));
        assert!(honest.seconds <= 60e-3 && honest.seconds > 40e-3, "{honest:?}");
        assert!(at(600.0, None).seconds > 5.0 * honest.seconds);
        let model = at(60.0, Some("a100-pcie-40gb"));
        assert_eq!(model.provenance.rung, Rung::Physics);
        let learned = seconds(rungs.learned.predict(&op, a100, &Context::ISOLATED));
        assert_eq!(model.seconds, learned.seconds);
    }

    /// Another architecture's table is no sibling: a T4 (Turing) is priced by the learned
    /// model even when a V100 (Volta) measured the shape.
    #[test]
    fn another_architecture_is_not_a_sibling() {
        let rows = [row("v100-pcie", Shape::Gemm { m: 1024, n: 1024, k: 1024 }, 0.2)];
        let rungs = Fp32Rungs::new(None).unwrap();
        let t4 = &Gpu::find("t4").unwrap();
        let t = seconds(rungs.price(&Tables::new(&rows, None), &Catalog::builtin(), &linear(1024, 1024, 1024), t4, &Context::ISOLATED));
        assert_eq!(t.provenance.rung, Rung::Physics);
        let b = rungs.baselines(&Tables::new(&rows, None), &Catalog::builtin(), &linear(1024, 1024, 1024), t4).unwrap();
        assert_eq!((b.from.as_str(), b.copy), ("v100-pcie", 0.2e-3));
        assert!(b.roofline_ratio > b.copy, "a T4 is slower than a V100");
    }

    #[test]
    fn in_a_model_a_measured_call_loses_its_launch_share_but_never_its_floor() {
        let op = linear(64, 64, 64);
        let rows = [row("v100-pcie", Shape::Gemm { m: 64, n: 64, k: 64 }, 0.02)];
        let rungs = Fp32Rungs::new(None).unwrap();
        let v100 = &Gpu::find("v100-pcie").unwrap();
        let tables = Tables::new(&rows, None);
        let alone = seconds(rungs.price(&tables, &Catalog::builtin(), &op, v100, &Context::ISOLATED));
        let inside = seconds(rungs.price(&tables, &Catalog::builtin(), &op, v100, &Context::IN_MODEL));
        assert!(inside.seconds < alone.seconds, "{inside:?} {alone:?}");
        assert!(inside.seconds >= crate::bounds::floor_seconds(&op, v100));
    }

    /// Leave-one-GPU-out through the folder loader: a poisoned P4 table (1 s for a 1024³
    /// GEMM) never reaches the ladder that leaves P4 out, which prices P4 from P100 instead.
    #[test]
    fn a_left_out_gpus_rows_never_reach_a_table() {
        let dir = std::env::temp_dir().join(format!("wavecast-fp32-poison-{}", std::process::id()));
        let linear_dir = dir.join("ops/train/linear");
        std::fs::create_dir_all(&linear_dir).unwrap();
        let header = "OPName,Latency,Device,B,M,N,K\n";
        std::fs::write(linear_dir.join("Tesla_P4.csv"), format!("{header}linear,1000,Tesla P4,1,1024,1024,1024\n")).unwrap();
        std::fs::write(linear_dir.join("Tesla_P100.csv"), format!("{header}linear,0.5,Tesla P100-PCIE-16GB,1,1024,1024,1024\n")).unwrap();
        let p4 = &Gpu::find("p4").unwrap();
        let op = linear(1024, 1024, 1024);
        let left_out = super::super::LadderOps::load(Some(&dir), Some("p4")).unwrap();
        let with_p4 = super::super::LadderOps::load(Some(&dir), None).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(left_out.ladder().tables().gpus(), vec!["p100-pcie"]);
        let t = seconds(left_out.predict(&op, p4, &Context::ISOLATED));
        assert_eq!(t.provenance, Provenance::transfer("p100-pcie"));
        assert!(t.seconds < 0.1, "{t:?}");
        let own = seconds(with_p4.predict(&op, p4, &Context::ISOLATED));
        assert_eq!(own.provenance, Provenance::MEASURED);
        assert!((own.seconds - 1.0).abs() < 1e-9, "{own:?}");
    }
}
