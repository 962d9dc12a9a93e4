//! The physical floor of every prediction, enforced once for all predictors: the registry wraps
//! each predictor it builds in [`Bounded`], so no learned factor, calibration or run-level
//! scale can price an op faster than physics allows, and no interval reaches below it.
//!
//! The floor is the roofline (FLOPs at the dtype's dense peak, bytes at the datasheet
//! bandwidth); convolutions take their fast algorithms' saving where the library has one
//! ([`conv::physical_floor`]). Communication is priced by link models and has no floor here.
//!
//! [`floor_seconds`] is the one definition of the floor. [`Bounded`] is the one place a
//! prediction is raised to it; the kernel models that assume their kernel part alone reaches
//! the floor (before launch gaps are added) say so through [`kernel_at_least`], never with a
//! floor of their own. `tests/bounds.rs` checks that every registry predictor's output is its
//! unbounded output passed through [`at_least`].

use crate::roofline::roofline_seconds;
use crate::{conv, Context, Estimate, OpTime, Predictor};
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

/// The least time `op` can take on `gpu` (seconds).
pub fn floor_seconds(op: &Op, gpu: &Gpu) -> f64 {
    match op {
        Op::Conv(c) => conv::physical_floor(c, gpu),
        Op::Comm(_) => 0.0,
        _ => roofline_seconds(op, gpu),
    }
}

/// `t` raised to `floor`: the time, and the interval's ends, never below it; the interval
/// still contains the time.
pub fn at_least(t: OpTime, floor: f64) -> OpTime {
    let seconds = t.seconds.max(floor);
    OpTime { seconds, lo: t.lo.max(floor).min(seconds), hi: t.hi.max(seconds), ..t }
}

/// A kernel model's kernel seconds `t` for `op`, raised to the op's floor: a structural
/// assumption of the model (its kernel part alone is at least the roofline), applied before the
/// launch gap and run-level factors that [`Bounded`] sees the result of.
pub fn kernel_at_least(t: f64, op: &Op, gpu: &Gpu) -> f64 {
    t.max(floor_seconds(op, gpu))
}

/// A predictor whose every time respects [`floor_seconds`]. [`crate::by_name`] and
/// [`crate::registry::load`] return their predictors wrapped in it.
pub struct Bounded(pub Box<dyn Predictor>);

impl Predictor for Bounded {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        match self.0.predict(op, gpu, ctx) {
            Estimate::Time(t) => Estimate::Time(at_least(t, floor_seconds(op, gpu))),
            unpriced => unpriced,
        }
    }

    fn bounded(&self) -> bool {
        true
    }
}
