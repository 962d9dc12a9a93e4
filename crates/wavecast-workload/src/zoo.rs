//! The built-in models that are not Hugging Face transformers: CNNs, ViT, DCGAN, GNMT and the
//! original Transformer, built in code (`vision.rs`, `gnmt.rs`, `transformer_base.rs`). `predict --model
//! NAME` looks here after the transformer presets.
//!
//! Each entry carries the published parameter count and, for the image models, the published
//! multiply-accumulate count at the default resolution (torchvision's model tables, which count
//! convolution, linear and attention matmul MACs), so `tests/zoo.rs` can hold the builders to
//! them.

use crate::transformer::{AttentionImpl, Mode};
use crate::{gnmt, transformer_base, vision, WorkloadError};
use wavecast_ir::ops::OptimizerKind;
use wavecast_ir::{DType, Graph, Phase};

/// How a zoo model is shaped beyond its architecture.
#[derive(Debug, Clone, PartialEq)]
pub struct ZooOptions {
    pub batch: u64,
    /// Source and target tokens per sequence (sequence models; ignored by image models).
    pub seq: u64,
    pub mode: Mode,
    pub dtype: DType,
    pub optimizer: OptimizerKind,
    pub attention: AttentionImpl,
    /// Square input resolution (image models); None: the model's default.
    pub image: Option<u64>,
}

impl ZooOptions {
    pub fn new(batch: u64, seq: u64, mode: Mode, dtype: DType) -> ZooOptions {
        ZooOptions { batch, seq, mode, dtype, optimizer: OptimizerKind::Adam, attention: AttentionImpl::Auto, image: None }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Square RGB images of this side at default.
    Image(u64),
    /// A latent vector per sample (GAN generators).
    Latent,
    /// Token sequences (`seq` source and target tokens).
    Tokens,
}

pub struct ZooModel {
    pub name: &'static str,
    pub family: &'static str,
    pub input: Input,
    /// Published parameter count.
    pub params: u64,
    /// Published forward multiply-accumulates per sample at the default input (image models).
    pub macs: Option<f64>,
    /// Where the published figures come from.
    pub source: &'static str,
    build: fn(&ZooOptions) -> Result<Graph, WorkloadError>,
}

impl ZooModel {
    /// The model's graph under `o`. An image too small for the network (its convolutions and
    /// pools shrink it to nothing) is refused with the smallest side that builds.
    pub fn build(&self, o: &ZooOptions) -> Result<Graph, WorkloadError> {
        match ((self.build)(o), o.image) {
            (Err(WorkloadError::Dim(e)), Some(side)) => match self.smallest_image(o) {
                Some(least) if side < least => Err(WorkloadError::Invalid(format!(
                    "{} {}needs images of at least {least}×{least} pixels (its convolutions and pools shrink a {side}×{side} image to nothing)",
                    self.name,
                    if o.mode == Mode::Training { "in training " } else { "" }
                ))),
                _ => Err(WorkloadError::Dim(e)),
            },
            (built, _) => built,
        }
    }

    /// The smallest square side the network builds at under `o` (a larger image never shrinks
    /// to nothing sooner, so the sides that build are an upper range), if any up to the default.
    fn smallest_image(&self, o: &ZooOptions) -> Option<u64> {
        let Input::Image(default) = self.input else { return None };
        let builds = |side: u64| (self.build)(&ZooOptions { image: Some(side), ..o.clone() }).is_ok();
        if !builds(default) {
            return None;
        }
        let (mut fails, mut works) = (0u64, default);
        while works - fails > 1 {
            let mid = fails + (works - fails) / 2;
            if builds(mid) {
                works = mid;
            } else {
                fails = mid;
            }
        }
        Some(works)
    }

    /// Parameters of the whole model (built once in training mode, so parts that only run in
    /// training — Inception's auxiliary classifier, DCGAN's discriminator — count too).
    pub fn param_count(&self) -> Result<u64, WorkloadError> {
        if self.name == "dcgan" {
            return vision::dcgan_params();
        }
        let o = ZooOptions::new(1, 8, Mode::Training, DType::Fp32);
        Ok(self.build(&o)?.params())
    }

