//! The AIConfigurator, Vidur and PipeWeave readers on the small fixtures cut from the public
//! data (`tests/fixtures/modern/`, written by `examples/cut_fixtures.rs`; licences beside them).

use std::path::{Path, PathBuf};
use wavecast_data::{aiconfigurator, load_timings, pipeweave, vidur, Collective, DataError, Layout, Precision, Shape, Source};
use wavecast_gpu::Catalog;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/modern")
}

#[test]
fn each_layout_is_detected_and_a_folder_of_several_loads_them_all() {
    assert_eq!(Layout::detect(&fixtures().join("aiconfigurator")), Some(Layout::Aiconfigurator));
    assert_eq!(Layout::detect(&fixtures().join("aiconfigurator/systems/data/h100_sxm")), Some(Layout::Aiconfigurator));
    assert_eq!(Layout::detect(&fixtures().join("vidur")), Some(Layout::Vidur));
    assert_eq!(Layout::detect(&fixtures().join("pipeweave")), Some(Layout::Pipeweave));
    assert_eq!(Layout::detect(&fixtures().join("pipeweave/gemm_fp8_h20.csv")), Some(Layout::Pipeweave));
    assert_eq!(Layout::detect(&fixtures()), None);
    let all = load_timings(&fixtures(), &Catalog::builtin()).unwrap();
    let sources: std::collections::BTreeSet<Source> = all.rows.iter().map(|t| t.source).collect();
    assert_eq!(sources.len(), 3, "{sources:?}");
}

#[test]
fn aiconfigurator_parquet_rows_keep_shape_format_kernel_and_one_gpu_identity() {
    let r = aiconfigurator::load(&fixtures().join("aiconfigurator"), &Catalog::builtin()).unwrap();
    assert!(r.skipped.is_empty(), "{}", r.summary());
    let gpus: std::collections::BTreeSet<&str> = r.rows.iter().map(|t| t.gpu.as_str()).collect();
    // "NVIDIA H100 80GB HBM3" in the device column is the catalog's h100-sxm.
    assert_eq!(gpus, ["a100-sxm-80gb", "b200", "h100-sxm", "l40s"].into_iter().collect());
    let gemm = r.rows.iter().find(|t| matches!(t.shape, Shape::Gemm { .. })).unwrap();
    assert!(gemm.latency_ms > 0.0 && gemm.provenance.contains("gemm_perf.parquet#"));
    assert!(r.rows.iter().any(|t| matches!(t.shape, Shape::AttentionDecode { kv_len, .. } if kv_len >= 1)));
    assert!(r.rows.iter().any(|t| matches!(t.shape, Shape::Collective { op: Collective::AllReduce | Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll, .. })));
    let formats: std::collections::BTreeSet<Precision> = r.rows.iter().filter(|t| matches!(t.shape, Shape::Gemm { .. })).map(|t| t.precision).collect();
    assert!(formats.contains(&Precision::Bf16) && formats.contains(&Precision::Fp8), "{formats:?}");
}

#[test]
fn mla_rows_say_whether_the_module_or_the_kernel_was_timed_and_in_which_formats() {
    let r = aiconfigurator::load(&fixtures().join("aiconfigurator"), &Catalog::builtin()).unwrap();
    let mla: Vec<&wavecast_data::Timing> = r.rows.iter().filter(|t| matches!(t.shape, Shape::Mla { .. })).collect();
    // H100's table times the whole module and names the projections' format (gemm_type);
    // A100's times the attention kernel alone, whose format is the row's.
    let module = mla.iter().find(|t| t.gpu == "h100-sxm").unwrap();
    assert!(matches!(module.shape, Shape::Mla { module: true, generation: true, isl: 1, attention_precision: Precision::Bf16, .. }), "{:?}", module.shape);
    assert!(module.kernel_source.starts_with("mla_generation_module/"), "{}", module.kernel_source);
    let formats: std::collections::BTreeSet<Precision> = mla.iter().filter(|t| t.gpu == "h100-sxm").map(|t| t.precision).collect();
    assert!(formats.contains(&Precision::Fp8Block), "{formats:?}");
    let kernel = mla.iter().find(|t| t.gpu == "a100-sxm-80gb").unwrap();
    assert!(matches!(kernel.shape, Shape::Mla { module: false, kv_precision: Precision::Bf16, .. }), "{:?}", kernel.shape);
    assert_eq!(kernel.precision, Precision::Bf16);
}

