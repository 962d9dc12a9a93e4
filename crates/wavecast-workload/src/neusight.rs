//! Import of NeuSight's GPU-independent operator graphs (`opgraph/<workload>.csv`): each row
//! lists the primitive kernels of one FX node for the forward (`FwOps`), backward (`BwOps`) and
//! gradient-accumulation (`AccOps`) passes. The CSV holds one transformer layer; the layer block
//! is repeated `num_layer` times (0 = the graph is already full depth).

use crate::pylit::{self, PyVal};
use crate::WorkloadError;
use wavecast_ir::ops::{Comm, CommKind, Elementwise, EwKind, Gemm, MemCopy, Norm, NormKind, Softmax};
use wavecast_ir::{DType, Graph, Op, Phase};

/// NeuSight measured everything in FP32.
const DT: DType = DType::Fp32;

/// Parsed workload name `<model>-<inf|train>-<seq>-<batch>[-<option>]`.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadName {
    pub model: String,
    pub training: bool,
    pub seq: u64,
    pub batch: u64,
    pub option: Option<String>,
}

impl WorkloadName {
    pub fn parse(name: &str) -> Result<WorkloadName, String> {
        let parts: Vec<&str> = name.split('-').collect();
        if parts.len() < 4 {
            return Err(format!("workload name '{name}' is not <model>-<inf|train>-<seq>-<batch>[-option]"));
        }
        let training = match parts[1] {
            "inf" => false,
            "train" => true,
            other => return Err(format!("workload '{name}': mode '{other}' is neither 'inf' nor 'train'")),
        };
        let num = |s: &str, what: &str| s.parse::<u64>().map_err(|_| format!("workload '{name}': {what} '{s}' is not a number"));
        Ok(WorkloadName {
            model: parts[0].to_string(),
            training,
            seq: num(parts[2], "sequence length")?,
            batch: num(parts[3], "batch")?,
            option: if parts.len() > 4 { Some(parts[4..].join("-")) } else { None },
        })
    }
}

/// First and last node of the repeated layer, by model family (NeuSight's aggregator rule).
fn layer_bounds(model: &str) -> Option<(&'static str, &'static str)> {
    if model.starts_with("bert") {
        Some(("bert_encoder_layer_0_attention_self_query", "bert_encoder_layer_0_output_layer_norm"))
    } else if model.starts_with("gpt") {
        Some(("transformer_h_0_ln_1", "add_15"))
    } else if model.starts_with("opt") {
        Some(("model_decoder_layers_0_self_attn_layer_norm", "view_11"))
    } else {
        None
    }
}

/// Imports an opgraph CSV. `workload` is the file stem, `num_layer` from the label JSON. A graph
/// that already holds layer 1 (fusion traces are full depth even when the label says 24 layers)
/// is not repeated.
pub fn import_opgraph(text: &str, workload: &str, num_layer: u64) -> Result<Graph, WorkloadError> {
    let err = |reason: String| WorkloadError::OpGraph { origin: format!("opgraph {workload}"), reason };
    let name = WorkloadName::parse(workload).map_err(err)?;
    let mut rdr = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let headers = rdr.headers().map_err(|e| err(e.to_string()))?.clone();
    let col = |n: &str| headers.iter().position(|h| h == n).ok_or_else(|| err(format!("missing column '{n}'")));
    let (c_name, c_fw, c_bw, c_acc) = (col("Name")?, col("FwOps")?, col("BwOps")?, col("AccOps")?);
    let (c_kind, c_inputs) = (col("OpName").ok(), col("InputShapes").ok());

    let mut rows = Vec::new();
    let mut fused_inputs = std::collections::HashMap::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| err(format!("line {line}: {e}")))?;
        let get = |c: usize| rec.get(c).unwrap_or("").to_string();
        if let (Some(k), Some(inp)) = (c_kind, c_inputs) {
            if rec.get(k) == Some("fused") {
                if let Some(elements) = external_input_elements(rec.get(inp).unwrap_or("")) {
                    fused_inputs.insert(line, elements);
                }
            }
        }
        rows.push((line, get(c_name), get(c_fw), get(c_bw), get(c_acc)));
    }

    let full_depth = layer_bounds(&name.model).is_some_and(|(first, _)| {
        let second = first.replacen("_0_", "_1_", 1);
        rows.iter().any(|r| r.1.contains(&second))
    });
    let (start, end) = if num_layer > 1 && !full_depth {
        let (first, last) = layer_bounds(&name.model)
            .ok_or_else(|| err(format!("no layer-block rule for model '{}' with num_layer {num_layer}", name.model)))?;
        let s = rows.iter().position(|r| r.1 == first).ok_or_else(|| err(format!("layer start node '{first}' not found")))?;
        let e = rows.iter().position(|r| r.1 == last).ok_or_else(|| err(format!("layer end node '{last}' not found")))?;
        if e < s {
            return Err(err(format!("layer end '{last}' comes before start '{first}'")));
        }
        (s, e)
    } else {
        (usize::MAX, usize::MAX)
    };

    let mut g = Graph::new(workload);
    let mut backward = Vec::new();
    for (idx, (line, node, fw, bw, acc)) in rows.iter().enumerate() {
        let repeat = if idx >= start && idx <= end { num_layer } else { 1 };
        for (phase, text) in [(Phase::Forward, fw), (Phase::Backward, bw), (Phase::Backward, acc)] {
            if phase == Phase::Backward && !name.training {
                continue;
            }
            let mut ops = primitives(text).map_err(|e| err(format!("line {line} ({node}): {e}")))?;
            if phase == Phase::Forward {
                if let Some(&inputs) = fused_inputs.get(line) {
                    ops = fuse_elementwise(ops, inputs);
                }
            }
            for (k, op) in ops.into_iter().enumerate() {
                let node_name = format!("{node}.{}{k}", if phase == Phase::Forward { "fw" } else { "bw" });
                let n = wavecast_ir::Node { name: node_name, op, phase, repeat, role: wavecast_ir::Role::Unscoped };
                if phase == Phase::Forward {
                    g.nodes.push(n);
                } else {
                    backward.push(n);
                }
            }
        }
    }
    g.nodes.extend(backward);
    g.check_scale().map_err(|e| err(e.to_string()))?;
    Ok(g)
}

