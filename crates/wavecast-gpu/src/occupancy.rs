//! Occupancy calculator: how many thread blocks of a kernel can be resident on one SM (NVIDIA)
//! or one compute unit (AMD) at once.
//!
//! Resident blocks = the minimum of four limits — warps, registers, shared memory and the
//! hardware block limit. The per-device numbers (threads and warps per SM, register file,
//! shared memory per SM and per block, allocation units, reserved shared memory) come from the
//! catalog's `occupancy` table, which holds NVIDIA's "Technical Specifications per Compute
//! Capability" table of the CUDA C++ Programming Guide (§ "Compute Capabilities") for each GPU.
//! The two constants that table does not carry live here:
//!
//! - register file sub-partitions per SM (warp schedulers): 2 on compute capability 6.0
//!   (GP100), 4 on every other capability from 6.1 to 9.0 (the guide's per-architecture
//!   sections; the CUDA occupancy calculator allocates registers per sub-partition);
//! - on AMD CDNA the 4 SIMDs of a compute unit play the role of the sub-partitions: each SIMD
//!   holds its own wavefronts' VGPRs (AMD CDNA2 ISA guide); the catalog's
//!   `register_alloc_unit` (8 VGPRs × 64 lanes) is the per-wave granule.
//!
//! The register limit follows the CUDA occupancy calculator: a warp's registers are
//! `regs/thread × warp size` rounded up to the allocation unit; each sub-partition holds
//! `⌊(registers per SM / sub-partitions) / registers per warp⌋` warps; a block needs
//! `⌈threads / warp size⌉` warps. Shared memory per block is its static + dynamic size plus the
//! per-block reservation (1 KiB from cc 8.0), rounded up to the allocation unit.

use crate::{Gpu, Vendor};
use thiserror::Error;

/// What one kernel launch asks of an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelResources {
    pub threads_per_block: u32,
    /// Registers per thread as the compiler allocated them (0 = unknown: no register limit).
    pub registers_per_thread: u32,
    /// Static plus dynamic shared memory per block, bytes.
    pub shared_mem_bytes: u32,
}

/// The resource that bounds residency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Warps,
    Registers,
    SharedMemory,
    Blocks,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Residency {
    /// Thread blocks resident per SM (per CU on AMD) at once.
    pub blocks_per_sm: u32,
    pub limiter: Limiter,
    /// Active warps (wavefronts) per SM when `blocks_per_sm` blocks are resident.
    pub warps_per_sm: u32,
    /// Active warps / maximum warps per SM, in [0, 1].
    pub fraction: f64,
}

/// The launch cannot run on this GPU at all (it would fail with a launch error).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum OccupancyError {
    #[error("a block of 0 threads cannot be launched")]
    EmptyBlock,
    #[error("{threads} threads per block exceed the {max} allowed on {gpu}")]
    BlockTooLarge { gpu: String, threads: u32, max: u32 },
    #[error("{regs} registers per thread exceed the {max} allowed on {gpu}")]
    TooManyRegisters { gpu: String, regs: u32, max: u32 },
    #[error("a block needs {needed} registers, more than the {max} per block on {gpu}")]
    BlockRegisters { gpu: String, needed: u64, max: u32 },
    #[error("{bytes} B of shared memory per block exceed the {max} B allowed on {gpu}")]
    SharedMemTooLarge { gpu: String, bytes: u64, max: u64 },
}

/// Register-file sub-partitions per SM (NVIDIA) or SIMDs per CU (AMD).
pub fn register_sub_partitions(gpu: &Gpu) -> u32 {
    match gpu.vendor {
        // An Xe2 core's eight vector engines share its register file in four pairs.
        Vendor::Amd | Vendor::Intel => 4,
        Vendor::Nvidia if gpu.compute_capability.trim() == "6.0" => 2,
        Vendor::Nvidia => 4,
    }
}

fn round_up(v: u64, unit: u64) -> u64 {
    if unit <= 1 {
        v
    } else {
        v.div_ceil(unit) * unit
    }
}

