//! What a measured kernel asks of the GPU, in the quantities the sustained roofline prices:
//! FLOPs as the tensor cores execute them (rows padded to the MMA instruction, never to a
//! library tile), bytes that must cross DRAM, how many independent tiles the work splits into
//! (wave quantization), and which peak applies; for collectives, the bytes each GPU sends over
//! its slowest link.

use crate::physics::{instruction_rows, sm_count, tiles_along};
use wavecast_data::{Collective, Precision, Shape};
use wavecast_gpu::Gpu;
use wavecast_ir::ops::{Attention, GatedDelta, Gemm};
use wavecast_ir::{DType, OpClass, MAX_WORK};

/// The output tile a GEMM-like kernel gives one SM (rows × columns).
const TILE: f64 = 128.0;

#[derive(Debug, Clone, PartialEq)]
pub struct KernelWork {
    /// FLOPs of the math (what a roofline counts).
    pub flops: f64,
    /// FLOPs the tensor cores execute: rows padded to the instruction's M.
    pub padded_flops: f64,
    /// Bytes that must come from or go to DRAM at least once.
    pub bytes: f64,
    /// Where the shape leaves its work open (a fused MoE: how the tokens are routed, whether
    /// the experts are gated), the FLOPs and DRAM bytes no kernel can do without, for the
    /// floor; `None` where the shape fixes its work (`flops` and `bytes`). See
    /// [`KernelWork::least`].
    pub open_least: Option<(f64, f64)>,
    /// Independent output tiles (0 for memory-only ops).
    pub tiles: f64,
    /// Length of each tile's serial reduction loop (K of a GEMM, the KV length of attention).
    pub reduction: f64,
    /// Activation rows quantized on the fly before the math (each costs a per-row scale).
    pub quantized_rows: f64,
    /// Dense peak of the format the math runs in, FLOP/s (None: memory-only op).
    pub peak_flops: Option<f64>,
    /// The GPU's SMs and datasheet DRAM bandwidth (B/s).
    pub sms: f64,
    pub bandwidth: f64,
    /// Steps the kernel must take one after another whatever the GPU's width (a chunked
    /// scan's chunks, each waiting for the state the previous one left); each costs the
    /// fixed time a wave of tiles does, in place of the waves. 0: the waves count.
    pub serial_steps: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveWork {
    pub op: Collective,
    pub gpus: f64,
    /// Bytes each GPU puts on its link (ring algorithms).
    pub link_bytes: f64,
    pub link: Link,
    /// The link's one-way bandwidth, B/s.
    pub link_bandwidth: f64,
}

/// Which link a collective crosses; each has its own fitted latency and efficiency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Link {
    NvLink,
    Pcie,
    Network,
}

impl Link {
    pub fn as_str(self) -> &'static str {
        match self {
            Link::NvLink => "nvlink",
            Link::Pcie => "pcie",
            Link::Network => "network",
        }
    }
}

/// Per-GPU bandwidth between nodes when the catalog has no figure: one 200 Gb/s (HDR) NIC per
/// GPU, as in DGX A100; a fitted efficiency absorbs faster fabrics.
const NETWORK_BYTES_PER_S: f64 = 25e9;

#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    Kernel(KernelWork),
    /// Kernels run one after another as one timed module (MLA: projections, then attention);
    /// priced as one call's fixed cost plus each kernel's time.
    Chain(Vec<KernelWork>),
    Collective(CollectiveWork),
}

impl Work {
    /// The least time the physics model prices: FLOPs at the dense peak, bytes at the
    /// achievable fraction of datasheet bandwidth (the link's one-way bandwidth for
    /// collectives). A modelling choice of the physics rung, not a bound on measured times:
    /// see [`Work::bound_seconds`].
    pub fn floor_seconds(&self) -> f64 {
        match self {
            Work::Kernel(k) => k.floor_seconds(super::ACHIEVABLE_BANDWIDTH),
            Work::Chain(ks) => ks.iter().map(|k| k.floor_seconds(super::ACHIEVABLE_BANDWIDTH)).sum(),
            Work::Collective(c) => c.link_bytes / c.link_bandwidth,
        }
    }

