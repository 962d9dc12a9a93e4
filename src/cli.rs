//! Command-line interface definition.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "wavecast", version, about = "Predict deep-learning step times on any GPU, including ones you do not have")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Predict one workload on one GPU: per-class table and end-to-end time.
    Predict(PredictArgs),
    /// List the GPU catalog.
    Gpus(GpusArgs),
    /// List the built-in model presets.
    Models(JsonFlag),
    /// Measure predictor accuracy against measured data.
    #[command(subcommand)]
    Eval(EvalCommand),
    /// Fit a learned predictor on per-op measurements (`train` is its deprecated old name;
    /// predicting a training step is `predict --mode train`).
    #[cfg(feature = "train")]
    #[command(alias = "train")]
    Fit(FitArgs),
    /// Compare one LLM serving workload across GPUs and tensor-parallel degrees.
    Compare(CompareArgs),
    /// Simulate LLM serving under load (continuous batching, paged KV cache, aggregated or
    /// disaggregated): TTFT, TPOT, latency percentiles, tokens/s per GPU and per user.
    ServeSim(ServeSimArgs),
    /// Carry a PyTorch profiler trace recorded on one GPU to other GPUs (Habitat's method).
    Scale(ScaleArgs),
    /// Search parallel layouts and rank them.
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Serve a local web page with forms for predict, serve, serve-sim, compare and plan,
    /// answering with the same report pages as --html.
    #[cfg(feature = "ui")]
    Ui(UiArgs),
}

#[cfg(feature = "ui")]
#[derive(Args, Debug)]
pub struct UiArgs {
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 8765)]
    pub port: u16,
    /// Address to listen on; anything but a loopback address needs --allow-remote.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Accept connections from other machines (the page has no login).
    #[arg(long)]
    pub allow_remote: bool,
}

#[derive(Subcommand, Debug)]
pub enum PlanCommand {
    /// Rank training layouts (DP×TP×PP×CP×EP, ZeRO, micro-batch, recomputation) on N GPUs by
    /// step time among those that fit in memory.
    Train(PlanTrainArgs),
    /// Rank serving deployments on N GPUs (TP/EP/attention-DP workers, aggregated or
    /// disaggregated, over a sweep of concurrencies) by tokens/s per GPU within a TTFT/TPOT
    /// target; `--svg` draws the Pareto front.
    Serve(PlanServeArgs),
}

#[derive(Args, Debug)]
pub struct ServeSimArgs {
    #[command(flatten)]
    pub req: wavecast::ServeSimRequest,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(Args, Debug)]
