//! Vision models built in code, layer by layer as torchvision (and the PyTorch DCGAN example)
//! define them: ResNet-18/50/152, Inception v3, VGG-16, MobileNetV2, EfficientNet-B0,
//! ViT-B/16 and DCGAN. Inputs are ImageNet-sized (224², Inception 299², DCGAN 64²) unless a
//! resolution is given. Parameter counts and MACs are checked against the published figures
//! in `tests/zoo.rs`.

use crate::net::{ConvCfg, Img, Net};
use crate::transformer::Mode;
use crate::zoo::ZooOptions;
use crate::WorkloadError;
use wavecast_ir::ops::{EwKind, Optimizer};
use wavecast_ir::{DType, Graph, Node, Op, Phase};

const CLASSES: u64 = 1000;

fn net(name: &str, o: &ZooOptions) -> Result<Net, WorkloadError> {
    Net::new(name, o.batch, o.dtype, o.mode == Mode::Training)
}

/// Forward graph → training graph (backward and optimizer) when asked.
fn finish(n: Net, o: &ZooOptions) -> Graph {
    n.finish_with(o.optimizer)
}

fn image(o: &ZooOptions, default: u64) -> Img {
    let s = o.image.unwrap_or(default);
    Img::new(3, s, s)
}

/// Global average pool, flatten and the classifier.
fn classifier(n: &mut Net, x: Img, dropout: bool) -> Result<(), WorkloadError> {
    let x = n.adaptive_avgpool("avgpool", x, [1, 1])?;
    if dropout {
        n.dropout("dropout", n.batch * x.c);
    }
    n.linear("fc", n.batch, x.c, CLASSES, true)
}

// ---------------------------------------------------------------------------------------------
// ResNet (torchvision v1.5: the stride sits on the 3×3 convolution of a bottleneck)

fn basic_block(n: &mut Net, name: &str, x: Img, width: u64, stride: u64) -> Result<Img, WorkloadError> {
    let y = n.conv_bn_act(&format!("{name}.1"), x, width, ConvCfg::k(3).s(stride), Some(EwKind::Relu))?;
    let y = n.conv_bn_act(&format!("{name}.2"), y, width, ConvCfg::k(3), None)?;
    if stride != 1 || x.c != width {
        n.conv_bn_act(&format!("{name}.downsample"), x, width, ConvCfg::k(1).s(stride), None)?;
    }
    n.add(&format!("{name}.residual"), y);
    Ok(n.act(&format!("{name}.relu"), EwKind::Relu, y))
}

fn bottleneck(n: &mut Net, name: &str, x: Img, width: u64, stride: u64) -> Result<Img, WorkloadError> {
    let out = 4 * width;
    let y = n.conv_bn_act(&format!("{name}.1"), x, width, ConvCfg::k(1), Some(EwKind::Relu))?;
    let y = n.conv_bn_act(&format!("{name}.2"), y, width, ConvCfg::k(3).s(stride), Some(EwKind::Relu))?;
    let y = n.conv_bn_act(&format!("{name}.3"), y, out, ConvCfg::k(1), None)?;
    if stride != 1 || x.c != out {
        n.conv_bn_act(&format!("{name}.downsample"), x, out, ConvCfg::k(1).s(stride), None)?;
    }
    n.add(&format!("{name}.residual"), y);
    Ok(n.act(&format!("{name}.relu"), EwKind::Relu, y))
}

pub fn resnet(name: &str, blocks: [u64; 4], bottlenecks: bool, o: &ZooOptions) -> Result<Graph, WorkloadError> {
    let mut n = net(name, o)?;
    let x = n.conv_bn_act("stem", image(o, 224), 64, ConvCfg::k(7).s(2), Some(EwKind::Relu))?;
    let mut x = n.maxpool("stem.maxpool", x, 3, 2, 1)?;
    for (stage, (&count, width)) in blocks.iter().zip([64, 128, 256, 512]).enumerate() {
        for b in 0..count {
            let stride = if stage > 0 && b == 0 { 2 } else { 1 };
            let id = format!("layer{}.{b}", stage + 1);
            x = if bottlenecks { bottleneck(&mut n, &id, x, width, stride)? } else { basic_block(&mut n, &id, x, width, stride)? };
        }
    }
    classifier(&mut n, x, false)?;
    Ok(finish(n, o))
}

