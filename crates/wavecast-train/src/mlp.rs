//! Training of the small MLPs the learned predictors evaluate (`wavecast_predict::mlp::Mlp`,
//! whose plain-Rust forward pass is what prediction runs): candle-nn with AdamW, weights drawn
//! from our own seeded generator so training is reproducible.

use candle_core::{Device, Tensor, Var, D};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use indicatif::ProgressBar;
use wavecast_predict::mlp::{Dense, Mlp, MlpParameters, Rng};

#[derive(Debug, Clone, Copy)]
pub struct TrainConfig {
    pub hidden: usize,
    pub depth: usize,
    pub epochs: usize,
    pub batch: usize,
    pub lr: f64,
    pub seed: u64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig { hidden: 48, depth: 3, epochs: 60, batch: 256, lr: 3e-3, seed: 7 }
    }
}

/// A training loss: network outputs (batch × outputs) and the rows' targets (batch × width).
pub type LossFn = fn(&Tensor, &Tensor) -> candle_core::Result<Tensor>;

/// Mean-squared error of a single-output network.
fn mse(pred: &Tensor, targets: &Tensor) -> candle_core::Result<Tensor> {
    pred.squeeze(D::Minus1)?.sub(&targets.squeeze(D::Minus1)?)?.sqr()?.mean_all()
}

fn standardise(x: &[Vec<f32>]) -> (Vec<f32>, Vec<f32>) {
    let d = x[0].len();
    let n = x.len() as f32;
    let mut mean = vec![0.0; d];
    for r in x {
        for (m, v) in mean.iter_mut().zip(r) {
            *m += v / n;
        }
    }
    let mut std = vec![0.0; d];
    for r in x {
        for ((s, v), m) in std.iter_mut().zip(r).zip(&mean) {
            *s += (v - m) * (v - m) / n;
        }
    }
    (mean, std.into_iter().map(|s| s.sqrt().max(1e-3)).collect())
}

/// Fits `y ≈ f(x)` with mean-squared error. `x` rows must all have the same width.
pub fn train(x: &[Vec<f32>], y: &[f32], cfg: TrainConfig, progress: Option<&ProgressBar>) -> Result<Mlp, String> {
    let targets: Vec<Vec<f32>> = y.iter().map(|v| vec![*v]).collect();
    train_with_loss(x, &targets, 1, mse, cfg, progress)
}

