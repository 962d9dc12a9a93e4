//! `wavecast train`: fit a learned predictor on per-op measurements, on all GPUs and (unless
//! `--no-holdout`) once per left-out GPU, and report its own held-out error.

use super::{catalog, Result};
use crate::cli::TrainArgs;
use crate::cmd::eval_ops::{family_errors, print_family_table};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use wavecast_data::load_neusight_dir;
use wavecast_predict::registry::{self, WeightsFile};
use wavecast_predict::sample::{samples, Sample};

fn bar(len: u64, msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(ProgressStyle::with_template("{msg:>28} [{bar:30}] {pos}/{len} {elapsed}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    pb.set_message(msg.to_string());
    pb
}

pub fn run(a: TrainArgs) -> Result<()> {
    let cat = catalog(&a.gpu_file)?;
    let dir = a.data.join("ops").join("train");
    eprintln!("loading {}", dir.display());
    let report = load_neusight_dir(&dir, &cat)?;
    eprintln!("{}", report.summary());
    let all = samples(&report.rows, &cat);
    if all.is_empty() {
        return Err(format!("no usable measurements under {}", dir.display()).into());
    }
    let mut gpus: Vec<String> = all.iter().map(|s| s.gpu.id.clone()).collect();
    gpus.sort();
    gpus.dedup();
    let runs = if a.no_holdout { 1 } else { 1 + gpus.len() as u64 };
    let pb = bar(runs, &format!("training {}", a.predictor));
    let full = registry::train(&a.predictor, &all, a.seed, Some(&pb))?;
    pb.inc(1);
    let mut holdout = BTreeMap::new();
    let mut held_errors = Vec::new();
    if !a.no_holdout {
        for g in &gpus {
            let train: Vec<Sample> = all.iter().filter(|s| &s.gpu.id != g).cloned().collect();
            let model = registry::train(&a.predictor, &train, a.seed, Some(&pb))?;
            let test: Vec<&Sample> = all.iter().filter(|s| &s.gpu.id == g).collect();
            let predictor = registry::load(&model)?;
            held_errors.push((g.clone(), family_errors(&test, predictor.as_ref())));
            holdout.insert(g.clone(), model);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let file = WeightsFile { all: full, holdout };
    if let Some(parent) = a.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&a.out, serde_json::to_string(&file)?)?;
    eprintln!("wrote {} ({} models)", a.out.display(), runs);
    if !held_errors.is_empty() {
        println!("validation: each GPU predicted by the model trained without it (ops/train rows, isolated latency)");
        print_family_table(&held_errors);
    }
    Ok(())
}
