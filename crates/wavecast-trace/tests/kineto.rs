//! The real PyTorch profiler traces in `shared/data/kineto` (HolisticTraceAnalysis test data):
//! import, device mapping, occupancy against what the profiler reported, and scaling.

use std::path::PathBuf;
use wavecast_gpu::occupancy::{occupancy, KernelResources};
use wavecast_gpu::Catalog;
use wavecast_predict::wave_scaling::WaveForm;
use wavecast_test_support::shared;
use wavecast_trace::scale::{scale, GammaSource, Options, ScalePath};
use wavecast_trace::{load, match_device, Trace};

/// Tests call this first and return on `false`: every one reads the shared traces.
fn have_traces() -> bool {
    shared("data/kineto").is_some()
}

fn kineto_path(file: &str) -> PathBuf {
    shared("data/kineto").expect("checked by have_traces").join(file)
}

fn kineto(file: &str) -> Trace {
    let p = kineto_path(file);
    load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (file, kernels per DATA.md, shapes recorded)
const TRACES: [(&str, usize, bool); 7] = [
    ("a100_alexnet_train.json.gz", 79, false),
    ("v100_sxm2_rank0.json.gz", 4350, false),
    ("a100_sxm4_80gb_rank0.json.gz", 6080, true),
    ("a100_control.json.gz", 8568, true),
    ("sampled_rank0.json.gz", 1154, true),
    ("a100_triton_example.json.gz", 1, true),
    ("mi250_minitoy_train.json.gz", 14, true),
];

#[test]
fn every_trace_imports_with_its_kernels_linked() {
    if !have_traces() {
        return;
    }
    for (file, kernels, shapes) in TRACES {
        let t = kineto(file);
        assert_eq!(t.kernels.len(), kernels, "{file}");
        assert_eq!(t.has_shapes(), shapes, "{file}");
        let linked = t.kernels.iter().filter(|k| k.op.is_some()).count();
        // Kernels launched outside any recorded op (NCCL from the comm thread, autograd
        // engine internals) exist, but most kernels have their op.
        assert!(linked as f64 >= 0.6 * kernels as f64, "{file}: {linked}/{kernels} linked");
    }
}

#[test]
fn devices_map_to_the_catalog() {
    if !have_traces() {
        return;
    }
    let cat = Catalog::builtin();
    for (file, want) in [
        ("a100_sxm4_80gb_rank0.json.gz", "a100-sxm-80gb"),
        ("v100_sxm2_rank0.json.gz", "v100-sxm2"),
        ("a100_control.json.gz", "a100-sxm-40gb"),
        ("mi250_minitoy_train.json.gz", "mi250"),
    ] {
        let t = kineto(file);
        assert_eq!(match_device(t.main_device().unwrap(), &cat).unwrap().gpu, want, "{file}");
    }
    assert!(kineto("sampled_rank0.json.gz").main_device().is_none());
}

/// Kineto's `est. achieved occupancy %` is 100 × min(resident blocks, grid/SMs) × threads per
/// block ÷ max threads per SM, with resident blocks from CUDA's occupancy calculator run with
/// the default (non-opt-in) 48 KiB shared-memory limit — kernels above it report 0, so they
/// are left out. Every other distinct launch must agree with our calculator.
#[test]
fn occupancy_matches_what_the_profiler_reported() {
    if !have_traces() {
        return;
    }
    let cat = Catalog::builtin();
    let mut checked = 0;
    for (file, gpu) in [
        ("a100_control.json.gz", "a100-sxm-40gb"),
        ("v100_sxm2_rank0.json.gz", "v100-sxm2"),
        ("a100_sxm4_80gb_rank0.json.gz", "a100-sxm-80gb"),
        ("a100_alexnet_train.json.gz", "a100-sxm-40gb"),
    ] {
        let g = cat.get(gpu).unwrap();
        let t = kineto(file);
        let mut seen = std::collections::HashSet::new();
        for k in &t.kernels {
            let (Some(grid), Some(block), Some(regs), Some(smem), Some(rep)) =
                (k.grid, k.block, k.registers_per_thread, k.shared_mem_bytes, k.reported_occupancy_pct)
            else {
                continue;
            };
            if smem > 48 * 1024 || !seen.insert((grid, block, regs, smem)) {
                continue;
            }
            let threads = (block[0] * block[1] * block[2]) as u32;
            let res = KernelResources { threads_per_block: threads, registers_per_thread: regs, shared_mem_bytes: smem as u32 };
            let resident = occupancy(g, &res).unwrap().blocks_per_sm as f64;
            let per_sm = (grid[0] * grid[1] * grid[2]) as f64 / g.sm_count as f64;
            let ours = 100.0 * resident.min(per_sm) * threads as f64 / g.occupancy.max_threads_per_sm as f64;
            // The profiler rounds a float32 value to an integer.
            assert!((ours - rep).abs() <= 0.5 + 1e-3, "{file}: {grid:?} {block:?} regs {regs} smem {smem}: ours {ours:.2}, reported {rep}");
            checked += 1;
        }
    }
    assert!(checked > 600, "only {checked} launches checked");
}

/// Sum of `dur` over `cat == "kernel"` events, read with a plain JSON parser (not ours).
fn independent_kernel_sum(file: &str) -> f64 {
    use std::io::Read;
    let p = kineto_path(file);
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap()).read_to_string(&mut text).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "kernel").map(|e| e["dur"].as_f64().unwrap()).sum()
}

