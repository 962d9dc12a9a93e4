//! Quantised weight formats of linear layers: the formats a layer's weights can be stored in.
//! [`crate::ops::Gemm`] carries one in its `quant` field; the widths (bits per weight, scales
//! included) and whether activations are quantised too are the format's row in the one table
//! of number formats, [`crate::Precision`].

use crate::Precision;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A quantised storage format for the weights of a linear layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Quant {
    /// FP8 (E4M3) weights and activations with per-tensor scales.
    Fp8,
    /// FP8 weights in 128×128 blocks, each with an FP32 scale (DeepSeek-V3 style), and FP8
    /// activations with per-128-element scales.
    Fp8Block,
    /// NVIDIA FP4: 4-bit E2M1 weights and activations with one FP8 scale per 16 elements.
    Nvfp4,
    /// OCP MXFP4 weights (4-bit E2M1, one 8-bit power-of-two scale per 32) with 16-bit
    /// activations (gpt-oss).
    Mxfp4,
    /// 4-bit integer weights with a 16-bit scale per group of 128, 16-bit activations (W4A16).
    Int4,
}

impl Quant {
    pub const ALL: [Quant; 5] = [
        Quant::Fp8,
        Quant::Fp8Block,
        Quant::Nvfp4,
        Quant::Mxfp4,
        Quant::Int4,
    ];

    /// This format's entry in the one table of number formats, where its widths live.
    pub fn format(self) -> Precision {
        Precision::from(self)
    }

    /// Bits per stored weight element, scales included.
    pub fn weight_bits(self) -> f64 {
        self.format().weight_bits()
    }

    /// Bytes per stored weight element, scales included.
    pub fn weight_bytes(self) -> f64 {
        self.weight_bits() / 8.0
    }

    /// Bits per activation element the GEMM reads: the quantised width when activations are
    /// quantised too, else 16 (BF16/FP16) for weight-only formats.
    pub fn activation_bits(self) -> f64 {
        self.format().activation_bits()
    }

    /// Whether the matmul itself runs in the low-precision format (activations quantised), as
    /// opposed to a weight-only format that is dequantised to 16 bits before the multiply.
    pub fn quantizes_activations(self) -> bool {
        self.format().quantizes_activations()
    }

    /// A format name where 16-bit weights are also a valid answer: "", "none", "bf16" and
    /// "fp16" mean no quantisation.
    pub fn parse_optional(name: &str) -> Result<Option<Quant>, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "" | "none" | "bf16" | "fp16" => Ok(None),
            wide @ ("fp32" | "tf32") => Err(Quant::unserved(wide)),
            other => other.parse().map(Some),
        }
    }

    /// Why `name` (FP32, TF32) is no weight format to serve in: one sentence for every flag
    /// that takes weights.
    pub fn unserved(name: &str) -> String {
        let quantized: Vec<&str> = Quant::ALL.iter().map(|q| q.as_str()).collect();
        format!("{name} weights are not a serving format: engines serve 16-bit weights (bf16, fp16) or quantized ones ({})", quantized.join(", "))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Quant::Fp8 => "fp8",
            Quant::Fp8Block => "fp8_block",
            Quant::Nvfp4 => "nvfp4",
            Quant::Mxfp4 => "mxfp4",
            Quant::Int4 => "int4",
        }
    }
}

impl fmt::Display for Quant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Quant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fp8" => Ok(Quant::Fp8),
            "fp8_block" => Ok(Quant::Fp8Block),
            "nvfp4" | "fp4" => Ok(Quant::Nvfp4),
            "mxfp4" => Ok(Quant::Mxfp4),
            "int4" | "int4_wo" | "w4a16" => Ok(Quant::Int4),
            other => Err(format!(
                "unknown quantisation '{other}' (expected one of fp8, fp8_block, nvfp4 (or fp4), mxfp4, int4 (or int4_wo, w4a16))"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_names_round_trip() {
        for q in Quant::ALL {
            assert_eq!(q.as_str().parse::<Quant>().unwrap(), q);
            assert_eq!(
                serde_json::to_string(&q).unwrap(),
                format!("\"{}\"", q.as_str())
            );
            assert!(q.weight_bits() <= q.activation_bits() || !q.quantizes_activations());
        }
        assert_eq!(Quant::Nvfp4.weight_bits(), 4.5);
        assert_eq!(Quant::Mxfp4.weight_bits(), 4.25);
        assert_eq!(Quant::Int4.weight_bits(), 4.125);
        assert_eq!(Quant::Fp8Block.weight_bits(), 8.0);
        assert_eq!(Quant::Mxfp4.activation_bits(), 16.0);
        assert!(!Quant::Int4.quantizes_activations() && Quant::Nvfp4.quantizes_activations());
        assert_eq!("FP4".parse::<Quant>().unwrap(), Quant::Nvfp4);
        assert_eq!("w4a16".parse::<Quant>().unwrap(), Quant::Int4);
        let e = "int8".parse::<Quant>().unwrap_err();
        assert!(
            e.contains("'int8'")
                && e.contains("fp8_block")
                && e.contains("nvfp4")
                && !e.contains('\n'),
            "{e}"
        );
    }
}
