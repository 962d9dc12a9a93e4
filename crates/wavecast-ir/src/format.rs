//! The one table of number formats: each format's name, stored width (scales included),
//! whether a layer in it quantizes its activations, and the IR element type it maps to. The
//! measurement readers key their rows by [`Precision`]; a linear layer's weight format
//! ([`crate::Quant`]) and a tensor's element type ([`crate::DType`]) read their widths from here.

use crate::{DType, Quant};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Every number format wavecast knows, as kernels run them and measurements name them.
/// Block-scaled FP8 and NVFP4 are separate formats because their kernels (and costs) differ
/// from per-tensor FP8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Fp32,
    Fp16,
    Bf16,
    Fp8,
    Fp8Block,
    Nvfp4,
    Int8,
    /// INT4 weights, 16-bit activations (AWQ/GPTQ-style weight-only quantization).
    Int4Wo,
    /// MXFP4 weights, 16-bit activations (gpt-oss style).
    Mxfp4Wo,
}

impl Precision {
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Fp8Block => "fp8_block",
            Precision::Nvfp4 => "nvfp4",
            Precision::Int8 => "int8",
            Precision::Int4Wo => "int4_wo",
            Precision::Mxfp4Wo => "mxfp4_wo",
        }
    }

    /// The names the sources write (`bfloat16`, `half`, `fp8_block`, `w4a16_awq`, …).
    pub fn parse(name: &str) -> Option<Precision> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "fp32" | "float" | "float32" => Precision::Fp32,
            "fp16" | "half" | "float16" => Precision::Fp16,
            "bf16" | "bfloat16" => Precision::Bf16,
            "fp8" | "float8" | "fp8_e4m3" | "e4m3" => Precision::Fp8,
            "fp8_block" | "fp8_blockwise" => Precision::Fp8Block,
            "nvfp4" | "fp4" => Precision::Nvfp4,
            "int8" => Precision::Int8,
            "int4_wo" | "w4a16" | "w4a16_awq" | "w4a16_gptq" | "int4" => Precision::Int4Wo,
            "mxfp4_wo" | "w4a16_mxfp4" => Precision::Mxfp4Wo,
            _ => return None,
        })
    }

    /// The IR's element type for the formats it has (the one place element sizes live); block
    /// scales and 4-bit formats have none.
    pub fn dtype(self) -> Option<DType> {
        match self {
            Precision::Fp32 => Some(DType::Fp32),
            Precision::Fp16 => Some(DType::Fp16),
            Precision::Bf16 => Some(DType::Bf16),
            Precision::Fp8 | Precision::Int8 => Some(DType::Fp8),
            Precision::Fp8Block | Precision::Nvfp4 | Precision::Int4Wo | Precision::Mxfp4Wo => None,
        }
    }

    /// Bits per stored weight element, scales included.
    pub fn weight_bits(self) -> f64 {
        match self {
            // One FP32 scale per 128×128 block: negligible next to the 8-bit values.
            Precision::Fp8Block => 8.0,
            // 4-bit values plus one 8-bit scale per 16 (NVFP4) or per 32 (MXFP4), or a 16-bit
            // scale per 128 (INT4).
            Precision::Nvfp4 => 4.5,
            Precision::Mxfp4Wo => 4.25,
            Precision::Int4Wo => 4.125,
            p => p.dtype().map_or(16.0, |d| d.size_bytes() as f64 * 8.0),
        }
    }

    /// Whether a layer in this format quantizes its 16-bit activations on the fly before the
    /// low-precision GEMM (FP8, block FP8, NVFP4, INT8); weight-only formats do not.
    pub fn quantizes_activations(self) -> bool {
        matches!(self, Precision::Fp8 | Precision::Fp8Block | Precision::Nvfp4 | Precision::Int8)
    }

    /// Bits per activation element read by the kernel.
    pub fn activation_bits(self) -> f64 {
        match self {
            Precision::Int4Wo | Precision::Mxfp4Wo => 16.0,
            p => p.weight_bits(),
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Quant> for Precision {
    /// A quantized layer format's entry in the table.
    fn from(q: Quant) -> Precision {
        match q {
            Quant::Fp8 => Precision::Fp8,
            Quant::Fp8Block => Precision::Fp8Block,
            Quant::Nvfp4 => Precision::Nvfp4,
            Quant::Mxfp4 => Precision::Mxfp4Wo,
            Quant::Int4 => Precision::Int4Wo,
        }
    }
}

impl From<DType> for Precision {
    /// An element type's entry in the table (TF32 stores FP32).
    fn from(d: DType) -> Precision {
        match d {
            DType::Fp32 | DType::Tf32 => Precision::Fp32,
            DType::Fp16 => Precision::Fp16,
            DType::Bf16 => Precision::Bf16,
            DType::Fp8 => Precision::Fp8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_types_read_their_width_from_the_table() {
        for d in DType::ALL {
            assert_eq!(Precision::from(d).weight_bits(), d.size_bytes() as f64 * 8.0, "{d}");
        }
    }

    #[test]
    fn names_round_trip_and_serde_uses_them() {
        for p in [Precision::Fp32, Precision::Fp16, Precision::Bf16, Precision::Fp8, Precision::Fp8Block, Precision::Nvfp4, Precision::Int8, Precision::Int4Wo, Precision::Mxfp4Wo] {
            assert_eq!(Precision::parse(p.as_str()), Some(p));
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{p}\""));
        }
        assert_eq!(Precision::parse("bfloat16"), Some(Precision::Bf16));
        assert_eq!(Precision::parse("w4a16_awq"), Some(Precision::Int4Wo));
        assert_eq!(Precision::parse("int7"), None);
    }

    #[test]
    fn weight_only_formats_keep_16_bit_activations() {
        assert_eq!(Precision::Mxfp4Wo.activation_bits(), 16.0);
        assert_eq!(Precision::Int4Wo.activation_bits(), 16.0);
        assert_eq!(Precision::Nvfp4.activation_bits(), 4.5);
        assert!(!Precision::Int4Wo.quantizes_activations() && Precision::Fp8Block.quantizes_activations());
    }
}
