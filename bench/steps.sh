#!/usr/bin/env bash
# wavecast's single-GPU training step against whole steps measured on our own lent GPUs
# (data/measurements/<gpu>/physics/train_step.csv: plain-PyTorch Llama, fwd + bwd + grad clip +
# fused AdamW, no recomputation). Llama 3 8B at 4 and 2 layers, a Llama-3.2-1B-shaped model at 16
# and 8 layers; configs are cut from ../shared's Llama 3 8B config. For each GPU: the step as
# wavecast predicts it, and as it predicted it without that GPU's own kernel measurements
# (WAVECAST_MEASURED_WITHOUT=<gpu>: the training kernels then read the nearest other measured
# GPU, transferred through the peaks); the memory the layout model counts (--dp 1) against the
# measured peak of the recipe it models (BF16 compute, FP32 master weights and Adam states: 16
# bytes per parameter, as amp_fp32_master holds them). Prints markdown. Seconds to run.
#   bench/steps.sh [h100 h200]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/build.sh
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 - "$BIN" "$TMP" "${@:-h100 h200}" <<'PY'
import csv, json, os, subprocess, sys
binary, tmp, gpus = sys.argv[1], sys.argv[2], " ".join(sys.argv[3:]).split()
catalog_id = {"h100": "h100-sxm", "h200": "h200"}
base = json.load(open("../shared/data/training/configs/llama3_8b.json"))
shapes = {"llama-8b": {}, "llama-1b": dict(hidden_size=2048, intermediate_size=8192, head_dim=64, tie_word_embeddings=True)}
GB, GIB = 1e9, 2**30

def config(model, layers):
    path = f"{tmp}/{model}-{layers}.json"
    json.dump(dict(base, num_hidden_layers=int(layers), **shapes[model]), open(path, "w"))
    return path

def predict(gpu, model, layers, seq, mb, extra=(), without=None):
    env = dict(os.environ)
    env.pop("WAVECAST_MEASURED_WITHOUT", None)
    if without:
        env["WAVECAST_MEASURED_WITHOUT"] = without
    # The collector steps with torch.optim.AdamW(fused=True).
    args = [binary, "predict", "--config", config(model, layers), "--gpu", gpu, "--mode", "train", "--batch", mb, "--seq", seq, "--fused-optimizer", "--json", *extra]
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1]
    return json.loads(out.stdout), None

pct = lambda p, m: f"{100 * (p - m) / m:+.1f} %"
for name in gpus:
    gpu = catalog_id[name]
    rows = [r for r in csv.DictReader(open(f"data/measurements/{name}/physics/train_step.csv")) if r["step_ms"]]
    by = {(r["model"], r["recipe"], r["layers"], r["seq"], r["micro_batch"]): r for r in rows}
    keys = sorted({(m, l, s, b) for (m, _, l, s, b) in by}, key=lambda k: (k[0], -int(k[1]), int(k[2]), -int(k[3])))
    print(f"\n### {name.upper()} ({gpu})\n")
    print("| model | layers | seq × mb | measured ms (bf16 weights) | measured ms (fp32 master + autocast) | wavecast ms | error vs bf16 | wavecast ms without its own measurements | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    errs, errs_before, mem = [], [], []
    for (model, layers, seq, mb) in keys:
        now, _ = predict(gpu, model, layers, seq, mb)
        before, _ = predict(gpu, model, layers, seq, mb, without=gpu)
        bf16, amp = by.get((model, "pure_bf16", layers, seq, mb)), by.get((model, "amp_fp32_master", layers, seq, mb))
        ms = lambda r: float(r["step_ms"]) if r else None
        cell = lambda v: f"{v:.1f}" if v else "–"
        e = pct(now["total_ms"], ms(bf16)) if bf16 else "–"
        eb = pct(before["total_ms"], ms(bf16)) if bf16 else "–"
        if bf16:
            errs.append(abs(now["total_ms"] / ms(bf16) - 1))
            errs_before.append(abs(before["total_ms"] / ms(bf16) - 1))
        print(f"| {model} | {layers} | {seq} × {mb} | {cell(ms(bf16))} | {cell(ms(amp))} | {now['total_ms']:.1f} | {e} | {before['total_ms']:.1f} | {eb} |")
        if amp:
            layout, err = predict(gpu, model, layers, seq, mb, extra=["--dp", "1"])
            # The single-GPU route reports the same memory object (one memory model).
            single_mem = (now.get("memory_gb") or {}).get("total")
            mem.append((model, layers, seq, mb, float(amp["peak_alloc_gib"]) * GIB / GB, float(amp["peak_reserved_gib"]) * GIB / GB, layout["memory_gb"] if layout else None, single_mem, err))
    if errs:
        print(f"\nmean |error| vs the bf16-weights column: {100 * sum(errs) / len(errs):.1f} % now, {100 * sum(errs_before) / len(errs_before):.1f} % without {name.upper()}'s own measurements ({len(errs)} steps)")
    print("\nMemory (fp32 master weights + autocast, the 16-bytes-per-parameter recipe wavecast counts), GB:\n")
    # wavecast's total counts the caching allocator's slack (in buffers), so it is set beside
    # what the allocator reserved at the peak.
    print("| model | layers | seq × mb | measured peak allocated | measured peak reserved | wavecast total (states · activations · buffers) | vs reserved |")
    print("|---|---|---|---|---|---|---|")
    for (model, layers, seq, mb, alloc, reserved, m, single, err) in mem:
        if m is None:
            print(f"| {model} | {layers} | {seq} × {mb} | {alloc:.1f} | {reserved:.1f} | refused: {err} | – |")
            continue
        assert single == m["total"], f"the single-GPU route says {single} GB, the layout dp1 {m['total']} GB"
        p = m  # the parts sit at the top level of memory_gb
        states = p["weights"] + p["gradients"] + p["optimizer_states"] + p["master_weights"]
        print(f"| {model} | {layers} | {seq} × {mb} | {alloc:.1f} | {reserved:.1f} | {m['total']:.1f} ({states:.1f} · {p['activations']:.1f} · {p['buffers']:.1f}) | {pct(m['total'], reserved)} |")
PY
