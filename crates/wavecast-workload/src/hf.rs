//! Hugging Face `config.json` → a normalised description of a transformer. Each `model_type`
//! names its fields differently; this is the one place that knows those spellings.

use crate::WorkloadError;
use serde_json::Value;
use wavecast_ir::ops::NormKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// GPT-2 and GPT-3-style decoders (learned positions, fused QKV, LayerNorm, GELU).
    Gpt2,
    /// OPT decoders (separate q/k/v, ReLU, learned positions with an offset of 2).
    Opt,
    /// BERT encoders (token-type embeddings, post-norm, pooler).
    Bert,
    /// Llama-family decoders: Llama, Mistral, Qwen2/3, Mixtral (RMSNorm, rotary, SwiGLU, GQA).
    Llama,
    /// Switch Transformers: a T5-style encoder–decoder whose every `sparse_step`-th
    /// feed-forward block is a top-1 mixture of experts (see [`EncDec`]).
    Switch,
}

/// The encoder–decoder part of a Switch Transformer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncDec {
    pub decoder_layers: u64,
    /// Encoder and decoder layers whose feed-forward block is sparse (mixture of experts).
    pub sparse_encoder_layers: u64,
    pub sparse_decoder_layers: u64,
    /// Tokens an expert accepts per batch; routing beyond it drops tokens (None: unlimited).
    pub expert_capacity: Option<u64>,
    /// Relative-position buckets of the attention bias (first layer of each stack).
    pub relative_buckets: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    Gelu,
    Relu,
    SwiGlu,
}

/// Mixture of experts: every token goes to `top_k` of `experts` expert MLPs.
/// Routing assumption: perfectly balanced, so each expert gets tokens·top_k/experts rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moe {
    pub experts: u64,
    pub top_k: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransformerSpec {
    pub name: String,
    pub arch: Arch,
    pub hidden: u64,
    pub layers: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub head_dim: u64,
    pub ffn: u64,
    pub vocab: u64,
    pub max_positions: u64,
    pub activation: Activation,
    pub norm: NormKind,
    pub tied_embeddings: bool,
    pub qkv_bias: bool,
    pub out_bias: bool,
    pub mlp_bias: bool,
    /// Per-head RMSNorm on queries and keys (Qwen3).
    pub qk_norm: bool,
    pub learned_positions: bool,
    /// Extra learned position rows (OPT reserves 2).
    pub position_offset: u64,
    /// Token-type vocabulary (BERT); 0 when absent.
    pub type_vocab: u64,
    pub moe: Option<Moe>,
    pub causal: bool,
    /// Set for encoder–decoder models (Switch); `layers` then counts encoder layers.
    pub encdec: Option<EncDec>,
}

/// An optional non-negative integer field: absent or `null` is `None`; any other non-integer
/// value is an error rather than silently replaced by the default.
fn field(cfg: &Value, keys: &[&str], origin: &str) -> Result<Option<u64>, WorkloadError> {
    let Some((key, value)) = keys.iter().find_map(|k| cfg.get(*k).map(|v| (*k, v))) else { return Ok(None) };
    match value {
        Value::Null => Ok(None),
        v => v.as_u64().map(Some).ok_or_else(|| WorkloadError::Config { origin: origin.into(), reason: format!("'{key}' must be a non-negative integer, got {v}") }),
    }
}

fn required(cfg: &Value, keys: &[&str], origin: &str) -> Result<u64, WorkloadError> {
    for k in keys {
        if let Some(v) = cfg.get(*k) {
            return match v.as_u64() {
                Some(0) => Err(WorkloadError::Config { origin: origin.into(), reason: format!("'{k}' must be at least 1, got 0") }),
                Some(n) => Ok(n),
                None => Err(WorkloadError::Config {
                    origin: origin.into(),
                    reason: format!("'{k}' must be a positive integer, got {v}"),
                }),
            };
        }
    }
    Err(WorkloadError::Config { origin: origin.into(), reason: format!("missing field '{}'", keys[0]) })
}

fn flag(cfg: &Value, key: &str, default: bool) -> bool {
    cfg.get(key).and_then(|v| v.as_bool()).unwrap_or(default)
}

