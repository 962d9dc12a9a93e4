//! Matrix multiplication: linear layers (weights shared across the batch) and batched matmuls.
//!
//! Convention: `batch` independent products of an (m×k) matrix by a (k×n) matrix; the output is
//! m×n and k is the reduction length.

use crate::dims::{checked_mul, dim, DimError};
use crate::ops::{Elementwise, EwKind, Op, OpClass, Reduction};
use crate::{DType, Quant};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GemmKind {
    /// A layer with a weight matrix (k×n) that is a parameter; batch is 1.
    Linear,
    /// Activation × activation (e.g. attention scores), batch heads×sequences.
    Bmm,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gemm {
    pub kind: GemmKind,
    pub batch: u64,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub bias: bool,
    pub dtype: DType,
    /// The weight belongs to another op (tied embeddings): not counted as a parameter here.
    #[serde(default)]
    pub shared_weight: bool,
    /// Weights stored in another format than the activations (e.g. FP8 weights, BF16 compute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_dtype: Option<DType>,
    /// Quantised weight format (FP8, NVFP4, MXFP4, INT4). When set it takes precedence over
    /// `weight_dtype`: the weight is read at [`Quant::weight_bits`] per element and the input
    /// activation at [`Quant::activation_bits`]; the output keeps `dtype`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quant: Option<Quant>,
}

impl Gemm {
    /// A linear layer applying a (k→n) weight to m rows.
    pub fn linear(m: u64, k: u64, n: u64, bias: bool, dtype: DType) -> Result<Gemm, DimError> {
        let g = Gemm {
            kind: GemmKind::Linear,
            batch: 1,
            m: dim("tokens through a linear layer (batch × sequence)", m)?,
            n: dim("linear out_features", n)?,
            k: dim("linear in_features", k)?,
            bias,
            dtype,
            shared_weight: false,
            weight_dtype: None,
            quant: None,
        };
        g.check_size()?;
        Ok(g)
    }

    /// `batch` products of (m×k)·(k×n).
    pub fn bmm(batch: u64, m: u64, k: u64, n: u64, dtype: DType) -> Result<Gemm, DimError> {
        let g = Gemm {
            kind: GemmKind::Bmm,
            batch: dim("bmm batch", batch)?,
            m: dim("bmm m", m)?,
            n: dim("bmm n", n)?,
            k: dim("bmm k", k)?,
            bias: false,
            dtype,
            shared_weight: false,
            weight_dtype: None,
            quant: None,
        };
        g.check_size()?;
        Ok(g)
    }

    fn check_size(&self) -> Result<(), DimError> {
        checked_mul("gemm flops", &[2, self.batch, self.m, self.n, self.k])?;
        Ok(())
    }

    pub fn class(&self) -> OpClass {
        match self.kind {
            GemmKind::Linear => OpClass::Gemm,
            GemmKind::Bmm => OpClass::AttentionBmm,
        }
    }

    /// Multiply-accumulates of the products (bias additions excluded).
    pub fn macs(&self) -> f64 {
        self.batch as f64 * self.m as f64 * self.n as f64 * self.k as f64
    }

    pub fn flops(&self) -> f64 {
        let b = self.batch as f64;
        let bias = if self.bias { b * self.m as f64 * self.n as f64 } else { 0.0 };
        2.0 * self.macs() + bias
    }

    /// Bytes per stored weight element: the quantised width (scales included) when `quant` is
    /// set, else `weight_dtype`'s, else the activation dtype's.
    pub fn weight_elem_bytes(&self) -> f64 {
        match self.quant {
            Some(q) => q.weight_bytes(),
            None => self.weight_dtype.unwrap_or(self.dtype).size_bytes() as f64,
        }
    }

    pub fn bytes(&self) -> f64 {
        let e = self.dtype.size_bytes() as f64;
        let b = self.batch as f64;
        let (m, n, k) = (self.m as f64, self.n as f64, self.k as f64);
        let w = b * k * n * self.weight_elem_bytes();
        let bias = if self.bias { n * e } else { 0.0 };
        if let Some(q) = self.quant {
            // The input is read in the quantised activation format; the output is written in `dtype`.
            let a = b * m * k * q.activation_bits() / 8.0;
            return a + b * m * n * e + w + bias;
        }
        let a_and_c = b * (m * k + m * n) * e;
        a_and_c + w + bias
    }

    /// Bytes of this layer's parameters as stored: weights at [`Gemm::weight_elem_bytes`]; with
    /// a `quant` the bias stays in `dtype` (without one every parameter, bias included, takes
    /// the weight's width, as serving memory has always been counted). Zero for BMMs and tied
    /// weights (bias aside).
    pub fn param_bytes(&self) -> f64 {
        match self.quant {
            Some(_) if self.kind == GemmKind::Linear => {
                let weights = if self.shared_weight { 0.0 } else { self.k as f64 * self.n as f64 * self.weight_elem_bytes() };
                let bias = if self.bias { self.n as f64 * self.dtype.size_bytes() as f64 } else { 0.0 };
                weights + bias
            }
            _ => self.params() as f64 * self.weight_elem_bytes(),
        }
    }

    pub fn params(&self) -> u64 {
        if self.kind != GemmKind::Linear || self.shared_weight {
            return if self.bias && self.kind == GemmKind::Linear { self.n } else { 0 };
        }
        self.k.saturating_mul(self.n).saturating_add(if self.bias { self.n } else { 0 })
    }

    /// dX = dY·Wᵀ and dW = Xᵀ·dY (two GEMMs); a bias adds a column reduction of dY.
    pub fn backward(&self) -> Vec<Op> {
        let mut dx = self.clone();
        dx.bias = false;
        dx.shared_weight = true;
        dx.m = self.m;
        dx.n = self.k;
        dx.k = self.n;
        let mut dw = self.clone();
        dw.bias = false;
        dw.shared_weight = true;
        dw.m = self.k;
        dw.n = self.n;
        dw.k = self.m;
        let mut ops = vec![Op::Gemm(dx), Op::Gemm(dw)];
        if self.bias {
            ops.push(Op::Reduction(Reduction {
                elements_in: self.m * self.n,
                elements_out: self.n,
                dtype: self.dtype.vector_storage(),
            }));
        }
        if self.kind == GemmKind::Linear && self.shared_weight {
            // A tied weight's gradient is added into the owner's gradient buffer.
            ops.push(Op::Elementwise(Elementwise {
                kind: EwKind::Add,
                elements: self.k * self.n,
                tensor_inputs: 2,
                dtype: self.dtype.vector_storage(),
            }));
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_flops_bytes_params() {
        // 8 rows through a 4->3 layer with bias, fp32.
        let g = Gemm::linear(8, 4, 3, true, DType::Fp32).unwrap();
        assert_eq!(g.flops(), 2.0 * 8.0 * 4.0 * 3.0 + 8.0 * 3.0);
        assert_eq!(g.bytes(), 4.0 * (8.0 * 4.0 + 8.0 * 3.0 + 4.0 * 3.0 + 3.0));
        assert_eq!(g.params(), 4 * 3 + 3);
    }

    #[test]
    fn bmm_flops_bytes_have_no_params() {
        let g = Gemm::bmm(2, 5, 7, 3, DType::Bf16).unwrap();
        assert_eq!(g.flops(), 2.0 * 2.0 * 5.0 * 7.0 * 3.0);
        assert_eq!(g.bytes(), 2.0 * 2.0 * (5.0 * 7.0 + 5.0 * 3.0 + 7.0 * 3.0));
        assert_eq!(g.params(), 0);
    }

    #[test]
    fn backward_is_two_gemms_with_same_flops_plus_bias_reduction() {
        let g = Gemm::linear(16, 32, 64, true, DType::Fp32).unwrap();
        let bw = g.backward();
        assert_eq!(bw.len(), 3);
        let gemm_flops: f64 = bw.iter().filter(|o| matches!(o, Op::Gemm(_))).map(|o| o.flops()).sum();
        assert_eq!(gemm_flops, 2.0 * 2.0 * 16.0 * 32.0 * 64.0);
        assert!(matches!(bw[2], Op::Reduction(_)));
    }

    #[test]
    fn quantised_weights_shrink_bytes_but_not_params() {
        let mut g = Gemm::linear(4, 1024, 512, true, DType::Bf16).unwrap();
        let plain = g.bytes();
        g.quant = Some(Quant::Nvfp4);
        assert_eq!(g.params(), 1024 * 512 + 512);
        assert_eq!(g.param_bytes(), 1024.0 * 512.0 * 4.5 / 8.0 + 512.0 * 2.0);
        // Input at 4.5 bits, output BF16, weights at 4.5 bits, bias BF16.
        assert_eq!(g.bytes(), 4.0 * 1024.0 * 4.5 / 8.0 + 4.0 * 512.0 * 2.0 + 1024.0 * 512.0 * 4.5 / 8.0 + 512.0 * 2.0);
        assert!(g.bytes() < plain / 3.0);
        // Weight-only MXFP4 keeps 16-bit activations.
        g.quant = Some(Quant::Mxfp4);
        assert_eq!(g.bytes(), 4.0 * 1024.0 * 2.0 + 4.0 * 512.0 * 2.0 + 1024.0 * 512.0 * 4.25 / 8.0 + 512.0 * 2.0);
        // quant wins over weight_dtype; flops are unchanged.
        g.weight_dtype = Some(DType::Fp8);
        assert_eq!(g.weight_elem_bytes(), 4.25 / 8.0);
        assert_eq!(g.flops(), Gemm::linear(4, 1024, 512, true, DType::Bf16).unwrap().flops());
        // Absent from JSON when unset, read back when set.
        let plain = Gemm::linear(4, 8, 8, false, DType::Bf16).unwrap();
        assert!(!serde_json::to_string(&plain).unwrap().contains("quant"));
        let back: Gemm = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        assert_eq!(back.quant, Some(Quant::Mxfp4));
    }

    #[test]
    fn zero_dims_are_rejected() {
        assert!(Gemm::linear(0, 4, 4, false, DType::Fp32).is_err());
        assert!(Gemm::bmm(1, 1 << 40, 1 << 40, 1 << 40, DType::Fp32).is_err());
    }
}
