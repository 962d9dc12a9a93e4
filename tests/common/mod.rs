//! What several test files share: finding the public data sets of `../shared`.

use std::path::PathBuf;

/// `../shared/<sub>` beside the repository (the public data sets, not part of the checkout), or
/// `None` when it is absent: the caller then skips, and this says so on stderr. Set
/// `WAVECAST_SHARED` to use another folder (a missing one shows what a checkout without the data
/// does); `WAVECAST_TEST_STRICT=1` turns a skip into a failure, which `.ci/run` sets when
/// `../shared` exists, so the data-dependent tests cannot silently stop running.
pub fn shared(sub: &str) -> Option<PathBuf> {
    let root = std::env::var_os("WAVECAST_SHARED").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let path = root.join(sub);
    if path.exists() {
        return Some(path);
    }
    assert!(std::env::var_os("WAVECAST_TEST_STRICT").is_none_or(|v| v != "1"), "{} is absent and WAVECAST_TEST_STRICT=1: this test needs the shared data", path.display());
    eprintln!("skipped: {} is absent (the public data sets of ../shared; see the README's first section)", path.display());
    None
}
