//! Builds the operator graph of one forward pass (and, for training, the backward pass and the
//! optimizer step) of a transformer described by a [`TransformerSpec`].
//!
//! The layer is emitted once with `repeat = layers`, in the order PyTorch launches kernels.

use crate::hf::{Activation, Arch, LinearAttention, Mla, SparseIndexer, TransformerSpec};
use crate::WorkloadError;
use wavecast_ir::ops::{
    Attention, Comm, CommKind, Elementwise, Embedding, EwKind, GatedDelta, Gemm, MemCopy, Norm, NormKind, OptimizerKind,
    Reduction, Softmax,
};
use wavecast_ir::{checked_mul, dim, DType, Graph, Op, Phase, Quant, Role};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Forward only.
    Inference,
    /// Forward, backward and one optimizer step.
    Training,
}

/// How attention is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionImpl {
    /// Eager kernels for FP32/TF32 GPT-2/OPT/BERT (what Hugging Face ran when the shared
    /// measurements were taken); fused for half precision and Llama-family models.
    #[default]
    Auto,
    /// Separate QKᵀ BMM, scale, mask, softmax, dropout and ·V BMM kernels.
    Eager,
    /// One flash-style kernel.
    Fused,
    /// Eager BMMs around one kernel that scales, masks and normalises the scores together
    /// (Megatron-LM's fused scale-mask-softmax, Narayanan et al. 2021 §4.2), then dropout:
    /// how Megatron-LM trained before FlashAttention (2022).
    EagerFusedSoftmax,
}

impl AttentionImpl {
    /// Whether the attention core is one fused kernel for `spec` in `dtype` (storage format):
    /// `Auto` fuses for Llama-family models and half precision, and leaves the FP32/TF32
    /// GPT-2/OPT/BERT presets eager, as Hugging Face ran them for the shared measurements.
    pub fn fused_for(self, spec: &TransformerSpec, dtype: DType) -> bool {
        match self {
            AttentionImpl::Fused => true,
            AttentionImpl::Eager | AttentionImpl::EagerFusedSoftmax => false,
            AttentionImpl::Auto => spec.arch == Arch::Llama || !matches!(dtype, DType::Fp32 | DType::Tf32),
        }
    }
}

/// What sits on top of the backbone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// Decoders: LM head over every token; BERT: none at inference, pre-training heads in training.
    Auto,
    /// Backbone only (BERT includes its pooler).
    None,
    /// LM head over every position.
    LmHead,
    /// LM head over the last position of each sequence only (generation).
    LastToken,
    /// BERT sequence classification (2 labels).
    Classification,
    /// BERT masked-LM and next-sentence heads.
    PreTraining,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BuildOptions {
    pub batch: u64,
    /// New tokens per sequence in this pass.
    pub seq: u64,
    /// Tokens already in the KV cache (generation); 0 otherwise.
    pub past: u64,
    pub mode: Mode,
    pub dtype: DType,
    pub attention: AttentionImpl,
    pub head: Head,
    pub optimizer: OptimizerKind,
    /// Tensor-parallel degree (Megatron-style). With `tp > 1` the graph is one GPU's share:
    /// heads/tp query heads, kv_heads/tp KV heads (replicated when there are fewer KV heads
    /// than GPUs), ffn/tp MLP columns, vocab/tp embedding and LM-head rows, plus the
    /// all-reduces that stitch the shards back together.
    pub tp: u64,
    /// Storage format of the transformer layers' weights when it differs from `dtype`
    /// (FP8 weights with BF16 activations). The LM head and MoE router keep `dtype`, as
    /// serving stacks leave them unquantised.
    pub weights: Option<DType>,
    /// Projections merged the way serving engines (vLLM, SGLang, TensorRT-LLM) run them: one
    /// QKV GEMM, one gate-and-up GEMM, one rotary kernel for queries and keys. Same FLOPs,
    /// bytes and parameters; fewer, wider kernels.
    pub merged_projections: bool,
    /// Context-parallel degree: each GPU holds seq/cp of every sequence (`seq` is already that
    /// share) and attends over all of it, exchanging keys and values around a ring that overlaps
    /// the attention kernels. Attention work per GPU is 1/cp of the whole sequence's.
    pub cp: u64,
    /// Expert-parallel degree (MoE): each GPU holds experts/ep experts and trades routed tokens
    /// with its group by all-to-all, before and after the experts.
    pub ep: u64,
    /// Megatron's sequence parallelism (with `tp > 1`): norms, dropouts and residual adds run on
    /// tokens/tp, and each all-reduce becomes a reduce-scatter and an all-gather.
    pub sequence_parallel: bool,
    /// Quantised format of the transformer layers' linear weights (attention projections, dense
    /// MLPs, routed and shared experts); takes precedence over `weights`. The LM head, MoE
    /// router, embeddings and MLA's absorbed per-head products stay unquantised.
    pub quant: Option<Quant>,
    /// Format of the routed experts' weights where it differs from `quant` (a checkpoint that
    /// quantises its experts apart, `--moe-quant`): `quant` when absent.
    pub moe_quant: Option<Quant>,
    /// Whether `quant` also covers the attention projections (true by default). Many
    /// checkpoints quantise only the experts (gpt-oss MXFP4, Kimi-K2.5 INT4, NVIDIA's NVFP4
    /// DeepSeek/Qwen3/MiniMax exports keep attention in BF16).
    pub quant_attention: bool,
    /// KV-cache element type when it differs from `dtype` (an FP8 cache): cache writes and the
    /// attention of passes that read a cache (`past > 0`) use it.
    pub kv_dtype: Option<DType>,
    /// Attention data parallelism (serving): this GPU runs attention for its own `batch`
    /// sequences, attention weights split over `tp`, while the MoE sees the tokens of all
    /// `attention_dp` ranks (an all-gather before and a reduce-scatter after it, or an
    /// all-to-all dispatch and combine under expert parallelism). Dense MLPs stay with the
    /// attention (own tokens, split over `tp`). GPUs of a replica: tp × attention_dp =
    /// moe_tp × ep (AIConfigurator's tp_size, attention_dp_size, moe_tp_size, moe_ep_size).
    pub attention_dp: u64,
    /// Expert tensor parallelism: each expert's width split over this many GPUs. `None`: `tp`
    /// when `attention_dp` is 1, else tp × attention_dp / ep. Setting it (or attention_dp > 1)
    /// selects the serving layout above, where `ep` counts GPUs of the same replica; otherwise
    /// `ep` keeps the training meaning (expert parallelism carved out of data-parallel ranks,
    /// each bringing its own tokens).
    pub moe_tp: Option<u64>,
    /// Only the ops that grow with the context each query sees ([`Role::sees_context`]:
    /// attention, the gated delta rule, the sparse indexer's scores and pick), in the order
    /// and with the repeats the whole graph gives them. The serving grids price attention
    /// over hundreds of batch and context sizes and need nothing else of those graphs.
    pub context_only: bool,
}