fn primitives(text: &str) -> Result<Vec<Op>, String> {
    let text = text.trim();
    if text.is_empty() || text == "[]" {
        return Ok(Vec::new());
    }
    let v = pylit::parse(text)?;
    let list = v.as_seq().ok_or("op list is not a list")?;
    list.iter().map(primitive).collect()
}

fn ints(v: &PyVal) -> Result<Vec<u64>, String> {
    v.as_seq()
        .ok_or("dims are not a tuple")?
        .iter()
        .map(|d| match d.as_int() {
            Some(i) if i >= 0 => Ok(i as u64),
            _ => Err(format!("dimension {d:?} is not a non-negative integer")),
        })
        .collect()
}

fn elements(shape: &PyVal) -> Result<u64, String> {
    ints(shape)?.iter().try_fold(1u64, |a, &d| a.checked_mul(d).ok_or_else(|| "shape overflows".to_string()))
}

fn sum_elements(shapes: &[PyVal]) -> Result<u64, String> {
    shapes.iter().try_fold(0u64, |a, s| a.checked_add(elements(s)?).ok_or_else(|| "sum of shapes overflows".to_string()))
}

fn primitive(v: &PyVal) -> Result<Op, String> {
    let pair = v.as_seq().filter(|p| p.len() == 2).ok_or("primitive is not [kind, dims]")?;
    let kind = pair[0].as_str().ok_or("primitive kind is not a string")?;
    let args = &pair[1];
    let dims = || ints(args);
    let need = |d: &[u64], n: usize| {
        if d.len() == n {
            Ok(())
        } else {
            Err(format!("{kind} expects {n} dims, got {}", d.len()))
        }
    };
    Ok(match kind {
        "Linear" => {
            let d = dims()?;
            need(&d, 3)?;
            Op::Gemm(Gemm::linear(d[0], d[1], d[2], false, DT).map_err(|e| e.to_string())?)
        }
        "BMM" => {
            // NeuSight's (B, M, N, K): B products of (M×N)·(N×K); N is the reduction.
            let d = dims()?;
            need(&d, 4)?;
            Op::Gemm(Gemm::bmm(d[0], d[1], d[2], d[3], DT).map_err(|e| e.to_string())?)
        }
        "MEM" => {
            let shapes = args.as_seq().ok_or("MEM args are not a tuple of shapes")?;
            let total = sum_elements(shapes)?;
            Op::MemCopy(MemCopy::touch(total, DT))
        }
        "ALLREDUCE" | "ALLREDUCE_ASYNC" | "SENDRECV" => {
            let n = comm_elements(args)?;
            let kind_ir = if kind == "SENDRECV" { CommKind::SendRecv } else { CommKind::AllReduce };
            Op::Comm(Comm::new(kind_ir, n as f64 * DT.size_bytes() as f64, 4, DT, kind == "ALLREDUCE_ASYNC"))
        }
        k if k.starts_with("VEC") => {
            let d = dims()?;
            need(&d, 2)?;
            vector(&k[3..], d[0], d[1])?
        }
        other => return Err(format!("unknown primitive kind '{other}'")),
    })
}

