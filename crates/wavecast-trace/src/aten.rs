//! Recorded aten operators (name, `Input Dims`, `Input type`) → wavecast-ir operators, so that
//! FLOPs and bytes come from the same formulas as everywhere else in wavecast.
//!
//! Only ops whose work is fixed by their input shapes are mapped; anything else (views,
//! convolutions, which the IR does not model, integer ops, ambiguous broadcasts) returns `None`
//! and its kernels are scaled without an analytic intensity.

use crate::model::CpuOp;
use wavecast_ir::ops::{Attention, Elementwise, Embedding, EwKind, Gemm, MemCopy, Norm, NormKind, Reduction, Softmax};
use wavecast_ir::{DType, Op};

/// Tensor element type from a profiler type string; integer and boolean tensors have no IR type.
pub fn dtype(type_name: &str) -> Option<DType> {
    let t = type_name.trim().trim_start_matches("c10::");
    Some(match t {
        "float" | "Float" => DType::Fp32,
        "Half" | "half" => DType::Fp16,
        "BFloat16" => DType::Bf16,
        t if t.starts_with("Float8") => DType::Fp8,
        _ => return None,
    })
}

/// Shapes and types of one recorded call.
struct Call<'a> {
    op: &'a CpuOp,
}

impl Call<'_> {
    fn dims(&self, i: usize) -> Option<&[u64]> {
        self.op.input_dims.get(i)?.as_deref()
    }

    fn numel(&self, i: usize) -> Option<u64> {
        self.dims(i).map(|d| d.iter().product())
    }

    /// The type of the first floating-point tensor input.
    fn dtype(&self) -> Option<DType> {
        self.op.input_types.iter().zip(&self.op.input_dims).filter(|(_, d)| d.is_some()).find_map(|(t, _)| dtype(t))
    }

    /// Tensor inputs (non-scalar) and the largest element count among them.
    fn tensors(&self) -> (u32, u64) {
        let sizes: Vec<u64> = self.op.input_dims.iter().flatten().map(|d| d.iter().product()).collect();
        (sizes.len() as u32, sizes.into_iter().max().unwrap_or(0))
    }
}

fn split_last(d: &[u64]) -> Option<(u64, u64)> {
    let (&last, rest) = d.split_last()?;
    Some((rest.iter().product(), last))
}

/// The IR operator for a recorded aten call, if its shapes determine one.
pub fn to_ir(op: &CpuOp) -> Option<Op> {
    let name = op.name.strip_prefix("aten::")?;
    let c = Call { op };
    let dt = c.dtype()?;
    let base = name.trim_end_matches('_');
    match base {
        "mm" | "addmm" | "bmm" | "baddbmm" | "matmul" | "linear" => gemm(base, &c, dt),
        "scaled_dot_product_attention"
        | "_scaled_dot_product_flash_attention"
        | "_scaled_dot_product_efficient_attention"
        | "_scaled_dot_product_cudnn_attention" => attention(&c, dt, false, 0),
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_efficient_attention_backward"
        | "_scaled_dot_product_cudnn_attention_backward" => attention(&c, dt, true, 1),
        "softmax" | "_softmax" | "log_softmax" | "_log_softmax" => {
            let (rows, cols) = split_last(c.dims(0)?)?;
            Some(Op::Softmax(Softmax::new(rows, cols, dt)))
        }
        "_softmax_backward_data" | "_log_softmax_backward_data" => {
            let (rows, cols) = split_last(c.dims(0)?)?;
            Some(Op::Softmax(Softmax { backward: true, ..Softmax::new(rows, cols, dt) }))
        }
        "layer_norm" | "native_layer_norm" => norm(&c, dt, false, 0, 2),
        "native_layer_norm_backward" => norm(&c, dt, true, 1, 5),
        "embedding" => {
            let w = c.dims(0)?;
            let (&[vocab, hidden], tokens) = (w, c.numel(1)?) else { return None };
            Some(Op::Embedding(Embedding { tokens, hidden, vocab, dtype: dt }))
        }
        "sum" | "mean" => Some(Op::Reduction(Reduction { elements_in: c.numel(0)?, elements_out: 1, dtype: dt })),
        "fill" | "zero" => Some(Op::MemCopy(MemCopy::touch(c.numel(0)?, dt))),
        // copy_(dst, src): read the source once, write the destination once.
        "copy" => Some(ew(EwKind::Copy, c.numel(1).or(c.numel(0))?, 1, dt)),
        "to" | "_to_copy" | "clone" | "contiguous" => Some(ew(EwKind::Copy, c.numel(0)?, 1, dt)),
        other => elementwise(other, &c, dt),
    }
}

fn ew(kind: EwKind, elements: u64, inputs: u32, dt: DType) -> Op {
    Op::Elementwise(Elementwise::new(kind, elements, inputs.max(1), dt))
}