impl BuildOptions {
    pub fn new(batch: u64, seq: u64, mode: Mode, dtype: DType) -> BuildOptions {
        BuildOptions {
            batch,
            seq,
            past: 0,
            mode,
            dtype,
            attention: AttentionImpl::Auto,
            head: Head::Auto,
            optimizer: OptimizerKind::Adam,
            tp: 1,
            weights: None,
            merged_projections: false,
            cp: 1,
            ep: 1,
            sequence_parallel: false,
            quant: None,
            moe_quant: None,
            quant_attention: true,
            kv_dtype: None,
            attention_dp: 1,
            moe_tp: None,
            context_only: false,
        }
    }

    /// A served checkpoint's weight formats: `quant` for the layers, `moe_quant` for the routed
    /// experts where it differs. An expert-only format (weight-only checkpoints: gpt-oss,
    /// Kimi-K2.5) covers the rest of the MLPs too but leaves the attention projections in 16
    /// bits, as does `quant_attention` off.
    pub fn serve_formats(&mut self, quant: Option<Quant>, moe_quant: Option<Quant>, quant_attention: bool) {
        self.quant = quant.or(moe_quant);
        self.moe_quant = moe_quant;
        self.quant_attention = quant_attention && quant.is_some();
    }
}

/// Emits nodes for one scope (prologue, layer, epilogue) with a fixed repeat count.
struct Emitter<'a> {
    graph: &'a mut Graph,
    prefix: String,
    repeat: u64,
    /// The scope's place in the model, given to every node it emits.
    role: Role,
    /// [`BuildOptions::context_only`]: every other op is dropped unnamed.
    context_only: bool,
}

impl Emitter<'_> {
    /// A scope inside this one: names prefixed by `sub` too, each op run `times` times as
    /// often, with `role`.
    fn scope(&mut self, sub: &str, times: u64, role: Role) -> Emitter<'_> {
        Emitter { graph: &mut *self.graph, prefix: format!("{}{sub}", self.prefix), repeat: self.repeat * times, role, context_only: self.context_only }
    }

    fn op(&mut self, name: &str, op: Op) {
        self.op_in(self.role, name, op);
    }

    /// An op of this scope that later passes treat apart from its neighbours ([`Role`]).
    fn op_in(&mut self, role: Role, name: &str, op: Op) {
        if self.context_only && !role.sees_context(&op) {
            return;
        }
        let mut full = String::with_capacity(self.prefix.len() + name.len());
        full.push_str(&self.prefix);
        full.push_str(name);
        self.graph.push_in(role, full, op, Phase::Forward, self.repeat);
    }
}

/// One GPU's share of the model's widths under tensor parallelism (all equal to the full
/// widths when `tp = 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub tp: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub ffn: u64,
    pub vocab: u64,
}

impl Shard {
    /// Splits `spec` over `tp` GPUs the way Megatron-style serving engines do, or says why it
    /// cannot: query heads and MLP columns must divide evenly; KV heads either divide evenly
    /// or, when there are fewer of them than GPUs, are replicated (each GPU keeps one).
    pub fn new(spec: &TransformerSpec, tp: u64) -> Result<Shard, WorkloadError> {
        let tp = dim("tensor-parallel degree", tp)?;
        let err = |what: &str, n: u64| {
            Err(WorkloadError::Invalid(format!("tensor parallelism {tp} does not divide the model's {n} {what}")))
        };
        if !spec.heads.is_multiple_of(tp) {
            return err("attention heads", spec.heads);
        }
        let kv_heads = if spec.kv_heads.is_multiple_of(tp) {
            spec.kv_heads / tp
        } else if tp.is_multiple_of(spec.kv_heads) {
            1
        } else {
            return err("key/value heads", spec.kv_heads);
        };
        if !spec.ffn.is_multiple_of(tp) {
            return err("MLP columns (intermediate_size)", spec.ffn);
        }
        if let Some(l) = &spec.linear_attention {
            if !l.k_heads.is_multiple_of(tp) {
                return err("linear-attention key heads (linear_num_key_heads)", l.k_heads);
            }
        }
        Ok(Shard { tp, heads: spec.heads / tp, kv_heads, ffn: spec.ffn / tp, vocab: spec.vocab.div_ceil(tp) })
    }
}

/// How the MoE part of a layer is spread (see [`BuildOptions::attention_dp`] and
/// [`BuildOptions::moe_tp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MoeLayout {
    attention_dp: u64,
    moe_tp: u64,
    ep: u64,
    /// The serving layout (tp × attention_dp = moe_tp × ep); false: the training meaning of `ep`.
    serving: bool,
}

impl MoeLayout {
    fn gpus(&self, tp: u64) -> u64 {
        tp * self.attention_dp
    }
}

/// Checks `o`'s parallel layout against `spec` without building: heads and MLP columns over
/// `tp`, and for the serving layout tp × attention_dp = moe_tp × ep, experts over `ep` and the
/// expert width over `moe_tp` (see [`BuildOptions::attention_dp`]). One line saying what does
/// not fit.
pub fn check_layout(spec: &TransformerSpec, o: &BuildOptions) -> Result<(), WorkloadError> {
    Shard::new(spec, o.tp)?;
    moe_layout(spec, o).map(|_| ())
}

fn moe_layout(spec: &TransformerSpec, o: &BuildOptions) -> Result<MoeLayout, WorkloadError> {
    let tp = dim("tensor-parallel degree", o.tp)?;
    let adp = dim("attention data-parallel degree", o.attention_dp)?;
    let ep = dim("expert-parallel degree", o.ep)?;
    if let Some(m) = o.moe_tp {
        dim("MoE tensor-parallel degree", m)?;
    }
    if adp == 1 && o.moe_tp.is_none() {
        check_expert_parallel(spec, ep)?;
        return Ok(MoeLayout { attention_dp: 1, moe_tp: tp, ep, serving: false });
    }
    let invalid = |m: String| Err(WorkloadError::Invalid(m));
    let gpus = tp.checked_mul(adp).ok_or_else(|| WorkloadError::Invalid("tp × attention_dp overflows".into()))?;
    let moe_tp = match o.moe_tp {
        Some(m) => m,
        None if gpus.is_multiple_of(ep) => gpus / ep,
        None => return invalid(format!("expert parallelism {ep} does not divide the {gpus} GPUs of tp {tp} × attention_dp {adp}")),
    };
    if moe_tp.checked_mul(ep) != Some(gpus) {
        return invalid(format!(
            "parallel layout mismatch: tp {tp} × attention_dp {adp} = {gpus} GPUs but moe_tp {moe_tp} × ep {ep} = {}; both must cover the same GPUs",
            moe_tp.saturating_mul(ep)
        ));
    }
    match spec.moe {
        None if ep > 1 => return invalid(format!("expert parallelism {ep} needs a mixture-of-experts model; {} has no experts", spec.name)),
        Some(m) if !m.experts.is_multiple_of(ep) => return invalid(format!("expert parallelism {ep} does not divide the model's {} experts", m.experts)),
        Some(_) if !spec.ffn.is_multiple_of(moe_tp) => {
            return invalid(format!("MoE tensor parallelism {moe_tp} does not divide the expert width {} (moe_intermediate_size)", spec.ffn))
        }
        _ => {}
    }
    Ok(MoeLayout { attention_dp: adp, moe_tp, ep, serving: true })
}

