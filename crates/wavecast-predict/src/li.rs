//! Li et al. (MICRO'23): kernel time is close to linear in FLOPs and bytes. Per GPU and kernel
//! family, t = a·FLOPs + b·bytes + c. A GPU without measurements gets its coefficients from its
//! hardware figures: t = α·FLOPs/peak + β·bytes/bandwidth + γ, with α, β, γ fitted across the
//! training GPUs — peak FLOP/s for the compute term and bandwidth for the memory term (NeuSight's
//! re-implementation used bandwidth for both, which breaks on compute-rich, bandwidth-poor L4).

use crate::fit::relative_least_squares;
use crate::physics::{roofline_terms, Family};
use crate::sample::{isolated_floors, kernel_dominated, Sample, LAUNCH_GAP_S};
use crate::{Estimate, OpTime, Predictor};
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
    pub fn fit(samples: &[Sample]) -> Result<Li, String> {
        let floors = isolated_floors(samples);
        let usable = kernel_dominated(samples);
        let mut families = BTreeMap::new();
        for fam in Family::ALL {
            let rows: Vec<&&Sample> = usable.iter().filter(|s| s.family == fam).collect();
            if rows.is_empty() {
                continue;
            }
            let mut per_gpu = BTreeMap::new();
            let mut gpus: Vec<&str> = rows.iter().map(|s| s.gpu.id.as_str()).collect();
            gpus.sort();
            gpus.dedup();
            for g in gpus {
                let (x, y): (Vec<Vec<f64>>, Vec<f64>) =
                    rows.iter().filter(|s| s.gpu.id == g).map(|s| (vec![s.op.flops(), s.op.bytes(), 1.0], s.kernel_s())).unzip();
                let c = relative_least_squares(&x, &y);
                per_gpu.insert(g.to_string(), [c[0], c[1], c[2]]);
            }
            let (x, y): (Vec<Vec<f64>>, Vec<f64>) = rows
                .iter()
                .map(|s| {
                    let (tc, tm) = roofline_terms(&s.op, &s.gpu);
                    (vec![tc, tm, 1.0], s.kernel_s())
                })
                .unzip();
            let t = relative_least_squares(&x, &y);
            families.insert(fam, LiFamily { per_gpu, transfer: [t[0], t[1], t[2]] });
        }
        if families.is_empty() {
            return Err("no usable training rows".into());
        }
        Ok(Li { families, floors })
    }

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

impl Predictor for Li {
    fn name(&self) -> &str {
        "li"
    }

    fn predict(&self, op: &Op, gpu: &Gpu) -> Estimate {
        match self.kernel_seconds(op, gpu) {
            Some(t) => Estimate::Time(OpTime::exact(t)),
            None => Estimate::Unpriced(format!("li has no model for {}", op.class())),
        }
    }

    fn predict_isolated(&self, op: &Op, gpu: &Gpu) -> Estimate {
        let floor = Family::of(op).and_then(|f| self.floors.get(&f)).copied().unwrap_or(0.0);
        match self.kernel_seconds(op, gpu) {
            Some(t) => Estimate::Time(OpTime::exact((t + LAUNCH_GAP_S).max(floor))),
            None => Estimate::Unpriced(format!("li has no model for {}", op.class())),
        }
    }
}
