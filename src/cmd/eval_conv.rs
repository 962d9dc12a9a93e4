//! `wavecast eval conv`: leave-one-GPU-out accuracy of the convolution model
//! (`wavecast::eval::conv`). `--retrain FILE` first trains the model (all GPUs and one per
//! left-out GPU, with `wavecast-train`) and writes its weights, which is how
//! `crates/wavecast-predict/weights/conv.json` is made.

use super::{check_html, print_json, write_html, Result};
use crate::cli::EvalConvArgs;
use crate::table;
use wavecast::eval::conv::{evaluate, load_samples, EvalConv};
use wavecast::Catalog;
use wavecast_predict::conv::{ConvSample, ConvWeights};

pub fn run(a: EvalConvArgs) -> Result<()> {
    if let Some(out) = &a.retrain {
        super::check_output_path(out, a.force)?;
    }
    check_html(&a.html)?;
    let cat = Catalog::load(a.gpu_file.gpu_file.as_deref())?;
    let (samples, summary) = load_samples(&a.data, &cat)?;
    eprintln!("{summary}");
    let (weights, retrained) = match retrain(&a, &samples)? {
        Some(w) => (w, true),
        None => (ConvWeights::shipped()?, false),
    };
    let report = evaluate(&a.data, &samples, &weights, retrained)?;
    write_html(&a.html, wavecast::html::Kind::EvalConv, None, &report)?;
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

fn print_markdown(r: &EvalConv) {
    println!("Leave-one-GPU-out (LOGO): each GPU's convolutions are predicted by the model trained on the");
    println!("other GPUs' measurements only. Latency of one isolated forward `nn.Conv2d` call (FP32,");
    println!("NeuSight's random shapes: batch 1–64, channels 3–2048, kernel 1–11, stride 1–4, image 1–256).");
    println!("APE = |predicted − measured| / measured, in %.\n");
    println!("| GPU | rows | method | mean APE | median APE | p90 APE |");
    println!("|---|---|---|---|---|---|");
    for g in &r.per_gpu {
        for m in &g.methods {
            println!("| {} | {} | {} | {:.1} | {:.1} | {:.1} |", g.gpu, g.rows, m.method, m.stats.mean_ape, m.stats.median_ape, m.p90_ape);
        }
    }
    println!("\nMean over the {} GPUs:\n", r.per_gpu.len());
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
    super::write_atomically(out, &(serde_json::to_string(&w)? + "\n"))?;
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
