//! One GPU's figures, as read from the catalog file.

use serde::{Deserialize, Serialize};
use wavecast_ir::{DType, OpClass, Quant};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Nvidia,
    Amd,
    Intel,
}

impl Vendor {
    /// The GPU runtime and libraries PyTorch runs on this vendor's parts through (CUDA with
    /// cuBLAS/cuDNN, ROCm with HIP and Tensile/hipBLASLt, oneAPI with Level Zero and oneDNN/XPU
    /// kernels): what sets the host-side cost of a call.
    pub fn runtime(self) -> &'static str {
        match self {
            Vendor::Nvidia => "cuda",
            Vendor::Amd => "rocm",
            Vendor::Intel => "oneapi",
        }
    }
}

/// Dense peak throughput in TFLOP/s; `None` where the chip has no such path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeakTflops {
    pub fp64: Option<f64>,
    pub fp32: f64,
    pub tf32: Option<f64>,
    pub fp16: Option<f64>,
    pub bf16: Option<f64>,
    pub fp8: Option<f64>,
    /// Dense NVFP4/MXFP4 tensor peak (Blackwell).
    #[serde(default)]
    pub fp4: Option<f64>,
    pub int8: Option<f64>,
    /// AMD matrix-core FP32 (CDNA); NVIDIA leaves it unset.
    pub fp32_matrix: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
pub struct Interconnect {
    /// Total bidirectional NVLink (or Infinity Fabric) bandwidth per GPU, GB/s; 0 if none.
    #[serde(default)]
    pub nvlink_gbs: f64,
    /// Total bidirectional PCIe bandwidth, GB/s.
    #[serde(default)]
    pub pcie_gbs: f64,
    #[serde(default)]
    pub pcie_gen: u32,
    /// Scale-out network line rate per GPU in Gbit/s (one NIC per GPU in the vendor's reference
    /// server, e.g. 200 for DGX A100, 400 for DGX H100); 0 when unknown.
    #[serde(default)]
    pub nic_gbps: f64,
    /// GPUs that share one NVLink switch fabric when it reaches beyond a server (72 in a GB200
    /// or GB300 NVL72 rack); 0 when the NVLink domain is the server itself.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nvlink_domain: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The product a device is part of, where that is not the device itself: an MI250X is one
/// package of two dies (GCDs), and ROCm and PyTorch show each die as its own device, so the
/// catalog entry describes one die and this says what the box on the shelf is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Package {
    /// The product's name, e.g. `AMD Instinct MI250X (OAM)`.
    pub name: String,
    /// Devices (dies) the package shows to the software.
    pub devices: u32,
    /// The whole package's memory (GB) and board power (W).
    pub memory_gb: f64,
    pub tdp_w: f64,
}

/// What kind of price a catalog figure is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PriceTier {
    /// A named cloud's on-demand list price per GPU (the default tier).
    #[default]
    OnDemand,
    /// A community or marketplace rental: where no cloud lists the part.
    Marketplace,
    /// Given by the user (`--price`).
    User,
}

impl PriceTier {
    pub fn as_str(self) -> &'static str {
        match self {
            PriceTier::OnDemand => "on-demand",
            PriceTier::Marketplace => "marketplace",
            PriceTier::User => "user",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub usd_per_hour: f64,
    pub source: String,
    pub date: String,
    /// On-demand unless the entry says otherwise.
    #[serde(default)]
    pub tier: PriceTier,
}

impl Price {
    /// Where the figure comes from, for reports: tier, source and date.
    pub fn describe(&self) -> String {
        let date = if self.date.is_empty() { String::new() } else { format!(" ({})", self.date) };
        // Cents, unless the price is below one (a user's tiny price must not print as $0.00).
        let usd = if self.usd_per_hour >= 0.01 { format!("{:.2}", self.usd_per_hour) } else { format!("{}", self.usd_per_hour) };
        format!("{}, ${usd} per GPU-hour: {}{date}", self.tier.as_str(), self.source)
    }
}

/// The most bytes per SM per clock cycle [`Gpu::l2_bandwidth`] takes L2 to deliver: above
/// the fastest that AIConfigurator's streaming tables reach on tensors that fit in L2, their
/// launch time taken off (L40S 17, RTX PRO 6000 21, H100 26, B200 and GB200 27 bytes per SM
/// per cycle, on passes of 31–101 MB), so that as a bound it undercuts every measured one.
pub const L2_BYTES_PER_SM_CLOCK: f64 = 32.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// Memory-side last-level cache in MB (AMD Infinity Cache on CDNA3 and later); 0 if none.
    #[serde(default)]
    pub infinity_cache_mb: f64,
    /// Board power in W; for a device that is one die of a package, that die's share.
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
    /// The public measurement sets that cover this GPU (names from [`MEASUREMENT_SOURCES`]).
    #[serde(default)]
    pub measured: Vec<String>,
    pub peak_tflops: PeakTflops,
    pub occupancy: Occupancy,
    #[serde(default)]
    pub interconnect: Interconnect,
    #[serde(default)]
    pub price: Option<Price>,
    /// Set where the device is one die of a multi-die product (see [`Package`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<Package>,
}