    /// The physical bound no answer drawn from measurements may undercut. A shape that fixes
    /// its work (every family but the fused MoE) is bounded as the physics rung is
    /// ([`Work::floor_seconds`]: its FLOPs at the dense peak, its bytes at the achievable
    /// bandwidth). A fused MoE leaves its work open (how the tokens are routed, whether the
    /// experts are gated): its least work ([`KernelWork::least`]) at the dense peak and
    /// the datasheet bandwidth — GB200's vLLM fused MoE streamed Nemotron 3's experts at
    /// 93-94 % of it, and skewed routings hit fewer experts than the expected count.
    pub fn bound_seconds(&self) -> f64 {
        match self {
            Work::Kernel(k) if k.leaves_work_open() => k.least_seconds(1.0),
            _ => self.floor_seconds(),
        }
    }

    /// [`Work::bound_seconds`] of the kernel as a benchmark times it, calling it again and
    /// again on the same buffers: the bytes that fit in the GPU's L2 are there already and
    /// stream at its L2 bandwidth ([`Gpu::l2_bandwidth`]), only the rest at DRAM's. What a
    /// transfer of measured times may not undercut; the op in a model, whose weights and
    /// caches the other layers evict, keeps [`Work::bound_seconds`]. The L40S (96 MB of L2
    /// before 864 GB/s of GDDR6) streamed 19 MB passes in 5.3 µs, a fifth of their time at
    /// DRAM bandwidth, and 41 % of its streaming rows (by 3.9× at the median), 54 % of its gated
    /// delta decode rows and 16 % of its BF16 GEMM rows beat that DRAM bound; on the H100 (50 MB
    /// before 3.35 TB/s) 12 % of its streaming rows did, by 1.25× at the median, and under 1 % of
    /// its GEMM and attention rows (AIConfigurator's tables).
    pub fn warm_bound_seconds(&self, gpu: &Gpu) -> f64 {
        match self {
            Work::Kernel(k) if k.leaves_work_open() => {
                let (flops, bytes) = k.least();
                k.warm_seconds_for(flops, bytes, 1.0, gpu)
            }
            Work::Kernel(k) => k.warm_seconds_for(k.flops, k.bytes, super::ACHIEVABLE_BANDWIDTH, gpu),
            Work::Chain(ks) => ks.iter().map(|k| k.warm_seconds_for(k.flops, k.bytes, super::ACHIEVABLE_BANDWIDTH, gpu)).sum(),
            Work::Collective(_) => self.floor_seconds(),
        }
    }

    /// [`Work::roofline_seconds`] on warm buffers (see [`Work::warm_bound_seconds`]): what
    /// a benchmark's time of the shape scales with from one GPU to another where its bytes
    /// fit in L2 — the SMs and their clock there, DRAM bandwidth only beyond.
    pub fn warm_roofline_seconds(&self, gpu: &Gpu) -> f64 {
        match self {
            Work::Kernel(k) => k.warm_seconds_for(k.flops, k.bytes, 1.0, gpu),
            Work::Chain(ks) => ks.iter().map(|k| k.warm_seconds_for(k.flops, k.bytes, 1.0, gpu)).sum(),
            Work::Collective(_) => self.roofline_seconds(),
        }
    }

    /// The plain roofline: FLOPs at the dense peak, bytes at datasheet bandwidth (one-way link
    /// bandwidth for collectives), whichever is longer. No prediction goes below it.
    pub fn roofline_seconds(&self) -> f64 {
        match self {
            Work::Kernel(k) => k.floor_seconds(1.0),
            Work::Chain(ks) => ks.iter().map(|k| k.floor_seconds(1.0)).sum(),
            Work::Collective(c) => c.link_bytes / c.link_bandwidth,
        }
    }

