//! Selecting and summarising training samples (`wavecast_predict::sample::Sample`): the
//! isolated-call floors, the kernel-dominated rows the kernel models learn from, and per-GPU
//! balancing.

use std::collections::BTreeMap;
use wavecast_predict::physics::Family;
use wavecast_predict::sample::{host_floor_of_least_work, Sample};
use wavecast_stats::upper_median;

/// Isolated floor per (family, GPU): [`host_floor_of_least_work`] of its random-shape rows, with
/// bytes plus FLOPs as the work. It is a property of the host that drove the GPU (Python
/// dispatch and launch), not of the GPU. Model-shaped rows do not count: they are large, and the
/// least work among them says nothing of the floor (MI100's GEMMs are all model-shaped).
pub fn floors_per_gpu(samples: &[Sample]) -> BTreeMap<(Family, String), f64> {
    let mut by: BTreeMap<(Family, String), Vec<(f64, f64)>> = BTreeMap::new();
    for s in samples.iter().filter(|s| !s.model_shaped) {
        by.entry((s.family, s.gpu.id.clone())).or_default().push((s.op.bytes() + s.op.flops(), s.latency_s));
    }
    by.into_iter().map(|(k, calls)| (k, host_floor_of_least_work(&calls))).collect()
}

/// Per family, the upper median of the floors of the GPUs `keep` accepts.
fn median_floors(per_gpu: &BTreeMap<(Family, String), f64>, keep: impl Fn(&str) -> bool) -> BTreeMap<Family, f64> {
    let mut per_family: BTreeMap<Family, Vec<f64>> = BTreeMap::new();
    for ((family, _), f) in per_gpu.iter().filter(|((_, g), _)| keep(g)) {
        per_family.entry(*family).or_default().push(*f);
    }
    per_family.into_iter().map(|(f, v)| (f, upper_median(&v))).collect()
}

/// Per family: the floor a GPU of an unmeasured runtime gets, the median over measured GPUs.
pub fn isolated_floors(samples: &[Sample]) -> BTreeMap<Family, f64> {
    median_floors(&floors_per_gpu(samples), |_| true)
}

/// Per runtime ([`wavecast_gpu::Vendor::runtime`]) and family: the median floor of that
/// runtime's GPUs. The host floor belongs to the software stack that drove the GPU (ROCm's
/// PyTorch calls return sooner than CUDA's in NeuSight's data), so a GPU of a measured runtime
/// takes that runtime's floors.
pub fn runtime_floors(samples: &[Sample]) -> BTreeMap<String, BTreeMap<Family, f64>> {
    let per_gpu = floors_per_gpu(samples);
    let runtime_of: BTreeMap<&str, &str> = samples.iter().map(|s| (s.gpu.id.as_str(), s.gpu.vendor.runtime())).collect();
    let mut runtimes: Vec<&str> = runtime_of.values().copied().collect();
    runtimes.sort();
    runtimes.dedup();
    runtimes
        .into_iter()
        .map(|r| (r.to_string(), median_floors(&per_gpu, |g| runtime_of.get(g) == Some(&r))))
        .filter(|(_, floors)| !floors.is_empty())
        .collect()
}

/// Samples whose latency is clearly above their host floor, i.e. dominated by the kernel: their
/// GPU's own floor for the family, else their runtime's, else every GPU's.
pub fn kernel_dominated(samples: &[Sample]) -> Vec<&Sample> {
    let own = floors_per_gpu(samples);
    let by_runtime = runtime_floors(samples);
    let all = isolated_floors(samples);
    let floor = |s: &Sample| {
        own.get(&(s.family, s.gpu.id.clone()))
            .or_else(|| by_runtime.get(s.gpu.vendor.runtime()).and_then(|f| f.get(&s.family)))
            .or_else(|| all.get(&s.family))
            .copied()
            .unwrap_or(0.0)
    };
    samples.iter().filter(|s| s.latency_s > 1.5 * floor(s)).collect()
}

/// At most `limit` rows with every GPU equally represented, so no single board dominates.
pub fn balanced(rows: Vec<&Sample>, limit: usize) -> Vec<&Sample> {
    let mut by: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
    for s in rows {
        by.entry(s.gpu.id.as_str()).or_default().push(s);
    }
    let per = limit / by.len().max(1);
    by.into_values().flat_map(|v| v.into_iter().take(per)).collect()
}
