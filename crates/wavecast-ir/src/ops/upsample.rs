//! Spatial upsampling of NCHW images (nearest neighbour or bilinear), as in U-Nets, FPNs and
//! GAN generators. Memory-bound.

use crate::dims::{checked_mul, dim, DimError};
use crate::ops::Op;
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpsampleMode {
    Nearest,
    /// Bilinear: each output blends four inputs.
    Linear,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Upsample {
    pub mode: UpsampleMode,
    pub batch: u64,
    pub channels: u64,
    pub in_hw: [u64; 2],
    pub out_hw: [u64; 2],
    pub dtype: DType,
    #[serde(default)]
    pub backward: bool,
}

impl Upsample {
    pub fn new(mode: UpsampleMode, batch: u64, channels: u64, in_hw: [u64; 2], out_hw: [u64; 2], dtype: DType) -> Result<Upsample, DimError> {
        dim("upsample batch", batch)?;
        dim("upsample channels", channels)?;
        for v in in_hw {
            dim("upsample input size", v)?;
        }
        for v in out_hw {
            dim("upsample output size", v)?;
        }
        checked_mul("upsample output", &[batch, channels, out_hw[0], out_hw[1]])?;
        checked_mul("upsample input", &[batch, channels, in_hw[0], in_hw[1]])?;
        Ok(Upsample { mode, batch, channels, in_hw, out_hw, dtype: dtype.vector_storage(), backward: false })
    }

    pub fn input_elements(&self) -> f64 {
        self.batch as f64 * self.channels as f64 * (self.in_hw[0] * self.in_hw[1]) as f64
    }

    pub fn output_elements(&self) -> f64 {
        self.batch as f64 * self.channels as f64 * (self.out_hw[0] * self.out_hw[1]) as f64
    }

    /// Bilinear: four weighted taps per output (7 FLOPs); nearest copies. The gradient adds
    /// each output gradient into its source pixel(s).
    pub fn flops(&self) -> f64 {
        match (self.mode, self.backward) {
            (UpsampleMode::Nearest, false) => 0.0,
            (UpsampleMode::Nearest, true) => self.output_elements(),
            (UpsampleMode::Linear, _) => 7.0 * self.output_elements(),
        }
    }

    /// Read the input, write the output. Backward: read dY and write dX; bilinear scatters with
    /// atomic adds into a zeroed dX (zero fill, then read-modify-write).
    pub fn bytes(&self) -> f64 {
        let e = self.dtype.size_bytes() as f64;
        let dx = match (self.mode, self.backward) {
            (UpsampleMode::Linear, true) => 3.0,
            _ => 1.0,
        };
        e * (self.output_elements() + dx * self.input_elements())
    }

    pub fn backward(&self) -> Vec<Op> {
        vec![Op::Upsample(Upsample { backward: true, ..self.clone() })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_2x() {
        let u = Upsample::new(UpsampleMode::Nearest, 1, 8, [16, 16], [32, 32], DType::Fp32).unwrap();
        assert_eq!(u.flops(), 0.0);
        assert_eq!(u.bytes(), 4.0 * (8.0 * 1024.0 + 8.0 * 256.0));
        let l = Upsample { mode: UpsampleMode::Linear, ..u.clone() };
        assert_eq!(l.flops(), 7.0 * 8192.0);
        assert_eq!(l.backward()[0].bytes(), 4.0 * (8192.0 + 3.0 * 2048.0));
        assert!(Upsample::new(UpsampleMode::Nearest, 1, 8, [0, 16], [32, 32], DType::Fp32).is_err());
    }
}
