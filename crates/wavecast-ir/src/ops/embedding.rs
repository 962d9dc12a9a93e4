//! Embedding lookup: a gather of `tokens` rows from a (vocab × hidden) table.

use crate::ops::{MemCopy, Op};
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Embedding {
    pub tokens: u64,
    pub hidden: u64,
    pub vocab: u64,
    pub dtype: DType,
}

impl Embedding {
    pub fn flops(&self) -> f64 {
        0.0
    }

    /// Gathered rows read and written, plus the 8-byte indices.
    pub fn bytes(&self) -> f64 {
        let rows = self.tokens as f64 * self.hidden as f64 * self.dtype.size_bytes() as f64;
        2.0 * rows + 8.0 * self.tokens as f64
    }

    pub fn params(&self) -> u64 {
        self.vocab.saturating_mul(self.hidden)
    }

    /// The dense gradient table is zeroed, then the token gradients are scatter-added into it.
    pub fn backward(&self) -> Vec<Op> {
        let table = MemCopy::touch(self.params(), self.dtype);
        let scatter = MemCopy::touch(self.tokens.saturating_mul(self.hidden).saturating_mul(3), self.dtype);
        vec![Op::MemCopy(table), Op::MemCopy(scatter)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedding_counts() {
        let e = Embedding { tokens: 4, hidden: 8, vocab: 100, dtype: DType::Fp32 };
        assert_eq!(e.bytes(), 2.0 * 4.0 * 8.0 * 4.0 + 32.0);
        assert_eq!(e.params(), 800);
        let bw: f64 = e.backward().iter().map(|o| o.bytes()).sum();
        assert_eq!(bw, 800.0 * 4.0 + 3.0 * 32.0 * 4.0);
    }
}