#[test]
fn the_activation_quantization_table_is_the_engines_streaming_kernel_over_its_bytes() {
    let r = aiconfigurator::load(&fixtures().join("aiconfigurator"), &Catalog::builtin()).unwrap();
    let stream: Vec<&wavecast_data::Timing> = r.rows.iter().filter(|t| matches!(&t.shape, Shape::Vector { op, .. } if op == wavecast_data::STREAM)).collect();
    assert_eq!(stream.len(), 8, "every row of the cut H100 table");
    assert!(stream.iter().all(|t| t.gpu == "h100-sxm" && t.precision == Precision::Fp16 && t.kernel_source == "static_scaled_fp8_quant"));
    // 32,768 × 51,200 16-bit values read and written in FP8 (3 bytes each): the width of
    // 16-bit elements read and written (4 bytes each) that moves the same bytes.
    let largest = stream.iter().find(|t| (t.latency_ms - 1.656713).abs() < 1e-6).unwrap();
    assert_eq!(largest.shape, Shape::Vector { op: wavecast_data::STREAM.into(), tokens: 1, width: 32768 * 51200 * 3 / 4 });
}

#[test]
fn vidur_layer_ops_become_per_shard_gemms_and_vector_ops() {
    let r = vidur::load(&fixtures().join("vidur"), &Catalog::builtin()).unwrap();
    assert!(r.skipped.is_empty(), "{}", r.summary());
    assert!(r.rows.iter().all(|t| t.gpu == "h100-sxm" && t.source == Source::Vidur));
    // Llama-2-7B: 32 heads of 128, no GQA, 11008 gated MLP; QKV is (32 + 2·32)·128 wide per shard.
    for t in r.rows.iter().filter(|t| t.kernel_source == "vidur/attn_pre_proj") {
        let Shape::Gemm { n, k, .. } = t.shape else { panic!("{:?}", t.shape) };
        assert_eq!(k, 4096);
        assert!([12288, 6144, 3072, 1536].contains(&n), "n = {n}");
    }
    assert!(r.rows.iter().any(|t| matches!(&t.shape, Shape::Vector { op, .. } if op == "mlp_act")));
    assert!(r.rows.iter().any(|t| matches!(t.shape, Shape::Collective { op: Collective::AllReduce, .. })));
}

#[test]
fn pipeweave_durations_are_microseconds_and_a_single_file_reads() {
    let file = fixtures().join("pipeweave/gemm_fp8_h20.csv");
    let r = pipeweave::load(&file, &Catalog::builtin()).unwrap();
    assert!(!r.rows.is_empty() && r.rows.iter().all(|t| t.gpu == "h20" && t.precision == Precision::Fp8));
    let text = std::fs::read_to_string(&file).unwrap();
    let first_us: f64 = text.lines().nth(1).unwrap().split(',').nth(3).unwrap().parse().unwrap();
    assert!((r.rows[0].latency_ms - first_us / 1e3).abs() < 1e-12);
}

fn temp_copy(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = fixtures().join("aiconfigurator/systems/data/h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet");
    let to = dir.path().join("systems/data/h100_sxm/gemm/vllm/0.24.0").join(name);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
    dir
}

#[test]
fn a_truncated_parquet_file_is_one_error_naming_it() {
    let dir = temp_copy("gemm_perf.parquet");
    let file = dir.path().join("systems/data/h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let e = aiconfigurator::load(dir.path(), &Catalog::builtin()).unwrap_err();
    let message = e.to_string();
    assert!(matches!(e, DataError::Format { .. }) && message.contains("gemm_perf.parquet") && message.contains("not a readable parquet file"), "{message}");
    assert_eq!(message.lines().count(), 1);
}

#[test]
fn a_table_without_a_column_it_needs_is_one_error_naming_the_column() {
    // A GEMM table read as the attention table: it lacks the attention columns.
    let dir = temp_copy("generation_attention_perf.parquet");
    let message = aiconfigurator::load(dir.path(), &Catalog::builtin()).unwrap_err().to_string();
    assert!(message.contains("missing column 'batch_size'"), "{message}");
    let csv = dir.path().join("gemm_fp8_cut.csv");
    std::fs::write(&csv, "M,N,avg_duration,hardware\n16,16,5.0,NVIDIA H20\n").unwrap();
    let message = pipeweave::load(&csv, &Catalog::builtin()).unwrap_err().to_string();
    assert!(message.contains("missing column 'K'"), "{message}");
}

#[test]
fn bad_rows_are_skipped_with_their_reason_not_read_as_zero() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("gemm_fp8_bad.csv");
    std::fs::write(&csv, "M,N,K,avg_duration,hardware\n16,16,16,5.0,NVIDIA H20\n0,16,16,5.0,NVIDIA H20\n16,16,16,NaN,NVIDIA H20\n16,16,16,5.0,Imaginary GPU\n").unwrap();
    let r = pipeweave::load(&csv, &Catalog::builtin()).unwrap();
    assert_eq!(r.rows.len(), 1);
    let reasons: Vec<&str> = r.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert!(reasons[0].contains("zero dimension") && reasons[1].contains("avg_duration") && reasons[2].contains("unknown device"), "{reasons:?}");
}

