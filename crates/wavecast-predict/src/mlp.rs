//! A small multi-layer perceptron, evaluated in plain Rust (a few thousand multiply-adds per
//! op, so predicting a whole model stays in the microseconds) and stored as JSON beside the
//! other predictor parameters. It is trained with candle in `wavecast-train`.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;
use crate::memo::Memo;

/// One dense layer, row-major `out × in`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dense {
    pub weight: Vec<Vec<f32>>,
    pub bias: Vec<f32>,
}

/// What an [`Mlp`] learned, as trained and stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MlpParameters {
    /// Feature standardisation learned on the training set.
    pub mean: Vec<f32>,
    pub std: Vec<f32>,
    /// Range of each feature in training: inputs are clamped to it, so an unseen shape or GPU
    /// is answered like the nearest trained one instead of by wild extrapolation.
    pub lo: Vec<f32>,
    pub hi: Vec<f32>,
    pub layers: Vec<Dense>,
}

/// The network: its parameters (read through `Deref`) and the same layers laid out for the
/// forward pass, rebuilt whenever the parameters change.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(from = "MlpParameters", into = "MlpParameters")]
pub struct Mlp {
    parameters: MlpParameters,
    packed: Vec<PackedDense>,
    memo: Outputs,
}

/// Outputs already computed by [`Mlp::predict_remembered`], by input (as bits: the same
/// input, the same output). Emptied when the parameters change.
type Outputs = Memo<Mutex<HashMap<Vec<u32>, f32>>>;

/// Inputs a memo holds before it starts over (a few MB).
const MEMO_CAPACITY: usize = 1 << 16;

fn entries(memo: &Outputs) -> std::sync::MutexGuard<'_, HashMap<Vec<u32>, f32>> {
    // A panic elsewhere while the lock was held leaves whole entries only.
    memo.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl From<MlpParameters> for Mlp {
    fn from(parameters: MlpParameters) -> Mlp {
        let packed = parameters.layers.iter().map(PackedDense::new).collect();
        Mlp { parameters, packed, memo: Outputs::default() }
    }
}

impl From<Mlp> for MlpParameters {
    fn from(m: Mlp) -> MlpParameters {
        m.parameters
    }
}

impl PartialEq for Mlp {
    fn eq(&self, other: &Mlp) -> bool {
        self.parameters == other.parameters
    }
}

impl std::ops::Deref for Mlp {
    type Target = MlpParameters;
    fn deref(&self) -> &MlpParameters {
        &self.parameters
    }
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
    pub fn new(parameters: MlpParameters) -> Mlp {
        Mlp::from(parameters)
    }

    /// Changes the parameters in place (rounding them, say) and lays the layers out again.
    pub fn update(&mut self, change: impl FnOnce(&mut MlpParameters)) {
        change(&mut self.parameters);
        self.packed = self.parameters.layers.iter().map(PackedDense::new).collect();
        entries(&self.memo).clear();
    }

    /// [`Mlp::predict`], remembering the answer for an input asked again: for callers that ask
    /// the same inputs many times over (a matrix product's halvings, shared by every product
    /// of the same columns).
    pub fn predict_remembered(&self, x: &[f32]) -> f32 {
        let key: Vec<u32> = x.iter().map(|v| v.to_bits()).collect();
        if let Some(&y) = entries(&self.memo).get(&key) {
            return y;
        }
        let y = self.predict(x);
        let mut held = entries(&self.memo);
        if held.len() >= MEMO_CAPACITY {
            held.clear();
        }
        held.insert(key, y);
        y
    }

    /// Plain-Rust forward pass: the first output.
    pub fn predict(&self, x: &[f32]) -> f32 {
        self.predict_all(x)[0]
    }

    /// Plain-Rust forward pass: every output.
    pub fn predict_all(&self, x: &[f32]) -> Vec<f32> {
        let p = &self.parameters;
        let mut h: Vec<f32> = x
            .iter()
            .enumerate()
            .map(|(j, v)| (v.clamp(p.lo[j], p.hi[j]) - p.mean[j]) / p.std[j])
            .collect();
        let last = self.packed.len() - 1;
        let mut next = Vec::new();
        for (i, l) in self.packed.iter().enumerate() {
            l.forward_into(&h, &mut next);
            if i < last {
                next.iter_mut().for_each(|v| *v = v.max(0.0));
            }
            std::mem::swap(&mut h, &mut next);
        }
        h
    }
}

/// Outputs computed side by side in [`PackedDense::forward_into`].
const ROW_BLOCK: usize = 8;

/// A [`Dense`] layer stored input by input, [`ROW_BLOCK`] outputs at a time (the last block
/// padded with zero weights), so one input's weights for a block of outputs sit together.
#[derive(Debug, Clone)]
struct PackedDense {
    inputs: usize,
    /// `blocks × inputs` columns of ROW_BLOCK weights.
    columns: Vec<[f32; ROW_BLOCK]>,
    bias: Vec<f32>,
}

