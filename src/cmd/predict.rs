//! `wavecast predict`: one workload on one GPU.

use super::{catalog, print_json, Result};
use crate::cli::{ModeArg, PredictArgs};
use crate::table;
use serde::Serialize;
use wavecast_aggregate::{estimate, Breakdown};
use wavecast_ir::{DType, OpClass, Phase};
use wavecast_workload::{build, presets, BuildOptions, Mode, TransformerSpec};

/// `--json` output of `predict`.
#[derive(Serialize)]
pub struct PredictJson {
    pub model: String,
    pub gpu: String,
    pub predictor: String,
    pub mode: &'static str,
    pub batch: u64,
    pub seq: u64,
    pub dtype: DType,
    pub params: u64,
    /// Predicted end-to-end time of one step (ms).
    pub total_ms: f64,
    /// Prediction interval (ms).
    pub interval_ms: [f64; 2],
    pub phases: Phases,
    pub classes: Vec<ClassJson>,
    pub tokens_per_s: f64,
    pub flops: f64,
    pub bytes: f64,
    pub unpriced: Vec<String>,
    /// One sample's input, for models that do not read `seq` tokens (vision, GAN, ONNX).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples_per_s: Option<f64>,
    /// ONNX operators wavecast cannot map, with their estimated share of the model's FLOPs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<UnsupportedJson>,
}

#[derive(Serialize)]
pub struct UnsupportedJson {
    pub op: String,
    pub count: u64,
    /// Estimated forward FLOPs (one per output element when the output shape is known).
    pub flops: f64,
    pub share: f64,
}

/// Milliseconds per phase; backward and optimizer are absent for inference.
#[derive(Serialize)]
pub struct Phases {
    pub forward: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<f64>,
}

#[derive(Serialize)]
pub struct ClassJson {
    pub class: OpClass,
    pub count: u64,
    pub ms: f64,
    pub share: f64,
    pub flops: f64,
    pub bytes: f64,
}

pub fn load_spec(model: &Option<String>, config: &Option<std::path::PathBuf>) -> Result<TransformerSpec> {
    Ok(match (model, config) {
        (_, Some(path)) => presets::load_config(path)?,
        (Some(name), None) if super::predict_zoo::is_zoo_model(name) => {
            return Err(format!("'{name}' is not a transformer LLM: serving and `compare` model LLM decoding; use `predict --mode inference|train`").into())
        }
        (Some(name), None) => presets::preset(name)?,
        (None, None) => return Err("give --model NAME or --config FILE".into()),
    })
}

pub fn run(a: PredictArgs) -> Result<()> {
    if a.onnx.is_some() || a.model.as_deref().is_some_and(super::predict_zoo::is_zoo_model) {
        return super::predict_zoo::run(a);
    }
    if a.image_size.is_some() {
        return Err("--image-size applies to the built-in vision models and ONNX files only".into());
    }
    if a.mode == ModeArg::Serve {
        return super::serve::run(a);
    }
    super::serve::reject_serve_flags(&a.serve)?;
    let cat = catalog(&a.gpu_file)?;
    let gpu = cat.get(&a.gpu)?;
    let spec = load_spec(&a.model, &a.config)?;
    let dtype: DType = a.dtype.as_deref().unwrap_or("fp32").parse()?;
    let mode = match a.mode {
        ModeArg::Inference | ModeArg::Serve => Mode::Inference,
        ModeArg::Train => Mode::Training,
    };
    let mut o = BuildOptions::new(a.batch, a.seq, mode, dtype);
    o.attention = a.attention.into();
    o.optimizer = a.optimizer.into();
    let graph = build(&spec, &o)?;
    let predictor = wavecast_predict::by_name(&a.predictor)?;
    let b = estimate(&graph, gpu, predictor.as_ref())?;
    let out = to_json(&spec.name, &a, dtype, graph.params(), &b);
    if a.json {
        return print_json(&out);
    }
    print_human(&out, gpu);
    Ok(())
}

