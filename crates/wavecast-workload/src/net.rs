//! A small shape-tracking graph builder for the built-in vision and sequence models
//! (`vision.rs`, `gnmt.rs`, `transformer_base.rs`): each call emits the operator PyTorch launches for one
//! layer and returns the shape of its output, so model definitions read like their PyTorch
//! modules. Forward nodes only; training adds the backward pass and the optimizer step.

use crate::transformer::AttentionImpl;
use crate::WorkloadError;
use wavecast_ir::ops::{
    Attention, ChannelNorm, Concat, Conv, Elementwise, Embedding, EwKind, Gemm, MemCopy, Norm, NormKind, OptimizerKind, Pool,
    PoolKind, Softmax,
};
use wavecast_ir::{DType, Graph, Op, Phase};

/// Largest padding accepted from a file (far above any real model).
pub const MAX_PAD: u64 = 1 << 20;

/// An image activation (channels × height × width); the batch is the builder's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Img {
    pub c: u64,
    pub h: u64,
    pub w: u64,
}

impl Img {
    pub fn new(c: u64, h: u64, w: u64) -> Img {
        Img { c, h, w }
    }
    pub fn pixels(&self) -> u64 {
        self.h * self.w
    }
}

/// Geometry of one convolution beyond channels and kernel.
#[derive(Debug, Clone, Copy)]
pub struct ConvCfg {
    pub kernel: [u64; 2],
    pub stride: u64,
    /// Symmetric padding per dimension (height, width).
    pub pad: [u64; 2],
    pub groups: u64,
    pub bias: bool,
}

impl ConvCfg {
    /// A square kernel with "same" padding ((k−1)/2), no bias, no groups.
    pub fn k(kernel: u64) -> ConvCfg {
        ConvCfg { kernel: [kernel, kernel], stride: 1, pad: [(kernel - 1) / 2; 2], groups: 1, bias: false }
    }
    /// A rectangular kernel (Inception's 1×7 and 7×1) with "same" padding.
    pub fn rect(kh: u64, kw: u64) -> ConvCfg {
        ConvCfg { kernel: [kh, kw], stride: 1, pad: [(kh - 1) / 2, (kw - 1) / 2], groups: 1, bias: false }
    }
    pub fn s(mut self, stride: u64) -> ConvCfg {
        self.stride = stride;
        self
    }
    pub fn p(mut self, pad: u64) -> ConvCfg {
        self.pad = [pad, pad];
        self
    }
    pub fn g(mut self, groups: u64) -> ConvCfg {
        self.groups = groups;
        self
    }
    pub fn bias(mut self) -> ConvCfg {
        self.bias = true;
        self
    }
}

pub struct Net {
    pub graph: Graph,
    pub batch: u64,
    pub dtype: DType,
    pub train: bool,
    /// The next convolution is the network's first: its input (the data) needs no gradient.
    first_conv: bool,
    /// Lookups into a table another lookup owns: (name, rows, width).
    shared_tables: Vec<(String, u64, u64)>,
}

impl Net {
    pub fn new(name: &str, batch: u64, dtype: DType, train: bool) -> Result<Net, WorkloadError> {
        wavecast_ir::dim("batch", batch)?;
        Ok(Net { graph: Graph::new(name), batch, dtype, train, first_conv: true, shared_tables: Vec::new() })
    }

    pub fn op(&mut self, name: &str, op: Op) {
        self.graph.push(name, op, Phase::Forward, 1);
    }

    pub fn elements(&self, x: Img) -> u64 {
        self.batch * x.c * x.pixels()
    }

    fn build_conv(&mut self, conv: Conv) -> Result<Conv, WorkloadError> {
        let conv = if std::mem::replace(&mut self.first_conv, false) { conv.no_input_grad() } else { conv };
        Ok(conv.build()?)
    }

