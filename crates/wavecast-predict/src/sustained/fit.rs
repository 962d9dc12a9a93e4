//! Fitting the sustained roofline's numbers: per key, a coordinate search over bounded grids
//! that minimizes the mean absolute percentage error on the training GPUs' measurements. The
//! held-out GPU's rows are dropped before anything else, so no number ever saw them.

use super::{keys, Model, Params, Work, ACHIEVABLE_BANDWIDTH};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use wavecast_data::Timing;
use wavecast_gpu::Catalog;

#[derive(Debug, Clone)]
pub struct FitOptions {
    /// Fewest rows a key needs to get its own numbers (else a more general key prices it).
    pub min_rows: usize,
    /// Fewest GPUs a key's rows must come from: numbers fitted on one GPU describe that GPU,
    /// not the kernel family, so such keys defer to a more general one.
    pub min_gpus: usize,
    /// Most rows a key's search evaluates (an even stride through them).
    pub max_rows: usize,
    /// Coordinate-search rounds.
    pub rounds: usize,
    /// Learn the residual correction on top of the physics, for keys with rows from at least
    /// this many GPUs (its GPU-normalized features cannot be told apart from one GPU's quirks
    /// with fewer); 0 never.
    pub residual_min_gpus: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions { min_rows: 30, min_gpus: 2, max_rows: 2000, rounds: 6, residual_min_gpus: 3 }
    }
}

fn grid(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let n = ((hi - lo) / step).round() as usize;
    (0..=n).map(|i| lo + step * i as f64).collect()
}

/// Mean APE (%) of `p` over `rows`.
fn mean_ape(p: &Params, rows: &[(Work, f64)]) -> f64 {
    rows.iter().map(|(w, s)| wavecast_stats::ape(p.seconds(w), *s)).sum::<f64>() / rows.len().max(1) as f64
}

/// Mean APE (%) of `p` over `rows` if it is below `best`, else `None`. The terms are never
/// negative, so once the running sum reaches `best` the mean cannot fall below it; stopping
/// there skips most of the rows of a poor candidate and decides exactly as the full mean would.
fn mean_ape_below(p: &Params, rows: &[(Work, f64)], best: f64) -> Option<f64> {
    let n = rows.len().max(1) as f64;
    let mut sum = 0.0;
    for (w, s) in rows {
        sum += wavecast_stats::ape(p.seconds(w), *s);
        if sum / n >= best {
            return None;
        }
    }
    let mean = sum / n;
    (mean < best).then_some(mean)
}

/// Every `len / max`-th row, so large keys cost a bounded search.
fn stride<T: Clone>(rows: &[T], max: usize) -> Vec<T> {
    let step = rows.len().div_ceil(max.max(1)).max(1);
    rows.iter().step_by(step).cloned().collect()
}

/// The numbers for one key's rows.
fn fit_key(sample: &[(Work, f64)], gpus: usize, o: &FitOptions) -> Params {
    let mut p = Params { residual: Vec::new(), compute_efficiency: 0.8, memory_efficiency: 0.8, overhead_us: 5.0, per_gpu_us: 0.0, blend: 2.0, split_min: 512.0, sm_bandwidth: 4.0, wave_us: 0.0, row_ns: 0.0, gpus: gpus as u32, rows: sample.len() as u32 };
    // A number no row's time depends on leaves every error of its grid equal to the best, so
    // searching it changes nothing: it is not searched (the per-GPU latency of a kernel key, the
    // per-row quantization cost where nothing is quantized, the kernel numbers of a collective
    // key). Each coordinate says whether it is searched.
    let (kernels, collectives, quantized) = sample.iter().fold((false, false, false), |(k, c, q), (w, _)| match w {
        Work::Collective(_) => (k, true, q),
        Work::Kernel(x) => (true, c, q || x.quantized_rows != 0.0),
        Work::Chain(xs) => (true, c, q || xs.iter().any(|x| x.quantized_rows != 0.0)),
    });
    type Setter = fn(&mut Params, f64);
    let coordinates: [(bool, Vec<f64>, Setter); 9] = [
        (kernels, grid(0.2, 1.0, 0.01), |p, v| p.compute_efficiency = v),
        (true, grid(0.2, ACHIEVABLE_BANDWIDTH, 0.01), |p, v| p.memory_efficiency = v),
        (true, grid(0.0, 80.0, 0.5), |p, v| p.overhead_us = v),
        (collectives, grid(0.0, 20.0, 0.25), |p, v| p.per_gpu_us = v),
        (kernels, vec![1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0], |p, v| p.blend = v),
        (kernels, vec![64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 1e12], |p, v| p.split_min = v),
        (kernels, grid(1.0, 32.0, 0.5), |p, v| p.sm_bandwidth = v),
        (kernels, grid(0.0, 10.0, 0.1), |p, v| p.wave_us = v),
        (quantized, grid(0.0, 20.0, 0.25), |p, v| p.row_ns = v),
    ];
    let mut best = mean_ape(&p, sample);
    for _ in 0..o.rounds {
        let mut improved = false;
        for (_, values, set) in coordinates.iter().filter(|(searched, _, _)| *searched) {
            for &v in values {
                let mut q = p.clone();
                set(&mut q, v);
                if let Some(e) = mean_ape_below(&q, sample, best) {
                    best = e;
                    p = q;
                    improved = true;
                }
            }
        }
        // A round that moved nothing would be repeated exactly by the next one.
        if !improved {
            break;
        }
    }
    fit_residual(&mut p, sample, gpus, o);
    p
}

