//! Wave scaling (Habitat, Yu et al., USENIX ATC'21): carry one kernel's measured time from the
//! GPU it ran on (origin) to another GPU (destination) by counting waves of thread blocks and
//! scaling each wave's time with bandwidth (memory-bound part, weight γ) and compute rate
//! (compute-bound part, weight 1 − γ). Method notes: `shared/docs/METHODS.md` §1.
//!
//! Four forms, selectable with [`WaveForm`]:
//! - [`WaveForm::Eq1`] — the paper's exact-wave equation:
//!   `T_d = ⌈B/W_d⌉ · ((D_o/D_d)·(W_d/W_o))^γ · (C_o/C_d)^(1−γ) · T_o / ⌈B/W_o⌉`;
//! - [`WaveForm::Eq2`] — its many-wave simplification:
//!   `T_d = (D_o/D_d)^γ · (W_o/W_d)^(1−γ) · (C_o/C_d)^(1−γ) · T_o`;
//! - [`WaveForm::HabitatCode`] — what Habitat's code runs: a sub-wave branch
//!   (`B < W_o` and `B < W_d`: `T_o · [(C_o/C_d)·⌈B/SM_d⌉/⌈B/SM_o⌉]^(1−γ)`) and otherwise
//!   `T_o · (D_o/D_d)^γ · (C_o/C_d)^(1−γ) · (SM_o/SM_d)^(1−γ)` (SM ratio, not wave ratio);
//! - [`WaveForm::Wavecast`] (default) — the memory-bound part is bytes over bandwidth (`D_o/D_d`,
//!   faded out for launches that fill less than a wave), the compute-bound part is Eq. 1's
//!   wave count times time per wave, where a launch smaller than a wave is one wave of `B`
//!   blocks (not `W`) and each SM retires its blocks at the per-SM peak of the kernel's class
//!   and dtype from the catalog (tensor cores, FP16/BF16, FP32 lanes per SM) rather than at a
//!   clock ratio, so V100 → H100 BF16 GEMMs and P4 (128 lanes per SM) → P100 (64) come out
//!   right. On NeuSight's per-op data (bench/results/scale_pairs.md) the unquantised memory
//!   part beat the quantised one for every op class.
//!
//! The three Habitat forms use base clocks, as Habitat's device files do; bandwidths are the
//! catalog's datasheet figures (Habitat measured its own; we have no measurements of
//! destination GPUs, which is the point).
//!
//! γ comes from the kernel's arithmetic intensity against the destination's ridge point
//! ([`gamma`], Habitat's Eq. 3). Habitat measures FP32 FLOP counters, so tensor-core and
//! FP16/BF16 kernels read as memory-bound (γ = 1); here the ridge uses the catalog's peak for
//! the op's class and dtype and the intensity the op's analytic FLOPs and bytes (wavecast-ir,
//! the one source of truth), so a BF16 GEMM is judged against the tensor-core roof.

use crate::physics::{whole_waves, Roof};
use crate::{Context, Estimate, Predictor};
use std::fmt;
use std::str::FromStr;
use wavecast_gpu::occupancy::{wave_size, KernelResources};
use wavecast_gpu::Gpu;
use wavecast_ir::{DType, Op, OpClass};

/// Which wave-scaling equation to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaveForm {
    Eq1,
    Eq2,
    HabitatCode,
    Wavecast,
}

impl WaveForm {
    pub const ALL: [WaveForm; 4] = [WaveForm::Eq1, WaveForm::Eq2, WaveForm::HabitatCode, WaveForm::Wavecast];

    pub fn as_str(self) -> &'static str {
        match self {
            WaveForm::Eq1 => "eq1",
            WaveForm::Eq2 => "eq2",
            WaveForm::HabitatCode => "habitat-code",
            WaveForm::Wavecast => "wavecast",
        }
    }
}

impl fmt::Display for WaveForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for WaveForm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        WaveForm::ALL
            .into_iter()
            .find(|w| w.as_str() == s.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown wave form '{s}' (expected one of eq1, eq2, habitat-code, wavecast)"))
    }
}