pub struct PlanServeArgs {
    #[command(flatten)]
    pub req: wavecast::PlanServeRequest,
    /// Layouts to list.
    #[arg(long, default_value_t = wavecast::defaults::TOP)]
    pub top: usize,
    /// Write the Pareto chart (tokens/s/GPU against tokens/s/user) as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(Args, Debug)]
pub struct PlanTrainArgs {
    #[command(flatten)]
    pub req: wavecast::PlanTrainRequest,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(Args, Debug)]
pub struct JsonFlag {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct GpuFileArg {
    /// Extra GPU catalog file (TOML, same format as the built-in one); its entries override.
    #[arg(long, value_name = "FILE")]
    pub gpu_file: Option<PathBuf>,
}

/// The user's own prices, over the catalog's.
#[derive(Args, Debug, Clone, Default)]
pub struct PriceArg {
    /// Price per GPU-hour in USD instead of the catalog's: 2.5 for the GPU of the command, or
    /// GPU=USD (comma-separated or repeated: h100=2.5,l40s=0.9).
    #[arg(long, value_delimiter = ',', value_name = "[GPU=]USD")]
    pub price: Vec<String>,
}

/// `--ops-data DIR`: the measured tables the price ladder reads.
#[derive(Args, Debug, Clone, Default)]
pub struct OpsDataArg {
    /// Measured per-op tables (AIConfigurator, Vidur or PipeWeave layout, e.g.
    /// ../shared/data): a GPU's own measurements price its ops first, then a measured sibling's
    /// carried by a learned ratio, then physics (predictor `ladder`).
    #[arg(long, value_name = "DIR", env = "WAVECAST_OPS_DATA")]
    pub ops_data: Option<PathBuf>,
}

/// `--html FILE`, shared by every command whose answer is a report.
#[derive(Args, Debug, Clone, Default)]
pub struct HtmlArg {
    /// Also write the answer as one self-contained HTML page (inputs, tables, charts) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct GpusArgs {
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    /// Beside each datasheet figure, what the shipped modern-GPU kernel models assume the GPU
    /// sustains: TFLOP/s of a large GEMM per format, GB/s of a decode GEMV and KV read
    #[arg(long)]
    pub sustained: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeArg {
    /// Forward pass only (also `infer`, Python's spelling, and `inf`).
    #[value(aliases = ["infer", "inf"])]
    Inference,
    /// Forward, backward and optimizer step.
    #[value(alias = "training")]
    Train,
    /// LLM serving: prefill of the prompts, then decode steps against a KV cache.
    Serve,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionArg {
    Auto,
    Eager,
    Fused,
}


/// The name a flag value has in a library request (clap's own spelling of it).
fn value_name<T: ValueEnum>(v: T) -> String {
    v.to_possible_value().map(|p| p.get_name().to_string()).unwrap_or_default()
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Built-in model preset (see `wavecast models`).
    #[arg(long, conflicts_with_all = ["config", "onnx"], required_unless_present_any = ["config", "onnx"])]
    pub model: Option<String>,
    /// A Hugging Face config.json.
    #[arg(long, value_name = "FILE", conflicts_with = "onnx")]
    pub config: Option<PathBuf>,
    /// An ONNX model file: its graph is imported (shapes inferred for --batch and --seq).
    #[arg(long, value_name = "FILE")]
    pub onnx: Option<PathBuf>,
    /// Input image side for the built-in vision models [default: the model's own, e.g. 224],
    /// and for symbolic height and width dimensions of ONNX inputs.
    #[arg(long, value_name = "PIXELS")]
    pub image_size: Option<u64>,
    /// Target GPU (name or alias, see `wavecast gpus`).
    #[arg(long)]
    pub gpu: String,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[arg(long, default_value_t = 1)]
    pub batch: u64,
    /// Sequence length in tokens [default: 1024].
    #[arg(long)]
    pub seq: Option<u64>,
    #[arg(long, value_enum, default_value = "inference")]
    pub mode: ModeArg,
    /// fp32, tf32, fp16, bf16 or fp8 [default: for transformers the config's torch_dtype, else
    /// bf16, and fp32 for the presets of NeuSight's FP32 benchmarks (gpt2*, bert-*, opt-1.3b,
    /// switch-base-8); bf16 in serve mode; fp32 for vision models and ONNX graphs; reports say
    /// which].
    #[arg(long)]
    pub dtype: Option<String>,
    /// Attention kernels: eager (separate BMMs and softmax) or fused (flash) [default: auto].
    #[arg(long, value_enum)]
    pub attention: Option<AttentionArg>,
    /// Optimizer of the training step [default: adam].
    #[arg(long, value_enum)]
    pub optimizer: Option<wavecast::OptimizerChoice>,
    #[arg(long, help = wavecast_predict::registry::help_by_mode())]
    pub predictor: Option<String>,
    #[command(flatten)]
    pub serve: ServeArgs,
    #[command(flatten)]
    pub layout: LayoutFlags,
    #[command(flatten)]
    pub ops_data: OpsDataArg,
    #[command(flatten)]
    pub price: PriceArg,
    /// Give the time of what can be priced, listing the ops no predictor can, instead of an
    /// error.
    #[arg(long)]
    pub allow_partial: bool,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecomputeArg {
    None,
    Selective,
    Full,
    /// torchtitan's op-level selective checkpointing (every other matmul and the element-wise ops recomputed)
    SelectiveOp,
    /// torchtitan's layer-level selective checkpointing (every second layer fully recomputed)
    SelectiveLayer,
}

/// How a training step is spread over GPUs (`--mode train`); any of these switches the report
/// to the multi-GPU step (schedule, collectives, memory per GPU).
#[derive(Args, Debug, Clone, Default)]
pub struct LayoutFlags {
    /// Data-parallel degree.
    #[arg(long)]
    pub dp: Option<u64>,
    /// Pipeline-parallel stages.
    #[arg(long)]
    pub pp: Option<u64>,
    /// Context-parallel degree (the sequence split over GPUs).
    #[arg(long)]
    pub cp: Option<u64>,
    /// Expert-parallel degree (MoE models; within the data-parallel GPUs).
    #[arg(long)]
    pub ep: Option<u64>,
    /// ZeRO stage: 0 none, 1 optimizer states, 2 and gradients, 3 and weights (FSDP).
    #[arg(long)]
    pub zero: Option<u8>,
    /// Sequences per micro-batch per data-parallel rank (--batch is the global batch)
    /// [default: the rank's whole share without --pp, else 1].
    #[arg(long)]
    pub micro_batch: Option<u64>,
    /// Model chunks per pipeline stage (interleaved 1F1B).
    #[arg(long)]
    pub interleave: Option<u64>,
    /// Activation recomputation.
    #[arg(long, value_enum)]
    pub recompute: Option<RecomputeArg>,
    /// Megatron sequence parallelism alongside tensor parallelism.
    #[arg(long)]
    pub sequence_parallel: bool,
    /// Nodes the GPUs sit in (the layout must use nodes × --gpus-per-node GPUs).
    #[arg(long)]
    pub nodes: Option<u64>,
    /// GPUs per node [default: 8].
    #[arg(long)]
    pub gpus_per_node: Option<u64>,
    /// Scale-out NIC per GPU in Gbit/s [default: the catalog's, e.g. 400 for H100].
    #[arg(long)]
    pub nic_gbps: Option<f64>,
}

impl LayoutFlags {
    /// Whether any layout flag was given.
    pub fn any(&self) -> bool {
        let l = self;
        [l.dp, l.pp, l.cp, l.ep, l.micro_batch, l.interleave, l.nodes, l.gpus_per_node].iter().any(Option::is_some)
            || l.zero.is_some()
            || l.recompute.is_some()
            || l.sequence_parallel
            || l.nic_gbps.is_some()
    }

    /// The layout these flags and the tensor-parallel degree `tp` (`--tp`, shared with serve mode) make.
    pub fn layout(&self, tp: u64) -> wavecast::LayoutArgs {
        wavecast::LayoutArgs {
            dp: self.dp.unwrap_or(1),
            tp,
            pp: self.pp.unwrap_or(1),
            cp: self.cp.unwrap_or(1),
            ep: self.ep.unwrap_or(1),
            zero: self.zero.unwrap_or(0),
            micro_batch: self.micro_batch,
            interleave: self.interleave.unwrap_or(1),
            recompute: value_name(self.recompute.unwrap_or(RecomputeArg::None)),
            sequence_parallel: self.sequence_parallel,
        }
    }
}

impl PredictArgs {
    /// The library request of `--mode train` with layout flags.
    pub fn train_request(&self) -> Result<wavecast::TrainRequest, String> {
        if self.onnx.is_some() || self.image_size.is_some() || self.attention.is_some() {
            return Err("a multi-GPU training step (layout flags) models transformers from --model or --config; --onnx, --image-size and --attention do not apply".into());
        }
        Ok(wavecast::TrainRequest {
            model: self.model.clone(),
            config: self.config.clone().map(wavecast::ConfigArg::Path),
            gpu: self.gpu.clone(),
            gpu_file: self.gpu_file.gpu_file.clone(),
            batch: self.batch,
            seq: self.seq.unwrap_or(1024),
            dtype: self.dtype.clone(),
            optimizer: value_name(self.optimizer.unwrap_or(wavecast::OptimizerChoice::Adam)),
            layout: self.layout.layout(self.serve.tp),
            nodes: self.layout.nodes,
            gpus_per_node: self.layout.gpus_per_node.unwrap_or(8),
            nic_gbps: self.layout.nic_gbps,
            predictor: self.predictor.clone().unwrap_or_else(|| wavecast::Predictors::DEFAULT.into()),
            ops_data: self.ops_data.ops_data.clone(),
            price: self.price.price.clone(),
            allow_partial: self.allow_partial,
        })
    }

    /// The library request these flags make (`--mode inference|train`).
    pub fn request(&self) -> wavecast::PredictRequest {
        wavecast::PredictRequest {
            model: self.model.clone(),
            config: self.config.clone().map(wavecast::ConfigArg::Path),
            onnx: self.onnx.clone(),
            gpu: self.gpu.clone(),
            gpu_file: self.gpu_file.gpu_file.clone(),
            batch: self.batch,
            seq: self.seq.unwrap_or(1024),
            mode: value_name(self.mode),
            dtype: self.dtype.clone(),
            attention: value_name(self.attention.unwrap_or(AttentionArg::Auto)),
            optimizer: value_name(self.optimizer.unwrap_or(wavecast::OptimizerChoice::Adam)),
            predictor: self.predictor.clone().unwrap_or_else(|| wavecast::Predictors::DEFAULT.into()),
            ops_data: self.ops_data.ops_data.clone(),
            image_size: self.image_size,
            price: self.price.price.clone(),
            allow_partial: self.allow_partial,
        }
    }

    /// Flags the chosen mode would silently ignore are errors: the serving lengths outside
    /// serve mode, --seq/--attention/--optimizer in serve mode, --optimizer without training.
    pub fn reject_flags_of_other_modes(&self) -> Result<(), String> {
        match self.mode {
            ModeArg::Serve if self.seq.is_some() || self.attention.is_some() || self.optimizer.is_some() => {
                Err("--seq, --attention and --optimizer do not apply to --mode serve (its lengths are --input-len and --output-len)".into())
            }
            ModeArg::Serve if self.layout.any() => Err("layout flags (--dp, --tp, --pp, …) describe training; serve mode takes --tp only".into()),
            ModeArg::Serve => Ok(()),
            ModeArg::Inference if self.optimizer.is_some() => Err("--optimizer applies to --mode train only".into()),
            ModeArg::Inference if self.layout.any() => Err("layout flags (--dp, --tp, --pp, …) apply to --mode train".into()),
            ModeArg::Train => self.serve.reject_outside_serve_mode(true),
            ModeArg::Inference => self.serve.reject_outside_serve_mode(false),
        }
    }

    /// The library request of `--mode serve`.
    pub fn serve_request(&self) -> Result<wavecast::ServeRequest, String> {
        if self.image_size.is_some() || self.onnx.is_some() {
            return Err("--mode serve models LLM decoding: give a transformer with --model or --config (no --onnx or --image-size)".into());
        }
        let (Some(input_len), Some(output_len)) = (self.serve.input_len, self.serve.output_len) else {
            return Err("serve mode needs --input-len and --output-len".into());
        };
        Ok(wavecast::ServeRequest {
            model: self.model.clone(),
            config: self.config.clone().map(wavecast::ConfigArg::Path),
            gpu: self.gpu.clone(),
            gpu_file: self.gpu_file.gpu_file.clone(),
            batch: self.batch,
            input_len,
            output_len,
            tp: self.serve.tp,
            dtype: self.dtype.clone().unwrap_or_else(|| "bf16".into()),
            weights: self.serve.weights.clone(),
            kv_dtype: self.serve.kv_dtype.clone(),
            predictor: self.predictor.clone().unwrap_or_else(|| wavecast::Predictors::DEFAULT_SERVE.into()),
            ops_data: self.ops_data.ops_data.clone(),
            price: self.price.price.clone(),
            allow_partial: self.allow_partial,
        })
    }
}

/// Shape of an LLM serving workload (`--mode serve` and `compare`).
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Serve mode: prompt tokens per request.
    #[arg(long, value_name = "I", visible_alias = "input")]
    pub input_len: Option<u64>,
    /// Serve mode: generated tokens per request (decode steps).
    #[arg(long, value_name = "O", visible_alias = "output")]
    pub output_len: Option<u64>,
    /// Tensor-parallel degree: GPUs sharing the model in serve mode (1–8), or in a multi-GPU
    /// training step (--mode train; then a layout flag) (also vLLM's --tensor-parallel-size,
    /// SGLang's --tp-size).
    #[arg(long, default_value_t = 1, aliases = ["tensor-parallel-size", "tp-size"])]
    pub tp: u64,
    /// Serve mode: weight storage, when it differs from --dtype: fp8, or a quantized format
    /// with its scales (fp8_block, nvfp4, mxfp4, int4) (also vLLM's --quantization).
    #[arg(long, value_name = "DTYPE", visible_alias = "quant", alias = "quantization")]
    pub weights: Option<String>,
    /// Serve mode: KV cache type (fp8: half the bytes of a 16-bit cache) [default: --dtype]
    /// (also vLLM's --kv-cache-dtype).
    #[arg(long, value_name = "DTYPE", alias = "kv-cache-dtype")]
    pub kv_dtype: Option<String>,
}

impl ServeArgs {
    /// The serving flags mean nothing to training or plain inference: say so rather than
    /// ignore them.
    /// Errors on serving flags outside serve mode; `training` allows --tp (a training layout).
    pub fn reject_outside_serve_mode(&self, training: bool) -> Result<(), String> {
        if self.input_len.is_some() || self.output_len.is_some() || self.weights.is_some() || self.kv_dtype.is_some() {
            return Err("--input-len, --output-len, --weights and --kv-dtype apply to --mode serve only".into());
        }
        if self.tp != 1 && !training {
            return Err("--tp applies to --mode serve and --mode train only".into());
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub req: wavecast::CompareRequest,
    /// Also write an SVG bar chart (tokens/s and tokens per dollar) to FILE.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(Subcommand, Debug)]
pub enum EvalCommand {
    /// End-to-end error on every labelled workload in DIR/label/<GPU>/<workload>.json.
    E2e(EvalE2eArgs),
    /// Per-op error by op class on one held-out GPU (random and model-shaped shapes).
    Ops(EvalOpsArgs),
    /// Runtime-based scaling error for every ordered GPU pair of NeuSight's per-op data.
    Pairs(EvalPairsArgs),
    /// Convolution model accuracy, leave-one-GPU-out, on NeuSight's conv measurements
    /// (`--retrain FILE` trains the model first and writes its weights).
    Conv(EvalConvArgs),
    /// Held-out intervals of predictors that give none of their own: per op family, the 10th
    /// and 90th percentiles of ln(measured / predicted), each GPU predicted without its data.
    Intervals(EvalIntervalsArgs),
    /// Serving under load against measured runs (AIConfigurator's silicon_sample.csv): mean
    /// TTFT and TPOT error per system, backend, precision and mode; rows that cannot be
    /// predicted are listed with the reason.
    Serving(EvalServingArgs),
    /// Training steps against published, measured runs (a CSV laid out like
    /// shared/data/training/published_runs.csv, or bench/data/training_runs.csv): tokens/s per
    /// GPU predicted vs measured, mean and median error overall and per band (≤ 3B parameters,
    /// ≥ 16K tokens, multi-node, FP8), memory headroom per run; rows that cannot be replayed
    /// are listed with the reason.
    Training(EvalTrainingArgs),
}

#[derive(Args, Debug)]
pub struct EvalTrainingArgs {
    /// A CSV of measured runs; the model configs it names are read relative to its folder.
    #[arg(long)]
    pub data: PathBuf,
    #[arg(long, default_value = wavecast::Predictors::DEFAULT, help = wavecast_predict::registry::help())]
    pub predictor: String,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    /// Also list every replayed row.
    #[arg(long)]
    pub rows: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct EvalServingArgs {
    /// A CSV in the layout of AIConfigurator's silicon_sample.csv.
    #[arg(long)]
    pub data: PathBuf,
    /// Folder of Hugging Face configs named org--name_config.json [default: model_configs/
    /// beside the data file].
    #[arg(long, value_name = "DIR")]
    pub configs: Option<PathBuf>,
    /// Leave-one-GPU-out: refit the per-op models without each row's GPU from the modern-GPU
    /// kernel measurements in DIR (e.g. ../shared/data; about a minute per GPU).
    #[arg(long, value_name = "DIR")]
    pub ops_data: Option<PathBuf>,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    /// Also write every row (measured and predicted) to FILE as CSV.
    #[arg(long, value_name = "FILE")]
    pub rows: Option<PathBuf>,
    /// Also draw predicted / measured TTFT over concurrency, per engine, as an SVG to FILE.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(Args, Debug)]
pub struct EvalIntervalsArgs {
    /// Data folder laid out like NeuSight's (reads ops/train and ops/test).
    #[arg(long)]
    pub data: PathBuf,
    /// Predictors to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "li,neusight,pm2lat")]
    pub predictors: Vec<String>,
    /// Write them as JSON to FILE (the shipped ones are crates/wavecast-predict/weights/intervals.json).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Overwrite --out if it exists.
    #[arg(long, requires = "out")]
    pub force: bool,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(Args, Debug)]
pub struct EvalConvArgs {
    /// Data folder laid out like NeuSight's (reads ops/train/conv).
    #[arg(long)]
    pub data: PathBuf,
    /// Train the convolution model (all GPUs and one per left-out GPU), write its weights to
    /// FILE (the shipped ones are crates/wavecast-predict/weights/conv.json) and evaluate them
    /// (needs the `train` feature).
    #[arg(long, value_name = "FILE")]
    pub retrain: Option<PathBuf>,
    /// Overwrite the --retrain FILE if it exists (e.g. the shipped weights).
    #[arg(long, requires = "retrain")]
    pub force: bool,
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Print the report as Markdown tables.
    #[arg(long)]
    pub markdown: bool,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[cfg(feature = "train")]
#[derive(Args, Debug)]
pub struct FitArgs {
    /// Which predictor to train (`sustained`: the modern-GPU kernel model, on AIConfigurator,
    /// Vidur and PipeWeave data).
    #[arg(long)]
    pub predictor: String,
    /// Data folder: laid out like NeuSight's (trains on ops/train), or for `sustained` one of
    /// AIConfigurator, Vidur or PipeWeave (or a folder holding several, like ../shared/data).
    #[arg(long)]
    pub data: PathBuf,
    /// Where to write the weights (JSON); its folder must exist.
    #[arg(long)]
    pub out: PathBuf,
    /// Overwrite --out if it exists (e.g. the shipped weights).
    #[arg(long)]
    pub force: bool,
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Train only the all-GPU model, not the leave-one-GPU-out ones.
    #[arg(long)]
    pub no_holdout: bool,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
}

#[derive(Args, Debug)]
pub struct EvalOpsArgs {
    /// Data folder: NeuSight's (ops/train, ops/test; FP32), or AIConfigurator's database,
    /// Vidur's profiles, PipeWeave's data or a single gemm_fp8_*.csv (BF16/FP16/FP8/FP4), or a
    /// folder holding several of those (detected).
    #[arg(long)]
    pub data: PathBuf,
    /// The GPU whose measurements are predicted; learned predictors use their model trained
    /// without it.
    #[arg(long)]
    pub test_gpu: String,
    #[arg(long, default_value = wavecast::Predictors::DEFAULT, help = wavecast_predict::registry::help())]
    pub predictor: String,
    /// Also write every predicted measurement (op, kernel, measured and predicted ms) to FILE
    /// as CSV.
    #[arg(long, value_name = "FILE")]
    pub rows: Option<std::path::PathBuf>,
    /// NeuSight's data: use the learned predictor's all-GPU model even if it was trained on the
    /// test GPU (how well it fits the GPU it learned from, not how it predicts a new one).
    #[arg(long)]
    pub no_holdout: bool,
    /// With --predictor ladder: a second collection of the test GPU's kernels (e.g. your own
    /// timing, in a supported layout) to compare with --data's shape by shape, and to price
    /// with --data's tables of the GPU left out and with them.
    #[arg(long, value_name = "DIR")]
    pub against: Option<PathBuf>,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(Args, Debug)]
pub struct EvalE2eArgs {
    /// Data folder laid out like NeuSight's (label/, opgraph/, paper_predictions.csv).
    #[arg(long)]
    pub data: PathBuf,
    /// Use the learned predictor's all-GPU model even on GPUs it was trained on (by default a
    /// GPU's workloads are predicted by the model trained without that GPU's measurements).
    #[arg(long)]
    pub no_holdout: bool,
    #[arg(long, default_value = wavecast::Predictors::DEFAULT, help = wavecast_predict::registry::help())]
    pub predictor: String,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

#[derive(Args, Debug)]
pub struct ScaleArgs {
    #[command(flatten)]
    pub req: wavecast::ScaleRequest,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct EvalPairsArgs {
    /// Data folder: NeuSight's (reads ops/test and ops/train), or AIConfigurator's database,
    /// Vidur's profiles, PipeWeave's data or a folder holding several (detected).
    #[arg(long)]
    pub data: PathBuf,
    /// Per-op predictor(s) for the hybrid, comma-separated; learned ones use their model
    /// trained without the destination [default: wavecast's default predictor].
    #[arg(long, value_delimiter = ',')]
    pub predictor: Vec<String>,
    /// Also write the report as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// NeuSight's data: write the held-out scaling intervals `scale` gives carried kernels to
    /// FILE (the shipped ones are crates/wavecast-predict/weights/scale_intervals.json).
    #[arg(long, value_name = "FILE")]
    pub intervals_out: Option<PathBuf>,
    /// Overwrite --intervals-out if it exists.
    #[arg(long, requires = "intervals_out")]
    pub force: bool,
    #[command(flatten)]
    pub gpu_file: GpuFileArg,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
}

/// Every option is declared once and reachable everywhere it belongs. The request structs
/// (`src/request.rs`) are the declaration: each field carries its flag (clap) beside its serde
/// form, and the commands flatten them. These tests walk that declaration: every request field
/// is one flag of its own and every flag one field (the serde fields are read from the error
/// that lists them), each command takes its request whole plus only its CLI-only flags, a
/// request parsed from the fewest flags equals the one deserialized from the fewest JSON keys
/// (the defaults agree), no flag name is used twice, and every field is a keyword of the Python
/// function (`python/wavecast/_api.py`) with the same default. `predict` still fills three
/// requests from one set of flags by hand (`PredictArgs::request` and its siblings); its fields
/// are checked by name.
#[cfg(test)]
mod declared_once {
    use super::*;
    use clap::CommandFactory;
    use std::collections::{BTreeMap, BTreeSet};

    /// The fields of request type `Q` (its `deny_unknown_fields` error lists them).
    fn fields<Q: serde::de::DeserializeOwned + std::fmt::Debug>() -> BTreeSet<String> {
        let e = serde_json::from_str::<Q>(r#"{"__probe__": 0}"#).unwrap_err().to_string();
        let list = e.split("expected one of").nth(1).unwrap_or_else(|| panic!("no field list in: {e}"));
        list.split(',').map(|f| f.trim().trim_matches(|c: char| c == '`' || c == ' ').split('`').next().unwrap_or("").to_string()).filter(|f| !f.is_empty()).collect()
    }

    /// A request's fields with a nested group (`formats`) replaced by the group's own fields,
    /// as its flags are flattened into the command.
    fn flat_fields<Q: serde::de::DeserializeOwned + std::fmt::Debug>() -> BTreeSet<String> {
        let mut out = fields::<Q>();
        if out.remove("formats") {
            out.extend(fields::<wavecast::ServingFormatArgs>());
        }
        out
    }

    /// The argument ids (= field names) a derived request declares.
    fn declared<Q: clap::Args>() -> BTreeSet<String> {
        Q::augment_args(clap::Command::new("probe")).get_arguments().map(|a| a.get_id().to_string()).collect()
    }

    fn subcommand<'a>(path: &[&str], root: &'a clap::Command) -> &'a clap::Command {
        path.iter().fold(root, |c, name| c.find_subcommand(name).unwrap_or_else(|| panic!("no subcommand {name}")))
    }

    /// Long names and aliases of a command's flags.
    fn flags(c: &clap::Command) -> Vec<String> {
        c.get_arguments().flat_map(|a| a.get_long().into_iter().chain(a.get_all_aliases().unwrap_or_default())).map(str::to_string).collect()
    }

    #[test]
    fn clap_accepts_the_declaration_and_no_flag_name_is_used_twice() {
        Cli::command().debug_assert();
        fn walk(c: &clap::Command, path: String) {
            let names = flags(c);
            let unique: BTreeSet<&String> = names.iter().collect();
            assert_eq!(unique.len(), names.len(), "{path}: a flag name or alias is declared twice: {names:?}");
            for sub in c.get_subcommands() {
                walk(sub, format!("{path} {}", sub.get_name()));
            }
        }
        walk(&Cli::command(), "wavecast".into());
    }

    /// The derived requests: every serde field is a flag of the same struct and every flag a
    /// field, so neither can be added without the other.
    fn assert_one_declaration<Q: clap::Args + serde::de::DeserializeOwned + std::fmt::Debug>(name: &str) {
        assert_eq!(flat_fields::<Q>(), declared::<Q>(), "{name}: its serde fields and its flags differ");
        let command = Q::augment_args(clap::Command::new("probe"));
        let positional: Vec<&str> = command.get_arguments().filter(|a| a.get_long().is_none()).map(|a| a.get_id().as_str()).collect();
        assert!(positional.is_empty(), "{name}: fields without a flag (clap made them positional; give them #[arg(long)]): {positional:?}");
    }

    #[test]
    fn every_request_field_is_a_flag_of_the_same_declaration() {
        assert_one_declaration::<wavecast::CompareRequest>("CompareRequest");
        assert_one_declaration::<wavecast::ScaleRequest>("ScaleRequest");
        assert_one_declaration::<wavecast::PlanTrainRequest>("PlanTrainRequest");
        assert_one_declaration::<wavecast::ServeSimRequest>("ServeSimRequest");
        assert_one_declaration::<wavecast::PlanServeRequest>("PlanServeRequest");
        assert_one_declaration::<wavecast::ServingFormatArgs>("ServingFormatArgs");
    }

    /// Flags a command has beside its request: how the answer is shown, never what is asked.
    const CLI_ONLY: &[&str] = &["json", "html", "svg", "plot", "top"];

    fn assert_takes_request_whole<Q: clap::Args>(path: &[&str]) {
        let root = Cli::command();
        let have: BTreeSet<String> = subcommand(path, &root).get_arguments().map(|a| a.get_id().to_string()).collect();
        let want = declared::<Q>();
        assert!(want.is_subset(&have), "{path:?} lacks request flags {:?}", want.difference(&have).collect::<Vec<_>>());
        let extra: Vec<&String> = have.difference(&want).filter(|id| !CLI_ONLY.contains(&id.as_str()) && id.as_str() != "help").collect();
        assert!(extra.is_empty(), "{path:?} declares flags outside its request (declare them on the request): {extra:?}");
    }

    #[test]
    fn every_command_takes_its_request_whole() {
        assert_takes_request_whole::<wavecast::CompareRequest>(&["compare"]);
        assert_takes_request_whole::<wavecast::ScaleRequest>(&["scale"]);
        assert_takes_request_whole::<wavecast::PlanTrainRequest>(&["plan", "train"]);
        assert_takes_request_whole::<wavecast::ServeSimRequest>(&["serve-sim"]);
        assert_takes_request_whole::<wavecast::PlanServeRequest>(&["plan", "serve"]);
    }

    /// The request the CLI makes from `args` equals the one serde makes from `json`: every
    /// field left out takes the same default on both sides.
    fn assert_defaults_agree<Q: serde::Serialize + serde::de::DeserializeOwned>(args: &[&str], json: serde_json::Value, from_cli: impl Fn(Command) -> Q) {
        let cli = Cli::try_parse_from(std::iter::once("wavecast").chain(args.iter().copied())).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let mut by_flags = serde_json::to_value(from_cli(cli.command)).unwrap();
        let mut by_serde = serde_json::to_value(serde_json::from_value::<Q>(json).unwrap()).unwrap();
        // The environment may name the ops data for the CLI; serde never reads it.
        for v in [&mut by_flags, &mut by_serde] {
            v.as_object_mut().unwrap().remove("ops_data");
        }
        assert_eq!(by_flags, by_serde, "{args:?}: the CLI's defaults and the request's serde defaults differ");
    }

    #[test]
    fn flag_defaults_are_the_serde_defaults() {
        use serde_json::json;
        assert_defaults_agree(&["compare", "--model", "m", "--gpus", "h100", "--input-len", "8", "--output-len", "4"], json!({"model": "m", "gpus": ["h100"], "input_len": 8, "output_len": 4}), |c| match c {
            Command::Compare(a) => a.req,
            _ => unreachable!(),
        });
        assert_defaults_agree(&["scale", "--trace", "t.json", "--to", "h100"], json!({"trace": "t.json", "to": ["h100"], "method": "hybrid", "wave_form": "wavecast", "gamma": "wavecast"}), |c| match c {
            Command::Scale(a) => a.req,
            _ => unreachable!(),
        });
        assert_defaults_agree(&["plan", "train", "--model", "m", "--gpu", "h100", "--gpus", "8", "--batch", "64"], json!({"model": "m", "gpu": "h100", "gpus": 8, "batch": 64}), |c| match c {
            Command::Plan(PlanCommand::Train(a)) => a.req,
            _ => unreachable!(),
        });
        assert_defaults_agree(&["serve-sim", "--model", "m", "--gpu", "h100"], json!({"model": "m", "gpu": "h100"}), |c| match c {
            Command::ServeSim(a) => a.req,
            _ => unreachable!(),
        });
        assert_defaults_agree(&["plan", "serve", "--model", "m", "--gpu", "h100", "--gpus", "8"], json!({"model": "m", "gpu": "h100", "gpus": 8}), |c| match c {
            Command::Plan(PlanCommand::Serve(a)) => a.req,
            _ => unreachable!(),
        });
    }

    /// `predict`'s fields whose flag is spelled otherwise (field, flag).
    const RENAMED: &[(&str, &str)] = &[("weights", "weights")];
    /// `predict`'s fields set from several flags (a flattened group) or by the command itself.
    const GROUPS: &[&str] = &["layout", "mode"];

    fn assert_flags_cover<Q: serde::de::DeserializeOwned + std::fmt::Debug>(path: &[&str]) {
        let root = Cli::command();
        let have = flags(subcommand(path, &root));
        for field in fields::<Q>() {
            let flag = RENAMED.iter().find(|(f, _)| *f == field).map_or(field.replace('_', "-"), |(_, flag)| flag.to_string());
            assert!(GROUPS.contains(&field.as_str()) || have.contains(&flag), "{path:?}: request field {field} has no flag --{flag}");
        }
    }

    #[test]
    fn every_predict_request_field_has_a_flag() {
        assert_flags_cover::<wavecast::PredictRequest>(&["predict"]);
        assert_flags_cover::<wavecast::ServeRequest>(&["predict"]);
        assert_flags_cover::<wavecast::TrainRequest>(&["predict"]);
        assert_flags_cover::<wavecast::LayoutArgs>(&["predict"]);
    }

    fn python_api() -> String {
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/python/wavecast/_api.py")).unwrap()
    }

    /// The top-level keys (`"name":`) of the dict literal whose `{` is the first at or after
    /// `start` in `_api.py`.
    fn dict_keys(api: &str, start: usize) -> BTreeSet<String> {
        let text = &api[start + api[start..].find('{').unwrap()..];
        let (mut keys, mut depth, mut parens) = (BTreeSet::new(), 0, 0);
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                '(' | '[' => parens += 1,
                ')' | ']' => parens -= 1,
                '"' => {
                    let close = rest[1..].find('"').unwrap() + 1;
                    if depth == 1 && parens == 0 && rest[close + 1..].starts_with(':') {
                        keys.insert(rest[1..close].to_string());
                    }
                    rest = &rest[close + 1..];
                    continue;
                }
                _ => {}
            }
            if depth == 0 {
                break;
            }
            rest = &rest[c.len_utf8()..];
        }
        keys
    }

    /// The top-level keys of the request dict each Python function sends (`_request("name", {`
    /// or `_report(Class, "name", {`).
    fn python_keys(function: &str) -> BTreeSet<String> {
        let api = python_api();
        let start = api.find(&format!("(\"{function}\", {{")).or_else(|| api.find(&format!(", \"{function}\", {{"))).unwrap_or_else(|| panic!("no request of {function}"));
        dict_keys(&api, start)
    }

    /// A Python function's keywords and their defaults as written (`None` when it has none).
    fn python_signature(function: &str) -> BTreeMap<String, Option<String>> {
        let api = python_api();
        let start = api.find(&format!("\ndef {function}(")).unwrap_or_else(|| panic!("no def {function}")) + function.len() + 6;
        let (mut depth, mut end) = (1, start);
        for (i, c) in api[start..].char_indices() {
            depth += match c {
                '(' | '[' => 1,
                ')' | ']' => -1,
                _ => 0,
            };
            if depth == 0 {
                end = start + i;
                break;
            }
        }
        let (mut params, mut depth, mut current) = (BTreeMap::new(), 0, String::new());
        for c in api[start..end].chars().chain(std::iter::once(',')) {
            match c {
                '[' | '(' => depth += 1,
                ']' | ')' => depth -= 1,
                ',' if depth == 0 => {
                    let p = std::mem::take(&mut current);
                    let name = p.split([':', '=']).next().unwrap().trim().to_string();
                    if !name.is_empty() && name != "*" {
                        params.insert(name, p.split_once('=').map(|(_, d)| d.trim().to_string()));
                    }
                    continue;
                }
                _ => {}
            }
            current.push(c);
        }
        params
    }

    fn assert_python_covers<Q: serde::de::DeserializeOwned + std::fmt::Debug>(function: &str) {
        let (want, sent) = (fields::<Q>(), python_keys(function));
        assert_eq!(want, sent, "Python's {function}() and the request's fields differ");
    }

    #[test]
    fn every_request_field_has_a_python_keyword() {
        assert_python_covers::<wavecast::PredictRequest>("predict");
        assert_python_covers::<wavecast::ServeRequest>("serve");
        assert_python_covers::<wavecast::CompareRequest>("compare");
        assert_python_covers::<wavecast::ScaleRequest>("scale");
        assert_python_covers::<wavecast::TrainRequest>("train");
        assert_python_covers::<wavecast::PlanTrainRequest>("plan_train");
        assert_python_covers::<wavecast::ServeSimRequest>("serve_sim");
        assert_python_covers::<wavecast::PlanServeRequest>("plan_serve");
        let api = python_api();
        let formats = dict_keys(&api, api.find("\ndef _formats(").unwrap());
        assert_eq!(formats, fields::<wavecast::ServingFormatArgs>(), "Python's _formats() and ServingFormatArgs differ");
    }

    /// Each Python keyword of a derived request's function names one of its flags (the field,
    /// or the flag's long name or an alias, as `input_len=` is serve-sim's `--input-len`), and
    /// where both give a default it is the flag's.
    fn assert_python_matches<Q: clap::Args>(function: &str) {
        let command = Q::augment_args(clap::Command::new("probe"));
        for (keyword, default) in python_signature(function) {
            // `from_=`: Python's spelling of a name that is a keyword of the language.
            let keyword = keyword.trim_end_matches('_').to_string();
            let flag = keyword.replace('_', "-");
            let names = |a: &clap::Arg| a.get_long().into_iter().chain(a.get_all_aliases().unwrap_or_default()).any(|n| n == flag);
            let arg = command.get_arguments().find(|a| a.get_id() == keyword.as_str() || names(a));
            let arg = arg.unwrap_or_else(|| panic!("Python's {function}({keyword}=) names no flag of its request"));
            let flag_default: Vec<String> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
            let Some(default) = default.filter(|d| d != "None" && !flag_default.is_empty()) else { continue };
            let (default, flag_default) = (default.trim_matches('"').to_lowercase(), flag_default.join(","));
            let same = default == flag_default || matches!((default.parse::<f64>(), flag_default.parse::<f64>()), (Ok(a), Ok(b)) if a == b);
            assert!(same, "Python's {function}({keyword}={default}) and the flag's default {flag_default} differ");
        }
    }

    #[test]
    fn python_keywords_are_request_fields_with_the_flags_defaults() {
        assert_python_matches::<wavecast::CompareRequest>("compare");
        assert_python_matches::<wavecast::ScaleRequest>("scale");
        assert_python_matches::<wavecast::PlanTrainRequest>("plan_train");
        assert_python_matches::<wavecast::ServeSimRequest>("serve_sim");
        assert_python_matches::<wavecast::PlanServeRequest>("plan_serve");
    }

    /// The request fields and Python functions behind each command's flags, for the table.
    fn request_of(command: &str) -> Option<(BTreeSet<String>, Vec<&'static str>)> {
        Some(match command {
            "predict" => {
                let mut f = fields::<wavecast::PredictRequest>();
                f.extend(fields::<wavecast::ServeRequest>());
                f.extend(fields::<wavecast::TrainRequest>());
                f.extend(fields::<wavecast::LayoutArgs>());
                (f, vec!["predict", "serve", "train"])
            }
            "compare" => (flat_fields::<wavecast::CompareRequest>(), vec!["compare"]),
            "scale" => (flat_fields::<wavecast::ScaleRequest>(), vec!["scale"]),
            "serve-sim" => (flat_fields::<wavecast::ServeSimRequest>(), vec!["serve_sim"]),
            "plan train" => (flat_fields::<wavecast::PlanTrainRequest>(), vec!["plan_train"]),
            "plan serve" => (flat_fields::<wavecast::PlanServeRequest>(), vec!["plan_serve"]),
            _ => return None,
        })
    }

    /// Markdown table of every flag of every command with its request field and Python
    /// keyword, generated from the declaration.
    fn options_table() -> String {
        fn rows(c: &clap::Command, path: &str, out: &mut String) {
            let request = request_of(path);
            // Keyed by the flag's id: `from_=` is Python's spelling of a name the language reserves.
            let python: BTreeMap<String, String> = request.iter().flat_map(|(_, fns)| fns.iter().flat_map(|f| python_signature(f).into_keys())).map(|k| (k.trim_end_matches('_').to_string(), k)).collect();
            for a in c.get_arguments().filter(|a| !a.is_hide_set()) {
                let Some(long) = a.get_long() else { continue };
                let id = a.get_id().to_string();
                let aliases: Vec<String> = a.get_all_aliases().unwrap_or_default().iter().map(|n| format!("`--{n}`")).collect();
                let help = a.get_help().map(|h| h.to_string().replace('\n', " ").replace('|', "\\|")).unwrap_or_default();
                let default: Vec<String> = a.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
                let default = if default.is_empty() { String::new() } else { format!("`{}`", default.join(",")) };
                let nested = matches!(path, "serve-sim" | "plan serve") && fields::<wavecast::ServingFormatArgs>().contains(&id);
                let field = match request.as_ref().filter(|(f, _)| f.contains(&id)) {
                    Some(_) if nested => format!("`formats.{id}`"),
                    Some(_) => format!("`{id}`"),
                    None => String::new(),
                };
                let keyword = python.get(&id).map_or(String::new(), |k| format!("`{k}=`"));
                out.push_str(&format!("| `{path}` | `--{long}` | {} | {field} | {keyword} | {default} | {help} |\n", aliases.join(" ")));
            }
            for sub in c.get_subcommands() {
                rows(sub, &format!("{path} {}", sub.get_name()), out);
            }
        }
        let mut out = String::from("# Every command-line option\n\nGenerated from the declaration (the request structs of `src/request.rs`, which the commands of\n`src/cli.rs` flatten) by the test `options_table_is_up_to_date`; regenerate with\n`WAVECAST_BLESS=1 cargo test --release --bin wavecast`. Each row is one flag, the request field it\nsets (the JSON key Python sends) and the Python keyword that sets it, checked by\n`every_request_field_has_a_python_keyword`; an empty field is a flag that shapes the output only.\n\n| command | flag | also | request field | Python keyword | default | what |\n|---|---|---|---|---|---|---|\n");
        let root = Cli::command();
        for sub in root.get_subcommands() {
            rows(sub, sub.get_name(), &mut out);
        }
        out
    }

    #[test]
    fn options_table_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/options.md");
        let table = options_table();
        if std::env::var_os("WAVECAST_BLESS").is_some() {
            std::fs::write(path, &table).unwrap();
        }
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(written == table, "docs/options.md is out of date: regenerate it with WAVECAST_BLESS=1 cargo test --release --bin wavecast");
    }

    /// Flags the README names that belong to other tools (cargo, pip, pytest, maturin, git…).
    const OTHER_TOOLS_FLAGS: &[&str] = &["release", "workspace", "features", "no-default-features", "all-targets", "bench", "test", "lib", "bin", "manifest-path", "interpreter", "out", "quiet", "disable-pip-version-check", "no-index", "target", "verbose", "help", "version", "force", "locked", "offline", "package"];

    /// Flags named in `text` (`--name`, not inside a word) that no command has.
    fn unknown_flags(text: &str) -> BTreeSet<String> {
        fn walk(c: &clap::Command, all: &mut BTreeSet<String>) {
            all.extend(flags(c));
            for sub in c.get_subcommands() {
                walk(sub, all);
            }
        }
        let mut known = BTreeSet::new();
        walk(&Cli::command(), &mut known);
        let mut unknown = BTreeSet::new();
        for (i, _) in text.match_indices("--") {
            let before = text[..i].chars().last().unwrap_or(' ');
            let name: String = text[i + 2..].chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-').collect();
            if before.is_alphanumeric() || before == '-' || name.is_empty() || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
                continue;
            }
            let name = name.trim_end_matches('-').to_string();
            if !known.contains(&name) && !OTHER_TOOLS_FLAGS.contains(&name.as_str()) {
                unknown.insert(name);
            }
        }
        unknown
    }

    #[test]
    fn every_flag_the_readme_names_exists() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
        let unknown = unknown_flags(&readme);
        assert!(unknown.is_empty(), "README.md names flags no command has: {unknown:?}");
    }

    #[test]
    fn the_readme_check_fails_on_a_flag_no_command_has() {
        assert_eq!(unknown_flags("run `wavecast predict --gpu h100 --no-such-flag`"), BTreeSet::from(["no-such-flag".to_string()]));
        assert!(unknown_flags("`wavecast serve-sim --max-num-seqs 8 --input-len 512`").is_empty());
    }
}