// ---------------------------------------------------------------------------------------------
// VGG-16 (configuration D, no batch norm)

pub fn vgg16(o: &ZooOptions) -> Result<Graph, WorkloadError> {
    let mut n = net("vgg16", o)?;
    let mut x = image(o, 224);
    let stages: [(u64, u64); 5] = [(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)];
    for (s, (width, convs)) in stages.into_iter().enumerate() {
        for c in 0..convs {
            x = n.conv(&format!("features.{s}.{c}.conv"), x, width, ConvCfg::k(3).bias())?;
            x = n.act(&format!("features.{s}.{c}.relu"), EwKind::Relu, x);
        }
        x = n.maxpool(&format!("features.{s}.pool"), x, 2, 2, 0)?;
    }
    let x = n.adaptive_avgpool("avgpool", x, [7, 7])?;
    let b = n.batch;
    let mut features = x.c * x.pixels();
    for (i, out) in [4096, 4096].into_iter().enumerate() {
        n.linear(&format!("classifier.fc{}", i + 1), b, features, out, true)?;
        n.ew(&format!("classifier.relu{}", i + 1), EwKind::Relu, b * out, 1);
        n.dropout(&format!("classifier.dropout{}", i + 1), b * out);
        features = out;
    }
    n.linear("classifier.fc3", b, features, CLASSES, true)?;
    Ok(finish(n, o))
}

// ---------------------------------------------------------------------------------------------
// Inception v3 (torchvision; every convolution is conv → batch norm → ReLU without bias)

fn basic(n: &mut Net, name: &str, x: Img, c: u64, cfg: ConvCfg) -> Result<Img, WorkloadError> {
    n.conv_bn_act(name, x, c, cfg, Some(EwKind::Relu))
}

fn inception_a(n: &mut Net, name: &str, x: Img, pool_features: u64) -> Result<Img, WorkloadError> {
    let b1 = basic(n, &format!("{name}.branch1x1"), x, 64, ConvCfg::k(1))?;
    let b5 = basic(n, &format!("{name}.branch5x5_1"), x, 48, ConvCfg::k(1))?;
    let b5 = basic(n, &format!("{name}.branch5x5_2"), b5, 64, ConvCfg::k(5))?;
    let b3 = basic(n, &format!("{name}.branch3x3dbl_1"), x, 64, ConvCfg::k(1))?;
    let b3 = basic(n, &format!("{name}.branch3x3dbl_2"), b3, 96, ConvCfg::k(3))?;
    let b3 = basic(n, &format!("{name}.branch3x3dbl_3"), b3, 96, ConvCfg::k(3))?;
    let bp = n.avgpool(&format!("{name}.branch_pool.avg"), x, 3, 1, 1)?;
    let bp = basic(n, &format!("{name}.branch_pool"), bp, pool_features, ConvCfg::k(1))?;
    Ok(n.concat(&format!("{name}.cat"), &[b1, b5, b3, bp]))
}

fn inception_b(n: &mut Net, name: &str, x: Img) -> Result<Img, WorkloadError> {
    let b3 = basic(n, &format!("{name}.branch3x3"), x, 384, ConvCfg::k(3).s(2).p(0))?;
    let bd = basic(n, &format!("{name}.branch3x3dbl_1"), x, 64, ConvCfg::k(1))?;
    let bd = basic(n, &format!("{name}.branch3x3dbl_2"), bd, 96, ConvCfg::k(3))?;
    let bd = basic(n, &format!("{name}.branch3x3dbl_3"), bd, 96, ConvCfg::k(3).s(2).p(0))?;
    let bp = n.maxpool(&format!("{name}.branch_pool"), x, 3, 2, 0)?;
    Ok(n.concat(&format!("{name}.cat"), &[b3, bd, bp]))
}

