//! Loader for NeuSight's per-op kernel profiles (`ops/train/<op>/<GPU>.csv`, `ops/test/<op>.csv`)
//! and their AMD counterparts (`amd_ops/{train,test}/collect/<op>/<torch>/<GPU>.csv`, fewer
//! columns, HIP launch sizes). Every row becomes a [`Measurement`]; a row that cannot be read is
//! skipped and reported with its file, line and reason — never parsed as zero.

use crate::measurement::{Kernel, Measurement, OpShape};
use crate::table::{records, Columns, DeviceIds, LoadReport};
use crate::timing::{Precision, Shape, Source, Timing};
use crate::DataError;
use std::path::{Path, PathBuf};
use wavecast_gpu::{Catalog, Vendor};
use wavecast_ir::{DType, Phase};

/// Loads one NeuSight CSV; device names are mapped to catalog ids.
pub fn load_neusight_csv(path: &Path, catalog: &Catalog) -> Result<LoadReport, DataError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| DataError::Read { path: file.clone(), reason: e.to_string() })?;
    parse_neusight_csv(&text, &file, catalog)
}

pub fn parse_neusight_csv(text: &str, file: &str, catalog: &Catalog) -> Result<LoadReport, DataError> {
    let (cols, records) = records(text, file, &["OPName", "Latency", "Device"])?;
    let mut report = LoadReport::default();
    let mut devices = DeviceIds::new(catalog);
    for (line, rec) in records {
        let result = rec.and_then(|rec| {
            if rec.len() != cols.width() {
                return Err(format!("wrong field count: {} fields, header has {}", rec.len(), cols.width()));
            }
            row(&rec, &cols, file, line, &mut devices)
        });
        report.push(file, line, result);
    }
    Ok(report)
}

fn row(
    rec: &csv::StringRecord,
    cols: &Columns,
    file: &str,
    line: u64,
    devices: &mut DeviceIds,
) -> Result<Measurement, String> {
    let op = cols.get(rec, "OPName").ok_or("missing value: column 'OPName' is empty")?.to_string();
    let latency_ms = crate::measured_ms("bad latency: Latency", cols.num(rec, "Latency")?)?;
    let device = cols.get(rec, "Device").ok_or("missing value: column 'Device' is empty")?;
    let (gpu, vendor) = devices.gpu(device)?;
    let shape = match op.as_str() {
        "bmm" => OpShape::Bmm { batch: cols.dim(rec, "B")?, m: cols.dim(rec, "M")?, k: cols.dim(rec, "N")?, n: cols.dim(rec, "K")? },
        "linear" => {
            let b = cols.dim(rec, "B")?;
            OpShape::Linear { m: wavecast_ir::checked_mul("B×M", &[b, cols.dim(rec, "M")?]).map_err(|e| e.to_string())?, k: cols.dim(rec, "N")?, n: cols.dim(rec, "K")? }
        }
        "softmax" => OpShape::Softmax { b: cols.dim(rec, "B")?, h: cols.dim(rec, "H")? },
        "ln" => OpShape::LayerNorm { b: cols.dim(rec, "B")?, h: cols.dim(rec, "H")? },
        "conv" => OpShape::Conv2d {
            batch: cols.dim(rec, "B")?,
            c_in: cols.dim(rec, "Input_Channel")?,
            c_out: cols.dim(rec, "Output_Channel")?,
            kernel: cols.dim(rec, "Kernel_Szie")?,
            size: cols.dim(rec, "Input_Size")?,
            stride: cols.dim(rec, "Stride")?,
            padding: cols.num(rec, "Padding")?,
        },
        name if crate::measurement::vector_kind(name).is_some() => {
            OpShape::Vector { name: name.to_string(), b: cols.dim(rec, "B")?, h: cols.dim(rec, "H")? }
        }
        other => return Err(format!("unknown op: '{other}'")),
    };
    let triple = |prefix: &str| -> Option<[u64; 3]> {
        let g = |s: &str| cols.opt_f64(rec, &format!("{prefix} {s}")).map(|v| v as u64);
        Some([g("x")?, g("y")?, g("z")?])
    };
    let main_kernel = cols.get(rec, "Kernel Name").map(|name| {
        let k = Kernel { name: name.to_string(), grid: triple("Grid"), block: triple("Block"), ..Kernel::default() };
        match vendor {
            Vendor::Amd => hip_grid_in_workgroups(k),
            Vendor::Nvidia | Vendor::Intel => k,
        }
    });
    let kernels = cols
        .get(rec, "Kernels")
        .map(|list| list.split(';').filter(|k| !k.is_empty()).map(|k| Kernel { name: k.to_string(), ..Kernel::default() }).collect())
        .unwrap_or_default();
    let software = format!(
        "torch {}, cuda {}, cudnn {}",
        cols.get(rec, "Torch Version").unwrap_or("?"),
        cols.get(rec, "CUDA Version").unwrap_or("?"),
        cols.get(rec, "CUDNN Version").unwrap_or("?")
    );
    Ok(Measurement {
        shape,
        dtype: DType::Fp32,
        gpu,
        latency_ms,
        phase: Phase::Forward,
        main_kernel,
        kernels,
        warps_per_sm: cols.opt_f64(rec, "Warps per SM"),
        blocks_per_sm: cols.opt_f64(rec, "Blocks per SM"),
        software,
        provenance: format!("{file}:{line}"),
    })
}