/// What differs between the layers of one scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LayerKind {
    /// A dense MLP of this full width instead of the MoE block (DeepSeek's first layers).
    dense_ffn: Option<u64>,
    /// Sliding-window attention over at most this many keys (only when shorter than the context).
    window: Option<u64>,
    /// Gated DeltaNet linear attention instead of attention.
    linear: bool,
}

/// The layers grouped into scopes of identical shape: (name prefix, layer count, kind). One
/// `layer.` scope for uniform models, as before; dense-MLP layers of an MoE model go to
/// `dense_layer.` (taken to be the first ones), sliding-window layers whose window is shorter
/// than `kv_len` to `swa_layer.` / `dense_swa_layer.`.
fn layer_groups(spec: &TransformerSpec, kv_len: u64) -> Vec<(&'static str, u64, LayerKind)> {
    let dense = match spec.moe {
        Some(m) => m.dense_layers.min(spec.layers),
        None => 0,
    };
    let window = spec.sliding_window.as_ref().filter(|w| w.window < kv_len);
    let linear = |i: u64| spec.linear_attention.as_ref().is_some_and(|l| l.layers.get(i as usize).copied().unwrap_or(false));
    // [dense][full, sliding, linear]
    let mut counts = [[0u64; 3]; 2];
    for i in 0..spec.layers {
        let is_dense = i < dense;
        let sliding = window.is_some_and(|w| w.layers.get(i as usize).copied().unwrap_or(false));
        let kind = if linear(i) { 2 } else { usize::from(sliding) };
        counts[usize::from(is_dense)][kind] += 1;
    }
    let dense_ffn = spec.moe.map(|m| m.dense_ffn);
    let w = window.map(|w| w.window);
    let all = [
        ("dense_layer.", counts[1][0], LayerKind { dense_ffn, window: None, linear: false }),
        ("dense_swa_layer.", counts[1][1], LayerKind { dense_ffn, window: w, linear: false }),
        ("layer.", counts[0][0], LayerKind { dense_ffn: None, window: None, linear: false }),
        ("swa_layer.", counts[0][1], LayerKind { dense_ffn: None, window: w, linear: false }),
        ("dense_linear_layer.", counts[1][2], LayerKind { dense_ffn, window: None, linear: true }),
        ("linear_layer.", counts[0][2], LayerKind { dense_ffn: None, window: None, linear: true }),
    ];
    all.into_iter().filter(|g| g.1 > 0).collect()
}

struct Ctx<'a> {
    spec: &'a TransformerSpec,
    o: &'a BuildOptions,
    tokens: u64,
    /// Tokens the norms, dropouts and residual adds of a layer see on this GPU: all of them,
    /// or tokens/tp under sequence parallelism.
    local_tokens: u64,
    kv_len: u64,
    fused: bool,
    train: bool,
    shard: Shard,
    layout: MoeLayout,
}

impl Ctx<'_> {
    fn dt(&self) -> DType {
        self.o.dtype
    }
    /// A linear layer of a transformer layer: quantised with `quant`, or stored in `weights`.
    fn linear(&self, rows: u64, k: u64, n: u64, bias: bool) -> Result<Op, WorkloadError> {
        let mut g = Gemm::linear(rows, k, n, bias, self.dt())?;
        match self.o.quant {
            Some(q) => g.quant = Some(q),
            None => g.weight_dtype = self.o.weights.filter(|w| *w != self.dt()),
        }
        Ok(Op::Gemm(g))
    }
    /// An attention projection: like [`Ctx::linear`] unless `quant_attention` is off.
    fn linear_attn(&self, rows: u64, k: u64, n: u64, bias: bool) -> Result<Op, WorkloadError> {
        if self.o.quant_attention {
            self.linear(rows, k, n, bias)
        } else {
            self.linear_head(rows, k, n, bias)
        }
    }
    /// A linear layer outside the transformer layers (BERT's heads): `weights`, never `quant`.
    fn linear_head(&self, rows: u64, k: u64, n: u64, bias: bool) -> Result<Op, WorkloadError> {
        let mut g = Gemm::linear(rows, k, n, bias, self.dt())?;
        g.weight_dtype = self.o.weights.filter(|w| *w != self.dt());
        Ok(Op::Gemm(g))
    }
    /// A linear layer whose weight stays in the activation dtype (LM head, router).
    fn linear_unquantised(&self, rows: u64, k: u64, n: u64, bias: bool) -> Result<Op, WorkloadError> {
        Ok(Op::Gemm(Gemm::linear(rows, k, n, bias, self.dt())?))
    }
    /// Element type of the KV cache and of attention that reads it.
    fn kv_dt(&self) -> DType {
        match self.o.kv_dtype {
            Some(k) if self.o.past > 0 => k,
            _ => self.dt(),
        }
    }
    /// The collective that joins the tensor-parallel shards of `elements` activations; nothing
    /// on a single GPU.
    fn collective(&self, e: &mut Emitter, name: &str, kind: CommKind, elements: u64) {
        self.collective_in(e, name, kind, elements, self.shard.tp, false);
    }
    /// A collective of `elements` activations over a group of `group` GPUs; nothing when alone.
    fn collective_in(&self, e: &mut Emitter, name: &str, kind: CommKind, elements: u64, group: u64, overlappable: bool) {
        if let Some(comm) = self.comm(kind, elements, group, overlappable) {
            e.op(name, Op::Comm(comm));
        }
    }
    /// A training MoE all-to-all over `group` GPUs: `tokens` tokens of `hidden` elements, each
    /// sent to its `top_k` experts by a dispatcher that sends a token once per remote node
    /// (Megatron-Core's DeepEP and HybridEP backends, DeepEP's normal kernels). Serving's
    /// all-to-alls stay one copy per expert: decode runs DeepEP's low-latency kernels, which
    /// send each copy straight to its expert, and vLLM's default backend gathers every token.
    fn expert_all_to_all(&self, e: &mut Emitter, name: &str, tokens: u64, top_k: u64, group: u64) {
        if let Some(comm) = self.comm(CommKind::AllToAll, tokens * top_k * self.spec.hidden, group, false) {
            e.op(name, Op::Comm(Comm { fanout: top_k.min(u64::from(u32::MAX)) as u32, ..comm }));
        }
    }
    fn comm(&self, kind: CommKind, elements: u64, group: u64, overlappable: bool) -> Option<Comm> {
        let dtype = self.dt().vector_storage();
        (group > 1).then(|| Comm::new(kind, elements as f64 * dtype.size_bytes() as f64, group as u32, dtype, overlappable))
    }
    fn sequence_parallel(&self) -> bool {
        self.o.sequence_parallel && self.shard.tp > 1
    }
    /// Before a column-parallel block: under sequence parallelism the token shards are gathered.
    fn gather_sequence(&self, e: &mut Emitter, name: &str) {
        if self.sequence_parallel() {
            self.collective(e, name, CommKind::AllGather, self.tokens * self.spec.hidden);
        }
    }
    /// After a row-parallel block: partial sums are added (all-reduce), or added and scattered
    /// back to token shards under sequence parallelism.
    fn join_partial_sums(&self, e: &mut Emitter, name: &str) {
        let kind = if self.sequence_parallel() { CommKind::ReduceScatter } else { CommKind::AllReduce };
        self.collective(e, name, kind, self.tokens * self.spec.hidden);
    }
    fn ew(&self, kind: EwKind, elements: u64, inputs: u32) -> Op {
        Op::Elementwise(Elementwise::new(kind, elements, inputs, self.dt()))
    }
    fn norm(&self, rows: u64, cols: u64) -> Op {
        Op::Norm(Norm::new(self.spec.norm, rows, cols, self.dt()))
    }
    fn dropout(&self, e: &mut Emitter, name: &str, elements: u64) {
        if self.train && self.spec.arch != Arch::Llama {
            e.op(name, self.ew(EwKind::Dropout, elements, 1));
        }
    }
}