/// The launch configuration of one kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Launch {
    /// Thread blocks in the grid (B).
    pub blocks: u64,
    pub resources: KernelResources,
}

/// What kind of arithmetic the kernel does, to pick the compute roof.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    pub class: OpClass,
    pub dtype: DType,
}

impl Work {
    /// The roofs this work runs under on `gpu`.
    pub fn roof(self, gpu: &Gpu) -> Roof {
        Roof::of(self.class, self.dtype, gpu)
    }
}

/// One kernel carried to the destination.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Scaled {
    pub seconds: f64,
    pub gamma: f64,
    /// ⌈B/W⌉ on origin and destination, when the launch and occupancy are known.
    pub waves_origin: Option<u64>,
    pub waves_dest: Option<u64>,
    /// Why wave counts were not used (unknown launch, launch that cannot run on one side).
    pub note: Option<String>,
}

/// Habitat's γ from arithmetic intensity `x` (FLOP/byte) and the destination's ridge point `r`
/// (peak FLOP/s ÷ bandwidth): 1 − x/(2r) up to the ridge, r/(2x) beyond it. No FLOPs → 1
/// (pure memory traffic); FLOPs without bytes → 0.
pub fn gamma(flops: f64, bytes: f64, ridge: f64) -> f64 {
    // NaN counts as absent: `partial_cmp` is not `Greater` for it.
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(flops) {
        return 1.0;
    }
    if !positive(bytes) || !positive(ridge) {
        return 0.0;
    }
    let x = flops / bytes;
    if x <= ridge {
        1.0 - 0.5 * x / ridge
    } else {
        0.5 * ridge / x
    }
}

/// The destination's ridge point for this kind of work, FLOP per byte.
pub fn ridge(gpu: &Gpu, work: Work) -> f64 {
    work.roof(gpu).ridge()
}

/// γ of an operator on `dest` from its analytic FLOPs and bytes (wavecast-ir).
pub fn op_gamma(op: &Op, dest: &Gpu) -> f64 {
    gamma(op.flops(), op.bytes(), ridge(dest, Work { class: op.class(), dtype: op.dtype() }))
}

/// Habitat's "MLP as a ratio": predicted destination ÷ predicted origin time of the op, to be
/// multiplied by the measured origin time. `None` when the predictor cannot price the op.
pub fn predictor_ratio(p: &dyn Predictor, op: &Op, origin: &Gpu, dest: &Gpu) -> Option<f64> {
    let t = |g: &Gpu| match p.predict(op, g, &Context::IN_MODEL) {
        Estimate::Time(t) if t.seconds.is_finite() && t.seconds > 0.0 => Some(t.seconds),
        _ => None,
    };
    let r = t(dest)? / t(origin)?;
    r.is_finite().then_some(r)
}

/// Resident-block wave size on one GPU, or why it is unknown. At least one block per SM: a
/// grid that launches runs somewhere, whatever the occupancy rules say.
fn wave(gpu: &Gpu, launch: &Launch) -> Result<u64, String> {
    wave_size(gpu, &launch.resources)
        .map(|w| w.max(gpu.sm_count as u64))
        .map_err(|e| format!("launch does not fit {}: {e}", gpu.id))
}

