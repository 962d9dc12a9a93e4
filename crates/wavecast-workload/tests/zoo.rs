//! Built-in vision and sequence models: parameter counts and forward MACs against the published
//! figures (torchvision's model table for the image models), hand-computed MACs where no
//! published figure exists, and every model building in both modes.

use wavecast_ir::{DType, Op, OpClass, Phase};
use wavecast_workload::zoo::{self, forward_macs, ZooOptions};
use wavecast_workload::Mode;

fn opts(batch: u64, seq: u64, mode: Mode, dtype: DType) -> ZooOptions {
    ZooOptions::new(batch, seq, mode, dtype)
}

#[test]
fn parameter_counts_match_published() {
    for m in zoo::MODELS {
        assert_eq!(m.param_count().unwrap(), m.params, "{}", m.name);
    }
    // The figures quoted in the issue.
    let p = |n: &str| zoo::find(n).unwrap().param_count().unwrap() as f64 / 1e6;
    assert_eq!(format!("{:.1}", p("resnet50")), "25.6");
    assert_eq!(format!("{:.1}", p("inception-v3")), "27.2");
    assert_eq!(format!("{:.0}", p("vgg16")), "138");
    assert_eq!(format!("{:.1}", p("vit-b16")), "86.6");
}

#[test]
fn image_model_macs_within_two_percent_of_published() {
    for m in zoo::MODELS.iter().filter(|m| m.macs.is_some()) {
        let g = m.build(&opts(1, 1, Mode::Inference, DType::Fp32)).unwrap();
        let ours = forward_macs(&g);
        let published = m.macs.unwrap();
        let rel = (ours - published).abs() / published;
        assert!(rel < 0.02, "{}: {ours:.4e} MACs vs published {published:.4e} ({:.2}%)", m.name, 100.0 * rel);
        // Forward FLOPs are 2×MACs plus the vector work around them (largest in the
        // depthwise networks, whose SiLU, batch norm and squeeze-excitation add ~6 %).
        let flops = g.flops_in(Phase::Forward);
        assert!(flops > 2.0 * ours && flops < 2.2 * ours, "{}: {flops:.3e} FLOPs", m.name);
    }
}

#[test]
fn macs_scale_with_batch() {
    let m = zoo::find("resnet50").unwrap();
    let one = forward_macs(&m.build(&opts(1, 1, Mode::Inference, DType::Fp32)).unwrap());
    let many = forward_macs(&m.build(&opts(64, 1, Mode::Inference, DType::Fp32)).unwrap());
    assert!((many / one - 64.0).abs() < 1e-9);
}

#[test]
fn dcgan_gnmt_transformer_macs_match_hand_counts() {
    // DCGAN generator: 100→512 (1² → 4²), then three 4×4/2 transposed convs doubling the
    // resolution, then 64→3 at 32² → 64².
    let g = zoo::find("dcgan").unwrap().build(&opts(1, 1, Mode::Inference, DType::Fp32)).unwrap();
    let gen = 100.0 * 512.0 * 16.0 + 3.0 * (16.0 * 512.0 * 256.0 * 16.0) + 1024.0 * 64.0 * 3.0 * 16.0;
    assert_eq!(forward_macs(&g), gen);

    // GNMT at T = 50: LSTM gate GEMMs T·4H·(in + H), attention projections, score, context,
    // classifier.
    let (t, h, v) = (50.0, 1024.0, 32_320.0);
    let lstm = |input: f64, dirs: f64| dirs * t * 4.0 * h * (input + h);
    let gnmt = lstm(h, 2.0) + lstm(2.0 * h, 1.0) + 2.0 * lstm(h, 1.0) // encoder
        + lstm(h, 1.0) + 3.0 * lstm(2.0 * h, 1.0) // decoder
        + 2.0 * t * h * h + t * t * h + t * t * h // attention
        + t * h * v;
    let g = zoo::find("gnmt").unwrap().build(&opts(1, 50, Mode::Inference, DType::Fp32)).unwrap();
    assert_eq!(forward_macs(&g), gnmt);

    // Transformer base at T = 50: per encoder layer 4Td² + 2T²d + 2Tdf, per decoder layer
    // 8Td² + 4T²d + 2Tdf, plus the output projection T·d·V.
    let (d, f, v) = (512.0, 2048.0, 37_000.0);
    let enc = 4.0 * t * d * d + 2.0 * t * t * d + 2.0 * t * d * f;
    let dec = 8.0 * t * d * d + 4.0 * t * t * d + 2.0 * t * d * f;
    let g = zoo::find("transformer-base").unwrap().build(&opts(1, 50, Mode::Inference, DType::Fp32)).unwrap();
    assert_eq!(forward_macs(&g), 6.0 * (enc + dec) + t * d * v);
}

