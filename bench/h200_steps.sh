#!/usr/bin/env bash
# wavecast's single-GPU training step against whole steps measured on an H200
# (data/measurements/h200/physics/train_step.csv: plain-PyTorch Llama, fwd + bwd + grad clip +
# fused AdamW). Llama 3 8B at 4 and 2 layers, a Llama-3.2-1B-shaped model at 16 and 8 layers;
# configs are cut from ../shared's Llama 3 8B config. Prints a markdown table. Seconds.
#   bench/h200_steps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/build.sh
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 - "$BIN" "$TMP" <<'PY'
import csv, json, subprocess, sys
binary, tmp = sys.argv[1], sys.argv[2]
base = json.load(open("../shared/data/training/configs/llama3_8b.json"))
shapes = {"llama-8b": {}, "llama-1b": dict(hidden_size=2048, intermediate_size=8192, head_dim=64, tie_word_embeddings=True)}
rows = [r for r in csv.DictReader(open("data/measurements/h200/physics/train_step.csv")) if r["step_ms"]]
by = {(r["model"], r["recipe"], r["layers"], r["seq"], r["micro_batch"]): float(r["step_ms"]) for r in rows}
print("| model | layers | seq × micro-batch | measured ms (bf16 weights) | measured ms (fp32 weights + autocast) | wavecast ms | error vs bf16 |")
print("|---|---|---|---|---|---|---|")
for (model, _, layers, seq, mb) in sorted({(m, None, l, s, b) for (m, _, l, s, b) in by}):
    cfg = dict(base, num_hidden_layers=int(layers), **shapes[model])
    path = f"{tmp}/{model}-{layers}.json"
    json.dump(cfg, open(path, "w"))
    out = subprocess.run([binary, "predict", "--config", path, "--gpu", "h200", "--mode", "train", "--batch", mb, "--seq", seq, "--json"], capture_output=True, text=True, check=True)
    ms = json.loads(out.stdout)["total_ms"]
    bf16, amp = by.get((model, "pure_bf16", layers, seq, mb)), by.get((model, "amp_fp32_master", layers, seq, mb))
    err = f"{100 * (ms - bf16) / bf16:+.1f} %" if bf16 else "–"
    cell = lambda v: f"{v:.1f}" if v else "–"
    print(f"| {model} | {layers} | {seq} × {mb} | {cell(bf16)} | {cell(amp)} | {ms:.1f} | {err} |")
PY