    /// The larger of FLOPs and bytes, summed over kernels: what the size limit checks.
    fn size(&self) -> f64 {
        match self {
            Work::Kernel(k) => k.padded_flops.max(k.bytes),
            Work::Chain(ks) => ks.iter().map(|k| k.padded_flops.max(k.bytes)).sum(),
            Work::Collective(c) => c.link_bytes,
        }
    }
}

impl KernelWork {
    /// FLOPs at the dense peak or bytes at `bandwidth_share` of datasheet bandwidth, whichever
    /// is longer.
    fn floor_seconds(&self, bandwidth_share: f64) -> f64 {
        self.seconds_for(self.flops, self.bytes, bandwidth_share)
    }

    /// `flops` at the dense peak or `bytes` at `bandwidth_share` of datasheet bandwidth,
    /// whichever is longer.
    fn seconds_for(&self, flops: f64, bytes: f64, bandwidth_share: f64) -> f64 {
        (flops / self.peak_flops.unwrap_or(f64::INFINITY)).max(bytes / (bandwidth_share * self.bandwidth))
    }

    /// [`KernelWork::seconds_for`] with the bytes that fit in `gpu`'s L2 read from there.
    fn warm_seconds_for(&self, flops: f64, bytes: f64, bandwidth_share: f64, gpu: &Gpu) -> f64 {
        let dram = bytes / (bandwidth_share * self.bandwidth);
        let in_l2 = bytes.min(gpu.l2_bytes()).max(0.0);
        let warm = if in_l2 > 0.0 && gpu.l2_bandwidth() > 0.0 { in_l2 / gpu.l2_bandwidth() + (bytes - in_l2) / (bandwidth_share * self.bandwidth) } else { dram };
        (flops / self.peak_flops.unwrap_or(f64::INFINITY)).max(warm.min(dram))
    }

    /// FLOPs and DRAM bytes the shape guarantees whatever runs it: its own where it fixes
    /// its work, its least where it leaves it open.
    pub fn least(&self) -> (f64, f64) {
        self.open_least.unwrap_or((self.flops, self.bytes))
    }

    /// [`KernelWork::floor_seconds`] of the work the shape guarantees.
    fn least_seconds(&self, bandwidth_share: f64) -> f64 {
        let (flops, bytes) = self.least();
        self.seconds_for(flops, bytes, bandwidth_share)
    }

    /// Whether the shape guarantees less than its expected work (a fused MoE).
    fn leaves_work_open(&self) -> bool {
        let (flops, bytes) = self.least();
        flops < self.flops || bytes < self.bytes
    }

    /// A kernel that only moves `bytes` through DRAM.
    fn memory_only(bytes: f64, gpu: &Gpu) -> KernelWork {
        KernelWork { flops: 0.0, padded_flops: 0.0, bytes, open_least: None, tiles: 0.0, reduction: 0.0, quantized_rows: 0.0, peak_flops: None, sms: sm_count(gpu), bandwidth: gpu.bandwidth(), serial_steps: 0.0 }
    }

    /// One kernel standing for the whole chain in the learned correction's features: FLOPs,
    /// bytes and tiles summed, the longest reduction, the first kernel's peak.
    pub fn combined(kernels: &[KernelWork]) -> Option<KernelWork> {
        let first = kernels.first()?;
        let sum = |f: fn(&KernelWork) -> f64| kernels.iter().map(f).sum::<f64>();
        Some(KernelWork {
            flops: sum(|k| k.flops),
            padded_flops: sum(|k| k.padded_flops),
            bytes: sum(|k| k.bytes),
            open_least: kernels.iter().any(|k| k.open_least.is_some()).then(|| (sum(|k| k.least().0), sum(|k| k.least().1))),
            tiles: sum(|k| k.tiles),
            reduction: kernels.iter().map(|k| k.reduction).fold(0.0, f64::max),
            quantized_rows: sum(|k| k.quantized_rows),
            serial_steps: sum(|k| k.serial_steps),
            ..first.clone()
        })
    }
}