pub(super) fn to_json(model: &str, a: &PredictArgs, dtype: DType, params: u64, b: &Breakdown) -> PredictJson {
    let classes = b
        .classes
        .iter()
        .map(|(c, t)| ClassJson {
            class: *c,
            count: t.count,
            ms: t.ms,
            share: if b.total_ms > 0.0 { t.ms / b.total_ms } else { 0.0 },
            flops: t.flops,
            bytes: t.bytes,
        })
        .collect();
    let phases = Phases {
        forward: b.phases.get(&Phase::Forward).copied().unwrap_or(0.0),
        backward: b.phases.get(&Phase::Backward).copied(),
        optimizer: b.phases.get(&Phase::Optimizer).copied(),
    };
    PredictJson {
        model: model.to_string(),
        gpu: b.gpu.clone(),
        predictor: b.predictor.clone(),
        mode: if a.mode == ModeArg::Train { "train" } else { "inference" },
        batch: a.batch,
        seq: a.seq,
        dtype,
        params,
        total_ms: b.total_ms,
        interval_ms: [b.total_lo_ms, b.total_hi_ms],
        phases,
        classes,
        tokens_per_s: (a.batch * a.seq) as f64 / (b.total_ms / 1e3),
        flops: b.flops,
        bytes: b.bytes,
        unpriced: b.unpriced.iter().map(|u| format!("{} ×{}: {}", u.node, u.count, u.reason)).collect(),
        input: None,
        samples_per_s: None,
        unsupported: Vec::new(),
    }
}

pub(super) fn print_human(p: &PredictJson, gpu: &wavecast_gpu::Gpu) {
    let shape = match &p.input {
        Some(input) => format!("batch {} × {input}", p.batch),
        None => format!("batch {} × seq {}", p.batch, p.seq),
    };
    println!(
        "{} ({} params) · {} · {shape} · {} on {} · predictor: {}",
        p.model,
        table::si(p.params as f64),
        p.mode,
        p.dtype,
        gpu.name,
        p.predictor
    );
    let mut t = table::new(&["op class", "ops", "time ms", "share", "FLOP", "bytes", "TFLOP/s"]);
    let mut classes: Vec<&ClassJson> = p.classes.iter().collect();
    classes.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    for c in classes {
        let achieved = if c.ms > 0.0 { c.flops / (c.ms / 1e3) / 1e12 } else { 0.0 };
        t.add_row(vec![
            c.class.to_string(),
            c.count.to_string(),
            table::ms(c.ms),
            table::pct(100.0 * c.share),
            table::si(c.flops),
            table::si(c.bytes),
            format!("{achieved:.1}"),
        ]);
    }
    println!("{t}");
    let mut phases = vec![format!("forward {} ms", table::ms(p.phases.forward))];
    if let Some(b) = p.phases.backward {
        phases.push(format!("backward {} ms", table::ms(b)));
    }
    if let Some(o) = p.phases.optimizer {
        phases.push(format!("optimizer {} ms", table::ms(o)));
    }
    println!("phases: {}", phases.join(" · "));
    let interval = if p.interval_ms[1] > p.interval_ms[0] {
        format!(" (interval {}–{} ms)", table::ms(p.interval_ms[0]), table::ms(p.interval_ms[1]))
    } else {
        String::new()
    };
    match p.samples_per_s {
        Some(rate) => {
            println!("step time: {} ms{interval} · {rate:.1} samples/s", table::ms(p.total_ms));
            if let Some(price) = &gpu.price {
                let usd_per_m = price.usd_per_hour / 3600.0 / rate * 1e6;
                println!("cost: ${:.2}/GPU-hour → ${usd_per_m:.2} per million samples", price.usd_per_hour);
            }
        }
        None => {
            println!("step time: {} ms{interval} · {:.0} tokens/s", table::ms(p.total_ms), p.tokens_per_s);
            if let Some(price) = &gpu.price {
                let usd_per_mtok = price.usd_per_hour / 3600.0 / p.tokens_per_s * 1e6;
                println!("cost: ${:.2}/GPU-hour → ${usd_per_mtok:.3} per million tokens", price.usd_per_hour);
            }
        }
    }
    for u in &p.unpriced {
        println!("unpriced: {u}");
    }
    for u in &p.unsupported {
        println!("unsupported ONNX op: {} ×{} (~{:.2}% of FLOPs, not in the time above)", u.op, u.count, 100.0 * u.share);
    }
}
