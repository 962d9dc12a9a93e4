//! Links each kernel to the operator that launched it.
//!
//! A kernel event and the host-side launch call (`cudaLaunchKernel`, `cuLaunchKernel`,
//! `hipLaunchKernel`, …) share a `correlation` id. The launching operator is the innermost
//! `cpu_op` on the same thread whose time span encloses the launch call — the aten op that
//! actually ran (e.g. `aten::addmm` under `aten::linear`), which is the one whose input shapes
//! describe the kernel's work.

use crate::model::{CpuOp, Trace};
use crate::raw::Launch;
use std::collections::HashMap;

/// Tolerance for timestamp rounding between host events, microseconds.
const EPS_US: f64 = 1e-3;

fn end(op: &CpuOp) -> f64 {
    op.ts + op.dur
}

/// The innermost enclosing operator of each launch, keyed by correlation id.
fn launching_ops(ops: &[CpuOp], launches: &mut [Launch]) -> HashMap<u64, usize> {
    let mut order: Vec<usize> = (0..ops.len()).collect();
    // Per thread, by start; an enclosing op (longer) before the ops it contains.
    order.sort_by(|&a, &b| {
        let (x, y) = (&ops[a], &ops[b]);
        (x.pid, x.tid).cmp(&(y.pid, y.tid)).then(x.ts.total_cmp(&y.ts)).then(y.dur.total_cmp(&x.dur))
    });
    launches.sort_by(|a, b| (a.pid, a.tid).cmp(&(b.pid, b.tid)).then(a.ts.total_cmp(&b.ts)));
    let mut out = HashMap::with_capacity(launches.len());
    let mut next = 0; // position in `order`
    let mut stack: Vec<usize> = Vec::new();
    let mut thread = None;
    for l in launches.iter() {
        if thread != Some((l.pid, l.tid)) {
            thread = Some((l.pid, l.tid));
            stack.clear();
            // Skip ops of threads that launched nothing.
            while next < order.len() && (ops[order[next]].pid, ops[order[next]].tid) < (l.pid, l.tid) {
                next += 1;
            }
        }
        while next < order.len() {
            let op = &ops[order[next]];
            if (op.pid, op.tid) != (l.pid, l.tid) || op.ts > l.ts + EPS_US {
                break;
            }
            while stack.last().is_some_and(|&top| end(&ops[top]) + EPS_US < op.ts) {
                stack.pop();
            }
            stack.push(order[next]);
            next += 1;
        }
        while stack.last().is_some_and(|&top| end(&ops[top]) + EPS_US < l.ts) {
            stack.pop();
        }
        if let Some(&top) = stack.last() {
            out.insert(l.correlation, top);
        }
    }
    out
}

/// Sets `Kernel::op` for every kernel whose launch is in the trace.
pub(crate) fn link(trace: &mut Trace, launches: &mut [Launch]) {
    let by_corr = launching_ops(&trace.ops, launches);
    for k in &mut trace.kernels {
        k.op = k.correlation.and_then(|c| by_corr.get(&c).copied());
    }
}
