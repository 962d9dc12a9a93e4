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
fn floors_per_gpu(samples: &[Sample]) -> BTreeMap<(Family, String), f64> {
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

/// The isolated-call host floors of a training set, per GPU, per runtime and over all GPUs,
/// computed once from [`floors_per_gpu`].
pub struct Floors {
    per_gpu: BTreeMap<(Family, String), f64>,
    /// Per runtime ([`wavecast_gpu::Vendor::runtime`]) and family: the median floor of that
    /// runtime's GPUs. The host floor belongs to the software stack that drove the GPU (ROCm's
    /// PyTorch calls return sooner than CUDA's in NeuSight's data), so a GPU of a measured
    /// runtime takes that runtime's floors.
    pub per_runtime: BTreeMap<String, BTreeMap<Family, f64>>,
    /// Per family: the floor a GPU of an unmeasured runtime gets, the median over measured GPUs.
    pub all: BTreeMap<Family, f64>,
}

impl Floors {
    pub fn of(samples: &[Sample]) -> Floors {
        let per_gpu = floors_per_gpu(samples);
        let runtime_of: BTreeMap<&str, &str> = samples.iter().map(|s| (s.gpu.id.as_str(), s.gpu.vendor.runtime())).collect();
        let mut runtimes: Vec<&str> = runtime_of.values().copied().collect();
        runtimes.sort();
        runtimes.dedup();
        let per_runtime = runtimes
            .into_iter()
            .map(|r| (r.to_string(), median_floors(&per_gpu, |g| runtime_of.get(g) == Some(&r))))
            .filter(|(_, floors)| !floors.is_empty())
            .collect();
        let all = median_floors(&per_gpu, |_| true);
        Floors { per_gpu, per_runtime, all }
    }

    /// The floor of `s`: its GPU's own for the family, else its runtime's, else every GPU's.
    fn of_sample(&self, s: &Sample) -> f64 {
        self.per_gpu
            .get(&(s.family, s.gpu.id.clone()))
            .or_else(|| self.per_runtime.get(s.gpu.vendor.runtime()).and_then(|f| f.get(&s.family)))
            .or_else(|| self.all.get(&s.family))
            .copied()
            .unwrap_or(0.0)
    }

    /// Samples whose latency is clearly above their host floor, i.e. dominated by the kernel.
    pub fn kernel_dominated<'a>(&self, samples: &'a [Sample]) -> Vec<&'a Sample> {
        samples.iter().filter(|s| s.latency_s > 1.5 * self.of_sample(s)).collect()
    }
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
