//! Which public dataset a folder holds, so one `--data DIR` works for all of them.

use crate::table::LoadReport;
use crate::timing::Timing;
use crate::aiconfigurator::Engines;
use crate::{aiconfigurator, neusight_ops, pipeweave, vidur, DataError};
use std::path::Path;
use wavecast_gpu::Catalog;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// NeuSight's FP32 per-op CSVs (`ops/train`, `ops/test`, the AMD GPUs' `amd_ops/`) and
    /// end-to-end labels.
    NeuSight,
    Aiconfigurator,
    Vidur,
    Pipeweave,
}

impl Layout {
    /// The layout of `root`, checked in an order where no layout's marker is another's.
    pub fn detect(root: &Path) -> Option<Layout> {
        if root.join("ops").is_dir() || root.join("amd_ops").is_dir() {
            Some(Layout::NeuSight)
        } else if aiconfigurator::detect(root) {
            Some(Layout::Aiconfigurator)
        } else if vidur::detect(root) {
            Some(Layout::Vidur)
        } else if pipeweave::detect(root) {
            Some(Layout::Pipeweave)
        } else {
            None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Layout::NeuSight => "NeuSight",
            Layout::Aiconfigurator => "AIConfigurator",
            Layout::Vidur => "Vidur",
            Layout::Pipeweave => "PipeWeave",
        }
    }
}

/// Every modern-GPU measurement under `root` (AIConfigurator, Vidur or PipeWeave layout; a
/// folder holding several of them, like `../shared/data`, loads all), one engine's
/// AIConfigurator collections per family ([`Engines::Default`]).
pub fn load_timings(root: &Path, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    load_timings_of(root, catalog, Engines::Default)
}

/// [`load_timings`] reading the AIConfigurator collections `engines` names.
pub fn load_timings_of(root: &Path, catalog: &Catalog, engines: Engines) -> Result<LoadReport<Timing>, DataError> {
    let candidates = [root.to_path_buf(), root.join("aiconfigurator"), root.join("vidur"), root.join("pipeweave")];
    let mut report = LoadReport::default();
    let mut found = false;
    for dir in candidates.iter().filter(|d| d.is_dir() || d.is_file()) {
        let loaded = match Layout::detect(dir) {
            Some(Layout::Aiconfigurator) => aiconfigurator::load_engines(dir, catalog, engines)?,
            // One engine's collections added to the default's: the other sources are read already.
            _ if matches!(engines, Engines::Only(_)) => continue,
            Some(Layout::Vidur) => vidur::load(dir, catalog)?,
            Some(Layout::Pipeweave) => pipeweave::load(dir, catalog)?,
            _ => continue,
        };
        found = true;
        report.extend(loaded);
    }
    if !found {
        return Err(DataError::Read { path: root.display().to_string(), reason: "no AIConfigurator, Vidur or PipeWeave data here".into() });
    }
    Ok(report)
}

/// What the price ladder's tables are built from: every modern-GPU measurement under `root`
/// (AIConfigurator's collections as `engines` picks them), and NeuSight's FP32 per-op
/// measurements (`root` itself in NeuSight's layout, or its `neusight/` folder, as in
/// `../shared/data`). Kept apart from [`load_timings`] so that the modern-GPU fits and
/// evaluations never see FP32 rows.
pub fn load_ladder_timings(root: &Path, catalog: &Catalog, engines: Engines) -> Result<LoadReport<Timing>, DataError> {
    let neusight: Vec<_> = [root.to_path_buf(), root.join("neusight")].into_iter().filter(|d| Layout::detect(d) == Some(Layout::NeuSight)).collect();
    let mut report = match load_timings_of(root, catalog, engines) {
        Ok(modern) => modern,
        Err(_) if !neusight.is_empty() => LoadReport::default(),
        Err(e) => return Err(e),
    };
    for dir in neusight {
        report.extend(neusight_ops::load_timings(&dir, catalog)?);
    }
    Ok(report)
}