/// Dense peak FLOP/s of the units `precision`'s math runs on; `Err` names what is missing. The
/// formats the IR has go through the catalog's own dtype checks and peaks.
pub fn peak_flops(gpu: &Gpu, precision: Precision) -> Result<f64, String> {
    let missing = || format!("{} has no {} tensor units", gpu.id, precision.as_str());
    let dtype = match precision {
        Precision::Fp32 => DType::Fp32,
        Precision::Fp16 => DType::Fp16,
        Precision::Bf16 => DType::Bf16,
        Precision::Fp8 | Precision::Fp8Block => DType::Fp8,
        // Weight-only formats dequantize to 16-bit and multiply there.
        Precision::Int4Wo | Precision::Mxfp4Wo => DType::Fp16,
        Precision::Nvfp4 => return gpu.peak_tflops.fp4.map(|t| t * 1e12).ok_or_else(missing),
        Precision::Int8 => return gpu.peak_tflops.int8.map(|t| t * 1e12).ok_or_else(missing),
    };
    gpu.check_dtype(dtype)?;
    Ok(gpu.peak_flops(OpClass::Gemm, dtype))
}

fn bytes_of(elements: f64, bits: f64) -> f64 {
    elements * bits / 8.0
}

/// Rows padded to the tensor-core instruction's M (16, or 64 on Hopper and datacenter
/// Blackwell): what a small-M GEMM or a decode step really executes.
fn padded_rows(rows: f64, gpu: &Gpu) -> f64 {
    let r = instruction_rows(gpu);
    (rows / r).ceil() * r
}

fn gemm(m: u64, n: u64, k: u64, precision: Precision, gpu: &Gpu) -> Result<KernelWork, String> {
    let ir = Gemm::linear(m, k, n, false, DType::Bf16).map_err(|e| e.to_string())?;
    let (m, n, k) = (m as f64, n as f64, k as f64);
    let mut bytes = bytes_of(m * k, precision.activation_bits()) + bytes_of(k * n, precision.weight_bits()) + bytes_of(m * n, 16.0);
    let quantized_rows = if precision.quantizes_activations() {
        // Dynamic per-token quantization, a pass of its own: each 16-bit row is read twice
        // (its scale, then its values) and written in the low-precision format.
        bytes += bytes_of(m * k, 32.0 + precision.activation_bits());
        m
    } else {
        0.0
    };
    Ok(KernelWork { flops: ir.flops(), padded_flops: ir.flops() * padded_rows(m, gpu) / m, bytes, open_least: None, tiles: tiles_along(m, TILE) * tiles_along(n, TILE), reduction: k, quantized_rows, peak_flops: Some(peak_flops(gpu, precision)?), sms: sm_count(gpu), bandwidth: gpu.bandwidth(), serial_steps: 0.0 })
}

/// `batch` independent copies of one GEMM's work in one launch (a batched matmul).
fn batched(one: KernelWork, batch: f64) -> KernelWork {
    KernelWork { flops: one.flops * batch, padded_flops: one.padded_flops * batch, bytes: one.bytes * batch, open_least: one.open_least.map(|(f, b)| (f * batch, b * batch)), tiles: one.tiles * batch, quantized_rows: one.quantized_rows * batch, ..one }
}

/// The gated delta rule's FLOPs and bytes as the IR op counts them; one tile per sequence
/// and value head (each keeps its own state), its chunks one after another (no reduction to
/// split: a chunk needs the state the previous one left).
fn gated_delta(rule: &GatedDelta, precision: Precision, gpu: &Gpu) -> Result<KernelWork, String> {
    let flops = rule.flops();
    let tiles = rule.batch as f64 * rule.v_heads as f64;
    Ok(KernelWork { flops, padded_flops: flops, bytes: rule.bytes(), open_least: None, tiles, reduction: 0.0, quantized_rows: 0.0, peak_flops: Some(peak_flops(gpu, precision)?), sms: sm_count(gpu), bandwidth: gpu.bandwidth(), serial_steps: rule.sequential_steps() })
}