/// `Ok` if a context of `kv_len` tokens has positions in `spec`: a model with learned position
/// embeddings has none past its table (rotary models run past their context, with a note).
pub fn check_positions(spec: &TransformerSpec, kv_len: u64) -> Result<(), WorkloadError> {
    if spec.arch != Arch::Llama && kv_len > spec.max_positions {
        return Err(WorkloadError::Invalid(format!("sequence length {kv_len} exceeds the model's {} learned positions", spec.max_positions)));
    }
    Ok(())
}

/// Nodes a forward pass's graph is given room for at once (DeepSeek-V3's has 46).
const NODES_PER_PASS: usize = 64;

/// Builds the graph for `spec` under `o`.
pub fn build(spec: &TransformerSpec, o: &BuildOptions) -> Result<Graph, WorkloadError> {
    if spec.encdec.is_some() {
        return crate::encdec::build(spec, o);
    }
    dim("batch", o.batch)?;
    dim("sequence length", o.seq)?;
    let kv_len = o.past.checked_add(o.seq).ok_or_else(|| WorkloadError::Invalid("context length overflows".into()))?;
    check_positions(spec, kv_len)?;
    let tokens = checked_mul("tokens", &[o.batch, o.seq])?;
    // The largest intermediate: attention scores, and logits.
    checked_mul("attention scores", &[o.batch, spec.heads, o.seq, kv_len, 8])?;
    checked_mul("logits", &[tokens, spec.vocab, 8])?;
    let fused = o.attention.fused_for(spec, o.dtype);
    let shard = Shard::new(spec, o.tp)?;
    dim("context-parallel degree", o.cp)?;
    let layout = moe_layout(spec, o)?;
    if layout.serving {
        // Tokens the MoE of this replica routes, checked here so the block can multiply freely.
        checked_mul("MoE tokens", &[tokens, layout.attention_dp, spec.hidden, spec.moe.map_or(1, |m| m.top_k)])?;
    }
    let local_tokens = if o.sequence_parallel && shard.tp > 1 { tokens.div_ceil(shard.tp) } else { tokens };
    let cx = Ctx { spec, o, tokens, local_tokens, kv_len, fused, train: o.mode == Mode::Training, shard, layout };
    let mut g = Graph::new(spec.name.clone());
    let context_only = o.context_only;
    // Room for a pass's nodes (a few dozen): the serving grids build hundreds of these graphs
    // (a context-only pass has a node or two per layer scope and grows as it needs).
    if !context_only {
        g.nodes.reserve(NODES_PER_PASS);
    }
    // Embeddings and the head see no context: skipped whole when only that is asked for.
    if !context_only {
        embeddings(&cx, &mut Emitter { graph: &mut g, prefix: "embed.".into(), repeat: 1, role: Role::Prologue, context_only })?;
    }
    for (prefix, repeat, kind) in layer_groups(spec, kv_len) {
        layer(&cx, &mut Emitter { graph: &mut g, prefix: prefix.into(), repeat, role: Role::Layer, context_only }, kind)?;
    }
    if !context_only {
        epilogue(&cx, &mut Emitter { graph: &mut g, prefix: "head.".into(), repeat: 1, role: Role::Head, context_only })?;
    }
    if cx.train {
        g.add_backward();
        g.add_grad_clip();
        g.add_optimizer(o.optimizer);
    }
    Ok(g)
}

/// Expert parallelism needs experts to split evenly over the group, and experts to split.
pub(crate) fn check_expert_parallel(spec: &TransformerSpec, ep: u64) -> Result<(), WorkloadError> {
    let ep = dim("expert-parallel degree", ep)?;
    match spec.moe {
        _ if ep == 1 => Ok(()),
        None => Err(WorkloadError::Invalid(format!("expert parallelism {ep} needs a mixture-of-experts model; {} has no experts", spec.name))),
        Some(m) if !m.experts.is_multiple_of(ep) => Err(WorkloadError::Invalid(format!("expert parallelism {ep} does not divide the model's {} experts", m.experts))),
        Some(_) => Ok(()),
    }
}

fn embeddings(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, h) = (cx.tokens, s.hidden);
    e.op("tokens", Op::Embedding(Embedding { tokens: t, hidden: h, vocab: cx.shard.vocab, dtype: cx.dt() }));
    // Vocab-parallel lookup: each GPU fills the rows it owns, the sum restores the rest.
    cx.collective(e, "tokens_all_reduce", CommKind::AllReduce, t * h);
    if s.learned_positions {
        let rows = s.max_positions + s.position_offset;
        e.op("positions", Op::Embedding(Embedding { tokens: t, hidden: h, vocab: rows, dtype: cx.dt() }));
        e.op("add_positions", cx.ew(EwKind::Add, t * h, 2));
    }
    if s.type_vocab > 0 {
        e.op("token_types", Op::Embedding(Embedding { tokens: t, hidden: h, vocab: s.type_vocab, dtype: cx.dt() }));
        e.op("add_token_types", cx.ew(EwKind::Add, t * h, 2));
    }
    if s.arch == Arch::Bert {
        e.op("norm", cx.norm(t, h));
    }
    cx.dropout(e, "dropout", t * h);
    Ok(())
}

fn layer(cx: &Ctx, e: &mut Emitter, kind: LayerKind) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, h) = (cx.local_tokens, s.hidden);
    let pre_norm = s.arch != Arch::Bert;
    if pre_norm {
        e.op("attn_norm", cx.norm(t, h));
    }
    match (s.mla, &s.linear_attention) {
        (_, Some(l)) if kind.linear => gated_deltanet_block(cx, e, l)?,
        (Some(m), _) => mla_attention_block(cx, e, m, kind.window)?,
        (None, _) => attention_block(cx, e, kind.window)?,
    }
    cx.dropout(e, "attn_dropout", t * h);
    e.op("attn_residual", cx.ew(EwKind::Add, t * h, 2));
    if !pre_norm {
        e.op("attn_norm", cx.norm(t, h));
    }
    if pre_norm {
        e.op("mlp_norm", cx.norm(t, h));
    }
    match kind.dense_ffn {
        // The MLPs and experts see no context.
        _ if cx.o.context_only => {}
        Some(f) => mlp_block(cx, e, f)?,
        None if s.moe.is_some() => moe_block(cx, e)?,
        None => mlp_block(cx, e, s.ffn)?,
    }
    cx.dropout(e, "mlp_dropout", t * h);
    e.op("mlp_residual", cx.ew(EwKind::Add, t * h, 2));
    if !pre_norm {
        e.op("mlp_norm", cx.norm(t, h));
    }
    Ok(())
}