/// Elements of a fused node's external inputs (its `InputShapes`), when they are shapes.
fn external_input_elements(text: &str) -> Option<u64> {
    let v = pylit::parse(text.trim()).ok()?;
    let shapes = v.as_seq()?;
    if shapes.is_empty() {
        return None;
    }
    sum_elements(shapes).ok()
}

/// A fused group of element-wise primitives (`torch.compile` and NeuSight's fusion rule) runs as
/// one kernel: it reads its external inputs and writes its output once, instead of every
/// intermediate crossing memory. So the group becomes one element-wise op of its last
/// primitive's kind and size, with as many input tensors as its external inputs amount to.
/// Groups holding anything else (copies, softmax, norms) stay as they are.
fn fuse_elementwise(ops: Vec<Op>, input_elements: u64) -> Vec<Op> {
    let all_elementwise = ops.len() > 1 && ops.iter().all(|o| matches!(o, Op::Elementwise(_)));
    let Some(Op::Elementwise(last)) = ops.last().filter(|_| all_elementwise) else { return ops };
    let n = last.elements.max(1);
    let inputs = (input_elements as f64 / n as f64).round().clamp(1.0, 16.0) as u32;
    vec![Op::Elementwise(Elementwise::new(last.kind, n, inputs, DT))]
}

fn comm_elements(args: &PyVal) -> Result<u64, String> {
    match args {
        PyVal::Int(n) if *n >= 0 => Ok(*n as u64),
        PyVal::Seq(items) if items.iter().all(|i| i.as_int().is_some()) => elements(args),
        PyVal::Seq(items) => sum_elements(items),
        _ => Err("communication size is not a shape".into()),
    }
}

