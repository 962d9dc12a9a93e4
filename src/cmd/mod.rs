//! One module per subcommand.

mod compare;
mod eval_conv;
mod eval_e2e;
mod eval_ops;
mod gpus;
mod models;
mod predict;
mod predict_zoo;
mod scale;
mod eval_pairs;
mod serve;
mod train;

use crate::cli::{Cli, Command, EvalCommand, GpuFileArg};
use std::error::Error;
use wavecast_gpu::Catalog;

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Predict(a) => predict::run(a),
        Command::Gpus(a) => gpus::run(a),
        Command::Models(a) => models::run(a),
        Command::Eval(EvalCommand::E2e(a)) => eval_e2e::run(a),
        Command::Eval(EvalCommand::Ops(a)) => eval_ops::run(a),
        Command::Train(a) => train::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Scale(a) => scale::run(a),
        Command::Eval(EvalCommand::Pairs(a)) => eval_pairs::run(a),
        Command::Eval(EvalCommand::Conv(a)) => eval_conv::run(a),
    }
}

/// The built-in catalog, with the user's file merged over it when given.
pub fn catalog(arg: &GpuFileArg) -> Result<Catalog> {
    Ok(match &arg.gpu_file {
        Some(p) => Catalog::with_user_file(p)?,
        None => Catalog::builtin(),
    })
}

pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}