    pub fn conv(&mut self, name: &str, x: Img, c_out: u64, cfg: ConvCfg) -> Result<Img, WorkloadError> {
        let mut c = Conv::new(self.batch, x.c, c_out, [x.h, x.w], cfg.kernel, self.dtype).stride(cfg.stride).groups(cfg.groups).bias(cfg.bias);
        c.pads = [cfg.pad[0], cfg.pad[1], cfg.pad[0], cfg.pad[1]];
        let c = self.build_conv(c)?;
        let [h, w] = c.out_hw();
        self.op(name, Op::Conv(c));
        Ok(Img::new(c_out, h, w))
    }

    /// Transposed convolution (square kernel, symmetric padding).
    #[allow(clippy::too_many_arguments)]
    pub fn tconv(&mut self, name: &str, x: Img, c_out: u64, kernel: u64, stride: u64, pad: u64, bias: bool) -> Result<Img, WorkloadError> {
        let c = Conv::new(self.batch, x.c, c_out, [x.h, x.w], [kernel, kernel], self.dtype).stride(stride).pad(pad).bias(bias).transposed(0);
        let c = self.build_conv(c)?;
        let [h, w] = c.out_hw();
        self.op(name, Op::Conv(c));
        Ok(Img::new(c_out, h, w))
    }

    pub fn bn(&mut self, name: &str, x: Img) -> Result<Img, WorkloadError> {
        let n = ChannelNorm::batch_norm(self.batch, x.c, x.pixels(), self.train, self.dtype)?;
        self.op(name, Op::ChannelNorm(n));
        Ok(x)
    }

    pub fn ew(&mut self, name: &str, kind: EwKind, elements: u64, inputs: u32) {
        self.op(name, Op::Elementwise(Elementwise::new(kind, elements, inputs, self.dtype)));
    }

    pub fn act(&mut self, name: &str, kind: EwKind, x: Img) -> Img {
        let n = self.elements(x);
        self.ew(name, kind, n, 1);
        x
    }

    /// Residual sum of two equal-shaped activations.
    pub fn add(&mut self, name: &str, x: Img) -> Img {
        let n = self.elements(x);
        self.ew(name, EwKind::Add, n, 2);
        x
    }

    /// Dropout (training only; evaluation mode skips it).
    pub fn dropout(&mut self, name: &str, elements: u64) {
        if self.train {
            self.ew(name, EwKind::Dropout, elements, 1);
        }
    }

