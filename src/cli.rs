//! Command-line interface definition.

use clap::{Args, Parser, Subcommand};
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
    /// Serve a local web page with forms for predict, a served batch (predict --mode serve),
    /// serve-sim, compare and plan, answering with the same report pages as --html.
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

/// `wavecast predict`: its request, every mode's flags declared once on
/// [`wavecast::PredictRequest`], plus how the answer is shown.
#[derive(Args, Debug)]
pub struct PredictArgs {
    #[command(flatten)]
    pub req: wavecast::PredictRequest,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub html: HtmlArg,
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
    /// Print the intervals as JSON on stdout, also when --out writes them (without --out they
    /// are printed as JSON in any case).
    #[arg(long)]
    pub json: bool,
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
    /// as CSV; with --predictor ladder also each answer's interval and provenance, and the
    /// baselines (copy the sibling, roofline ratio, physics) on the same row.
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
/// function (`python/wavecast/_api.py`) with the same default; a field shared by several
/// requests (`gpu`, `ops_data`, `price`…) has the same flag, help and default in each. `predict`
/// is one request for its three modes (Python's `predict`, `serve` and `train` each send a part
/// of it). The `…_can_fail` tests feed each check a declaration that breaks it.
#[cfg(test)]
mod declared_once {
    use super::*;
    use clap::CommandFactory;
    use std::collections::{BTreeMap, BTreeSet};

