#!/usr/bin/env bash
# Runs the accuracy benchmark for every predictor wavecast ships and writes
# bench/results/accuracy.md (the command, date and git revision are recorded in it).
#   bench/accuracy.sh [DATA_DIR]     (default: ../shared/data/neusight)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-../shared/data/neusight}"
. bench/build.sh
OUT=bench/results
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# The registry's names, in registry order, as `--predictor`'s help lists them.
PREDICTORS=$("$BIN" predict --help | sed -n 's/.*available: \([^)]*\)).*/\1/p' | head -1)
if [ -z "$PREDICTORS" ]; then
  echo "cannot read the predictor names from '$BIN predict --help'" >&2
  exit 1
fi
GPUS="a100-pcie-40gb p100-pcie p4 t4 v100-pcie"
for p in $PREDICTORS; do
  "$BIN" eval e2e --data "$DATA" --predictor "$p" --json > "$TMP/e2e-$p.json" 2>/dev/null || rm -f "$TMP/e2e-$p.json"
  "$BIN" eval e2e --data "$DATA" --predictor "$p" --no-holdout --json > "$TMP/e2e-all-$p.json" 2>/dev/null || rm -f "$TMP/e2e-all-$p.json"
  for g in $GPUS; do
    "$BIN" eval ops --data "$DATA" --test-gpu "$g" --predictor "$p" --json > "$TMP/ops-$p-$g.json" 2>/dev/null || rm -f "$TMP/ops-$p-$g.json"
  done
done
python3 bench/accuracy_report.py "$TMP" "$DATA" "$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)" > "$OUT/accuracy.md"
echo "wrote $OUT/accuracy.md"