/// The public measurement sets a catalog entry's `measured` list may name (the folders of
/// `../shared/data`): NVIDIA AIConfigurator's database, Microsoft Vidur's profiles, PipeWeave's
/// kernel data and the NeuSight authors' measurements.
pub const MEASUREMENT_SOURCES: [&str; 4] = ["aiconfigurator", "vidur", "pipeweave", "neusight"];

/// Range every figure a prediction divides by must lie in (counts, clocks in MHz, sizes in GB
/// or KB, rates in TFLOP/s or GB/s, watts, $/hour): far wider than any real GPU, narrow enough
/// that quotients of two figures stay finite.
pub const PLAUSIBLE: (f64, f64) = (1e-3, 1e7);

/// How far the FP32 peak may lie from the lanes' rate at the boost clock: 1 on NVIDIA parts
/// (H20's datasheet peak is 11 % above), 2 on dual-issuing CDNA3 and later.
const FP32_PEAK_OVER_LANES: (f64, f64) = (0.8, 2.5);

/// Most a matrix-unit peak may be over the FP32 peak, by operand width: four times the largest
/// ratio of any built-in part (Jetson Thor's 32× for 16 bits and 64× for FP8, GB300's 188× for
/// FP4). Beyond it the entry's peaks describe different chips (an H100's tensor peak on one SM).
const MATRIX_16_OVER_FP32: f64 = 128.0;
const MATRIX_8_OVER_FP32: f64 = 256.0;
const MATRIX_4_OVER_FP32: f64 = 768.0;

impl Gpu {
    /// Device memory in bytes. Vendors' capacities (80 GB, 141 GB, 180 GB) are binary
    /// gigabytes: an H100's 80 GB shows as 81,559 MiB in `nvidia-smi`.
    pub fn memory_bytes(&self) -> f64 {
        self.memory_gb * (1u64 << 30) as f64
    }

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

    /// Whether the chip has units for `dtype` (a catalog peak for it): FP32 always; TF32, FP16,
    /// BF16 and FP8 only where the datasheet gives a rate, so e.g. BF16 on a T4 or FP8 on an
    /// A100 is not priced as if it ran.
    pub fn supports(&self, dtype: DType) -> bool {
        let p = &self.peak_tflops;
        match dtype {
            DType::Fp32 => true,
            DType::Tf32 => p.tf32.is_some(),
            DType::Fp16 => p.fp16.is_some(),
            DType::Bf16 => p.bf16.is_some(),
            DType::Fp8 => p.fp8.is_some(),
        }
    }

    /// The dtypes this GPU runs, in [`DType::ALL`]'s order.
    pub fn supported_dtypes(&self) -> Vec<DType> {
        DType::ALL.into_iter().filter(|&d| self.supports(d)).collect()
    }

    /// `Ok` if `gpus` of this GPU can work together; otherwise the one-line reason: a part
    /// whose catalog entry gives no NVLink and no PCIe link (a module like Jetson Thor) has no
    /// way to another GPU, and a collective over no link is no price.
    pub fn check_links(&self, gpus: u64) -> Result<(), String> {
        if gpus <= 1 || self.interconnect.nvlink_gbs > 0.0 || self.interconnect.pcie_gbs > 0.0 {
            return Ok(());
        }
        Err(format!("{} has no link to another GPU (no NVLink, no PCIe in its catalog entry): it cannot run on {gpus} GPUs", self.id))
    }

    /// `Ok` if the GPU runs `dtype`; otherwise the one-line reason, naming what it does run.
    pub fn check_dtype(&self, dtype: DType) -> Result<(), String> {
        if self.supports(dtype) {
            return Ok(());
        }
        let runs: Vec<&str> = self.supported_dtypes().into_iter().map(DType::as_str).collect();
        Err(format!("{} ({}) has no {dtype} units; it runs {} (--dtype to choose one)", self.id, self.name, runs.join(", ")))
    }

