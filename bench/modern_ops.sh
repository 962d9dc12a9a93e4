#!/usr/bin/env bash
# Leave-one-GPU-out per-kernel accuracy on the modern-GPU measurements (AIConfigurator, Vidur,
# PipeWeave): for every GPU with data, the sustained roofline fitted on all other GPUs (every
# source and format of the test GPU left out) and the plain roofline, written to
# bench/results/modern_ops.md (the command, date and git revision are recorded in it).
#   bench/modern_ops.sh [DATA_DIR]     (default: ../shared/data; about 10 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-../shared/data}"
. bench/build.sh
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# Every GPU `wavecast gpus` marks as measured by one of these sources.
GPUS=$("$BIN" gpus --json | python3 -c '
import json, sys
for g in json.load(sys.stdin):
    if set(g.get("measured") or []) & {"aiconfigurator", "vidur", "pipeweave"}:
        print(g["id"])')
for g in $GPUS; do
  echo "leaving out $g" >&2
  for p in sustained roofline; do
    "$BIN" eval ops --data "$DATA" --test-gpu "$g" --predictor "$p" --json > "$TMP/$p-$g.json" 2>/dev/null || rm -f "$TMP/$p-$g.json"
  done
done
python3 bench/modern_ops_report.py "$TMP" "$DATA" "$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)" > bench/results/modern_ops.md
echo "wrote bench/results/modern_ops.md"
