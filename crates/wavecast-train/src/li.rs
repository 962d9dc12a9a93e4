//! Fitting Li et al.'s linear model (`wavecast_predict::li`): per GPU and kernel family,
//! t = a·FLOPs + b·bytes + c by relative least squares, plus the cross-GPU transfer
//! t = α·FLOPs/peak + β·bytes/bandwidth + γ for GPUs without measurements.

use wavecast_stats::fit::relative_least_squares;
use crate::samples::Floors;
use std::collections::BTreeMap;
use wavecast_predict::li::{Li, LiFamily};
use wavecast_predict::physics::{roofline_terms, Family};
use wavecast_predict::sample::Sample;

/// Fits on `samples` (kernel-dominated rows; floors from all).
pub fn fit(samples: &[Sample]) -> Result<Li, String> {
    let host = Floors::of(samples);
    let usable = host.kernel_dominated(samples);
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
    Ok(Li { families, floors: host.all })
}

