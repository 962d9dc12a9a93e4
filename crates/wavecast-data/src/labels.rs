//! End-to-end labels (`label/<GPU>/<workload>.json`) and NeuSight's published predictions
//! for them (`paper_predictions.csv`).

use crate::DataError;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// The GPU folder name as written on disk (e.g. `NVIDIA_A100-PCIE-40GB`).
    pub gpu_dir: String,
    /// Workload file stem, e.g. `gpt2_large-inf-1024-4`.
    pub workload: String,
    pub num_layer: u64,
    pub e2e_ms: f64,
    pub fw_ms: f64,
    pub bwall_ms: f64,
    pub path: PathBuf,
}

#[derive(Deserialize)]
struct LabelFile {
    num_layer: Option<u64>,
    e2e_latency: f64,
    #[serde(default)]
    fw_latency: f64,
    #[serde(default)]
    bwall_latency: f64,
}

/// Every `DIR/label/<GPU>/<workload>.json`, sorted. A label file that cannot be read is an
/// error naming the file: labels are the ground truth and must not silently disappear.
pub fn load_labels(data_dir: &Path) -> Result<Vec<Label>, DataError> {
    let root = data_dir.join("label");
    let read_dir = |p: &Path| std::fs::read_dir(p).map_err(|e| DataError::Read { path: p.display().to_string(), reason: e.to_string() });
    let mut labels = Vec::new();
    for gpu in read_dir(&root)?.flatten() {
        if !gpu.path().is_dir() {
            continue;
        }
        let gpu_dir = gpu.file_name().to_string_lossy().into_owned();
        for f in read_dir(&gpu.path())?.flatten() {
            let path = f.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).map_err(|e| DataError::Read { path: path.display().to_string(), reason: e.to_string() })?;
            let lf: LabelFile = serde_json::from_str(&text).map_err(|e| DataError::Format { path: path.display().to_string(), reason: e.to_string() })?;
            crate::measured_ms("e2e_latency", lf.e2e_latency).map_err(|reason| DataError::Format { path: path.display().to_string(), reason })?;
            labels.push(Label {
                gpu_dir: gpu_dir.clone(),
                workload: path.file_stem().unwrap_or_default().to_string_lossy().into_owned(),
                num_layer: lf.num_layer.unwrap_or(0),
                e2e_ms: lf.e2e_latency,
                fw_ms: lf.fw_latency,
                bwall_ms: lf.bwall_latency,
                path,
            });
        }
    }
    labels.sort_by(|a, b| (&a.gpu_dir, &a.workload).cmp(&(&b.gpu_dir, &b.workload)));
    Ok(labels)
}

/// One row of `paper_predictions.csv`: the label and each method's prediction (ms).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PaperRow {
    pub model_name: String,
    pub seqlen: u64,
    pub batch: u64,
    pub device: String,
    pub mode: String,
    #[serde(default)]
    pub option: String,
    #[serde(rename = "label_all_e2e_latency")]
    pub label_ms: f64,
    #[serde(rename = "neusight_all_e2e_latency")]
    pub neusight_ms: Option<f64>,
    #[serde(rename = "roofline_all_e2e_latency")]
    pub roofline_ms: Option<f64>,
    #[serde(rename = "habitat_all_e2e_latency")]
    pub habitat_ms: Option<f64>,
    #[serde(rename = "micro_all_e2e_latency")]
    pub micro_ms: Option<f64>,
}

impl PaperRow {
    /// The label and every published prediction present are plausible measured times.
    fn check(&self) -> Result<(), String> {
        crate::measured_ms("label_all_e2e_latency", self.label_ms)?;
        let predictions = [("neusight", self.neusight_ms), ("roofline", self.roofline_ms), ("habitat", self.habitat_ms), ("micro", self.micro_ms)];
        for (method, ms) in predictions {
            if let Some(ms) = ms {
                crate::measured_ms(&format!("{method}_all_e2e_latency"), ms)?;
            }
        }
        Ok(())
    }

    /// The workload stem this row describes, e.g. `gpt2_large-train-1024-4-dp4`.
    pub fn workload(&self) -> String {
        let mut w = format!("{}-{}-{}-{}", self.model_name, self.mode, self.seqlen, self.batch);
        if !self.option.is_empty() {
            w.push('-');
            w.push_str(&self.option);
        }
        w
    }
}

/// `DIR/paper_predictions.csv` if present.
pub fn load_paper_predictions(data_dir: &Path) -> Result<Option<Vec<PaperRow>>, DataError> {
    let path = data_dir.join("paper_predictions.csv");
    if !path.exists() {
        return Ok(None);
    }
    let mut rdr = csv::Reader::from_path(&path).map_err(|e| DataError::Read { path: path.display().to_string(), reason: e.to_string() })?;
    let mut rows = Vec::new();
    for (i, r) in rdr.deserialize().enumerate() {
        let at = || format!("{}:{}", path.display(), i + 2);
        let row: PaperRow = r.map_err(|e| DataError::Format { path: at(), reason: e.to_string() })?;
        row.check().map_err(|reason| DataError::Format { path: at(), reason })?;
        rows.push(row);
    }
    Ok(Some(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_paper_rows_load_from_a_fixture_tree() {
        let dir = std::env::temp_dir().join(format!("wavecast-labels-{}", std::process::id()));
        let gpu = dir.join("label").join("Tesla_T4");
        std::fs::create_dir_all(&gpu).unwrap();
        std::fs::write(gpu.join("gpt2_large-inf-1024-4.json"), r#"{"num_layer": 36, "e2e_latency": 2505.2, "fw_latency": 2505.2, "bwall_latency": 0}"#).unwrap();
        std::fs::write(gpu.join("notes.txt"), "ignored").unwrap();
        std::fs::write(
            dir.join("paper_predictions.csv"),
            "model_name,seqlen,batch,device,mode,option,label_all_e2e_latency,neusight_all_e2e_latency,roofline_all_e2e_latency,habitat_all_e2e_latency,micro_all_e2e_latency\n\
gpt2_large,1024,4,Tesla_T4,inf,,2505.2,2600.0,1500.0,,\n",
        )
        .unwrap();
        let labels = load_labels(&dir).unwrap();
        assert_eq!(labels.len(), 1);
        assert_eq!(labels[0].num_layer, 36);
        let rows = load_paper_predictions(&dir).unwrap().unwrap();
        assert_eq!(rows[0].workload(), "gpt2_large-inf-1024-4");
        assert_eq!(rows[0].habitat_ms, None);

        std::fs::write(gpu.join("bad.json"), "{\"e2e_latency\": \"fast\"}").unwrap();
        let e = load_labels(&dir).unwrap_err().to_string();
        assert!(e.contains("bad.json"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
