#!/usr/bin/env bash
# One device call on a lent GPU, for what earlier calls left out (issue 34's list): decode attention
# at a sibling's AIConfigurator shapes (aic_attention.py), NeuSight's FP32 protocol (neusight.py:
# end-to-end labels, then per-op), and the whole-step check of bench/device/h100_check.py. Each part
# is time-boxed so a slow one cannot take the others' time; everything lands in one tarball under
# $OUT (the device tool brings back few files). Run from the repository root, with `.collect/`
# carried (tools/collect/README.md says how to make it):
#     tools/collect/device_call.sh          # ~6 min on an H200 (354 s on the lent one)
set -u
R=/tmp/device_call
rm -rf "$R"; mkdir -p "$R/aic" "$R/neusight" "$R/device"
export PYTHONUNBUFFERED=1
T0=$(date +%s)
part() { echo "== $1 at $(( $(date +%s) - T0 )) s"; }
{ nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv; } > "$R/nvidia_smi.txt" 2>&1
part "decode attention"
timeout -k 5 100 python3 tools/collect/aic_attention.py --shapes .collect/gen_attention_shapes.csv --out "$R/aic" --budget-s 70 > "$R/aic/log.txt" 2>&1
tail -3 "$R/aic/log.txt"
part "NeuSight FP32"
timeout -k 5 270 python3 tools/collect/neusight.py --shapes .collect/neusight_shapes.csv --configs .collect/model_configs \
    --out "$R/neusight" --label-box 115 --ops-box 110 > "$R/neusight/log.txt" 2>&1
grep -E "label|ops:" "$R/neusight/log.txt" | tail -16
part "whole steps"
timeout -k 5 175 python3 bench/device/h100_check.py "$R/device" > "$R/device/log.txt" 2>&1
cut -c1-160 "$R/device/log.txt" | tail -11
part "done"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >> "$R/nvidia_smi.txt" 2>&1
tar czf "$OUT/device_call.tgz" -C "$R" .
ls -la "$OUT"
