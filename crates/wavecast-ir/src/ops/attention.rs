//! Fused (flash-style) attention: QKᵀ, softmax and ·V in one kernel, so the score matrix never
//! reaches device memory. Covers grouped-query attention and a KV cache (kv_len ≥ q_len).

use crate::ops::Op;
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attention {
    pub batch: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub q_len: u64,
    pub kv_len: u64,
    pub head_dim: u64,
    pub causal: bool,
    pub dtype: DType,
    #[serde(default)]
    pub backward: bool,
}

impl Attention {
    /// Query–key pairs that are actually computed. With a causal mask, query i of the last
    /// `q_len` positions sees `kv_len - q_len + i + 1` keys.
    pub fn attended_pairs(&self) -> f64 {
        let (q, kv) = (self.q_len as f64, self.kv_len as f64);
        if self.causal {
            q * kv - q * (q - 1.0) / 2.0
        } else {
            q * kv
        }
    }

    /// Multiply-accumulates of the score and context matmuls (forward), as published MAC
    /// tables count attention.
    pub fn macs(&self) -> f64 {
        self.flops() / 2.0
    }

    pub fn flops(&self) -> f64 {
        // Two matmuls forward (scores and output); the backward recomputes scores and runs
        // four more, i.e. 2.5× the forward work.
        let fwd = 4.0 * self.batch as f64 * self.heads as f64 * self.head_dim as f64 * self.attended_pairs();
        if self.backward {
            2.5 * fwd
        } else {
            fwd
        }
    }

    pub fn bytes(&self) -> f64 {
        let e = self.dtype.size_bytes() as f64;
        let b = self.batch as f64;
        let d = self.head_dim as f64;
        let q_side = self.heads as f64 * self.q_len as f64 * d;
        let kv_side = self.kv_heads as f64 * self.kv_len as f64 * d;
        // Forward: read Q, K, V, write O. Backward: read Q, O, dO, write dQ; read K, V, write dK, dV.
        let (q_tensors, kv_tensors) = if self.backward { (4.0, 4.0) } else { (2.0, 2.0) };
        e * b * (q_tensors * q_side + kv_tensors * kv_side)
    }

    pub fn backward(&self) -> Vec<Op> {
        vec![Op::Attention(Attention { backward: true, ..self.clone() })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attn(q: u64, kv: u64, causal: bool) -> Attention {
        Attention { batch: 2, heads: 8, kv_heads: 2, q_len: q, kv_len: kv, head_dim: 64, causal, dtype: DType::Bf16, backward: false }
    }

    #[test]
    fn full_attention_flops() {
        let a = attn(128, 128, false);
        assert_eq!(a.flops(), 4.0 * 2.0 * 8.0 * 64.0 * 128.0 * 128.0);
    }

    #[test]
    fn causal_prefill_is_about_half_and_decode_sees_whole_cache() {
        let a = attn(4, 4, true);
        assert_eq!(a.attended_pairs(), 10.0); // 1 + 2 + 3 + 4
        let d = attn(1, 1000, true);
        assert_eq!(d.attended_pairs(), 1000.0);
    }

    #[test]
    fn gqa_bytes_read_the_smaller_kv_cache() {
        let d = attn(1, 1000, true);
        let e = 2.0;
        let expect = e * 2.0 * (2.0 * 8.0 * 64.0 + 2.0 * 2.0 * 1000.0 * 64.0);
        assert_eq!(d.bytes(), expect);
    }
}
