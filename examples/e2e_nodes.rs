//! Where an end-to-end prediction gains or loses: per FX node of one NeuSight label, the in-run
//! time the `wavecast` model trained without the label's GPU predicts beside the per-node
//! latency in the label's CSV (one layer's nodes; `repeat` is how often each runs), as CSV.
//!
//!   cargo run --release --example e2e_nodes -- DATA GPU_DIR WORKLOAD [PREDICTOR]
//!   cargo run --release --example e2e_nodes -- ../shared/data/neusight Tesla_P4 gpt2_large-inf-1024-4
use std::collections::BTreeMap;
use std::path::Path;
use wavecast_predict::{Context, Estimate};

/// Predicted milliseconds, run count and the ops' descriptions of one FX node.
struct NodePrice {
    ms: f64,
    repeat: u64,
    ops: Vec<String>,
}

fn run(data: &Path, gpu_dir: &str, workload: &str, predictor: &str) -> Result<(), String> {
    let cat = wavecast_gpu::Catalog::builtin();
    let gpu = cat.get(gpu_dir).map_err(|e| e.to_string())?;
    let p = wavecast_predict::by_name_with(predictor, Some(&gpu.id), None).map_err(|e| e.to_string())?;
    let label = wavecast_data::load_labels(data)
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|l| l.gpu_dir == gpu_dir && l.workload == workload)
        .ok_or_else(|| format!("no label {gpu_dir}/{workload}.json under {}", data.display()))?;
    let graph_path = data.join("opgraph").join(format!("{workload}.csv"));
    let text = std::fs::read_to_string(&graph_path).map_err(|e| format!("{}: {e}", graph_path.display()))?;
    let graph = wavecast_workload::neusight::import_opgraph(&text, workload, label.num_layer).map_err(|e| e.to_string())?;
    let mut priced: BTreeMap<String, NodePrice> = BTreeMap::new();
    for n in &graph.nodes {
        let node = n.name.rsplit_once('.').map_or(n.name.as_str(), |(node, _)| node).to_string();
        if let Estimate::Time(t) = p.predict(&n.op, gpu, &Context::IN_MODEL) {
            let e = priced.entry(node).or_insert(NodePrice { ms: 0.0, repeat: n.repeat, ops: Vec::new() });
            e.ms += t.seconds * 1e3;
            e.ops.push(n.op.describe());
        }
    }
    let csv_path = data.join("label").join(gpu_dir).join(format!("{workload}.csv"));
    let mut rdr = csv::Reader::from_path(&csv_path).map_err(|e| format!("{}: {e}", csv_path.display()))?;
    let headers = rdr.headers().map_err(|e| e.to_string())?.clone();
    let column = |n: &str| headers.iter().position(|h| h == n).ok_or_else(|| format!("{}: no column '{n}'", csv_path.display()));
    let (c_name, c_latency) = (column("Name")?, column("latency")?);
    println!("node,repeat,predicted_ms,measured_ms,ops");
    for rec in rdr.records() {
        let rec = rec.map_err(|e| e.to_string())?;
        let name = rec.get(c_name).unwrap_or("");
        let measured: f64 = rec.get(c_latency).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        match priced.get(name) {
            Some(n) => println!("{name},{},{:.4},{measured:.4},\"{}\"", n.repeat, n.ms, n.ops.join("; ")),
            None if measured > 0.0 => println!("{name},0,0,{measured:.4},\"\""),
            None => {}
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data, gpu_dir, workload, rest @ ..] = args.as_slice() else {
        eprintln!("usage: e2e_nodes DATA GPU_DIR WORKLOAD [PREDICTOR]");
        std::process::exit(2);
    };
    let predictor = rest.first().map_or("wavecast", String::as_str);
    if let Err(e) = run(Path::new(data), gpu_dir, workload, predictor) {
        eprintln!("{e}");
        std::process::exit(2);
    }
}
