//! `wavecast models`: the built-in presets.

use super::{print_json, Result};
use crate::cli::JsonFlag;
use crate::table;
use serde::Serialize;
use wavecast_ir::DType;
use wavecast_workload::zoo::{self, Input, ZooOptions};
use wavecast_workload::{build, presets, BuildOptions, Head, Mode};

fn opt(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

#[derive(Serialize)]
struct Row {
    name: String,
    arch: String,
    params: u64,
    layers: Option<u64>,
    hidden: Option<u64>,
    heads: Option<u64>,
    kv_heads: Option<u64>,
    vocab: Option<u64>,
    experts: Option<u64>,
    /// Built-in non-transformer models (vision, GAN, recurrent): one sample's input.
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<String>,
    /// Forward multiply-accumulates per sample at the default input (image models).
    #[serde(skip_serializing_if = "Option::is_none")]
    macs: Option<f64>,
}

pub fn run(a: JsonFlag) -> Result<()> {
    let mut rows = Vec::new();
    for name in presets::names() {
        let s = presets::preset(name)?;
        let mut o = BuildOptions::new(1, 8, Mode::Inference, DType::Fp32);
        if s.arch == wavecast_workload::Arch::Bert {
            o.head = Head::None;
        }
        let params = build(&s, &o)?.params();
        rows.push(Row {
            name: name.to_string(),
            arch: format!("{:?}", s.arch).to_lowercase(),
            params,
            layers: Some(s.layers),
            hidden: Some(s.hidden),
            heads: Some(s.heads),
            kv_heads: Some(s.kv_heads),
            vocab: Some(s.vocab),
            experts: s.moe.map(|m| m.experts),
            input: None,
            macs: None,
        });
    }
    for m in zoo::MODELS {
        let o = ZooOptions::new(1, 50, Mode::Inference, DType::Fp32);
        let macs = match m.input {
            Input::Image(_) => Some(zoo::forward_macs(&m.build(&o)?)),
            _ => None,
        };
        rows.push(Row {
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
        });
    }
    if a.json {
        return print_json(&rows);
    }
    let mut t = table::new(&["model", "family", "params", "layers", "hidden", "heads", "kv heads", "experts", "input (per sample; seq 50 shown)"]);
    for r in &rows {
        t.add_row(vec![
            r.name.clone(),
            r.arch.clone(),
            table::si(r.params as f64),
            opt(r.layers),
            opt(r.hidden),
            opt(r.heads),
            opt(r.kv_heads),
            opt(r.experts),
            r.input.clone().unwrap_or_else(|| "tokens".into()),
        ]);
    }
    println!("{t}");
    println!("Any Hugging Face config.json of the transformer families works with `--config FILE`; any ONNX file with `--onnx FILE`.");
    Ok(())
}
