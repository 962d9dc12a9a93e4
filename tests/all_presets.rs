//! Every preset on every catalog GPU in both modes predicts a finite, positive time with the
//! default predictor (in BF16, or the narrowest dtype the GPU has units for), and nothing is left
//! unpriced on a single GPU.

use wavecast_gpu::Catalog;
use wavecast_ir::DType;
use wavecast_workload::{build, presets, BuildOptions, Mode};

#[test]
fn every_preset_on_every_gpu_in_both_modes() {
    let cat = Catalog::builtin();
    let predictor = wavecast_predict::by_name(wavecast_predict::DEFAULT_PREDICTOR).unwrap();
    let mut runs = 0;
    for name in presets::names() {
        let spec = presets::preset(name).unwrap();
        for mode in [Mode::Inference, Mode::Training] {
            for gpu in cat.all() {
                let dtype = [DType::Bf16, DType::Fp16, DType::Fp32].into_iter().find(|&d| gpu.supports(d)).unwrap();
                let graph = build(&spec, &BuildOptions::new(2, 128, mode, dtype)).unwrap();
                let b = wavecast_sim::estimate(&graph, gpu, predictor.as_ref()).unwrap();
                assert!(b.total_ms.is_finite() && b.total_ms > 0.0, "{name} {mode:?} {}", gpu.id);
                assert!(b.unpriced.is_empty(), "{name} {mode:?} {}: {:?}", gpu.id, b.unpriced);
                runs += 1;
            }
        }
    }
    assert_eq!(runs, presets::names().len() * 2 * cat.all().len());
}

#[test]
fn a_faster_gpu_is_predicted_faster() {
    let cat = Catalog::builtin();
    let predictor = wavecast_predict::by_name(wavecast_predict::DEFAULT_PREDICTOR).unwrap();
    let spec = presets::preset("llama-3-8b").unwrap();
    let graph = build(&spec, &BuildOptions::new(4, 2048, Mode::Training, DType::Bf16)).unwrap();
    let t = |id: &str| wavecast_sim::estimate(&graph, cat.get(id).unwrap(), predictor.as_ref()).unwrap().total_ms;
    assert!(t("h100-sxm") < t("a100-sxm-80gb"));
    assert!(t("a100-sxm-80gb") < t("l4"));
    assert!(t("b200") < t("h100-sxm"));
}