/// Carries a kernel of measured time `t_origin` (seconds) from `origin` to `dest`.
/// `launch` is `None` when the trace lacks grid and block sizes (e.g. ROCm traces); then the
/// many-wave form with equal occupancy on both sides is used.
pub fn scale_kernel(
    t_origin: f64,
    launch: Option<&Launch>,
    gamma: f64,
    work: Work,
    origin: &Gpu,
    dest: &Gpu,
    form: WaveForm,
) -> Scaled {
    let g = gamma.clamp(0.0, 1.0);
    let waves = match launch {
        None => Err("no launch configuration in the trace".to_string()),
        Some(l) if l.blocks == 0 => Err("empty grid".to_string()),
        Some(l) => wave(origin, l).and_then(|wo| wave(dest, l).map(|wd| (l.blocks, wo, wd))),
    };
    match waves {
        Ok((b, wo, wd)) => {
            let factor = match form {
                WaveForm::Eq1 => eq1(b, wo, wd, g, origin, dest),
                WaveForm::Eq2 => eq2(wo, wd, g, origin, dest),
                WaveForm::HabitatCode => habitat_code(b, wo, wd, g, origin, dest),
                WaveForm::Wavecast => wavecast(b, wo, wd, g, work, origin, dest),
            };
            Scaled { seconds: t_origin * factor, gamma: g, waves_origin: Some(whole_waves(b, wo)), waves_dest: Some(whole_waves(b, wd)), note: None }
        }
        Err(note) => {
            Scaled { seconds: t_origin * no_launch(g, work, origin, dest, form), gamma: g, waves_origin: None, waves_dest: None, note: Some(note) }
        }
    }
}

fn bw_ratio(o: &Gpu, d: &Gpu) -> f64 {
    o.memory_bandwidth_gbs / d.memory_bandwidth_gbs
}

fn base_clock_ratio(o: &Gpu, d: &Gpu) -> f64 {
    o.base_clock_mhz / d.base_clock_mhz
}

/// Per-SM peak of origin over destination for this work (how much faster one SM of the
/// destination retires it, inverted).
fn per_sm_rate_ratio(work: Work, o: &Gpu, d: &Gpu) -> f64 {
    let per_sm = |g: &Gpu| work.roof(g).per_sm(g).flops_per_s;
    per_sm(o) / per_sm(d)
}

fn eq1(b: u64, wo: u64, wd: u64, g: f64, o: &Gpu, d: &Gpu) -> f64 {
    let waves = whole_waves(b, wd) as f64 / whole_waves(b, wo) as f64;
    waves * (bw_ratio(o, d) * wd as f64 / wo as f64).powf(g) * base_clock_ratio(o, d).powf(1.0 - g)
}

fn eq2(wo: u64, wd: u64, g: f64, o: &Gpu, d: &Gpu) -> f64 {
    bw_ratio(o, d).powf(g) * (wo as f64 / wd as f64).powf(1.0 - g) * base_clock_ratio(o, d).powf(1.0 - g)
}

fn habitat_code(b: u64, wo: u64, wd: u64, g: f64, o: &Gpu, d: &Gpu) -> f64 {
    if b < wo && b < wd {
        let sm_waves = whole_waves(b, d.sm_count as u64) as f64 / whole_waves(b, o.sm_count as u64) as f64;
        return (base_clock_ratio(o, d) * sm_waves).powf(1.0 - g);
    }
    let sm = o.sm_count as f64 / d.sm_count as f64;
    bw_ratio(o, d).powf(g) * base_clock_ratio(o, d).powf(1.0 - g) * sm.powf(1.0 - g)
}

/// Memory part: bytes over bandwidth, so the bandwidth ratio — no wave quantisation, since a
/// partial wave moves only its blocks' bytes — for launches that fill the GPU; a launch smaller
/// than a wave is partly latency-bound, so the ratio fades out with the fill fraction `B/W`
/// (Habitat's code keeps such a kernel's memory time unchanged, a jump at `B = W`).
/// Compute part: waves × time per wave, each busy SM retiring `⌈W'/SM⌉` blocks
/// (`W' = min(B, W)`) at its per-SM peak.
fn wavecast(b: u64, wo: u64, wd: u64, g: f64, work: Work, o: &Gpu, d: &Gpu) -> f64 {
    let per_sm_blocks = |w: u64, gpu: &Gpu| whole_waves(w, gpu.sm_count as u64) as f64;
    let waves = whole_waves(b, wd) as f64 / whole_waves(b, wo) as f64;
    let per_wave = per_sm_blocks(b.min(wd), d) / per_sm_blocks(b.min(wo), o) * per_sm_rate_ratio(work, o, d);
    let compute = waves * per_wave;
    // Fraction of the smaller wave the launch fills: a full GPU streams at DRAM bandwidth, a
    // few blocks only as fast as their own requests return (latency-bound, same on both).
    let fill = (b as f64 / wo.min(wd) as f64).min(1.0);
    let memory = bw_ratio(o, d).powf(fill);
    memory.powf(g) * compute.powf(1.0 - g)
}

