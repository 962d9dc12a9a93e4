//! A static batch is the simulator with a fixed batch and no arrivals: `predict --mode serve`
//! (`wavecast_sim::serve`) and `serve-sim` (`serving::serve_sim`) must give the same time to
//! first token, decode step and memory for the same single batch.

use wavecast_gpu::Catalog;
use wavecast_ir::DType;
use wavecast_predict::ladder::LadderOps;
use wavecast_sim::serve::{batch_options, default_backend};
use wavecast_sim::serving::{serve_sim, Arrival, Backend, Load, Pricing, Request, BACKENDS};
use wavecast_workload::presets::preset;
use wavecast_workload::ServeOptions;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn static_serve_and_serve_sim_agree_on_one_batch() {
    for backend in BACKENDS {
        static_serve_and_serve_sim_agree_in(*backend);
    }
}

fn static_serve_and_serve_sim_agree_in(backend: Backend) {
    let cat = Catalog::builtin();
    let ladder = LadderOps::shipped(None);
    // Dense and MoE models, one and several GPUs, prompt-heavy and decode-heavy batches.
    let cases = [("llama-3-8b", "h100-sxm", 1, 8, 1000, 64), ("qwen3-32b", "h200", 2, 16, 2048, 33), ("mixtral-8x7b", "h100-sxm", 4, 4, 512, 100), ("llama-3.2-1b", "a100-sxm-80gb", 1, 32, 128, 8)];
    for (model, gpu_id, tp, batch, input, output) in cases {
        let spec = preset(model).unwrap();
        let gpu = cat.get(gpu_id).unwrap();
        let mut o = ServeOptions::new(batch, input, output, DType::Bf16);
        o.tp = tp;
        let fixed = wavecast_sim::serve(&spec, gpu, Pricing::ladder(&ladder), &o, backend).unwrap();
        assert_eq!(fixed.backend, backend.name);
        // serve-sim with the same engine and limits, the batch's requests all at time 0 and
        // nothing in front of the engine (no arrivals to wait for).
        let mut options = batch_options(&o, backend).unwrap();
        options.backend.frontend_ms = 0.0;
        options.backend.server_ms = 0.0;
        options.backend.server_us_per_token = 0.0;
        let load = Load { arrival: Arrival::Trace, requests: (0..batch).map(|_| Request { arrival_s: 0.0, input_len: input, output_len: output }).collect() };
        let sim = serve_sim(&spec, gpu, &load, &options).unwrap();
        let m = &sim.metrics;
        let case = format!("{model} on {tp} × {gpu_id}, {batch} × ({input} + {output}) in {}", backend.name);
        assert!(close(m.ttft_ms.mean, fixed.prefill_ms) && close(m.ttft_ms.p99, fixed.prefill_ms), "{case}: TTFT {} vs {}", m.ttft_ms.mean, fixed.prefill_ms);
        let mean_step = (fixed.total_ms - fixed.prefill_ms) / (output - 1) as f64;
        assert!(close(m.tpot_ms.mean, mean_step), "{case}: TPOT {} vs {mean_step}", m.tpot_ms.mean);
        assert!(close(m.e2e_ms.mean, fixed.total_ms), "{case}: end to end {} vs {}", m.e2e_ms.mean, fixed.total_ms);
        assert!(fixed.decode_first_ms <= m.tpot_ms.mean + 1e-9 && m.tpot_ms.mean <= fixed.decode_last_ms + 1e-9, "{case}");
        assert_eq!(sim.engine.iterations, output, "{case}: one prefill and {} decode iterations", output - 1);
        let w = &sim.memory[0];
        assert!(close(w.weights_gb, fixed.weight_gb) && close(w.activations_gb, fixed.activation_gb) && close(w.runtime_gb, fixed.runtime_gb), "{case}: {w:?} vs {fixed:?}");
        // The engine's own time is in both: the decode step is its kernels plus the engine's.
        assert!((fixed.decode_classes["engine"] - options.backend.overhead_ms(spec.layers, batch)).abs() < 1e-9, "{case}");
        assert!(fixed.kv_cache_gb < w.kv_cache_gb, "{case}: the batch's cache fits the engine's pool");
    }
}