fn inception_c(n: &mut Net, name: &str, x: Img, c7: u64) -> Result<Img, WorkloadError> {
    let b1 = basic(n, &format!("{name}.branch1x1"), x, 192, ConvCfg::k(1))?;
    let b7 = basic(n, &format!("{name}.branch7x7_1"), x, c7, ConvCfg::k(1))?;
    let b7 = basic(n, &format!("{name}.branch7x7_2"), b7, c7, ConvCfg::rect(1, 7))?;
    let b7 = basic(n, &format!("{name}.branch7x7_3"), b7, 192, ConvCfg::rect(7, 1))?;
    let mut bd = basic(n, &format!("{name}.branch7x7dbl_1"), x, c7, ConvCfg::k(1))?;
    for (i, (cfg, out)) in [(ConvCfg::rect(7, 1), c7), (ConvCfg::rect(1, 7), c7), (ConvCfg::rect(7, 1), c7), (ConvCfg::rect(1, 7), 192)].into_iter().enumerate() {
        bd = basic(n, &format!("{name}.branch7x7dbl_{}", i + 2), bd, out, cfg)?;
    }
    let bp = n.avgpool(&format!("{name}.branch_pool.avg"), x, 3, 1, 1)?;
    let bp = basic(n, &format!("{name}.branch_pool"), bp, 192, ConvCfg::k(1))?;
    Ok(n.concat(&format!("{name}.cat"), &[b1, b7, bd, bp]))
}

fn inception_d(n: &mut Net, name: &str, x: Img) -> Result<Img, WorkloadError> {
    let b3 = basic(n, &format!("{name}.branch3x3_1"), x, 192, ConvCfg::k(1))?;
    let b3 = basic(n, &format!("{name}.branch3x3_2"), b3, 320, ConvCfg::k(3).s(2).p(0))?;
    let b7 = basic(n, &format!("{name}.branch7x7x3_1"), x, 192, ConvCfg::k(1))?;
    let b7 = basic(n, &format!("{name}.branch7x7x3_2"), b7, 192, ConvCfg::rect(1, 7))?;
    let b7 = basic(n, &format!("{name}.branch7x7x3_3"), b7, 192, ConvCfg::rect(7, 1))?;
    let b7 = basic(n, &format!("{name}.branch7x7x3_4"), b7, 192, ConvCfg::k(3).s(2).p(0))?;
    let bp = n.maxpool(&format!("{name}.branch_pool"), x, 3, 2, 0)?;
    Ok(n.concat(&format!("{name}.cat"), &[b3, b7, bp]))
}

fn inception_e(n: &mut Net, name: &str, x: Img) -> Result<Img, WorkloadError> {
    let b1 = basic(n, &format!("{name}.branch1x1"), x, 320, ConvCfg::k(1))?;
    let b3 = basic(n, &format!("{name}.branch3x3_1"), x, 384, ConvCfg::k(1))?;
    let b3a = basic(n, &format!("{name}.branch3x3_2a"), b3, 384, ConvCfg::rect(1, 3))?;
    let b3b = basic(n, &format!("{name}.branch3x3_2b"), b3, 384, ConvCfg::rect(3, 1))?;
    let b3 = n.concat(&format!("{name}.branch3x3.cat"), &[b3a, b3b]);
    let bd = basic(n, &format!("{name}.branch3x3dbl_1"), x, 448, ConvCfg::k(1))?;
    let bd = basic(n, &format!("{name}.branch3x3dbl_2"), bd, 384, ConvCfg::k(3))?;
    let bda = basic(n, &format!("{name}.branch3x3dbl_3a"), bd, 384, ConvCfg::rect(1, 3))?;
    let bdb = basic(n, &format!("{name}.branch3x3dbl_3b"), bd, 384, ConvCfg::rect(3, 1))?;
    let bd = n.concat(&format!("{name}.branch3x3dbl.cat"), &[bda, bdb]);
    let bp = n.avgpool(&format!("{name}.branch_pool.avg"), x, 3, 1, 1)?;
    let bp = basic(n, &format!("{name}.branch_pool"), bp, 192, ConvCfg::k(1))?;
    Ok(n.concat(&format!("{name}.cat"), &[b1, b3, bd, bp]))
}

/// The auxiliary classifier on the 17×17 grid. It is part of the model (its parameters count)
/// but only runs in training.
fn inception_aux(n: &mut Net, x: Img) -> Result<(), WorkloadError> {
    let y = n.avgpool("AuxLogits.avgpool", x, 5, 3, 0)?;
    let y = basic(n, "AuxLogits.conv0", y, 128, ConvCfg::k(1))?;
    let y = basic(n, "AuxLogits.conv1", y, 768, ConvCfg::k(5).p(0))?;
    let y = n.adaptive_avgpool("AuxLogits.pool", y, [1, 1])?;
    n.linear("AuxLogits.fc", n.batch, y.c, CLASSES, true)
}