fn vector(op: &str, b: u64, h: u64) -> Result<Op, String> {
    let n = wavecast_ir::checked_mul("vector elements", &[b, h]).map_err(|e| e.to_string())?;
    let ew = |kind, inputs| Op::Elementwise(Elementwise::new(kind, n, inputs, DT));
    Ok(match op {
        "softmax" => Op::Softmax(Softmax::new(b, h, DT)),
        "ln" => Op::Norm(Norm { has_bias: false, ..Norm::new(NormKind::LayerNorm, b, h, DT) }),
        "add" => ew(EwKind::Add, 2),
        "addu" => ew(EwKind::Add, 1),
        "mul" => ew(EwKind::Mul, 2),
        "mulu" => ew(EwKind::Mul, 1),
        "div" => ew(EwKind::Div, 2),
        "divu" => ew(EwKind::Div, 1),
        "pow" => ew(EwKind::Pow, 2),
        "powu" => ew(EwKind::Pow, 1),
        "tanh" => ew(EwKind::Tanh, 1),
        "relu" => ew(EwKind::Relu, 1),
        "gelu" => ew(EwKind::Gelu, 1),
        other => return Err(format!("unknown vector op 'VEC{other}'")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINI: &str = "Name,OpName,FwOps,BwOps,AccOps,Prev,Next,InputShapes,OutputShape\n\
transformer_wte,EMBEDDING,\"[['MEM', ((4, 8), (4, 8, 16))]]\",\"[['MEM', ((100, 16),)]]\",\"[['VECadd', [1, 1600]]]\",x,y,z,w\n\
transformer_h_0_ln_1,VECln,\"[['VECln', (32, 16)]]\",\"[['VECmul', (32, 16)]]\",[],x,y,z,w\n\
addmm,Linear,\"[['Linear', (32, 16, 48)]]\",\"[['Linear', (32, 48, 16)], ['Linear', (48, 32, 16)]]\",[],x,y,z,w\n\
matmul,BMM,\"[['BMM', (8, 8, 4, 8)]]\",[],[],x,y,z,w\n\
add_15,VECadd,\"[['VECadd', (32, 16)]]\",[],[],x,y,z,w\n\
lm_head,Linear,\"[['Linear', (32, 16, 100)]]\",[],[],x,y,z,w\n";

    #[test]
    fn imports_and_repeats_the_layer_block() {
        let g = import_opgraph(MINI, "gpt2_tiny-train-8-4", 3).unwrap();
        let linear = g.nodes.iter().find(|n| n.name == "addmm.fw0").unwrap();
        assert_eq!(linear.repeat, 3);
        assert_eq!(linear.op.flops(), 2.0 * 32.0 * 16.0 * 48.0);
        let head = g.nodes.iter().find(|n| n.name == "lm_head.fw0").unwrap();
        assert_eq!(head.repeat, 1);
        let bmm = g.nodes.iter().find(|n| n.name == "matmul.fw0").unwrap();
        // (B, M, N, K) = (8, 8, 4, 8): reduction 4, output 8×8.
        assert_eq!(bmm.op.flops(), 2.0 * 8.0 * 8.0 * 4.0 * 8.0);
        assert_eq!(g.nodes.iter().filter(|n| n.phase == Phase::Backward).count(), 5);
        let emb = &g.nodes[0];
        assert_eq!(emb.op.bytes(), 4.0 * (32.0 + 512.0));
    }

    #[test]
    fn inference_drops_backward_and_bad_rows_are_named() {
        let g = import_opgraph(MINI, "gpt2_tiny-inf-8-4", 0).unwrap();
        assert!(g.nodes.iter().all(|n| n.phase == Phase::Forward));
        let bad = MINI.replace("(32, 16, 48)", "(32, 16)");
        let e = import_opgraph(&bad, "gpt2_tiny-inf-8-4", 0).unwrap_err().to_string();
        assert!(e.contains("addmm") && e.contains("Linear expects 3 dims"), "{e}");
        let e = import_opgraph(MINI, "switch-inf-8-4", 2).unwrap_err().to_string();
        assert!(e.contains("no layer-block rule"), "{e}");
        assert!(WorkloadName::parse("gpt2-fly-1-2").is_err());
    }

    #[test]
    fn full_depth_graphs_are_not_repeated() {
        let deep = format!("{MINI}transformer_h_1_ln_1~add_16,fused,\"[['VECln', (32, 16)]]\",[],[],x,y,z,w\n");
        let g = import_opgraph(&deep, "gpt2_tiny-inf-8-4-fusion", 36).unwrap();
        assert!(g.nodes.iter().all(|n| n.repeat == 1));
    }

    #[test]
    fn a_fused_elementwise_group_crosses_memory_once() {
        // GELU as eight element-wise kernels over (4, 8) elements, one external input.
        let gelu = "[['VECpowu', (4, 8)], ['VECmulu', (4, 8)], ['VECadd', (4, 8)], ['VECmulu', (4, 8)], ['VECtanh', (4, 8)], ['VECaddu', (4, 8)], ['VECmulu', (4, 8)], ['VECmul', (4, 8)]]";
        let csv = format!("Name,OpName,FwOps,BwOps,AccOps,Prev,Next,InputShapes,OutputShape\nadd_11~mul_3,fused,\"{gelu}\",[],[],x,y,\"[(4, 8)]\",\"(4, 8)\"\n");
        let g = import_opgraph(&csv, "gpt2_tiny-inf-8-4-fusion", 0).unwrap();
        assert_eq!(g.nodes.len(), 1);
        // One read of the input and one write of the output, 4 bytes each.
        assert_eq!(g.nodes[0].op.bytes(), 4.0 * (32.0 + 32.0));
        // Unfused, the same eight kernels move far more.
        let plain = csv.replace(",fused,", ",VECmul,");
        let unfused: f64 = import_opgraph(&plain, "gpt2_tiny-inf-8-4-fusion", 0).unwrap().nodes.iter().map(|n| n.op.bytes()).sum();
        assert!(unfused > 5.0 * g.nodes[0].op.bytes(), "{unfused}");
        // Two external inputs of the output's size: two tensor inputs.
        let two = csv.replace("\"[(4, 8)]\",\"(4, 8)\"", "\"[(4, 8), (4, 8)]\",\"(4, 8)\"");
        assert_eq!(import_opgraph(&two, "gpt2_tiny-inf-8-4-fusion", 0).unwrap().nodes[0].op.bytes(), 4.0 * 96.0);
    }

    #[test]
    fn communication_rows_become_comm_ops() {
        let csv = "Name,OpName,FwOps,BwOps,AccOps\nar,allreduce,\"[['ALLREDUCE', (4, 1024, 1280)]]\",\"[['ALLREDUCE_ASYNC', [1280]]]\",[]\n";
        let g = import_opgraph(csv, "gpt2_large-train-1024-4-tp4", 0).unwrap();
        assert_eq!(g.nodes.len(), 2);
        assert!(g.nodes.iter().all(|n| matches!(n.op, Op::Comm(_))));
    }
}
