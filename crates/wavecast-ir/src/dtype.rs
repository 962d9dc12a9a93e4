//! Element types and their sizes — the one place that knows how many bytes an element takes.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Numeric format of an operator's tensors. `Tf32` stores FP32 but multiplies on tensor cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    Fp32,
    Tf32,
    Fp16,
    Bf16,
    Fp8,
}

impl DType {
    pub const ALL: [DType; 5] = [DType::Fp32, DType::Tf32, DType::Fp16, DType::Bf16, DType::Fp8];

    /// Bytes per stored element.
    pub fn size_bytes(self) -> u64 {
        match self {
            DType::Fp32 | DType::Tf32 => 4,
            DType::Fp16 | DType::Bf16 => 2,
            DType::Fp8 => 1,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DType::Fp32 => "fp32",
            DType::Tf32 => "tf32",
            DType::Fp16 => "fp16",
            DType::Bf16 => "bf16",
            DType::Fp8 => "fp8",
        }
    }

    /// The type element-wise and normalisation kernels actually compute in: TF32 is only a
    /// matmul mode, and FP8 tensors are up-cast outside GEMMs.
    pub fn vector_storage(self) -> DType {
        match self {
            DType::Tf32 => DType::Fp32,
            DType::Fp8 => DType::Bf16,
            other => other,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fp32" | "float32" | "float" | "f32" => Ok(DType::Fp32),
            "tf32" => Ok(DType::Tf32),
            "fp16" | "float16" | "half" | "f16" => Ok(DType::Fp16),
            "bf16" | "bfloat16" => Ok(DType::Bf16),
            "fp8" | "float8" | "e4m3" => Ok(DType::Fp8),
            other => Err(format!(
                "unknown dtype '{other}' (expected one of fp32, tf32, fp16, bf16, fp8)"
            )),
        }
    }
}
