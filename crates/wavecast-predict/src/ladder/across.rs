//! The transfer across architectures: where no measured GPU shares the asked GPU's
//! architecture, the same shape's measured time on GPUs of other architectures, the part above
//! its table's floor (launch and host work, carried as is) times the physics model's ratio of
//! the two GPUs for that shape — physics(here) / physics(there). The physics model (fitted
//! without the asked GPU) carries what the datasheets tell apart (peaks, bandwidth, SMs and
//! wave quantization, fixed costs); the measured time carries what the shape costs the kernel
//! libraries beyond the model, which the GPUs share.

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
/// physics rung's and it was no worse on at least half of them. Mean APE transfer / physics
/// (the floor carried as is): prefill attention 29.7 / 36.5 (H100 25.5 / 29.5, A100 19.8 /
/// 15.3, L40S 25.1 / 43.5, RTX PRO 19.1 / 39.4, Arc 59.0 / 54.9), FP8 GEMMs 27.3 / 30.3, NVFP4
/// GEMMs 27.5 / 36.0 (RTX PRO only), MLA modules BF16 16.6 / 16.9 and block-FP8 20.1 / 37.8,
/// fused MoE FP8 64.8 / 92.0, block-FP8 32.2 / 36.6, INT4 weight-only 28.7 / 39.1, MXFP4
/// weight-only 35.3 / 48.4, the streaming kernel 80.1 / 122.7 (better on H100, L40S and RTX
/// PRO), the gated delta rule's decode 62.7 / 67.2 (three of four) and chunked prefill 39.8 /
/// 45.5 (two of three). Since both streaming passes are carried on warm buffers (`streams_once`
/// in the ladder): the streaming kernel 16.2 / 122.7, the gated delta rule's decode 19.3 / 67.2
/// (three of four; A100 36.3 / 34.4). Left to physics: BF16 GEMMs (24.3 / 23.9), BF16 fused MoE (33.4 /
/// 33.0), decode attention (43.0 / 43.8, but better on L40S and RTX PRO only), NVFP4 MLA and
/// MoE (30.5 / 27.3, 60.2 / 54.6), block-FP8 GEMMs (92.0 / 72.7: their time is the host's, see
/// the README) and every collective (36–70 / 24–43: the nearest measured GPU by datasheet is
/// often one on another link).
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
    ("stream", Precision::Fp16),
    ("gated_delta_decode", Precision::Bf16),
    ("gated_delta_prefill", Precision::Bf16),
];

/// Whether the ladder carries `family` across architectures rather than price it by physics.
pub fn carries(family: &Family) -> bool {
    CARRIED.iter().any(|(name, precision)| family.name() == *name && family.precision == *precision)
}