fn elementwise(name: &str, c: &Call, dt: DType) -> Option<Op> {
    let (inputs, n) = c.tensors();
    if n == 0 {
        return None;
    }
    let kind = match name {
        "add" | "sub" | "rsub" | "maximum" | "minimum" => EwKind::Add,
        "mul" => EwKind::Mul,
        "div" => EwKind::Div,
        "pow" => EwKind::Pow,
        "where" | "masked_fill" => EwKind::Where,
        "relu" | "clamp" | "clamp_min" | "clamp_max" | "threshold" | "hardtanh" | "neg" | "abs" | "nan_to_num" => EwKind::Relu,
        "gelu" => EwKind::Gelu,
        "tanh" => EwKind::Tanh,
        "silu" => EwKind::Silu,
        "exp" | "log" | "log2" | "sigmoid" | "sqrt" | "rsqrt" | "reciprocal" | "sin" | "cos" | "erf" => EwKind::Exp,
        "dropout" | "native_dropout" => EwKind::Dropout,
        "threshold_backward" | "gelu_backward" | "sigmoid_backward" | "tanh_backward" | "silu_backward" => EwKind::Grad,
        _ => return None,
    };
    Some(ew(kind, n, inputs, dt))
}

fn gemm(name: &str, c: &Call, dt: DType) -> Option<Op> {
    let g = match name {
        "mm" => {
            let (&[m, k], &[k2, n]) = (c.dims(0)?, c.dims(1)?) else { return None };
            (k == k2).then(|| Gemm::linear(m, k, n, false, dt))?
        }
        "addmm" => {
            let (&[m, k], &[k2, n]) = (c.dims(1)?, c.dims(2)?) else { return None };
            (k == k2).then(|| Gemm::linear(m, k, n, true, dt))?
        }
        "bmm" => bmm(c.dims(0)?, c.dims(1)?, dt)?,
        "baddbmm" => bmm(c.dims(1)?, c.dims(2)?, dt)?,
        "linear" => {
            let (m, k) = split_last(c.dims(0)?)?;
            let &[n, k2] = c.dims(1)? else { return None };
            (k == k2).then(|| Gemm::linear(m, k, n, c.dims(2).is_some(), dt))?
        }
        "matmul" => {
            let (a, b) = (c.dims(0)?, c.dims(1)?);
            match (a.len(), b.len()) {
                (2.., 2) => {
                    let (m, k) = split_last(a)?;
                    (k == b[0]).then(|| Gemm::linear(m, k, b[1], false, dt))?
                }
                (3.., 3..) if a.len() == b.len() => bmm(a, b, dt)?,
                _ => return None,
            }
        }
        _ => return None,
    };
    g.ok().map(Op::Gemm)
}

/// `batch` products of (m×k)·(k×n) from two tensors [..., m, k] and [..., k, n].
fn bmm(a: &[u64], b: &[u64], dt: DType) -> Option<Result<Gemm, wavecast_ir::DimError>> {
    if a.len() < 3 || a.len() != b.len() {
        return None;
    }
    let r = a.len();
    let batch: u64 = a[..r - 2].iter().product();
    let (m, k, n) = (a[r - 2], a[r - 1], b[r - 1]);
    (b[r - 2] == k && b[..r - 2] == a[..r - 2]).then(|| Gemm::bmm(batch, m, k, n, dt))
}

/// Query [B, H, L, D] and key [B, H_kv, S, D] at inputs `q` and `q + 1`. Causality is not in
/// the recorded inputs (it is a keyword argument), so the full score matrix is counted.
fn attention(c: &Call, dt: DType, backward: bool, q: usize) -> Option<Op> {
    let (&[b, h, l, d], &[b2, hkv, s, d2]) = (c.dims(q)?, c.dims(q + 1)?) else { return None };
    if b != b2 || d != d2 {
        return None;
    }
    Some(Op::Attention(Attention { batch: b, heads: h, kv_heads: hkv, q_len: l, kv_len: s, head_dim: d, causal: false, dtype: dt, backward, v_head_dim: None, shared_kv: false, window: None }))
}