    /// `Ok` if the GPU can run layers quantized to `quant`: FP8 formats multiply on FP8 units,
    /// NVFP4 on FP4 units (Blackwell), weight-only formats dequantize to FP16 and multiply there.
    pub fn check_quant(&self, quant: Quant) -> Result<(), String> {
        match quant {
            Quant::Fp8 | Quant::Fp8Block => self.check_dtype(DType::Fp8),
            Quant::Nvfp4 if self.peak_tflops.fp4.is_none() => Err(format!("{} ({}) has no fp4 units for nvfp4 layers (Blackwell and later have them)", self.id, self.name)),
            // NVFP4's 16-value blocks with FP8 scales are NVIDIA's; other vendors' FP4 units
            // take MX blocks (32 values, power-of-two scales).
            Quant::Nvfp4 if self.vendor != Vendor::Nvidia => Err(format!("{} ({}) runs no nvfp4 (NVIDIA's 4-bit format); its fp4 units take mxfp4", self.id, self.name)),
            Quant::Nvfp4 => Ok(()),
            // The engines' MXFP4 kernels (gpt-oss's) start at Ampere on NVIDIA parts.
            Quant::Mxfp4 if self.vendor == Vendor::Nvidia && self.compute_major() < 8 => Err(format!("{} ({}) runs no mxfp4 layers: the engines' MXFP4 kernels need Ampere or later", self.id, self.name)),
            Quant::Mxfp4 | Quant::Int4 => self.check_dtype(DType::Fp16),
        }
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

    /// Bytes per second the SMs can stream from L2: [`L2_BYTES_PER_SM_CLOCK`] per SM per
    /// boost-clock cycle. No datasheet gives it; it grows with the SMs and their clock, not
    /// with the DRAM behind it.
    pub fn l2_bandwidth(&self) -> f64 {
        self.sm_count as f64 * self.boost_clock_mhz * 1e6 * L2_BYTES_PER_SM_CLOCK
    }

    /// All names this GPU answers to.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.id.as_str()).chain(std::iter::once(self.name.as_str())).chain(self.aliases.iter().map(|s| s.as_str()))
    }

