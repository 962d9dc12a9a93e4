//! A custom GPU in a few lines (`--gpu-file`): start from a built-in entry with `base`, give
//! only what differs; whatever is missing or implausible is named at once; a GPU without links
//! borrows its architecture's instead of pricing collectives at nothing.

use std::path::PathBuf;
use std::process::{Command, Output};

fn wavecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).output().expect("run wavecast")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// Writes `text` to a temporary GPU file named `name`.
fn gpu_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wavecast-gpu-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Writes a GPU file and lists the catalog with it; the refusal must be exit code 2 and one
/// line, which is returned.
fn refused_file(name: &str, text: &str) -> String {
    let file = gpu_file(name, text);
    let o = wavecast(&["gpus", "--gpu-file", file.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    err
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).display().to_string()
}

#[test]
fn three_lines_make_a_gpu_from_a_built_in_one() {
    let file = gpu_file("base.toml", "[[gpu]]\nid = \"h100-slow\"\nbase = \"h100-sxm\"\nmemory_bandwidth_gbs = 1676.0\n");
    let file = file.to_str().unwrap();
    let gpus = json(&wavecast(&["gpus", "--gpu-file", file, "--json"]));
    let mine = gpus.as_array().unwrap().iter().find(|g| g["id"] == "h100-slow").expect("the new GPU is listed");
    let h100 = gpus.as_array().unwrap().iter().find(|g| g["id"] == "h100-sxm").unwrap();
    assert_eq!(mine["memory_bandwidth_gbs"], 1676.0);
    for same in ["sm_count", "peak_tflops", "occupancy", "interconnect", "architecture"] {
        assert_eq!(mine[same], h100[same], "{same} comes from the base");
    }
    // Not the base's names (they would clash) nor its measurements (it is another GPU).
    assert!(mine["aliases"].as_array().unwrap().is_empty() && mine["measured"].as_array().unwrap().is_empty(), "{mine}");
    // Half the bandwidth: a memory-bound decode step is slower than on the base.
    let decode = |gpu: &str| {
        let v = json(&wavecast(&["predict", "--model", "llama-3.2-1b", "--gpu", gpu, "--gpu-file", file, "--mode", "serve", "--input-len", "128", "--output-len", "64", "--json"]));
        v["decode_ms"].as_f64().unwrap()
    };
    assert!(decode("h100-slow") > 1.3 * decode("h100-sxm"));
}

#[test]
fn every_missing_and_implausible_field_is_named_in_one_line() {
    let err = refused_file("incomplete.toml", "[[gpu]]\nid = \"half\"\nname = \"Half a GPU\"\narchitecture = \"hopper\"\nsm_count = 0\ntdp_w = -5.0\n");
    for field in ["vendor", "compute_capability", "fp32_lanes_per_sm", "base_clock_mhz", "boost_clock_mhz", "memory_gb", "memory_bandwidth_gbs", "l2_cache_mb", "peak_tflops.fp32", "sm_count must be", "tdp_w must be"] {
        assert!(err.contains(field), "{field} not named: {err}");
    }
    // Occupancy limits come from the architecture (Hopper), so they are not asked for.
    assert!(!err.contains("occupancy"), "{err}");
    let err = refused_file("bad-base.toml", "[[gpu]]\nid = \"x\"\nbase = \"h1000\"\n");
    assert!(err.contains("base 'h1000' is not a built-in GPU"), "{err}");
}

/// A misspelt figure would otherwise be dropped and the base's used in its place: refused, by name.
#[test]
fn a_field_the_catalog_does_not_know_is_refused_by_name() {
    let err = refused_file("typo.toml", "[[gpu]]\nid = \"h100-slow\"\nbase = \"h100-sxm\"\nmemory_bandwith_gbs = 1676.0\n");
    assert!(err.contains("unknown field `memory_bandwith_gbs`") && err.contains("memory_bandwidth_gbs"), "{err}");
    let err = refused_file("typo-peak.toml", "[[gpu]]\nid = \"h100-fast\"\nbase = \"h100-sxm\"\n[gpu.peak_tflops]\nbf61 = 2000.0\n");
    assert!(err.contains("unknown field `bf61`"), "{err}");
}

/// Time per output token of Llama 3.1 70B on four GPUs of `file`.
fn tp4_tpot_ms(file: &str) -> (f64, String) {
    let o = wavecast(&["serve-sim", "--model", "llama-3.1-70b", "--gpu", "my-hopper", "--gpu-file", file, "--layout", "tp4", "--quant", "fp8", "--concurrency", "8", "--requests", "16", "--json"]);
    let v = json(&o);
    (v["metrics"]["tpot_ms"]["mean"].as_f64().unwrap(), stderr(&o))
}

#[test]
fn a_gpu_without_links_gets_its_architectures_never_zero() {
    let bare = fixture("gpu-no-interconnect.toml");
    let (no_links, warning) = tp4_tpot_ms(&bare);
    assert!(warning.contains("warning: GPU 'my-hopper' gives no GPU-to-GPU link: using h100-sxm's"), "{warning}");
    // The same GPU with H100 SXM's links written out: the same time, so the default is that link.
    let text = std::fs::read_to_string(&bare).unwrap();
    let nvlink = gpu_file("nvlink.toml", &format!("{text}\n[gpu.interconnect]\nnvlink_gbs = 900.0\npcie_gbs = 128.0\n"));
    let (with_nvlink, quiet) = tp4_tpot_ms(nvlink.to_str().unwrap());
    assert_eq!(no_links, with_nvlink);
    assert!(!quiet.contains("warning"), "{quiet}");
    // Collectives cost time: over a slow link the same step is slower (at 0 B/s, as such a file
    // was read before, they cost nothing and TP4 decode ran faster than reading its weights).
    let slow = gpu_file("slow.toml", &format!("{text}\n[gpu.interconnect]\nnvlink_gbs = 0.0\npcie_gbs = 8.0\n"));
    let (over_slow_link, _) = tp4_tpot_ms(slow.to_str().unwrap());
    assert!(over_slow_link > 1.2 * no_links, "{over_slow_link} vs {no_links}");
}

#[test]
fn price_on_the_command_line_replaces_the_catalogs_and_says_so() {
    let compare = |extra: &[&str]| json(&wavecast(&[&["compare", "--model", "llama-3.2-1b", "--gpus", "h100,l40s", "--tp", "1,2", "--input-len", "256", "--output-len", "16", "--json"][..], extra].concat()));
    let (listed, mine) = (compare(&[]), compare(&["--price", "h100=2.0,l40s=0.5"]));
    for (a, b) in listed["results"].as_array().unwrap().iter().zip(mine["results"].as_array().unwrap()) {
        let (tp, usd) = (b["tp"].as_f64().unwrap(), if b["gpu"] == "h100-sxm" { 2.0 } else { 0.5 });
        assert_eq!(b["usd_per_hour"].as_f64(), Some(usd * tp), "{b}");
        assert!(b["price_source"].as_str().unwrap().starts_with("user,"), "{b}");
        assert!(a["price_source"].as_str().unwrap().starts_with("on-demand,"), "the catalog's tier: {a}");
        // Same throughput; tokens per dollar in inverse proportion to the price.
        let ratio = a["tokens_per_usd"].as_f64().unwrap() * a["usd_per_hour"].as_f64().unwrap() / (b["tokens_per_usd"].as_f64().unwrap() * b["usd_per_hour"].as_f64().unwrap());
        assert!((ratio - 1.0).abs() < 1e-9, "{ratio}");
    }
    // A bare figure with several GPUs names none of them: an error, not a guess.
    let o = wavecast(&["compare", "--model", "llama-3.2-1b", "--gpus", "h100,l40s", "--input-len", "256", "--output-len", "16", "--price", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("name the GPU it is for"), "{}", stderr(&o));
    let serve = json(&wavecast(&["predict", "--model", "llama-3.2-1b", "--gpu", "l4", "--mode", "serve", "--input-len", "256", "--output-len", "16", "--price", "0.25", "--json"]));
    assert_eq!(serve["usd_per_hour"].as_f64(), Some(0.25));
}

/// The shared measured tables are keyed by GPU id: an entry that keeps a measured GPU's id but
/// changes its kernel figures is refused (its own id, with `base`, prices it by transfer from
/// the measured one); one that changes only its price or memory size keeps the id.
#[test]
fn a_measured_gpus_id_keeps_its_figures() {
    let err = refused_file("h100-half.toml", "[[gpu]]\nid = \"h100-sxm\"\nbase = \"h100-sxm\"\nsm_count = 66\n");
    assert!(err.contains("'h100-sxm' is a built-in GPU with measured tables") && err.contains("changes its sm_count"), "{err}");
    let file = gpu_file("h100-price.toml", "[[gpu]]\nid = \"h100-sxm\"\nbase = \"h100-sxm\"\nmemory_gb = 94.0\n");
    let gpus = json(&wavecast(&["gpus", "--gpu-file", file.to_str().unwrap(), "--json"]));
    let h100 = gpus.as_array().unwrap().iter().find(|g| g["id"] == "h100-sxm").unwrap();
    assert_eq!(h100["memory_gb"], 94.0);
}

/// Two entries with one id would leave the last silently winning; the file is refused.
#[test]
fn two_entries_with_one_id_are_refused() {
    let err = refused_file("twice.toml", "[[gpu]]\nid = \"mygpu\"\nbase = \"h100-sxm\"\n[[gpu]]\nid = \"mygpu\"\nbase = \"a100-sxm-80gb\"\n");
    assert!(err.contains("two entries have the id 'mygpu'"), "{err}");
}

/// An entry whose FP32 peak and SM count disagree (an H100 with one SM and its full peak) is
/// refused: each model reads one figure against the other, and 1 SM came out faster than 132.
#[test]
fn an_fp32_peak_that_its_lanes_cannot_reach_is_refused() {
    let err = refused_file("one-sm.toml", "[[gpu]]\nid = \"sm1\"\nbase = \"h100-sxm\"\nsm_count = 1\n");
    assert!(err.contains("peak_tflops.fp32 66.9 disagrees with sm_count"), "{err}");
    let scaled = gpu_file("half.toml", "[[gpu]]\nid = \"h100-half\"\nbase = \"h100-sxm\"\nsm_count = 66\n[gpu.peak_tflops]\nfp32 = 33.45\nbf16 = 494.7\nfp16 = 494.7\nfp8 = 989.4\ntf32 = 247.4\n");
    let o = wavecast(&["gpus", "--gpu-file", scaled.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // One SM at its own FP32 rate keeps the H100's tensor peaks unless they are given too.
    let err = refused_file("one-sm-tensor.toml", "[[gpu]]\nid = \"sm1t\"\nbase = \"h100-sxm\"\nsm_count = 1\n[gpu.peak_tflops]\nfp32 = 0.5\n");
    assert!(err.contains("is over 128× the FP32 peak 0.5"), "{err}");
}