    /// conv → batch norm → activation (the basic block of most CNNs).
    pub fn conv_bn_act(&mut self, name: &str, x: Img, c_out: u64, cfg: ConvCfg, act: Option<EwKind>) -> Result<Img, WorkloadError> {
        let y = self.conv(&format!("{name}.conv"), x, c_out, cfg)?;
        let y = self.bn(&format!("{name}.bn"), y)?;
        Ok(match act {
            Some(kind) => self.act(&format!("{name}.act"), kind, y),
            None => y,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn pool(&mut self, name: &str, kind: PoolKind, x: Img, k: u64, s: u64, p: u64, ceil: bool) -> Result<Img, WorkloadError> {
        let pool = Pool::window(kind, self.batch, x.c, [x.h, x.w], [k, k], [s, s], [p; 4], ceil, self.dtype)?;
        let out = Img::new(x.c, pool.out_hw[0], pool.out_hw[1]);
        self.op(name, Op::Pool(pool));
        Ok(out)
    }

    pub fn maxpool(&mut self, name: &str, x: Img, k: u64, s: u64, p: u64) -> Result<Img, WorkloadError> {
        self.pool(name, PoolKind::Max, x, k, s, p, false)
    }

    pub fn avgpool(&mut self, name: &str, x: Img, k: u64, s: u64, p: u64) -> Result<Img, WorkloadError> {
        self.pool(name, PoolKind::Avg, x, k, s, p, false)
    }

    pub fn adaptive_avgpool(&mut self, name: &str, x: Img, out: [u64; 2]) -> Result<Img, WorkloadError> {
        let pool = Pool::adaptive(PoolKind::Avg, self.batch, x.c, [x.h, x.w], out, self.dtype)?;
        self.op(name, Op::Pool(pool));
        Ok(Img::new(x.c, out[0], out[1]))
    }

    /// Channel concatenation of same-sized activations.
    pub fn concat(&mut self, name: &str, parts: &[Img]) -> Img {
        let c = parts.iter().map(|p| p.c).sum();
        let out = Img::new(c, parts[0].h, parts[0].w);
        let n = self.elements(out);
        self.op(name, Op::Concat(Concat::new(n, parts.len() as u32, self.dtype)));
        out
    }

    /// A linear layer over `rows` rows.
    pub fn linear(&mut self, name: &str, rows: u64, k: u64, n: u64, bias: bool) -> Result<(), WorkloadError> {
        self.op(name, Op::Gemm(Gemm::linear(rows, k, n, bias, self.dtype)?));
        Ok(())
    }

    pub fn layer_norm(&mut self, name: &str, rows: u64, cols: u64) {
        self.op(name, Op::Norm(Norm::new(NormKind::LayerNorm, rows, cols, self.dtype)));
    }

    /// A lookup of `tokens` rows from a (vocab × hidden) table.
    pub fn embedding(&mut self, name: &str, tokens: u64, hidden: u64, vocab: u64) {
        self.op(name, Op::Embedding(Embedding { tokens, hidden, vocab, dtype: self.dtype }));
    }

    /// A lookup into the (vocab × hidden) table of an earlier lookup (shared embeddings): its
    /// parameters are counted once. In training its dense gradient table is zeroed, filled, and
    /// added into the owner's gradient (added by [`Net::finish_with`]).
    pub fn shared_embedding(&mut self, name: &str, tokens: u64, hidden: u64, vocab: u64) {
        // A zero-row table owns no parameters; the gather itself moves the same bytes.
        self.op(name, Op::Embedding(Embedding { tokens, hidden, vocab: 0, dtype: self.dtype }));
        self.shared_tables.push((name.to_string(), vocab, hidden));
    }

    pub fn copy(&mut self, name: &str, elements: u64) {
        self.op(name, Op::MemCopy(MemCopy::copy(elements, self.dtype)));
    }

    /// Whether attention runs as one fused kernel: as the transformer builder decides, eager
    /// kernels in FP32/TF32, fused (scaled-dot-product) kernels in half precision.
    pub fn fused_attention(&self, imp: AttentionImpl) -> bool {
        match imp {
            AttentionImpl::Fused => true,
            AttentionImpl::Eager | AttentionImpl::EagerFusedSoftmax => false,
            AttentionImpl::Auto => !matches!(self.dtype, DType::Fp32 | DType::Tf32),
        }
    }

    /// Multi-head attention of `batch` sequences: `q_len` queries against `kv_len` keys of
    /// width `d` (= heads · head_dim), with input projections (`packed`: one QKV GEMM, as
    /// `nn.MultiheadAttention` does for self-attention), the attention itself and the output
    /// projection.
    #[allow(clippy::too_many_arguments)]
    pub fn attention(
        &mut self,
        name: &str,
        q_len: u64,
        kv_len: u64,
        d: u64,
        heads: u64,
        causal: bool,
        packed: bool,
        imp: AttentionImpl,
    ) -> Result<(), WorkloadError> {
        let b = self.batch;
        let (q_rows, kv_rows) = (b * q_len, b * kv_len);
        if packed {
            self.linear(&format!("{name}.in_proj"), q_rows, d, 3 * d, true)?;
        } else {
            self.linear(&format!("{name}.q_proj"), q_rows, d, d, true)?;
            self.linear(&format!("{name}.k_proj"), kv_rows, d, d, true)?;
            self.linear(&format!("{name}.v_proj"), kv_rows, d, d, true)?;
        }
        let head_dim = d / heads;
        if self.fused_attention(imp) {
            let a = Attention { batch: b, heads, kv_heads: heads, q_len, kv_len, head_dim, causal, dtype: self.dtype, backward: false, v_head_dim: None, shared_kv: false, window: None };
            self.op(&format!("{name}.attention"), Op::Attention(a));
        } else {
            let bh = b * heads;
            let scores = bh * q_len * kv_len;
            self.ew(&format!("{name}.q_scale"), EwKind::Mul, q_rows * d, 1);
            self.op(&format!("{name}.scores"), Op::Gemm(Gemm::bmm(bh, q_len, head_dim, kv_len, self.dtype)?));
            if causal {
                self.ew(&format!("{name}.mask"), EwKind::Add, scores, 2);
            }
            self.op(&format!("{name}.softmax"), Op::Softmax(Softmax::new(bh * q_len, kv_len, self.dtype)));
            self.dropout(&format!("{name}.probs_dropout"), scores);
            self.op(&format!("{name}.context"), Op::Gemm(Gemm::bmm(bh, q_len, kv_len, head_dim, self.dtype)?));
            self.copy(&format!("{name}.context_contiguous"), q_rows * d);
        }
        self.linear(&format!("{name}.out_proj"), q_rows, d, d, true)
    }

    /// Position-wise feed-forward block: d → ffn → d with the activation between.
    pub fn ffn(&mut self, name: &str, rows: u64, d: u64, ffn: u64, act: EwKind) -> Result<(), WorkloadError> {
        self.linear(&format!("{name}.fc1"), rows, d, ffn, true)?;
        self.ew(&format!("{name}.act"), act, rows * ffn, 1);
        self.dropout(&format!("{name}.dropout"), rows * ffn);
        self.linear(&format!("{name}.fc2"), rows, ffn, d, true)
    }

    /// The forward graph.
    pub fn finish(self) -> Graph {
        self.graph
    }

    /// The forward graph, plus the backward pass and one step of `optimizer` when training.
    pub fn finish_with(self, optimizer: OptimizerKind) -> Graph {
        let mut g = self.graph;
        if self.train {
            g.add_backward();
            for (name, vocab, hidden) in &self.shared_tables {
                let table = vocab * hidden;
                g.push(format!("{name}.grad_table"), Op::MemCopy(MemCopy::touch(table, self.dtype)), Phase::Backward, 1);
                g.push(format!("{name}.grad_accumulate"), Op::Elementwise(Elementwise::new(EwKind::Add, table, 2, self.dtype)), Phase::Backward, 1);
            }
            g.add_optimizer(optimizer);
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_layers() {
        let mut n = Net::new("t", 2, DType::Fp32, true).unwrap();
        let x = Img::new(3, 32, 32);
        let y = n.conv_bn_act("stem", x, 16, ConvCfg::k(3).s(2), Some(EwKind::Relu)).unwrap();
        assert_eq!(y, Img::new(16, 16, 16));
        let p = n.maxpool("pool", y, 3, 2, 1).unwrap();
        assert_eq!(p, Img::new(16, 8, 8));
        let c = n.concat("cat", &[p, p]);
        assert_eq!(c.c, 32);
        let g = n.finish();
        // The first convolution computes no input gradient.
        let Op::Conv(first) = &g.nodes[0].op else { panic!() };
        assert!(!first.input_grad);
        assert_eq!(g.params(), 3 * 16 * 9 + 2 * 16);
    }

    #[test]
    fn impossible_shapes_are_errors() {
        let mut n = Net::new("t", 1, DType::Fp32, false).unwrap();
        assert!(n.conv("c", Img::new(3, 2, 2), 8, ConvCfg::k(5).p(0)).is_err());
        assert!(Net::new("t", 0, DType::Fp32, false).is_err());
    }
}