    /// The figures a kernel's time depends on that differ between `self` and `other` (its
    /// silicon, clocks, caches, memory bandwidth, board power and peaks), by field name: where
    /// any does, a measurement of one is not a measurement of the other.
    pub fn kernel_figures_differing_from(&self, other: &Gpu) -> Vec<&'static str> {
        let same = [
            ("vendor", self.vendor == other.vendor),
            ("architecture", self.architecture == other.architecture),
            ("compute_capability", self.compute_capability == other.compute_capability),
            ("sm_count", self.sm_count == other.sm_count),
            ("fp32_lanes_per_sm", self.fp32_lanes_per_sm == other.fp32_lanes_per_sm),
            ("base_clock_mhz", self.base_clock_mhz == other.base_clock_mhz),
            ("boost_clock_mhz", self.boost_clock_mhz == other.boost_clock_mhz),
            ("memory_bandwidth_gbs", self.memory_bandwidth_gbs == other.memory_bandwidth_gbs),
            ("l2_cache_mb", self.l2_cache_mb == other.l2_cache_mb),
            ("infinity_cache_mb", self.infinity_cache_mb == other.infinity_cache_mb),
            ("tdp_w", self.tdp_w == other.tdp_w),
            ("peak_tflops", self.peak_tflops == other.peak_tflops),
            ("occupancy", self.occupancy == other.occupancy),
        ];
        same.into_iter().filter(|(_, same)| !same).map(|(field, _)| field).collect()
    }

    /// Checks the figures are physically meaningful: every count, clock, size and rate that a
    /// prediction divides by or scales with lies in [`PLAUSIBLE`] (a subnormal peak would turn
    /// times infinite), the rest are non-negative and below its upper end. Every problem is
    /// named, on one line.
    pub fn validate(&self) -> Result<(), String> {
        let problems = self.problems();
        if problems.is_empty() {
            return Ok(());
        }
        Err(format!("GPU '{}': {}", self.id, problems.join("; ")))
    }

    /// What [`Gpu::validate`] finds wrong, one phrase per field.
    pub fn problems(&self) -> Vec<String> {
        let o = &self.occupancy;
        let mut problems = Vec::new();
        let mut positive = vec![
            ("sm_count", f64::from(self.sm_count)),
            ("fp32_lanes_per_sm", f64::from(self.fp32_lanes_per_sm)),
            ("base_clock_mhz", self.base_clock_mhz),
            ("boost_clock_mhz", self.boost_clock_mhz),
            ("memory_gb", self.memory_gb),
            ("memory_bandwidth_gbs", self.memory_bandwidth_gbs),
            ("tdp_w", self.tdp_w),
            ("process_nm", self.process_nm),
            ("peak_tflops.fp32", self.peak_tflops.fp32),
            ("occupancy.warp_size", f64::from(o.warp_size)),
            ("occupancy.max_threads_per_sm", f64::from(o.max_threads_per_sm)),
            ("occupancy.max_warps_per_sm", f64::from(o.max_warps_per_sm)),
            ("occupancy.max_blocks_per_sm", f64::from(o.max_blocks_per_sm)),
            ("occupancy.max_threads_per_block", f64::from(o.max_threads_per_block)),
            ("occupancy.registers_per_sm", f64::from(o.registers_per_sm)),
            ("occupancy.max_registers_per_block", f64::from(o.max_registers_per_block)),
            ("occupancy.max_registers_per_thread", f64::from(o.max_registers_per_thread)),
            ("occupancy.shared_mem_per_sm_kb", o.shared_mem_per_sm_kb),
            ("occupancy.max_shared_mem_per_block_kb", o.max_shared_mem_per_block_kb),
            ("occupancy.register_alloc_unit", f64::from(o.register_alloc_unit)),
            ("occupancy.shared_mem_alloc_unit_bytes", f64::from(o.shared_mem_alloc_unit_bytes)),
        ];
        if let Some(p) = &self.package {
            positive.extend([("package.devices", f64::from(p.devices)), ("package.memory_gb", p.memory_gb), ("package.tdp_w", p.tdp_w)]);
        }
        let (lo, hi) = PLAUSIBLE;
        for (field, v) in positive {
            if !(v.is_finite() && (lo..=hi).contains(&v)) {
                problems.push(format!("{field} must be a positive number between {lo} and {hi:e}, got {}", wavecast_ir::quoted(v)));
            }
        }
        // The FP32 peak is the lanes at the boost clock (twice that where lanes dual-issue, as on
        // CDNA3): an entry whose figures disagree by more would be priced by the one figure a
        // model reads against the other (more SMs predicting slower).
        let lanes_tflops = f64::from(self.sm_count) * f64::from(self.fp32_lanes_per_sm) * 2.0 * self.boost_clock_mhz * 1e6 / 1e12;
        let (lo_ratio, hi_ratio) = FP32_PEAK_OVER_LANES;
        if problems.is_empty() && !(lo_ratio..=hi_ratio).contains(&(self.peak_tflops.fp32 / lanes_tflops)) {
            problems.push(format!(
                "peak_tflops.fp32 {} disagrees with sm_count × fp32_lanes_per_sm × 2 FLOP × boost_clock_mhz = {lanes_tflops:.2} TFLOP/s (it should be {lo_ratio}–{hi_ratio}× that): correct one of them",
                self.peak_tflops.fp32
            ));
        }
        let p = &self.peak_tflops;
        // Each optional peak, and the most it may be over the FP32 peak (none for FP64).
        let optional = [
            ("fp64", p.fp64, f64::INFINITY),
            ("tf32", p.tf32, MATRIX_16_OVER_FP32),
            ("fp16", p.fp16, MATRIX_16_OVER_FP32),
            ("bf16", p.bf16, MATRIX_16_OVER_FP32),
            ("fp8", p.fp8, MATRIX_8_OVER_FP32),
            ("fp4", p.fp4, MATRIX_4_OVER_FP32),
            ("int8", p.int8, MATRIX_8_OVER_FP32),
            ("fp32_matrix", p.fp32_matrix, MATRIX_16_OVER_FP32),
        ];
        for (field, v, most) in optional {
            let Some(v) = v else { continue };
            if !(v.is_finite() && (lo..=hi).contains(&v)) {
                problems.push(format!("peak_tflops.{field} must be positive, between {lo} and {hi:e}, got {}", wavecast_ir::quoted(v)));
            } else if problems.is_empty() && v > most * p.fp32 {
                problems.push(format!("peak_tflops.{field} {v} is over {most}× the FP32 peak {}, which no GPU's matrix units reach: correct one of them", p.fp32));
            }
        }
        let non_negative = [
            ("l2_cache_mb", self.l2_cache_mb),
            ("infinity_cache_mb", self.infinity_cache_mb),
            ("interconnect.nvlink_gbs", self.interconnect.nvlink_gbs),
            ("interconnect.pcie_gbs", self.interconnect.pcie_gbs),
            ("interconnect.nic_gbps", self.interconnect.nic_gbps),
        ];
        for (field, v) in non_negative {
            if !(v.is_finite() && (0.0..=hi).contains(&v)) {
                problems.push(format!("{field} must be zero or positive, at most {hi:e}, got {v}"));
            }
        }
        for (i, m) in self.measured.iter().enumerate() {
            if !MEASUREMENT_SOURCES.contains(&m.as_str()) {
                problems.push(format!("measured names unknown source '{m}' (known: {})", MEASUREMENT_SOURCES.join(", ")));
            } else if self.measured[..i].contains(m) {
                problems.push(format!("measured lists '{m}' twice"));
            }
        }
        // Costs per token divide by the price: a free GPU is given by leaving `price` out.
        if let Some(p) = self.price.as_ref().filter(|p| !(p.usd_per_hour.is_finite() && (lo..=hi).contains(&p.usd_per_hour))) {
            problems.push(format!("price.usd_per_hour must be a positive number between {lo} and {hi:e} (or leave [gpu.price] out), got {}", p.usd_per_hour));
        }
        problems
    }
}
