//! Built-in model presets: Hugging Face configs shipped inside the binary.

use crate::hf::TransformerSpec;
use crate::WorkloadError;

/// (name, config.json) for every preset.
pub const PRESETS: &[(&str, &str)] = &[
    ("gpt2", include_str!("../presets/gpt2.json")),
    ("gpt2-medium", include_str!("../presets/gpt2-medium.json")),
    ("gpt2-large", include_str!("../presets/gpt2-large.json")),
    ("gpt2-xl", include_str!("../presets/gpt2-xl.json")),
    ("bert-base", include_str!("../presets/bert-base.json")),
    ("bert-large", include_str!("../presets/bert-large.json")),
    ("opt-1.3b", include_str!("../presets/opt-1.3b.json")),
    ("gpt3-xl", include_str!("../presets/gpt3-xl.json")),
    ("gpt3-2.7b", include_str!("../presets/gpt3-2.7b.json")),
    ("llama-3-8b", include_str!("../presets/llama-3-8b.json")),
    ("llama-3.1-8b", include_str!("../presets/llama-3.1-8b.json")),
    ("llama-2-7b", include_str!("../presets/llama-2-7b.json")),
    ("mistral-7b", include_str!("../presets/mistral-7b.json")),
    ("mixtral-8x7b", include_str!("../presets/mixtral-8x7b.json")),
    ("llama-3.2-1b", include_str!("../presets/llama-3.2-1b.json")),
    ("llama-3.1-70b", include_str!("../presets/llama-3.1-70b.json")),
    ("llama-3-70b", include_str!("../presets/llama-3-70b.json")),
    ("qwen2.5-7b", include_str!("../presets/qwen2.5-7b.json")),
    ("qwen2.5-14b", include_str!("../presets/qwen2.5-14b.json")),
    ("qwen3-32b", include_str!("../presets/qwen3-32b.json")),
    ("qwen3-235b-a22b", include_str!("../presets/qwen3-235b-a22b.json")),
    ("deepseek-v3", include_str!("../presets/deepseek-v3.json")),
    ("gpt-oss-120b", include_str!("../presets/gpt-oss-120b.json")),
    ("switch-base-8", include_str!("../presets/switch-base-8.json")),
];

/// Other names of a preset: releases with the same config (layers, widths, heads, vocabulary
/// and context) that differ only in their weights. Releases of one architecture with another
/// context are presets of their own (`llama-3.1-8b` serves 131,072 tokens, `llama-3-8b` 8,192):
/// the serving commands refuse a request longer than the model's context. (alias, preset)
pub const ALIASES: &[(&str, &str)] = &[
    ("llama-3.3-70b", "llama-3.1-70b"),
    ("gpt2-small", "gpt2"),
    ("bert-base-uncased", "bert-base"),
    ("bert-large-uncased", "bert-large"),
];

/// Fine-tunes that keep the base model's config: `Llama-3.1-8B-Instruct` is priced as
/// `llama-3.1-8b`.
const SAME_ARCHITECTURE_SUFFIXES: &[&str] = &["-instruct", "-chat", "-base"];

/// Repository suffixes that name a release or a checkpoint format of the same config:
/// `Mistral-7B-v0.1`, `Mixtral-8x7B-Instruct-v0.1`, `Llama-2-7b-hf`, `Llama-2-7b-chat-hf`.
const REPOSITORY_SUFFIXES: &[&str] = &["-hf", "-v0.1"];

/// The config text of the preset `name` means ([`canonical`]: an alias or a Hugging Face id
/// too), if it names one.
pub fn preset_text(name: &str) -> Option<&'static str> {
    let n = canonical(name)?;
    PRESETS.iter().find(|(p, _)| *p == n).map(|(_, t)| *t)
}

/// Presets of the models NeuSight's measured benchmarks trained in FP32 (GPT-2, BERT, OPT,
/// Switch): wavecast's FP32 accuracy figures are for them.
const FP32_BENCHMARK_PRESETS: &[&str] = &["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base", "bert-large", "opt-1.3b", "switch-base-8"];

/// Where a training step's default format came from (see [`default_train_dtype`]).
pub const DTYPE_RULE: &str = "the config's torch_dtype, else bf16; fp32 for the presets of NeuSight's FP32 benchmarks (gpt2*, bert-*, opt-1.3b, switch-base-8)";

