//! The ladder as the operator graph's predictor: each IR op is read as the measured shape it
//! corresponds to ([`op_shape`]) and priced down the ladder, inside a running model. This is
//! the one path that prices ops for serving, static batches, comparisons and plans.
//!
//! Measured tables are microbenchmark times; inside a model a kernel pays only the GPU's gap
//! between kernels, not a host launch, so every rung is scaled by the physics model's ratio of
//! in-model to stand-alone time for the same shape (1 for large kernels).

use super::fp32::{self, Fp32Rungs};
use super::{Ladder, Priced, Query, Surfaces, Tables};
use crate::sustained::{op_shape, Model, IN_MODEL_KERNEL_US};
use crate::{Context, Estimate, OpTime, Predictor, Roofline};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use wavecast_data::{Precision, Shape, Source, Timing};
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::{DType, Engine, Op};

/// The ladder pricing IR ops.
#[derive(Clone)]
pub struct LadderOps {
    ladder: Arc<Ladder>,
    /// The measured-data folder the tables came from (`None`: no tables, physics only).
    ops_data: Option<PathBuf>,
    /// FP32 ops' rungs (the learned FP32 model in place of physics) when the tables hold
    /// NeuSight's FP32 measurements; else FP32 ops take the physics rung as before.
    fp32: Option<Fp32Rungs>,
    /// The serving engine whose kernels run the ops (`sglang`, `trtllm`; empty: the default,
    /// vLLM): every query asks for its tables first.
    engine: String,
}

