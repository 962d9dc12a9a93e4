//! What every target checks once a reader accepted its input: the graph prices on a GPU to a
//! finite, non-negative time, with the roofline predictor (fast, and the floor of all others).

use std::sync::OnceLock;
use wavecast_gpu::Catalog;
use wavecast_ir::Graph;

/// The built-in catalog, parsed once (parsing it per input would dominate a run).
#[allow(dead_code)]
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(Catalog::builtin)
}

/// The shipped sustained-roofline numbers, parsed once.
#[allow(dead_code)]
pub fn sustained() -> &'static wavecast_predict::sustained::Model {
    static MODEL: OnceLock<wavecast_predict::sustained::Model> = OnceLock::new();
    MODEL.get_or_init(wavecast_predict::sustained::Model::shipped)
}

#[allow(dead_code)]
pub fn assert_prices_finitely(graph: &Graph) {
    let gpu = catalog().get("h100").unwrap();
    let roofline = wavecast_predict::by_name("roofline").unwrap();
    if let Ok(step) = wavecast_sim::estimate(graph, gpu, roofline.as_ref()) {
        assert!(step.total_ms.is_finite() && step.total_ms >= 0.0, "{} ms", step.total_ms);
    }
}