pub fn inception_v3(o: &ZooOptions) -> Result<Graph, WorkloadError> {
    let mut n = net("inception-v3", o)?;
    let x = basic(&mut n, "Conv2d_1a_3x3", image(o, 299), 32, ConvCfg::k(3).s(2).p(0))?;
    let x = basic(&mut n, "Conv2d_2a_3x3", x, 32, ConvCfg::k(3).p(0))?;
    let x = basic(&mut n, "Conv2d_2b_3x3", x, 64, ConvCfg::k(3))?;
    let x = n.maxpool("maxpool1", x, 3, 2, 0)?;
    let x = basic(&mut n, "Conv2d_3b_1x1", x, 80, ConvCfg::k(1))?;
    let x = basic(&mut n, "Conv2d_4a_3x3", x, 192, ConvCfg::k(3).p(0))?;
    let x = n.maxpool("maxpool2", x, 3, 2, 0)?;
    let x = inception_a(&mut n, "Mixed_5b", x, 32)?;
    let x = inception_a(&mut n, "Mixed_5c", x, 64)?;
    let x = inception_a(&mut n, "Mixed_5d", x, 64)?;
    let x = inception_b(&mut n, "Mixed_6a", x)?;
    let x = inception_c(&mut n, "Mixed_6b", x, 128)?;
    let x = inception_c(&mut n, "Mixed_6c", x, 160)?;
    let x = inception_c(&mut n, "Mixed_6d", x, 160)?;
    let x = inception_c(&mut n, "Mixed_6e", x, 192)?;
    if n.train {
        inception_aux(&mut n, x)?;
    }
    let x = inception_d(&mut n, "Mixed_7a", x)?;
    let x = inception_e(&mut n, "Mixed_7b", x)?;
    let x = inception_e(&mut n, "Mixed_7c", x)?;
    classifier(&mut n, x, true)?;
    Ok(finish(n, o))
}

// ---------------------------------------------------------------------------------------------
// MobileNetV2 and EfficientNet-B0 (inverted residuals with depthwise convolutions)

pub fn mobilenet_v2(o: &ZooOptions) -> Result<Graph, WorkloadError> {
    let mut n = net("mobilenet-v2", o)?;
    let relu6 = Some(EwKind::Relu);
    let mut x = n.conv_bn_act("features.0", image(o, 224), 32, ConvCfg::k(3).s(2), relu6)?;
    // (expansion t, output channels c, repeats n, first stride s)
    let settings: [(u64, u64, u64, u64); 7] = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)];
    let mut block = 1;
    for (t, c, reps, s) in settings {
        for i in 0..reps {
            let stride = if i == 0 { s } else { 1 };
            let name = format!("features.{block}");
            let hidden = x.c * t;
            let mut y = x;
            if t != 1 {
                y = n.conv_bn_act(&format!("{name}.expand"), y, hidden, ConvCfg::k(1), relu6)?;
            }
            y = n.conv_bn_act(&format!("{name}.depthwise"), y, hidden, ConvCfg::k(3).s(stride).g(hidden), relu6)?;
            y = n.conv_bn_act(&format!("{name}.project"), y, c, ConvCfg::k(1), None)?;
            if stride == 1 && x.c == c {
                n.add(&format!("{name}.residual"), y);
            }
            x = y;
            block += 1;
        }
    }
    let x = n.conv_bn_act(&format!("features.{block}"), x, 1280, ConvCfg::k(1), relu6)?;
    classifier(&mut n, x, true)?;
    Ok(finish(n, o))
}

/// Squeeze-and-excitation: pool to one pixel, 1×1 conv down (SiLU), 1×1 conv up (sigmoid),
/// scale the channels.
fn squeeze_excite(n: &mut Net, name: &str, x: Img, squeeze: u64) -> Result<(), WorkloadError> {
    let s = n.adaptive_avgpool(&format!("{name}.pool"), x, [1, 1])?;
    let s = n.conv(&format!("{name}.fc1"), s, squeeze, ConvCfg::k(1).bias())?;
    let s = n.act(&format!("{name}.silu"), EwKind::Silu, s);
    let s = n.conv(&format!("{name}.fc2"), s, x.c, ConvCfg::k(1).bias())?;
    n.act(&format!("{name}.sigmoid"), EwKind::Sigmoid, s);
    let e = n.elements(x);
    n.ew(&format!("{name}.scale"), EwKind::Mul, e, 2);
    Ok(())
}

