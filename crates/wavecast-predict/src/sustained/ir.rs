//! The sustained roofline as a [`Predictor`] of the operator graph: each IR op is read as the
//! measured shape it corresponds to (a linear layer as a GEMM in its weight format, fused
//! attention as prefill or decode attention, a collective as one over the group, a norm or
//! element-wise kernel as the engine's streaming kernel over its bytes) and priced by the numbers
//! fitted on the modern-GPU measurements. Serving engines run the kernels those measurements
//! timed, so this is the predictor LLM serving uses.

use super::Model;
use crate::{Estimate, OpTime, Predictor, Roofline};
use wavecast_data::{Collective, Precision, Shape, Source, Timing};
use wavecast_gpu::Gpu;
use wavecast_ir::ops::{Attention, CommKind, Gemm, GemmKind};
use wavecast_ir::{DType, Op};

/// Fixed cost of a kernel queued behind others or replayed from a CUDA graph, µs: the GPU's
/// gap between kernels, not the host launch a microbenchmark's single call includes.
pub const IN_MODEL_KERNEL_US: f64 = 2.0;

#[derive(Clone)]
pub struct SustainedOps {
    model: Model,
}

impl SustainedOps {
    pub fn new(model: Model) -> SustainedOps {
        SustainedOps { model }
    }

    /// The shipped numbers, parsed once per process.
    pub fn shipped() -> SustainedOps {
        SustainedOps::shipped_ref().clone()
    }

    /// [`SustainedOps::shipped`] without a copy: for callers that price with it but need not
    /// own it.
    pub fn shipped_ref() -> &'static SustainedOps {
        static SHIPPED: std::sync::OnceLock<SustainedOps> = std::sync::OnceLock::new();
        SHIPPED.get_or_init(|| SustainedOps::new(Model::shipped()))
    }

    /// Seconds for a measured-style shape inside a running model, or why it cannot be priced.
    pub fn shape_seconds(&self, shape: Shape, precision: Precision, gpu: &Gpu) -> Result<f64, String> {
        let t = Timing { source: Source::Aiconfigurator, gpu: gpu.id.clone(), shape, precision, kernel_source: String::new(), latency_ms: 0.0, provenance: String::new(), engine: String::new() };
        self.model.predict_in_model(&t, gpu, IN_MODEL_KERNEL_US)
    }
}

/// The format a GEMM's math runs in: its quantized weight format when it has one, else its
/// activation type.
fn gemm_precision(g: &Gemm) -> Precision {
    if let Some(q) = g.quant {
        return Precision::from(q);
    }
    match g.weight_dtype {
        Some(DType::Fp8) => Precision::Fp8,
        _ => dtype_precision(g.dtype),
    }
}

fn dtype_precision(d: DType) -> Precision {
    match d {
        DType::Fp32 | DType::Tf32 => Precision::Fp32,
        DType::Fp16 => Precision::Fp16,
        DType::Bf16 => Precision::Bf16,
        DType::Fp8 => Precision::Fp8,
    }
}

fn attention_shape(a: &Attention) -> Shape {
    // An FP8 cache is read in FP8; a latent cache (MLA) is one tensor serving as keys and
    // values, which the shape's K-and-V byte count halves by its width.
    let kv_precision = dtype_precision(a.dtype);
    let head_dim = if a.shared_kv { a.head_dim.div_ceil(2) } else { a.head_dim };
    // A sliding window shorter than the context is the kernel the tables time with that
    // window (gpt-oss's 128); a longer one changes nothing.
    let window = a.window.filter(|&w| w < a.kv_len).unwrap_or(0);
    if a.q_len == 1 && a.kv_len > 1 {
        Shape::AttentionDecode { batch: a.batch, kv_len: a.kv_len - 1, heads: a.heads, kv_heads: a.kv_heads, head_dim, window, kv_precision }
    } else {
        Shape::AttentionPrefill { batch: a.batch, isl: a.q_len, past: a.kv_len.saturating_sub(a.q_len), heads: a.heads, kv_heads: a.kv_heads, head_dim, window, kv_precision }
    }
}

fn collective(kind: CommKind) -> Collective {
    match kind {
        CommKind::AllReduce => Collective::AllReduce,
        CommKind::AllGather => Collective::AllGather,
        CommKind::ReduceScatter => Collective::ReduceScatter,
        CommKind::AllToAll => Collective::AllToAll,
        CommKind::SendRecv => Collective::SendRecv,
    }
}

/// The measured shape and format an IR op corresponds to; `None` for ops outside serving
/// (convolutions, optimizers), which the plain roofline prices.
pub fn op_shape(op: &Op) -> Option<(Shape, Precision)> {
    Some(match op {
        Op::Gemm(g) => {
            let m = if g.kind == GemmKind::Bmm { g.batch.saturating_mul(g.m) } else { g.m };
            (Shape::Gemm { m, n: g.n, k: g.k }, if g.kind == GemmKind::Bmm { dtype_precision(g.dtype) } else { gemm_precision(g) })
        }
        // 16-bit attention math: FP16 where the graph runs FP16 (a GPU without BF16 units, such
        // as a T4, runs it so), BF16 otherwise.
        Op::Attention(a) if !a.backward => (attention_shape(a), if a.dtype == DType::Fp16 { Precision::Fp16 } else { Precision::Bf16 }),
        Op::Comm(c) => {
            let gpus = u64::from(c.group.max(1));
            // A group inside one server is the shape the tables time it as, all the GPUs they
            // ran on (`g4/n4`); keyed as one of eight, no table of two or four GPUs matched it
            // and its collectives fell to physics (H100 vLLM all-reduce, 16 KB: tp4 11.3 µs
            // priced against 4.9 µs measured, above tp8's measured 5.6 µs).
            let gpus_per_node = gpus.min(crate::comm::SERVER_GPUS);
            (Shape::Collective { op: collective(c.kind), gpus, bytes: c.bytes.max(0.0) as u64, gpus_per_node }, dtype_precision(c.dtype.vector_storage()))
        }
        Op::GatedDelta(d) => {
            let shape = Shape::GatedDelta { batch: d.batch, seq: d.seq, k_heads: d.k_heads, v_heads: d.v_heads, head_k_dim: d.head_k_dim, head_v_dim: d.head_v_dim, generation: d.recurrent() };
            (shape, if d.dtype == DType::Fp16 { Precision::Fp16 } else { Precision::Bf16 })
        }
        // Every memory-bound pass as the engine's own streaming kernel over its bytes.
        Op::Norm(_) | Op::Elementwise(_) | Op::Embedding(_) | Op::Softmax(_) | Op::MemCopy(_) | Op::Reduction(_) => (Shape::stream(op.bytes()), Precision::Fp16),
        _ => return None,
    })
}

impl Predictor for SustainedOps {
    fn name(&self) -> &str {
        "sustained"
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &crate::Context) -> Estimate {
        if let Some(s) = crate::comm::outside_tables_at_least(op, gpu, |share| self.predict(share, gpu, ctx).seconds()) {
            return Estimate::Time(OpTime::exact(s));
        }
        let Some((shape, precision)) = op_shape(op) else { return Roofline.predict(op, gpu, ctx) };
        match (self.shape_seconds(shape, precision, gpu), op) {
            (Ok(s), _) => Estimate::Time(OpTime::exact(s)),
            // No measured collective over this link: the α–β model.
            (Err(_), Op::Comm(c)) => Estimate::Time(OpTime::exact(crate::comm::CommModel::default().seconds(c, gpu))),
            (Err(reason), _) => Estimate::Unpriced(reason),
        }
    }
}