impl PackedDense {
    fn new(d: &Dense) -> PackedDense {
        let inputs = d.weight.iter().map(Vec::len).min().unwrap_or(0);
        let mut columns = Vec::with_capacity(d.weight.len().div_ceil(ROW_BLOCK) * inputs);
        for rows in d.weight.chunks(ROW_BLOCK) {
            for j in 0..inputs {
                let mut column = [0.0f32; ROW_BLOCK];
                column.iter_mut().zip(rows).for_each(|(c, row)| *c = row[j]);
                columns.push(column);
            }
        }
        // As many outputs as rows with a bias, like zipping the two.
        let bias = d.bias.iter().copied().take(d.weight.len()).collect();
        PackedDense { inputs, columns, bias }
    }

    /// `weight · x + bias` into `out`. Each output's products are summed in input order, as a
    /// plain left fold over its row would (the same bits), but a block of outputs advances
    /// together: one output's sum alone is a chain of dependent adds that leaves the core idle,
    /// and this is the hot loop of every learned predictor (half of a `plan train`).
    fn forward_into(&self, x: &[f32], out: &mut Vec<f32>) {
        out.clear();
        // `chunks` needs a width; a trained layer always has inputs.
        for (block, bias) in self.columns.chunks(self.inputs.max(1)).zip(self.bias.chunks(ROW_BLOCK)) {
            let mut acc = [-0.0f32; ROW_BLOCK];
            for (column, &v) in block.iter().zip(x) {
                for (a, w) in acc.iter_mut().zip(column) {
                    *a += w * v;
                }
            }
            out.extend(acc.iter().zip(bias).map(|(a, b)| a + b));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_dense(rng: &mut Rng, outputs: usize, inputs: usize) -> Dense {
        let mut value = || (rng.uniform() as f32 - 0.5) * 2.0;
        Dense {
            weight: (0..outputs).map(|_| (0..inputs).map(|_| value()).collect()).collect(),
            bias: (0..outputs).map(|_| value()).collect(),
        }
    }

    /// The blocked product must give the very bits of a row-by-row fold (no reordered sums), for
    /// widths that do and do not fill the blocks.
    #[test]
    fn blocked_rows_give_the_bits_of_a_plain_fold() {
        let mut rng = Rng::new(7);
        for (outputs, inputs) in [(48, 4), (48, 48), (2, 48), (13, 5), (1, 1), (9, 17)] {
            let d = random_dense(&mut rng, outputs, inputs);
            let x: Vec<f32> = (0..inputs).map(|_| rng.uniform() as f32 * 4.0 - 2.0).collect();
            let plain: Vec<f32> = d
                .weight
                .iter()
                .zip(&d.bias)
                .map(|(row, b)| row.iter().zip(&x).fold(-0.0f32, |a, (w, v)| a + w * v) + b)
                .collect();
            let mut blocked = Vec::new();
            PackedDense::new(&d).forward_into(&x, &mut blocked);
            assert_eq!(blocked.len(), outputs);
            for (a, b) in blocked.iter().zip(&plain) {
                assert_eq!(a.to_bits(), b.to_bits(), "{outputs}×{inputs}");
            }
        }
        // A bias longer or shorter than the rows: as many outputs as a zip of the two gives.
        for biases in [8, 10] {
            let mut d = random_dense(&mut rng, 9, 3);
            d.bias.resize(biases, 0.5);
            let mut out = Vec::new();
            PackedDense::new(&d).forward_into(&[1.0, 2.0, 3.0], &mut out);
            assert_eq!(out.len(), biases.min(9));
        }
    }

    #[test]
    fn a_remembered_answer_is_the_computed_one_until_the_parameters_change() {
        let mut rng = Rng::new(11);
        let inputs = 3;
        let layers = vec![random_dense(&mut rng, 8, inputs), random_dense(&mut rng, 1, 8)];
        let ones = vec![1.0; inputs];
        let mut mlp = Mlp::new(MlpParameters { mean: vec![0.0; inputs], std: ones.clone(), lo: vec![-9.0; inputs], hi: vec![9.0; inputs], layers });
        let x = [0.5, -1.0, 2.0];
        let first = mlp.predict_remembered(&x);
        assert_eq!(first.to_bits(), mlp.predict(&x).to_bits());
        assert_eq!(mlp.predict_remembered(&x).to_bits(), first.to_bits());
        assert_eq!(mlp.predict_remembered(&[0.5, -1.0, 2.5]).to_bits(), mlp.predict(&[0.5, -1.0, 2.5]).to_bits());
        mlp.update(|p| p.layers[1].bias[0] += 1.0);
        let updated = mlp.predict_remembered(&x);
        assert_ne!(updated, first, "an update forgets what was remembered");
        assert_eq!(updated.to_bits(), mlp.predict(&x).to_bits());
        assert_eq!(mlp.clone().predict_remembered(&x).to_bits(), mlp.predict(&x).to_bits());
    }
}
