//! `wavecast models`: the built-in presets.

use super::{print_json, Result};
use crate::cli::JsonFlag;
use crate::table;
use serde::Serialize;
use wavecast_ir::DType;
use wavecast_workload::{build, presets, BuildOptions, Head, Mode};

#[derive(Serialize)]
struct Row {
    name: String,
    arch: String,
    params: u64,
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    vocab: u64,
    experts: Option<u64>,
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
            layers: s.layers,
            hidden: s.hidden,
            heads: s.heads,
            kv_heads: s.kv_heads,
            vocab: s.vocab,
            experts: s.moe.map(|m| m.experts),
        });
    }
    if a.json {
        return print_json(&rows);
    }
    let mut t = table::new(&["model", "family", "params", "layers", "hidden", "heads", "kv heads", "experts"]);
    for r in &rows {
        t.add_row(vec![
            r.name.clone(),
            r.arch.clone(),
            table::si(r.params as f64),
            r.layers.to_string(),
            r.hidden.to_string(),
            r.heads.to_string(),
            r.kv_heads.to_string(),
            r.experts.map(|e| e.to_string()).unwrap_or_else(|| "-".into()),
        ]);
    }
    println!("{t}");
    println!("Any Hugging Face config.json of these families works with `--config FILE`.");
    Ok(())
}