/// The learned correction: ridge least squares of ln(measured / physics) on [`features`].
fn fit_residual(p: &mut Params, sample: &[(Work, f64)], gpus: usize, o: &FitOptions) {
    if o.residual_min_gpus == 0 || gpus < o.residual_min_gpus {
        return;
    }
    let x: Vec<Vec<f64>> = sample.iter().map(|(w, _)| super::features(w)).collect();
    let y: Vec<f64> = sample.iter().map(|(w, s)| (s / p.physics_seconds(w)).ln()).collect();
    p.residual = wavecast_stats::fit::ridge_least_squares(&x, &y, 1.0);
}

/// Fits every key that has at least `min_rows` rows on GPUs other than `held_out` (a catalog
/// name; every source's rows of that GPU are left out). Rows whose GPU or format the catalog
/// cannot price are ignored.
pub fn fit(rows: &[Timing], catalog: &Catalog, held_out: Option<&str>, o: &FitOptions) -> Result<Model, String> {
    let held_out = held_out.map(|h| catalog.get(h).map(|g| g.id.clone()).map_err(|e| e.to_string())).transpose()?;
    // Each row's work once; the keys hold row indices.
    let mut samples: Vec<(Work, f64)> = Vec::new();
    let mut groups: BTreeMap<String, (Vec<u32>, BTreeSet<&str>)> = BTreeMap::new();
    for t in rows.iter().filter(|t| Some(&t.gpu) != held_out.as_ref()) {
        let Ok(gpu) = catalog.get(&t.gpu) else { continue };
        let Ok(work) = Work::of(&t.shape, t.precision, gpu) else { continue };
        for key in keys(t, &work) {
            let g = groups.entry(key).or_default();
            g.0.push(samples.len() as u32);
            g.1.insert(&t.gpu);
        }
        samples.push((work, t.latency_ms * 1e-3));
    }
    let trained_on: BTreeSet<String> = groups.values().flat_map(|g| g.1.iter().map(|s| s.to_string())).collect();
    // Keys are fitted independently, on as many threads as there are cores (a leave-one-GPU-out
    // refit of AIConfigurator's tables is seconds of search per key).
    let to_fit: Vec<_> = groups.iter().filter(|(_, g)| g.0.len() >= o.min_rows && g.1.len() >= o.min_gpus).collect();
    let keys = to_fit
        .par_iter()
        .map(|(k, (idx, gpus))| {
            let rows: Vec<(Work, f64)> = stride(idx, o.max_rows).iter().map(|&i| samples[i as usize].clone()).collect();
            let mut p = fit_key(&rows, gpus.len(), o);
            p.rows = idx.len() as u32;
            ((*k).clone(), p)
        })
        .collect();
    Ok(Model::new(trained_on.into_iter().collect(), keys))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sustained::work::KernelWork;

    /// Memory-bound kernels of 100–800 MB on a 1 TB/s GPU, "measured" at 1.25× their streaming
    /// time.
    fn rows() -> Vec<(Work, f64)> {
        (1..=8)
            .map(|mb| {
                let bytes = mb as f64 * 1e8;
                let k = KernelWork { flops: 0.0, padded_flops: 0.0, bytes, open_least: None, tiles: 0.0, reduction: 0.0, quantized_rows: 0.0, peak_flops: None, sms: 100.0, bandwidth: 1e12, serial_steps: 0.0 };
                (Work::Kernel(k), 1.25 * bytes / 1e12)
            })
            .collect()
    }

    fn params(memory_efficiency: f64) -> Params {
        Params { residual: Vec::new(), compute_efficiency: 0.8, memory_efficiency, overhead_us: 0.0, per_gpu_us: 0.0, blend: 2.0, split_min: 512.0, sm_bandwidth: 4.0, wave_us: 0.0, row_ns: 0.0, gpus: 2, rows: 8 }
    }

    #[test]
    fn the_early_stopping_mean_decides_as_the_full_mean_does() {
        let rows = rows();
        let p = params(0.5);
        let full = mean_ape(&p, &rows);
        assert!(full > 1.0, "the candidate must be off to test anything: {full}");
        assert_eq!(mean_ape_below(&p, &rows, f64::INFINITY), Some(full));
        assert_eq!(mean_ape_below(&p, &rows, full + 1e-9), Some(full));
        assert_eq!(mean_ape_below(&p, &rows, full), None, "equal is not better");
        assert_eq!(mean_ape_below(&p, &rows, full / 2.0), None);
        let unmeasured = vec![(rows[0].0.clone(), f64::NAN)];
        assert_eq!(mean_ape_below(&p, &unmeasured, f64::INFINITY), None, "a NaN mean never wins");
    }

    #[test]
    fn the_search_finds_the_efficiency_the_rows_were_made_with() {
        // Measured at 1.25× the datasheet streaming time: 80 % of the bandwidth, no fixed cost.
        let p = fit_key(&rows(), 2, &FitOptions { rounds: 6, ..FitOptions::default() });
        assert!((p.memory_efficiency - 0.8).abs() < 0.011, "{}", p.memory_efficiency);
        assert!(mean_ape(&p, &rows()) < 1.0);
    }
}
