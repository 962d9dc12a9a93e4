#!/usr/bin/env bash
# NeuSight's FP32 protocol on a GPU no shipped model saw: our own measurements of it
# (data/measurements/<gpu>/neusight/, see the PROVENANCE.md beside them) joined with the shared
# NeuSight op graphs and per-op tables, then `eval e2e` (13 end-to-end labels) and
# `eval ops --test-gpu <gpu>` (NeuSight's test op shapes timed there). Prints both reports. Seconds.
#   bench/own_fp32.sh h100|h200 [--predictor NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
GPU="${1:?usage: bench/own_fp32.sh h100|h200 [--predictor NAME]}"
shift
. bench/build.sh
NS=../shared/data/neusight
OWN=data/measurements/$GPU/neusight
[ -d "$OWN" ] || { echo "no measurements of $GPU under $OWN" >&2; exit 2; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/e2e" "$TMP/ops/ops/test"
ln -s "$(realpath $NS/opgraph)" "$TMP/e2e/opgraph"
ln -s "$(realpath $NS/ops)" "$TMP/e2e/ops"
ln -s "$(realpath $OWN/label)" "$TMP/e2e/label"
ln -s "$(realpath $NS/opgraph)" "$TMP/ops/opgraph"
ln -s "$(realpath $NS/ops/train)" "$TMP/ops/ops/train"
for f in "$NS"/ops/test/*.csv; do ln -s "$(realpath "$f")" "$TMP/ops/ops/test/"; done
for f in "$OWN"/ops/test/*.csv; do ln -s "$(realpath "$f")" "$TMP/ops/ops/test/${GPU}_$(basename "$f")"; done
rows=$(cat "$OWN"/ops/test/*.csv | grep -vc '^OPName')
labels=$(ls "$OWN"/label/*/*.json | wc -l)
echo "## eval e2e: $labels $GPU FP32 labels"
"$BIN" eval e2e --data "$TMP/e2e" "$@"
echo
echo "## eval ops --test-gpu $GPU: $rows $GPU FP32 op rows"
"$BIN" eval ops --data "$TMP/ops" --test-gpu "$GPU" ${ROWS:+--rows "$ROWS"} "$@"