/// Attention's math runs in 16 bits (an FP8 KV cache is dequantized on load): FLOPs from the
/// IR's attention op, KV bytes at the cache's precision.
fn attention(a: Attention, kv_precision: Precision, math: Precision, q_rows_padded: f64, tiles: f64, gpu: &Gpu) -> Result<KernelWork, String> {
    let f = |v: u64| v as f64;
    let (k_width, v_width) = (f(a.head_dim), f(a.v_head_dim.unwrap_or(a.head_dim)));
    // A shared cache (MLA's latent) holds one vector per token that serves as key and value.
    let kv_width = if a.shared_kv { k_width } else { k_width + v_width };
    let kv_elements = f(a.batch) * f(a.kv_heads) * a.kv_tokens_read() * kv_width;
    let q_elements = f(a.batch) * f(a.heads) * f(a.q_len) * (k_width + v_width);
    let bytes = bytes_of(kv_elements, kv_precision.weight_bits()) + bytes_of(q_elements, 16.0);
    let rows = f(a.heads) * f(a.q_len) / f(a.kv_heads);
    let padded_flops = a.flops() * q_rows_padded / rows;
    Ok(KernelWork { flops: a.flops(), padded_flops, bytes, open_least: None, tiles, reduction: a.kv_tokens_read(), quantized_rows: 0.0, peak_flops: Some(peak_flops(gpu, math)?), sms: sm_count(gpu), bandwidth: gpu.bandwidth(), serial_steps: 0.0 })
}

/// DeepSeek-V3's latent attention, the model AIConfigurator times (its `model` column): query
/// bottleneck 1536, latent KV 512 plus a shared 64-wide rotary key, heads of 128 + 64 (query
/// and key) and 128 (value), hidden size 7168.
const MLA_HIDDEN: u64 = 7168;
const MLA_Q_RANK: u64 = 1536;
const MLA_KV_RANK: u64 = 512;
const MLA_ROPE: u64 = 64;
const MLA_NOPE: u64 = 128;
const MLA_V: u64 = 128;

/// One MLA call on one GPU: `heads` query heads, `isl` new tokens per sequence after `past`.
struct Mla {
    batch: u64,
    isl: u64,
    past: u64,
    heads: u64,
    kv_precision: Precision,
    attention_precision: Precision,
}

impl Mla {
    /// Prefill: the latent is decompressed to per-head keys and values, then ordinary causal
    /// attention with query/key width 192 and value width 128.
    fn prefill(&self, gpu: &Gpu) -> Result<KernelWork, String> {
        let (isl, heads) = (self.isl, self.heads);
        let kv_len = isl.saturating_add(self.past);
        let a = Attention { batch: self.batch, heads, kv_heads: heads, q_len: isl, kv_len, head_dim: MLA_NOPE + MLA_ROPE, causal: true, dtype: DType::Bf16, backward: false, v_head_dim: Some(MLA_V), shared_kv: false, window: None };
        let tiles = self.batch as f64 * heads as f64 * tiles_along(isl as f64, TILE);
        attention(a, self.kv_precision, self.attention_precision, isl as f64, tiles, gpu)
    }

