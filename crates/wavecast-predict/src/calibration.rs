//! Per-GPU calibration shared by the learned predictors: each measured GPU gets an offset
//! ln(measured / physics); a GPU without measurements borrows the mean offset of its group.

use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_stats::mean;

/// Architecture and power class: boards of one architecture run the same library kernels, but
/// a power-capped board's efficiency says nothing about a full-power one's.
pub fn arch_key(gpu: &Gpu) -> String {
    format!("{}/{}", gpu.architecture, if gpu.tdp_w < 100.0 { "low-power" } else { "full-power" })
}

/// Mean GPU offset per group (e.g. [`arch_key`]); `gpu_of` finds a measured GPU by its id.
pub fn group_offsets<'a>(
    per_gpu: &BTreeMap<String, f64>,
    gpu_of: impl Fn(&str) -> Option<&'a Gpu>,
    key: impl Fn(&Gpu) -> String,
) -> BTreeMap<String, f64> {
    group_offsets_by(per_gpu, gpu_of, key, mean)
}

/// [`group_offsets`] with another summary of each group's offsets (e.g. a trimmed mean).
pub fn group_offsets_by<'a>(
    per_gpu: &BTreeMap<String, f64>,
    gpu_of: impl Fn(&str) -> Option<&'a Gpu>,
    key: impl Fn(&Gpu) -> String,
    summary: impl Fn(&[f64]) -> f64,
) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (id, off) in per_gpu {
        if let Some(gpu) = gpu_of(id) {
            by.entry(key(gpu)).or_default().push(*off);
        }
    }
    by.into_iter().map(|(a, v)| (a, summary(&v))).collect()
}