impl TransformerSpec {
    /// Parses a Hugging Face config (as JSON text).
    pub fn from_json(text: &str, origin: &str) -> Result<TransformerSpec, WorkloadError> {
        let cfg: Value = serde_json::from_str(text)
            .map_err(|e| WorkloadError::Config { origin: origin.into(), reason: e.to_string() })?;
        if !cfg.is_object() {
            return Err(WorkloadError::Config { origin: origin.into(), reason: "expected a JSON object".into() });
        }
        let model_type = cfg.get("model_type").and_then(|v| v.as_str()).unwrap_or("");
        let name = cfg
            .get("_name_or_path")
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .unwrap_or(origin)
            .to_string();
        let spec = match model_type {
            "gpt2" => Self::gpt2(&cfg, origin, name)?,
            "opt" => Self::opt(&cfg, origin, name)?,
            "bert" => Self::bert(&cfg, origin, name)?,
            "llama" | "mistral" | "qwen2" | "qwen3" | "mixtral" | "qwen2_moe" | "qwen3_moe" => {
                Self::llama(&cfg, origin, name, model_type)?
            }
            "switch_transformers" => Self::switch(&cfg, origin, name)?,
            "" => {
                return Err(WorkloadError::Config { origin: origin.into(), reason: "missing field 'model_type'".into() })
            }
            other => {
                return Err(WorkloadError::Config {
                    origin: origin.into(),
                    reason: format!(
                        "unsupported model_type '{other}' (supported: gpt2, opt, bert, llama, mistral, qwen2, qwen3, mixtral, switch_transformers)"
                    ),
                })
            }
        };
        spec.check(origin)?;
        Ok(spec)
    }

    fn check(&self, origin: &str) -> Result<(), WorkloadError> {
        let invalid = |reason: String| Err(WorkloadError::Config { origin: origin.into(), reason });
        // Bounds far above any published model (the largest have ~200 layers, hidden 25,600,
        // vocabularies of ~260,000): beyond them a config is a typo, and shape products would
        // leave the range where times and byte counts are exact.
        let sizes = [
            ("number of layers", self.layers, 10_000),
            ("hidden size", self.hidden, 1 << 20),
            ("attention heads", self.heads, 1 << 14),
            ("key/value heads", self.kv_heads, 1 << 14),
            ("head dimension", self.head_dim, 1 << 14),
            ("feed-forward size", self.ffn, 1 << 22),
            ("vocabulary", self.vocab, 1 << 24),
        ];
        for (what, value, most) in sizes {
            if value == 0 || value > most {
                return invalid(format!("{what} must be in 1..={most}, got {value}"));
            }
        }
        // Only learned position tables are sized by max_position_embeddings (Switch's relative
        // positions leave it unbounded).
        if (self.learned_positions && self.max_positions > 1 << 30) || self.type_vocab > 1 << 20 {
            return invalid("max_position_embeddings or type_vocab_size is implausibly large".into());
        }
        if !self.hidden.is_multiple_of(self.heads) && self.head_dim * self.heads == 0 {
            return invalid("hidden size is not divisible by the head count".into());
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return invalid(format!("num_attention_heads {} is not a multiple of num_key_value_heads {}", self.heads, self.kv_heads));
        }
        if let Some(m) = self.moe {
            if m.experts == 0 || m.experts > 1 << 16 {
                return invalid(format!("number of experts must be in 1..={}, got {}", 1 << 16, m.experts));
            }
            if m.top_k == 0 || m.top_k > m.experts {
                return invalid(format!("top-k {} must be in 1..={}", m.top_k, m.experts));
            }
        }
        if let Some(e) = self.encdec {
            if e.decoder_layers == 0 || e.decoder_layers > 10_000 {
                return invalid(format!("decoder layers must be in 1..=10000, got {}", e.decoder_layers));
            }
        }
        Ok(())
    }

