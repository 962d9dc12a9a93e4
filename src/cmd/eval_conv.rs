//! `wavecast eval conv`: leave-one-GPU-out accuracy of the convolution model on NeuSight's
//! forward-convolution measurements (`ops/train/conv/*.csv`, four GPUs), beside a Li et al.-style
//! linear baseline fitted the same way and the plain roofline. `--retrain FILE` first trains the
//! model (all GPUs and one per left-out GPU, with `wavecast-train`) and writes its weights,
//! which is how `crates/wavecast-predict/weights/conv.json` is made. The linear baseline is
//! fitted by `wavecast-train` too: without the `train` feature it is left out.

use super::{print_json, Result};
use crate::cli::EvalConvArgs;
use crate::table;
use serde::Serialize;
use std::collections::BTreeMap;
use wavecast::Catalog;
use wavecast_data::load_neusight_dir;
use wavecast_ir::OpClass;
use wavecast_predict::conv::{conv_samples, ConvSample, ConvWeights};
use wavecast_predict::sample::LAUNCH_GAP_S;
use wavecast_stats::{ape, Summary as Stats};

#[derive(Serialize)]
struct MethodStats {
    method: &'static str,
    #[serde(flatten)]
    stats: Stats,
    p90_ape: f64,
}

#[derive(Serialize)]
struct GpuReport {
    gpu: String,
    /// Rows of this GPU; every method is judged on all of them.
    rows: usize,
    methods: Vec<MethodStats>,
}

#[derive(Serialize)]
struct Report {
    data: String,
    seed: u64,
    retrained: bool,
    per_gpu: Vec<GpuReport>,
    /// Mean over the four GPUs of each method's per-GPU mean and median APE.
    overall: Vec<MethodStats>,
}

fn terms(s: &ConvSample) -> [f64; 3] {
    let c = &s.conv;
    [2.0 * c.macs() / s.gpu.peak_flops(OpClass::Conv, c.dtype), c.bytes() / s.gpu.bandwidth(), 1.0]
}

fn method(name: &'static str, apes: &[f64]) -> MethodStats {
    let mut v = apes.to_vec();
    v.sort_by(f64::total_cmp);
    let p90 = v.get(((v.len().max(1) - 1) as f64 * 0.9) as usize).copied().unwrap_or(0.0);
    MethodStats { method: name, stats: Stats::of(apes), p90_ape: p90 }
}

