//! Selecting and summarising training samples (`wavecast_predict::sample::Sample`): the
//! isolated-call floors, the kernel-dominated rows the kernel models learn from, and per-GPU
//! balancing.

use std::collections::BTreeMap;
use wavecast_predict::physics::Family;
use wavecast_predict::sample::{host_floor_of_least_work, Sample};
use wavecast_stats::upper_median;

/// Isolated floor per (family, GPU): [`host_floor_of_least_work`], with bytes plus FLOPs as the
/// work. It is a property of the host that drove the GPU (Python dispatch and launch), not of
/// the GPU.
pub fn floors_per_gpu(samples: &[Sample]) -> BTreeMap<(Family, String), f64> {
    let mut by: BTreeMap<(Family, String), Vec<(f64, f64)>> = BTreeMap::new();
    for s in samples {
        by.entry((s.family, s.gpu.id.clone())).or_default().push((s.op.bytes() + s.op.flops(), s.latency_s));
    }
    by.into_iter().map(|(k, calls)| (k, host_floor_of_least_work(&calls))).collect()
}

/// Per family: the floor a GPU without measurements gets, the median over measured GPUs.
pub fn isolated_floors(samples: &[Sample]) -> BTreeMap<Family, f64> {
    let mut per_family: BTreeMap<Family, Vec<f64>> = BTreeMap::new();
    for ((family, _), f) in floors_per_gpu(samples) {
        per_family.entry(family).or_default().push(f);
    }
    per_family
        .into_iter()
        .map(|(f, v)| (f, upper_median(&v)))
        .collect()
}

/// Per runtime ([`wavecast_gpu::Vendor::runtime`]) and family: [`isolated_floors`] of that
/// runtime's GPUs on their random-shape rows. The host floor belongs to the software stack that
/// drove the GPU (ROCm's PyTorch calls return sooner than CUDA's in NeuSight's data), so a GPU
/// of a measured runtime takes that runtime's floors.
pub fn runtime_floors(samples: &[Sample]) -> BTreeMap<String, BTreeMap<Family, f64>> {
    let mut by: BTreeMap<&str, Vec<Sample>> = BTreeMap::new();
    for s in samples.iter().filter(|s| !s.model_shaped) {
        by.entry(s.gpu.vendor.runtime()).or_default().push(s.clone());
    }
    by.into_iter().map(|(runtime, rows)| (runtime.to_string(), isolated_floors(&rows))).collect()
}

/// Samples whose latency is clearly above their own GPU's floor, i.e. dominated by the kernel.
pub fn kernel_dominated(samples: &[Sample]) -> Vec<&Sample> {
    let floors = floors_per_gpu(samples);
    samples
        .iter()
        .filter(|s| s.latency_s > 1.5 * floors.get(&(s.family, s.gpu.id.clone())).copied().unwrap_or(0.0))
        .collect()
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
