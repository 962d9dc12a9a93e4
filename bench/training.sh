#!/usr/bin/env bash
# Training steps against published, measured runs: every row of the shared set
# (../shared/data/training/published_runs.csv) and of the project's own
# (bench/data/training_runs.csv) replayed by `wavecast eval training`, with the default
# predictor and with `sustained` (the modern-GPU kernel model); writes
# bench/results/training_runs.md (per-band tables, rows not replayed) and
# bench/results/training_runs.svg (predicted vs measured tokens/s per GPU). Seconds.
#   bench/training.sh [SHARED_CSV]
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED="${1:-../shared/data/training/published_runs.csv}"
OWN=bench/data/training_runs.csv
. bench/build.sh
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
for p in wavecast sustained; do
    [ -f "$SHARED" ] && "$BIN" eval training --data "$SHARED" --predictor "$p" --json > "$TMP/shared-$p.json"
    "$BIN" eval training --data "$OWN" --predictor "$p" --json > "$TMP/own-$p.json"
done
python3 bench/training_report.py "$TMP" "$SHARED" "$OWN" "$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)" \
    bench/results/training_runs.svg > bench/results/training_runs.md
echo "wrote bench/results/training_runs.md and bench/results/training_runs.svg"
