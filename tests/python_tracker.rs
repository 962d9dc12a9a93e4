//! Runs the tests of `wavecast.torch` (the PyTorch tracker, python/wavecast/torch/), which need
//! neither torch nor the compiled extension, on the source tree, so the README's single test
//! command covers them. The bindings' own tests (python/tests/test_api.py) need the extension
//! built by maturin and run in `.ci/run`'s Python step.

use std::process::Command;

#[test]
fn python_tracker_unit_tests_pass() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = match Command::new("python3")
        .args(["-m", "unittest", "discover", "-s", "tests", "-p", "test_tracker.py"])
        .current_dir(format!("{root}/python"))
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("python3 is needed to test python/: {e}"),
    };
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{log}");
    assert!(log.contains("OK"), "{log}");
}
