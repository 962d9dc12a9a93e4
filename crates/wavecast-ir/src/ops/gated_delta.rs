//! The gated delta rule (Gated DeltaNet, the linear-attention layers of Qwen3-Next and
//! Qwen3.5): every value head keeps a `head_k_dim × head_v_dim` state matrix S per sequence
//! instead of a KV cache. Each token decays S by its gate, corrects it towards its value along
//! its key (the delta rule: S += β k ⊗ (v − Sᵀk)) and reads its output as Sᵀq.
//!
//! Two forms, as the engines run them:
//! - **Recurrent** (decode, one new token per sequence): the state is read and written once per
//!   token; per head and token the decay, the Sᵀk product, the rank-one update and the Sᵀq
//!   product each touch every state element (≈ 7 FLOPs per element).
//! - **Chunked** (prefill): the prompt is cut into chunks of [`CHUNK`] tokens; inside a chunk
//!   the tokens interact through C×C matrices (keys against keys and queries, the triangular
//!   solve of the WY form, the intra-chunk attention times the values), across chunks through
//!   the state (queries, the WY keys and the update against S): per token 6 · dk · dv FLOPs for
//!   the state products plus 2 · C · (3 · dk + 2 · dv) for the chunk products. The state at
//!   each chunk's start is materialised in the activations' type (the FLA kernels allocate it
//!   like the keys): written by the state pass, read back by the output pass. The final state
//!   is kept in the state's own type for the tokens that follow.
//!
//! Query and key heads may be fewer than value heads (grouped, like GQA); every value head has
//! its own state.

use crate::ops::Op;
use crate::DType;
use serde::{Deserialize, Serialize};

/// Tokens per chunk of the chunked form (the FLA kernels' block).
pub const CHUNK: u64 = 64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatedDelta {
    /// Sequences.
    pub batch: u64,
    /// New tokens per sequence in this pass (1 with a state: the recurrent form).
    pub seq: u64,
    /// Whether the sequences bring a state from earlier tokens (decode, later prompt chunks):
    /// it is read before and written after.
    pub with_state: bool,
    /// Query/key heads and value heads on this GPU.
    pub k_heads: u64,
    pub v_heads: u64,
    pub head_k_dim: u64,
    pub head_v_dim: u64,
    /// Activations (q, k, v, gates, output).
    pub dtype: DType,
    /// The recurrent state's element type (engines keep it in FP32).
    pub state_dtype: DType,
}

impl GatedDelta {
    /// One token per sequence on top of a state: the recurrent form.
    pub fn recurrent(&self) -> bool {
        self.seq == 1 && self.with_state
    }

    fn tokens(&self) -> f64 {
        self.batch as f64 * self.seq as f64
    }

    /// State elements of one sequence on this GPU.
    pub fn state_elements(&self) -> f64 {
        self.v_heads as f64 * self.head_k_dim as f64 * self.head_v_dim as f64
    }

    /// Chunks per sequence in the chunked form.
    fn chunks(&self) -> f64 {
        self.seq.div_ceil(CHUNK) as f64
    }

    /// Steps that must run one after another: in the chunked form each chunk's pass of the
    /// state waits for the previous chunk's (sequences and heads run side by side); the
    /// recurrent form is one step.
    pub fn sequential_steps(&self) -> f64 {
        if self.recurrent() {
            1.0
        } else {
            self.chunks()
        }
    }

    pub fn flops(&self) -> f64 {
        let (dk, dv) = (self.head_k_dim as f64, self.head_v_dim as f64);
        let per_head_token = if self.recurrent() {
            7.0 * dk * dv
        } else {
            let c = CHUNK.min(self.seq) as f64;
            6.0 * dk * dv + 2.0 * c * (3.0 * dk + 2.0 * dv)
        };
        self.tokens() * self.v_heads as f64 * per_head_token
    }