/// The default compute format of a training step, and why: FP32 for the presets of NeuSight's
/// FP32 benchmarks, else the config's `torch_dtype` (the format the model was released in),
/// else BF16 (how LLMs train). `preset` is the preset name when the model is one, `config` the
/// config text.
pub fn default_train_dtype(preset: Option<&str>, config: Option<&str>) -> (wavecast_ir::DType, &'static str) {
    use wavecast_ir::DType;
    if preset.and_then(canonical).is_some_and(|p| FP32_BENCHMARK_PRESETS.contains(&p)) {
        return (DType::Fp32, "fp32: a NeuSight FP32 benchmark model");
    }
    // transformers 4.56 and later write the key as `dtype`.
    let torch = config
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .and_then(|v| ["torch_dtype", "dtype"].iter().find_map(|k| v.get(*k).and_then(|d| d.as_str().map(str::to_string))));
    match torch.as_deref() {
        Some("bfloat16") => (DType::Bf16, "bf16: the config's torch_dtype"),
        Some("float16") => (DType::Fp16, "fp16: the config's torch_dtype"),
        Some("float32") => (DType::Fp32, "fp32: the config's torch_dtype"),
        _ => (DType::Bf16, "bf16: the default for LLMs"),
    }
}

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// Transformer presets and the built-in vision, GAN and recurrent models (`zoo`).
pub fn all_names() -> Vec<&'static str> {
    names().into_iter().chain(crate::zoo::names()).collect()
}

/// The aliases of preset `name`.
pub fn aliases_of(name: &str) -> Vec<&'static str> {
    ALIASES.iter().filter(|(_, p)| *p == name).map(|(a, _)| *a).collect()
}

/// The preset `name` means: a preset name or alias, ignoring case, a Hugging Face organisation
/// (`meta-llama/Llama-3.1-8B`), Meta's first naming of its Llama 3 repositories
/// (`Meta-Llama-3-70B`) and a fine-tune suffix (`-Instruct`).
pub fn canonical(name: &str) -> Option<&'static str> {
    let lower = name.trim().to_ascii_lowercase();
    let bare = lower.rsplit('/').next().unwrap_or(&lower);
    let bare = bare.strip_prefix("meta-").filter(|b| b.starts_with("llama")).unwrap_or(bare);
    let bare = REPOSITORY_SUFFIXES.iter().find_map(|s| bare.strip_suffix(s)).unwrap_or(bare);
    let base = SAME_ARCHITECTURE_SUFFIXES.iter().find_map(|s| bare.strip_suffix(s)).unwrap_or(bare);
    exact(bare).or_else(|| exact(base))
}

/// The preset named exactly `key` (lower case), directly or by an alias.
fn exact(key: &str) -> Option<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).find(|n| *n == key).or_else(|| ALIASES.iter().find(|(a, _)| *a == key).map(|(_, p)| *p))
}

/// The names (presets, aliases and built-in models) most like `name`, best first: what a typo
/// most likely meant.
pub fn closest(name: &str, count: usize) -> Vec<&'static str> {
    let key = name.trim().to_ascii_lowercase();
    let key = key.rsplit('/').next().unwrap_or(&key).to_string();
    let candidates = all_names().into_iter().chain(ALIASES.iter().map(|(a, _)| *a));
    let mut scored: Vec<(f64, &'static str)> = candidates.map(|n| (strsim::jaro_winkler(&key, n), n)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().filter(|(s, _)| *s > 0.8).take(count).map(|(_, n)| n).collect()
}

/// Looks a preset up by name or alias (see [`canonical`]).
pub fn preset(name: &str) -> Result<TransformerSpec, WorkloadError> {
    let n = canonical(name).ok_or_else(|| WorkloadError::UnknownPreset { name: name.to_string(), closest: closest(name, 3).join(", ") })?;
    let text = PRESETS.iter().find(|(p, _)| *p == n).map(|(_, t)| *t).expect("canonical names a preset");
    let mut spec = TransformerSpec::from_json(text, n)?;
    spec.name = n.to_string();
    Ok(spec)
}

/// A preset name, or a path to a config file.
pub fn load_config(path: &std::path::Path) -> Result<TransformerSpec, WorkloadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| WorkloadError::Read { path: path.display().to_string(), reason: e.to_string() })?;
    let mut spec = TransformerSpec::from_json(&text, &path.display().to_string())?;
    if spec.name == path.display().to_string() {
        spec.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    }
    if spec.checkpoint_quant.is_none() {
        if let Some(sibling) = quant_sibling(path).filter(|p| p.is_file()) {
            let text = std::fs::read_to_string(&sibling).map_err(|e| WorkloadError::Read { path: sibling.display().to_string(), reason: e.to_string() })?;
            spec.checkpoint_quant = crate::hf::hf_quant_config(&text, &sibling.display().to_string())?.weights;
        }
    }
    Ok(spec)
}

