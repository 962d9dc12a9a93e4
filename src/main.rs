//! The `wavecast` command line: parse flags (`cli`), call the `wavecast` library (`cmd`, one
//! module per subcommand), print tables (`table`), `--json` or SVG (`plot`). All domain logic
//! lives in the library; see its crate documentation for the flow.

mod cli;
mod cmd;
mod plot;
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