#[test]
fn a_batch_whose_cache_outgrows_the_engines_pool_does_not_fit() {
    let cat = Catalog::builtin();
    let ladder = LadderOps::shipped(None);
    let spec = preset("llama-3-8b").unwrap();
    // 48 × 8k tokens of cache is about 52 GB: more than the engine's share of an H100 leaves
    // beside 16 GB of weights and the activations of a 196k-token prefill.
    let o = ServeOptions::new(48, 4096, 4096, DType::Bf16);
    let e = wavecast_sim::serve(&spec, cat.get("h100-sxm").unwrap(), Pricing::ladder(&ladder), &o, default_backend()).unwrap_err().to_string();
    assert!(e.contains("does not fit in memory") && e.contains("KV cache"), "{e}");
}

#[test]
fn a_static_batch_runs_in_the_engine_it_names() {
    let cat = Catalog::builtin();
    let ladder = LadderOps::shipped(None);
    let spec = preset("qwen2.5-14b").unwrap();
    let gpu = cat.get("h100-sxm").unwrap();
    let mut o = ServeOptions::new(16, 1024, 64, DType::Bf16);
    o.tp = 2;
    let run = |name: &str| wavecast_sim::serve(&spec, gpu, Pricing::ladder(&ladder), &o, name.parse().unwrap()).unwrap();
    let (vllm, sglang, trtllm) = (run("vllm"), run("sglang"), run("tensorrt-llm"));
    let engine = |r: &wavecast_sim::ServeReport| r.decode_classes["engine"];
    // Each engine's own host time per iteration is in its decode step, the kernels are the same.
    for (r, b) in [(&vllm, "vllm"), (&sglang, "sglang"), (&trtllm, "trtllm")] {
        let backend: Backend = b.parse().unwrap();
        assert_eq!(r.backend, b);
        assert!((engine(r) - backend.overhead_ms(spec.layers, o.batch)).abs() < 1e-9, "{b}: {}", engine(r));
        assert!((r.decode_classes["layers"] - vllm.decode_classes["layers"]).abs() < 1e-9, "{b}");
        // The decode steps differ by the host time alone.
        assert!((r.decode_ms - engine(r) - (vllm.decode_ms - engine(&vllm))).abs() < 1e-9, "{b}");
    }
    // vLLM's host time grows with the layers (48 here: at 64, 25 µs each equal SGLang's 1.6 ms),
    // SGLang's is fixed whatever the model,
    // TensorRT-LLM's is hidden but for its time per sequence: the steps and the whole batch
    // order as the engines' host times.
    let mut by_host: Vec<(f64, &wavecast_sim::ServeReport)> = [(&vllm, "vllm"), (&sglang, "sglang"), (&trtllm, "trtllm")].into_iter().map(|(r, b)| (b.parse::<Backend>().unwrap().overhead_ms(spec.layers, o.batch), r)).collect();
    by_host.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(by_host[0].0 < by_host[1].0 && by_host[1].0 < by_host[2].0, "three different host times");
    assert!(by_host.windows(2).all(|w| w[0].1.decode_ms < w[1].1.decode_ms && w[0].1.total_ms < w[1].1.total_ms));
    // Every engine spends host time per sequence it runs: twice the batch, that much more.
    let mut twice = o.clone();
    twice.batch *= 2;
    for b in ["vllm", "sglang", "trtllm"] {
        let backend: Backend = b.parse().unwrap();
        let doubled = wavecast_sim::serve(&spec, gpu, Pricing::ladder(&ladder), &twice, backend).unwrap();
        let more = doubled.decode_classes["engine"] - run(b).decode_classes["engine"];
        assert!(backend.seq_overhead_ms > 0.0 && (more - backend.seq_overhead_ms * o.batch as f64).abs() < 1e-9, "{b}: {more}");
    }
    // And the engine is a serve-mode input: refused by name when unknown.
    assert!("tgi".parse::<Backend>().is_err());
}