/// Scaling without a launch configuration: many waves with equal occupancy on both GPUs.
fn no_launch(g: f64, work: Work, o: &Gpu, d: &Gpu, form: WaveForm) -> f64 {
    let compute = match form {
        WaveForm::Wavecast => work.roof(o).flops_per_s / work.roof(d).flops_per_s,
        _ => base_clock_ratio(o, d) * o.sm_count as f64 / d.sm_count as f64,
    };
    bw_ratio(o, d).powf(g) * compute.powf(1.0 - g)
}

/// Held-out scaling intervals: per method (`wave`, `hybrid`) and NeuSight op class, the 10th and
/// 90th percentiles of ln(measured / predicted) of kernels carried between every ordered pair
/// of NeuSight's GPUs, the hybrid's predictor trained without the destination
/// (`wavecast eval pairs --intervals-out`, shipped as `weights/scale_intervals.json`).
pub type ScalingIntervals = std::collections::BTreeMap<String, std::collections::BTreeMap<String, [f64; 2]>>;

const SHIPPED_INTERVALS: &str = include_str!("../weights/scale_intervals.json");

/// The shipped [`ScalingIntervals`].
pub fn shipped_intervals() -> ScalingIntervals {
    serde_json::from_str(SHIPPED_INTERVALS).expect("shipped scaling intervals parse (tested)")
}

/// The NeuSight op class whose held-out scaling errors stand for a kernel of IR class `class`
/// (the trace's families); `None` for what is carried unchanged (communication).
pub fn interval_class(class: &str) -> Option<&'static str> {
    Some(match class {
        "communication" => return None,
        "gemm" | "rnn" => "linear",
        "attention_bmm" | "fused_attention" => "bmm",
        "softmax" => "softmax",
        "norm" => "layernorm",
        "conv" => "conv",
        _ => "elementwise",
    })
}