/// Ladders already built in this process (with their FP32 rungs), by data folder, left-out
/// GPU and the engine whose tables were read besides the default's: loading and fitting the
/// transfer takes seconds, and a comparison or a sweep asks many times.
type Built = Mutex<BTreeMap<(PathBuf, Option<String>, &'static str), LadderOps>>;

impl LadderOps {
    pub fn new(ladder: Ladder, ops_data: Option<PathBuf>) -> LadderOps {
        let fp32 = Fp32Rungs::for_tables(ladder.tables(), None);
        LadderOps { ladder: Arc::new(ladder), ops_data, fp32, engine: String::new() }
    }

    /// The same ladder answering for the serving engine `engine` (`vllm`, `sglang`, `trtllm`;
    /// empty: the default): its queries read that engine's tables first, the default's where
    /// it has none (the answer's provenance says so).
    pub fn with_engine(&self, engine: &str) -> LadderOps {
        LadderOps { engine: super::tables::engine_key(engine).to_ascii_lowercase(), ..self.clone() }
    }

    /// The engine the queries name (empty: the default).
    pub fn engine(&self) -> &str {
        &self.engine
    }

    /// No measurements at all: every op priced by the shipped physics numbers.
    pub fn physics_only() -> LadderOps {
        static PHYSICS: OnceLock<Arc<Ladder>> = OnceLock::new();
        let ladder = PHYSICS.get_or_init(|| Arc::new(Ladder::new(Model::shipped(), Tables::default(), Catalog::builtin())));
        LadderOps { ladder: ladder.clone(), ops_data: None, fp32: None, engine: String::new() }
    }

    /// No measured-data folder: the shipped surfaces (every one of `held_out` left out) for
    /// the measured and transfer rungs, the shipped physics numbers below them.
    /// Built once per process and left-out GPU: each build parses the shipped physics numbers,
    /// the catalog and the surfaces (an evaluation asking once per row held 2,969 copies).
    pub fn shipped(held_out: Option<&str>) -> LadderOps {
        static SHIPPED: OnceLock<Mutex<BTreeMap<Option<String>, Arc<Ladder>>>> = OnceLock::new();
        let built = SHIPPED.get_or_init(Default::default);
        let key = held_out.map(str::to_string);
        let cached = built.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
        let ladder = cached.unwrap_or_else(|| {
            let ladder = Arc::new(Ladder::new(Model::shipped(), Tables::default(), Catalog::builtin()).with_surfaces(Surfaces::shipped_without(held_out)));
            built.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(ladder).clone()
        });
        LadderOps { ladder, ops_data: None, fp32: None, engine: String::new() }
    }

    /// Tables from the measured-data folder `dir` (any layout `wavecast_data::load_ladder_timings`
    /// reads), every row of `held_out` left out; built once per process.
    pub fn from_dir(dir: &Path, catalog: &Catalog, held_out: Option<&str>) -> Result<LadderOps, String> {
        LadderOps::from_dir_for(dir, catalog, held_out, "")
    }

    /// [`LadderOps::from_dir`] for the serving engine `engine` (`sglang`, `trtllm`; empty or
    /// `vllm`: the default): the default engine's tables and that engine's, its queries
    /// asking for that engine's first. Every engine's collections would cost three times the
    /// load time and memory of one (30 s and 5 GB on the shared AIConfigurator data).
    pub fn from_dir_for(dir: &Path, catalog: &Catalog, held_out: Option<&str>, engine: &str) -> Result<LadderOps, String> {
        static BUILT: OnceLock<Built> = OnceLock::new();
        let engine = known_engine(engine)?;
        let key = (dir.to_path_buf(), held_out.map(str::to_string), engine);
        let built = BUILT.get_or_init(Default::default);
        if let Some(ops) = built.lock().map_err(|e| e.to_string())?.get(&key) {
            return Ok(ops.clone());
        }
        let rows = folder_rows(dir, catalog, engine)?;
        // The folder's tables win; shipped surfaces answer for GPUs and families it lacks.
        let ladder = Arc::new(Ladder::from_rows(Model::shipped(), &rows, catalog, held_out).with_surfaces(Surfaces::shipped_without(held_out)));
        let ops = LadderOps { fp32: Fp32Rungs::for_tables(ladder.tables(), held_out), ladder, ops_data: Some(key.0.clone()), engine: engine.to_string() };
        built.lock().map_err(|e| e.to_string())?.insert(key, ops.clone());
        Ok(ops)
    }

    /// [`LadderOps::from_dir`] when a folder is given, else [`LadderOps::shipped`].
    pub fn load(ops_data: Option<&Path>, held_out: Option<&str>) -> Result<LadderOps, String> {
        LadderOps::load_for(ops_data, held_out, "")
    }

    /// [`LadderOps::load`] answering for the serving engine `engine` ([`LadderOps::from_dir_for`];
    /// the shipped surfaces hold the default engine's measurements only).
    pub fn load_for(ops_data: Option<&Path>, held_out: Option<&str>, engine: &str) -> Result<LadderOps, String> {
        match ops_data {
            Some(dir) => LadderOps::from_dir_for(dir, &Catalog::builtin(), held_out, engine),
            None => Ok(LadderOps::shipped(held_out).with_engine(known_engine(engine)?)),
        }
    }

    pub fn ladder(&self) -> &Ladder {
        &self.ladder
    }

    pub fn ops_data(&self) -> Option<&Path> {
        self.ops_data.as_deref()
    }

    /// The FP32 rungs, when the learned FP32 model could be read.
    pub fn fp32(&self) -> Option<&Fp32Rungs> {
        self.fp32.as_ref()
    }

    /// The FP32 rungs' naive baselines for `op` on `gpu` (see [`Fp32Rungs::baselines`]).
    pub fn fp32_baselines(&self, op: &Op, gpu: &Gpu) -> Option<fp32::Fp32Baselines> {
        self.fp32.as_ref()?.baselines(self.ladder.tables(), self.ladder.catalog(), op, gpu)
    }

    /// A measured-style shape priced inside a running model, down the ladder.
    pub fn price_shape(&self, shape: Shape, precision: Precision, gpu: &Gpu) -> Result<Priced, String> {
        let q = Query::new(Source::Aiconfigurator, shape, precision, None, &self.engine);
        let p = self.ladder.price(&q, gpu)?;
        let work = crate::sustained::Work::of(&q.shape, q.precision, gpu);
        let in_model = work.as_ref().map_or(1.0, |w| self.in_model_ratio(&q, w, gpu));
        // Never below the shape's physical bound (dense peak, achievable bandwidth; for a fused
        // MoE, whose routing and expert form are open, its least work at datasheet bandwidth):
        // a measured time is the kernel on its benchmark's warm buffers, which may sit in L2;
        // in a model the rest of the iteration evicts them.
        let floor = work.map(|w| w.bound_seconds()).unwrap_or(0.0);
        let seconds = (p.seconds * in_model).max(floor);
        Ok(Priced { seconds, lo: (p.lo * in_model).max(floor).min(seconds), hi: (p.hi * in_model).max(seconds), provenance: p.provenance })
    }

    /// Seconds of a measured-style shape inside a running model, or why it cannot be priced.
    pub fn shape_seconds(&self, shape: Shape, precision: Precision, gpu: &Gpu) -> Result<f64, String> {
        self.price_shape(shape, precision, gpu).map(|p| p.seconds)
    }

    /// physics(in a model) / physics(on its own) for the query's shape, whose work on `gpu` is
    /// `work`: the share of a stand-alone time that is not host launch.
    fn in_model_ratio(&self, q: &Query, work: &crate::sustained::Work, gpu: &Gpu) -> f64 {
        let t = Timing { source: q.source, gpu: gpu.id.clone(), shape: q.shape.clone(), precision: q.precision, kernel_source: String::new(), latency_ms: 0.0, provenance: String::new(), engine: String::new() };
        let model = self.ladder.model();
        match model.predict_alone_and_in_model(&t, work, IN_MODEL_KERNEL_US) {
            Ok((alone, inside)) if inside > 0.0 && alone > 0.0 => (inside / alone).min(1.0),
            _ => 1.0,
        }
    }
}

/// The rows of the measured-data folder read last (see [`LastRead::rows`]).
#[derive(Default)]
struct LastRead(Mutex<Option<(FolderKey, Arc<Vec<Timing>>)>>);

/// A measured-data folder and the serving engine whose collections were read from it.
type FolderKey = (PathBuf, &'static str);

impl LastRead {
    /// Every row of the measured-data folder `dir` for `engine` (see
    /// [`LadderOps::from_dir_for`]). The last folder read is kept: a leave-one-GPU-out
    /// evaluation builds one ladder per left-out GPU from the same folder, and parsing it again
    /// for each (NeuSight's 120 MB of CSV, seven times) took most of `eval e2e`'s time. Only
    /// one is kept because one engine's AIConfigurator rows alone take gigabytes.
    fn rows(&self, dir: &Path, catalog: &Catalog, engine: &'static str) -> Result<Arc<Vec<Timing>>, String> {
        let key = (dir.to_path_buf(), engine);
        if let Some((read, rows)) = self.0.lock().map_err(|e| e.to_string())?.as_ref() {
            if *read == key {
                return Ok(rows.clone());
            }
        }
        let engines = if engine.is_empty() { wavecast_data::Engines::Default } else { wavecast_data::Engines::DefaultAnd(engine) };
        let loaded = wavecast_data::load_ladder_timings(dir, catalog, engines).map_err(|e| format!("--ops-data {}: {e}", dir.display()))?;
        if loaded.rows.is_empty() {
            return Err(format!("--ops-data {}: no measurements of any GPU wavecast knows", dir.display()));
        }
        let rows = Arc::new(loaded.rows);
        *self.0.lock().map_err(|e| e.to_string())? = Some((key, rows.clone()));
        Ok(rows)
    }
}

/// [`LastRead::rows`] of the process's one cache.
fn folder_rows(dir: &Path, catalog: &Catalog, engine: &'static str) -> Result<Arc<Vec<Timing>>, String> {
    static LAST: OnceLock<LastRead> = OnceLock::new();
    LAST.get_or_init(LastRead::default).rows(dir, catalog, engine)
}

/// `engine` (any of [`Engine`]'s spellings) as its tables are keyed: empty for the default
/// engine and for none named; an engine wavecast does not know is an error naming it.
fn known_engine(engine: &str) -> Result<&'static str, String> {
    if engine.is_empty() {
        return Ok("");
    }
    let known: Engine = engine.parse().map_err(|_| format!("no measured tables for the serving engine '{engine}' (known: {})", Engine::NAMES.join(", ")))?;
    Ok(if known.is_default() { "" } else { known.name() })
}

impl LadderOps {
    /// A TF32 GEMM, which no table measures (NeuSight's FP32 tables ran with TF32 off): the
    /// same GEMM in BF16 on the same tensor cores, slower by the ratio of the two peaks (two on
    /// every part with both: half the rate, operands twice as wide), never below the TF32
    /// floor. `None` for every other op.
    fn tf32_gemm(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Option<Estimate> {
        let Op::Gemm(g) = op else { return None };
        if g.dtype != DType::Tf32 || g.quant.is_some() || g.weight_dtype.is_some() {
            return None;
        }
        let (Some(tf32), Some(bf16)) = (gpu.peak_tflops.tf32, gpu.peak_tflops.bf16) else {
            return Some(Estimate::Unpriced(format!("{} has no tf32 tensor units", gpu.id)));
        };
        let ratio = bf16 / tf32;
        let same_in_bf16 = Op::Gemm(wavecast_ir::ops::Gemm { dtype: DType::Bf16, ..g.clone() });
        Some(match self.predict(&same_in_bf16, gpu, ctx) {
            Estimate::Time(t) => {
                let slower = OpTime { seconds: t.seconds * ratio, lo: t.lo * ratio, hi: t.hi * ratio, provenance: t.provenance };
                Estimate::Time(crate::bounds::at_least(slower, crate::bounds::floor_seconds(op, gpu)))
            }
            unpriced => unpriced,
        })
    }

    /// [`LadderOps::price_shape`], with an FP16 matrix or attention shape that only physics
    /// prices taken from its BF16 twin where the GPU runs both at one rate (every part with
    /// BF16 units): the same tensor cores, the same operand width, and the tables measure BF16.
    /// The twin answers even from physics: FP16's own fitted numbers come from older engines'
    /// kernels, and one GPU must not price the same work 10–25 % apart by the format's name.
    fn price_sixteen_bit(&self, shape: Shape, precision: Precision, gpu: &Gpu) -> Result<Priced, String> {
        let own = self.price_shape(shape.clone(), precision, gpu);
        let physics = own.as_ref().map_or(true, |p| p.provenance.rung == crate::provenance::Rung::Physics);
        let tensor_shape = matches!(shape, Shape::Gemm { .. } | Shape::AttentionPrefill { .. } | Shape::AttentionDecode { .. });
        let same_rate = matches!((gpu.peak_tflops.fp16, gpu.peak_tflops.bf16), (Some(h), Some(b)) if (h - b).abs() <= 0.01 * b);
        if precision != Precision::Fp16 || !physics || !tensor_shape || !same_rate {
            return own;
        }
        self.price_shape(bf16_twin(shape), Precision::Bf16, gpu).or(own)
    }
}

/// The same shape with a 16-bit KV cache in BF16 (an FP8 cache stays FP8).
fn bf16_twin(shape: Shape) -> Shape {
    let sixteen = |p: Precision| if p == Precision::Fp16 { Precision::Bf16 } else { p };
    match shape {
        Shape::AttentionPrefill { batch, isl, past, heads, kv_heads, head_dim, window, kv_precision } => Shape::AttentionPrefill { batch, isl, past, heads, kv_heads, head_dim, window, kv_precision: sixteen(kv_precision) },
        Shape::AttentionDecode { batch, kv_len, heads, kv_heads, head_dim, window, kv_precision } => Shape::AttentionDecode { batch, kv_len, heads, kv_heads, head_dim, window, kv_precision: sixteen(kv_precision) },
        other => other,
    }
}

impl Predictor for LadderOps {
    fn name(&self) -> &str {
        "ladder"
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        if let Some(rungs) = self.fp32.as_ref().filter(|_| fp32::is_fp32(op)) {
            return rungs.price(self.ladder.tables(), self.ladder.catalog(), op, gpu, ctx);
        }
        if let Some(t) = self.tf32_gemm(op, gpu, ctx) {
            return t;
        }
        if let Some(s) = crate::comm::outside_tables_at_least(op, gpu, |share| self.predict(share, gpu, ctx).seconds()) {
            return Estimate::Time(OpTime::exact(s));
        }
        let Some((shape, precision)) = op_shape(op) else { return Roofline.predict(op, gpu, ctx) };
        // Attention's 16-bit math runs in FP16 on a part without BF16 units (an FP8 cache on a
        // T4 is dequantized to FP16 there).
        let precision = if matches!(op, Op::Attention(_)) && precision == Precision::Bf16 && !gpu.supports(DType::Bf16) { Precision::Fp16 } else { precision };
        match (self.price_sixteen_bit(shape, precision, gpu), op) {
            // A measured kernel can beat the floor's achievable bandwidth (a cache hit); the
            // prediction for the op in a model never does.
            (Ok(p), _) => Estimate::Time(crate::bounds::at_least(OpTime { seconds: p.seconds, lo: p.lo, hi: p.hi, provenance: p.provenance }, crate::bounds::floor_seconds(op, gpu))),
            // No measured or fitted collective over this link: the α–β model.
            (Err(_), Op::Comm(c)) => Estimate::Time(OpTime::exact(crate::comm::CommModel::default().seconds(c, gpu))),
            (Err(reason), _) => crate::unmodelled::seconds(op, gpu).map_or(Estimate::Unpriced(reason), |s| Estimate::Time(OpTime::exact(s))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::Rung;
    use wavecast_ir::ops::Gemm;
    use wavecast_ir::DType;

    fn timing(gpu: &str, shape: Shape, ms: f64) -> Timing {
        Timing { source: Source::Aiconfigurator, gpu: gpu.into(), shape, precision: Precision::Bf16, kernel_source: "lib".into(), latency_ms: ms, provenance: String::new(), engine: String::new() }
    }

    fn gemm_op(m: u64, n: u64, k: u64) -> Op {
        Op::Gemm(Gemm::linear(m, n, k, false, DType::Bf16).unwrap())
    }

    fn ladder(rows: &[Timing], held_out: Option<&str>) -> LadderOps {
        LadderOps::new(Ladder::from_rows(Model::shipped(), rows, &Catalog::builtin(), held_out), None)
    }

    fn time(p: &LadderOps, op: &Op, gpu: &str) -> OpTime {
        match p.predict(op, &Gpu::find(gpu).unwrap(), &Context::IN_MODEL) {
            Estimate::Time(t) => t,
            other => panic!("{other:?}"),
        }
    }

    /// A kernel timed as its benchmark times it (warm buffers) may beat the DRAM bound where
    /// its bytes fit in L2, and a transfer of measured times is not lifted to that bound; the
    /// same shape inside a running model is.
    #[test]
    fn a_transfer_may_undercut_the_dram_bound_only_outside_a_model() {
        let stream = |bytes: f64, ms: f64| Timing { precision: Precision::Fp16, ..timing("h100-sxm", Shape::stream(bytes), ms) };
        // The H100's streaming table: 2 µs of launch, a 19 MB pass in 5.6 µs, 64 MB in 22 µs.
        let rows = [stream(4e3, 0.002), stream(19e6, 0.0056), stream(64e6, 0.022)];
        let p = ladder(&rows, None);
        let l40s = Gpu::find("l40s").unwrap();
        let work = crate::sustained::Work::of(&rows[1].shape, Precision::Fp16, &l40s).unwrap();
        let (dram, warm) = (work.bound_seconds(), work.warm_bound_seconds(&l40s));
        // 19 MB fit in the L40S's 96 MB of L2, which its 142 SMs at 2.52 GHz read 14 times
        // as fast as 92 % of its 864 GB/s of DRAM.
        assert!(dram > 19e6 / l40s.bandwidth() && (dram / warm - 14.4).abs() < 0.1, "{warm} vs {dram}");
        let q = Query::new(Source::Aiconfigurator, rows[1].shape.clone(), Precision::Fp16, None, "").as_benchmarked();
        let kernel = p.ladder().price(&q, &l40s).unwrap();
        assert_eq!(kernel.provenance.to_string(), "transfer from h100-sxm");
        assert!(kernel.seconds < dram, "the benchmark's kernel is carried as is: {kernel:?}, DRAM bound {dram}");
        let in_model = p.price_shape(rows[1].shape.clone(), Precision::Fp16, &l40s).unwrap();
        assert!(in_model.seconds >= dram && in_model.lo >= dram, "{in_model:?}");
        // Past L2 only the bytes beyond it are bounded by DRAM.
        let big = crate::sustained::Work::of(&Shape::stream(1e9), Precision::Fp16, &l40s).unwrap();
        let spared = big.bound_seconds() - big.warm_bound_seconds(&l40s);
        let l2 = l40s.l2_bytes();
        assert!((spared / (l2 / (crate::sustained::ACHIEVABLE_BANDWIDTH * l40s.bandwidth()) - l2 / l40s.l2_bandwidth()) - 1.0).abs() < 1e-9, "{spared}");
    }

    /// One folder is parsed once for all the ladders a leave-one-GPU-out run builds from it;
    /// another folder is read afresh.
    #[test]
    fn a_folder_is_read_once_for_every_left_out_gpu() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/modern");
        let cat = Catalog::builtin();
        // A cache of its own: other tests read folders through the process's one meanwhile.
        let cache = LastRead::default();
        let first = cache.rows(&root, &cat, "").unwrap();
        assert!(!first.is_empty());
        assert!(Arc::ptr_eq(&first, &cache.rows(&root, &cat, "").unwrap()), "the same folder is not parsed again");
        let other = cache.rows(&root.join("aiconfigurator"), &cat, "").unwrap();
        assert!(!Arc::ptr_eq(&first, &other), "another folder is its own read");
        assert!(!Arc::ptr_eq(&first, &cache.rows(&root, &cat, "").unwrap()), "only the last folder read is kept");
    }

    /// A TF32 GEMM runs on the tensor cores at half BF16's rate: twice the BF16 price, far
    /// below the FP32 one, and refused on a part without TF32 units.
    /// An FP16 GEMM no table measures takes its BF16 twin's measured price where the GPU runs
    /// both at one rate; a T4, which has no BF16 units, keeps its own FP16 answer.
    #[test]
    fn an_fp16_gemm_takes_its_measured_bf16_twin() {
        let rows = [timing("h100-sxm", Shape::Gemm { m: 2048, n: 4096, k: 4096 }, 0.1)];
        let p = ladder(&rows, None);
        let op = |dtype| Op::Gemm(Gemm::linear(2048, 4096, 4096, false, dtype).unwrap());
        let (fp16, bf16) = (time(&p, &op(DType::Fp16), "h100-sxm"), time(&p, &op(DType::Bf16), "h100-sxm"));
        assert_eq!(bf16.provenance.rung, Rung::Measured);
        assert_eq!((fp16.seconds, fp16.provenance.rung), (bf16.seconds, Rung::Measured));
        let t4 = time(&p, &op(DType::Fp16), "t4");
        assert!(t4.seconds > 0.0 && t4.provenance.rung != Rung::Measured, "{t4:?}");
    }

    #[test]
    fn a_tf32_gemm_is_the_bf16_gemm_at_the_tf32_rate() {
        let p = ladder(&[], None);
        let op = |dtype| Op::Gemm(Gemm::linear(4096, 4096, 4096, false, dtype).unwrap());
        let (tf32, bf16, fp32) = (time(&p, &op(DType::Tf32), "a100-sxm-80gb"), time(&p, &op(DType::Bf16), "a100-sxm-80gb"), time(&p, &op(DType::Fp32), "a100-sxm-80gb"));
        assert!((tf32.seconds / bf16.seconds - 2.0).abs() < 1e-9, "tf32 {tf32:?} vs bf16 {bf16:?}");
        assert!(tf32.seconds < fp32.seconds / 3.0, "tf32 {tf32:?} vs fp32 {fp32:?}");
        let v100 = p.predict(&op(DType::Tf32), &Gpu::find("v100").unwrap(), &Context::IN_MODEL);
        assert!(matches!(v100, Estimate::Unpriced(ref r) if r.contains("no tf32")), "{v100:?}");
    }

    /// A collective past one server is priced over the network, not from the tables (all
    /// measured inside a server) nor as if NVLink joined all its GPUs.
    #[test]
    fn a_collective_across_servers_is_priced_over_the_network() {
        use wavecast_ir::ops::{Comm, CommKind};
        let p = ladder(&[], None);
        let b200 = Gpu::find("b200").unwrap();
        let comm = Comm::new(CommKind::AllToAll, 4.0e6, 16, DType::Bf16, false);
        let network = crate::comm::CommModel::default().across_servers_seconds(&comm, &b200).unwrap();
        assert_eq!(time(&p, &Op::Comm(comm.clone()), "b200").seconds, network);
        let inside = time(&p, &Op::Comm(Comm { group: 8, ..comm }), "b200").seconds;
        assert!(inside < network / 2.0, "{inside} vs {network}");
    }

    /// A collective of 2 or 4 GPUs inside a server is the shape its table timed (all of the
    /// GPUs that ran it), so its measurement prices it; keyed as one of a server's eight, it
    /// missed every table of fewer GPUs and fell to physics.
    #[test]
    fn a_collective_inside_a_server_reads_its_table_at_any_group_size() {
        use wavecast_data::Collective;
        use wavecast_ir::ops::{Comm, CommKind};
        for gpus in [2u64, 4, 8] {
            let shape = Shape::Collective { op: Collective::AllReduce, gpus, bytes: 1 << 20, gpus_per_node: gpus };
            let p = ladder(&[timing("h100-sxm", shape, 0.05)], None);
            let t = time(&p, &Op::Comm(Comm::new(CommKind::AllReduce, (1 << 20) as f64, gpus as u32, DType::Bf16, false)), "h100-sxm");
            assert_eq!(t.provenance.rung, Rung::Measured, "{gpus} GPUs: {t:?}");
            assert!((t.seconds / 5e-5 - 1.0).abs() < 0.01, "{gpus} GPUs: {t:?}");
        }
    }

    /// A large GEMM measured on the GPU is priced from that measurement (its in-model share
    /// is all of it), and says so.
    #[test]
    fn a_measured_gpu_is_priced_from_its_own_table() {
        let shape = Shape::Gemm { m: 8192, n: 8192, k: 8192 };
        let p = ladder(&[timing("h100-sxm", shape, 2.0)], None);
        let t = time(&p, &gemm_op(8192, 8192, 8192), "h100-sxm");
        assert_eq!(t.provenance.rung, Rung::Measured);
        assert!((t.seconds / 2e-3 - 1.0).abs() < 0.01, "{t:?}");
        assert!(t.lo < t.seconds && t.seconds < t.hi);
    }

    /// A GPU without measurements borrows its sibling's, scaled; a poisoned sibling shows up
    /// in the answer (the table is really read), and no table at all falls to physics.
    #[test]
    fn an_unmeasured_gpu_transfers_from_a_sibling_or_falls_to_physics() {
        let shape = Shape::Gemm { m: 8192, n: 8192, k: 8192 };
        let op = gemm_op(8192, 8192, 8192);
        let honest = time(&ladder(&[timing("h100-sxm", shape.clone(), 1.5)], None), &op, "h200");
        let poisoned = time(&ladder(&[timing("h100-sxm", shape.clone(), 15.0)], None), &op, "h200");
        assert_eq!(honest.provenance.rung, Rung::Transfer);
        assert_eq!(honest.provenance.from, Some("h100-sxm"));
        assert!(poisoned.seconds > 5.0 * honest.seconds, "{honest:?} {poisoned:?}");
        let physics = time(&ladder(&[timing("h100-sxm", shape, 1.5)], Some("h100-sxm")), &op, "h200");
        assert_eq!(physics.provenance.rung, Rung::Physics);
        assert!(physics.hi / physics.seconds > honest.hi / honest.seconds, "intervals widen down the ladder");
    }

    /// Without a folder the shipped surfaces answer: a GPU they cover is measured (shipped),
    /// a user's GPU of a measured architecture (not in the built-in catalog) transfers from
    /// them, and leaving the measured GPU out removes its surface.
    #[test]
    fn shipped_surfaces_price_without_a_folder_and_reach_a_users_gpu() {
        let op = gemm_op(4096, 4096, 4096);
        let shipped = LadderOps::shipped(None);
        if !shipped.ladder().surfaces().trained_on.iter().any(|g| g == "h100-sxm") {
            return; // weights/ladder.json fitted without H100 tables: nothing to check
        }
        let own = time(&shipped, &op, "h100-sxm");
        assert_eq!((own.provenance.rung, own.provenance.shipped), (Rung::Measured, true));
        let mut variant = Gpu::find("h100-sxm").unwrap();
        variant.id = "my-h100-variant".into();
        variant.sm_count -= 8;
        let t = match shipped.predict(&op, &variant, &Context::IN_MODEL) {
            Estimate::Time(t) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(t.provenance.rung, Rung::Transfer);
        assert!(t.provenance.shipped);
        let left_out = time(&LadderOps::shipped(Some("h100-sxm")), &op, "h100-sxm");
        assert_ne!(left_out.provenance.rung, Rung::Measured);
    }

    #[test]
    fn no_measurements_means_physics_and_a_missing_folder_is_an_error() {
        let t = time(&LadderOps::physics_only(), &gemm_op(4096, 4096, 4096), "h100-sxm");
        assert_eq!(t.provenance.rung, Rung::Physics);
        let err = LadderOps::load(Some(Path::new("/nonexistent/wavecast-ops")), None).err().unwrap();
        assert!(err.contains("/nonexistent/wavecast-ops"), "{err}");
    }

    /// A sliding-window layer's attention is the windowed kernel the tables time (gpt-oss's
    /// window of 128), not attention over the whole context: the same shape as a measured
    /// windowed row, and far cheaper than full attention at 8,192 cached tokens.
    #[test]
    fn a_sliding_window_attention_is_priced_as_the_window_kernel() {
        use wavecast_ir::ops::Attention;
        let decode = |window| Op::Attention(Attention { batch: 64, heads: 8, kv_heads: 1, q_len: 1, kv_len: 8192, head_dim: 64, causal: true, dtype: DType::Bf16, backward: false, v_head_dim: None, shared_kv: false, window });
        let shape = Shape::AttentionDecode { batch: 64, kv_len: 8191, heads: 8, kv_heads: 1, head_dim: 64, window: 128, kv_precision: Precision::Bf16 };
        assert_eq!(op_shape(&decode(Some(128))).map(|(s, _)| s), Some(shape.clone()));
        let physics = LadderOps::physics_only();
        let (full, windowed) = (time(&physics, &decode(None), "b200").seconds, time(&physics, &decode(Some(128)), "b200").seconds);
        assert!(windowed < full / 4.0, "{windowed} vs {full}");
        // A full-attention row of the same sizes is another family: it does not answer.
        let full_row = Shape::AttentionDecode { batch: 64, kv_len: 8191, heads: 8, kv_heads: 1, head_dim: 64, window: 0, kv_precision: Precision::Bf16 };
        let p = ladder(&[timing("b200", full_row, 0.2), timing("b200", shape, 0.05)], None);
        let t = time(&p, &decode(Some(128)), "b200");
        assert_eq!(t.provenance.rung, Rung::Measured);
        // A prompt of 8,192 tokens under the window: 128 keys per query at most, never fewer
        // keys than queries (the physics once cut the context to the window and counted
        // negative pairs).
        let prefill = Shape::AttentionPrefill { batch: 1, isl: 8192, past: 0, heads: 8, kv_heads: 1, head_dim: 64, window: 128, kv_precision: Precision::Bf16 };
        let Ok(crate::sustained::Work::Kernel(k)) = crate::sustained::Work::of(&prefill, Precision::Bf16, &Gpu::find("b200").unwrap()) else { panic!("a kernel") };
        let pairs = 128.0 * 129.0 / 2.0 + (8192.0 - 128.0) * 128.0;
        assert_eq!(k.flops, 4.0 * 8.0 * 64.0 * pairs);
        // In a model the row's launch is the GPU's gap between kernels, so less than 0.05 ms.
        let full = time(&p, &decode(None), "b200");
        assert!(t.seconds <= 0.05e-3 && t.seconds < full.seconds / 2.0, "{t:?} {full:?}");
    }

    /// The gated delta rule is priced like any measured family: a measured shape from its
    /// table, a GPU without one by physics, whose chunks run one after another (a prompt
    /// twice as long takes about twice as long on one sequence, far above its roofline) and
    /// whose decode with many sequences streams their states at no more than the achievable
    /// bandwidth.
    #[test]
    fn the_gated_delta_rule_is_read_from_its_table_else_priced_by_its_chunks() {
        use wavecast_ir::ops::GatedDelta;
        let b200 = Gpu::find("b200").unwrap();
        let rule = |batch, seq| GatedDelta { batch, seq, with_state: seq == 1, k_heads: 2, v_heads: 8, head_k_dim: 128, head_v_dim: 128, dtype: DType::Bf16, state_dtype: DType::Fp32 };
        let physics = LadderOps::physics_only();
        let (short, long) = (time(&physics, &Op::GatedDelta(rule(1, 4096)), "b200"), time(&physics, &Op::GatedDelta(rule(1, 8192)), "b200"));
        assert_eq!(short.provenance.rung, Rung::Physics);
        assert!((1.7..2.3).contains(&(long.seconds / short.seconds)), "{short:?} {long:?}");
        assert!(short.seconds > 10.0 * crate::roofline::roofline_seconds(&Op::GatedDelta(rule(1, 4096)), &b200));
        let many = time(&physics, &Op::GatedDelta(rule(1024, 1)), "b200").seconds;
        let state = 1024.0 * 2.0 * 8.0 * 128.0 * 128.0 * 4.0;
        assert!(many > state / (0.92 * b200.bandwidth()) && many < 2.0 * state / (0.92 * b200.bandwidth()), "{many}");
        // A measured prompt of 32 × 16,384 tokens: the table's time, less the share the
        // physics gives the launches a microbenchmark's call pays (a few %).
        let shape = Shape::GatedDelta { batch: 32, seq: 16384, k_heads: 2, v_heads: 8, head_k_dim: 128, head_v_dim: 128, generation: false };
        let measured = time(&ladder(&[timing("b200", shape, 3.5)], None), &Op::GatedDelta(rule(32, 16384)), "b200");
        assert_eq!(measured.provenance.rung, Rung::Measured);
        assert!(measured.seconds <= 3.5e-3 && measured.seconds > 0.97 * 3.5e-3, "{measured:?}");
    }
}
