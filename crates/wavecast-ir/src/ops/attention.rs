//! Fused (flash-style) attention: QKᵀ, softmax and ·V in one kernel, so the score matrix never
//! reaches device memory. Covers grouped-query attention and a KV cache (kv_len ≥ q_len),
//! value heads narrower than query/key heads (MLA prefill: qk 192, v 128), one cached tensor
//! serving as both keys and values (MLA's absorbed decode over the latent cache) and
//! sliding-window attention.

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
    /// Width of the value (and output) heads when it differs from `head_dim`, the query/key
    /// width (DeepSeek MLA prefill: head_dim 192, v 128). `None`: equal to `head_dim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_head_dim: Option<u64>,
    /// Keys and values are one cached tensor of `head_dim` per token whose first `v_head_dim`
    /// elements are the values (MLA's weight-absorbed decode over the latent cache): it is read
    /// once, not twice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_kv: bool,
    /// Sliding-window attention: each query sees at most this many most recent keys (itself
    /// included). `None`: the whole context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
}

impl Attention {
    /// Query–key pairs that are actually computed. With a causal mask, query i of the last
    /// `q_len` positions sees `kv_len - q_len + i + 1` keys.
    /// With a window of W, each query sees min(its keys, W).
    pub fn attended_pairs(&self) -> f64 {
        let (q, kv) = (self.q_len as f64, self.kv_len as f64);
        match self.window.filter(|&w| w < self.kv_len) {
            None if self.causal => q * kv - q * (q - 1.0) / 2.0,
            None => q * kv,
            Some(w) if self.causal => {
                // Query i (0-based) of the last q sees n = kv - q + i + 1 keys: sum of min(n, W)
                // for n from a = kv - q + 1 to kv.
                let w = w as f64;
                let a = (kv - q + 1.0).max(1.0);
                if a >= w {
                    q * w
                } else {
                    (w * (w + 1.0) / 2.0 - (a - 1.0) * a / 2.0) + (kv - w) * w
                }
            }
            Some(w) => q * w as f64,
        }
    }

    /// Keys (and values) the kernel reads per KV head: the whole context, or under a window
    /// only the last q_len + W - 1 of it.
    pub fn kv_tokens_read(&self) -> f64 {
        match self.window {
            Some(w) => self.kv_len.min(self.q_len.saturating_add(w).saturating_sub(1)).max(1) as f64,
            None => self.kv_len as f64,
        }
    }

    fn dv(&self) -> f64 {
        self.v_head_dim.unwrap_or(self.head_dim) as f64
    }

    /// Whether the plain formulas (same widths, separate K and V, no window) apply; kept as
    /// they were so that their results stay bit-identical.
    fn plain(&self) -> bool {
        self.v_head_dim.is_none() && !self.shared_kv && self.window.is_none_or(|w| w >= self.kv_len)
    }

    /// Multiply-accumulates of the score and context matmuls (forward), as published MAC
    /// tables count attention.
    pub fn macs(&self) -> f64 {
        self.flops() / 2.0
    }

    pub fn flops(&self) -> f64 {
        // Two matmuls forward (scores and output); the backward recomputes scores and runs
        // four more, i.e. 2.5× the forward work.
        let fwd = if self.v_head_dim.is_none() {
            4.0 * self.batch as f64 * self.heads as f64 * self.head_dim as f64 * self.attended_pairs()
        } else {
            // QKᵀ over head_dim, then P·V over v_head_dim.
            2.0 * self.batch as f64 * self.heads as f64 * (self.head_dim as f64 + self.dv()) * self.attended_pairs()
        };
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
        if self.plain() {
            return e * b * (q_tensors * q_side + kv_tensors * kv_side);
        }
        let (h, kvh, q, kv) = (self.heads as f64, self.kv_heads as f64, self.q_len as f64, self.kv_tokens_read());
        let dv = self.dv();
        // Q and O (and their gradients); K and V (and theirs), V absent when it is part of K.
        let q_o = h * q * (d + dv);
        let k_v = kvh * kv * if self.shared_kv { d } else { d + dv };
        let passes = if self.backward { 2.0 } else { 1.0 };
        e * b * passes * (q_o + k_v)
    }

    pub fn backward(&self) -> Vec<Op> {
        vec![Op::Attention(Attention { backward: true, ..self.clone() })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attn(q: u64, kv: u64, causal: bool) -> Attention {
        Attention { batch: 2, heads: 8, kv_heads: 2, q_len: q, kv_len: kv, head_dim: 64, causal, dtype: DType::Bf16, backward: false, v_head_dim: None, shared_kv: false, window: None }
    }

    #[test]
    fn mla_decode_reads_the_latent_cache_once() {
        // 16 heads share one 576-wide latent (512 of it the values) over 1000 tokens.
        let a = Attention { batch: 2, heads: 16, kv_heads: 1, q_len: 1, kv_len: 1000, head_dim: 576, v_head_dim: Some(512), shared_kv: true, window: None, causal: true, dtype: DType::Bf16, backward: false };
        assert_eq!(a.bytes(), 2.0 * 2.0 * (16.0 * (576.0 + 512.0) + 1000.0 * 576.0));
        assert_eq!(a.flops(), 2.0 * 2.0 * 16.0 * (576.0 + 512.0) * 1000.0);
        let split = Attention { shared_kv: false, ..a.clone() };
        assert_eq!(split.bytes() - a.bytes(), 2.0 * 2.0 * 1000.0 * 512.0);
        // Round trip; the new fields stay out of JSON when unset.
        let back: Attention = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(back, a);
        let plain = serde_json::to_string(&attn(1, 8, true)).unwrap();
        assert!(!plain.contains("shared_kv") && !plain.contains("v_head_dim") && !plain.contains("window"), "{plain}");
    }

    #[test]
    fn sliding_window_caps_pairs_and_bytes() {
        let w = |q, kv| Attention { window: Some(128), ..attn(q, kv, true) };
        // Decode with 10,000 cached tokens sees 128.
        assert_eq!(w(1, 10_000).attended_pairs(), 128.0);
        assert_eq!(w(1, 10_000).kv_tokens_read(), 128.0);
        // Prefill of 1000 from scratch: 1 + 2 + ... + 128, then 128 each for the other 872.
        assert_eq!(w(1000, 1000).attended_pairs(), 128.0 * 129.0 / 2.0 + 872.0 * 128.0);
        let brute: f64 = (0..1000u64).map(|i| (i + 1).min(128) as f64).sum();
        assert_eq!(w(1000, 1000).attended_pairs(), brute);
        // A chunk of 100 after 50 cached: n = 51..=150.
        let brute: f64 = (51..=150u64).map(|n| n.min(128) as f64).sum();
        assert_eq!(w(100, 150).attended_pairs(), brute);
        // A window wider than the context changes nothing.
        assert_eq!(w(4, 4).attended_pairs(), attn(4, 4, true).attended_pairs());
        assert_eq!(Attention { window: Some(4096), ..attn(1, 1000, true) }.bytes(), attn(1, 1000, true).bytes());
    }

    #[test]
    fn narrower_values_count_both_widths() {
        let a = Attention { v_head_dim: Some(128), head_dim: 192, ..attn(16, 16, false) };
        assert_eq!(a.flops(), 2.0 * 2.0 * 8.0 * (192.0 + 128.0) * 256.0);
        assert_eq!(a.bytes(), 2.0 * 2.0 * (8.0 * 16.0 * 320.0 + 2.0 * 16.0 * 320.0));
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
