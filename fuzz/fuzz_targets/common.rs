//! What every target checks once a reader accepted its input: the graph prices on a GPU to a
//! finite, non-negative time, with the roofline predictor (fast, and the floor of all others).

use wavecast_gpu::Catalog;
use wavecast_ir::Graph;

pub fn assert_prices_finitely(graph: &Graph) {
    let catalog = Catalog::builtin();
    let gpu = catalog.get("h100").unwrap();
    let roofline = wavecast_predict::by_name("roofline").unwrap();
    if let Ok(step) = wavecast_sim::estimate(graph, gpu, roofline.as_ref()) {
        assert!(step.total_ms.is_finite() && step.total_ms >= 0.0, "{} ms", step.total_ms);
    }
}
