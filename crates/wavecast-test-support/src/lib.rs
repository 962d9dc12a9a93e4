//! What the workspace's tests share (a dev-dependency only): finding the public data sets of
//! `../shared`, which are not part of the checkout, and skipping a test that needs them when
//! they are absent.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The folder that holds the shared data sets: `WAVECAST_SHARED` when set (a missing folder
/// shows what a checkout without the data does), else `shared/` beside the repository.
pub fn shared_root() -> PathBuf {
    // This crate sits at <repo>/crates/wavecast-test-support, so the repository's sibling is
    // three levels up whichever crate's test calls it.
    std::env::var_os("WAVECAST_SHARED").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

/// `<shared>/<sub>`, or `None` when it is absent: the caller then skips, and this says so on
/// stderr. `WAVECAST_TEST_STRICT=1` turns a skip into a failure; `.ci/run` sets it when
/// `../shared` exists, so the data-dependent tests cannot silently stop running.
pub fn shared(sub: &str) -> Option<PathBuf> {
    let path = shared_root().join(sub);
    if path.exists() {
        return Some(path);
    }
    assert!(!strict(), "{} is absent and WAVECAST_TEST_STRICT=1: this test needs the shared data", path.display());
    eprintln!("skipped: {} is absent (the public data sets of ../shared; see the README's first section)", path.display());
    None
}

/// Whether a missing data set fails the test instead of skipping it.
pub fn strict() -> bool {
    std::env::var_os("WAVECAST_TEST_STRICT").is_some_and(|v| v == "1")
}

/// `f` over every item on a few threads (the machine's cores, 2 to 8), answers in the items'
/// order: the command-running tests are mostly process start-up and wait, so they overlap well.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let answers: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let answer = f(item);
                answers.lock().unwrap()[i] = Some(answer);
            });
        }
    });
    answers.into_inner().unwrap().into_iter().map(|a| a.expect("every item was answered")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_answers_every_item_in_order() {
        let items: Vec<u64> = (0..100).collect();
        assert_eq!(par_map(&items, |x| x * x), items.iter().map(|x| x * x).collect::<Vec<_>>());
        assert!(par_map(&[] as &[u64], |x| *x).is_empty());
    }

    #[test]
    fn a_missing_data_set_is_skipped_with_none() {
        if strict() {
            return; // a skip is a failure then, which the assert in `shared` reports
        }
        assert_eq!(shared("no/such/data set for this test"), None);
    }

    #[test]
    fn the_default_root_is_the_repository_sibling() {
        if std::env::var_os("WAVECAST_SHARED").is_some() {
            return;
        }
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
        let root = shared_root();
        assert_eq!(root.file_name().unwrap(), "shared");
        assert_eq!(root.parent().unwrap().canonicalize().unwrap(), repo.parent().unwrap());
    }
}
