//! Measured operators as samples: a measurement turned into our IR, with its kernel-time
//! target. `wavecast-train` fits on them and `wavecast-eval` judges predictions against them.

use crate::physics::Family;
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