/// The interval (ln, low and high) of a kernel of `class` carried by `method`; the widest the
/// method has for a class it has none for, `[0, 0]` for a kernel carried unchanged.
pub fn scaling_interval(intervals: &ScalingIntervals, method: &str, class: &str) -> [f64; 2] {
    let Some(per_class) = intervals.get(method) else { return [0.0, 0.0] };
    match interval_class(class) {
        None => [0.0, 0.0],
        Some(c) => per_class.get(c).copied().unwrap_or_else(|| {
            per_class.values().fold([0.0, 0.0], |[lo, hi], [l, h]| [f64::min(lo, *l), f64::max(hi, *h)])
        }),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn carried_kernels_get_their_class_interval_and_communication_none() {
        let iv = shipped_intervals();
        let linear = scaling_interval(&iv, "hybrid", "gemm");
        assert_eq!(linear, iv["hybrid"]["linear"]);
        assert!(linear[0] < 0.0 && linear[1] > 0.0);
        assert_eq!(scaling_interval(&iv, "wave", "norm"), iv["wave"]["layernorm"]);
        assert_eq!(scaling_interval(&iv, "wave", "communication"), [0.0, 0.0]);
        assert_eq!(scaling_interval(&iv, "unchanged", "gemm"), [0.0, 0.0]);
        // A class the method has no interval for gets its widest.
        let mut only_two = ScalingIntervals::new();
        only_two.insert("wave".into(), [("elementwise".to_string(), [-0.1, 0.2]), ("softmax".to_string(), [-0.3, 0.1])].into());
        assert_eq!(scaling_interval(&only_two, "wave", "conv"), [-0.3, 0.2]);
    }

    use super::*;
    use crate::Roofline;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{Elementwise, EwKind, Gemm};

    fn launch(blocks: u64, threads: u32, regs: u32, smem: u32) -> Launch {
        Launch { blocks, resources: KernelResources { threads_per_block: threads, registers_per_thread: regs, shared_mem_bytes: smem } }
    }

    const FP32_EW: Work = Work { class: OpClass::Elementwise, dtype: DType::Fp32 };

    #[test]
    fn gamma_follows_habitat_eq3() {
        assert_eq!(gamma(0.0, 100.0, 10.0), 1.0);
        assert_eq!(gamma(10.0, 0.0, 10.0), 0.0);
        assert!((gamma(50.0, 10.0, 10.0) - 0.75).abs() < 1e-12); // x = R/2
        assert!((gamma(100.0, 10.0, 10.0) - 0.5).abs() < 1e-12); // at the ridge
        assert!((gamma(400.0, 10.0, 10.0) - 0.125).abs() < 1e-12); // x = 4R
    }

    #[test]
    fn bf16_gemm_is_compute_bound_against_the_tensor_roof() {
        let cat = Catalog::builtin();
        let h100 = cat.get("h100").unwrap();
        let g = Op::Gemm(Gemm::linear(4096, 4096, 4096, false, DType::Bf16).unwrap());
        // Intensity ≈ 1365 FLOP/B; H100 BF16 ridge ≈ 295 → γ ≈ 0.11 (Habitat's FP32 counters: 1).
        let gm = op_gamma(&g, h100);
        assert!(gm > 0.05 && gm < 0.2, "{gm}");
        let add = Op::Elementwise(Elementwise::new(EwKind::Add, 1 << 24, 2, DType::Bf16));
        assert!(op_gamma(&add, h100) > 0.99);
    }

    #[test]
    fn memory_bound_many_wave_kernel_scales_with_bandwidth_in_every_form() {
        let cat = Catalog::builtin();
        let (v100, a100) = (cat.get("v100-sxm2").unwrap(), cat.get("a100-sxm-80gb").unwrap());
        // 1M blocks of 128 threads: thousands of waves, so the wave-count ratio is the wave-size ratio.
        let l = launch(1 << 20, 128, 16, 0);
        for form in WaveForm::ALL {
            let s = scale_kernel(1e-3, Some(&l), 1.0, FP32_EW, v100, a100, form);
            let want = 1e-3 * 900.0 / 2039.0;
            assert!((s.seconds / want - 1.0).abs() < 0.01, "{form}: {} vs {want}", s.seconds);
        }
    }

    #[test]
    fn compute_bound_forms_differ_as_documented() {
        let cat = Catalog::builtin();
        let (p4, p100) = (cat.get("p4").unwrap(), cat.get("p100").unwrap());
        let l = launch(1 << 20, 256, 32, 0);
        let work = Work { class: OpClass::Gemm, dtype: DType::Fp32 };
        let t = |form| scale_kernel(1.0, Some(&l), 0.0, work, p4, p100, form).seconds;
        // Wavecast: FP32 peak ratio 5.5 / 9.3 (P4's 128-lane SMs are twice as wide).
        assert!((t(WaveForm::Wavecast) - 5.5 / 9.3).abs() < 0.01);
        // Habitat's code: base clock × SM-count ratio (810/1126 · 20/56), blind to lane counts.
        let code = 810.0 / 1126.0 * 20.0 / 56.0;
        assert!((t(WaveForm::HabitatCode) - code).abs() < 1e-9);
        // Eq. 2 uses the wave-size ratio; same occupancy on both here, so it equals the code form.
        assert!((t(WaveForm::Eq2) - code).abs() < 1e-9);
    }

    #[test]
    fn sub_wave_kernels_keep_their_memory_time() {
        let cat = Catalog::builtin();
        let (v100, h100) = (cat.get("v100").unwrap(), cat.get("h100").unwrap());
        let l = launch(8, 128, 32, 0);
        let s = scale_kernel(5e-6, Some(&l), 1.0, FP32_EW, v100, h100, WaveForm::HabitatCode);
        assert_eq!(s.seconds, 5e-6);
        assert_eq!((s.waves_origin, s.waves_dest), (Some(1), Some(1)));
        // Wavecast: 8 of 1280 slots filled, so the 3.7× bandwidth ratio barely applies.
        let s = scale_kernel(5e-6, Some(&l), 1.0, FP32_EW, v100, h100, WaveForm::Wavecast);
        assert!(s.seconds < 5e-6 && s.seconds > 0.98 * 5e-6, "{}", s.seconds);
        let half = launch(640, 128, 32, 0);
        let s = scale_kernel(5e-6, Some(&half), 1.0, FP32_EW, v100, h100, WaveForm::Wavecast);
        assert!((s.seconds - 5e-6 * (900.0f64 / 3352.0).powf(0.5)).abs() < 1e-15, "{}", s.seconds);
        // Eq. 1 as published scales a partial wave by bandwidth × wave-size ratio.
        let s = scale_kernel(5e-6, Some(&l), 1.0, FP32_EW, v100, h100, WaveForm::Eq1);
        let (wo, wd) = (wave_size(v100, &l.resources).unwrap(), wave_size(h100, &l.resources).unwrap());
        let want = 5e-6 * (900.0 / 3352.0) * wd as f64 / wo as f64;
        assert!((s.seconds - want).abs() < 1e-15, "{} vs {want}", s.seconds);
    }

    #[test]
    fn wave_quantisation_shows_in_the_exact_forms() {
        let cat = Catalog::builtin();
        let (a100, h100) = (cat.get("a100").unwrap(), cat.get("h100").unwrap());
        // 1024-thread blocks, 2 per SM: A100 wave = 216 blocks, H100 wave = 264.
        // 264 blocks: 2 waves on A100, 1 on H100 — the exact form sees the halving.
        let l = launch(264, 1024, 32, 0);
        let s = scale_kernel(1.0, Some(&l), 1.0, FP32_EW, a100, h100, WaveForm::Eq1);
        assert_eq!((s.waves_origin, s.waves_dest), (Some(2), Some(1)));
        let many = scale_kernel(1.0, Some(&l), 1.0, FP32_EW, a100, h100, WaveForm::Eq2).seconds;
        assert!(s.seconds < many, "{} vs {many}", s.seconds);
    }

    #[test]
    fn unknown_or_impossible_launch_falls_back_with_a_note() {
        let cat = Catalog::builtin();
        let (a100, l4) = (cat.get("a100").unwrap(), cat.get("l4").unwrap());
        let s = scale_kernel(1.0, None, 1.0, FP32_EW, a100, l4, WaveForm::Wavecast);
        assert!((s.seconds - 2039.0 / 300.0).abs() < 1e-9);
        assert!(s.note.unwrap().contains("no launch"));
        // 147 KiB of shared memory per block runs on an A100 but not on an L4 (99 KiB).
        let big = launch(1000, 128, 64, 147 * 1024);
        let s = scale_kernel(1.0, Some(&big), 1.0, FP32_EW, a100, l4, WaveForm::Eq1);
        assert!(s.note.unwrap().contains("l4"));
        assert!(s.seconds.is_finite() && s.seconds > 1.0);
    }

    #[test]
    fn predictor_ratio_is_destination_over_origin() {
        let cat = Catalog::builtin();
        let (v100, h100) = (cat.get("v100").unwrap(), cat.get("h100").unwrap());
        let g = Op::Gemm(Gemm::linear(8192, 8192, 8192, false, DType::Fp16).unwrap());
        let r = predictor_ratio(&Roofline, &g, v100, h100).unwrap();
        let want = v100.peak_tflops.fp16.unwrap() / h100.peak_tflops.fp16.unwrap();
        assert!((r - want).abs() < 1e-9, "{r} vs {want}");
    }

    #[test]
    fn wave_form_names_round_trip() {
        for f in WaveForm::ALL {
            assert_eq!(f.as_str().parse::<WaveForm>().unwrap(), f);
        }
        assert!("eq3".parse::<WaveForm>().unwrap_err().contains("eq1"));
    }
}
