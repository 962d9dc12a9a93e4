//! One GPU's figures, as read from the catalog file.

use serde::{Deserialize, Serialize};
use wavecast_ir::{DType, OpClass};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Amd,
}

/// Dense peak throughput in TFLOP/s; `None` where the chip has no such path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PeakTflops {
    pub fp64: Option<f64>,
    pub fp32: f64,
    pub tf32: Option<f64>,
    pub fp16: Option<f64>,
    pub bf16: Option<f64>,
    pub fp8: Option<f64>,
    pub int8: Option<f64>,
    /// AMD matrix-core FP32 (CDNA); NVIDIA leaves it unset.
    pub fp32_matrix: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    pub warp_size: u32,
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    pub registers_per_sm: u32,
    pub max_registers_per_block: u32,
    pub max_registers_per_thread: u32,
    pub shared_mem_per_sm_kb: f64,
    pub max_shared_mem_per_block_kb: f64,
    #[serde(default = "default_reg_unit")]
    pub register_alloc_unit: u32,
    #[serde(default = "default_smem_unit")]
    pub shared_mem_alloc_unit_bytes: u32,
    #[serde(default)]
    pub reserved_shared_mem_per_block_bytes: u32,
}

fn default_node() -> f64 {
    7.0
}

fn default_reg_unit() -> u32 {
    256
}
fn default_smem_unit() -> u32 {
    256
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interconnect {
    /// Total bidirectional NVLink (or Infinity Fabric) bandwidth per GPU, GB/s; 0 if none.
    #[serde(default)]
    pub nvlink_gbs: f64,
    /// Total bidirectional PCIe bandwidth, GB/s.
    #[serde(default)]
    pub pcie_gbs: f64,
    #[serde(default)]
    pub pcie_gen: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub usd_per_hour: f64,
    pub source: String,
    pub date: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub vendor: Vendor,
    pub architecture: String,
    pub compute_capability: String,
    pub sm_count: u32,
    pub fp32_lanes_per_sm: u32,
    pub base_clock_mhz: f64,
    pub boost_clock_mhz: f64,
    pub memory_gb: f64,
    #[serde(default)]
    pub memory_type: String,
    pub memory_bandwidth_gbs: f64,
    pub l2_cache_mb: f64,
    pub tdp_w: f64,
    #[serde(default)]
    pub form_factor: String,
    #[serde(default)]
    pub release_year: u32,
    /// Manufacturing node in nm (energy per FLOP scales with it).
    #[serde(default = "default_node")]
    pub process_nm: f64,
    #[serde(default)]
    pub source: String,
    pub peak_tflops: PeakTflops,
    pub occupancy: Occupancy,
    #[serde(default)]
    pub interconnect: Interconnect,
    #[serde(default)]
    pub price: Option<Price>,
}

impl Gpu {
    /// Memory bandwidth in bytes per second.
    pub fn bandwidth(&self) -> f64 {
        self.memory_bandwidth_gbs * 1e9
    }

    /// Peak FLOP/s a kernel of this class and dtype can reach: matmul-like classes use the
    /// tensor-core (or matrix-core) path of their dtype when the chip has one; everything else
    /// runs on the vector units.
    pub fn peak_flops(&self, class: OpClass, dtype: DType) -> f64 {
        let p = &self.peak_tflops;
        let matmul = class.is_matmul();
        let tflops = if !matmul {
            match dtype.vector_storage() {
                DType::Fp16 | DType::Bf16 => p.fp32.max(p.fp16.filter(|_| !self.has_tensor_cores()).unwrap_or(0.0)),
                _ => p.fp32,
            }
        } else {
            match dtype {
                DType::Fp32 => p.fp32_matrix.unwrap_or(p.fp32),
                DType::Tf32 => p.tf32.or(p.fp32_matrix).unwrap_or(p.fp32),
                DType::Fp16 => p.fp16.unwrap_or(p.fp32),
                DType::Bf16 => p.bf16.or(p.fp16).unwrap_or(p.fp32),
                DType::Fp8 => p.fp8.or(p.bf16).or(p.fp16).unwrap_or(p.fp32),
            }
        };
        tflops * 1e12
    }

    /// Volta and later NVIDIA parts, and CDNA matrix cores.
    pub fn has_tensor_cores(&self) -> bool {
        self.peak_tflops.tf32.is_some() || self.peak_tflops.bf16.is_some() || self.compute_major() >= 7
    }

    /// Major compute capability (0 for non-NVIDIA).
    pub fn compute_major(&self) -> u32 {
        self.compute_capability.split('.').next().and_then(|s| s.parse().ok()).unwrap_or(0)
    }

    /// FP32 peak implied by lanes × clock, the figure NeuSight's features are built on.
    pub fn fp32_flops_from_clock(&self) -> f64 {
        2.0 * self.sm_count as f64 * self.fp32_lanes_per_sm as f64 * self.boost_clock_mhz * 1e6
    }

    pub fn l2_bytes(&self) -> f64 {
        self.l2_cache_mb * 1024.0 * 1024.0
    }

    /// All names this GPU answers to.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.id.as_str()).chain(std::iter::once(self.name.as_str())).chain(self.aliases.iter().map(|s| s.as_str()))
    }

    /// Checks the figures are physically meaningful (positive, finite).
    pub fn validate(&self) -> Result<(), String> {
        let checks = [
            ("sm_count", self.sm_count as f64),
            ("boost_clock_mhz", self.boost_clock_mhz),
            ("memory_gb", self.memory_gb),
            ("memory_bandwidth_gbs", self.memory_bandwidth_gbs),
            ("peak_tflops.fp32", self.peak_tflops.fp32),
            ("tdp_w", self.tdp_w),
        ];
        for (field, v) in checks {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("GPU '{}': {field} must be a positive number, got {v}", self.id));
            }
        }
        let optional = [
            ("tf32", self.peak_tflops.tf32),
            ("fp16", self.peak_tflops.fp16),
            ("bf16", self.peak_tflops.bf16),
            ("fp8", self.peak_tflops.fp8),
        ];
        for (field, v) in optional {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0) {
                    return Err(format!("GPU '{}': peak_tflops.{field} must be positive, got {v}", self.id));
                }
            }
        }
        Ok(())
    }
}
