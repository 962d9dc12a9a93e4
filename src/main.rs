//! The `wavecast` command line: parse flags (`cli`), call the `wavecast` library (`cmd`, one
//! module per subcommand), print tables (`table`), `--json` or SVG (`plot`). All domain logic
//! lives in the library; see its crate documentation for the flow.

mod cli;
mod cmd;
mod plot;
mod table;

use clap::{CommandFactory, FromArgMatches};
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

/// clap's own errors span several lines (usage, a hint); ours are one: the message and, where
/// clap lists them, the possible values.
fn one_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let message: Vec<&str> = rendered.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    message.join(" ").trim_start_matches("error: ").to_string()
}

/// An error is one line even when it quotes a name from the user's file that holds line breaks
/// or other control characters: those are written escaped (`\n`, `\u{2028}`).
fn as_one_line(message: &str) -> String {
    message.chars().map(|c| if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// Old command names that still work, with the name that replaced them.
const DEPRECATED_COMMANDS: &[(&str, &str)] = &[("train", "fit")];

/// One line on stderr when the command was given by an old name (`wavecast train` fits a
/// predictor; it is `wavecast fit` now, so `train` is not read as "predict a training step").
/// The subcommand is the first argument: wavecast has no options before it.
fn warn_of_deprecated_names() {
    let Some(first) = std::env::args_os().nth(1) else { return };
    if let Some((old, new)) = DEPRECATED_COMMANDS.iter().find(|(old, _)| first == *old) {
        eprintln!("wavecast: note: `wavecast {old}` is deprecated; use `wavecast {new}` (same options)");
    }
}

/// The command line's parser, every option taking a value that starts with a minus sign: `--batch
/// -1` is then refused for its value ("invalid digit"), not read as an unknown flag `-1`.
fn parser() -> clap::Command {
    fn negatives_are_values(c: clap::Command) -> clap::Command {
        c.mut_args(|a| a.allow_negative_numbers(true)).mut_subcommands(negatives_are_values)
    }
    negatives_are_values(cli::Cli::command())
}

fn parse() -> Result<cli::Cli, clap::Error> {
    parser().try_get_matches().and_then(|m| cli::Cli::from_arg_matches(&m))
}

fn main() -> ExitCode {
    die_quietly_on_closed_pipe();
    let cli = match parse() {
        Ok(cli) => cli,
        // --help and --version (exit 0), and a bare `wavecast` (the help, exit 2): clap's own.
        Err(e) if !e.use_stderr() || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            eprintln!("wavecast: error: {}", as_one_line(&one_line(&e)));
            return ExitCode::from(2);
        }
    };
    warn_of_deprecated_names();
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wavecast: error: {}", as_one_line(&e.to_string()));
            ExitCode::from(2)
        }
    }
}
