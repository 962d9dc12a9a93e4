"""Markdown report of bench/modern_ops.sh's JSON files: leave-one-GPU-out mean APE per GPU,
source, family and format, the sustained roofline beside the plain roofline, and the issue's
targets and published anchors."""
import datetime
import glob
import json
import os
import sys

tmp, data, rev = sys.argv[1:4]
runs = {}
for path in sorted(glob.glob(os.path.join(tmp, "*.json"))):
    predictor, gpu = os.path.basename(path)[:-5].split("-", 1)
    runs[(predictor, gpu)] = json.load(open(path))

print("# Modern GPUs: per-kernel accuracy, leave one GPU out\n")
print(f"`bench/modern_ops.sh {data}` at {rev}, {datetime.date.today()}. For each GPU, every")
print("measurement of it (all sources, all formats) is predicted by the sustained roofline fitted")
print("on the other GPUs only (`wavecast eval ops --data DIR --test-gpu G --json`), and by the plain")
print("roofline (datasheet peak and bandwidth). Mean APE in %; n = measurements.\n")
print("| GPU | source | family | format | n | sustained mean APE | median | bias | roofline mean APE |")
print("|---|---|---|---|---|---|---|---|---|")
summary = {}
for (predictor, gpu), r in sorted(runs.items()):
    if predictor != "sustained":
        continue
    roof = runs.get(("roofline", gpu), {"sets": {}})
    for source, rows in sorted(r["sets"].items()):
        for e in rows:
            base = next((b for b in roof["sets"].get(source, []) if b["family"] == e["family"] and b["dtype"] == e["dtype"]), None)
            base_ape = f'{base["mean_ape"]:.1f}' if base else "–"
            print(f'| {gpu} | {source} | {e["family"]} | {e["dtype"]} | {e["n"]} | {e["mean_ape"]:.1f} | {e["median_ape"]:.1f} | {e["median_bias"]:+.1f} | {base_ape} |')
            summary.setdefault((source, e["family"], e["dtype"]), []).append((gpu, e["mean_ape"], e["n"]))
    for reason, n in sorted(r.get("unpriced", {}).items()):
        print(f"| {gpu} | – | not priced: {reason} | | {n} | | | | |")

print("\n## Per family: mean over held-out GPUs of each GPU's mean APE\n")
print("| source | family | format | GPUs | mean APE over GPUs | worst GPU |")
print("|---|---|---|---|---|---|")
for (source, family, dtype), v in sorted(summary.items()):
    worst = max(v, key=lambda x: x[1])
    print(f"| {source} | {family} | {dtype} | {len(v)} | {sum(x[1] for x in v) / len(v):.1f} | {worst[0]} {worst[1]:.1f} |")
