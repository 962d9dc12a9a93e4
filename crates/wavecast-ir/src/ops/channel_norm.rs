//! Normalisation over the channels of NCHW images: batch norm (statistics per channel over
//! batch and pixels), group norm (per sample and group of channels over the group's pixels) and
//! instance norm (group norm with one channel per group). Layer and RMS norm over the last
//! dimension are in `norm.rs`.

use crate::dims::{checked_mul, dim, DimError};
use crate::ops::Op;
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelNormKind {
    BatchNorm,
    GroupNorm,
    InstanceNorm,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelNorm {
    pub kind: ChannelNormKind,
    pub batch: u64,
    pub channels: u64,
    /// Pixels per channel (H·W; 1 after a linear layer).
    pub spatial: u64,
    /// Channel groups (group norm); 1 for batch norm, `channels` for instance norm.
    pub groups: u64,
    /// Learned per-channel scale and shift.
    pub affine: bool,
    /// Batch norm in training computes batch statistics (two passes over the input); in
    /// inference it applies the running statistics (one fused scale-and-shift pass).
    pub training: bool,
    pub dtype: DType,
    #[serde(default)]
    pub backward: bool,
}

impl ChannelNorm {
    fn new(kind: ChannelNormKind, batch: u64, channels: u64, spatial: u64, groups: u64, training: bool, dtype: DType) -> Result<ChannelNorm, DimError> {
        dim("norm batch", batch)?;
        dim("norm channels", channels)?;
        dim("norm pixels", spatial)?;
        dim("norm groups", groups)?;
        if !channels.is_multiple_of(groups) {
            return Err(DimError::Invalid { what: format!("group norm: {groups} groups do not divide {channels} channels") });
        }
        checked_mul("norm elements", &[batch, channels, spatial])?;
        Ok(ChannelNorm { kind, batch, channels, spatial, groups, affine: true, training, dtype: dtype.vector_storage(), backward: false })
    }

    pub fn batch_norm(batch: u64, channels: u64, spatial: u64, training: bool, dtype: DType) -> Result<ChannelNorm, DimError> {
        ChannelNorm::new(ChannelNormKind::BatchNorm, batch, channels, spatial, 1, training, dtype)
    }

    pub fn group_norm(batch: u64, channels: u64, spatial: u64, groups: u64, dtype: DType) -> Result<ChannelNorm, DimError> {
        ChannelNorm::new(ChannelNormKind::GroupNorm, batch, channels, spatial, groups, true, dtype)
    }

    pub fn instance_norm(batch: u64, channels: u64, spatial: u64, affine: bool, dtype: DType) -> Result<ChannelNorm, DimError> {
        let mut n = ChannelNorm::new(ChannelNormKind::InstanceNorm, batch, channels, spatial, channels, true, dtype)?;
        n.affine = affine;
        Ok(n)
    }

    pub fn elements(&self) -> f64 {
        self.batch as f64 * self.channels as f64 * self.spatial as f64
    }

    /// Inference batch norm only scales and shifts.
    fn statistics(&self) -> bool {
        self.kind != ChannelNormKind::BatchNorm || self.training
    }

    /// Per element: statistics (mean 1, variance 2), normalise 2, affine 2; the gradient 10 (as
    /// layer norm's); inference batch norm a fused multiply-add (2).
    pub fn flops(&self) -> f64 {
        let per = match (self.backward, self.statistics()) {
            (true, _) => 10.0,
            (false, true) => 7.0,
            (false, false) => 2.0,
        };
        per * self.elements()
    }

    /// Forward with statistics: the input is read twice (moments, then normalise) and the
    /// output written once; inference batch norm reads once and writes once. Backward reads x
    /// and dy for the reductions, again for dx, and writes dx. Plus the per-channel vectors
    /// (scale, shift, and the two running statistics of batch norm).
    pub fn bytes(&self) -> f64 {
        let e = self.dtype.size_bytes() as f64;
        let tensors = match (self.backward, self.statistics()) {
            (true, _) => 5.0,
            (false, true) => 3.0,
            (false, false) => 2.0,
        };
        let vectors = if self.kind == ChannelNormKind::BatchNorm { 4.0 } else { 2.0 * self.affine as u8 as f64 };
        tensors * self.elements() * e + vectors * self.channels as f64 * e
    }

    pub fn params(&self) -> u64 {
        if self.backward || !self.affine {
            0
        } else {
            self.channels.saturating_mul(2)
        }
    }

    /// One kernel computes dx and the scale and shift gradients together (cuDNN's batch-norm
    /// backward; PyTorch's group-norm backward kernels move the same data).
    pub fn backward(&self) -> Vec<Op> {
        vec![Op::ChannelNorm(ChannelNorm { backward: true, ..self.clone() })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_norm_training_and_inference() {
        let t = ChannelNorm::batch_norm(8, 64, 56 * 56, true, DType::Fp32).unwrap();
        let n = 8.0 * 64.0 * 3136.0;
        assert_eq!(t.params(), 128);
        assert_eq!(t.flops(), 7.0 * n);
        assert_eq!(t.bytes(), 3.0 * n * 4.0 + 4.0 * 64.0 * 4.0);
        let i = ChannelNorm::batch_norm(8, 64, 56 * 56, false, DType::Fp32).unwrap();
        assert_eq!(i.flops(), 2.0 * n);
        assert_eq!(i.bytes(), 2.0 * n * 4.0 + 4.0 * 64.0 * 4.0);
        let bw = &t.backward()[0];
        assert_eq!(bw.bytes(), 5.0 * n * 4.0 + 4.0 * 64.0 * 4.0);
        assert_eq!(bw.params(), 0);
    }

    #[test]
    fn group_norm_checks_groups() {
        let g = ChannelNorm::group_norm(2, 64, 100, 32, DType::Bf16).unwrap();
        assert_eq!(g.params(), 128);
        assert_eq!(g.bytes(), 3.0 * 12_800.0 * 2.0 + 2.0 * 64.0 * 2.0);
        assert!(ChannelNorm::group_norm(2, 60, 100, 32, DType::Fp32).is_err());
        assert!(ChannelNorm::batch_norm(0, 60, 100, true, DType::Fp32).is_err());
        assert_eq!(ChannelNorm::instance_norm(1, 3, 4, false, DType::Fp32).unwrap().params(), 0);
    }
}