/// HIP's profilers record a launch's grid as its global size in work-items, CUDA's as a count
/// of thread blocks; the schema counts blocks (workgroups), so each dimension is divided by the
/// workgroup's (rounding up, as HIP pads a partial workgroup). Without a workgroup size the
/// grid means nothing countable and is dropped.
fn hip_grid_in_workgroups(k: Kernel) -> Kernel {
    let grid = match (k.grid, k.block) {
        (Some(g), Some(b)) => Some([0, 1, 2].map(|i| g[i].div_ceil(b[i].max(1)))),
        _ => None,
    };
    Kernel { grid, ..k }
}

/// Every CSV under `dir` (recursively), in a stable order.
pub fn csv_files(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| DataError::Read { path: d.display().to_string(), reason: e.to_string() })?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "csv") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The CSVs of one measurement set. NeuSight's collection layout (`collect/<op>/<torch>/<GPU>.csv`,
/// the AMD folders) also keeps merged copies and subsets of the same rows (`collect/<op>.csv`,
/// `elem.csv`, `vec.csv`): only the per-device files count there. Elsewhere every CSV but
/// `habitat.csv` and `vec.csv`, which repeat rows of the per-op test files.
fn set_files(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let collect = dir.join("collect");
    if collect.is_dir() {
        let per_device = |f: &PathBuf| f.strip_prefix(&collect).is_ok_and(|rel| rel.components().count() == 3);
        return Ok(csv_files(&collect)?.into_iter().filter(per_device).collect());
    }
    let repeats = |f: &PathBuf| matches!(f.file_stem().and_then(|s| s.to_str()), Some("habitat" | "vec"));
    Ok(csv_files(dir)?.into_iter().filter(|f| !repeats(f)).collect())
}

/// Loads every measurement of one set (e.g. `ops/train`, `ops/test`, `amd_ops/train`).
pub fn load_neusight_dir(dir: &Path, catalog: &Catalog) -> Result<LoadReport, DataError> {
    let mut report = LoadReport::default();
    for f in set_files(dir)? {
        report.extend(load_neusight_csv(&f, catalog)?);
    }
    Ok(report)
}

/// One per-op measurement set of a NeuSight data folder.
#[derive(Debug, Clone, PartialEq)]
pub struct OpSet {
    /// `ops/train`, `ops/test`, `amd_ops/train` or `amd_ops/test`.
    pub name: &'static str,
    pub dir: PathBuf,
    /// Shapes taken from real models (`test`) rather than random microbenchmark shapes (`train`).
    pub model_shaped: bool,
}

/// The per-op measurement sets present under a NeuSight data folder: the NVIDIA GPUs' `ops/`
/// and the AMD GPUs' `amd_ops/`, random shapes before model-shaped ones.
pub fn op_sets(data: &Path) -> Vec<OpSet> {
    let all = [
        ("ops/train", false),
        ("amd_ops/train", false),
        ("ops/test", true),
        ("amd_ops/test", true),
    ];
    all.into_iter()
        .map(|(name, model_shaped)| OpSet { name, dir: data.join(name), model_shaped })
        .filter(|s| s.dir.is_dir())
        .collect()
}

/// The kernel library every NeuSight row names in the ladder's tables: one PyTorch call per
/// op, whatever its version (the random-shape and model-shaped sets then share one table).
pub const LIBRARY: &str = "pytorch";

