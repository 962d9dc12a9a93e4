//! One module per subcommand. Each parses nothing itself (clap did), calls the `wavecast`
//! library and prints; no module here imports another.

/// `println!` for prose: folded to the terminal's width by [`crate::table::say`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::table::say(&format!($($arg)*))
    };
}

mod compare;
mod eval_conv;
mod eval_e2e;
mod eval_intervals;
mod eval_ops;
mod eval_pairs;
mod eval_serving;
mod eval_training;
mod gpus;
mod models;
mod plan_serve;
mod plan_train;
mod predict;
mod scale;
mod serve;
mod serve_sim;
mod train_step;
#[cfg(feature = "ui")]
mod ui;
#[cfg(feature = "train")]
mod fit;

use crate::cli::{Cli, Command, EvalCommand, PlanCommand};
use wavecast::PredictRoute;
use std::error::Error;

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Predict(a) => match a.req.route() {
            PredictRoute::Serve => serve::run(a),
            PredictRoute::Train => train_step::run(a),
            PredictRoute::Step => predict::run(a),
        },
        Command::Plan(PlanCommand::Train(a)) => plan_train::run(a),
        Command::Plan(PlanCommand::Serve(a)) => plan_serve::run(a),
        Command::ServeSim(a) => serve_sim::run(a),
        Command::Gpus(a) => gpus::run(a),
        Command::Models(a) => models::run(a),
        Command::Eval(EvalCommand::E2e(a)) => eval_e2e::run(a),
        Command::Eval(EvalCommand::Ops(a)) => eval_ops::run(a),
        #[cfg(feature = "train")]
        Command::Fit(a) => fit::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Scale(a) => scale::run(a),
        #[cfg(feature = "ui")]
        Command::Ui(a) => ui::run(a),
        Command::Eval(EvalCommand::Pairs(a)) => eval_pairs::run(a),
        Command::Eval(EvalCommand::Conv(a)) => eval_conv::run(a),
        Command::Eval(EvalCommand::Intervals(a)) => eval_intervals::run(a),
        Command::Eval(EvalCommand::Serving(a)) => eval_serving::run(a),
        Command::Eval(EvalCommand::Training(a)) => eval_training::run(a),
    }
}

/// Checks, before any work, that `path` can receive an output file: its folder exists (none is
/// created unasked) and, unless `force`, no file is there to be overwritten (the shipped weights
/// live at the paths a retrain would write to).
pub fn check_output_path(path: &std::path::Path, force: bool) -> Result<()> {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !folder.is_dir() {
        return Err(format!("cannot write {}: folder {} does not exist", path.display(), folder.display()).into());
    }
    if path.is_dir() {
        return Err(format!("cannot write {}: it is a folder; name a file in it", path.display()).into());
    }
    if path.exists() && !force {
        return Err(format!("{} exists; pass --force to overwrite it", path.display()).into());
    }
    Ok(())
}

/// Writes `text` to `path` atomically: a temporary file beside it, then a rename, so an
/// interrupted run never leaves half a weights file.
pub fn write_atomically(path: &std::path::Path, text: &str) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&temporary, text).and_then(|()| std::fs::rename(&temporary, path));
    if let Err(e) = written {
        std::fs::remove_file(&temporary).ok();
        return Err(format!("cannot write {}: {e}", path.display()).into());
    }
    Ok(())
}

/// What an answer settled that the request left open, on stderr (so `--json` stays one object).
pub fn print_notes<'a>(notes: impl IntoIterator<Item = &'a String>) {
    for note in notes {
        eprintln!("note: {note}");
    }
}

pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", wavecast::to_json_pretty(v)?);
    Ok(())
}

/// `--html FILE`: before any work, checks that FILE's folder exists (the file itself is the
/// user's own output, so an existing one is replaced).
pub fn check_html(arg: &crate::cli::HtmlArg) -> Result<()> {
    match &arg.html {
        Some(path) => check_output_path(path, true),
        None => Ok(()),
    }
}

/// `--html FILE`: writes `report` as a self-contained page, with the command line and the
/// library request (its defaults filled in) as the inputs that produced it.
pub fn write_html<R: serde::Serialize>(arg: &crate::cli::HtmlArg, kind: wavecast::html::Kind, request: Option<&dyn erased::Request>, report: &R) -> Result<()> {
    use wavecast::html::Node;
    let Some(path) = &arg.html else { return Ok(()) };
    let mut inputs = vec![("command".to_string(), Node::Str(command_line()))];
    if let Some(req) = request {
        inputs.extend(req.node()?.fields().iter().cloned());
    }
    let page = wavecast::html::page(kind, &Node::Obj(inputs), &Node::of(report)?);
    write_atomically(path, &page)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The command as typed, arguments with spaces or quotes quoted.
fn command_line() -> String {
    let quote = |a: String| if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') { format!("'{}'", a.replace('\'', r"'\''")) } else { a };
    let mut args = std::env::args();
    let program = args.next().map(|p| std::path::Path::new(&p).file_name().map_or(p.clone(), |n| n.to_string_lossy().into_owned())).unwrap_or_default();
    std::iter::once(program).chain(args.map(quote)).collect::<Vec<_>>().join(" ")
}

/// A library request as the inputs of a page, whatever its type.
pub mod erased {
    pub trait Request {
        fn node(&self) -> serde_json::Result<wavecast::html::Node>;
    }

    impl<T: serde::Serialize> Request for T {
        fn node(&self) -> serde_json::Result<wavecast::html::Node> {
            wavecast::html::Node::of(self)
        }
    }
}
