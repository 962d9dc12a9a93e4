//! The LLM serving workload: B prompts of I tokens are prefilled together (time to first
//! token), then O decode steps each add one token per sequence while attending to a KV cache
//! that grows from I to I+O tokens. Also the weights one GPU holds; the rest of an engine's
//! memory (KV cache, activations, runtime) is sized in one place, the simulator's deployment.
//!
//! Graphs come from [`crate::transformer::build`] (one source of truth for the operators); this
//! module only chooses their shapes and adds the sampling step. Times are not computed here:
//! the caller prices the graphs with a predictor.

use crate::hf::TransformerSpec;
use crate::transformer::{build, check_layout, AttentionImpl, BuildOptions, Head, Mode, Shard};
use crate::WorkloadError;
use wavecast_ir::ops::{Gemm, Softmax};
use wavecast_ir::{dim, DType, Graph, Op, Phase, Quant, Role};

/// Decode steps priced exactly when there are at most this many; beyond it a fixed set of steps
/// is priced and the rest interpolated (step time is close to linear in the cache length).
pub const EXACT_DECODE_STEPS: u64 = 64;
/// Decode steps priced when interpolating (first and last included).
pub const DECODE_SAMPLES: u64 = 33;
/// Share of a GPU's memory a serving engine can fill with weights, KV cache and activations; the
/// rest goes to the CUDA context, library workspaces (cuBLAS, NCCL) and allocator slack.
pub const USABLE_MEMORY_FRACTION: f64 = 0.95;

#[derive(Debug, Clone, PartialEq)]
pub struct ServeOptions {
    pub batch: u64,
    /// Prompt tokens per sequence.
    pub input_len: u64,
    /// Decode steps (generated tokens per sequence).
    pub output_len: u64,
    /// Activation and KV-cache type.
    pub dtype: DType,
    /// Whether `dtype` is the default rather than asked for: a GPU without BF16 units then
    /// runs FP16 (the serving engines' `auto`), which the simulator settles per GPU.
    pub dtype_auto: bool,
    /// Weight storage of the transformer layers (e.g. FP8 weights with BF16 activations).
    pub weights: DType,
    /// Tensor-parallel degree (of attention, and of dense MLPs).
    pub tp: u64,
    /// Quantised format of the transformer layers' linear weights (see
    /// [`BuildOptions::quant`]); takes precedence over `weights`.
    pub quant: Option<Quant>,
    /// The routed experts' weight format when it differs from `quant` (an expert-only
    /// checkpoint format: gpt-oss's MXFP4 experts next to 16-bit attention).
    pub moe_quant: Option<Quant>,
    /// Whether `quant` also covers the attention projections (default true).
    pub quant_attention: bool,
    /// KV-cache element type; `None`: the activations' (`dtype`'s vector type, as before).
    /// `Some(DType::Fp8)` is an FP8 cache: half the bytes of BF16.
    pub kv_dtype: Option<DType>,
    /// Attention data parallelism: `batch` is then the sequences of each of these ranks, and
    /// the GPUs of a replica are tp × attention_dp (see [`BuildOptions::attention_dp`]).
    pub attention_dp: u64,
    /// Expert tensor parallelism; `None`: tp × attention_dp / ep.
    pub moe_tp: Option<u64>,
    /// Expert parallelism within the replica: tp × attention_dp = moe_tp × ep.
    pub ep: u64,
}

impl ServeOptions {
    pub fn new(batch: u64, input_len: u64, output_len: u64, dtype: DType) -> ServeOptions {
        ServeOptions {
            batch,
            input_len,
            output_len,
            dtype,
            dtype_auto: false,
            weights: dtype,
            tp: 1,
            quant: None,
            moe_quant: None,
            quant_attention: true,
            kv_dtype: None,
            attention_dp: 1,
            moe_tp: None,
            ep: 1,
        }
    }

