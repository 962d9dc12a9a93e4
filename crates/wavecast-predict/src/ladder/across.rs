//! The transfer across architectures: where no measured GPU shares the asked GPU's
//! architecture, the same shape's measured time on GPUs of other architectures times the
//! physics model's ratio of the two GPUs for that shape — physics(here) / physics(there). The
//! physics model (fitted without the asked GPU) carries what the datasheets tell apart
//! (peaks, bandwidth, SMs and wave quantization, fixed costs); the measured time carries what
//! the shape costs the kernel libraries beyond the model, which the GPUs share.

use super::Family;
use wavecast_data::Precision;

/// Most measured GPUs one cross-architecture transfer combines (weighted by similarity).
pub const MAX_SOURCES: usize = 3;

/// Half-width (ln(hi / time)) of a cross-architecture transfer's interval: between a
/// same-architecture transfer's and physics' (the ladder's intervals widen down it); 80–92 %
/// of H100's and A100's prefill-attention and fused-MoE rows fell inside it, left out.
pub const HALF_WIDTH: f64 = 0.45;

/// The families and formats the ladder carries across architectures: where, each GPU left out
/// in turn (`wavecast eval ops --data ../shared/data/aiconfigurator --test-gpu GPU --predictor
/// ladder`, its `across_mape` against `physics_mape`, on H100, A100-80GB, L40S, RTX PRO 6000
/// and Arc Pro B60), the transfer's mean APE over the GPUs that have the family was below the
/// physics rung's and it was no worse on at least half of them. Mean APE transfer / physics:
/// prefill attention 36.6 / 41.7 (H100 25.7 / 41.1, A100 22.9 / 16.1, L40S 47.0 / 50.0, RTX
/// PRO 29.6 / 39.9, Arc 58.0 / 61.3), FP8 GEMMs 27.6 / 30.3, NVFP4 GEMMs 34.1 / 36.0 (RTX PRO
/// only), MLA modules BF16 15.2 / 16.9 and block-FP8 35.3 / 37.8, fused MoE FP8 64.8 / 92.0,
/// block-FP8 32.2 / 36.6, INT4 weight-only 28.7 / 39.1, MXFP4 weight-only 35.3 / 48.4. Left to
/// physics: BF16 GEMMs (25.2 / 23.9: better on H100 only), BF16 fused MoE (33.4 / 33.0),
/// decode attention (45.8 / 43.8), NVFP4 MLA and MoE (33.8 / 27.3, 60.2 / 54.6), block-FP8
/// GEMMs (101.8 / 72.7: their time is the host's, see the README) and every collective
/// (35–67 / 24–43: the nearest measured GPU by datasheet is often one on another link).
const CARRIED: &[(&str, Precision)] = &[
    ("attention_prefill", Precision::Bf16),
    ("gemm", Precision::Fp8),
    ("gemm", Precision::Nvfp4),
    ("mla", Precision::Bf16),
    ("mla", Precision::Fp8Block),
    ("moe", Precision::Fp8),
    ("moe", Precision::Fp8Block),
    ("moe", Precision::Int4Wo),
    ("moe", Precision::Mxfp4Wo),
];

/// Whether the ladder carries `family` across architectures rather than price it by physics.
pub fn carries(family: &Family) -> bool {
    CARRIED.iter().any(|(name, precision)| family.name() == *name && family.precision == *precision)
}