/// AIConfigurator's collective tables count `message_size` in elements: read as bytes, a 16-bit
/// all-reduce would move its bytes at half the rate an INT8 one does on the same GPUs. Read
/// right, both sustain the same link bandwidth. Needs the shared data; skipped without it.
#[test]
fn aiconfigurator_collectives_move_the_same_bytes_per_second_in_every_format() {
    let nccl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/aiconfigurator/systems/data/h100_sxm/comm/nccl");
    if !nccl.is_dir() {
        eprintln!("skipped: {} is absent", nccl.display());
        return;
    }
    // Only H100's NCCL table, in the layout the reader expects.
    let root = std::env::temp_dir().join(format!("wavecast-nccl-{}", std::process::id()));
    let comm = root.join("systems/data/h100_sxm/comm");
    std::fs::create_dir_all(&comm).unwrap();
    let link = comm.join("nccl");
    if !link.exists() {
        std::os::unix::fs::symlink(nccl.canonicalize().unwrap(), &link).unwrap();
    }
    let r = aiconfigurator::load(&root, &Catalog::builtin()).unwrap();
    std::fs::remove_dir_all(&root).ok();
    let rate = |p: Precision| -> Vec<(u64, f64)> {
        r.rows.iter().filter_map(|t| match t.shape {
            Shape::Collective { op: Collective::AllReduce, gpus: 4, bytes, .. } if t.precision == p && bytes >= 64 << 20 => Some((bytes, bytes as f64 / t.latency_ms)),
            _ => None,
        }).collect()
    };
    let (wide, narrow) = (rate(Precision::Fp16), rate(Precision::Int8));
    assert!(!wide.is_empty() && !narrow.is_empty(), "large 4-GPU all-reduces in FP16 and INT8");
    for (bytes, r16) in &wide {
        if let Some((_, r8)) = narrow.iter().find(|(b, _)| b == bytes) {
            assert!((r16 / r8 - 1.0).abs() < 0.25, "{bytes} B: {r16:.0} B/ms in FP16, {r8:.0} B/ms in INT8");
        }
    }
    assert!(wide.iter().any(|(b, _)| narrow.iter().any(|(c, _)| b == c)), "some sizes are timed in both formats");
}

/// The linear-attention table's gated delta rule rows become prompt (chunked) and decode
/// (recurrent) shapes with the heads on the GPU; the causal conv1d rows it also holds are
/// another op and are left out without being counted as skipped.
#[test]
fn gated_delta_rows_keep_their_phase_and_heads_and_the_conv1d_rows_are_not_read() {
    let dir = fixtures().join("aiconfigurator/systems/data/h100_sxm");
    let r = aiconfigurator::load(&dir, &Catalog::builtin()).unwrap();
    assert!(r.skipped.is_empty(), "{}", r.summary());
    let rule: Vec<&wavecast_data::Timing> = r.rows.iter().filter(|t| t.provenance.contains("gdn_perf.parquet#")).collect();
    // 40 rows cut from the table: 24 of the rule, 16 of the conv1d.
    assert_eq!(rule.len(), 24);
    assert!(rule.iter().all(|t| t.precision == Precision::Bf16 && t.gpu == "h100-sxm" && t.engine == "vllm/0.24.0" && !t.kernel_source.contains("conv1d")));
    let decode = rule.iter().find(|t| t.shape == Shape::GatedDelta { batch: 512, seq: 1, k_heads: 2, v_heads: 4, head_k_dim: 128, head_v_dim: 128, generation: true }).unwrap();
    assert_eq!(decode.kernel_source, "fused_recurrent_gated_delta_rule_packed_decode");
    assert!((decode.latency_ms - 0.094866).abs() < 1e-6, "{}", decode.latency_ms);
    assert_eq!(decode.shape.family(), "gated_delta_decode");
    let prompt = rule.iter().find(|t| t.shape == Shape::GatedDelta { batch: 16, seq: 16384, k_heads: 16, v_heads: 64, head_k_dim: 128, head_v_dim: 128, generation: false }).unwrap();
    assert!((prompt.latency_ms - 6.951112).abs() < 1e-6, "{}", prompt.latency_ms);
    assert_eq!(prompt.shape.family(), "gated_delta_prefill");
}