fn attention_block(cx: &Ctx, e: &mut Emitter, window: Option<u64>) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (b, t, h) = (cx.o.batch, cx.tokens, s.hidden);
    let (heads, kv_heads) = (cx.shard.heads, cx.shard.kv_heads);
    let q_dim = heads * s.head_dim;
    let kv_dim = kv_heads * s.head_dim;
    cx.gather_sequence(e, "attn_all_gather");
    // An output gate is projected with the queries (as wide as them).
    let q_proj = if s.attn_output_gate { 2 * q_dim } else { q_dim };
    if s.arch == Arch::Gpt2 || cx.o.merged_projections {
        e.op("qkv", cx.linear_attn(t, h, q_proj + 2 * kv_dim, s.qkv_bias)?);
    } else {
        e.op("q", cx.linear_attn(t, h, q_proj, s.qkv_bias)?);
        e.op("k", cx.linear_attn(t, h, kv_dim, s.qkv_bias)?);
        e.op("v", cx.linear_attn(t, h, kv_dim, s.qkv_bias)?);
    }
    if s.qk_norm {
        e.op("q_norm", Op::Norm(Norm::new(NormKind::RmsNorm, t * heads, s.head_dim, cx.dt())));
        e.op("k_norm", Op::Norm(Norm::new(NormKind::RmsNorm, t * kv_heads, s.head_dim, cx.dt())));
    }
    // Partial rotary (Qwen3.5) rotates rotary_dim of each head's head_dim elements.
    let (q_rot, kv_rot) = match s.rotary_dim {
        Some(r) => (heads * r, kv_heads * r),
        None => (q_dim, kv_dim),
    };
    if !s.learned_positions && cx.o.merged_projections {
        e.op("rotary_qk", cx.ew(EwKind::Rotary, t * (q_rot + kv_rot), 1));
    } else if !s.learned_positions {
        e.op("rotary_q", cx.ew(EwKind::Rotary, t * q_rot, 1));
        e.op("rotary_k", cx.ew(EwKind::Rotary, t * kv_rot, 1));
    }
    if cx.o.past > 0 {
        // Appending this step's keys and values to the cache.
        e.op("kv_cache_write", Op::MemCopy(MemCopy::copy(2 * t * kv_dim, cx.kv_dt())));
    }
    // Ring attention: every GPU sees every other shard's keys and values once, while computing.
    cx.collective_in(e, "cp_kv_exchange", CommKind::AllGather, 2 * t * kv_dim * cx.o.cp, cx.o.cp, true);
    let mut core = e.scope("", cx.o.cp, e.role);
    let e_core = &mut core;
    // Sliding-window layers run the fused kernel (eager kernels have no window).
    if cx.fused || window.is_some() {
        e_core.op(
            "attention",
            Op::Attention(Attention {
                batch: b,
                heads,
                kv_heads,
                q_len: cx.o.seq,
                kv_len: cx.kv_len,
                head_dim: s.head_dim,
                causal: s.causal,
                dtype: cx.kv_dt(),
                backward: false,
                v_head_dim: None,
                shared_kv: false,
                window,
            }),
        );
    } else {
        eager_attention(cx, e_core)?;
        e.op("context_contiguous", Op::MemCopy(MemCopy::copy(t * heads * s.head_dim, cx.dt())));
    }
    if s.attn_output_gate {
        // output · sigmoid(gate), one element-wise pass over both.
        e.op("output_gate", cx.ew(EwKind::SiluMul, t * q_dim, 2));
    }
    e.op("out_proj", cx.linear_attn(t, q_dim, h, s.out_bias)?);
    // Row-parallel output projection: partial sums from every GPU are added.
    cx.join_partial_sums(e, if cx.sequence_parallel() { "attn_reduce_scatter" } else { "attn_all_reduce" });
    Ok(())
}

/// A Gated DeltaNet mixer, one GPU's share (linear heads split over `tp`): the q/k/v/z and
/// β/decay projections, the causal conv1d with its SiLU over q, k and v (one pass, as the
/// engines' fused kernel runs it; its few taps of conv state per sequence are left out), the
/// gated delta rule ([`GatedDelta`]: chunked over a prompt, recurrent in decode), the gated
/// RMSNorm (norm per value head, then · SiLU(z)) and the output projection.
fn gated_deltanet_block(cx: &Ctx, e: &mut Emitter, l: &LinearAttention) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, h, tp) = (cx.tokens, s.hidden, cx.shard.tp);
    let (k_heads, v_heads) = (l.k_heads / tp, l.v_heads / tp);
    let (qk, v) = (l.qk_width() / tp, l.v_width() / tp);
    cx.gather_sequence(e, "attn_all_gather");
    e.op("in_proj_qkvz", cx.linear_attn(t, h, qk + 2 * v, false)?);
    e.op("in_proj_ba", cx.linear_attn(t, h, 2 * v_heads, false)?);
    e.op("conv1d", cx.ew(EwKind::Silu, t * (qk + v), 1));
    let delta = GatedDelta {
        batch: cx.o.batch,
        seq: cx.o.seq,
        with_state: cx.o.past > 0,
        k_heads,
        v_heads,
        head_k_dim: l.head_k_dim,
        head_v_dim: l.head_v_dim,
        dtype: cx.dt(),
        state_dtype: l.state_dtype,
    };
    e.op("gated_delta", Op::GatedDelta(delta));
    e.op("gated_norm", Op::Norm(Norm::new(NormKind::RmsNorm, t * v_heads, l.head_v_dim, cx.dt())));
    e.op("norm_gate", cx.ew(EwKind::SiluMul, t * v, 2));
    e.op("out_proj", cx.linear_attn(t, v, h, false)?);
    cx.join_partial_sums(e, if cx.sequence_parallel() { "attn_reduce_scatter" } else { "attn_all_reduce" });
    Ok(())
}