    /// GPUs of one replica: tp × attention_dp.
    pub fn gpus(&self) -> u64 {
        self.tp.saturating_mul(self.attention_dp)
    }

    /// The KV cache's element type.
    pub fn kv_element(&self) -> DType {
        self.kv_dtype.unwrap_or(self.dtype.vector_storage())
    }

    /// The moe_tp handed to the graph builder: explicit whenever experts or attention are
    /// spread beyond plain tensor parallelism (so `ep` counts GPUs of this replica).
    fn resolved_moe_tp(&self) -> Result<Option<u64>, WorkloadError> {
        if self.moe_tp.is_some() || (self.ep <= 1 && self.attention_dp <= 1) {
            return Ok(self.moe_tp);
        }
        let gpus = self.gpus();
        let ep = dim("expert-parallel degree", self.ep)?;
        if !gpus.is_multiple_of(ep) {
            return Err(WorkloadError::Invalid(format!(
                "expert parallelism {ep} does not divide the {gpus} GPUs of tp {} × attention_dp {}",
                self.tp, self.attention_dp
            )));
        }
        Ok(Some(gpus / ep))
    }

    /// Rejects zero sizes and models that cannot be served this way, with the reason.
    pub fn validate(&self, spec: &TransformerSpec) -> Result<Shard, WorkloadError> {
        dim("batch", self.batch)?;
        dim("input length", self.input_len)?;
        dim("output length", self.output_len)?;
        if !spec.is_decoder() {
            return Err(WorkloadError::Invalid(format!("{} is an encoder; serve mode needs a decoder model", spec.name)));
        }
        let context = self.context()?;
        if context > spec.max_positions {
            return Err(WorkloadError::Invalid(format!(
                "input + output = {context} tokens exceeds the model's context of {} (max_position_embeddings)",
                spec.max_positions
            )));
        }
        let shard = Shard::new(spec, self.tp)?;
        check_layout(spec, &self.build_options(1, 0)?)?;
        Ok(shard)
    }

    /// Tokens in each sequence's KV cache after the last step: I + O.
    pub fn context(&self) -> Result<u64, WorkloadError> {
        self.input_len.checked_add(self.output_len).ok_or_else(|| WorkloadError::Invalid("context length overflows".into()))
    }

    fn build_options(&self, seq: u64, past: u64) -> Result<BuildOptions, WorkloadError> {
        let mut o = BuildOptions::new(self.batch, seq, Mode::Inference, self.dtype);
        o.past = past;
        o.head = Head::LastToken;
        o.attention = AttentionImpl::Fused;
        o.tp = self.tp;
        o.weights = Some(self.weights).filter(|w| *w != self.dtype);
        o.merged_projections = true;
        o.serve_formats(self.quant, self.moe_quant, self.quant_attention);
        o.kv_dtype = self.kv_dtype.filter(|k| *k != self.dtype);
        o.attention_dp = self.attention_dp;
        o.ep = self.ep;
        o.moe_tp = self.resolved_moe_tp()?;
        Ok(o)
    }

    /// One GPU's graph of the prefill: all prompts at once, logits for the last position only,
    /// then sampling.
    pub fn prefill_graph(&self, spec: &TransformerSpec) -> Result<Graph, WorkloadError> {
        let mut g = build(spec, &self.build_options(self.input_len, 0)?)?;
        self.add_sampling(spec, &mut g);
        Ok(g)
    }

    /// One GPU's graph of decode step `step` (0-based): one new token per sequence, attending to
    /// the I + step cached tokens plus itself.
    pub fn decode_graph(&self, spec: &TransformerSpec, step: u64) -> Result<Graph, WorkloadError> {
        let past = self.input_len.checked_add(step).ok_or_else(|| WorkloadError::Invalid("context length overflows".into()))?;
        let mut g = build(spec, &self.build_options(1, past)?)?;
        self.add_sampling(spec, &mut g);
        Ok(g)
    }

    fn add_sampling(&self, spec: &TransformerSpec, g: &mut Graph) {
        add_sampling(spec, self.batch, g);
    }

