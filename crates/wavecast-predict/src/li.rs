//! Li et al. (MICRO'23): kernel time is close to linear in FLOPs and bytes. Per GPU and kernel
//! family, t = a·FLOPs + b·bytes + c. A GPU without measurements gets its coefficients from its
//! hardware figures: t = α·FLOPs/peak + β·bytes/bandwidth + γ, with α, β, γ fitted across the
//! training GPUs — peak FLOP/s for the compute term and bandwidth for the memory term (NeuSight's
//! re-implementation used bandwidth for both, which breaks on compute-rich, bandwidth-poor L4).
//! Fitted by `wavecast-train` (`li.rs` there).

use crate::physics::{roofline_terms, Family};
use crate::registry::{Learned, LearnedKind};
use crate::sample::{family_floor, isolated_seconds};
use crate::{Context, Estimate, OpTime, Predictor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiFamily {
    /// Per measured GPU: [a, b, c] on [FLOPs, bytes, 1].
    pub per_gpu: BTreeMap<String, [f64; 3]>,
    /// Across GPUs: [α, β, γ] on [FLOPs/peak, bytes/bandwidth, 1].
    pub transfer: [f64; 3],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Li {
    pub families: BTreeMap<Family, LiFamily>,
    pub floors: BTreeMap<Family, f64>,
}

impl Li {
    /// Kernel seconds for `op` on `gpu`.
    pub fn kernel_seconds(&self, op: &Op, gpu: &Gpu) -> Option<f64> {
        let fam = self.families.get(&Family::of(op)?)?;
        let t = match fam.per_gpu.get(&gpu.id) {
            Some([a, b, c]) => a * op.flops() + b * op.bytes() + c,
            None => {
                let (tc, tm) = roofline_terms(op, gpu);
                let [a, b, c] = fam.transfer;
                a * tc + b * tm + c
            }
        };
        Some(t.max(1e-7))
    }
}

impl Learned for Li {
    const KIND: LearnedKind = LearnedKind::Li;
}

impl Predictor for Li {
    fn name(&self) -> &str {
        Self::KIND.name()
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        let Some(t) = self.kernel_seconds(op, gpu) else {
            return Estimate::Unpriced(format!("li has no model for {}", op.class()));
        };
        if !ctx.isolated {
            return Estimate::Time(OpTime::exact(t));
        }
        Estimate::Time(OpTime::exact(isolated_seconds(t, family_floor(&self.floors, op))))
    }
}
