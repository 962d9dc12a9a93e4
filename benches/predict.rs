//! `cargo bench`: how long one prediction takes. Prints figures; asserts nothing.
//!
//! The target: a full GPT-3 175B training step (graph build + per-op prediction + aggregation)
//! in under 5 ms on one core with the default predictor; `plan train` at 100,000 or more
//! candidate layouts per second on one core; a serving simulation of 10,000 requests in well
//! under a second.

use std::time::Instant;
use wavecast_gpu::Catalog;
use wavecast_ir::DType;
use wavecast_workload::{build, presets, BuildOptions, Mode};

fn time<F: FnMut()>(label: &str, runs: u32, mut f: F) {
    f();
    let start = Instant::now();
    for _ in 0..runs {
        f();
    }
    let per = start.elapsed().as_secs_f64() / runs as f64;
    println!("{label:<58} {:>9.3} ms", per * 1e3);
}

fn main() {
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gpt3-175b.json");
    let spec = presets::load_config(&config).expect("bench/gpt3-175b.json");
    let cat = Catalog::builtin();
    let gpu = cat.get("a100").unwrap().clone();
    let load = Instant::now();
    let predictor = wavecast_predict::by_name(wavecast_predict::DEFAULT_PREDICTOR).unwrap();
    println!("{:<58} {:>9.3} ms", "load default predictor (once per process)", load.elapsed().as_secs_f64() * 1e3);
    let opts = BuildOptions::new(1, 2048, Mode::Training, DType::Bf16);
    time("GPT-3 175B training step: build graph", 200, || {
        std::hint::black_box(build(&spec, &opts).unwrap());
    });
    let graph = build(&spec, &opts).unwrap();
    println!("  ({} nodes, {:.3e} FLOP)", graph.nodes.len(), graph.total_flops());
    time("GPT-3 175B training step: predict + aggregate", 200, || {
        std::hint::black_box(wavecast_sim::estimate(&graph, &gpu, predictor.as_ref()).unwrap());
    });
    time("GPT-3 175B training step: build + predict + aggregate", 200, || {
        let g = build(&spec, &opts).unwrap();
        std::hint::black_box(wavecast_sim::estimate(&g, &gpu, predictor.as_ref()).unwrap());
    });
    // GPUs without BF16 units refuse the step (as `predict` does), so they are left out.
    let bf16: Vec<_> = cat.all().iter().filter(|g| g.check_dtype(DType::Bf16).is_ok()).collect();
    time(&format!("same, on the {} catalog GPUs with BF16", bf16.len()), 20, || {
        let g = build(&spec, &opts).unwrap();
        for gpu in &bf16 {
            std::hint::black_box(wavecast_sim::estimate(&g, gpu, predictor.as_ref()).unwrap());
        }
    });
    plan_speed(&spec, predictor.as_ref());
    serving_speed();
}

/// The continuous-batching simulator: pricing a deployment's iteration tables once, then
/// 10,000 requests (Poisson arrivals, drawn lengths) through it.
fn serving_speed() {
    use wavecast_sim::serving::{Arrival, Backend, Formats, Layout, Lengths, Load, Pool, Prepared, ServeSimOptions};
    let cat = Catalog::builtin();
    let h200 = cat.get("h200").unwrap();
    for (name, layout, quant) in [("llama-3.1-70b", "tp4", "fp8"), ("deepseek-v3", "tp8,ep8", "fp8_block")] {
        let spec = presets::preset(name).unwrap();
        let pool: Pool = layout.parse().unwrap();
        let quant = Some(quant.parse().unwrap());
        let options = ServeSimOptions {
            layout: Layout::Agg { pool },
            formats: Formats { dtype: DType::Bf16, quant, moe_quant: quant, kv: DType::Fp8 },
            backend: "vllm".parse::<Backend>().unwrap(),
            max_batched_tokens: None,
            chunk_tokens: None,
            chunked_prefill: true,
            prefix_caching: false,
            shared_prefix: 0,
            slo: None,
            ops_data: None,
        };
        let load = Load::synthetic(10_000, Arrival::Rate { per_s: 20.0 }, "uniform:256:4096".parse::<Lengths>().unwrap(), "uniform:64:1024".parse::<Lengths>().unwrap(), 1).unwrap();
        let start = Instant::now();
        let prepared = Prepared::new(&spec, h200, &options, load.max_context()).unwrap();
        println!("{:<58} {:>9.3} ms", format!("serving: price {name} {layout} on H200 (once)"), start.elapsed().as_secs_f64() * 1e3);
        // Issue 31's target (a deployment priced in ≤ 5 ms) is for a process that has loaded
        // its tables: the best of three more pricings of the same deployment.
        let warm = (0..3)
            .map(|_| {
                let start = Instant::now();
                let _ = Prepared::new(&spec, h200, &options, load.max_context()).unwrap();
                start.elapsed().as_secs_f64() * 1e3
            })
            .fold(f64::INFINITY, f64::min);
        println!("{:<58} {:>9.3} ms", "serving: price it again (tables loaded, best of 3)", warm);
        let start = Instant::now();
        let r = prepared.run(&load).unwrap();
        println!("{:<58} {:>9.3} ms", "serving: simulate 10,000 requests", start.elapsed().as_secs_f64() * 1e3);
        println!("  ({} iterations, {:.0} output tokens/s per GPU)", r.engine.iterations, r.metrics.output_tokens_per_s_per_gpu);
    }
}

/// Layouts per second of `plan train` for GPT-3 175B on 1,024 H100s (every candidate priced,
/// each micro-batch graph once).
fn plan_speed(spec: &wavecast_workload::TransformerSpec, predictor: &dyn wavecast_predict::Predictor) {
    use wavecast_sim::{plan_train, PlanRequest, Topology};
    let cat = Catalog::builtin();
    let h100 = cat.get("h100-sxm").unwrap();
    let adam = wavecast_ir::ops::OptimizerKind::Adam;
    let req = PlanRequest { gpus: 1024, global_batch: 1536, seq: 2048, dtype: DType::Bf16, optimizer: adam, stack: wavecast_workload::Stack::EAGER, topology: Topology::eight_per_node(), tokens: 300e9, top: 10, power_limit_w: None };
    let comm = wavecast_predict::comm::CommModel::default();
    let start = Instant::now();
    let plan = plan_train(spec, &req, h100, predictor, &comm).unwrap();
    let seconds = start.elapsed().as_secs_f64();
    let label = format!("plan train GPT-3 175B on 1024 H100 ({} layouts, {} fit)", plan.evaluated, plan.fitting);
    println!("{label:<58} {:>9.0} layouts/s", plan.evaluated as f64 / seconds);
}
