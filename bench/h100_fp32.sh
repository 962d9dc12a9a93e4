#!/usr/bin/env bash
# NeuSight's FP32 protocol on a GPU no shipped model saw: our own H100 measurements
# (data/measurements/h100/neusight/, see its PROVENANCE.md) joined with the shared NeuSight op graphs
# and per-op tables, then `eval e2e` (13 end-to-end labels) and `eval ops --test-gpu h100-sxm`
# (1414 op rows). Prints both reports. Seconds.
#   bench/h100_fp32.sh [--predictor NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/build.sh
NS=../shared/data/neusight
OWN=data/measurements/h100/neusight
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/e2e" "$TMP/ops/ops/test"
ln -s "$(realpath $NS/opgraph)" "$TMP/e2e/opgraph"
ln -s "$(realpath $NS/ops)" "$TMP/e2e/ops"
ln -s "$(realpath $OWN/label)" "$TMP/e2e/label"
ln -s "$(realpath $NS/opgraph)" "$TMP/ops/opgraph"
ln -s "$(realpath $NS/ops/train)" "$TMP/ops/ops/train"
for f in "$NS"/ops/test/*.csv; do ln -s "$(realpath "$f")" "$TMP/ops/ops/test/"; done
for f in "$OWN"/ops/test/*.csv; do ln -s "$(realpath "$f")" "$TMP/ops/ops/test/h100_$(basename "$f")"; done
echo "## eval e2e: 13 H100 FP32 labels"
"$BIN" eval e2e --data "$TMP/e2e" "$@"
echo
echo "## eval ops --test-gpu h100-sxm: 1414 H100 FP32 op rows"
"$BIN" eval ops --data "$TMP/ops" --test-gpu h100-sxm "$@"
