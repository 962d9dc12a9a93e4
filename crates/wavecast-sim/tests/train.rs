//! The parallel training step against hand arithmetic: which collectives a TP = 2, PP = 2,
//! DP = 2 step issues, how many and how large; memory by ZeRO stage; the pipeline schedule.

use wavecast_gpu::Catalog;
use wavecast_ir::ops::{CommKind, OptimizerKind};
use wavecast_ir::DType;
use wavecast_predict::comm::CommModel;
use wavecast_sim::train::{train_step, Axis, CollectiveRow, Topology, TrainReport};
use wavecast_workload::{Layout, Recompute, Stack, TrainOptions, TransformerSpec};

const H: u64 = 256;
const LAYERS: u64 = 4;
const VOCAB: u64 = 1000;
const POSITIONS: u64 = 512;

fn tiny() -> TransformerSpec {
    let cfg = format!(r#"{{"model_type":"gpt2","n_embd":{H},"n_layer":{LAYERS},"n_head":4,"vocab_size":{VOCAB},"n_positions":{POSITIONS}}}"#);
    TransformerSpec::from_json(&cfg, "tiny-gpt2").unwrap()
}

fn step(layout: Layout) -> TrainReport {
    step_on(layout, Stack::EAGER)
}

fn step_on(layout: Layout, stack: Stack) -> TrainReport {
    let o = TrainOptions { global_batch: 8, seq: 128, dtype: DType::Bf16, optimizer: OptimizerKind::Adam, layout, stack, power_limit_w: None };
    let gpu = Catalog::builtin().get("h100-sxm").unwrap().clone();
    let predictor = wavecast_predict::by_name("roofline").unwrap();
    train_step(&tiny(), &o, &Topology::eight_per_node(), &gpu, predictor.as_ref(), &CommModel::default(), None).unwrap()
}

fn rows(r: &TrainReport, axis: Axis, kind: CommKind) -> Vec<&CollectiveRow> {
    r.collectives.iter().filter(|c| c.axis == axis && c.kind == kind).collect()
}

#[test]
fn tp2_pp2_dp2_issues_the_collectives_counted_by_hand() {
    let r = step(Layout { dp: 2, tp: 2, pp: 2, micro_batch: 2, ..Layout::default() });
    // 8 sequences over 2 data-parallel ranks in micro-batches of 2: 2 micro-batches.
    assert_eq!(r.micro_batches, 2);
    let m = 2;
    let tokens = 2 * 128;
    let activation = (tokens * H * 2) as f64; // BF16
    // Tensor parallelism, per micro-batch: the vocab-parallel embedding's all-reduce and two per
    // layer (attention output, MLP output) forward, and as many in backward.
    let ar = rows(&r, Axis::Tensor, CommKind::AllReduce);
    assert_eq!(ar.len(), 1, "{ar:?}");
    assert_eq!(ar[0].calls, m * 2 * (1 + 2 * LAYERS));
    assert_eq!(ar[0].bytes_each, activation);
    assert_eq!((ar[0].group, ar[0].link), (2, "nvlink"));
    // The vocab-parallel logits are gathered once forward and once backward.
    let ag = rows(&r, Axis::Tensor, CommKind::AllGather);
    assert_eq!(ag[0].calls, m * 2);
    assert_eq!(ag[0].bytes_each, (tokens * VOCAB * 2) as f64);
    // Pipeline: each micro-batch crosses the one boundary forward and back.
    let p2p = rows(&r, Axis::Pipeline, CommKind::SendRecv);
    assert_eq!(p2p[0].calls, 2 * m);
    assert_eq!(p2p[0].bytes_each, activation);
    // Data parallelism: the first stage's gradients, all-reduced once per step (one bucket).
    // Its parameters per GPU: two layers of GPT-2 split over 2 GPUs — QKV and fc1 columns and
    // their biases halved, out-projection and fc2 rows halved with whole biases, both norms
    // whole — plus half the token table and the whole position table.
    let layer = 12 * H * H / 2 + (3 * H + 4 * H) / 2 + 2 * H + 4 * H;
    let stage0 = 2 * layer + VOCAB / 2 * H + POSITIONS * H;
    let dp = rows(&r, Axis::Data, CommKind::AllReduce);
    assert_eq!(dp.len(), 1);
    assert_eq!(dp[0].calls, 1);
    assert_eq!(dp[0].bytes_each, (stage0 * 2) as f64);
    assert!(rows(&r, Axis::Data, CommKind::AllGather).is_empty(), "no ZeRO, no weight gathers");
    // Every part of the step is accounted for.
    let p = &r.parts;
    let sum = p.compute_ms + p.bubble_ms + p.pipeline_comm_ms + p.data_parallel_exposed_ms + p.optimizer_ms;
    assert!((sum - r.step_ms).abs() < 1e-9 * r.step_ms);
    assert!(r.mfu > 0.0 && r.mfu < 1.0, "{}", r.mfu);
}

#[test]
fn zero_stages_add_their_collectives_and_shrink_memory_as_the_paper_says() {
    let base = Layout { dp: 4, micro_batch: 2, ..Layout::default() };
    let z: Vec<TrainReport> = (0..=3).map(|zero| step(Layout { zero, ..base })).collect();
    let states = |r: &TrainReport| r.memory_gb.parts.weights + r.memory_gb.parts.gradients + r.memory_gb.parts.optimizer_states + r.memory_gb.parts.master_weights;
    // Mixed-precision Adam: 2 + 2 + 12 bytes per parameter; ZeRO-1 divides the 12, ZeRO-2 also
    // the gradients' 2, ZeRO-3 everything (ZeRO paper, §5).
    let psi = states(&z[0]) / 16.0;
    assert!((states(&z[1]) - psi * (4.0 + 12.0 / 4.0)).abs() < 1e-9);
    assert!((states(&z[2]) - psi * (2.0 + 14.0 / 4.0)).abs() < 1e-9);
    assert!((states(&z[3]) - psi * 16.0 / 4.0).abs() < 1e-9);
    assert_eq!(rows(&z[0], Axis::Data, CommKind::AllReduce).len(), 1);
    for r in &z[1..3] {
        assert_eq!(rows(r, Axis::Data, CommKind::ReduceScatter).len(), 1);
        assert_eq!(rows(r, Axis::Data, CommKind::AllGather)[0].calls, 1);
    }
    // ZeRO-3 gathers each layer's weights forward and backward, per micro-batch.
    let m = z[3].micro_batches;
    assert_eq!(rows(&z[3], Axis::Data, CommKind::AllGather)[0].calls, 2 * LAYERS * m);
    // Every parameter is sharded, the embeddings and the final norm too: each micro-batch
    // reduce-scatters all of their gradients and gathers each weight at least once.
    let layer = 12 * H * H + 13 * H;
    let params = (LAYERS * layer + VOCAB * H + POSITIONS * H + 2 * H) as f64;
    let moved = |kind| rows(&z[3], Axis::Data, kind).iter().map(|c| c.calls as f64 * c.bytes_each).sum::<f64>();
    let per_micro_batch = 2.0 * params * m as f64;
    assert!((moved(CommKind::ReduceScatter) - per_micro_batch).abs() < 1e-9 * per_micro_batch, "{} vs {per_micro_batch}", moved(CommKind::ReduceScatter));
    assert!(moved(CommKind::AllGather) >= per_micro_batch, "{}", moved(CommKind::AllGather));
}

#[test]
fn recomputation_trades_time_for_activation_memory() {
    let base = Layout { dp: 1, micro_batch: 8, ..Layout::default() };
    let none = step(base);
    let full = step(Layout { recompute: Recompute::Full, ..base });
    assert!(full.memory_gb.parts.activations < 0.5 * none.memory_gb.parts.activations);
    assert!(full.step_ms > none.step_ms);
    assert!(full.parts.recompute_ms > 0.0 && none.parts.recompute_ms == 0.0);
}

#[test]
fn groups_that_leave_the_node_use_the_network() {
    let o = TrainOptions { global_batch: 16, seq: 128, dtype: DType::Bf16, optimizer: OptimizerKind::Adam, layout: Layout { dp: 16, ..Layout::default() }, stack: Stack::EAGER, power_limit_w: None };
    let gpu = Catalog::builtin().get("h100-sxm").unwrap().clone();
    let predictor = wavecast_predict::by_name("roofline").unwrap();
    let topo = Topology { gpus_per_node: 8, nic_gbps: None };
    let r = train_step(&tiny(), &o, &topo, &gpu, predictor.as_ref(), &CommModel::default(), Some(16)).unwrap();
    assert_eq!(r.nodes, 2);
    assert_eq!(rows(&r, Axis::Data, CommKind::AllReduce)[0].link, "network");
    // Two GPUs more than the layout uses is an error, not a silent idle pair.
    let e = train_step(&tiny(), &o, &topo, &gpu, predictor.as_ref(), &CommModel::default(), Some(24)).unwrap_err().to_string();
    assert!(e.contains("16 GPUs but 24 are given"), "{e}");
}

#[test]
fn a_layout_that_does_not_fit_says_by_how_much_and_what_helps() {
    let cfg = r#"{"model_type":"gpt2","n_embd":12288,"n_layer":96,"n_head":96,"vocab_size":50257,"n_positions":2048}"#;
    let spec = TransformerSpec::from_json(cfg, "gpt3").unwrap();
    let o = TrainOptions { global_batch: 8, seq: 2048, dtype: DType::Bf16, optimizer: OptimizerKind::Adam, layout: Layout { dp: 8, ..Layout::default() }, stack: Stack::EAGER, power_limit_w: None };
    let gpu = Catalog::builtin().get("a100-sxm-80gb").unwrap().clone();
    let predictor = wavecast_predict::by_name("roofline").unwrap();
    let e = train_step(&spec, &o, &Topology::eight_per_node(), &gpu, predictor.as_ref(), &CommModel::default(), None).unwrap_err().to_string();
    assert!(e.starts_with("does not fit in memory") && e.contains("GB short") && e.contains("--zero"), "{e}");
}

/// The loss's vocabulary-wide memory follows the stack's loss kernel: eager PyTorch holds the
/// measured 12.94 bytes per token and vocabulary entry at BF16, a fused kernel (torch.compile)
/// the BF16 logits and their gradient, Megatron-Core's vocabulary-parallel kernel the logits and
/// one FP32 buffer. Nothing else in the step moves.
#[test]
fn the_loss_memory_follows_the_stacks_loss_kernel() {
    let l = Layout { micro_batch: 8, ..Layout::default() };
    let eager = step_on(l, Stack::EAGER);
    let fused = step_on(l, Stack { loss: wavecast_workload::LossKernel::Fused, ..Stack::EAGER });
    let megatron = step_on(l, Stack { loss: wavecast_workload::LossKernel::VocabParallel, ..Stack::EAGER });
    let entries = (8 * 128 * VOCAB) as f64;
    let gb = |r: &TrainReport| r.memory_gb.parts.activations * 1e9;
    assert!((gb(&eager) - gb(&fused) - entries * (12.94 - 4.0)).abs() < 1e-3 * entries, "{} vs {}", gb(&eager), gb(&fused));
    assert!((gb(&megatron) - gb(&fused) - entries * 2.0).abs() < 1e-3 * entries);
    assert_eq!(eager.step_ms, fused.step_ms);
}

/// Megatron-Core's tensor-parallel overlap hides all but one of the tp chunks of each layer's
/// all-gathers and reduce-scatters behind its GEMMs: the step gets faster, but never faster
/// than the same step with those collectives free (one chunk stays exposed), and the
/// collectives it issues are the same.
#[test]
fn tensor_parallel_overlap_hides_all_but_one_chunk() {
    let l = Layout { tp: 4, sequence_parallel: true, micro_batch: 8, ..Layout::default() };
    let blocking = step_on(l, Stack::EAGER);
    let overlapped = step_on(l, Stack { tp_comm_overlap: true, ..Stack::EAGER });
    assert!(overlapped.step_ms < blocking.step_ms, "{} vs {}", overlapped.step_ms, blocking.step_ms);
    let layer_comm: f64 = blocking
        .collectives
        .iter()
        .filter(|c| c.axis == Axis::Tensor && matches!(c.kind, CommKind::AllGather | CommKind::ReduceScatter) && c.bytes_each < (8 * 128 * VOCAB) as f64)
        .map(|c| c.ms)
        .sum();
    assert!(layer_comm > 0.0);
    // At most the hidden three quarters come off; at least one quarter stays.
    let saved = blocking.step_ms - overlapped.step_ms;
    assert!(saved <= 0.75 * layer_comm * (1.0 + 1e-9), "saved {saved} of {layer_comm} ms");
    assert_eq!(blocking.collectives.len(), overlapped.collectives.len());
}

/// With the parameter gather overlapped (Megatron-Core's `--overlap-param-gather`), ZeRO-1's
/// gather of the updated weights runs under the first micro-batch's forward pass: the exposed
/// data-parallel time drops by at most that forward, and the all-gather is still issued.
#[test]
fn an_overlapped_parameter_gather_hides_behind_the_first_forward() {
    let l = Layout { dp: 2, zero: 1, micro_batch: 4, ..Layout::default() };
    let plain = step_on(l, Stack::EAGER);
    let overlapped = step_on(l, Stack { param_gather_overlap: true, ..Stack::EAGER });
    assert!(overlapped.parts.data_parallel_exposed_ms < plain.parts.data_parallel_exposed_ms);
    assert_eq!(plain.parts.compute_ms, overlapped.parts.compute_ms);
    assert!(rows(&overlapped, Axis::Data, CommKind::AllGather).len() == 1);
}

/// Without overlapped gradient reduction (Megatron-LM's 2021 local DDP) the whole all-reduce
/// follows the backward pass: exposed exactly its wire time; the compute is untouched.
#[test]
fn an_unoverlapped_gradient_all_reduce_is_exposed_whole() {
    let l = Layout { dp: 2, micro_batch: 4, ..Layout::default() };
    let overlapped = step_on(l, Stack::EAGER);
    let after = step_on(l, Stack { grad_reduce_overlap: false, ..Stack::EAGER });
    let wire: f64 = rows(&after, Axis::Data, CommKind::AllReduce).iter().map(|c| c.ms).sum();
    assert!(wire > 0.0);
    assert!((after.parts.data_parallel_exposed_ms - wire).abs() < 1e-9 * wire, "{} vs {wire}", after.parts.data_parallel_exposed_ms);
    assert_eq!(after.parts.compute_ms, overlapped.parts.compute_ms);
}

/// A small Mixtral: 8 experts, top 2, enough tokens per micro-batch to reach every expert.
fn tiny_moe() -> TransformerSpec {
    let cfg = format!(
        r#"{{"model_type":"mixtral","hidden_size":{H},"intermediate_size":512,"num_hidden_layers":{LAYERS},"num_attention_heads":4,"num_key_value_heads":4,"num_local_experts":8,"num_experts_per_tok":2,"vocab_size":{VOCAB},"max_position_embeddings":{POSITIONS},"rms_norm_eps":1e-5}}"#
    );
    TransformerSpec::from_json(&cfg, "tiny-mixtral").unwrap()
}

/// Experts spread over GPUs by expert parallelism are not sharded again by ZeRO: ZeRO-3 over
/// four data-parallel GPUs leaves each a quarter of every expert's states whether the experts
/// are spread (ep 4: two whole experts each) or not (ep 1: a quarter of all eight). Without
/// ZeRO, ep 4 holds a quarter of the experts ep 1 holds.
#[test]
fn expert_parallelism_and_zero_do_not_shard_the_experts_twice() {
    let o = |layout: Layout| TrainOptions { global_batch: 8, seq: 128, dtype: DType::Bf16, optimizer: OptimizerKind::Adam, layout, stack: Stack::EAGER, power_limit_w: None };
    let gpu = Catalog::builtin().get("h100-sxm").unwrap().clone();
    let predictor = wavecast_predict::by_name("roofline").unwrap();
    let run = |zero: u8, ep: u64| train_step(&tiny_moe(), &o(Layout { dp: 4, ep, zero, micro_batch: 2, ..Layout::default() }), &Topology::eight_per_node(), &gpu, predictor.as_ref(), &CommModel::default(), None).unwrap();
    let states = |r: &TrainReport| r.memory_gb.parts.weights + r.memory_gb.parts.gradients + r.memory_gb.parts.optimizer_states + r.memory_gb.parts.master_weights;
    let (spread, whole) = (states(&run(3, 4)), states(&run(3, 1)));
    assert!((spread / whole - 1.0).abs() < 1e-9, "ZeRO-3: ep 4 {spread} GB vs ep 1 {whole} GB");
    // Without ZeRO, ep 4 drops three quarters of the experts' states: 4 layers × 8 experts ×
    // 3 × 256 × 512 parameters at 16 bytes (BF16 weights and gradients, FP32 Adam and master).
    let experts_gb = (LAYERS * 8 * 3 * H * 512) as f64 * 16.0 / 1e9;
    let (spread, whole) = (states(&run(0, 4)), states(&run(0, 1)));
    assert!((whole - spread - 0.75 * experts_gb).abs() < 1e-9, "no ZeRO: ep 4 {spread} GB vs ep 1 {whole} GB");
}