/// Resident blocks per SM for `k` on `gpu`, and the resource that limits it.
pub fn occupancy(gpu: &Gpu, k: &KernelResources) -> Result<Residency, OccupancyError> {
    let o = &gpu.occupancy;
    let warp = o.warp_size.max(1);
    if k.threads_per_block == 0 {
        return Err(OccupancyError::EmptyBlock);
    }
    if k.threads_per_block > o.max_threads_per_block {
        return Err(OccupancyError::BlockTooLarge { gpu: gpu.id.clone(), threads: k.threads_per_block, max: o.max_threads_per_block });
    }
    let warps_per_block = k.threads_per_block.div_ceil(warp);
    let max_warps = o.max_warps_per_sm.min(o.max_threads_per_sm / warp);
    let mut limits = vec![(Limiter::Warps, max_warps / warps_per_block), (Limiter::Blocks, o.max_blocks_per_sm)];
    if let Some(r) = register_limit(gpu, k, warps_per_block)? {
        limits.push((Limiter::Registers, r));
    }
    if let Some(s) = shared_memory_limit(gpu, k)? {
        limits.push((Limiter::SharedMemory, s));
    }
    // Ties go to the first listed limiter, so the report names the most basic constraint.
    let (limiter, blocks) = limits.into_iter().fold((Limiter::Warps, u32::MAX), |best, l| if l.1 < best.1 { l } else { best });
    let warps_per_sm = blocks * warps_per_block;
    Ok(Residency { blocks_per_sm: blocks, limiter, warps_per_sm, fraction: warps_per_sm as f64 / max_warps.max(1) as f64 })
}

/// Blocks per SM allowed by the register file; `None` when the register count is unknown.
fn register_limit(gpu: &Gpu, k: &KernelResources, warps_per_block: u32) -> Result<Option<u32>, OccupancyError> {
    let o = &gpu.occupancy;
    if k.registers_per_thread == 0 {
        return Ok(None);
    }
    if k.registers_per_thread > o.max_registers_per_thread {
        return Err(OccupancyError::TooManyRegisters { gpu: gpu.id.clone(), regs: k.registers_per_thread, max: o.max_registers_per_thread });
    }
    let per_warp = round_up(k.registers_per_thread as u64 * o.warp_size as u64, o.register_alloc_unit.max(1) as u64);
    let per_block = per_warp * warps_per_block as u64;
    if per_block > o.max_registers_per_block as u64 {
        return Err(OccupancyError::BlockRegisters { gpu: gpu.id.clone(), needed: per_block, max: o.max_registers_per_block });
    }
    let parts = register_sub_partitions(gpu) as u64;
    let warps_per_part = (o.registers_per_sm as u64 / parts) / per_warp;
    Ok(Some(((warps_per_part * parts) / warps_per_block as u64) as u32))
}

/// Blocks per SM allowed by shared memory; `None` when the block uses none and the GPU reserves
/// none per block.
fn shared_memory_limit(gpu: &Gpu, k: &KernelResources) -> Result<Option<u32>, OccupancyError> {
    let o = &gpu.occupancy;
    let max_block = (o.max_shared_mem_per_block_kb * 1024.0) as u64;
    if k.shared_mem_bytes as u64 > max_block {
        return Err(OccupancyError::SharedMemTooLarge { gpu: gpu.id.clone(), bytes: k.shared_mem_bytes as u64, max: max_block });
    }
    let needed = k.shared_mem_bytes as u64 + o.reserved_shared_mem_per_block_bytes as u64;
    if needed == 0 {
        return Ok(None);
    }
    let per_block = round_up(needed, o.shared_mem_alloc_unit_bytes as u64);
    let per_sm = (o.shared_mem_per_sm_kb * 1024.0) as u64;
    Ok(Some((per_sm / per_block).min(u32::MAX as u64) as u32))
}