/// DSA's lightning indexer, whole on every tensor-parallel GPU (its heads are not split, as
/// MLA's latent projections are not): its queries from the query bottleneck (the hidden state
/// without one), one key per token (LayerNorm, rotary on its rope part, cached in FP8), a
/// weight per head; then every query's scores against the tokens it sees (a batched product,
/// in the cache's format) and the pick of the top-k from them.
fn sparse_indexer(cx: &Ctx, e: &mut Emitter, m: Mla, ix: SparseIndexer) -> Result<(), WorkloadError> {
    let (b, t, h) = (cx.o.batch, cx.tokens, cx.spec.hidden);
    e.op("indexer_q", cx.linear_attn(t, m.q_lora_rank.unwrap_or(h), ix.heads * ix.head_dim, false)?);
    e.op("indexer_k", cx.linear_attn(t, h, ix.head_dim, false)?);
    e.op("indexer_k_norm", Op::Norm(Norm::new(NormKind::LayerNorm, t, ix.head_dim, cx.dt())));
    e.op("indexer_weights", cx.linear_attn(t, h, ix.heads, false)?);
    e.op("indexer_rotary", cx.ew(EwKind::Rotary, t * (ix.heads + 1) * m.qk_rope_head_dim, 1));
    if cx.o.past > 0 {
        e.op("indexer_cache_write", Op::MemCopy(MemCopy::copy(t * ix.cache_bytes(), DType::Fp8)));
    }
    // Causal: a prompt's query i scores the tokens before it and itself only, on average
    // the cached ones and half the prompt. The kernel sums the heads' scores before writing
    // them: one score per query and token leaves it. As a product, decode (one query) is its
    // heads against the cached keys; a prompt is its queries against the keys with the heads
    // folded into the reduction (the same FLOPs; writing every head's scores would count
    // `heads` times the bytes it writes, while reading the keys per head adds little beside
    // a prompt's FLOPs).
    let keys = cx.kv_len.saturating_sub(cx.o.seq / 2).max(1);
    let scores = if cx.o.seq == 1 { Gemm::bmm(b, ix.heads, ix.head_dim, keys, cx.kv_dt())? } else { Gemm::bmm(b, cx.o.seq, ix.heads * ix.head_dim, keys, cx.kv_dt())? };
    e.op_in(Role::OverContext, "indexer_scores", Op::Gemm(scores));
    let score_count = checked_mul("indexer scores", &[b, cx.o.seq, keys])?;
    let picked = checked_mul("indexer picks", &[b, cx.o.seq, ix.topk.min(cx.kv_len)])?;
    e.op_in(Role::OverContext, "indexer_topk", Op::Reduction(Reduction { elements_in: score_count, elements_out: picked, dtype: DType::Fp32 }));
    Ok(())
}

/// Multi-head latent attention, one GPU's share (heads/tp; the latent projections and cache
/// are replicated on every tensor-parallel GPU).
///
/// Prefill and chunks (`seq > 1` or nothing cached): queries through q_a → norm → q_b (or one
/// q projection); the latent kv_a → norm; kv_b expands the latent of every context token into
/// per-head keys (nope part) and values; then ordinary attention with query/key width
/// nope + rope and value width v.
///
/// Decode (`seq == 1` with a cache): weight absorption, as DeepSeek's and SGLang's/vLLM's MLA
/// decode kernels run it: q_nope · W_uk per head (a batched product), then multi-query
/// attention of all heads over the one shared latent cache (head width kv_lora + rope, values
/// its first kv_lora elements, read once), then · W_uv per head, then o_proj.
fn mla_attention_block(cx: &Ctx, e: &mut Emitter, m: Mla, window: Option<u64>) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (b, t, h) = (cx.o.batch, cx.tokens, s.hidden);
    let heads = cx.shard.heads;
    let qk = m.qk_head_dim();
    let latent = m.cache_width();
    cx.gather_sequence(e, "attn_all_gather");
    match m.q_lora_rank {
        Some(r) if cx.o.merged_projections => e.op("q_kv_a", cx.linear_attn(t, h, r + latent, s.qkv_bias)?),
        Some(r) => {
            e.op("q_a", cx.linear_attn(t, h, r, s.qkv_bias)?);
            e.op("kv_a", cx.linear_attn(t, h, latent, s.qkv_bias)?);
        }
        None => {
            e.op("q", cx.linear_attn(t, h, heads * qk, s.qkv_bias)?);
            e.op("kv_a", cx.linear_attn(t, h, latent, s.qkv_bias)?);
        }
    }
    if let Some(r) = m.q_lora_rank {
        e.op("q_a_norm", Op::Norm(Norm::new(NormKind::RmsNorm, t, r, cx.dt())));
        e.op("q_b", cx.linear_attn(t, r, heads * qk, false)?);
    }
    e.op("kv_a_norm", Op::Norm(Norm::new(NormKind::RmsNorm, t, m.kv_lora_rank, cx.dt())));
    // Rotary on every head's rope part and on the one shared rope key.
    e.op("rotary_qk", cx.ew(EwKind::Rotary, t * (heads + 1) * m.qk_rope_head_dim, 1));
    if cx.o.past > 0 {
        e.op("kv_cache_write", Op::MemCopy(MemCopy::copy(t * latent, cx.kv_dt())));
    }
    cx.collective_in(e, "cp_kv_exchange", CommKind::AllGather, t * latent * cx.o.cp, cx.o.cp, true);
    // Sparse attention reads at most the indexer's top-k tokens per query: the FLOPs and
    // bytes of a window of that many keys.
    let window = [window, m.indexer.map(|ix| ix.topk)].into_iter().flatten().min();
    if let Some(ix) = m.indexer {
        sparse_indexer(cx, e, m, ix)?;
    }
    let absorbed = cx.o.seq == 1 && cx.o.past > 0;
    if absorbed {
        e.op("q_absorb", Op::Gemm(Gemm::bmm(heads, t, m.qk_nope_head_dim, m.kv_lora_rank, cx.dt())?));
    } else {
        // Keys' nope part and values for every context token of every sequence.
        let kv_tokens = checked_mul("MLA context tokens", &[b, cx.kv_len])?;
        e.op("kv_b", cx.linear_attn(kv_tokens, m.kv_lora_rank, heads * (m.qk_nope_head_dim + m.v_head_dim), false)?);
    }
    let attention = if absorbed {
        Attention {
            batch: b,
            heads,
            kv_heads: 1,
            q_len: 1,
            kv_len: cx.kv_len,
            head_dim: latent,
            causal: s.causal,
            dtype: cx.kv_dt(),
            backward: false,
            v_head_dim: Some(m.kv_lora_rank),
            shared_kv: true,
            window,
        }
    } else {
        Attention {
            batch: b,
            heads,
            kv_heads: heads,
            q_len: cx.o.seq,
            kv_len: cx.kv_len,
            head_dim: qk,
            causal: s.causal,
            dtype: cx.kv_dt(),
            backward: false,
            v_head_dim: Some(m.v_head_dim).filter(|&v| v != qk),
            shared_kv: false,
            window,
        }
    };
    // Always the fused kernel: MLA has no eager path in serving engines.
    let mut core = e.scope("", cx.o.cp, e.role);
    core.op("attention", Op::Attention(attention));
    if absorbed {
        e.op("v_up", Op::Gemm(Gemm::bmm(heads, t, m.kv_lora_rank, m.v_head_dim, cx.dt())?));
    }
    e.op("out_proj", cx.linear_attn(t, heads * m.v_head_dim, h, s.out_bias)?);
    cx.join_partial_sums(e, if cx.sequence_parallel() { "attn_reduce_scatter" } else { "attn_all_reduce" });
    Ok(())
}

