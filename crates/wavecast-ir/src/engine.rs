//! The serving engines wavecast knows, and the one it assumes when none is named: the single
//! list the simulator's engine table, the measured-data reader, the price ladder's tables and
//! the command line all take their names from.

use serde::Serialize;
use std::str::FromStr;

/// A serving engine: its scheduler and host time (`wavecast-sim`) and its kernel tables (the
/// measured data's collections) differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Vllm,
    Sglang,
    Trtllm,
}

impl Engine {
    /// Every engine, the default first.
    pub const ALL: [Engine; 3] = [Engine::Vllm, Engine::Sglang, Engine::Trtllm];
    /// Their names, as `--backend` and the measured data's folders give them.
    pub const NAMES: [&'static str; 3] = [Engine::Vllm.name(), Engine::Sglang.name(), Engine::Trtllm.name()];
    /// The engine a request that names none runs in, and whose kernel tables answer a query
    /// that names none: vLLM, the one collection every system of the shared data has for
    /// every family wavecast reads.
    pub const DEFAULT: Engine = Engine::Vllm;

    pub const fn name(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
            Engine::Trtllm => "trtllm",
        }
    }

    pub fn is_default(self) -> bool {
        self == Engine::DEFAULT
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Engine {
    type Err = String;

    /// An engine's name in any case, or TensorRT-LLM's other spellings (`tensorrt-llm`,
    /// `tensorrt_llm`, `trt-llm`); anything else is an error naming the known ones.
    fn from_str(s: &str) -> Result<Engine, String> {
        let key = s.trim().to_ascii_lowercase();
        let key = match key.as_str() {
            "tensorrt-llm" | "tensorrt_llm" | "trt-llm" => "trtllm",
            other => other,
        };
        Engine::ALL.into_iter().find(|e| e.name() == key).ok_or_else(|| format!("unknown serving backend '{s}' (known: {})", Engine::NAMES.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_parse_by_every_spelling_and_unknown_ones_are_named() {
        for e in Engine::ALL {
            assert_eq!(e.name().parse::<Engine>(), Ok(e));
            assert_eq!(e.name().to_ascii_uppercase().parse::<Engine>(), Ok(e));
        }
        for s in ["tensorrt-llm", "TensorRT_LLM", "trt-llm"] {
            assert_eq!(s.parse::<Engine>(), Ok(Engine::Trtllm));
        }
        let err = "tgi".parse::<Engine>().unwrap_err();
        assert!(err.contains("'tgi'") && err.contains("vllm, sglang, trtllm"), "{err}");
        assert_eq!(Engine::ALL[0], Engine::DEFAULT);
        assert_eq!(serde_json::to_string(&Engine::Sglang).unwrap(), "\"sglang\"");
    }
}