/// Where a ModelOpt checkpoint (NVIDIA's `…-NVFP4`, `…-FP8`) declares its weight format instead
/// of a `quantization_config`: `hf_quant_config.json` beside `config.json`, or
/// `NAME_hf_quant_config.json` beside `NAME_config.json` (the shared collection's naming).
fn quant_sibling(config: &std::path::Path) -> Option<std::path::PathBuf> {
    let name = config.file_name()?.to_str()?;
    let sibling = if name == "config.json" { "hf_quant_config.json".to_string() } else { format!("{}_hf_quant_config.json", name.strip_suffix("_config.json")?) };
    Some(config.with_file_name(sibling))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_names_a_preset_and_shadows_none() {
        for (alias, target) in ALIASES {
            assert!(names().contains(target), "{alias} -> {target}: no such preset");
            assert!(!all_names().contains(alias), "{alias} is already a model name");
        }
    }

    #[test]
    fn common_names_and_hugging_face_ids_find_their_preset() {
        assert_eq!(canonical("llama-3.1-8b"), Some("llama-3.1-8b"));
        assert_eq!(canonical("meta-llama/Llama-3.1-8B-Instruct"), Some("llama-3.1-8b"));
        assert_eq!(canonical("meta-llama/Meta-Llama-3-70B-Instruct"), Some("llama-3-70b"));
        assert_eq!(canonical("meta-llama/Meta-Llama-3.1-8B"), Some("llama-3.1-8b"));
        assert_eq!(canonical("mistralai/Mistral-7B-v0.1"), Some("mistral-7b"));
        assert_eq!(canonical("mistralai/Mixtral-8x7B-Instruct-v0.1"), Some("mixtral-8x7b"));
        assert_eq!(canonical("meta-llama/Llama-2-7b-chat-hf"), Some("llama-2-7b"));
        assert_eq!(canonical("meta-llama/Llama-3.3-70B-Instruct"), Some("llama-3.1-70b"));
        assert_eq!(canonical("Qwen/Qwen3-32B"), Some("qwen3-32b"));
        assert_eq!(canonical("QWEN2.5-14B-instruct"), Some("qwen2.5-14b"));
        assert_eq!(canonical("llama-3.1-9b"), None);
        // An alias builds the preset's config, under the preset's name.
        let (alias, preset) = (preset("llama-3.3-70b").unwrap(), super::preset("llama-3.1-70b").unwrap());
        assert_eq!((alias.name.as_str(), alias.layers, alias.hidden, alias.heads, alias.kv_heads, alias.max_positions), ("llama-3.1-70b", preset.layers, preset.hidden, preset.heads, preset.kv_heads, preset.max_positions));
    }

    /// A preset's other names find its config, and with it the training format's rule.
    #[test]
    fn other_names_of_a_preset_find_its_config_and_format() {
        assert_eq!(preset_text("meta-llama/Llama-3.3-70B-Instruct"), preset_text("llama-3.1-70b"));
        assert!(preset_text("llama-3.1-9b").is_none());
        let fp32 = default_train_dtype(Some("gpt2-small"), preset_text("gpt2-small"));
        assert_eq!(fp32, default_train_dtype(Some("gpt2"), preset_text("gpt2")));
        assert_eq!(fp32.0, wavecast_ir::DType::Fp32);
        assert_eq!(default_train_dtype(Some("llama-3.3-70b"), preset_text("llama-3.3-70b")).0, wavecast_ir::DType::Bf16);
    }

    /// Llama 3 and 3.1 share each size's architecture, not its context: each release is its own
    /// preset, so a 20,000-token request fits 3.1 and not 3.
    #[test]
    fn llama_3_and_3_1_differ_in_context_only() {
        for (three, three_one) in [("llama-3-8b", "llama-3.1-8b"), ("llama-3-70b", "llama-3.1-70b")] {
            let (a, b) = (preset(three).unwrap(), preset(three_one).unwrap());
            assert_eq!((a.layers, a.hidden, a.heads, a.kv_heads, a.params().total), (b.layers, b.hidden, b.heads, b.kv_heads, b.params().total), "{three} vs {three_one}");
            assert_eq!((a.max_positions, b.max_positions), (8192, 131_072), "{three} vs {three_one}");
        }
    }

    #[test]
    fn a_typo_gets_the_closest_names_not_the_whole_list() {
        let e = preset("llama-3-8").unwrap_err().to_string();
        assert!(e.contains("did you mean llama-3-8b"), "{e}");
        assert!(!e.contains("resnet50"), "the whole list: {e}");
        let e = preset("qwen3-23b").unwrap_err().to_string();
        assert!(e.starts_with("unknown model 'qwen3-23b'; did you mean qwen3-32b"), "{e}");
        // Nothing alike: where the list is, not a guess.
        let e = preset("zzzz").unwrap_err().to_string();
        assert!(e.contains("run `wavecast models`") && !e.contains("did you mean"), "{e}");
    }
}

#[cfg(test)]
mod dtype_rule_tests {
    use super::*;
    use wavecast_ir::DType;

    #[test]
    fn training_format_follows_the_rule() {
        let rule = |p: &str| default_train_dtype(Some(p), preset_text(p)).0;
        assert_eq!(rule("gpt2-large"), DType::Fp32);
        assert_eq!(rule("bert-base"), DType::Fp32);
        assert_eq!(rule("llama-3-8b"), DType::Bf16);
        assert_eq!(rule("llama-2-7b"), DType::Fp16, "its config says float16");
        assert_eq!(default_train_dtype(None, Some(r#"{"model_type":"llama"}"#)).0, DType::Bf16);
        assert_eq!(default_train_dtype(None, Some(r#"{"torch_dtype":"float32"}"#)).0, DType::Fp32);
        assert_eq!(default_train_dtype(None, Some(r#"{"dtype":"float16"}"#)).0, DType::Fp16, "the key newer transformers write");
    }
}
