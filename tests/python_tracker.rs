//! Runs the PyTorch tracker's own tests (the parts that need no torch) so the README's single
//! test command covers the Python package too.

use std::process::Command;

#[test]
fn python_tracker_unit_tests_pass() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = match Command::new("python3").args(["-m", "unittest", "discover", "-s", "tests"]).current_dir(format!("{root}/python")).output() {
        Ok(o) => o,
        Err(e) => panic!("python3 is needed to test python/: {e}"),
    };
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{log}");
    assert!(log.contains("OK"), "{log}");
}
