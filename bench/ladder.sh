#!/usr/bin/env bash
# The price ladder against modern GPUs' measured kernels, each GPU left out of everything in
# turn (its tables unused, the transfer ratio and the physics numbers fitted without it), beside
# the naive baselines (copy the most similar measured GPU's time; scale it by the roofline ratio)
# and the physics rung alone; then the measured rung on a held-out tenth of the GPU's own shapes.
# Writes bench/results/ladder.md.
#   bench/ladder.sh [OPS_DIR] [GPU ...]   (defaults: ../shared/data/aiconfigurator and its seven
#                                         systems; about 4 CPU-minutes and 1-2 GB per GPU, the
#                                         GPUs run side by side: LADDER_JOBS, default 4)
set -euo pipefail
cd "$(dirname "$0")/.."
OPS="${1:-../shared/data/aiconfigurator}"
shift || true
GPUS=("$@")
[ ${#GPUS[@]} -eq 0 ] && GPUS=(gb200 b200 rtx-pro-6000-server h100-sxm l40s a100-sxm-80gb arc-pro-b60)
. bench/build.sh
REV="$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)"   # what was built and run
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cp "$BIN" "$TMP/wavecast" && BIN="$TMP/wavecast"   # later builds cannot swap it mid-run
JOBS="${LADDER_JOBS:-4}"
for g in "${GPUS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 5; done
  echo "ladder: $g left out" >&2
  "$BIN" eval ops --data "$OPS" --test-gpu "$g" --predictor ladder --json > "$TMP/$g.json" 2> "$TMP/$g.log" &
done
wait
for g in "${GPUS[@]}"; do
  [ -s "$TMP/$g.json" ] || { echo "ladder: $g failed:" >&2; cat "$TMP/$g.log" >&2; exit 1; }
done
python3 - "$TMP" "$OPS" "$REV" "${GPUS[@]}" > bench/results/ladder.md <<'PY'
import datetime, json, sys
tmp, ops, rev, *gpus = sys.argv[1:]
def across(f):
    return f"{f['across_mape']:.1f} ({f['across_coverage']:.0f})" if f.get("across_mape") is not None else ""
print("# The price ladder, each GPU left out\n")
print(f"Generated {datetime.date.today()} at git revision `{rev}` by `bench/ladder.sh {ops}`")
print("(`wavecast eval ops --data DIR --test-gpu GPU --predictor ladder --json`). Mean APE % per")
print("family and format, averaged over families; `copy` is the most similar measured GPU's time")
print("as is, `roofline ratio` that time times roofline(GPU) / roofline(sibling), `physics` the")
print("sustained roofline refitted without the GPU. The ladder's transfer draws first on GPUs of the")
print("same architecture and compute capability. It scales only the part of the sibling's time above its")
print("table's floor (its fastest time, where the table spans a factor 4 or more): launch and host work,")
print("which no GPU figure scales; a table with a floor of 15 µs or more timed host work, and its transfers")
print("get a host-wide interval. With no such sibling, `across architectures` is the transfer from up to")
print("three measured GPUs of other architectures (each one's time times physics(GPU) / physics(it), the")
print("physics refitted without the GPU); the ladder uses it only for the families where, each GPU left")
print("out, it beat the physics rung (`crates/wavecast-predict/src/ladder/across.rs`), else physics.")
print("Each row is priced as its benchmark ran it, on warm buffers: a transfer is raised at most to the")
print("shape's bound with the bytes that fit in the GPU's L2 read at L2's bandwidth (`Work::warm_bound_seconds`),")
print("and a streaming pass (vector ops, the gated delta rule's decode) is carried across architectures with")
print("each GPU's warm roofline over its DRAM roofline as well.\n")
print("`shipped` is the same ladder from the shipped surfaces (weights/ladder.json, never the left-out GPU's)")
print("instead of the full tables: what a user without the measured-data folder gets.\n")
print("| left out | nearest measured GPU (baselines) | ladder | shipped | copy sibling | roofline ratio | physics | measured rung (held-out tenth) |")
print("|---|---|---|---|---|---|---|---|")
for g in gpus:
    r = json.load(open(f"{tmp}/{g}.json"))
    fams = r["families"]
    sib = sorted({f["main_sibling"] for f in fams})
    measured = [f["mean_ape"] for f in r["measured"]]
    m = sum(measured) / len(measured) if measured else float("nan")
    print(f"| {g} | {', '.join(sib)} | {r['mean_ladder']:.1f} | {r['mean_shipped']:.1f} | {r['mean_copy_sibling']:.1f} | {r['mean_roofline_ratio']:.1f} | {r['mean_physics']:.1f} | {m:.1f} |")
print("\nIntervals: `in interval` is the share of rows whose measured time lies inside the answer's")
print("interval; the target is 80 % (the interval is read as a 10th-90th percentile band).")
print("\n## The measured rung per family (a held-out tenth of each GPU's own shapes; target 3 %)\n")
keys = sorted({(f["family"], f["dtype"]) for g in gpus for f in json.load(open(f"{tmp}/{g}.json"))["measured"]})
print("| family | format | " + " | ".join(gpus) + " |")
print("|---|---|" + "---|" * len(gpus))
measured = {g: {(f["family"], f["dtype"]): f for f in json.load(open(f"{tmp}/{g}.json"))["measured"]} for g in gpus}
for k in keys:
    cells = [f"{measured[g][k]['mean_ape']:.1f} ({measured[g][k]['coverage']:.0f} % in)" if k in measured[g] else "" for g in gpus]
    print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + " |")
print("\nBeside it, another engine's timing of the very same shape on the same GPU taken as the answer")
print("(mean APE over the ordered pairs of two engines' collections, `eval ops` JSON `other_engine_mape`):")
print("what each engine's own tables are worth where the engines run different kernels, and, for BF16")
print("GEMMs (torch's linear, so cuBLAS, in vLLM, SGLang and TensorRT-LLM alike), how far two collections'")
print("timings of one call lie apart, which no interpolation of one collection can beat on the other.\n")
print("| family | format | " + " | ".join(gpus) + " |")
print("|---|---|" + "---|" * len(gpus))
for k in keys:
    cells = [f"{measured[g][k]['other_engine_mape']:.1f} ({measured[g][k]['other_engine_shapes']} shapes)" if k in measured[g] and measured[g][k].get("other_engine_mape") is not None else "" for g in gpus]
    if any(cells):  # collectives: one NCCL table per GPU, no engine's own
        print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + " |")
for g in gpus:
    r = json.load(open(f"{tmp}/{g}.json"))
    print(f"\n## {g}\n")
    print("| family | format | rows | ladder | median | shipped | copy sibling | roofline ratio | physics | across architectures (in interval) | in interval (target 80) | shipped in interval |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for f in r["families"]:
        print(f"| {f['family']} | {f['dtype']} | {f['rows']} | {f['ladder']['mean_ape']:.1f} | {f['ladder']['median_ape']:.1f} | {f['shipped_mape']:.1f} | {f['copy_sibling_mape']:.1f} | {f['roofline_ratio_mape']:.1f} | {f['physics_mape']:.1f} | {across(f)} | {f['coverage']:.0f} | {f['shipped_coverage']:.0f} |")
PY
echo "wrote bench/results/ladder.md" >&2
