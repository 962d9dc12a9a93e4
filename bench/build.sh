# Sourced by the bench scripts (from the repository root): builds the release binary and sets
# BIN to it. Where cargo just built is its own answer, which honours CARGO_TARGET_DIR,
# CARGO_BUILD_TARGET_DIR and a configured build.target-dir, so a stale binary in the default
# ./target is never run instead.
cargo build --release --quiet
BIN="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/wavecast"