pub fn run(a: EvalConvArgs) -> Result<()> {
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    let dir = a.data.join("ops/train/conv");
    if !dir.is_dir() {
        return Err(format!("{} is not a directory (expected NeuSight's ops/train/conv)", dir.display()).into());
    }
    let loaded = load_neusight_dir(&dir, &cat)?;
    let samples = conv_samples(&loaded.rows, &cat);
    if samples.is_empty() {
        return Err(format!("no convolution rows under {}", dir.display()).into());
    }
    eprintln!("{}: {}", dir.display(), loaded.summary());
    let retrained = retrain(&a, &samples)?;
    let is_retrained = retrained.is_some();
    let weights = match retrained {
        Some(w) => w,
        None => ConvWeights::shipped()?,
    };
    let mut gpus: Vec<String> = samples.iter().map(|s| s.gpu.id.clone()).collect();
    gpus.sort();
    gpus.dedup();
    let mut per_gpu = Vec::new();
    // Per method: the per-GPU mean, median and p90 APEs.
    let mut sums: BTreeMap<&'static str, [Vec<f64>; 3]> = BTreeMap::new();
    for g in &gpus {
        let test: Vec<&ConvSample> = samples.iter().filter(|s| &s.gpu.id == g).collect();
        let train: Vec<&ConvSample> = samples.iter().filter(|s| &s.gpu.id != g).collect();
        let held = weights.holdout.get(g).ok_or_else(|| format!("the conv weights have no model trained without {g}"))?;
        let mut apes: Vec<(&'static str, Vec<f64>)> = vec![("conv model (LOGO)", test.iter().map(|s| ape(held.isolated_seconds(&s.conv, &s.gpu), s.latency_s)).collect())];
        if let Some(lin) = fit_linear(&train) {
            apes.push(("li-style linear (LOGO)", test.iter().map(|s| ape(terms(s).iter().zip(lin).map(|(t, c)| t * c).sum::<f64>().max(1e-7), s.latency_s)).collect()));
        }
        apes.push(("roofline", test.iter().map(|s| {
            let [tc, tm, _] = terms(s);
            ape(tc.max(tm) + LAUNCH_GAP_S, s.latency_s)
        }).collect()));
        apes.push(("conv model (all GPUs, in-sample)", test.iter().map(|s| ape(weights.all.isolated_seconds(&s.conv, &s.gpu), s.latency_s)).collect()));
        let methods: Vec<MethodStats> = apes.iter().map(|(n, v)| method(n, v)).collect();
        for m in &methods {
            let e = sums.entry(m.method).or_default();
            e[0].push(m.stats.mean_ape);
            e[1].push(m.stats.median_ape);
            e[2].push(m.p90_ape);
        }
        per_gpu.push(GpuReport { gpu: g.clone(), rows: test.len(), methods });
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let order = ["conv model (LOGO)", "li-style linear (LOGO)", "roofline", "conv model (all GPUs, in-sample)"];
    let overall = order
        .iter()
        .filter_map(|name| sums.get(name).map(|[m, md, p]| MethodStats {
            method: name,
            stats: Stats { n: gpus.len() as u32, mean_ape: mean(m), median_ape: mean(md), max_ape: m.iter().copied().fold(0.0, f64::max) },
            p90_ape: mean(p),
        }))
        .collect();
    let report = Report { data: a.data.display().to_string(), seed: weights.seed, retrained: is_retrained, per_gpu, overall };
    if a.json {
        return print_json(&report);
    }
    if a.markdown {
        print_markdown(&report);
        return Ok(());
    }
    let mut t = table::new(&["GPU", "rows", "method", "mean APE", "median", "p90"]);
    for g in &report.per_gpu {
        for m in &g.methods {
            t.add_row(vec![g.gpu.clone(), g.rows.to_string(), m.method.to_string(), table::pct(m.stats.mean_ape), table::pct(m.stats.median_ape), table::pct(m.p90_ape)]);
        }
    }
    println!("{t}");
    for m in &report.overall {
        println!("{:34} mean of per-GPU mean APE {:5.1}%, of median APE {:5.1}%", m.method, m.stats.mean_ape, m.stats.median_ape);
    }
    Ok(())
}

fn print_markdown(r: &Report) {
    println!("Leave-one-GPU-out (LOGO): each GPU's convolutions are predicted by the model trained on the");
    println!("other three GPUs' measurements only. Latency of one isolated forward `nn.Conv2d` call (FP32,");
    println!("NeuSight's random shapes: batch 1–64, channels 3–2048, kernel 1–11, stride 1–4, image 1–256).");
    println!("APE = |predicted − measured| / measured, in %.\n");
    println!("| GPU | rows | method | mean APE | median APE | p90 APE |");
    println!("|---|---|---|---|---|---|");
    for g in &r.per_gpu {
        for m in &g.methods {
            println!("| {} | {} | {} | {:.1} | {:.1} | {:.1} |", g.gpu, g.rows, m.method, m.stats.mean_ape, m.stats.median_ape, m.p90_ape);
        }
    }
    println!("\nMean over the four GPUs:\n");
    println!("| method | mean APE | median APE | p90 APE | worst GPU mean APE |");
    println!("|---|---|---|---|---|");
    for m in &r.overall {
        println!("| {} | {:.1} | {:.1} | {:.1} | {:.1} |", m.method, m.stats.mean_ape, m.stats.median_ape, m.p90_ape, m.stats.max_ape);
    }
}

/// With `--retrain FILE`: trains the model (`wavecast-train`) and writes its weights to FILE.
#[cfg(feature = "train")]
fn retrain(a: &EvalConvArgs, samples: &[ConvSample]) -> Result<Option<ConvWeights>> {
    let Some(out) = &a.retrain else { return Ok(None) };
    let say = |m: &str| eprintln!("training conv model ({m})");
    let w = wavecast_train::conv::train(samples, a.seed, Some(&say))?;
    std::fs::write(out, serde_json::to_string(&w)? + "\n").map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!("wrote {}", out.display());
    Ok(Some(w))
}

#[cfg(not(feature = "train"))]
fn retrain(a: &EvalConvArgs, _: &[ConvSample]) -> Result<Option<ConvWeights>> {
    match a.retrain {
        Some(_) => Err("--retrain needs wavecast built with the `train` feature".into()),
        None => Ok(None),
    }
}

/// The linear baseline's coefficients on the training GPUs (`None` without `wavecast-train`).
#[cfg(feature = "train")]
fn fit_linear(train: &[&ConvSample]) -> Option<[f64; 3]> {
    Some(wavecast_train::conv::fit_linear(train))
}

#[cfg(not(feature = "train"))]
fn fit_linear(_: &[&ConvSample]) -> Option<[f64; 3]> {
    None
}
