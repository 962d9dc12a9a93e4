//! Aggregation: prices every node of a graph with a predictor and sums the result into the
//! forward / backward / optimizer phases and per-class shares that reports show.

use serde::Serialize;
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_ir::{Graph, Op, OpClass, Phase};
use wavecast_predict::comm::CommModel;
use wavecast_predict::{Estimate, OpTime, PredictError, Predictor};
use wavecast_workload::serve::USABLE_MEMORY_FRACTION;

#[derive(Debug, Clone, Default, Serialize)]
pub struct ClassTotal {
    pub ms: f64,
    pub count: u64,
    pub flops: f64,
    pub bytes: f64,
    /// Milliseconds by where their price came from (`measured`, `transfer from h100-sxm`,
    /// `physics`).
    pub provenance: BTreeMap<String, f64>,
}

/// A node no predictor could price, kept so reports can say what is missing.
#[derive(Debug, Clone, Serialize)]
pub struct Unpriced {
    pub node: String,
    pub class: OpClass,
    pub count: u64,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Breakdown {
    pub predictor: String,
    pub gpu: String,
    pub total_ms: f64,
    /// Interval around `total_ms` (sum of per-op bounds).
    pub total_lo_ms: f64,
    pub total_hi_ms: f64,
    pub phases: BTreeMap<Phase, f64>,
    pub classes: BTreeMap<OpClass, ClassTotal>,
    pub flops: f64,
    pub bytes: f64,
    pub unpriced: Vec<Unpriced>,
    /// Milliseconds of the whole step by where their price came from.
    pub provenance: BTreeMap<String, f64>,
}

impl Breakdown {
    /// Each provenance's share of the priced time (0–1), largest first in a map by label.
    pub fn provenance_shares(&self) -> BTreeMap<String, f64> {
        shares(&self.provenance)
    }
}

/// Each entry of `ms` as a share of their sum.
pub fn shares(ms: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    let total: f64 = ms.values().sum();
    ms.iter().map(|(k, v)| (k.clone(), if total > 0.0 { v / total } else { 0.0 })).collect()
}

/// Every compute dtype of `graph` must be one `gpu` has units for: pricing BF16 on a T4 or FP8
/// on an A100 as if it ran would be wrong with confidence.
fn check_dtypes(graph: &Graph, gpu: &Gpu) -> Result<(), PredictError> {
    // An FP8 KV cache is storage: the attention kernel reads it and does its math in 16 bits
    // where the GPU has no FP8 units (vLLM and SGLang run one on an A100).
    let fp8_cache = |op: &Op| matches!(op, Op::Attention(a) if a.dtype == wavecast_ir::DType::Fp8);
    let compute = graph.nodes.iter().filter(|n| !matches!(n.op, Op::Comm(_)) && !fp8_cache(&n.op)).map(|n| n.op.dtype());
    // Newest dtype first: an FP8 graph also holds BF16 element-wise ops, and the FP8 GEMMs are
    // what the user asked about.
    for dtype in compute.collect::<std::collections::BTreeSet<_>>().into_iter().rev() {
        gpu.check_dtype(dtype).map_err(PredictError::Unsupported)?;
    }
    // Quantized and FP8-stored weights multiply in their own format (FP8 weights as an FP8
    // GEMM, as serving engines run them), so the GPU needs units for it, as serve-sim asks.
    let gemms = || graph.nodes.iter().filter_map(|n| if let Op::Gemm(g) = &n.op { Some(g) } else { None });
    for quant in gemms().filter_map(|g| g.quant).collect::<std::collections::BTreeSet<_>>() {
        gpu.check_quant(quant).map_err(PredictError::Unsupported)?;
    }
    for dtype in gemms().filter(|g| g.quant.is_none()).filter_map(|g| g.weight_dtype).collect::<std::collections::BTreeSet<_>>() {
        gpu.check_dtype(dtype).map_err(PredictError::Unsupported)?;
    }
    Ok(())
}

/// Errors when `graph`'s step surely cannot run on one `gpu`: its resident floor (weights; when
/// training gradients, optimizer states, master weights and the activations autograd keeps for
/// the weight gradients; in inference the largest layer's input and output) exceeds the GPU's
/// usable memory.
pub fn check_fits(graph: &Graph, gpu: &Gpu) -> Result<(), PredictError> {
    // A dtype the GPU has no units for is the first thing wrong, whatever the memory says.
    check_dtypes(graph, gpu)?;
    let floor = graph.resident_floor();
    let usable = USABLE_MEMORY_FRACTION * gpu.memory_bytes();
    if floor.total() <= usable {
        return Ok(());
    }
    let gb = |b: f64| b / 1e9;
    let mut parts = vec![format!("weights {:.1} GB", gb(floor.weights))];
    for (what, bytes) in [("gradients", floor.gradients), ("optimizer states", floor.optimizer_states), ("FP32 master weights", floor.master_weights), ("activations saved for backward", floor.saved_activations), ("the largest layer's input and output", floor.working_activations)] {
        if bytes > 0.0 {
            parts.push(format!("{what} {:.1} GB", gb(bytes)));
        }
    }
    let remedy = if floor.gradients > 0.0 { "a smaller model or batch, or a lighter optimizer (--optimizer sgd)" } else { "a smaller model, batch or sequence, or a narrower dtype (--dtype)" };
    Err(PredictError::Unsupported(format!(
        "does not fit in memory: needs at least {:.1} GB ({}; workspaces not counted) but {} has {:.1} GB ({} GiB; {:.1} GB usable); use a GPU with more memory, {remedy}",
        gb(floor.total()),
        parts.join(" + "),
        gpu.id,
        gb(gpu.memory_bytes()),
        gpu.memory_gb,
        gb(usable)
    )))
}

/// Prices `graph` on `gpu` with `predictor`; communication is left unpriced.
pub fn estimate(graph: &Graph, gpu: &Gpu, predictor: &dyn Predictor) -> Result<Breakdown, PredictError> {
    estimate_with(graph, gpu, predictor, None)
}

/// Like [`estimate`], but collectives are priced with `comm` when given (compute predictors
/// know nothing about links between GPUs).
pub fn estimate_with(
    graph: &Graph,
    gpu: &Gpu,
    predictor: &dyn Predictor,
    comm: Option<&CommModel>,
) -> Result<Breakdown, PredictError> {
    graph.check_scale()?;
    check_dtypes(graph, gpu)?;
    let mut b = Breakdown {
        predictor: predictor.name().to_string(),
        gpu: gpu.id.clone(),
        total_ms: 0.0,
        total_lo_ms: 0.0,
        total_hi_ms: 0.0,
        phases: BTreeMap::new(),
        classes: BTreeMap::new(),
        flops: 0.0,
        bytes: 0.0,
        unpriced: Vec::new(),
        provenance: BTreeMap::new(),
    };
    for node in &graph.nodes {
        let reps = node.repeat as f64;
        let class = node.op.class();
        let priced = match (&node.op, comm) {
            (Op::Comm(c), Some(model)) => Estimate::Time(OpTime::exact(model.seconds(c, gpu))),
            _ => predictor.predict(&node.op, gpu, &wavecast_predict::Context::IN_MODEL),
        };
        match priced {
            // Work that does math or moves bytes takes time: a zero is a missing price, not a
            // free op, and is reported with the unpriced ones instead of summed (a "collective"
            // within one GPU moves nothing).
            Estimate::Time(t) if t.seconds == 0.0 && (node.op.flops() > 0.0 || node.op.bytes() > 0.0) && !matches!(&node.op, Op::Comm(c) if c.group <= 1) => {
                b.unpriced.push(Unpriced { node: node.name.clone(), class, count: node.repeat, reason: format!("{} priced it at 0 ms", predictor.name()) })
            }
            Estimate::Time(t) => {
                if !(t.seconds.is_finite() && t.seconds >= 0.0) {
                    return Err(PredictError::NonFinite { name: predictor.name().into(), op: node.op.describe() });
                }
                let ms = t.seconds * 1e3 * reps;
                b.total_ms += ms;
                b.total_lo_ms += t.lo * 1e3 * reps;
                b.total_hi_ms += t.hi * 1e3 * reps;
                *b.phases.entry(node.phase).or_default() += ms;
                let c = b.classes.entry(class).or_default();
                c.ms += ms;
                c.count += node.repeat;
                c.flops += node.op.flops() * reps;
                c.bytes += node.op.bytes() * reps;
                *c.provenance.entry(t.provenance.to_string()).or_default() += ms;
                *b.provenance.entry(t.provenance.to_string()).or_default() += ms;
            }
            Estimate::Unpriced(reason) => b.unpriced.push(Unpriced { node: node.name.clone(), class, count: node.repeat, reason }),
        }
        if class != OpClass::Communication {
            b.flops += node.op.flops() * reps;
            b.bytes += node.op.bytes() * reps;
        }
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{Comm, CommKind, Gemm};
    use wavecast_ir::{DType, Op};
    use wavecast_predict::Roofline;

    #[test]
    fn sums_repeats_into_phases_and_keeps_unpriced_nodes() {
        let mut g = Graph::new("t");
        let op = Op::Gemm(Gemm::linear(1024, 1024, 1024, false, DType::Fp32).unwrap());
        g.push("fc", op.clone(), Phase::Forward, 4);
        g.push("ar", Op::Comm(Comm::new(CommKind::AllReduce, 1e6, 2, DType::Fp32, false)), Phase::Forward, 1);
        g.add_backward();
        let gpu = Catalog::shipped().get("v100-sxm2").unwrap().clone();
        let b = estimate(&g, &gpu, &Roofline).unwrap();
        let one = wavecast_predict::roofline::roofline_seconds(&op, &gpu) * 1e3;
        assert!((b.phases[&Phase::Forward] - 4.0 * one).abs() < 1e-9);
        assert!((b.total_ms - 12.0 * one).abs() < 1e-9);
        assert_eq!(b.unpriced.len(), 2);
        assert_eq!(b.classes[&OpClass::Gemm].count, 12);
    }

    #[test]
    fn a_comm_model_prices_collectives() {
        let mut g = Graph::new("t");
        let c = Comm::new(CommKind::AllReduce, 1e6, 4, DType::Bf16, false);
        g.push("ar", Op::Comm(c.clone()), Phase::Forward, 10);
        let gpu = Catalog::shipped().get("h100-sxm").unwrap().clone();
        let model = CommModel::default();
        let b = estimate_with(&g, &gpu, &Roofline, Some(&model)).unwrap();
        assert!(b.unpriced.is_empty());
        let one = model.seconds(&c, &gpu) * 1e3;
        assert!((b.classes[&OpClass::Communication].ms - 10.0 * one).abs() < 1e-12);
        assert!((b.total_ms - 10.0 * one).abs() < 1e-12);
        assert_eq!(estimate(&g, &gpu, &Roofline).unwrap().unpriced.len(), 1);
    }

    /// A predictor that answers 0 s for everything, as a broken or unfitted one might.
    struct Free;
    impl Predictor for Free {
        fn name(&self) -> &str {
            "free"
        }
        fn predict(&self, _: &Op, _: &Gpu, _: &wavecast_predict::Context) -> Estimate {
            Estimate::Time(OpTime::exact(0.0))
        }
    }

    #[test]
    fn work_priced_at_zero_is_listed_as_unpriced_not_summed_as_free() {
        let mut g = Graph::new("t");
        g.push("fc", Op::Gemm(Gemm::linear(1024, 1024, 1024, false, DType::Bf16).unwrap()), Phase::Forward, 3);
        let gpu = Catalog::shipped().get("h100-sxm").unwrap().clone();
        let b = estimate(&g, &gpu, &Free).unwrap();
        assert_eq!(b.unpriced.len(), 1, "{:?}", b.unpriced);
        assert!(b.unpriced[0].reason.contains("priced it at 0 ms") && b.unpriced[0].count == 3, "{:?}", b.unpriced);
        assert!(b.classes.is_empty(), "nothing summed: {:?}", b.classes);
    }
}