fn eager_attention(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (b, t) = (cx.o.batch, cx.tokens);
    let bh = b * cx.shard.heads;
    let scores = bh * cx.o.seq * cx.kv_len;
    if s.arch == Arch::Opt {
        e.op("q_scale", cx.ew(EwKind::Mul, t * cx.shard.heads * s.head_dim, 1));
    }
    e.op("scores", Op::Gemm(Gemm::bmm(bh, cx.o.seq, s.head_dim, cx.kv_len, cx.dt())?));
    // A fused scale-mask-softmax reads the scores once and writes the probabilities once.
    if cx.o.attention != AttentionImpl::EagerFusedSoftmax {
        if s.arch != Arch::Opt {
            e.op("scale", cx.ew(EwKind::Div, scores, 1));
        }
        if s.arch == Arch::Gpt2 {
            e.op("causal_mask", cx.ew(EwKind::Where, scores, 2));
        } else {
            e.op("mask", cx.ew(EwKind::Add, scores, 2));
        }
    }
    e.op("softmax", Op::Softmax(Softmax::new(bh * cx.o.seq, cx.kv_len, cx.dt())));
    cx.dropout(e, "attn_probs_dropout", scores);
    e.op("context", Op::Gemm(Gemm::bmm(bh, cx.o.seq, cx.kv_len, s.head_dim, cx.dt())?));
    Ok(())
}

/// A dense MLP of full width `width`, split over the tensor-parallel GPUs.
fn mlp_block(cx: &Ctx, e: &mut Emitter, width: u64) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (t, h, f) = (cx.tokens, s.hidden, width.div_ceil(cx.shard.tp));
    cx.gather_sequence(e, "mlp_all_gather");
    match s.activation {
        Activation::SwiGlu => gate_up(cx, e, t, f)?,
        act => {
            e.op("fc1", cx.linear(t, h, f, s.mlp_bias)?);
            // The Python-written tanh chain is priced as one GELU kernel: the time of its
            // extra elementwise kernels is not counted (their saved tensors are, in memory).
            let kind = if act == Activation::Relu { EwKind::Relu } else { EwKind::Gelu };
            e.op("activation", cx.ew(kind, t * f, 1));
        }
    }
    e.op(if s.activation == Activation::SwiGlu { "down" } else { "fc2" }, cx.linear(t, f, h, s.mlp_bias)?);
    cx.join_partial_sums(e, if cx.sequence_parallel() { "mlp_reduce_scatter" } else { "mlp_all_reduce" });
    Ok(())
}

/// SwiGLU's gate and up projections of `rows` tokens to `f` columns each (merged into one GEMM
/// when asked), then the fused `silu(gate) * up`.
fn gate_up(cx: &Ctx, e: &mut Emitter, rows: u64, f: u64) -> Result<(), WorkloadError> {
    let (h, bias) = (cx.spec.hidden, cx.spec.mlp_bias);
    if cx.o.merged_projections {
        e.op("gate_up", cx.linear(rows, h, 2 * f, bias)?);
    } else {
        e.op("gate", cx.linear(rows, h, f, bias)?);
        e.op("up", cx.linear(rows, h, f, bias)?);
    }
    e.op("silu_mul", cx.ew(EwKind::SiluMul, rows * f, 2));
    Ok(())
}

/// The routed experts' SwiGLU MLPs, `active` of them on this GPU with `rows` tokens each, in an
/// `expert.` sub-scope; their linears in the experts' own format (`moe_quant`) where a
/// checkpoint quantises them apart from the rest of the layer.
fn routed_experts(cx: &Ctx, e: &mut Emitter, rows: u64, f: u64, active: u64, hosted: u64) -> Result<(), WorkloadError> {
    let o = BuildOptions { quant: cx.o.moe_quant.or(cx.o.quant), ..cx.o.clone() };
    let cx = Ctx { o: &o, ..*cx };
    let from = e.graph.nodes.len();
    let mut experts = e.scope("expert.", active, Role::Expert);
    gate_up(&cx, &mut experts, rows, f)?;
    experts.op("down", cx.linear(rows, f, cx.spec.hidden, cx.spec.mlp_bias)?);
    // The GPU's other experts wait in memory for tokens.
    e.graph.hold_idle(from, hosted.saturating_sub(active), active);
    Ok(())
}

/// Shared experts: one SwiGLU MLP of the shared width `width` (this GPU's share) over `rows`
/// tokens, in a `shared.` sub-scope.
fn shared_experts(cx: &Ctx, e: &mut Emitter, rows: u64, width: u64) -> Result<(), WorkloadError> {
    let mut sh = e.scope("shared.", 1, e.role);
    gate_up(cx, &mut sh, rows, width)?;
    sh.op("down", cx.linear(rows, width, cx.spec.hidden, cx.spec.mlp_bias)?);
    Ok(())
}

/// Mixture of experts under balanced routing: each expert processes tokens·top_k/experts rows.
///
/// Training with tensor parallelism folds the experts the way Megatron-Core does (MoE parallel
/// folding, with expert tensor parallelism 1 as the Megatron-Bridge MoE recipes set it): the
/// expert-parallel group spans the tensor-parallel ranks too, each GPU routes its own share of
/// the tokens and runs its experts at full width; only attention (and shared experts) are split
/// over `tp`. Otherwise every expert's MLP is split over the GPUs like a dense MLP.
fn moe_block(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    if cx.layout.serving {
        return moe_block_serving(cx, e);
    }
    let s = cx.spec;
    let moe = s.moe.expect("called for MoE models only");
    let folded = cx.train && cx.shard.tp > 1;
    let (t, h, f) = if folded { (cx.tokens.div_ceil(cx.shard.tp), s.hidden, s.ffn) } else { (cx.tokens, s.hidden, cx.shard.ffn) };
    if !folded {
        cx.gather_sequence(e, "moe_all_gather");
    }
    e.op("router", cx.linear_unquantised(t, h, moe.experts, false)?);
    e.op("router_softmax", Op::Softmax(Softmax::new(t, moe.experts, cx.dt())));
    let routed = checked_mul("routed tokens", &[t, moe.top_k])?;
    e.op_in(Role::Routing, "dispatch", Op::MemCopy(MemCopy::copy(routed * h, cx.dt())));
    // Under expert parallelism each GPU hosts experts/ep of them and, with balanced routing,
    // receives as many routed tokens as it sent.
    let ep = cx.o.ep;
    cx.expert_all_to_all(e, "ep_dispatch_all_to_all", t, moe.top_k, ep);
    let active = active_experts(t.saturating_mul(ep), moe.top_k, moe.experts).div_ceil(ep).max(1);
    let rows = routed.div_ceil(active);
    routed_experts(cx, e, rows, f, active, moe.experts.div_ceil(ep))?;
    cx.expert_all_to_all(e, "ep_combine_all_to_all", t, moe.top_k, ep);
    e.op_in(Role::Routing, "combine", cx.ew(EwKind::Mul, routed * h, 2));
    if folded && !cx.sequence_parallel() {
        // Without sequence parallelism every tensor-parallel rank needs every token's output.
        cx.collective(e, "moe_all_gather_out", CommKind::AllGather, cx.tokens * h);
    }
    if moe.shared_ffn > 0 {
        if folded {
            cx.gather_sequence(e, "shared_all_gather");
        }
        shared_experts(cx, e, cx.tokens, moe.shared_ffn.div_ceil(cx.shard.tp))?;
        if folded {
            cx.join_partial_sums(e, if cx.sequence_parallel() { "shared_reduce_scatter" } else { "shared_all_reduce" });
        }
    }
    if !folded {
        cx.join_partial_sums(e, if cx.sequence_parallel() { "moe_reduce_scatter" } else { "moe_all_reduce" });
    }
    Ok(())
}

