//! What wavecast knows: the GPU catalog and the built-in models.

use crate::Result;
use serde::Serialize;
use std::path::Path;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::DType;
use wavecast_workload::zoo::{self, Input, ZooOptions};
use wavecast_workload::{build, presets, Arch, BuildOptions, Head, Mode};

/// Every GPU of the built-in catalog, with `gpu_file`'s entries merged over it.
pub fn gpus(gpu_file: Option<&Path>) -> Result<Vec<Gpu>> {
    Ok(Catalog::load(gpu_file)?.all().to_vec())
}

/// What the shipped modern-GPU kernel models (the `sustained` predictor) imply one GPU
/// sustains, beside its datasheet (the rows of `wavecast gpus --sustained`).
#[derive(Debug, Clone, Serialize)]
pub struct SustainedRow {
    pub id: String,
    /// Dense datasheet peaks, TFLOP/s, and DRAM bandwidth, GB/s.
    pub peak_bf16_tflops: Option<f64>,
    pub peak_fp8_tflops: Option<f64>,
    pub peak_fp4_tflops: Option<f64>,
    pub bandwidth_gbs: f64,
    #[serde(flatten)]
    pub implied: wavecast_predict::sustained::Implied,
}

/// [`SustainedRow`] for every GPU of the catalog (with `gpu_file` merged over it) that has
/// BF16 tensor units.
pub fn sustained(gpu_file: Option<&Path>) -> Result<Vec<SustainedRow>> {
    let model = wavecast_predict::sustained::Model::shipped();
    Ok(gpus(gpu_file)?
        .into_iter()
        .filter(|g| g.peak_tflops.bf16.is_some())
        .map(|g| SustainedRow { implied: model.implied(&g), id: g.id.clone(), peak_bf16_tflops: g.peak_tflops.bf16, peak_fp8_tflops: g.peak_tflops.fp8, peak_fp4_tflops: g.peak_tflops.fp4, bandwidth_gbs: g.memory_bandwidth_gbs })
        .collect())
}

/// One built-in model (the `--json` rows of `wavecast models`).
#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    pub name: String,
    pub arch: String,
    pub params: u64,
    pub layers: Option<u64>,
    pub hidden: Option<u64>,
    pub heads: Option<u64>,
    pub kv_heads: Option<u64>,
    pub vocab: Option<u64>,
    pub experts: Option<u64>,
    /// Built-in non-transformer models (vision, GAN, recurrent): one sample's input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Forward multiply-accumulates per sample at the default input (image models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub macs: Option<f64>,
    /// Other names `--model` takes for it (same architecture: `llama-3.1-8b` for `llama-3-8b`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<&'static str>,
}

/// Every built-in model: the transformer presets, then the vision, GAN and recurrent models.
pub fn models() -> Result<Vec<ModelInfo>> {
    let mut rows = Vec::new();
    for name in presets::names() {
        let s = presets::preset(name)?;
        let mut o = BuildOptions::new(1, 8, Mode::Inference, DType::Fp32);
        if s.arch == Arch::Bert {
            o.head = Head::None;
        }
        rows.push(ModelInfo {
            name: name.to_string(),
            arch: format!("{:?}", s.arch).to_lowercase(),
            // A few tokens wake only some of a large MoE's experts: count those from the config.
            params: if s.moe.is_some() && s.encdec.is_none() { s.params().total } else { build(&s, &o)?.params() },
            layers: Some(s.layers),
            hidden: Some(s.hidden),
            heads: Some(s.heads),
            kv_heads: Some(s.kv_heads),
            vocab: Some(s.vocab),
            experts: s.moe.map(|m| m.experts),
            input: None,
            macs: None,
            aliases: presets::aliases_of(name),
        });
    }
    for m in zoo::MODELS {
        let o = ZooOptions::new(1, 50, Mode::Inference, DType::Fp32);
        let macs = match m.input {
            Input::Image(_) => Some(zoo::forward_macs(&m.build(&o)?)),
            _ => None,
        };
        rows.push(ModelInfo {
            name: m.name.to_string(),
            arch: m.family.to_string(),
            params: m.param_count()?,
            layers: None,
            hidden: None,
            heads: None,
            kv_heads: None,
            vocab: None,
            experts: None,
            input: Some(m.describe_input(&o)),
            macs,
            aliases: Vec::new(),
        });
    }
    Ok(rows)
}