    /// The fields of request type `Q` (its `deny_unknown_fields` error lists them).
    fn fields<Q: serde::de::DeserializeOwned + std::fmt::Debug>() -> BTreeSet<String> {
        let e = serde_json::from_str::<Q>(r#"{"__probe__": 0}"#).unwrap_err().to_string();
        let list = e.split_once("expected").map(|(_, l)| l.split(" at line").next().unwrap_or(l)).unwrap_or_else(|| panic!("no field list in: {e}"));
        // `a`, `b` or `c`: the names are every other piece between backquotes.
        list.split('`').skip(1).step_by(2).map(str::to_string).collect()
    }

    /// A request's fields with a nested group (`formats`, `layout`) replaced by the group's own
    /// fields, as its flags are flattened into the command.
    fn flat_fields<Q: serde::de::DeserializeOwned + std::fmt::Debug>() -> BTreeSet<String> {
        let mut out = fields::<Q>();
        if out.remove("formats") {
            out.extend(fields::<wavecast::ServingFormatArgs>());
        }
        if std::any::type_name::<Q>() == std::any::type_name::<wavecast::PredictRequest>() && out.remove("layout") {
            out.extend(fields::<wavecast::LayoutArgs>());
        }
        out
    }

    /// The group a flattened field sits in, in the request's JSON (`formats.dtype`).
    fn group_of(field: &str, path: &str) -> Option<&'static str> {
        match path {
            "serve-sim" | "plan serve" if fields::<wavecast::ServingFormatArgs>().contains(field) => Some("formats"),
            "predict" if fields::<wavecast::LayoutArgs>().contains(field) => Some("layout"),
            _ => None,
        }
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

    /// Flag names or aliases a command and its subcommands declare twice, with the command.
    fn declared_twice(c: &clap::Command, path: String, out: &mut Vec<String>) {
        let mut seen = BTreeSet::new();
        for name in flags(c) {
            if !seen.insert(name.clone()) {
                out.push(format!("{path} --{name}"));
            }
        }
        for sub in c.get_subcommands() {
            declared_twice(sub, format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn clap_accepts_the_declaration_and_no_flag_name_is_used_twice() {
        Cli::command().debug_assert();
        let mut twice = Vec::new();
        declared_twice(&Cli::command(), "wavecast".into(), &mut twice);
        assert!(twice.is_empty(), "flag names or aliases declared twice: {twice:?}");
    }

    #[test]
    fn the_twice_check_can_fail() {
        let c = clap::Command::new("probe").subcommand(clap::Command::new("sub").arg(clap::Arg::new("tp").long("tp")).arg(clap::Arg::new("degree").long("degree").alias("tp")));
        let mut twice = Vec::new();
        declared_twice(&c, "probe".into(), &mut twice);
        assert_eq!(twice, ["probe sub --tp"]);
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
        assert_one_declaration::<wavecast::PredictRequest>("PredictRequest");
        assert_one_declaration::<wavecast::LayoutArgs>("LayoutArgs");
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

    /// A request with a field that has no flag, as a field added without `#[arg(long)]`.
    #[derive(Debug, serde::Deserialize, clap::Args)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct FieldWithoutFlag {
        #[arg(long)]
        gpu: String,
        #[arg(skip)]
        #[serde(default)]
        forgotten: u64,
    }

    #[test]
    #[should_panic(expected = "its serde fields and its flags differ")]
    fn the_one_declaration_check_can_fail() {
        assert_one_declaration::<FieldWithoutFlag>("FieldWithoutFlag");
    }

    #[test]
    fn every_command_takes_its_request_whole() {
        assert_takes_request_whole::<wavecast::PredictRequest>(&["predict"]);
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
        let predict = |c| match c {
            Command::Predict(a) => a.req,
            _ => unreachable!(),
        };
        assert_defaults_agree(&["predict", "--model", "m", "--gpu", "h100"], json!({"model": "m", "gpu": "h100"}), predict);
        assert_defaults_agree(&["predict", "--model", "m", "--gpu", "h100", "--mode", "serve", "--input-len", "8", "--output-len", "4"], json!({"model": "m", "gpu": "h100", "mode": "serve", "input_len": 8, "output_len": 4}), predict);
        assert_defaults_agree(&["predict", "--model", "m", "--gpu", "h100", "--mode", "train", "--dp", "2", "--recompute", "selective-op"], json!({"model": "m", "gpu": "h100", "mode": "train", "layout": {"dp": 2, "recompute": "selective-op"}}), predict);
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

    /// Fields several requests share, which mean the same everywhere: each has the same flag,
    /// aliases, help, default and environment variable in every command that takes it.
    const SHARED: &[&str] = &["model", "gpu", "gpu_file", "ops_data", "price", "allow_partial"];

    /// How a flag is declared, as the user sees it.
    fn declaration(a: &clap::Arg) -> String {
        let aliases: Vec<&str> = a.get_all_aliases().unwrap_or_default();
        let default: Vec<String> = a.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        format!("--{} {aliases:?} default {default:?} env {:?}: {help}", a.get_long().unwrap_or(""), a.get_env())
    }

    /// Shared fields declared otherwise in some request command than in the first one.
    fn declared_unlike(root: &clap::Command, commands: &[&[&str]]) -> Vec<String> {
        let mut first: BTreeMap<String, (String, String)> = BTreeMap::new();
        let mut unlike = Vec::new();
        for path in commands {
            for a in subcommand(path, root).get_arguments().filter(|a| SHARED.contains(&a.get_id().as_str())) {
                let (id, this) = (a.get_id().to_string(), declaration(a));
                match first.get(&id) {
                    Some((where_, that)) if *that != this => unlike.push(format!("{id}: {path:?} `{this}` against {where_} `{that}`")),
                    Some(_) => {}
                    None => {
                        first.insert(id, (format!("{path:?}"), this));
                    }
                }
            }
        }
        unlike
    }

    const REQUEST_COMMANDS: &[&[&str]] = &[&["predict"], &["compare"], &["scale"], &["serve-sim"], &["plan", "train"], &["plan", "serve"]];

    /// The shared fields are written in each request struct (serde's `flatten` does not mix with
    /// `deny_unknown_fields`, and their clap rules differ: which workload flags conflict, which
    /// are required); this keeps the copies alike.
    #[test]
    fn shared_fields_are_declared_alike_in_every_request() {
        let unlike = declared_unlike(&Cli::command(), REQUEST_COMMANDS);
        assert!(unlike.is_empty(), "shared request fields declared differently: {unlike:#?}");
    }

    #[test]
    fn the_alike_check_can_fail() {
        let gpu = |help: &'static str| clap::Arg::new("gpu").long("gpu").help(help);
        let root = clap::Command::new("probe").subcommand(clap::Command::new("a").arg(gpu("Target GPU."))).subcommand(clap::Command::new("b").arg(gpu("The GPU.")));
        assert_eq!(declared_unlike(&root, &[&["a"], &["b"]]).len(), 1);
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

    /// The keys of the request dict each Python function sends (`_request("name", {` or
    /// `_report(Class, "name", {`), a nested `"layout": {` group's keys in its place.
    fn python_keys_in(api: &str, function: &str) -> BTreeSet<String> {
        let start = api.find(&format!("(\"{function}\", {{")).or_else(|| api.find(&format!(", \"{function}\", {{"))).unwrap_or_else(|| panic!("no request of {function}"));
        let mut keys = dict_keys(api, start);
        let value = keys.contains("layout").then(|| start + api[start..].find("\"layout\": ").unwrap_or_else(|| panic!("{function}: no layout key")) + "\"layout\": ".len());
        if let Some(nested) = value.filter(|&v| api[v..].starts_with('{')) {
            keys.remove("layout");
            keys.extend(dict_keys(api, nested));
        }
        keys
    }

    fn python_keys(function: &str) -> BTreeSet<String> {
        python_keys_in(&python_api(), function)
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

    /// `predict`'s request is sent by three Python functions, one per mode: each sends fields
    /// of it, and together every field.
    fn predict_fields_missing_in_python(api: &str) -> (BTreeSet<String>, BTreeSet<String>) {
        let want = flat_fields::<wavecast::PredictRequest>();
        let sent: BTreeSet<String> = ["predict", "serve", "train"].iter().flat_map(|f| python_keys_in(api, f)).collect();
        (want.difference(&sent).cloned().collect(), sent.difference(&want).cloned().collect())
    }

    #[test]
    fn every_request_field_has_a_python_keyword() {
        let (missing, unknown) = predict_fields_missing_in_python(&python_api());
        assert!(missing.is_empty() && unknown.is_empty(), "Python's predict/serve/train lack fields {missing:?} of PredictRequest, or send fields it has not: {unknown:?}");
        assert_python_covers::<wavecast::CompareRequest>("compare");
        assert_python_covers::<wavecast::ScaleRequest>("scale");
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
    fn the_python_check_can_fail() {
        let api = python_api();
        let without_seq = api.replacen("\"seq\": _int(\"seq\", seq),", "", 2);
        let (missing, _) = predict_fields_missing_in_python(&without_seq);
        assert_eq!(missing, BTreeSet::from(["seq".to_string()]));
    }

    #[test]
    fn python_keywords_are_request_fields_with_the_flags_defaults() {
        assert_python_matches::<wavecast::PredictRequest>("predict");
        assert_python_matches::<wavecast::PredictRequest>("serve");
        assert_python_matches::<wavecast::PredictRequest>("train");
        assert_python_matches::<wavecast::CompareRequest>("compare");
        assert_python_matches::<wavecast::ScaleRequest>("scale");
        assert_python_matches::<wavecast::PlanTrainRequest>("plan_train");
        assert_python_matches::<wavecast::ServeSimRequest>("serve_sim");
        assert_python_matches::<wavecast::PlanServeRequest>("plan_serve");
    }

    /// The request fields and Python functions behind each command's flags, for the table.
    fn request_of(command: &str) -> Option<(BTreeSet<String>, Vec<&'static str>)> {
        Some(match command {
            "predict" => (flat_fields::<wavecast::PredictRequest>(), vec!["predict", "serve", "train"]),
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
                let field = match (request.as_ref().filter(|(f, _)| f.contains(&id)), group_of(&id, path)) {
                    (Some(_), Some(group)) => format!("`{group}.{id}`"),
                    (Some(_), None) => format!("`{id}`"),
                    (None, _) => String::new(),
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
