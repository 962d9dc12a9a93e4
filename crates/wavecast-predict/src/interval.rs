//! Held-out intervals for predictors that give none of their own (the published baselines
//! return a single time). `weights/intervals.json` holds, per predictor and op family, the 10th
//! and 90th percentiles of ln(measured / predicted) over NeuSight's five GPUs, each GPU
//! predicted by the model trained without it (`wavecast eval intervals`, see its help); a time
//! t is given [t·e^lo, t·e^hi], widened to contain t.

use crate::physics::Family;
use crate::{Context, Estimate, OpTime, Predictor};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

/// Predictor name → family → [lo, hi] of ln(measured / predicted).
pub type Intervals = BTreeMap<String, BTreeMap<Family, [f64; 2]>>;

const SHIPPED: &str = include_str!("../weights/intervals.json");

/// The shipped intervals, parsed once.
pub fn shipped() -> &'static Intervals {
    static PARSED: OnceLock<Intervals> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(SHIPPED).unwrap_or_default())
}

/// `inner` with the held-out interval of its family wherever it returns a bare time.
pub struct WithInterval {
    inner: Box<dyn Predictor>,
    by_family: &'static BTreeMap<Family, [f64; 2]>,
}

impl WithInterval {
    /// `inner` wrapped when intervals were measured for it, else `inner` unchanged.
    pub fn wrap(inner: Box<dyn Predictor>) -> Box<dyn Predictor> {
        match shipped().get(inner.name()) {
            Some(by_family) => Box::new(WithInterval { inner, by_family }),
            None => inner,
        }
    }
}

impl Predictor for WithInterval {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        match (self.inner.predict(op, gpu, ctx), Family::of(op).and_then(|f| self.by_family.get(&f))) {
            (Estimate::Time(t), Some([lo, hi])) if t.lo == t.hi => {
                Estimate::Time(OpTime { seconds: t.seconds, lo: (t.seconds * lo.exp()).min(t.seconds), hi: (t.seconds * hi.exp()).max(t.seconds), ..t })
            }
            (estimate, _) => estimate,
        }
    }
}
