//! NeuSight's AMD layout end to end on a committed fixture (`tests/fixtures/amd_ops`, MIT):
//! which files count, HIP launch sizes read as workgroups, Tensile tiles that explain those
//! launches, and `eval ops` on MI100 with and without its own measurements.

use std::path::{Path, PathBuf};
use std::process::Command;
use wavecast_data::{load_neusight_dir, op_sets, OpShape};
use wavecast_gpu::Catalog;
use wavecast_predict::kernels::macro_tile;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/amd_ops")
}

#[test]
fn the_collection_layout_counts_each_row_once() {
    let sets = op_sets(&fixture());
    let names: Vec<&str> = sets.iter().map(|s| s.name).collect();
    assert_eq!(names, ["amd_ops/train", "amd_ops/test"]);
    let cat = Catalog::builtin();
    let train = load_neusight_dir(&sets[0].dir, &cat).unwrap();
    // 12 add and 8 softmax rows; the merged copies (collect/add.csv, elem.csv) are not read.
    assert_eq!((train.rows.len(), train.skipped.len()), (20, 0));
    assert!(train.rows.iter().all(|m| m.gpu == "mi100"));
    assert!(!sets[0].model_shaped && sets[1].model_shaped);
}

#[test]
fn hip_launches_are_workgroups_and_match_the_tensile_macro_tile() {
    let cat = Catalog::builtin();
    let test = load_neusight_dir(&fixture().join("amd_ops/test"), &cat).unwrap();
    assert_eq!(test.rows.len(), 8);
    let (mut checked, mut split) = (0, false);
    for m in &test.rows {
        let OpShape::Bmm { batch, m: rows, n: cols, .. } = m.shape else { panic!("{:?}", m.shape) };
        let kernel = m.main_kernel.as_ref().unwrap();
        let Some(tile) = macro_tile(&kernel.name) else { continue };
        let expected = tile.workgroups(batch as f64, rows as f64, cols as f64);
        assert_eq!(kernel.blocks().map(|b| b as f64), Some(expected), "{} on {:?}", kernel.name, m.shape);
        // Dimension by dimension: x spans the output's columns in MT0, y its rows in MT1 times
        // the reduction split (GSU8 launches 8 × as many rows of workgroups), z the batch.
        let per_dim = [cols.div_ceil(u64::from(tile.cols)), rows.div_ceil(u64::from(tile.rows)) * u64::from(tile.split), batch];
        assert_eq!(kernel.grid, Some(per_dim), "{} on {:?}", kernel.name, m.shape);
        split |= tile.split > 1;
        checked += 1;
    }
    assert!(checked >= 6 && split, "{checked} Tensile rows checked, one with a split-K launch: {split}");
}

#[test]
fn eval_ops_on_mi100_with_and_without_its_measurements() {
    let data = fixture();
    let run = |extra: &[&str]| {
        let mut args = vec!["eval", "ops", "--data", data.to_str().unwrap(), "--test-gpu", "AMD Instinct MI100", "--json"];
        args.extend_from_slice(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_wavecast")).args(&args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let left_out = run(&[]);
    assert_eq!((left_out["test_gpu"].as_str(), left_out["holdout"].as_bool()), (Some("mi100"), Some(true)));
    let families = |v: &serde_json::Value, set: &str| -> Vec<String> {
        v["sets"][set].as_array().unwrap().iter().map(|f| f["family"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(families(&left_out, "amd_ops/train"), ["elementwise", "softmax"]);
    assert_eq!(families(&left_out, "amd_ops/test"), ["bmm"]);
    let learned = run(&["--no-holdout"]);
    assert_eq!(learned["holdout"].as_bool(), Some(false));
    // The model that learned ROCm's host floor and MI100's offsets prices its element-wise
    // calls closer than the one that never saw an AMD GPU (CUDA's floor is about twice ROCm's).
    let ape = |v: &serde_json::Value| v["sets"]["amd_ops/train"][0]["mean_ape"].as_f64().unwrap();
    assert!(ape(&learned) < 0.5 * ape(&left_out), "with MI100 {:.1} %, without {:.1} %", ape(&learned), ape(&left_out));
}

/// `eval intervals` prints its JSON without `--out`, writes it silently with `--out`, and with
/// `--out` and `--json` does both: the file and stdout hold the same intervals.
#[test]
fn eval_intervals_prints_json_and_with_out_writes_the_same() {
    let data = fixture();
    let dir = std::env::temp_dir().join(format!("wavecast-intervals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("intervals.json");
    let run = |extra: &[&str]| {
        let mut args = vec!["eval", "intervals", "--data", data.to_str().unwrap(), "--predictors", "li"];
        args.extend_from_slice(extra);
        let out = Command::new(env!("CARGO_BIN_EXE_wavecast")).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let printed: serde_json::Value = serde_json::from_str(&run(&[])).unwrap();
    assert!(printed["li"]["bmm"].as_array().is_some_and(|b| b.len() == 2), "{printed}");
    let out = file.to_str().unwrap();
    assert_eq!(run(&["--out", out]), "", "--out alone writes the file and prints nothing");
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let both: serde_json::Value = serde_json::from_str(&run(&["--out", out, "--force", "--json"])).unwrap();
    assert_eq!((&written, &both), (&printed, &printed));
    std::fs::remove_dir_all(&dir).unwrap();
}
