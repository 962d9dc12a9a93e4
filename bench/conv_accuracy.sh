#!/usr/bin/env bash
# Leave-one-GPU-out accuracy of the convolution model shipped in
# crates/wavecast-predict/weights/conv.json on NeuSight's forward-convolution measurements,
# written to bench/results/conv_accuracy.md.
#   bench/conv_accuracy.sh [DATA_DIR] [--retrain]
# --retrain first retrains crates/wavecast-predict/weights/conv.json (seed 7; about 1.5 minutes
# on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-../shared/data/neusight}"
. bench/build.sh
if [ "${2:-}" = "--retrain" ]; then
  "$BIN" eval conv --data "$DATA" --retrain crates/wavecast-predict/weights/conv.json --force --seed 7 > /dev/null
  cargo build --release --quiet
fi
OUT=bench/results/conv_accuracy.md
{
  echo "# Convolution model accuracy"
  echo
  echo "Generated $(date -u +%Y-%m-%d) at git revision \`$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)\` by"
  echo "\`bench/conv_accuracy.sh $DATA\`, i.e. \`wavecast eval conv --data $DATA --markdown\`"
  echo "(weights: \`crates/wavecast-predict/weights/conv.json\`, made by \`wavecast eval conv --data $DATA --retrain crates/wavecast-predict/weights/conv.json --seed 7\`)."
  echo
  "$BIN" eval conv --data "$DATA" --markdown 2>/dev/null
  echo
  cat <<'NOTES'
Methods:
- **conv model**: `crates/wavecast-predict/src/conv.rs` — the roofline bound (direct MACs at the
  GPU's spec peak, bytes at its bandwidth) times exp(per-GPU offset + MLP(shape features)); an
  unmeasured GPU gets the mean offset of the measured GPUs of its architecture, else of all. The
  isolated-call time adds the GPU's fixed per-call cost (its fastest measured convolution).
- **li-style linear**: Li et al.'s transfer form t = α·FLOPs/peak + β·bytes/bandwidth + γ, fitted
  by relative least squares on the three training GPUs.
- **roofline**: max(FLOPs/peak, bytes/bandwidth) plus 4 µs launch; no learning.
- **in-sample**: the all-GPU model on GPUs it was trained on (what a measured GPU gets).

Scope: FP32 forward convolutions without tensor cores on Pascal (P100, P4), Volta (V100) and
Turing (T4), the only convolution measurements available. Backward passes (data and weight
gradients, same MACs and bytes), transposed convolutions (priced as the convolution whose data
gradient they compute), half precision on tensor cores and newer GPUs are predicted by the same
model through the roofline at the relevant peak — extrapolations that these numbers do not cover.
Depthwise-like convolutions (≤ 8 input channels per group) are priced as memory-bound vector
kernels by the wrapped predictor, not by this model.
NOTES
} > "$OUT"
echo "wrote $OUT"