/// Blocks the whole GPU runs at once: one "wave" in Habitat's terms.
pub fn wave_size(gpu: &Gpu, k: &KernelResources) -> Result<u64, OccupancyError> {
    Ok(occupancy(gpu, k)?.blocks_per_sm as u64 * gpu.sm_count as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Catalog;

    fn res(threads: u32, regs: u32, smem: u32) -> KernelResources {
        KernelResources { threads_per_block: threads, registers_per_thread: regs, shared_mem_bytes: smem }
    }

    #[test]
    fn a100_limits_match_hand_computation() {
        let cat = Catalog::builtin();
        let a100 = cat.get("a100-sxm-80gb").unwrap();
        // 128 threads, 90 regs: 96×32 = 3072 regs/warp; 16384/3072 = 5 warps per partition →
        // 20 warps → 5 blocks by registers; 48 KiB + 1 KiB reserved → 164/49 = 3 blocks.
        let o = occupancy(a100, &res(128, 90, 49152)).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter), (3, Limiter::SharedMemory));
        let o = occupancy(a100, &res(128, 90, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter), (5, Limiter::Registers));
        // Tiny blocks hit the 32-block limit; 1024-thread blocks the 64-warp limit.
        assert_eq!(occupancy(a100, &res(32, 16, 0)).unwrap().limiter, Limiter::Blocks);
        let o = occupancy(a100, &res(1024, 32, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter, o.fraction), (2, Limiter::Warps, 1.0));
    }

    #[test]
    fn architecture_differences_show() {
        let cat = Catalog::builtin();
        // Turing: 32 warps and 16 blocks per SM; Volta: 64 and 32.
        let t4 = occupancy(cat.get("t4").unwrap(), &res(64, 16, 0)).unwrap();
        let v100 = occupancy(cat.get("v100-sxm2").unwrap(), &res(64, 16, 0)).unwrap();
        assert_eq!((t4.blocks_per_sm, v100.blocks_per_sm), (16, 32));
        // Ada (8.9): 48 warps, 24 blocks; GA10x (8.6): 48 warps, 16 blocks.
        let l4 = occupancy(cat.get("l4").unwrap(), &res(64, 16, 0)).unwrap();
        let a10 = occupancy(cat.get("a10").unwrap(), &res(64, 16, 0)).unwrap();
        assert_eq!((l4.blocks_per_sm, l4.limiter, a10.blocks_per_sm, a10.limiter), (24, Limiter::Warps, 16, Limiter::Blocks));
        assert_eq!(occupancy(cat.get("l4").unwrap(), &res(1024, 16, 0)).unwrap().blocks_per_sm, 1);
        // GP100 has two register sub-partitions: 168 regs → 5376/warp; 32768/5376 = 6 per half → 12.
        let p100 = occupancy(cat.get("p100").unwrap(), &res(32, 168, 0)).unwrap();
        assert_eq!(p100.warps_per_sm, 12);
        // 200 regs → 6400/warp: four quarters hold 2 warps each (8), two halves 5 each (10).
        let p4 = occupancy(cat.get("p4").unwrap(), &res(32, 200, 0)).unwrap();
        let p100 = occupancy(cat.get("p100").unwrap(), &res(32, 200, 0)).unwrap();
        assert_eq!((p4.warps_per_sm, p100.warps_per_sm), (8, 10));
    }

    #[test]
    fn amd_wavefront_model() {
        let cat = Catalog::builtin();
        let mi = cat.get("mi250").unwrap();
        // 256 threads = 4 waves; 128 VGPRs → 512/128 = 4 waves per SIMD → 16 waves → 4 blocks.
        let o = occupancy(mi, &res(256, 128, 0)).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter), (4, Limiter::Registers));
        // 20 KiB of LDS per block: 64/20 = 3 blocks.
        let o = occupancy(mi, &res(64, 16, 20 * 1024)).unwrap();
        assert_eq!((o.blocks_per_sm, o.limiter), (3, Limiter::SharedMemory));
    }

    #[test]
    fn impossible_launches_are_errors_not_zero() {
        let cat = Catalog::builtin();
        let a100 = cat.get("a100").unwrap();
        assert!(matches!(occupancy(a100, &res(2048, 16, 0)), Err(OccupancyError::BlockTooLarge { .. })));
        assert!(matches!(occupancy(a100, &res(128, 300, 0)), Err(OccupancyError::TooManyRegisters { .. })));
        assert!(matches!(occupancy(a100, &res(1024, 255, 0)), Err(OccupancyError::BlockRegisters { .. })));
        assert!(matches!(occupancy(a100, &res(128, 32, 200 * 1024)), Err(OccupancyError::SharedMemTooLarge { .. })));
        assert!(matches!(occupancy(a100, &res(0, 32, 0)), Err(OccupancyError::EmptyBlock)));
        // A V100 allows 96 KiB per block (opt-in), a T4 64 KiB.
        let big = res(128, 32, 80 * 1024);
        assert!(occupancy(cat.get("v100").unwrap(), &big).is_ok());
        assert!(occupancy(cat.get("t4").unwrap(), &big).is_err());
    }

    #[test]
    fn wave_size_is_blocks_per_sm_times_sms() {
        let cat = Catalog::builtin();
        let h100 = cat.get("h100").unwrap();
        assert_eq!(wave_size(h100, &res(256, 32, 0)).unwrap(), 8 * 132);
    }
}
