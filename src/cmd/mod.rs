//! One module per subcommand. Each parses nothing itself (clap did), calls the `wavecast`
//! library and prints; no module here imports another.

mod compare;
mod eval_conv;
mod eval_e2e;
mod eval_ops;
mod eval_pairs;
mod gpus;
mod models;
mod predict;
mod scale;
mod serve;
#[cfg(feature = "train")]
mod train;

use crate::cli::{Cli, Command, EvalCommand, ModeArg};
use std::error::Error;

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Predict(a) if a.mode == ModeArg::Serve => serve::run(a),
        Command::Predict(a) => predict::run(a),
        Command::Gpus(a) => gpus::run(a),
        Command::Models(a) => models::run(a),
        Command::Eval(EvalCommand::E2e(a)) => eval_e2e::run(a),
        Command::Eval(EvalCommand::Ops(a)) => eval_ops::run(a),
        #[cfg(feature = "train")]
        Command::Train(a) => train::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Scale(a) => scale::run(a),
        Command::Eval(EvalCommand::Pairs(a)) => eval_pairs::run(a),
        Command::Eval(EvalCommand::Conv(a)) => eval_conv::run(a),
    }
}

pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}
