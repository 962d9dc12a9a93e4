//! Recurrent layers (LSTM, GRU, plain tanh/ReLU RNN): stacked, optionally bidirectional, over a
//! sequence, as cuDNN runs them.
//!
//! One [`Rnn`] op stands for a whole stack, but it is priced through the kernels it launches
//! ([`Rnn::kernels`]): per layer and direction, one GEMM projects the inputs of every time step
//! at once; then, one time step after the other, a GEMM applies the recurrent weight to the
//! previous hidden state (M = batch: skinny, latency-bound) and one fused element-wise kernel
//! computes the gates. The backward pass mirrors it: per time step a gate-gradient kernel and a
//! recurrent data-gradient GEMM, then whole-sequence GEMMs for the input gradient and both
//! weight gradients. FLOPs and bytes are the sums over that kernel list, so there is one
//! source of truth. The two directions of a bidirectional layer are counted one after the other.

use crate::dims::{checked_mul, dim, DimError};
use crate::ops::{Elementwise, EwKind, Gemm, GemmKind, Op, Reduction};
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RnnCell {
    Lstm,
    Gru,
    /// Elman RNN with tanh.
    Tanh,
    /// Elman RNN with ReLU.
    Relu,
}

impl RnnCell {
    /// Gate blocks per hidden unit: the width of the gate GEMMs is gates × hidden.
    pub fn gates(self) -> u64 {
        match self {
            RnnCell::Lstm => 4,
            RnnCell::Gru => 3,
            RnnCell::Tanh | RnnCell::Relu => 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rnn {
    pub cell: RnnCell,
    pub batch: u64,
    /// Time steps.
    pub seq: u64,
    /// Features of the first layer's input; later layers read hidden × directions.
    pub input_size: u64,
    pub hidden: u64,
    pub layers: u64,
    pub bidirectional: bool,
    /// Input and recurrent bias vectors (PyTorch's b_ih and b_hh, ONNX's Wb and Rb).
    pub bias: bool,
    pub dtype: DType,
    #[serde(default)]
    pub backward: bool,
}

impl Rnn {
    #[allow(clippy::too_many_arguments)]
    pub fn new(cell: RnnCell, batch: u64, seq: u64, input_size: u64, hidden: u64, layers: u64, bidirectional: bool, dtype: DType) -> Result<Rnn, DimError> {
        dim("rnn batch", batch)?;
        dim("rnn sequence length", seq)?;
        dim("rnn input size", input_size)?;
        dim("rnn hidden size", hidden)?;
        dim("rnn layers", layers)?;
        let width = checked_mul("rnn gate width", &[cell.gates(), hidden])?;
        let input = input_size.max(hidden * 2);
        checked_mul("rnn flops", &[2, 2, batch, seq, width, input + hidden, layers])?;
        Ok(Rnn { cell, batch, seq, input_size, hidden, layers, bidirectional, bias: true, dtype, backward: false })
    }

    pub fn directions(&self) -> u64 {
        if self.bidirectional {
            2
        } else {
            1
        }
    }

    /// Input features of layer `l`.
    pub fn layer_input(&self, l: u64) -> u64 {
        if l == 0 {
            self.input_size
        } else {
            self.hidden * self.directions()
        }
    }

    /// Output features per time step (hidden × directions).
    pub fn output_size(&self) -> u64 {
        self.hidden * self.directions()
    }

    fn gemm(&self, m: u64, k: u64, n: u64, bias: bool) -> Op {
        Op::Gemm(Gemm {
            kind: GemmKind::Linear,
            batch: 1,
            m,
            n,
            k,
            bias,
            dtype: self.dtype,
            // The weights belong to the RNN op; its kernels only use them.
            shared_weight: true,
            weight_dtype: None,
            quant: None,
        })
    }

    /// The kernels this op launches, each with how many times it runs.
    pub fn kernels(&self) -> Vec<(Op, u64)> {
        let (b, t, h, dirs) = (self.batch, self.seq, self.hidden, self.directions());
        let width = self.cell.gates() * h;
        let gate_math = |kind: EwKind, inputs: u32| Op::Elementwise(Elementwise::new(kind, b * width, inputs, self.dtype));
        let mut out = Vec::new();
        for l in 0..self.layers {
            let input = self.layer_input(l);
            if !self.backward {
                out.push((self.gemm(t * b, input, width, self.bias), dirs));
                out.push((self.gemm(b, h, width, false), dirs * t));
                // Pre-activations from both GEMMs in, activated gates and new state out.
                out.push((gate_math(EwKind::Tanh, 2), dirs * t));
            } else {
                out.push((gate_math(EwKind::Grad, 3), dirs * t));
                out.push((self.gemm(b, width, h, false), dirs * t));
                out.push((self.gemm(t * b, width, input, false), dirs));
                out.push((self.gemm(input, t * b, width, false), dirs));
                out.push((self.gemm(h, t * b, width, false), dirs));
                if self.bias {
                    let red = Reduction { elements_in: t * b * width, elements_out: width, dtype: self.dtype.vector_storage() };
                    out.push((Op::Reduction(red), dirs));
                }
            }
        }
        out
    }

    /// Multiply-accumulates of the gate GEMMs (forward: input and recurrent projections).
    pub fn macs(&self) -> f64 {
        self.kernels()
            .iter()
            .map(|(op, n)| match op {
                Op::Gemm(g) => g.macs() * *n as f64,
                _ => 0.0,
            })
            .sum()
    }

    pub fn flops(&self) -> f64 {
        self.kernels().iter().map(|(op, n)| op.flops() * *n as f64).sum()
    }

    pub fn bytes(&self) -> f64 {
        self.kernels().iter().map(|(op, n)| op.bytes() * *n as f64).sum()
    }

    /// Per layer and direction: input weights gates·H × in, recurrent weights gates·H × H, and
    /// two bias vectors of gates·H.
    pub fn params(&self) -> u64 {
        if self.backward {
            return 0;
        }
        // Saturating: Graph::check_scale rejects the saturated count with a clear error.
        let width = self.cell.gates().saturating_mul(self.hidden);
        (0..self.layers)
            .map(|l| {
                let bias = if self.bias { width.saturating_mul(2) } else { 0 };
                self.directions().saturating_mul(width.saturating_mul(self.layer_input(l).saturating_add(self.hidden)).saturating_add(bias))
            })
            .fold(0u64, u64::saturating_add)
    }

    pub fn backward(&self) -> Vec<Op> {
        vec![Op::Rnn(Rnn { backward: true, ..self.clone() })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lstm_params_match_pytorch() {
        // nn.LSTM(1024, 1024): 4·1024·(1024+1024) + 2·4·1024 = 8_396_800.
        let l = Rnn::new(RnnCell::Lstm, 1, 1, 1024, 1024, 1, false, DType::Fp32).unwrap();
        assert_eq!(l.params(), 8_396_800);
        // Bidirectional, two layers: the second layer reads 2·hidden.
        let b = Rnn::new(RnnCell::Lstm, 1, 1, 10, 20, 2, true, DType::Fp32).unwrap();
        assert_eq!(b.params(), 2 * (80 * (10 + 20) + 160) + 2 * (80 * (40 + 20) + 160));
        let g = Rnn::new(RnnCell::Gru, 1, 1, 10, 20, 1, false, DType::Fp32).unwrap();
        assert_eq!(g.params(), 60 * 30 + 120);
    }

    #[test]
    fn forward_kernels_are_sequential_over_time() {
        let l = Rnn::new(RnnCell::Lstm, 64, 50, 512, 256, 1, false, DType::Fp32).unwrap();
        let k = l.kernels();
        assert_eq!(k.len(), 3);
        assert_eq!(k[1].1, 50, "one recurrent GEMM per time step");
        let Op::Gemm(rec) = &k[1].0 else { panic!() };
        assert_eq!((rec.m, rec.k, rec.n), (64, 256, 1024));
        // MACs: input projection T·B·in·4H plus recurrent T·B·H·4H.
        assert_eq!(l.macs(), 50.0 * 64.0 * 1024.0 * (512.0 + 256.0));
        let gemm_flops = 2.0 * l.macs() + 50.0 * 64.0 * 1024.0; // + bias of the input projection
        let gate_flops = 50.0 * 64.0 * 1024.0 * 4.0;
        assert_eq!(l.flops(), gemm_flops + gate_flops);
        assert_eq!(l.params(), 4 * 256 * (512 + 256) + 2 * 1024);
    }

    #[test]
    fn backward_has_twice_the_gemm_work() {
        let l = Rnn::new(RnnCell::Gru, 8, 10, 32, 32, 2, true, DType::Fp32).unwrap();
        let bw = match &l.backward()[0] {
            Op::Rnn(r) => r.clone(),
            _ => panic!(),
        };
        let gemm = |r: &Rnn| r.kernels().iter().map(|(o, n)| if let Op::Gemm(g) = o { g.macs() * *n as f64 } else { 0.0 }).sum::<f64>();
        assert_eq!(gemm(&bw), 2.0 * gemm(&l));
        assert_eq!(bw.params(), 0);
    }

    #[test]
    fn zero_dims_are_errors() {
        assert!(Rnn::new(RnnCell::Lstm, 1, 0, 8, 8, 1, false, DType::Fp32).is_err());
        assert!(Rnn::new(RnnCell::Lstm, 1 << 40, 1 << 40, 8, 8, 1, false, DType::Fp32).is_err());
    }
}
