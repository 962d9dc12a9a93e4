//! Output stability: every command in `tests/golden/commands.txt` prints what its snapshot
//! `tests/golden/<name>.snap` holds (an `insta` snapshot: the command line in its header, the
//! stdout below it). A changed output fails with a line-by-line diff of that command.
//!
//! A deliberate change of output re-blesses the snapshots with
//! `WAVECAST_BLESS=1 cargo test --release --test golden` (the same as `INSTA_UPDATE=always`; or
//! review each change with `cargo insta review` after a plain run has written `.snap.new`
//! files); say why beside the command in `commands.txt` and in the commit message.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::Command;
use wavecast_test_support::{par_map, shared};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The command line of one snapshot with the shared data folders filled in (relative to the
/// repository root, where the commands run, as paths appear in the output), or `None` when the
/// line needs shared data this checkout does not have.
fn expand(args: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for word in args.split_whitespace() {
        let word = word.replace("{data}", "../shared/data/neusight").replace("{kineto}", "../shared/data/kineto");
        if let Some(sub) = word.strip_prefix("../shared/") {
            shared(sub)?;
        }
        out.push(word);
    }
    Some(out)
}

/// The `(name, arguments)` lines of `commands.txt` (comments and blank lines left out).
fn cases() -> Vec<(String, String)> {
    let list = std::fs::read_to_string(root().join("tests/golden/commands.txt")).unwrap();
    list.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (name, args) = line.split_once('\t').expect("commands.txt lines are name<TAB>arguments");
            (name.to_string(), args.to_string())
        })
        .collect()
}

/// Compares one command's stdout with its snapshot; insta prints the diff when they differ.
fn check(name: &str, args: &str, stdout: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("tests/golden"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(format!("wavecast {args}"));
    settings.bind(|| insta::assert_snapshot!(name, stdout));
}

#[test]
fn every_command_prints_its_snapshot() {
    if std::env::var_os("WAVECAST_BLESS").is_some() {
        // Read by insta at its first assertion, which has not happened yet in this process.
        std::env::set_var("INSTA_UPDATE", "always");
    }
    // The commands run a few at a time; their outputs are compared in the file's order.
    let cases: Vec<(String, String, Vec<String>)> = cases().into_iter().filter_map(|(name, args)| Some((name, args.clone(), expand(&args)?))).collect();
    let outputs = par_map(&cases, |(_, _, argv)| Command::new(env!("CARGO_BIN_EXE_wavecast")).current_dir(root()).args(argv).output().unwrap());
    let (mut checked, mut differ) = (0, Vec::new());
    for ((name, args, _), out) in cases.iter().zip(outputs) {
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{name}: stdout is not UTF-8: {e}"));
        // Every case is compared (each failure prints its own diff) before the test fails.
        if catch_unwind(AssertUnwindSafe(|| check(name, args, &stdout))).is_err() {
            differ.push(name.clone());
        }
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} golden commands ran");
    assert!(differ.is_empty(), "output changed for: {} (diffs above; re-bless with WAVECAST_BLESS=1 if deliberate)", differ.join(", "));
}

/// Each snapshot belongs to a command, so a renamed or removed case cannot leave a stale file
/// that nothing checks.
#[test]
fn every_snapshot_has_a_command() {
    let names: Vec<String> = cases().into_iter().map(|(name, _)| name).collect();
    let dir = root().join("tests/golden");
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if let Some(stem) = file.strip_suffix(".snap") {
            assert!(names.iter().any(|n| n == stem), "{file} has no line in commands.txt");
        }
    }
}
