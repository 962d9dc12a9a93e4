//! Training samples: a measured operator turned into our IR with its kernel-time target.

use crate::physics::Family;
use std::collections::BTreeMap;
use wavecast_data::Measurement;
use wavecast_gpu::{Catalog, Gpu};
use wavecast_ir::Op;

/// Host-side time the measurement harness adds around one kernel (seconds); see DATA.md: an
/// isolated call costs about max(floor, kernel + a few µs).
pub const LAUNCH_GAP_S: f64 = 4e-6;

#[derive(Debug, Clone)]
pub struct Sample {
    pub op: Op,
    pub family: Family,
    pub gpu: Gpu,
    /// Isolated latency as measured (seconds).
    pub latency_s: f64,
    /// Main kernel name and grid, when recorded.
    pub kernel: Option<String>,
    pub grid_blocks: Option<f64>,
    /// Measured on a shape taken from a real model (NeuSight's `ops/test`) rather than a random
    /// microbenchmark shape (`ops/train`).
    pub model_shaped: bool,
}

impl Sample {
    pub fn from_measurement(m: &Measurement, catalog: &Catalog) -> Option<Sample> {
        let op = m.to_op()?;
        let family = Family::from_measurement_class(m.class_name())?;
        let gpu = catalog.get(&m.gpu).ok()?.clone();
        Some(Sample {
            op,
            family,
            gpu,
            latency_s: m.latency_ms / 1e3,
            kernel: m.main_kernel.as_ref().map(|k| k.name.clone()),
            grid_blocks: m.main_kernel.as_ref().and_then(|k| k.blocks()).map(|b| b as f64),
            model_shaped: false,
        })
    }

    /// Kernel time implied by the isolated latency.
    pub fn kernel_s(&self) -> f64 {
        (self.latency_s - LAUNCH_GAP_S).max(self.latency_s * 0.1)
    }
}

pub fn samples(rows: &[Measurement], catalog: &Catalog) -> Vec<Sample> {
    rows.iter().filter_map(|m| Sample::from_measurement(m, catalog)).collect()
}

/// Isolated floor per (family, GPU): the median latency of the smallest tenth of ops. It is a
/// property of the host that drove the GPU (Python dispatch and launch), not of the GPU.
pub fn floors_per_gpu(samples: &[Sample]) -> BTreeMap<(Family, String), f64> {
    let mut by: BTreeMap<(Family, String), Vec<(f64, f64)>> = BTreeMap::new();
    for s in samples {
        by.entry((s.family, s.gpu.id.clone())).or_default().push((s.op.bytes() + s.op.flops(), s.latency_s));
    }
    by.into_iter()
        .map(|(k, mut v)| {
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut small: Vec<f64> = v[..(v.len() / 10).max(1)].iter().map(|x| x.1).collect();
            small.sort_by(f64::total_cmp);
            (k, small[small.len() / 2])
        })
        .collect()
}

/// Per family: the floor a GPU without measurements gets, the median over measured GPUs.
pub fn isolated_floors(samples: &[Sample]) -> BTreeMap<Family, f64> {
    let mut per_family: BTreeMap<Family, Vec<f64>> = BTreeMap::new();
    for ((family, _), f) in floors_per_gpu(samples) {
        per_family.entry(family).or_default().push(f);
    }
    per_family
        .into_iter()
        .map(|(f, mut v)| {
            v.sort_by(f64::total_cmp);
            (f, v[v.len() / 2])
        })
        .collect()
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
