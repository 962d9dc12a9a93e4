//! `wavecast models`: the built-in presets.

use super::{print_json, Result};
use crate::cli::JsonFlag;
use crate::table;

fn opt(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

pub fn run(a: JsonFlag) -> Result<()> {
    let rows = wavecast::models()?;
    if a.json {
        return print_json(&rows);
    }
    let mut t = table::new(&["model (other names)", "family", "params", "layers", "hidden", "heads", "kv heads", "experts", "input (per sample; seq 50 shown)"]);
    for r in &rows {
        t.add_row(vec![
            if r.aliases.is_empty() { r.name.clone() } else { format!("{} ({})", r.name, r.aliases.join(", ")) },
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
    println!("Hugging Face ids work too (meta-llama/Llama-3.1-8B-Instruct is llama-3-8b's architecture).");
    println!("Any Hugging Face config.json of the transformer families works with `--config FILE`; any ONNX file with `--onnx FILE`.");
    Ok(())
}
