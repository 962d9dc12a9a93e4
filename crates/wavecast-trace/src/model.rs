//! What wavecast keeps of a profiler trace: devices, host-side operators, GPU kernels (linked to
//! the operator that launched them) and memory copies. Times are microseconds, as in the trace.

use serde::Serialize;
use std::sync::Arc;

/// One entry of the trace's `deviceProperties` (what `cudaGetDeviceProperties` reported).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DeviceProps {
    pub id: u32,
    pub name: String,
    pub compute_major: u32,
    pub compute_minor: u32,
    pub sm_count: u32,
    pub total_memory_bytes: u64,
    pub warp_size: u32,
    pub max_threads_per_sm: u32,
    pub registers_per_sm: u32,
    pub shared_mem_per_sm: u64,
    pub shared_mem_per_block: u64,
}

impl DeviceProps {
    pub fn compute_capability(&self) -> String {
        format!("{}.{}", self.compute_major, self.compute_minor)
    }

    /// ROCm reports 64-wide wavefronts; CUDA warps are 32 wide.
    pub fn is_amd(&self) -> bool {
        self.warp_size == 64
    }
}

/// A host-side operator (`cpu_op`): an aten op, an autograd node, a module call.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuOp {
    pub name: Arc<str>,
    pub ts: f64,
    pub dur: f64,
    /// Process and thread, hashed when the trace names them with strings.
    pub pid: u64,
    pub tid: u64,
    /// `Input Dims`: one entry per input; `None` for scalars, lists and absent arguments.
    pub input_dims: Vec<Option<Vec<u64>>>,
    /// `Input type`: e.g. `float`, `c10::BFloat16`, `Scalar`, `` for None.
    pub input_types: Vec<String>,
    /// Index of the event in `traceEvents`, for error messages.
    pub event: usize,
}

impl CpuOp {
    pub fn has_shapes(&self) -> bool {
        self.input_dims.iter().any(|d| d.is_some())
    }
}

/// Hardware-counter figures a trace may carry for a kernel (not written by Kineto itself; a
/// tracker that replays kernels under CUPTI metrics can add `flops` and `dram bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metrics {
    pub flops: f64,
    pub dram_bytes: f64,
}

/// One GPU kernel execution.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub name: Arc<str>,
    pub ts: f64,
    pub dur: f64,
    pub device: Option<u32>,
    pub stream: Option<u64>,
    pub correlation: Option<u64>,
    /// Grid and block sizes; absent in ROCm traces.
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    pub registers_per_thread: Option<u32>,
    /// Static plus dynamic shared memory per block, bytes.
    pub shared_mem_bytes: Option<u64>,
    /// Grid blocks ÷ SMs, as the profiler reports it.
    pub reported_blocks_per_sm: Option<f64>,
    /// Kineto's `est. achieved occupancy %`.
    pub reported_occupancy_pct: Option<f64>,
    pub metrics: Option<Metrics>,
    /// The innermost operator that launched it (index into [`Trace::ops`]).
    pub op: Option<usize>,
    pub event: usize,
}

impl Kernel {
    pub fn blocks(&self) -> Option<u64> {
        self.grid.and_then(volume)
    }

    pub fn threads_per_block(&self) -> Option<u64> {
        self.block.and_then(volume)
    }
}

/// x·y·z of a launch triple; `None` when it would overflow (the reader rejects such launches).
fn volume(d: [u64; 3]) -> Option<u64> {
    d[0].checked_mul(d[1])?.checked_mul(d[2])
}

/// A memory copy or memset on the GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    pub name: Arc<str>,
    pub dur: f64,
    pub bytes: Option<u64>,
    pub device: Option<u32>,
}

/// A parsed and linked trace.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The file (or label) it came from.
    pub source: String,
    pub devices: Vec<DeviceProps>,
    pub ops: Vec<CpuOp>,
    pub kernels: Vec<Kernel>,
    pub transfers: Vec<Transfer>,
    /// `ProfilerStep#N` annotations: iterations the trace covers.
    pub profiler_steps: u32,
    /// Events in `traceEvents`.
    pub events: usize,
}

impl Trace {
    /// Total kernel time, microseconds: the iteration time on the origin GPU.
    pub fn kernel_time_us(&self) -> f64 {
        self.kernels.iter().map(|k| k.dur).sum()
    }

    pub fn transfer_time_us(&self) -> f64 {
        self.transfers.iter().map(|t| t.dur).sum()
    }

    /// The operator that launched `k`, if linked.
    pub fn op_of(&self, k: &Kernel) -> Option<&CpuOp> {
        k.op.and_then(|i| self.ops.get(i))
    }

    /// Whether operator input shapes were recorded (`record_shapes=True`).
    pub fn has_shapes(&self) -> bool {
        self.ops.iter().any(|o| o.has_shapes())
    }

    /// The device that ran most of the kernel time, with its properties when the trace has them.
    pub fn main_device(&self) -> Option<&DeviceProps> {
        let mut time: Vec<(u32, f64)> = Vec::new();
        for k in &self.kernels {
            let d = k.device.unwrap_or(0);
            match time.iter_mut().find(|(id, _)| *id == d) {
                Some(e) => e.1 += k.dur,
                None => time.push((d, k.dur)),
            }
        }
        let main = time.into_iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|(d, _)| d).unwrap_or(0);
        self.devices.iter().find(|p| p.id == main).or_else(|| self.devices.first())
    }
}