pub fn efficientnet_b0(o: &ZooOptions) -> Result<Graph, WorkloadError> {
    let mut n = net("efficientnet-b0", o)?;
    let silu = Some(EwKind::Silu);
    let mut x = n.conv_bn_act("features.0", image(o, 224), 32, ConvCfg::k(3).s(2), silu)?;
    // (expansion, kernel, first stride, output channels, repeats)
    let stages: [(u64, u64, u64, u64, u64); 7] = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)];
    for (s, (t, k, first_stride, c, reps)) in stages.into_iter().enumerate() {
        for i in 0..reps {
            let stride = if i == 0 { first_stride } else { 1 };
            let name = format!("features.{}.{i}", s + 1);
            let hidden = x.c * t;
            let mut y = x;
            if t != 1 {
                y = n.conv_bn_act(&format!("{name}.expand"), y, hidden, ConvCfg::k(1), silu)?;
            }
            y = n.conv_bn_act(&format!("{name}.depthwise"), y, hidden, ConvCfg::k(k).s(stride).g(hidden), silu)?;
            squeeze_excite(&mut n, &format!("{name}.se"), y, (x.c / 4).max(1))?;
            y = n.conv_bn_act(&format!("{name}.project"), y, c, ConvCfg::k(1), None)?;
            if stride == 1 && x.c == c {
                // Stochastic depth drops whole samples of the branch in training.
                if n.train {
                    let e = n.elements(y);
                    n.ew(&format!("{name}.stochastic_depth"), EwKind::Mul, e, 2);
                }
                n.add(&format!("{name}.residual"), y);
            }
            x = y;
        }
    }
    let x = n.conv_bn_act("features.8", x, 1280, ConvCfg::k(1), silu)?;
    classifier(&mut n, x, true)?;
    Ok(finish(n, o))
}

// ---------------------------------------------------------------------------------------------
// ViT-B/16 (torchvision): 16×16 patches, a class token, learned positions, 12 pre-norm layers

pub fn vit_b16(o: &ZooOptions) -> Result<Graph, WorkloadError> {
    const D: u64 = 768;
    const HEADS: u64 = 12;
    const FFN: u64 = 3072;
    const LAYERS: u64 = 12;
    let mut n = net("vit-b16", o)?;
    let img = image(o, 224);
    if !img.h.is_multiple_of(16) {
        return Err(WorkloadError::Invalid(format!("ViT-B/16 needs an image size divisible by 16, got {}", img.h)));
    }
    let patches = n.conv("conv_proj", img, D, ConvCfg::k(16).s(16).p(0).bias())?;
    let tokens = patches.pixels() + 1;
    let b = n.batch;
    let rows = b * tokens;
    // The class token (one learned row) is expanded over the batch and concatenated in front.
    n.embedding("class_token", b, D, 1);
    n.op("cat_class_token", Op::Concat(wavecast_ir::ops::Concat::new(rows * D, 2, o.dtype)));
    n.embedding("pos_embedding", rows, D, tokens);
    n.ew("add_pos_embedding", EwKind::Add, rows * D, 2);
    n.dropout("dropout", rows * D);
    // Every encoder layer is identical: emit one and repeat it.
    let start = n.graph.nodes.len();
    n.layer_norm("encoder.layer.ln_1", rows, D);
    n.attention("encoder.layer.self_attention", tokens, tokens, D, HEADS, false, true, o.attention)?;
    n.dropout("encoder.layer.dropout", rows * D);
    n.ew("encoder.layer.residual_1", EwKind::Add, rows * D, 2);
    n.layer_norm("encoder.layer.ln_2", rows, D);
    n.ffn("encoder.layer.mlp", rows, D, FFN, EwKind::Gelu)?;
    n.dropout("encoder.layer.mlp_dropout", rows * D);
    n.ew("encoder.layer.residual_2", EwKind::Add, rows * D, 2);
    for node in &mut n.graph.nodes[start..] {
        node.repeat = LAYERS;
    }
    n.layer_norm("encoder.ln", rows, D);
    n.linear("heads.head", b, D, CLASSES, true)?;
    Ok(finish(n, o))
}