    fn gpt2(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["n_embd", "hidden_size"], origin)?;
        let heads = required(cfg, &["n_head", "num_attention_heads"], origin)?;
        Ok(TransformerSpec {
            name,
            arch: Arch::Gpt2,
            hidden,
            layers: required(cfg, &["n_layer", "num_hidden_layers"], origin)?,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            // Saturating: `check` rejects an absurd hidden size after parsing.
            ffn: field(cfg, &["n_inner"], origin)?.unwrap_or(hidden.saturating_mul(4)),
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: required(cfg, &["n_positions", "n_ctx", "max_position_embeddings"], origin)?,
            activation: Activation::Gelu,
            norm: NormKind::LayerNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", true),
            qkv_bias: true,
            out_bias: true,
            mlp_bias: true,
            qk_norm: false,
            learned_positions: true,
            position_offset: 0,
            type_vocab: 0,
            moe: None,
            causal: true,
            encdec: None,
        })
    }

    fn opt(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["hidden_size"], origin)?;
        let heads = required(cfg, &["num_attention_heads"], origin)?;
        if let Some(p) = field(cfg, &["word_embed_proj_dim"], origin)? {
            if p != hidden {
                return Err(WorkloadError::Config {
                    origin: origin.into(),
                    reason: "OPT with word_embed_proj_dim != hidden_size (OPT-350m) is not supported".into(),
                });
            }
        }
        let bias = flag(cfg, "enable_bias", true);
        Ok(TransformerSpec {
            name,
            arch: Arch::Opt,
            hidden,
            layers: required(cfg, &["num_hidden_layers"], origin)?,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            ffn: required(cfg, &["ffn_dim"], origin)?,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: required(cfg, &["max_position_embeddings"], origin)?,
            activation: Activation::Relu,
            norm: NormKind::LayerNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", true),
            qkv_bias: bias,
            out_bias: bias,
            mlp_bias: bias,
            qk_norm: false,
            learned_positions: true,
            position_offset: 2,
            type_vocab: 0,
            moe: None,
            causal: true,
            encdec: None,
        })
    }

    fn bert(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["hidden_size"], origin)?;
        let heads = required(cfg, &["num_attention_heads"], origin)?;
        Ok(TransformerSpec {
            name,
            arch: Arch::Bert,
            hidden,
            layers: required(cfg, &["num_hidden_layers"], origin)?,
            heads,
            kv_heads: heads,
            head_dim: hidden / heads,
            ffn: required(cfg, &["intermediate_size"], origin)?,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: required(cfg, &["max_position_embeddings"], origin)?,
            activation: Activation::Gelu,
            norm: NormKind::LayerNorm,
            tied_embeddings: true,
            qkv_bias: true,
            out_bias: true,
            mlp_bias: true,
            qk_norm: false,
            learned_positions: true,
            position_offset: 0,
            type_vocab: field(cfg, &["type_vocab_size"], origin)?.unwrap_or(2),
            moe: None,
            causal: false,
            encdec: None,
        })
    }

    fn llama(cfg: &Value, origin: &str, name: String, model_type: &str) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["hidden_size"], origin)?;
        let heads = required(cfg, &["num_attention_heads"], origin)?;
        let kv_heads = field(cfg, &["num_key_value_heads"], origin)?.unwrap_or(heads);
        let head_dim = field(cfg, &["head_dim"], origin)?.unwrap_or(hidden / heads);
        let experts = field(cfg, &["num_local_experts", "num_experts"], origin)?.unwrap_or(0);
        let sparse_type = matches!(model_type, "mixtral" | "qwen2_moe" | "qwen3_moe");
        if sparse_type && experts == 0 {
            return Err(WorkloadError::Config { origin: origin.into(), reason: format!("a {model_type} config needs num_experts ≥ 1, got 0") });
        }
        let moe = if experts > 1 {
            Some(Moe { experts, top_k: field(cfg, &["num_experts_per_tok"], origin)?.unwrap_or(2) })
        } else {
            None
        };
        let ffn = if moe.is_some() {
            field(cfg, &["moe_intermediate_size"], origin)?.map(Ok).unwrap_or_else(|| required(cfg, &["intermediate_size"], origin))?
        } else {
            required(cfg, &["intermediate_size"], origin)?
        };
        let qkv_bias = match model_type {
            "qwen2" | "qwen2_moe" => true,
            _ => flag(cfg, "attention_bias", false),
        };
        Ok(TransformerSpec {
            name,
            arch: Arch::Llama,
            hidden,
            layers: required(cfg, &["num_hidden_layers"], origin)?,
            heads,
            kv_heads,
            head_dim,
            ffn,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: field(cfg, &["max_position_embeddings"], origin)?.unwrap_or(4096),
            activation: Activation::SwiGlu,
            norm: NormKind::RmsNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", false),
            qkv_bias,
            out_bias: flag(cfg, "attention_bias", false),
            mlp_bias: flag(cfg, "mlp_bias", false),
            qk_norm: model_type.starts_with("qwen3"),
            learned_positions: false,
            position_offset: 0,
            type_vocab: 0,
            moe,
            causal: true,
            encdec: None,
        })
    }

    fn switch(cfg: &Value, origin: &str, name: String) -> Result<TransformerSpec, WorkloadError> {
        let hidden = required(cfg, &["d_model"], origin)?;
        let heads = required(cfg, &["num_heads"], origin)?;
        let layers = required(cfg, &["num_layers"], origin)?;
        let decoder_layers = field(cfg, &["num_decoder_layers"], origin)?.unwrap_or(layers);
        let experts = required(cfg, &["num_experts"], origin)?;
        let sparse = |count_key: &str, step_key: &str, total: u64| -> Result<u64, WorkloadError> {
            Ok(match (field(cfg, &[count_key], origin)?, field(cfg, &[step_key], origin)?) {
                (Some(count), _) => count,
                (None, Some(step)) if step > 0 => total / step,
                _ => 0,
            })
        };
        let top_k = field(cfg, &["num_selected_experts"], origin)?.unwrap_or(1);
        Ok(TransformerSpec {
            name,
            arch: Arch::Switch,
            hidden,
            layers,
            heads,
            kv_heads: heads,
            head_dim: required(cfg, &["d_kv"], origin)?,
            ffn: required(cfg, &["d_ff"], origin)?,
            vocab: required(cfg, &["vocab_size"], origin)?,
            max_positions: u64::MAX,
            activation: Activation::Relu,
            norm: NormKind::RmsNorm,
            tied_embeddings: flag(cfg, "tie_word_embeddings", true),
            qkv_bias: false,
            out_bias: false,
            mlp_bias: false,
            qk_norm: false,
            learned_positions: false,
            position_offset: 0,
            type_vocab: 0,
            moe: Some(Moe { experts, top_k }),
            causal: false,
            encdec: Some(EncDec {
                decoder_layers,
                sparse_encoder_layers: sparse("num_sparse_encoder_layers", "encoder_sparse_step", layers)?.min(layers),
                sparse_decoder_layers: sparse("num_sparse_decoder_layers", "decoder_sparse_step", decoder_layers)?.min(decoder_layers),
                expert_capacity: field(cfg, &["expert_capacity"], origin)?.filter(|&c| c > 0),
                relative_buckets: field(cfg, &["relative_attention_num_buckets"], origin)?.unwrap_or(32),
            }),
        })
    }

    pub fn is_decoder(&self) -> bool {
        self.causal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_and_unsupported_configs_are_named() {
        let e = TransformerSpec::from_json("{not json", "x.json").unwrap_err().to_string();
        assert!(e.contains("x.json"), "{e}");
        let e = TransformerSpec::from_json(r#"{"model_type":"t5"}"#, "x").unwrap_err().to_string();
        assert!(e.contains("unsupported model_type 't5'"), "{e}");
        let e = TransformerSpec::from_json(r#"{"model_type":"gpt2","n_embd":"big"}"#, "x").unwrap_err().to_string();
        assert!(e.contains("'n_embd' must be a positive integer"), "{e}");
        let e = TransformerSpec::from_json(r#"{"model_type":"gpt2","n_embd":0}"#, "x").unwrap_err().to_string();
        assert!(e.contains("at least 1"), "{e}");
        let e = TransformerSpec::from_json(r#"{"model_type":"llama","hidden_size":64}"#, "x").unwrap_err().to_string();
        assert!(e.contains("missing field 'num_attention_heads'"), "{e}");
    }

    #[test]
    fn gqa_must_divide_heads() {
        let cfg = r#"{"model_type":"llama","hidden_size":64,"num_attention_heads":8,"num_key_value_heads":3,
            "num_hidden_layers":2,"intermediate_size":128,"vocab_size":100}"#;
        assert!(TransformerSpec::from_json(cfg, "x").unwrap_err().to_string().contains("multiple"));
    }

    #[test]
    fn impossible_or_absurd_llama_configs_are_rejected_with_the_field() {
        let base = serde_json::json!({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 8,
            "num_hidden_layers": 2, "intermediate_size": 128, "vocab_size": 100});
        let cases = [
            ("num_key_value_heads", serde_json::json!(0), "key/value heads"),
            ("head_dim", serde_json::json!(0), "head dimension"),
            ("num_hidden_layers", serde_json::json!(u64::MAX), "number of layers"),
            ("num_hidden_layers", serde_json::json!(1_000_000_000u64), "number of layers"),
            ("vocab_size", serde_json::json!(1u64 << 40), "vocabulary"),
            ("head_dim", serde_json::json!("wide"), "'head_dim' must be a non-negative integer"),
            ("num_key_value_heads", serde_json::json!(-2), "'num_key_value_heads'"),
        ];
        for (key, value, needle) in cases {
            let mut cfg = base.clone();
            cfg[key] = value;
            let e = TransformerSpec::from_json(&cfg.to_string(), "x").unwrap_err().to_string();
            assert!(e.contains(needle), "{key}: {e}");
        }
        let mut moe = base.clone();
        moe["model_type"] = "mixtral".into();
        moe["num_local_experts"] = 0.into();
        assert!(TransformerSpec::from_json(&moe.to_string(), "x").unwrap_err().to_string().contains("num_experts"));
        moe["num_local_experts"] = 8.into();
        moe["num_experts_per_tok"] = 9.into();
        assert!(TransformerSpec::from_json(&moe.to_string(), "x").unwrap_err().to_string().contains("top-k 9"));
        let mut nulls = base.clone();
        nulls["num_key_value_heads"] = serde_json::Value::Null;
        assert_eq!(TransformerSpec::from_json(&nulls.to_string(), "x").unwrap().kv_heads, 8, "null means the default");
    }
}