    /// Decode with the projections absorbed: every head attends over the one latent cache
    /// (512 + 64 wide, read once), so all heads are packed into the instruction's rows.
    fn absorbed_decode(&self, gpu: &Gpu) -> Result<KernelWork, String> {
        let kv_len = self.past.saturating_add(1);
        let a = Attention { batch: self.batch, heads: self.heads, kv_heads: 1, q_len: 1, kv_len, head_dim: MLA_KV_RANK + MLA_ROPE, causal: false, dtype: DType::Bf16, backward: false, v_head_dim: Some(MLA_KV_RANK), shared_kv: true, window: None };
        let tiles = self.batch as f64 * tiles_along(kv_len as f64, 4.0 * TILE);
        attention(a, self.kv_precision, self.attention_precision, padded_rows(self.heads as f64, gpu), tiles, gpu)
    }

    /// The module around `attention`, in order: the fused query and latent down-projection,
    /// the query up-projection, then for prefill the latent's decompression and for decode the
    /// key absorption; attention; the value absorption (decode); the output projection. GEMMs
    /// run in `weights`; the norms and rotary embedding are one memory pass over the latents.
    fn module(&self, attention: KernelWork, generation: bool, weights: Precision, gpu: &Gpu) -> Result<Vec<KernelWork>, String> {
        let tokens = self.batch.saturating_mul(self.isl);
        let per_head = |width: u64| self.heads.saturating_mul(width);
        let mut chain = vec![gemm(tokens, MLA_Q_RANK + MLA_KV_RANK + MLA_ROPE, MLA_HIDDEN, weights, gpu)?, gemm(tokens, per_head(MLA_NOPE + MLA_ROPE), MLA_Q_RANK, weights, gpu)?];
        let latents = tokens as f64 * (MLA_Q_RANK + MLA_KV_RANK) as f64;
        chain.push(KernelWork::memory_only(bytes_of(3.0 * latents, 16.0), gpu));
        if generation {
            // Absorbed per-head matrices: the batch's query rows times each head's 128 × 512.
            chain.push(gemm(tokens, per_head(MLA_KV_RANK), MLA_NOPE, Precision::Bf16, gpu)?);
            chain.push(attention);
            chain.push(gemm(tokens, per_head(MLA_V), MLA_KV_RANK, Precision::Bf16, gpu)?);
        } else {
            let cached = self.batch.saturating_mul(self.isl.saturating_add(self.past));
            chain.push(gemm(cached, per_head(MLA_NOPE + MLA_V), MLA_KV_RANK, weights, gpu)?);
            chain.push(attention);
        }
        chain.push(gemm(tokens, MLA_HIDDEN, per_head(MLA_V), weights, gpu)?);
        Ok(chain)
    }
}

/// Expected distinct experts that `picks` routed token slots hit among `experts` (uniform).
fn experts_hit(experts: f64, picks: f64) -> f64 {
    experts * (1.0 - (1.0 - 1.0 / experts).powf(picks))
}

/// One GPU's share of a fused MoE call: `tokens` routed to `topk` of `experts` each, the
/// experts split over `ep` GPUs, each expert's width `inter` already split over tensor parallelism.
struct MoeRouting {
    tokens: f64,
    hidden: f64,
    inter: f64,
    topk: f64,
    experts: f64,
    ep: f64,
    balanced: bool,
    gated: Option<bool>,
}

