//! A GPU run under a power limit below its board power (`--power-limit`): the SMs' clock drops
//! by [`power_limited_clock_fraction`], memory does not. Every op's time moves as its roofline
//! bound does when the compute roof is lowered by that fraction: a compute-bound GEMM slows by
//! the whole fraction, a bandwidth-bound op not at all, an op near the ridge in between.

use crate::physics::{check_power_limit, power_limited_clock_fraction, roofline_terms};
use crate::{Context, Estimate, OpTime, Predictor};
use wavecast_gpu::Gpu;
use wavecast_ir::Op;

/// `inner` on a board held to `limit_w` watts.
pub struct PowerLimited<'a> {
    inner: &'a dyn Predictor,
    limit_w: f64,
}

impl<'a> PowerLimited<'a> {
    pub fn new(inner: &'a dyn Predictor, limit_w: f64) -> PowerLimited<'a> {
        PowerLimited { inner, limit_w }
    }
}

/// How much longer `op` takes under the limit: its roofline bound with the compute roof
/// lowered by the clock fraction, over the bound at full clock (1 for an op without FLOPs).
pub fn power_limit_slowdown(op: &Op, gpu: &Gpu, limit_w: f64) -> f64 {
    let clock = power_limited_clock_fraction(gpu, limit_w);
    let (compute, memory) = roofline_terms(op, gpu);
    let full = compute.max(memory);
    if !(full > 0.0 && full.is_finite()) {
        return 1.0;
    }
    (compute / clock).max(memory) / full
}

/// `inner` on `gpu` held to `limit_w` watts, or `None` without a limit; a limit outside the
/// board's range is the one-line error of [`check_power_limit`]. Every route that takes
/// `--power-limit` builds its predictor here.
pub fn limited<'a>(inner: &'a dyn Predictor, gpu: &Gpu, limit_w: Option<f64>) -> Result<Option<PowerLimited<'a>>, String> {
    limit_w.map(|w| check_power_limit(gpu, w).map(|()| PowerLimited::new(inner, w))).transpose()
}

impl Predictor for PowerLimited<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn predict(&self, op: &Op, gpu: &Gpu, ctx: &Context) -> Estimate {
        match self.inner.predict(op, gpu, ctx) {
            Estimate::Time(t) => {
                let k = power_limit_slowdown(op, gpu, self.limit_w);
                Estimate::Time(OpTime { seconds: t.seconds * k, lo: t.lo * k, hi: t.hi * k, ..t })
            }
            unpriced => unpriced,
        }
    }

    /// Only slower than the bounded inner predictor: its floor still holds.
    fn bounded(&self) -> bool {
        self.inner.bounded()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Roofline;
    use wavecast_gpu::Catalog;
    use wavecast_ir::ops::{Elementwise, EwKind, Gemm};
    use wavecast_ir::DType;

    fn seconds(p: &dyn Predictor, op: &Op, gpu: &Gpu) -> f64 {
        match p.predict(op, gpu, &Context::IN_MODEL) {
            Estimate::Time(t) => t.seconds,
            Estimate::Unpriced(why) => panic!("unpriced: {why}"),
        }
    }

    #[test]
    fn a_limit_slows_compute_bound_work_by_the_cube_root_and_leaves_bandwidth_bound_work() {
        let gpu = Catalog::shipped().get("h100-sxm").unwrap().clone();
        let roof = Roofline;
        let capped = PowerLimited::new(&roof, 500.0);
        let gemm = Op::Gemm(Gemm::linear(8192, 8192, 8192, false, DType::Bf16).unwrap());
        let ratio = seconds(&capped, &gemm, &gpu) / seconds(&roof, &gemm, &gpu);
        // Hand-computed: (700 W / 500 W)^(1/3) = 1.1187.
        assert!((ratio - 1.1187).abs() < 1e-3, "{ratio}");
        let add = Op::Elementwise(Elementwise::new(EwKind::Add, 1 << 26, 2, DType::Bf16));
        assert_eq!(seconds(&capped, &add, &gpu), seconds(&roof, &add, &gpu));
        let at_board = PowerLimited::new(&roof, gpu.tdp_w);
        assert_eq!(seconds(&at_board, &gemm, &gpu), seconds(&roof, &gemm, &gpu));
    }

    #[test]
    fn a_limit_above_the_board_or_below_a_quarter_of_it_is_refused() {
        let gpu = Catalog::shipped().get("h100-sxm").unwrap().clone();
        assert!(check_power_limit(&gpu, 500.0).is_ok());
        assert!(check_power_limit(&gpu, 700.0).is_ok());
        for bad in [701.0, 100.0, f64::NAN, 0.0] {
            let e = check_power_limit(&gpu, bad).unwrap_err();
            assert!(e.contains("175–700 W") && !e.contains('\n'), "{e}");
        }
    }
}
