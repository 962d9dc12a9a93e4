#!/usr/bin/env bash
# AMD Instinct accuracy (issue 18): MI100 end to end and per op, each predictor's model trained
# without MI100 (leave-one-GPU-out) and, for `wavecast`, the all-GPU model that learned from it;
# the MI250 ROCm trace carried to other GPUs kernel by kernel; and what wavecast predicts, with
# intervals, for the Instinct parts no measurement here covers. Writes bench/results/amd.md
# (the command, date and git revision are recorded in it).
#   bench/amd.sh [NEUSIGHT_DIR] [KINETO_DIR]   (defaults: ../shared/data/neusight, ../shared/data/kineto)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-../shared/data/neusight}"
KINETO="${2:-../shared/data/kineto}"
. bench/build.sh
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
for p in wavecast li neusight pm2lat roofline; do
  "$BIN" eval e2e --data "$DATA" --predictor "$p" --json > "$TMP/e2e-$p.json" 2>/dev/null || rm -f "$TMP/e2e-$p.json"
  "$BIN" eval ops --data "$DATA" --test-gpu mi100 --predictor "$p" --json > "$TMP/ops-$p.json" 2>/dev/null || rm -f "$TMP/ops-$p.json"
done
"$BIN" eval e2e --data "$DATA" --no-holdout --json > "$TMP/e2e-wavecast-all.json"
"$BIN" eval ops --data "$DATA" --test-gpu mi100 --no-holdout --json > "$TMP/ops-wavecast-all.json" 2>/dev/null
"$BIN" scale --trace "$KINETO/mi250_minitoy_train.json.gz" --to mi300x,mi355x,h100 --kernels 14 --json > "$TMP/scale.json"
for g in mi100 mi210 mi250 mi250x mi300x mi325x mi355x; do
  for d in fp32 bf16; do
    "$BIN" predict --model gpt2-large --gpu "$g" --batch 8 --seq 1024 --dtype "$d" --json > "$TMP/predict-$g-$d.json" 2>/dev/null || rm -f "$TMP/predict-$g-$d.json"
  done
done
python3 bench/amd_report.py "$TMP" "$DATA" "$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)" > bench/results/amd.md
echo "wrote bench/results/amd.md"
