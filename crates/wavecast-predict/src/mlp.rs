//! A small multi-layer perceptron, evaluated in plain Rust (a few thousand multiply-adds per
//! op, so predicting a whole model stays in the microseconds) and stored as JSON beside the
//! other predictor parameters. It is trained with candle in `wavecast-train`.

use serde::{Deserialize, Serialize};

/// One dense layer, row-major `out × in`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dense {
    pub weight: Vec<Vec<f32>>,
    pub bias: Vec<f32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mlp {
    /// Feature standardisation learned on the training set.
    pub mean: Vec<f32>,
    pub std: Vec<f32>,
    /// Range of each feature in training: inputs are clamped to it, so an unseen shape or GPU
    /// is answered like the nearest trained one instead of by wild extrapolation.
    pub lo: Vec<f32>,
    pub hi: Vec<f32>,
    pub layers: Vec<Dense>,
}

/// Deterministic pseudo-random permutation source (splitmix64), so training is reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Mlp {
    /// Plain-Rust forward pass: the first output.
    pub fn predict(&self, x: &[f32]) -> f32 {
        self.predict_all(x)[0]
    }

    /// Plain-Rust forward pass: every output.
    pub fn predict_all(&self, x: &[f32]) -> Vec<f32> {
        let mut h: Vec<f32> = x
            .iter()
            .enumerate()
            .map(|(j, v)| (v.clamp(self.lo[j], self.hi[j]) - self.mean[j]) / self.std[j])
            .collect();
        let last = self.layers.len() - 1;
        for (i, l) in self.layers.iter().enumerate() {
            let mut next: Vec<f32> = l.weight.iter().zip(&l.bias).map(|(row, b)| row.iter().zip(&h).map(|(w, v)| w * v).sum::<f32>() + b).collect();
            if i < last {
                next.iter_mut().for_each(|v| *v = v.max(0.0));
            }
            h = next;
        }
        h
    }
}