    /// Human description of one sample's input under `o`.
    pub fn describe_input(&self, o: &ZooOptions) -> String {
        match self.input {
            Input::Image(s) => {
                let s = o.image.unwrap_or(s);
                format!("3×{s}×{s} images")
            }
            Input::Latent => "100-d latent vectors → 3×64×64 images".into(),
            Input::Tokens => format!("{} source + {} target tokens", o.seq, o.seq),
        }
    }
}

const TORCHVISION: &str = "torchvision model table (params, GFLOPS = GMACs at the default resolution)";

pub const MODELS: &[ZooModel] = &[
    ZooModel { name: "resnet18", family: "cnn", input: Input::Image(224), params: 11_689_512, macs: Some(1.81e9), source: TORCHVISION, build: |o| vision::resnet("resnet18", [2, 2, 2, 2], false, o) },
    ZooModel { name: "resnet50", family: "cnn", input: Input::Image(224), params: 25_557_032, macs: Some(4.09e9), source: TORCHVISION, build: |o| vision::resnet("resnet50", [3, 4, 6, 3], true, o) },
    ZooModel { name: "resnet152", family: "cnn", input: Input::Image(224), params: 60_192_808, macs: Some(11.51e9), source: TORCHVISION, build: |o| vision::resnet("resnet152", [3, 8, 36, 3], true, o) },
    ZooModel { name: "inception-v3", family: "cnn", input: Input::Image(299), params: 27_161_264, macs: Some(5.71e9), source: TORCHVISION, build: vision::inception_v3 },
    ZooModel { name: "vgg16", family: "cnn", input: Input::Image(224), params: 138_357_544, macs: Some(15.47e9), source: TORCHVISION, build: vision::vgg16 },
    ZooModel { name: "mobilenet-v2", family: "cnn", input: Input::Image(224), params: 3_504_872, macs: Some(0.30e9), source: TORCHVISION, build: vision::mobilenet_v2 },
    ZooModel { name: "efficientnet-b0", family: "cnn", input: Input::Image(224), params: 5_288_548, macs: Some(0.39e9), source: TORCHVISION, build: vision::efficientnet_b0 },
    ZooModel { name: "vit-b16", family: "vit", input: Input::Image(224), params: 86_567_656, macs: Some(17.56e9), source: TORCHVISION, build: vision::vit_b16 },
    ZooModel {
        name: "dcgan",
        family: "gan",
        input: Input::Latent,
        params: 6_342_272,
        macs: None,
        source: "PyTorch DCGAN example (nz 100, ngf = ndf = 64): generator 3,576,704 + discriminator 2,765,568",
        build: vision::dcgan,
    },
    ZooModel {
        name: "gnmt",
        family: "rnn",
        input: Input::Tokens,
        params: 160_671_297,
        macs: None,
        source: "architecture of NVIDIA's GNMT v2 (MLPerf): ~160M parameters",
        build: gnmt::gnmt,
    },
    ZooModel {
        name: "transformer-base",
        family: "transformer",
        input: Input::Tokens,
        params: 63_082_496,
        macs: None,
        source: "architecture of Vaswani et al. Table 3 with a 37,000-token shared vocabulary (the paper rounds to 65M)",
        build: transformer_base::transformer_base,
    },
];

/// Names accepted as aliases (lower case) → canonical name.
const ALIASES: &[(&str, &str)] = &[
    ("resnet-18", "resnet18"),
    ("resnet-50", "resnet50"),
    ("resnet-152", "resnet152"),
    ("inception_v3", "inception-v3"),
    ("inceptionv3", "inception-v3"),
    ("vgg-16", "vgg16"),
    ("mobilenetv2", "mobilenet-v2"),
    ("mobilenet_v2", "mobilenet-v2"),
    ("efficientnet_b0", "efficientnet-b0"),
    ("vit-b/16", "vit-b16"),
    ("vit_b_16", "vit-b16"),
    ("vit-base-patch16-224", "vit-b16"),
    ("transformer", "transformer-base"),
    ("transformer_base", "transformer-base"),
];

pub fn names() -> Vec<&'static str> {
    MODELS.iter().map(|m| m.name).collect()
}

/// The zoo model called `name` (case-insensitive, common spellings accepted).
pub fn find(name: &str) -> Option<&'static ZooModel> {
    let lower = name.to_ascii_lowercase();
    let canonical = ALIASES.iter().find(|(a, _)| *a == lower).map_or(lower.as_str(), |(_, c)| c);
    MODELS.iter().find(|m| m.name == canonical)
}

/// Forward multiply-accumulates of `g` (matrix work only, as published MAC tables count them).
pub fn forward_macs(g: &Graph) -> f64 {
    g.nodes.iter().filter(|n| n.phase == Phase::Forward).map(|n| n.op.macs() * n.repeat as f64).sum()
}