/// Fits a network with `outputs` outputs under a custom `loss`, for models whose target is
/// a function of the outputs (e.g. a time derived from predicted utilization parameters).
/// `targets` holds, per row, whatever the loss needs besides the outputs (equal widths).
pub fn train_with_loss(
    x: &[Vec<f32>],
    targets: &[Vec<f32>],
    outputs: usize,
    loss: LossFn,
    cfg: TrainConfig,
    progress: Option<&ProgressBar>,
) -> Result<Mlp, String> {
    if x.is_empty() || x.len() != targets.len() || outputs == 0 {
        return Err(format!("need matching non-empty features and targets ({} vs {})", x.len(), targets.len()));
    }
    let dim = x[0].len();
    let aux = targets[0].len();
    if x.iter().any(|r| r.len() != dim) || targets.iter().any(|r| r.len() != aux) {
        return Err("feature or target rows differ in width".into());
    }
    let (mean, std) = standardise(x);
    let dev = Device::Cpu;
    let err = |e: candle_core::Error| e.to_string();
    let mut rng = Rng::new(cfg.seed);
    // Weights are drawn from our own seeded generator (candle's CPU RNG cannot be seeded),
    // uniform in ±1/sqrt(fan_in) as PyTorch's default initialisation does.
    let mut widths = vec![dim];
    widths.extend(std::iter::repeat_n(cfg.hidden, cfg.depth));
    widths.push(outputs);
    let mut vars: Vec<(Var, Var)> = Vec::new();
    for w in widths.windows(2) {
        let (fan_in, fan_out) = (w[0], w[1]);
        let bound = 1.0 / (fan_in as f64).sqrt();
        let mut draw = |n: usize| -> Vec<f32> { (0..n).map(|_| ((rng.uniform() * 2.0 - 1.0) * bound) as f32).collect() };
        let wt = Var::from_tensor(&Tensor::from_vec(draw(fan_in * fan_out), (fan_out, fan_in), &dev).map_err(err)?).map_err(err)?;
        let bt = Var::from_tensor(&Tensor::from_vec(draw(fan_out), fan_out, &dev).map_err(err)?).map_err(err)?;
        vars.push((wt, bt));
    }
    let all: Vec<Var> = vars.iter().flat_map(|(w, b)| [w.clone(), b.clone()]).collect();
    let mut opt = AdamW::new(all, ParamsAdamW { lr: cfg.lr, weight_decay: 1e-5, ..Default::default() }).map_err(err)?;

    let norm: Vec<f32> = x.iter().flat_map(|r| r.iter().zip(&mean).zip(&std).map(|((v, m), s)| (v - m) / s)).collect();
    let mut order: Vec<usize> = (0..x.len()).collect();
    let forward = |t: &Tensor| -> candle_core::Result<Tensor> {
        let mut h = t.clone();
        for (i, (w, b)) in vars.iter().enumerate() {
            h = h.matmul(&w.as_tensor().t()?)?.broadcast_add(b.as_tensor())?;
            if i + 1 < vars.len() {
                h = h.relu()?;
            }
        }
        Ok(h)
    };
    for epoch in 0..cfg.epochs {
        rng.shuffle(&mut order);
        // Step the learning rate down for the last third, a cheap stand-in for a schedule.
        if epoch == cfg.epochs * 2 / 3 {
            opt.set_learning_rate(cfg.lr / 5.0);
        }
        for chunk in order.chunks(cfg.batch) {
            let xb: Vec<f32> = chunk.iter().flat_map(|&i| norm[i * dim..(i + 1) * dim].iter().copied()).collect();
            let yb: Vec<f32> = chunk.iter().flat_map(|&i| targets[i].iter().copied()).collect();
            let xt = Tensor::from_vec(xb, (chunk.len(), dim), &dev).map_err(err)?;
            let yt = Tensor::from_vec(yb, (chunk.len(), aux), &dev).map_err(err)?;
            let pred = forward(&xt).map_err(err)?;
            let l = loss(&pred, &yt).map_err(err)?;
            opt.backward_step(&l).map_err(err)?;
        }
        if let Some(p) = progress {
            p.inc(1);
        }
    }
    let lo = (0..dim).map(|j| x.iter().map(|r| r[j]).fold(f32::INFINITY, f32::min)).collect();
    let hi = (0..dim).map(|j| x.iter().map(|r| r[j]).fold(f32::NEG_INFINITY, f32::max)).collect();
    let mut out = MlpParameters { mean, std, lo, hi, layers: Vec::new() };
    for (w, b) in &vars {
        let weight = w.as_tensor().to_vec2::<f32>().map_err(err)?;
        let bias = b.as_tensor().to_vec1::<f32>().map_err(err)?;
        out.layers.push(Dense { weight, bias });
    }
    Ok(Mlp::new(out))
}

/// Rounds parameters to 5 significant digits so the shipped JSON stays small; predictions
/// change by far less than the model's own error.
pub fn compact(m: &mut Mlp) {
    let r = |v: &mut f32| *v = format!("{:.4e}", *v).parse().unwrap_or(*v);
    m.update(|m| {
        m.mean.iter_mut().for_each(r);
        m.std.iter_mut().for_each(r);
        for l in &mut m.layers {
            l.weight.iter_mut().flatten().for_each(r);
            l.bias.iter_mut().for_each(r);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_smooth_function_and_is_reproducible() {
        let mut rng = Rng::new(1);
        let x: Vec<Vec<f32>> = (0..600).map(|_| vec![rng.uniform() as f32 * 4.0 - 2.0, rng.uniform() as f32]).collect();
        let y: Vec<f32> = x.iter().map(|r| r[0] * r[0] + 0.5 * r[1]).collect();
        let cfg = TrainConfig { epochs: 80, ..Default::default() };
        let m = train(&x, &y, cfg, None).unwrap();
        let err: f32 = x.iter().zip(&y).map(|(r, t)| (m.predict(r) - t).abs()).sum::<f32>() / x.len() as f32;
        assert!(err < 0.1, "mean abs error {err}");
        let again = train(&x, &y, cfg, None).unwrap();
        assert_eq!(m, again);
    }
}