#[test]
fn every_model_builds_for_training_and_inference() {
    for m in zoo::MODELS {
        for dtype in [DType::Fp32, DType::Bf16] {
            let inf = m.build(&opts(4, 32, Mode::Inference, dtype)).unwrap();
            let train = m.build(&opts(4, 32, Mode::Training, dtype)).unwrap();
            assert!(inf.nodes.iter().all(|n| n.phase == Phase::Forward), "{}", m.name);
            let fwd = train.flops_in(Phase::Forward);
            let bwd = train.flops_in(Phase::Backward);
            // Backward runs two matmuls per forward matmul (one for the first layer's weights only).
            assert!(bwd > 1.4 * fwd && bwd < 2.6 * fwd, "{} {dtype}: backward {bwd:.3e} vs forward {fwd:.3e}", m.name);
            assert!(train.nodes.iter().any(|n| n.phase == Phase::Optimizer), "{}", m.name);
        }
    }
}

#[test]
fn cnn_graphs_use_the_new_operator_classes() {
    let g = zoo::find("resnet50").unwrap().build(&opts(8, 1, Mode::Training, DType::Fp32)).unwrap();
    let count = |c: OpClass| g.nodes.iter().filter(|n| n.op.class() == c).count();
    assert_eq!(g.nodes.iter().filter(|n| n.phase == Phase::Forward && matches!(n.op, Op::Conv(_))).count(), 53);
    assert!(count(OpClass::Pooling) >= 2);
    // Batch norm runs in training mode and has its backward.
    assert!(g.nodes.iter().any(|n| matches!(&n.op, Op::ChannelNorm(b) if b.training && b.backward)));
    let gnmt = zoo::find("gnmt").unwrap().build(&opts(8, 20, Mode::Training, DType::Fp32)).unwrap();
    assert_eq!(gnmt.nodes.iter().filter(|n| n.phase == Phase::Forward && n.op.class() == OpClass::Rnn).count(), 8);
    let mobilenet = zoo::find("mobilenet-v2").unwrap().build(&opts(1, 1, Mode::Inference, DType::Fp32)).unwrap();
    assert_eq!(mobilenet.nodes.iter().filter(|n| matches!(&n.op, Op::Conv(c) if c.is_depthwise())).count(), 17);
}

#[test]
fn inception_aux_head_runs_only_in_training() {
    let m = zoo::find("inception-v3").unwrap();
    let inf = m.build(&opts(1, 1, Mode::Inference, DType::Fp32)).unwrap();
    let train = m.build(&opts(1, 1, Mode::Training, DType::Fp32)).unwrap();
    assert!(!inf.nodes.iter().any(|n| n.name.starts_with("AuxLogits")));
    assert!(train.nodes.iter().any(|n| n.name.starts_with("AuxLogits")));
    assert_eq!(train.params(), 27_161_264);
}

#[test]
fn names_aliases_and_bad_sizes() {
    assert_eq!(zoo::find("ResNet-50").unwrap().name, "resnet50");
    assert_eq!(zoo::find("vit_b_16").unwrap().name, "vit-b16");
    assert!(zoo::find("resnet51").is_none());
    let m = zoo::find("resnet18").unwrap();
    assert!(m.build(&opts(0, 1, Mode::Inference, DType::Fp32)).is_err());
    let mut o = opts(1, 1, Mode::Inference, DType::Fp32);
    o.image = Some(0);
    assert!(m.build(&o).is_err(), "zero-sized images");
    o.image = Some(100);
    assert!(zoo::find("vit-b16").unwrap().build(&o).is_err(), "ViT needs multiples of 16");
    assert!(zoo::find("gnmt").unwrap().build(&opts(1, 0, Mode::Inference, DType::Fp32)).is_err());
    assert!(zoo::find("transformer-base").unwrap().build(&opts(1 << 30, 1 << 30, Mode::Inference, DType::Fp32)).is_err());
}

/// An image the network shrinks to nothing is refused with the smallest side that builds,
/// which depends on the mode (Inception's auxiliary classifier runs in training only).
#[test]
fn a_too_small_image_names_the_smallest_that_builds() {
    let m = zoo::find("inception-v3").unwrap();
    let smallest = |mode: Mode| {
        let mut o = opts(1, 1, mode, DType::Fp32);
        o.image = Some(32);
        let err = m.build(&o).unwrap_err().to_string();
        let least: u64 = err.split("at least ").nth(1).and_then(|r| r.split('×').next()).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{err}"));
        assert!(err.contains("shrink a 32×32 image to nothing"), "{err}");
        o.image = Some(least);
        assert!(m.build(&o).is_ok(), "{least} builds");
        o.image = Some(least - 1);
        assert!(m.build(&o).unwrap_err().to_string().contains(&format!("at least {least}×{least}")));
        least
    };
    let (training, inference) = (smallest(Mode::Training), smallest(Mode::Inference));
    assert!(training > inference && inference > 32, "training {training}, inference {inference}");
}