/// Layer norm over the weight's size (or the last dimension) of input `x`; the weight is input
/// `w` when present.
fn norm(c: &Call, dt: DType, backward: bool, x: usize, w: usize) -> Option<Op> {
    let dims = c.dims(x)?;
    let numel: u64 = dims.iter().product();
    let cols = c.numel(w).unwrap_or(*dims.last()?);
    if cols == 0 || !numel.is_multiple_of(cols) {
        return None;
    }
    let mut n = Norm::new(NormKind::LayerNorm, numel / cols, cols, dt);
    n.backward = backward;
    n.has_bias = c.dims(w + 1).is_some();
    Some(Op::Norm(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use wavecast_ir::OpClass;

    fn call(name: &str, dims: &[&[u64]], types: &[&str]) -> CpuOp {
        CpuOp {
            name: Arc::from(name),
            ts: 0.0,
            dur: 1.0,
            pid: 1,
            tid: 1,
            input_dims: dims.iter().map(|d| if d.is_empty() { None } else { Some(d.to_vec()) }).collect(),
            input_types: types.iter().map(|s| s.to_string()).collect(),
            event: 0,
        }
    }

    #[test]
    fn gemms_map_with_their_shapes() {
        let addmm = to_ir(&call("aten::addmm", &[&[3072], &[512, 768], &[768, 3072]], &["float", "float", "float"])).unwrap();
        assert_eq!(addmm, Op::Gemm(Gemm::linear(512, 768, 3072, true, DType::Fp32).unwrap()));
        let mm = to_ir(&call("aten::mm", &[&[64, 128], &[128, 32]], &["c10::BFloat16", "c10::BFloat16"])).unwrap();
        assert_eq!(mm.flops(), 2.0 * 64.0 * 128.0 * 32.0);
        assert_eq!(mm.dtype(), DType::Bf16);
        let bmm = to_ir(&call("aten::bmm", &[&[12, 128, 64], &[12, 64, 128]], &["c10::Half", "c10::Half"])).unwrap();
        assert_eq!(bmm.class(), OpClass::AttentionBmm);
        assert_eq!(bmm.flops(), 2.0 * 12.0 * 128.0 * 64.0 * 128.0);
        let lin = to_ir(&call("aten::linear", &[&[8, 512, 768], &[3072, 768], &[3072]], &["float", "float", "float"])).unwrap();
        assert_eq!(lin, Op::Gemm(Gemm::linear(4096, 768, 3072, true, DType::Fp32).unwrap()));
        let mat = to_ir(&call("aten::matmul", &[&[2, 12, 128, 64], &[2, 12, 64, 128]], &["float", "float"])).unwrap();
        assert_eq!(mat, Op::Gemm(Gemm::bmm(24, 128, 64, 128, DType::Fp32).unwrap()));
        // Mismatched inner dimensions are not a GEMM we can describe.
        assert!(to_ir(&call("aten::mm", &[&[64, 128], &[127, 32]], &["float", "float"])).is_none());
    }

    #[test]
    fn vector_ops_count_elements_and_tensor_inputs() {
        let add = to_ir(&call("aten::add_", &[&[1024, 768], &[1024, 768], &[]], &["float", "float", "Scalar"])).unwrap();
        assert_eq!(add, Op::Elementwise(Elementwise::new(EwKind::Add, 1024 * 768, 2, DType::Fp32)));
        let mul = to_ir(&call("aten::mul", &[&[4096], &[]], &["c10::Half", "Scalar"])).unwrap();
        assert_eq!(mul.bytes(), 4096.0 * 2.0 * 2.0);
        let sm = to_ir(&call("aten::_softmax", &[&[8, 12, 128, 128], &[], &[]], &["float", "Scalar", "Scalar"])).unwrap();
        assert_eq!(sm, Op::Softmax(Softmax::new(8 * 12 * 128, 128, DType::Fp32)));
        let ln = to_ir(&call("aten::native_layer_norm", &[&[8, 128, 768], &[], &[768], &[768], &[]], &["float", "", "float", "float", "Scalar"])).unwrap();
        assert_eq!(ln.class(), OpClass::Norm);
        assert_eq!(ln.flops(), 7.0 * 8.0 * 128.0 * 768.0);
        let emb = to_ir(&call("aten::embedding", &[&[50257, 768], &[8, 128]], &["float", "long int"])).unwrap();
        assert_eq!(emb, Op::Embedding(Embedding { tokens: 1024, hidden: 768, vocab: 50257, dtype: DType::Fp32 }));
    }

    #[test]
    fn unmappable_calls_are_none() {
        assert!(to_ir(&call("aten::view", &[&[4, 4], &[]], &["float", "int[]"])).is_none());
        assert!(to_ir(&call("aten::add", &[&[16], &[16]], &["long int", "long int"])).is_none());
        assert!(to_ir(&call("aten::cudnn_convolution", &[&[8, 3, 224, 224], &[64, 3, 7, 7]], &["float", "float"])).is_none());
        assert!(to_ir(&call("aten::mm", &[], &[])).is_none());
        assert!(to_ir(&call("MulBackward0", &[&[4]], &["float"])).is_none());
    }

    #[test]
    fn sdpa_maps_to_fused_attention() {
        let a = to_ir(&call("aten::_scaled_dot_product_flash_attention", &[&[2, 16, 512, 64], &[2, 16, 512, 64], &[2, 16, 512, 64]], &["c10::BFloat16"; 3])).unwrap();
        assert_eq!(a.class(), OpClass::FusedAttention);
        assert_eq!(a.flops(), 4.0 * 2.0 * 16.0 * 64.0 * 512.0 * 512.0);
    }
}
