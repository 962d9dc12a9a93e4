//! Output stability: every command in `tests/golden/commands.txt` prints exactly the bytes it
//! printed before the library refactor (issue 13). A deliberate change of output regenerates the
//! files with `WAVECAST_BLESS=1 cargo test --release --test golden`.

mod common;

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The command line of one golden file with the shared data folders filled in (relative to the
/// repository root, where the commands run, as paths appear in the output), or `None` when the
/// line needs shared data this checkout does not have.
fn expand(args: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for word in args.split_whitespace() {
        let word = word.replace("{data}", "../shared/data/neusight").replace("{kineto}", "../shared/data/kineto");
        if let Some(sub) = word.strip_prefix("../shared/") {
            common::shared(sub)?;
        }
        out.push(word);
    }
    Some(out)
}

#[test]
fn outputs_are_byte_identical_to_the_golden_files() {
    let dir = root().join("tests/golden");
    let list = std::fs::read_to_string(dir.join("commands.txt")).unwrap();
    let bless = std::env::var_os("WAVECAST_BLESS").is_some();
    let (mut checked, mut differ) = (0, Vec::new());
    for line in list.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (name, args) = line.split_once('\t').expect("name<TAB>arguments");
        let Some(argv) = expand(args) else { continue };
        let out = Command::new(env!("CARGO_BIN_EXE_wavecast")).current_dir(root()).args(&argv).output().unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let file = dir.join(format!("{name}.out"));
        if bless {
            std::fs::write(&file, &out.stdout).unwrap();
        } else if std::fs::read(&file).unwrap() != out.stdout {
            differ.push(name.to_string());
        }
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} golden commands ran");
    assert!(differ.is_empty(), "output changed for: {}", differ.join(", "));
}
