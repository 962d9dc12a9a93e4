//! Maps the device a trace recorded to a GPU of the catalog.
//!
//! First by name (the catalog's aliases include CUDA device names such as
//! `NVIDIA A100-SXM4-80GB`). Board names that are not sold under that name (e.g. the
//! `NVIDIA A100-PG509-200` of some data centres, or ROCm's generic `AMD Radeon Graphics`) are
//! matched on properties instead: the same vendor, compute capability (NVIDIA) and SM/CU count,
//! then the closest memory size. AMD ties (same CUs and memory) go to the OAM module before the
//! PCIe card: ROCm reports one MI250 die (GCD) as a device of 104 CUs and 64 GB, which is also
//! exactly what an MI210 is — the two cannot be told apart by these properties — and such a die
//! maps to `mi250` (the data-centre OAM part, whose catalog entry is one GCD), and says so.
//! 110 CUs is an MI250X GCD, 120 CUs an MI100, 304 CUs an MI300X or, by its 256 GB, an MI325X.

use crate::model::DeviceProps;
use serde::Serialize;
use wavecast_gpu::{Catalog, Gpu, Vendor};

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
        // boards sold under no retail name are the HGX/SXM variants. An AMD die first prefers an
        // OAM module to a PCIe card, since a per-GCD entry carries only its share of the power.
        .min_by(|a, b| {
            let card = |g: &Gpu| g.vendor == Vendor::Amd && g.form_factor.starts_with("pcie");
            (a.memory_gb - mem_gb)
                .abs()
                .total_cmp(&(b.memory_gb - mem_gb).abs())
                .then(card(a).cmp(&card(b)))
                .then(b.tdp_w.total_cmp(&a.tdp_w))
        });
    match best {
        Some(g) => {
            let mut how = format!("{} is not a catalog name; closest by properties: {} ({})", describe(p), g.id, g.name);
            // An AMD die the properties cannot single out (an MI250 GCD and an MI210 alike).
            let twins: Vec<&str> = catalog
                .all()
                .iter()
                .filter(|o| vendor == Vendor::Amd && o.id != g.id && o.vendor == vendor && o.sm_count == g.sm_count && o.memory_gb == g.memory_gb)
                .map(|o| o.id.as_str())
                .collect();
            if !twins.is_empty() {
                how.push_str(&format!("; {} has the same CUs and memory and cannot be told apart by properties", twins.join(", ")));
            }
            Ok(DeviceMatch { gpu: g.id.clone(), how })
        }
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
        // AMD dies under ROCm's generic name: one MI250 GCD (104 CUs, 64 GiB; an MI210 reports the
        // same and maps here too), one MI250X GCD, an MI100, an MI300X and an MI325X (by memory).
        let amd = |cus: u32, gib: f64| {
            let p = props("AMD Radeon Graphics", (9, 0), cus, gib * 1.073_741_824, 64);
            match_device(&p, &cat).unwrap()
        };
        let m = amd(104, 64.0);
        assert_eq!(m.gpu, "mi250");
        assert!(m.how.contains("closest by properties") && m.how.contains("mi210"), "{}", m.how);
        assert_eq!(amd(110, 64.0).gpu, "mi250x");
        assert_eq!(amd(120, 32.0).gpu, "mi100");
        assert_eq!(amd(304, 192.0).gpu, "mi300x");
        assert_eq!(amd(304, 256.0).gpu, "mi325x");
        // By name: the string torch prints on either MI250 part, and rocm-smi's MI250 series.
        assert_eq!(match_device(&props("AMD Instinct MI250X / MI250", (9, 0), 104, 68.7, 64), &cat).unwrap().gpu, "mi250x");
        assert_eq!(match_device(&props("AMD INSTINCT MI250 (MCM) OAM AC MBA", (9, 0), 104, 68.7, 64), &cat).unwrap().gpu, "mi250");
    }

    #[test]
    fn unknown_device_says_what_to_do() {
        let err = match_device(&props("Mystery GPU", (8, 0), 7, 1.0, 32), &Catalog::builtin()).unwrap_err();
        assert!(err.contains("Mystery GPU") && err.contains("--from"), "{err}");
    }
}