/// The FLOPs and DRAM bytes one GPU's fused MoE cannot do without, whatever the routing and
/// expert form (the floor; the expected counts feed the physics model). Per expert hit,
/// 3·H·I weights when the experts are known to be gated (a model's spec: Mixtral, Qwen,
/// DeepSeek), else 2·H·I (a measured row does not say, and Nemotron 3's squared-ReLU experts
/// are not gated). The tokens come in at the activations' format (FP8, FP4 where the format
/// quantizes them) and leave in 16 bits. Experts hit: a balanced routing
/// spreads the slots over at least as many experts as a uniform one is expected to hit; a
/// skewed one (AIConfigurator's power-law rows) may pile them onto as few as `topk` (each
/// token picks `topk` distinct experts). Counted with the expected uniform hits and gated
/// experts, the floor lay above GB200's measured vLLM times on 6-15 % of the BF16 rows (up to
/// 1.9×: Nemotron 3 shapes and skewed routings), which lifted every transfer on them.
fn moe_least_work(r: MoeRouting, precision: Precision) -> (f64, f64) {
    let local_experts = (r.experts / r.ep).max(1.0);
    let hit = if r.balanced { experts_hit(r.experts, r.tokens * r.topk).min(r.experts) / r.ep } else { r.topk.min(r.experts) / r.ep };
    let hit = hit.clamp(1.0_f64.min(local_experts), local_experts);
    let slots = r.tokens * r.topk / r.ep;
    let matrices = if r.gated == Some(true) { 3.0 } else { 2.0 };
    let flops = 2.0 * slots * r.hidden * matrices * r.inter;
    let tokens = r.tokens / r.ep * r.hidden;
    let bytes = bytes_of(hit * matrices * r.hidden * r.inter, precision.weight_bits()) + bytes_of(tokens, precision.activation_bits().min(16.0)) + bytes_of(tokens, 16.0);
    (flops.max(1.0), bytes)
}

impl Work {
    /// The work of a measured shape on `gpu`; `Err` when the GPU cannot run it, or when its
    /// sizes are past what can be priced exactly.
    pub fn of(shape: &Shape, precision: Precision, gpu: &Gpu) -> Result<Work, String> {
        let work = Work::unchecked(shape, precision, gpu)?;
        let size = work.size();
        if !(size.is_finite() && size <= MAX_WORK) {
            return Err(format!("{} with {size:.3e} FLOPs or bytes is past the supported {MAX_WORK:.0e}", shape.family()));
        }
        Ok(work)
    }