/// A NeuSight measurement as the ladder's schema reads it (`None` for convolutions, which the
/// schema has no shape for): linear layers as GEMMs, batched matmuls as such, softmax, layer
/// norm and element-wise ops as vector ops named as NeuSight names them (`ln`, `addu`, …).
pub fn timing(m: &Measurement) -> Option<Timing> {
    let vector = |op: &str, b: u64, h: u64| Shape::Vector { op: op.to_string(), tokens: b, width: h };
    let shape = match &m.shape {
        OpShape::Linear { m, n, k } => Shape::Gemm { m: *m, n: *n, k: *k },
        OpShape::Bmm { batch, m, n, k } => Shape::Bmm { batch: *batch, m: *m, n: *n, k: *k },
        OpShape::Softmax { b, h } => vector("softmax", *b, *h),
        OpShape::LayerNorm { b, h } => vector("ln", *b, *h),
        OpShape::Vector { name, b, h } => vector(name, *b, *h),
        OpShape::Conv2d { .. } => return None,
    };
    let precision = match m.dtype {
        DType::Fp32 => Precision::Fp32,
        _ => return None,
    };
    Some(Timing { source: Source::Neusight, gpu: m.gpu.clone(), shape, precision, kernel_source: LIBRARY.into(), latency_ms: m.latency_ms, provenance: m.provenance.clone(), engine: String::new() })
}

/// Every per-op measurement under a NeuSight data folder (all of [`op_sets`]) that the
/// ladder's schema reads; convolutions are left to the learned models.
pub fn load_timings(data: &Path, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    let mut report = LoadReport::default();
    for set in op_sets(data) {
        let loaded = load_neusight_dir(&set.dir, catalog)?;
        report.skipped.extend(loaded.skipped);
        report.rows.extend(loaded.rows.iter().filter_map(timing));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,M,N,K\n";

    #[test]
    fn reads_good_rows_and_reports_bad_ones() {
        let text = format!(
            "{HEADER}\
bmm,0.0357,NVIDIA A100-PCIE-40GB,p2.1.0,8902,ampere_sgemm_128x128_nn,1.7,0.2,4,1,6,256,1,1,cu121,;ampere_sgemm_128x128_nn,6,27,21,390\n\
bmm,abc,NVIDIA A100-PCIE-40GB,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,,6,27,21,390\n\
bmm,0.1,Tesla Z9,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,,6,27,21,390\n\
bmm,0.1,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,,6,0,21,390\n\
bmm,0.1,Tesla T4,p2.1.0\n\
linear,0.05,Tesla T4,p2.1.0,8902,volta_sgemm_32x128_tn,1.0,0.125,5,1,1,256,1,1,cu121,;volta_sgemm_32x128_tn,1,58,13,141\n\
bmm,-1,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,1,cu121,,6,27,21,390\n"
        );
        let r = parse_neusight_csv(&text, "fixture.csv", &Catalog::builtin()).unwrap();
        assert_eq!(r.rows.len(), 2);
        let first = &r.rows[0];
        assert_eq!(first.gpu, "a100-pcie-40gb");
        assert_eq!(first.shape, OpShape::Bmm { batch: 6, m: 27, k: 21, n: 390 });
        assert_eq!(first.main_kernel.as_ref().unwrap().blocks(), Some(24));
        assert_eq!(first.kernels.len(), 1);
        assert_eq!(r.rows[1].shape, OpShape::Linear { m: 58, k: 13, n: 141 });
        let lines: Vec<u64> = r.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 8]);
        assert!(r.skipped[0].reason.contains("not a number"));
        assert!(r.skipped[1].reason.contains("unknown device"));
        assert!(r.skipped[2].reason.contains("zero dimension"));
        assert!(r.skipped[3].reason.contains("wrong field count"));
        assert!(r.skipped[4].reason.contains("bad latency"));
        assert!(r.summary().contains("5 skipped"));
    }

    #[test]
    fn vector_rows_and_missing_columns() {
        let text = "OPName,Latency,Device,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,Block z,B,H\n\
addu,0.02,Tesla T4,k,42,1,1,128,1,1,127,168\nsoftmax,0.03,Tesla T4,k,32,1,1,32,4,1,127,168\n";
        let r = parse_neusight_csv(text, "v.csv", &Catalog::builtin()).unwrap();
        assert_eq!(r.rows.len(), 2);
        assert!(r.rows[0].to_op().is_some());
        assert_eq!(r.rows[1].class_name(), "softmax");
        let e = parse_neusight_csv("OPName,Device\n", "x.csv", &Catalog::builtin()).unwrap_err();
        assert!(e.to_string().contains("missing column 'Latency'"));
    }
}
