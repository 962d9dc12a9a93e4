//! `wavecast`: predicts how long deep-learning work takes on a GPU.
//!
//! Data flows one way, one crate per stage:
//! workload (`wavecast-workload`: HF configs, presets, NeuSight graphs) → operator graph
//! (`wavecast-ir`) → per-op prediction on a GPU (`wavecast-predict`, facts from `wavecast-gpu`)
//! → aggregation (`wavecast-aggregate`) → report (this binary). Measurements and labels for
//! training and evaluation come from `wavecast-data`.

mod cli;
mod cmd;
mod table;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wavecast: error: {e}");
            ExitCode::from(2)
        }
    }
}