/// The MoE block under the serving layout: `tokens` per attention rank, attention_dp ranks,
/// experts/ep experts per GPU of width ffn/moe_tp. Each GPU computes the routed rows of its
/// experts from all the replica's tokens: tokens · attention_dp · top_k / ep.
///
/// - attention_dp = 1: every GPU already holds all the tokens (attention TP replicates them);
///   each computes its experts' rows and one all-reduce over the tp GPUs sums the parts.
/// - attention_dp > 1, ep = 1: the ranks' tokens are all-gathered, every GPU runs its slice of
///   every expert, and a reduce-scatter returns each rank's sums.
/// - attention_dp > 1, ep > 1: routed tokens travel by all-to-all (dispatch and combine), plus
///   an all-reduce within the moe_tp group when experts are also split.
///
/// Shared experts run next to the routed ones: on the gathered tokens, split over the whole
/// replica, when they are all-gathered; otherwise on the rank's own tokens split over tp.
fn moe_block_serving(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let moe = s.moe.expect("called for MoE models only");
    let l = cx.layout;
    let (t, h) = (cx.tokens, s.hidden);
    let f = s.ffn / l.moe_tp;
    let gpus = l.gpus(cx.shard.tp);
    cx.gather_sequence(e, "moe_all_gather");
    e.op("router", cx.linear_unquantised(t, h, moe.experts, false)?);
    e.op("router_softmax", Op::Softmax(Softmax::new(t, moe.experts, cx.dt())));
    // Distinct tokens this replica routes, and the routed rows this GPU computes.
    let moe_tokens = t * l.attention_dp;
    let rows_here = (moe_tokens * moe.top_k).div_ceil(l.ep);
    let gathered = l.attention_dp > 1 && l.ep == 1;
    let all_to_all = l.attention_dp > 1 && l.ep > 1;
    if gathered {
        cx.collective_in(e, "moe_all_gather", CommKind::AllGather, moe_tokens * h, gpus, false);
    }
    if all_to_all {
        cx.collective_in(e, "ep_dispatch_all_to_all", CommKind::AllToAll, t * moe.top_k * h, gpus, false);
    }
    e.op_in(Role::Routing, "dispatch", Op::MemCopy(MemCopy::copy(rows_here * h, cx.dt())));
    let active = active_experts(moe_tokens, moe.top_k, moe.experts).div_ceil(l.ep).max(1);
    let rows = rows_here.div_ceil(active);
    routed_experts(cx, e, rows, f, active, moe.experts.div_ceil(l.ep))?;
    e.op_in(Role::Routing, "combine", cx.ew(EwKind::Mul, rows_here * h, 2));
    if all_to_all {
        cx.collective_in(e, "moe_tp_all_reduce", CommKind::AllReduce, rows_here * h, l.moe_tp, false);
        cx.collective_in(e, "ep_combine_all_to_all", CommKind::AllToAll, t * moe.top_k * h, gpus, false);
    }
    if moe.shared_ffn > 0 {
        if gathered {
            shared_experts(cx, e, moe_tokens, moe.shared_ffn.div_ceil(gpus))?;
        } else {
            shared_experts(cx, e, t, moe.shared_ffn.div_ceil(cx.shard.tp))?;
        }
    }
    if gathered {
        cx.collective_in(e, "moe_reduce_scatter", CommKind::ReduceScatter, moe_tokens * h, gpus, false);
    } else {
        cx.join_partial_sums(e, if cx.sequence_parallel() { "moe_reduce_scatter" } else { "moe_all_reduce" });
    }
    Ok(())
}

/// Experts that receive at least one token, rounded up. A decode step of a few sequences only
/// wakes the experts its tokens are routed to, and only their weights are read: with `tokens`
/// each choosing `top_k` distinct experts uniformly, the expected count is
/// E·(1 − (1 − k/E)^tokens). Rounding up keeps every expert once tokens·k ≥ E in practice
/// (8 tokens, top-2 of 8 → 7.2 → 8), so larger passes are unchanged.
pub fn active_experts(tokens: u64, top_k: u64, experts: u64) -> u64 {
    let (e, k) = (experts as f64, top_k.min(experts) as f64);
    let missed = (1.0 - k / e).powf(tokens as f64);
    let expected = e * (1.0 - missed);
    // A tiny epsilon stops 2.0000000001 from rounding up to 3.
    ((expected - 1e-9).ceil() as u64).clamp(top_k.min(experts), experts)
}

fn epilogue(cx: &Ctx, e: &mut Emitter) -> Result<(), WorkloadError> {
    let s = cx.spec;
    let (b, t, h) = (cx.o.batch, cx.tokens, s.hidden);
    if s.arch == Arch::Bert {
        e.op("pooler", cx.linear_head(b, h, h, true)?);
        e.op("pooler_tanh", cx.ew(EwKind::Tanh, b * h, 1));
        let head = match cx.o.head {
            Head::Auto if cx.train => Head::PreTraining,
            Head::Auto => Head::None,
            other => other,
        };
        match head {
            Head::Classification => {
                e.op("classifier", cx.linear_head(b, h, 2, true)?);
                if cx.train {
                    e.op("loss", Op::Softmax(Softmax::new(b, 2, cx.dt())));
                }
            }
            Head::PreTraining | Head::LmHead | Head::LastToken => {
                e.op("mlm_transform", cx.linear_head(t, h, h, true)?);
                e.op("mlm_gelu", cx.ew(EwKind::Gelu, t * h, 1));
                e.op("mlm_norm", cx.norm(t, h));
                e.op("mlm_decoder", tied(cx.linear_head(t, h, s.vocab, true)?));
                e.op("nsp", cx.linear_head(b, h, 2, true)?);
                if cx.train {
                    e.op("loss", Op::Softmax(Softmax::new(t, s.vocab, cx.dt())));
                }
            }
            Head::None | Head::Auto => {}
        }
        return Ok(());
    }
    e.op("final_norm", cx.norm(t, h));
    let rows = match cx.o.head {
        Head::None => return Ok(()),
        Head::LastToken => b,
        _ => t,
    };
    // Vocab-parallel LM head: each GPU scores its vocab/tp slice, then the logits are gathered.
    let lm = cx.linear_unquantised(rows, h, cx.shard.vocab, false)?;
    e.op("lm_head", if s.tied_embeddings { tied(lm) } else { lm });
    cx.collective(e, "logits_all_gather", CommKind::AllGather, checked_mul("logits", &[rows, s.vocab])?);
    if cx.train {
        e.op("loss", Op::Softmax(Softmax::new(rows, s.vocab, cx.dt())));
    }
    Ok(())
}

/// Marks a linear layer whose weight is the token-embedding table.
fn tied(op: Op) -> Op {
    match op {
        Op::Gemm(mut g) => {
            g.shared_weight = true;
            Op::Gemm(g)
        }
        other => other,
    }
}
