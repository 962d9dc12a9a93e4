//! Which family a kernel belongs to, for the per-class breakdown and for the scaling path,
//! when the launching op does not map to an IR operator (no shapes recorded, convolutions,
//! communication). Kernel names follow the vendor libraries' conventions (cuBLAS `*gemm*`,
//! cuDNN `*scudnn*`/`dgrad`/`wgrad`, NCCL `ncclKernel_*`, PyTorch's `vectorized_elementwise_kernel`).

use wavecast_ir::{DType, OpClass};

/// A kernel's family: an IR class (the one classification IR, predictors and trace share), or
/// one of two kinds only a trace has: CNN kernels without an IR class of their own (cuDNN batch
/// norm, pooling kernels seen without their op) and kernels no rule recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Op(OpClass),
    /// Batch norm (cuDNN), pooling and other CNN layers the IR does not have.
    CnnOther,
    Other,
}

impl Family {
    pub fn label(self) -> &'static str {
        match self {
            Family::Op(c) => c.as_str(),
            Family::CnnOther => "cnn_other",
            Family::Other => "other",
        }
    }

    /// Library-chosen kernels: the destination will likely run a different one.
    pub fn kernel_varying(self) -> bool {
        matches!(self, Family::Op(c) if c.kernels_vary_by_gpu())
    }

    /// The IR class whose compute roof applies (convolutions and recurrent layers are matmul
    /// work on the tensor units; the trace-only kinds are vector work).
    pub fn roof_class(self) -> OpClass {
        match self {
            Family::Op(c) => c,
            Family::CnnOther | Family::Other => OpClass::Elementwise,
        }
    }
}

fn any(s: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| s.contains(n))
}

/// Family from the operator and kernel names alone.
pub fn family_by_name(op_name: Option<&str>, kernel: &str) -> Family {
    let k = kernel.to_ascii_lowercase();
    let op = op_name.unwrap_or("").to_ascii_lowercase();
    if k.starts_with("nccl") || any(&k, &["rccl", "all_reduce", "allreduce"]) {
        return Family::Op(OpClass::Communication);
    }
    if any(&op, &["lstm", "gru", "rnn_tanh", "rnn_relu", "_cudnn_rnn"]) || any(&k, &["lstm", "gru_", "rnn_", "rnn::", "persistrnn"]) {
        return Family::Op(OpClass::Rnn);
    }
    if any(&op, &["conv"]) || any(&k, &["scudnn", "conv", "dgrad", "wgrad", "winograd", "implicit_gemm", "fprop", "cudnn::gemm"]) {
        return Family::Op(OpClass::Conv);
    }
    if any(&k, &["flash", "fmha", "attention", "attn"]) || any(&op, &["attention"]) {
        return Family::Op(OpClass::FusedAttention);
    }
    if any(&k, &["gemm", "cublas", "cutlass", "xmma", "matmul", "gemv"]) || any(&op, &["::mm", "::bmm", "addmm", "matmul", "linear"]) {
        return Family::Op(OpClass::Gemm);
    }
    if any(&k, &["softmax"]) {
        return Family::Op(OpClass::Softmax);
    }
    if any(&k, &["layer_norm", "layernorm", "rms_norm", "rmsnorm"]) {
        return Family::Op(OpClass::Norm);
    }
    if any(&k, &["bn_fw", "bn_bw", "batch_norm", "batchnorm", "pool"]) {
        return Family::CnnOther;
    }
    if any(&k, &["embedding"]) || any(&op, &["embedding"]) {
        return Family::Op(OpClass::Embedding);
    }
    if any(&k, &["adam", "sgd", "adagrad", "multi_tensor_apply", "_foreach"]) || op.starts_with("optimizer.") {
        return Family::Op(OpClass::Optimizer);
    }
    if any(&k, &["reduce", "sum", "norm", "scan", "sort", "topk"]) {
        return Family::Op(OpClass::Reduction);
    }
    if any(&k, &["copy", "cat", "gather", "scatter", "index", "memcpy", "permute", "transpose", "fill"]) {
        return Family::Op(OpClass::Memory);
    }
    if any(&k, &["elementwise", "triton_poi", "unrolled", "vectorized", "functor", "pointwise"]) {
        return Family::Op(OpClass::Elementwise);
    }
    Family::Other
}

/// The dtype a kernel's name reveals, if any: cuBLAS/CUTLASS encode the math in the name
/// (`s1688`/`s16816` = FP32 data on TF32 tensor cores, `h884`/`h1688`/`h16816` = FP16 HMMA).
pub fn dtype_from_kernel(kernel: &str) -> Option<DType> {
    let k = kernel.to_ascii_lowercase();
    if any(&k, &["bf16", "bfloat16"]) {
        Some(DType::Bf16)
    } else if any(&k, &["tf32", "tensorop_s1688", "tensorop_s16816", "s1688gemm", "s16816gemm"]) {
        Some(DType::Tf32)
    } else if any(&k, &["h884", "h1688", "h16816", "hgemm", "fp16", "c10::half", "<half", "__half"]) {
        Some(DType::Fp16)
    } else {
        None
    }
}

/// The op's dtype, corrected where the kernel shows more: FP32 matmuls on Ampere and later run
/// TF32 tensor-core kernels by default in cuDNN (and in cuBLAS when allowed).
pub fn refine_dtype(op_dtype: DType, kernel: &str) -> DType {
    match dtype_from_kernel(kernel) {
        Some(DType::Tf32) if op_dtype == DType::Fp32 => DType::Tf32,
        _ => op_dtype,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_kernels_are_classified() {
        assert_eq!(family_by_name(None, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), Family::Op(OpClass::Communication));
        assert_eq!(family_by_name(None, "volta_sgemm_64x64_nt"), Family::Op(OpClass::Gemm));
        assert_eq!(family_by_name(None, "cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1"), Family::Op(OpClass::Conv));
        assert_eq!(family_by_name(Some("aten::cudnn_convolution"), "volta_sgemm_64x64_nn"), Family::Op(OpClass::Conv));
        assert_eq!(family_by_name(None, "void cudnn::bn_bw_1C11_kernel_new<float>"), Family::CnnOther);
        assert_eq!(
            family_by_name(None, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"),
            Family::Op(OpClass::Elementwise)
        );
        assert_eq!(family_by_name(None, "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>"), Family::Op(OpClass::Optimizer));
        assert_eq!(family_by_name(None, "mystery"), Family::Other);
        assert_eq!(family_by_name(Some("aten::_cudnn_rnn"), "void elemWiseRNNcell<float>"), Family::Op(OpClass::Rnn));
        assert!(Family::Op(OpClass::Rnn).kernel_varying());
        assert!(Family::Op(OpClass::Conv).kernel_varying() && !Family::Op(OpClass::Softmax).kernel_varying());
    }

    #[test]
    fn tf32_kernels_are_recognised() {
        let k = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>";
        assert_eq!(refine_dtype(DType::Fp32, k), DType::Tf32);
        assert_eq!(refine_dtype(DType::Bf16, k), DType::Bf16);
        assert_eq!(refine_dtype(DType::Fp32, "ampere_sgemm_128x128_tn"), DType::Fp32);
        assert_eq!(dtype_from_kernel("volta_h884gemm_64x64_ldg8_nn"), Some(DType::Fp16));
        assert_eq!(dtype_from_kernel("ampere_sgemm_128x128_tn"), None);
    }
}
