//! Reader for PipeWeave's kernel data: FP8 GEMMs (`gemm_fp8_*.csv`: `M,N,K`, `avg_duration` in
//! µs, the GPU's name in `hardware`) and NCCL collectives (`collective/<GPU>/<op>.csv`, the
//! layout Vidur uses). Point it at the folder, or at a single `gemm_fp8_*.csv`.

use crate::table::{records, DeviceIds, LoadReport};
use crate::timing::{Precision, Shape, Source, Timing};
use crate::vidur::{collective_csv, known_gpu, read, walk};
use crate::{measured_ms, DataError};
use std::path::{Path, PathBuf};
use wavecast_gpu::Catalog;

fn is_gemm_file(p: &Path) -> bool {
    p.is_file() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("gemm_fp8") && n.to_string_lossy().ends_with(".csv"))
}

fn gemm_files(root: &Path) -> Vec<PathBuf> {
    if is_gemm_file(root) {
        return vec![root.to_path_buf()];
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(root).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| is_gemm_file(p)).collect();
    v.sort();
    v
}

/// True when `root` is a PipeWeave GEMM file or a folder with one, or with `collective/`.
pub fn detect(root: &Path) -> bool {
    !gemm_files(root).is_empty() || root.join("collective").is_dir()
}

pub fn load(root: &Path, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    let mut report = LoadReport::default();
    for file in gemm_files(root) {
        report.extend(gemm_csv(&read(&file)?, &file.display().to_string(), catalog)?);
    }
    let collective = root.join("collective");
    for file in walk(&collective, "all_reduce.csv").into_iter().chain(walk(&collective, "send_recv.csv")) {
        let folder = file.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let Some(gpu) = known_gpu(catalog, &folder, &file, &mut report) else { continue };
        report.extend(collective_csv(&read(&file)?, &file.display().to_string(), &gpu, Source::Pipeweave)?);
    }
    if report.rows.is_empty() && report.skipped.is_empty() {
        return Err(DataError::Read { path: root.display().to_string(), reason: "no PipeWeave data here (expected gemm_fp8_*.csv or collective/<GPU>/all_reduce.csv)".into() });
    }
    Ok(report)
}

pub fn gemm_csv(text: &str, file: &str, catalog: &Catalog) -> Result<LoadReport<Timing>, DataError> {
    let (cols, records) = records(text, file, &["M", "N", "K", "avg_duration", "hardware"])?;
    let mut devices = DeviceIds::new(catalog);
    let mut report = LoadReport::default();
    for (line, rec) in records {
        let row = rec.and_then(|rec| {
            let name = cols.get(&rec, "hardware").ok_or("missing value: column 'hardware' is empty")?;
            // A family name ("NVIDIA H100") is told apart by the row's own figures.
            let (gpu, note) = devices.by_figures(name, cols.opt_f64(&rec, "num_sms").map(|v| v as u32), cols.opt_f64(&rec, "mem_bandwidth"))?;
            if let Some(note) = note.filter(|n| !report.notes.contains(n)) {
                report.notes.push(note);
            }
            let latency_ms = measured_ms("avg_duration", cols.num::<f64>(&rec, "avg_duration")? / 1e3)?;
            let shape = Shape::Gemm { m: cols.dim(&rec, "M")?, n: cols.dim(&rec, "N")?, k: cols.dim(&rec, "K")? };
            Ok(Timing { source: Source::Pipeweave, gpu, shape, precision: Precision::Fp8, kernel_source: "pipeweave_fp8_gemm".into(), latency_ms, provenance: format!("{file}:{line}"), engine: String::new() })
        });
        report.push(file, line, row);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row naming just "NVIDIA H100" is read by its SM count and bandwidth, and the load
    /// report says which entry was chosen.
    #[test]
    fn a_family_name_is_resolved_by_the_rows_figures_and_reported() {
        let text = "M,N,K,avg_duration,hardware,num_sms,mem_bandwidth\n\
                    128,4096,4096,20.0,NVIDIA H100,114,2000.0\n\
                    256,4096,4096,30.0,NVIDIA H100,114,2000.0\n\
                    128,4096,4096,12.0,NVIDIA H100,132,3352.0\n";
        let r = gemm_csv(text, "h100.csv", &Catalog::builtin()).unwrap();
        let gpus: Vec<&str> = r.rows.iter().map(|t| t.gpu.as_str()).collect();
        assert_eq!(gpus, ["h100-pcie", "h100-pcie", "h100-sxm"]);
        assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
        assert!(r.summary().contains("read as h100-pcie"), "{}", r.summary());
    }
}