    /// The decode steps to price: every step when there are few, otherwise [`DECODE_SAMPLES`]
    /// evenly spaced ones (always including the first and the last).
    pub fn decode_samples(&self) -> Vec<u64> {
        let o = self.output_len;
        if o <= EXACT_DECODE_STEPS {
            return (0..o).collect();
        }
        let n = DECODE_SAMPLES - 1;
        let mut steps: Vec<u64> = (0..=n).map(|k| (k * (o - 1) + n / 2) / n).collect();
        steps.dedup();
        steps
    }

    /// Weights one GPU holds: every parameter of its shard at its storage width (FP8 layer
    /// weights take one byte, quantised ones their format's bits, norms, embeddings and the LM
    /// head keep the activation type). Built from a graph with enough tokens that every MoE
    /// expert is present, so under expert parallelism it holds experts/ep experts of width
    /// ffn/moe_tp.
    pub fn weight_bytes(&self, spec: &TransformerSpec) -> Result<f64, WorkloadError> {
        let mut o = self.build_options(tokens_waking_every_expert(spec), 0)?;
        o.batch = 1;
        Ok(stored_param_bytes(&build(spec, &o)?))
    }
}

/// Serving engines turn each of `rows` sequences' logits into a token with an FP32 softmax over
/// the vocabulary (greedy or top-p alike): appended to `g` as `head.sample`.
pub fn add_sampling(spec: &TransformerSpec, rows: u64, g: &mut Graph) {
    g.push_in(Role::Head, "head.sample", Op::Softmax(Softmax::new(rows, spec.vocab, DType::Fp32)), Phase::Forward, 1);
}

/// Tokens that, in one pass, route to every expert of a mixture: E · ⌈16/k⌉ (the expected
/// number missed is E·e^(−16) < 1); 1 for a dense model.
pub fn tokens_waking_every_expert(spec: &TransformerSpec) -> u64 {
    spec.moe.map_or(1, |m| m.experts.saturating_mul(16u64.div_ceil(m.top_k.max(1))))
}

/// Bytes of every parameter `g`'s forward pass holds, each in its storage format.
pub fn stored_param_bytes(g: &Graph) -> f64 {
    g.forward().map(|n| n.repeat as f64 * param_bytes(&n.op)).sum()
}

/// Bytes of an operator's stored parameters.
fn param_bytes(op: &Op) -> f64 {
    match op {
        Op::Gemm(g @ Gemm { quant: Some(_), .. }) => g.param_bytes(),
        Op::Gemm(Gemm { weight_dtype: Some(w), .. }) => op.params() as f64 * w.size_bytes() as f64,
        other => other.params() as f64 * other.dtype().size_bytes() as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::preset;

    #[test]
    fn decode_samples_cover_first_and_last_step() {
        let mut o = ServeOptions::new(1, 10, 20, DType::Bf16);
        assert_eq!(o.decode_samples(), (0..20).collect::<Vec<_>>());
        o.output_len = 1000;
        let s = o.decode_samples();
        assert_eq!(s.len() as u64, DECODE_SAMPLES);
        assert_eq!((s[0], *s.last().unwrap()), (0, 999));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn zero_lengths_and_encoders_are_rejected() {
        let llama = preset("llama-3.2-1b").unwrap();
        assert!(ServeOptions::new(1, 0, 8, DType::Bf16).validate(&llama).unwrap_err().to_string().contains("input length"));
        assert!(ServeOptions::new(1, 8, 0, DType::Bf16).validate(&llama).unwrap_err().to_string().contains("output length"));
        assert!(ServeOptions::new(0, 8, 8, DType::Bf16).validate(&llama).is_err());
        let bert = preset("bert-base").unwrap();
        assert!(ServeOptions::new(1, 8, 8, DType::Bf16).validate(&bert).unwrap_err().to_string().contains("decoder"));
    }
}
