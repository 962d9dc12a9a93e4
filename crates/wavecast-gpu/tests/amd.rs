//! The catalog's AMD Instinct entries as ROCm and PyTorch see each device: an MI250/MI250X
//! package is two devices (GCDs); each entry is a complete CDNA device. (The names rocm-smi and
//! torch print are checked with every other vendor's in the catalog's name test.)

use wavecast_gpu::{Catalog, Vendor};

#[test]
fn mi250_and_mi250x_are_one_gcd_of_a_two_die_package() {
    let cat = Catalog::builtin();
    for (id, cus) in [("mi250", 104), ("mi250x", 110)] {
        let g = cat.get(id).unwrap();
        assert_eq!(g.sm_count, cus, "{id}: CUs of one GCD");
        assert_eq!(g.memory_gb, 64.0, "{id}: HBM2e of one GCD");
        assert_eq!(g.memory_bandwidth_gbs, 1638.4, "{id}: bandwidth of one GCD");
        assert_eq!(g.l2_cache_mb, 8.0, "{id}: L2 of one GCD");
        assert_eq!((g.architecture.as_str(), g.compute_capability.as_str()), ("cdna2", "gfx90a"), "{id}");
        let p = g.package.as_ref().unwrap_or_else(|| panic!("{id}: no [gpu.package]"));
        assert_eq!(p.devices, 2, "{id}");
        assert_eq!(p.memory_gb, 128.0, "{id}");
        assert!(g.tdp_w < p.tdp_w, "{id}: tdp_w is the GCD's share of the package's {} W", p.tdp_w);
    }
    // Per-GCD peaks (AMD's package figures are twice these).
    let mi250 = &cat.get("mi250").unwrap().peak_tflops;
    assert_eq!((mi250.fp32, mi250.fp32_matrix, mi250.fp16, mi250.fp64), (22.6, Some(45.3), Some(181.0), Some(22.6)));
    let mi250x = &cat.get("mi250x").unwrap().peak_tflops;
    assert_eq!((mi250x.fp32, mi250x.fp32_matrix, mi250x.fp16, mi250x.fp64), (23.9, Some(47.9), Some(191.5), Some(23.9)));
    // Single-die parts have no package.
    for id in ["mi100", "mi210", "mi300x", "mi300a", "mi325x", "mi350x", "mi355x"] {
        assert!(cat.get(id).unwrap().package.is_none(), "{id}");
    }
}

#[test]
fn every_amd_entry_is_a_complete_cdna_device() {
    let cat = Catalog::builtin();
    let amd: Vec<_> = cat.all().iter().filter(|g| g.vendor == Vendor::Amd).collect();
    let ids: Vec<&str> = amd.iter().map(|g| g.id.as_str()).collect();
    for id in ["mi100", "mi210", "mi250", "mi250x", "mi300x", "mi300a", "mi325x", "mi350x", "mi355x"] {
        assert!(ids.contains(&id), "missing AMD entry {id}");
    }
    for g in amd {
        let p = &g.peak_tflops;
        assert_eq!(g.occupancy.warp_size, 64, "{}: wavefront", g.id);
        assert!(p.fp32 > 0.0, "{}: vector FP32 rate", g.id);
        let matrix = p.fp32_matrix.unwrap_or_else(|| panic!("{}: no matrix FP32 rate", g.id));
        assert!(matrix >= p.fp32, "{}: matrix FP32 {matrix} below vector {}", g.id, p.fp32);
        assert!(!g.source.trim().is_empty(), "{}: no source", g.id);
        let (arch, gfx) = (g.architecture.as_str(), g.compute_capability.as_str());
        let expected_gfx = match arch {
            "cdna1" => "gfx908",
            "cdna2" => "gfx90a",
            "cdna3" => "gfx942",
            "cdna4" => "gfx950",
            other => panic!("{}: unknown AMD architecture '{other}'", g.id),
        };
        assert_eq!(gfx, expected_gfx, "{}", g.id);
        // CDNA3 and later have a memory-side Infinity Cache; CDNA1/2 have none.
        if matches!(arch, "cdna3" | "cdna4") {
            assert!(g.infinity_cache_mb > 0.0, "{}: no Infinity Cache", g.id);
            assert!(p.fp8.is_some(), "{}: CDNA3+ runs FP8", g.id);
        } else {
            assert_eq!(g.infinity_cache_mb, 0.0, "{}", g.id);
            assert!(p.fp8.is_none(), "{}: no FP8 before CDNA3", g.id);
        }
        // LDS: 64 KiB per CU through CDNA3, 160 KiB on CDNA4.
        let lds = if arch == "cdna4" { 160.0 } else { 64.0 };
        assert_eq!(g.occupancy.shared_mem_per_sm_kb, lds, "{}", g.id);
        // Only the measured MI100 names a measurement set.
        assert_eq!(g.measured.is_empty(), g.id != "mi100", "{}: measured {:?}", g.id, g.measured);
    }
}

#[test]
fn cdna3_and_cdna4_figures() {
    let cat = Catalog::builtin();
    let mi300x = cat.get("mi300x").unwrap();
    assert_eq!((mi300x.sm_count, mi300x.infinity_cache_mb, mi300x.l2_cache_mb), (304, 256.0, 32.0));
    assert_eq!((mi300x.peak_tflops.bf16, mi300x.peak_tflops.fp8), (Some(1307.4), Some(2614.9)));
    let mi325x = cat.get("mi325x").unwrap();
    assert_eq!((mi325x.sm_count, mi325x.memory_gb, mi325x.memory_bandwidth_gbs, mi325x.tdp_w), (304, 256.0, 6000.0, 1000.0));
    let mi300a = cat.get("mi300a").unwrap();
    assert_eq!((mi300a.sm_count, mi300a.memory_gb), (228, 128.0));
    for (id, tdp) in [("mi350x", 1000.0), ("mi355x", 1400.0)] {
        let g = cat.get(id).unwrap();
        assert_eq!((g.sm_count, g.memory_gb, g.memory_bandwidth_gbs, g.tdp_w), (256, 288.0, 8000.0, tdp), "{id}");
        let p = &g.peak_tflops;
        let (fp4, fp8, bf16) = (p.fp4.unwrap(), p.fp8.unwrap(), p.bf16.unwrap());
        // Dense MXFP4 is twice FP8, which is twice BF16; CDNA4 has no TF32 matrix path.
        assert!((fp4 / fp8 - 2.0).abs() < 1e-3 && (fp8 / bf16 - 2.0).abs() < 1e-3, "{id}");
        assert!(p.tf32.is_none(), "{id}");
    }
    assert_eq!(cat.get("mi355x").unwrap().peak_tflops.bf16, Some(2516.6));
}
