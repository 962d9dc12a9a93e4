//! The `wavecast` command line: parse flags (`cli`), call the `wavecast` library (`cmd`, one
//! module per subcommand), print tables (`table`), `--json` or SVG (`plot`). All domain logic
//! lives in the library; see its crate documentation for the flow.

mod cli;
mod cmd;
mod plot;
mod table;

use clap::Parser;
use std::process::ExitCode;

/// Output into a closed pipe (`wavecast gpus | head -1`) ends the process quietly, as it does
/// for Unix tools: Rust ignores SIGPIPE, so without this every `println!` after the reader
/// left would panic.
fn die_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any thread exists; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    die_quietly_on_closed_pipe();
    let cli = cli::Cli::parse();
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wavecast: error: {e}");
            ExitCode::from(2)
        }
    }
}