    fn unchecked(shape: &Shape, precision: Precision, gpu: &Gpu) -> Result<Work, String> {
        // Attention multiplies in 16 bits: FP16 when asked (the only 16-bit format of a GPU
        // without BF16 units, such as a T4), BF16 otherwise; the two peaks are equal where a
        // GPU has both.
        let attention_math = if precision == Precision::Fp16 { Precision::Fp16 } else { Precision::Bf16 };
        Ok(match *shape {
            Shape::Gemm { m, n, k } => Work::Kernel(gemm(m, n, k, precision, gpu)?),
            Shape::Bmm { batch, m, n, k } => Work::Kernel(batched(gemm(m, n, k, precision, gpu)?, batch as f64)),
            Shape::AttentionPrefill { batch, isl, past, heads, kv_heads, head_dim, window, kv_precision } => {
                // Under a window each query sees at most `window` keys (the IR op counts them);
                // cutting the context to the window instead left more queries than keys.
                let a = Attention { batch, heads, kv_heads, q_len: isl, kv_len: isl.saturating_add(past), head_dim, causal: true, dtype: DType::Bf16, backward: false, v_head_dim: None, shared_kv: false, window: (window > 0).then_some(window) };
                let rows = heads as f64 * isl as f64 / kv_heads as f64;
                let tiles = batch as f64 * heads as f64 * tiles_along(isl as f64, TILE);
                Work::Kernel(attention(a, kv_precision, attention_math, rows, tiles, gpu)?)
            }
            Shape::AttentionDecode { batch, kv_len, heads, kv_heads, head_dim, window, kv_precision } => {
                let kv_len = if window > 0 { kv_len.min(window) } else { kv_len }.saturating_add(1);
                let a = Attention { batch, heads, kv_heads, q_len: 1, kv_len, head_dim, causal: false, dtype: DType::Bf16, backward: false, v_head_dim: None, shared_kv: false, window: None };
                // The query heads sharing a KV head are packed into one instruction's rows.
                let rows = padded_rows(heads as f64 / kv_heads as f64, gpu);
                let tiles = batch as f64 * kv_heads as f64 * tiles_along(kv_len as f64, 4.0 * TILE);
                Work::Kernel(attention(a, kv_precision, attention_math, rows, tiles, gpu)?)
            }
            Shape::Moe { tokens, hidden, inter, topk, experts, tp, ep, balanced, gated } => {
                let (t, h, e) = (tokens as f64, hidden as f64, experts as f64);
                let i = inter as f64 / tp as f64;
                let local_experts = (e / ep as f64).max(1.0);
                let slots = t * topk as f64 / ep as f64;
                let active = experts_hit(e, t * topk as f64).min(e) / ep as f64;
                let active = active.clamp(1.0_f64.min(local_experts), local_experts);
                // Gated experts: an up projection of width 2I and a down projection of width I.
                let flops = 2.0 * slots * h * 3.0 * i;
                let rows_per_expert = padded_rows((slots / active).ceil(), gpu);
                let padded_flops = 2.0 * active * rows_per_expert * h * 3.0 * i;
                let bytes = bytes_of(active * 3.0 * h * i, precision.weight_bits()) + bytes_of(2.0 * t * h, 16.0);
                let tiles = active * tiles_along(slots / active, TILE) * tiles_along(2.0 * i, TILE);
                let least = moe_least_work(MoeRouting { tokens: t, hidden: h, inter: i, topk: topk as f64, experts: e, ep: ep as f64, balanced, gated }, precision);
                Work::Kernel(KernelWork { flops: flops.max(1.0), padded_flops: padded_flops.max(1.0), bytes, open_least: Some(least), tiles, reduction: h, quantized_rows: if precision.quantizes_activations() { t } else { 0.0 }, peak_flops: Some(peak_flops(gpu, precision)?), sms: sm_count(gpu), bandwidth: gpu.bandwidth(), serial_steps: 0.0 })
            }
            Shape::Mla { batch, isl, kv_len, heads, generation, module, kv_precision, attention_precision, .. } => {
                let m = Mla { batch, isl, past: kv_len, heads, kv_precision, attention_precision };
                let attention = if generation { m.absorbed_decode(gpu)? } else { m.prefill(gpu)? };
                if !module {
                    return Ok(Work::Kernel(attention));
                }
                Work::Chain(m.module(attention, generation, precision, gpu)?)
            }
            Shape::GatedDelta { batch, seq, k_heads, v_heads, head_k_dim, head_v_dim, generation } => {
                let rule = GatedDelta { batch, seq, with_state: generation, k_heads, v_heads, head_k_dim, head_v_dim, dtype: DType::Bf16, state_dtype: DType::Fp32 };
                Work::Kernel(gated_delta(&rule, precision, gpu)?)
            }
            Shape::Collective { op, gpus, bytes, gpus_per_node } => {
                let n = gpus as f64;
                let share = (n - 1.0) / n;
                let link_bytes = bytes as f64
                    * match op {
                        Collective::AllReduce => 2.0 * share,
                        Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => share,
                        Collective::SendRecv => 1.0,
                    };
                let ic = &gpu.interconnect;
                let (link, gbs) = if gpus > gpus_per_node {
                    (Link::Network, NETWORK_BYTES_PER_S / 1e9)
                } else if ic.nvlink_gbs > 0.0 {
                    (Link::NvLink, ic.nvlink_gbs / 2.0)
                } else if ic.pcie_gbs > 0.0 {
                    (Link::Pcie, ic.pcie_gbs / 2.0)
                } else {
                    // A collective over no link would take no time, or forever: neither is a price.
                    return Err(format!("{} has no link to another GPU (no NVLink, no PCIe in its catalog entry): it cannot run a {gpus}-GPU collective", gpu.id));
                };
                Work::Collective(CollectiveWork { op, gpus: n, link_bytes, link, link_bandwidth: gbs * 1e9 })
            }
            Shape::Vector { tokens, width, .. } => {
                // The fitted efficiency absorbs ops that touch more tensors.
                Work::Kernel(KernelWork::memory_only(Shape::vector_bytes(tokens, width), gpu))
            }
        })
    }
}