    /// Bytes: q and k per key head, v, the output, the decay gate and β per value head, per
    /// token; the state read and written once per token (recurrent), or (chunked) each chunk's
    /// starting state written and read back in the activations' type, the final state written
    /// and any state brought in read.
    pub fn bytes(&self) -> f64 {
        let e = self.dtype.size_bytes() as f64;
        let s = self.state_elements() * self.state_dtype.size_bytes() as f64;
        let per_token = e * (2.0 * (self.k_heads * self.head_k_dim) as f64 + 2.0 * (self.v_heads * self.head_v_dim) as f64 + 2.0 * self.v_heads as f64);
        let state = if self.recurrent() {
            2.0 * s * self.batch as f64
        } else {
            let chunk_states = 2.0 * self.state_elements() * e * self.chunks();
            let read_in = if self.with_state { s } else { 0.0 };
            self.batch as f64 * (chunk_states + s + read_in)
        };
        self.tokens() * per_token + state
    }

    /// Kernels one layer's gated delta rule launches: the recurrent form is one fused kernel;
    /// the chunked form (as the FLA kernels the engines call run it) six — the gates' cumulative
    /// sum, the chunk's key products, the triangular solve, the WY recomputation of keys and
    /// values, the chunk-to-chunk state pass and the output.
    pub fn kernels(&self) -> u64 {
        if self.recurrent() {
            1
        } else {
            6
        }
    }

    /// Serving engines run the forward only; training would differentiate through the chunked
    /// form (about twice the forward's work), taken as two forward passes.
    pub fn backward(&self) -> Vec<Op> {
        vec![Op::GatedDelta(self.clone()), Op::GatedDelta(self.clone())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qwen35(batch: u64, seq: u64, with_state: bool) -> GatedDelta {
        GatedDelta { batch, seq, with_state, k_heads: 16, v_heads: 64, head_k_dim: 128, head_v_dim: 128, dtype: DType::Bf16, state_dtype: DType::Fp32 }
    }

    /// Decode reads and writes each sequence's whole state once: 64 heads × 128 × 128 FP32 = 4 MiB,
    /// twice, plus a few kB of vectors.
    #[test]
    fn decode_moves_the_state_twice_per_token() {
        let one = qwen35(1, 1, true);
        assert!(one.recurrent());
        let state = 64.0 * 128.0 * 128.0 * 4.0;
        let vectors = 2.0 * (2.0 * 16.0 * 128.0 + 2.0 * 64.0 * 128.0 + 2.0 * 64.0);
        assert_eq!(one.bytes(), 2.0 * state + vectors);
        assert_eq!(qwen35(8, 1, true).bytes(), 8.0 * one.bytes());
        assert_eq!(one.flops(), 7.0 * 64.0 * 128.0 * 128.0);
        assert_eq!((one.kernels(), qwen35(1, 2, true).kernels()), (1, 6));
    }

    /// A prompt of 4096 tokens materialises the state 64 times (in 16 bits), not 4096 times:
    /// far fewer bytes per token than decoding them one by one, more FLOPs per token (the chunk
    /// products).
    #[test]
    fn prefill_is_chunked() {
        let prompt = qwen35(1, 4096, false);
        assert!(!prompt.recurrent());
        let token_by_token = 4096.0 * qwen35(1, 1, true).bytes();
        assert!(prompt.bytes() < token_by_token / 20.0, "{} vs {token_by_token}", prompt.bytes());
        let (vectors, state) = (4096.0 * 2.0 * (2.0 * 16.0 * 128.0 + 2.0 * 64.0 * 128.0 + 2.0 * 64.0), 64.0 * 128.0 * 128.0);
        assert_eq!(prompt.bytes(), vectors + 2.0 * state * 2.0 * 64.0 + state * 4.0);
        assert!(prompt.flops() > 4096.0 * qwen35(1, 1, true).flops());
        // A later chunk of the same prompt also reads the state it continues.
        let next = qwen35(1, 4096, true);
        assert_eq!(next.bytes() - prompt.bytes(), 64.0 * 128.0 * 128.0 * 4.0);
    }
}
