#!/usr/bin/env bash
# Runtime-based scaling without a GPU (issue 5, part 6): every NeuSight GPU as origin, every
# other as destination, per op class. Writes bench/results/scale_pairs.md.
#
#   bench/scale_pairs.sh [NEUSIGHT_DIR]      (default: ../shared/data/neusight)
#
# Hybrid predictors: the default one plus every learned predictor wavecast ships; learned ones
# are used in their leave-the-destination-out models (the report says which).
set -euo pipefail
cd "$(dirname "$0")/.."
data="${1:-../shared/data/neusight}"
. bench/build.sh
bin="$BIN"
predictors="roofline"
for p in li wavecast; do
    # Only predictors that load (shipped weights) are compared.
    if "$bin" eval pairs --help >/dev/null && "$bin" predict --model gpt2 --gpu t4 --predictor "$p" >/dev/null 2>&1; then
        predictors="$predictors,$p"
    fi
done
mkdir -p bench/results
"$bin" eval pairs --data "$data" --predictor "$predictors" --markdown bench/results/scale_pairs.md
echo "wrote bench/results/scale_pairs.md (predictors: $predictors)"