// ---------------------------------------------------------------------------------------------
// DCGAN (Radford et al.; the PyTorch example's 64×64 generator and discriminator, nz = 100,
// ngf = ndf = 64)

const NZ: u64 = 100;

fn generator(n: &mut Net) -> Result<Img, WorkloadError> {
    let mut x = Img::new(NZ, 1, 1);
    for (i, (c, stride, pad)) in [(512, 1, 0), (256, 2, 1), (128, 2, 1), (64, 2, 1)].into_iter().enumerate() {
        x = n.tconv(&format!("G.{i}.tconv"), x, c, 4, stride, pad, false)?;
        x = n.bn(&format!("G.{i}.bn"), x)?;
        x = n.act(&format!("G.{i}.relu"), EwKind::Relu, x);
    }
    let x = n.tconv("G.4.tconv", x, 3, 4, 2, 1, false)?;
    Ok(n.act("G.4.tanh", EwKind::Tanh, x))
}

fn discriminator(n: &mut Net, x: Img) -> Result<(), WorkloadError> {
    let mut x = x;
    for (i, c) in [64, 128, 256, 512].into_iter().enumerate() {
        x = n.conv(&format!("D.{i}.conv"), x, c, ConvCfg::k(4).s(2).p(1))?;
        if i > 0 {
            x = n.bn(&format!("D.{i}.bn"), x)?;
        }
        x = n.act(&format!("D.{i}.leaky_relu"), EwKind::Relu, x);
    }
    let x = n.conv("D.4.conv", x, 1, ConvCfg::k(4).p(0))?;
    n.act("D.4.sigmoid", EwKind::Sigmoid, x);
    Ok(())
}

/// Inference: the generator producing a batch of images. Training: one iteration of the
/// PyTorch DCGAN example — the discriminator on a real and on a fake (detached) batch, its
/// backward and Adam step, then the discriminator again on the fake batch with gradients
/// flowing back into the generator, and the generator's Adam step.
pub fn dcgan(o: &ZooOptions) -> Result<Graph, WorkloadError> {
    let train = o.mode == Mode::Training;
    let mut g = Net::new("dcgan.G", o.batch, o.dtype, train)?;
    let fake = generator(&mut g)?;
    if !train {
        return Ok(g.finish());
    }
    let mut d = Net::new("dcgan.D", o.batch, o.dtype, true)?;
    discriminator(&mut d, fake)?;
    let mut d = d.finish();
    let mut g = g.finish();
    let (g_params, d_params) = (g.params(), d.params());
    // The discriminator runs three times forward and backward; only the third pass (the
    // generator's) also needs the gradient with respect to its input images.
    let d_forward: Vec<Node> = d.nodes.clone();
    d.add_backward();
    let mut out = Graph::new("dcgan");
    out.nodes.extend(g.nodes.iter().cloned());
    for node in &d_forward {
        out.nodes.push(Node { repeat: 3, ..node.clone() });
    }
    for node in d.nodes.iter().filter(|n| n.phase == Phase::Backward) {
        out.nodes.push(Node { repeat: 3, ..node.clone() });
    }
    if let Some(Op::Conv(first)) = d_forward.first().map(|n| &n.op) {
        let dgrad = wavecast_ir::ops::Conv { input_grad: true, ..first.clone() }.backward().remove(0);
        out.push("D.0.conv.input_grad", dgrad, Phase::Backward, 1);
    }
    g.add_backward();
    out.nodes.extend(g.nodes.into_iter().filter(|n| n.phase == Phase::Backward));
    for (name, params) in [("optimizer.D", d_params), ("optimizer.G", g_params)] {
        out.push(name, Op::Optimizer(Optimizer::plain_pytorch(o.optimizer, params)), Phase::Optimizer, 1);
    }
    Ok(out)
}

/// Parameters of the whole DCGAN (generator and discriminator).
pub fn dcgan_params() -> Result<u64, WorkloadError> {
    let mut g = Net::new("G", 1, DType::Fp32, true)?;
    let fake = generator(&mut g)?;
    let mut d = Net::new("D", 1, DType::Fp32, true)?;
    discriminator(&mut d, fake)?;
    Ok(g.finish().params() + d.finish().params())
}