#[test]
fn origin_time_is_the_kernel_sum_and_every_destination_is_priced() {
    if !have_traces() {
        return;
    }
    let cat = Catalog::builtin();
    let roofline = wavecast_predict::by_name(wavecast_predict::DEFAULT_PREDICTOR).unwrap();
    for (file, _, _) in TRACES.iter().filter(|t| !t.0.starts_with("mi250")) {
        let t = kineto(file);
        let sum = independent_kernel_sum(file);
        assert!((t.kernel_time_us() - sum).abs() <= 1e-9 * sum, "{file}: {} vs {sum}", t.kernel_time_us());
        let origin = match t.main_device() {
            Some(d) => cat.get(&match_device(d, &cat).unwrap().gpu).unwrap(),
            None => cat.get("a100-sxm-80gb").unwrap(),
        };
        for dest in ["h100", "l4", "a100"] {
            let d = cat.get(dest).unwrap();
            for predictor in [None, Some(roofline.as_ref())] {
                let s = scale(&t, origin, d, &Options { form: WaveForm::Wavecast, gamma: GammaSource::Wavecast, predictor });
                assert_eq!(s.origin_us, t.kernel_time_us(), "{file}");
                assert!(s.dest_us.is_finite() && s.dest_us > 0.0, "{file} → {dest}");
                assert_eq!(s.kernels.len(), t.kernels.len());
                let by_class: f64 = s.classes.iter().map(|c| c.dest_us).sum();
                assert!((by_class - s.dest_us).abs() <= 1e-6 * s.dest_us);
            }
        }
    }
}

#[test]
fn faster_gpus_come_out_faster() {
    if !have_traces() {
        return;
    }
    let cat = Catalog::builtin();
    let t = kineto("v100_sxm2_rank0.json.gz");
    let v100 = cat.get("v100-sxm2").unwrap();
    let opts = Options { form: WaveForm::Wavecast, gamma: GammaSource::Wavecast, predictor: None };
    let h100 = scale(&t, v100, cat.get("h100").unwrap(), &opts).dest_us;
    let l4 = scale(&t, v100, cat.get("l4").unwrap(), &opts).dest_us;
    let same = scale(&t, v100, v100, &opts).dest_us;
    assert!((same - t.kernel_time_us()).abs() < 1e-6 * same, "identity scaling changed the time: {same}");
    assert!(h100 < 0.7 * same, "H100 {h100} vs V100 {same}");
    // L4 has a third of V100's bandwidth: a ResNet training step is slower there.
    assert!(l4 > same, "L4 {l4} vs V100 {same}");
}

#[test]
fn hybrid_sends_gemms_with_shapes_to_the_predictor() {
    if !have_traces() {
        return;
    }
    let cat = Catalog::builtin();
    let t = kineto("sampled_rank0.json.gz");
    let roofline = wavecast_predict::by_name("roofline").unwrap();
    let (a100, h100) = (cat.get("a100-sxm-80gb").unwrap(), cat.get("h100").unwrap());
    let s = scale(&t, a100, h100, &Options { form: WaveForm::Wavecast, gamma: GammaSource::Wavecast, predictor: Some(roofline.as_ref()) });
    assert!(s.paths.get(&ScalePath::Predictor).copied().unwrap_or(0) > 100, "{:?}", s.paths);
    assert!(s.paths.get(&ScalePath::Unchanged).copied().unwrap_or(0) > 0, "NCCL kernels are carried over");
}
