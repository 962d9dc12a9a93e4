//! Max and average pooling over NCHW images: windowed (kernel, stride, padding, ceil mode),
//! adaptive (a fixed output size, windows of about in/out pixels) and global (one output pixel).
//! Memory-bound on every GPU.

use crate::dims::{checked_mul, dim, DimError};
use crate::ops::Op;
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolKind {
    Max,
    Avg,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pool {
    pub kind: PoolKind,
    pub batch: u64,
    pub channels: u64,
    pub in_hw: [u64; 2],
    pub out_hw: [u64; 2],
    /// Pixels each output reads (for adaptive pooling the largest window).
    pub window: [u64; 2],
    pub dtype: DType,
    #[serde(default)]
    pub backward: bool,
}

/// Bytes of the int64 argmax index max pooling saves per output for its backward pass.
const INDEX_BYTES: f64 = 8.0;

/// Mean pixels per adaptive window, rounded up: Σ over outputs of (⌈(i+1)·n/o⌉ − ⌊i·n/o⌋) / o.
fn adaptive_window(n: u64, o: u64) -> u64 {
    if o > 1 << 16 {
        return n.div_ceil(o);
    }
    let (n, o) = (n as u128, o as u128);
    let total: u128 = (0..o).map(|i| ((i + 1) * n).div_ceil(o) - i * n / o).sum();
    total.div_ceil(o) as u64
}

impl Pool {
    /// A windowed pool. `pads` is [top, left, bottom, right]; `ceil_mode` rounds the output size
    /// up (a last window that starts inside the padded input is kept).
    #[allow(clippy::too_many_arguments)]
    pub fn window(
        kind: PoolKind,
        batch: u64,
        channels: u64,
        in_hw: [u64; 2],
        kernel: [u64; 2],
        stride: [u64; 2],
        pads: [u64; 4],
        ceil_mode: bool,
        dtype: DType,
    ) -> Result<Pool, DimError> {
        let mut out = [0; 2];
        for i in 0..2 {
            let n = dim("pool input size", in_hw[i])? as i128;
            let k = dim("pool kernel", kernel[i])? as i128;
            let s = dim("pool stride", stride[i])? as i128;
            let (pb, pe) = (pads[i] as i128, pads[i + 2] as i128);
            if pb > k || pe > k || pb > crate::dims::MAX_DIM as i128 {
                return Err(DimError::Invalid { what: format!("pool padding {} exceeds the kernel {}", pb.max(pe), k) });
            }
            let room = n + pb + pe - k;
            if room < 0 {
                return Err(DimError::Invalid { what: format!("pool kernel {k} is larger than the padded input {}", n + pb + pe) });
            }
            let mut o = if ceil_mode { (room + s - 1) / s + 1 } else { room / s + 1 };
            // With ceil mode the last window must start inside the input or left padding.
            if ceil_mode && (o - 1) * s >= n + pb {
                o -= 1;
            }
            out[i] = o.max(1) as u64;
        }
        Pool::build(kind, batch, channels, in_hw, out, kernel, dtype)
    }

    /// Adaptive pooling to `out_hw`: output pixel i reads input pixels ⌊i·n/o⌋ .. ⌈(i+1)·n/o⌉
    /// (windows overlap when o does not divide n).
    pub fn adaptive(kind: PoolKind, batch: u64, channels: u64, in_hw: [u64; 2], out_hw: [u64; 2], dtype: DType) -> Result<Pool, DimError> {
        let mut window = [0; 2];
        for i in 0..2 {
            let (n, o) = (dim("pool input size", in_hw[i])?, dim("pool output size", out_hw[i])?);
            window[i] = adaptive_window(n, o);
        }
        Pool::build(kind, batch, channels, in_hw, out_hw, window, dtype)
    }

    /// One output pixel per channel (global average or max pooling).
    pub fn global(kind: PoolKind, batch: u64, channels: u64, in_hw: [u64; 2], dtype: DType) -> Result<Pool, DimError> {
        Pool::adaptive(kind, batch, channels, in_hw, [1, 1], dtype)
    }

    fn build(kind: PoolKind, batch: u64, channels: u64, in_hw: [u64; 2], out_hw: [u64; 2], window: [u64; 2], dtype: DType) -> Result<Pool, DimError> {
        dim("pool batch", batch)?;
        dim("pool channels", channels)?;
        checked_mul("pool input", &[batch, channels, in_hw[0], in_hw[1]])?;
        checked_mul("pool flops", &[batch, channels, out_hw[0], out_hw[1], window[0], window[1]])?;
        Ok(Pool { kind, batch, channels, in_hw, out_hw, window, dtype: dtype.vector_storage(), backward: false })
    }

    pub fn input_elements(&self) -> f64 {
        self.batch as f64 * self.channels as f64 * self.in_hw[0] as f64 * self.in_hw[1] as f64
    }

    pub fn output_elements(&self) -> f64 {
        self.batch as f64 * self.channels as f64 * self.out_hw[0] as f64 * self.out_hw[1] as f64
    }

    /// One compare or add per window pixel; the max-pool gradient routes one value per output,
    /// the average-pool gradient spreads each output over its window.
    pub fn flops(&self) -> f64 {
        let window = (self.window[0] * self.window[1]) as f64;
        match (self.kind, self.backward) {
            (PoolKind::Max, true) => self.output_elements(),
            _ => self.output_elements() * window,
        }
    }

    /// Forward: read the input, write the output (max pooling also writes its argmax indices).
    /// Backward: read dY (and the indices), write dX.
    pub fn bytes(&self) -> f64 {
        let e = self.dtype.size_bytes() as f64;
        let indices = if self.kind == PoolKind::Max { self.output_elements() * INDEX_BYTES } else { 0.0 };
        (self.input_elements() + self.output_elements()) * e + indices
    }

    pub fn backward(&self) -> Vec<Op> {
        vec![Op::Pool(Pool { backward: true, ..self.clone() })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnet_max_pool() {
        // 3×3/2 max pool, padding 1: 112² → 56²; 64 channels.
        let p = Pool::window(PoolKind::Max, 1, 64, [112, 112], [3, 3], [2, 2], [1; 4], false, DType::Fp32).unwrap();
        assert_eq!(p.out_hw, [56, 56]);
        let out = 64.0 * 56.0 * 56.0;
        assert_eq!(p.flops(), out * 9.0);
        assert_eq!(p.bytes(), 4.0 * (64.0 * 112.0 * 112.0 + out) + 8.0 * out);
        let bw = &p.backward()[0];
        assert_eq!(bw.flops(), out);
    }

    #[test]
    fn ceil_mode_and_global_average() {
        // Inception/VGG-style 3×3/2 on 147 with ceil mode → 73 (floor mode also 73); 2×2/2 on 7 → 4 in ceil mode.
        let p = Pool::window(PoolKind::Max, 1, 8, [7, 7], [2, 2], [2, 2], [0; 4], true, DType::Fp32).unwrap();
        assert_eq!(p.out_hw, [4, 4]);
        let g = Pool::global(PoolKind::Avg, 2, 2048, [7, 7], DType::Fp16).unwrap();
        assert_eq!(g.out_hw, [1, 1]);
        assert_eq!(g.window, [7, 7]);
        assert_eq!(g.flops(), 2.0 * 2048.0 * 49.0);
        assert_eq!(g.bytes(), 2.0 * (2.0 * 2048.0 * 49.0 + 2.0 * 2048.0));
    }

    #[test]
    fn adaptive_windows_overlap_when_not_divisible() {
        let a = Pool::adaptive(PoolKind::Avg, 1, 1, [7, 14], [7, 7], DType::Fp32).unwrap();
        assert_eq!(a.window, [1, 2]);
        // 10 → 3: windows 0..4, 3..7, 6..10, four pixels each.
        let b = Pool::adaptive(PoolKind::Avg, 1, 1, [10, 10], [3, 3], DType::Fp32).unwrap();
        assert_eq!(b.window, [4, 4]);
        // 5 → 3: windows 0..2, 1..4, 3..5 (2, 3, 2 pixels): mean 7/3, rounded up to 3.
        let c = Pool::adaptive(PoolKind::Avg, 1, 1, [5, 5], [3, 3], DType::Fp32).unwrap();
        assert_eq!(c.window, [3, 3]);
    }

    #[test]
    fn bad_pools_are_errors() {
        assert!(Pool::window(PoolKind::Max, 1, 8, [2, 2], [3, 3], [1, 1], [0; 4], false, DType::Fp32).is_err());
        assert!(Pool::window(PoolKind::Max, 1, 8, [8, 8], [3, 3], [0, 0], [0; 4], false, DType::Fp32).is_err());
        assert!(Pool::global(PoolKind::Avg, 0, 8, [8, 8], DType::Fp32).is_err());
    }
}
