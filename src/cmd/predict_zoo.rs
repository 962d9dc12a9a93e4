//! `wavecast predict` for models that are not Hugging Face transformers: the built-in vision,
//! GAN and sequence models (`--model resnet50`, see `wavecast models`) and ONNX files
//! (`--onnx model.onnx`). Same output as transformer predictions, plus the input description,
//! samples per second and, for ONNX, the operators that could not be mapped.

use super::predict::{print_human, to_json, UnsupportedJson};
use super::{catalog, print_json, Result};
use crate::cli::{ModeArg, PredictArgs};
use wavecast_aggregate::estimate;
use wavecast_ir::{DType, Phase};
use wavecast_workload::onnx::{self, OnnxOptions};
use wavecast_workload::zoo::{self, Input, ZooOptions};
use wavecast_workload::{presets, Mode};

/// A `--model` name that is a zoo model and not a transformer preset.
pub fn is_zoo_model(name: &str) -> bool {
    !presets::names().iter().any(|n| n.eq_ignore_ascii_case(name)) && zoo::find(name).is_some()
}

pub fn run(a: PredictArgs) -> Result<()> {
    super::serve::reject_serve_flags(&a.serve)?;
    let mode = match a.mode {
        ModeArg::Inference => Mode::Inference,
        ModeArg::Train => Mode::Training,
        ModeArg::Serve => return Err("--mode serve models LLM decoding; use --mode inference or train for this model".into()),
    };
    let cat = catalog(&a.gpu_file)?;
    let gpu = cat.get(&a.gpu)?;
    let dtype: Option<DType> = a.dtype.as_deref().map(str::parse).transpose()?;
    let (name, graph, params, input, unsupported, dtype, seq) = match (&a.onnx, &a.model) {
        (Some(path), _) => {
            let o = OnnxOptions { batch: a.batch, seq: a.seq, mode, dtype, optimizer: a.optimizer.into(), image: a.image_size };
            let m = onnx::import_file(path, &o)?;
            for note in &m.notes {
                eprintln!("note: {note}");
            }
            (m.name, m.graph, m.params, m.input, m.unsupported, m.dtype, a.seq)
        }
        (None, Some(model)) => {
            let m = zoo::find(model).ok_or_else(|| format!("unknown model '{model}'"))?;
            let mut o = ZooOptions::new(a.batch, a.seq, mode, dtype.unwrap_or(DType::Fp32));
            o.optimizer = a.optimizer.into();
            o.image = a.image_size;
            o.attention = a.attention.into();
            if a.image_size.is_some() && !matches!(m.input, Input::Image(_)) {
                return Err(format!("--image-size does not apply to {} (its input is {})", m.name, m.describe_input(&o)).into());
            }
            let graph = m.build(&o)?;
            let seq = if m.input == Input::Tokens { a.seq } else { 1 };
            (m.name.to_string(), graph, m.param_count()?, m.describe_input(&o), Vec::new(), o.dtype, seq)
        }
        (None, None) => return Err("give --model NAME, --config FILE or --onnx FILE".into()),
    };
    let predictor = wavecast_predict::by_name(&a.predictor)?;
    let b = estimate(&graph, gpu, predictor.as_ref())?;
    let mut out = to_json(&name, &a, dtype, params, &b);
    let seconds = b.total_ms / 1e3;
    out.seq = seq;
    out.tokens_per_s = (a.batch * seq) as f64 / seconds;
    out.samples_per_s = Some(a.batch as f64 / seconds);
    out.input = Some(input);
    let total = graph.flops_in(Phase::Forward) + unsupported.iter().map(|u| u.flops).sum::<f64>();
    out.unsupported = unsupported
        .iter()
        .map(|u| UnsupportedJson { op: u.op.clone(), count: u.count, flops: u.flops, share: if total > 0.0 { u.flops / total } else { 0.0 } })
        .collect();
    if a.json {
        return print_json(&out);
    }
    print_human(&out, gpu);
    Ok(())
}
