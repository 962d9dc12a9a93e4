//! Maps the device a trace recorded to a GPU of the catalog.
//!
//! First by name (the catalog's aliases include CUDA device names such as
//! `NVIDIA A100-SXM4-80GB`). Board names that are not sold under that name (e.g. the
//! `NVIDIA A100-PG509-200` of some data centres, or ROCm's generic `AMD Radeon Graphics`) are
//! matched on properties instead: the same vendor, compute capability (NVIDIA) and SM/CU count,
//! then the closest memory size. ROCm reports one MI250 die (GCD) as a device of 104 CUs and
//! 64 GB, which is what an MI210 is, so it maps there, and says so.

use crate::model::DeviceProps;
use serde::Serialize;
use wavecast_gpu::{Catalog, Vendor};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceMatch {
    /// Catalog id.
    pub gpu: String,
    /// How it was matched, for the report.
    pub how: String,
}

fn describe(p: &DeviceProps) -> String {
    let gb = p.total_memory_bytes as f64 / 1e9;
    if p.is_amd() {
        format!("'{}' ({} CUs, {gb:.1} GB)", p.name, p.sm_count)
    } else {
        format!("'{}' (cc {}, {} SMs, {gb:.1} GB)", p.name, p.compute_capability(), p.sm_count)
    }
}

/// The catalog GPU that `p` describes.
pub fn match_device(p: &DeviceProps, catalog: &Catalog) -> Result<DeviceMatch, String> {
    if let Ok(g) = catalog.get(&p.name) {
        return Ok(DeviceMatch { gpu: g.id.clone(), how: format!("by name '{}'", p.name) });
    }
    let vendor = if p.is_amd() { Vendor::Amd } else { Vendor::Nvidia };
    let cc = p.compute_capability();
    let mem_gb = p.total_memory_bytes as f64 / 1e9;
    let best = catalog
        .all()
        .iter()
        .filter(|g| g.vendor == vendor && g.sm_count == p.sm_count)
        .filter(|g| vendor == Vendor::Amd || g.compute_capability == cc)
        // Ties (same chip, memory and SMs in PCIe and SXM form) go to the higher board power:
        // boards sold under no retail name are the HGX/SXM variants.
        .min_by(|a, b| (a.memory_gb - mem_gb).abs().total_cmp(&(b.memory_gb - mem_gb).abs()).then(b.tdp_w.total_cmp(&a.tdp_w)));
    match best {
        Some(g) => Ok(DeviceMatch {
            gpu: g.id.clone(),
            how: format!("{} is not a catalog name; closest by properties: {} ({})", describe(p), g.id, g.name),
        }),
        None => Err(format!(
            "the trace's device {} matches no catalog GPU; name the origin GPU with --from (see `wavecast gpus`) or add it with --gpu-file",
            describe(p)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(name: &str, cc: (u32, u32), sms: u32, gb: f64, warp: u32) -> DeviceProps {
        DeviceProps {
            name: name.into(),
            compute_major: cc.0,
            compute_minor: cc.1,
            sm_count: sms,
            total_memory_bytes: (gb * 1e9) as u64,
            warp_size: warp,
            ..DeviceProps::default()
        }
    }

    #[test]
    fn names_and_properties_map_to_the_catalog() {
        let cat = Catalog::builtin();
        let m = match_device(&props("NVIDIA A100-SXM4-80GB", (8, 0), 108, 85.0, 32), &cat).unwrap();
        assert_eq!(m.gpu, "a100-sxm-80gb");
        assert!(m.how.starts_with("by name"));
        assert_eq!(match_device(&props("Tesla V100-SXM2-32GB", (7, 0), 80, 34.0, 32), &cat).unwrap().gpu, "v100-sxm2");
        // An A100 board name outside the catalog, 40 GB: the 40 GB A100.
        let m = match_device(&props("NVIDIA A100-PG509-200", (8, 0), 108, 42.3, 32), &cat).unwrap();
        assert_eq!(m.gpu, "a100-sxm-40gb");
        assert!(m.how.contains("closest by properties"));
        // One MI250 die as ROCm reports it.
        assert_eq!(match_device(&props("AMD Radeon Graphics", (9, 0), 104, 68.7, 64), &cat).unwrap().gpu, "mi210");
    }

    #[test]
    fn unknown_device_says_what_to_do() {
        let err = match_device(&props("Mystery GPU", (8, 0), 7, 1.0, 32), &Catalog::builtin()).unwrap_err();
        assert!(err.contains("Mystery GPU") && err.contains("--from"), "{err}");
    }
}
