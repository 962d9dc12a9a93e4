#!/usr/bin/env bash
# Serving under load against NVIDIA AIConfigurator's measured runs: every row of
# silicon_sample.csv replayed by `wavecast eval serving`; writes bench/results/serving.md with
# the summary per group, the error per model and engine, and the rows not predicted.
# A second pass refits the per-op models without each row's GPU (leave-one-GPU-out).
# Also draws docs/serving-ttft.svg (predicted / measured TTFT over concurrency, per engine).
#   bench/serving.sh [CSV] [OPS_DIR]   (defaults: ../shared/data/aiconfigurator/silicon_sample.csv,
#                                       ../shared/data; prints the first pass's wall time)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-../shared/data/aiconfigurator/silicon_sample.csv}"
OPS="${2:-../shared/data}"
. bench/build.sh
# The revision built and run, taken before the run rewrites docs/serving-ttft.svg.
REV="$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# Wall and CPU time (user + system) of the first pass, and how loaded the machine was: on a
# shared machine the wall time says as much about the other jobs as about this one.
LOAD="$(cut -d' ' -f1 /proc/loadavg)"
TIMEFORMAT='%R %U %S'
{ time "$BIN" eval serving --data "$DATA" --json --plot docs/serving-ttft.svg > "$TMP/serving.json" 2> "$TMP/serving.err"; } 2> "$TMP/time"
read -r WALL USER SYS < "$TMP/time"
CPU=$(echo "$USER + $SYS" | bc)
printf 'eval serving (every row, shipped per-op models): %.1f s wall, %.1f s CPU (%.1f user + %.1f system) on %s cores at a load average of %s before it started\n' "$WALL" "$CPU" "$USER" "$SYS" "$(nproc)" "$LOAD"
"$BIN" eval serving --data "$DATA" --ops-data "$OPS" --json > "$TMP/logo.json"
python3 - "$TMP/serving.json" "$DATA" "$REV" "$WALL" "$(nproc)" "$CPU" "$LOAD" > bench/results/serving.md <<'PY'
import collections, datetime, json, statistics, sys
path, data, rev, wall, cores, cpu, load = sys.argv[1:8]
r = json.load(open(path))
logo = json.load(open(path.replace("serving.json", "logo.json")))
rows = r["rows"]
def ape(p, m):
    return 100 * abs(p - m) / m
print("# Serving under load: measured TTFT and TPOT against the simulator\n")
print(f"Generated {datetime.date.today()} at git revision `{rev}` by `bench/serving.sh {data}`")
print("(`wavecast eval serving --data CSV --json`). Every row is replayed with its own model, GPU,")
print("engine, formats, layout, prompt and output length and concurrency, driven as the benchmark")
print("drives it (20 rounds of N requests, simulated with the N users in lockstep and at independent")
print("phases, latencies client_sync of the way toward lockstep on a log scale);")
print("mean TTFT and mean TPOT are")
print("compared with the measured means. `users=` groups are the concurrency bands.")
print("Absolute percentage errors; `ratio` is the median of predicted / measured.\n")
total = len(rows) + len(r["unpredicted"])
print(f"`eval serving` over every row took {float(wall):.1f} s of wall time and {float(cpu):.1f} s of CPU time on {cores} cores")
print(f"(release build; load average {load} when it started: the machine is shared, so the CPU time is the measure).\n")
print(f"{len(rows)} of {total} rows predicted ({100 * len(rows) / total:.0f} %); the rest are listed at the end.\n")
print("| group | rows | TTFT mean | median | p90 | TPOT mean | median | p90 |")
print("|---|---|---|---|---|---|---|---|")
for g in r["summary"]:
    print(f"| {g['group']} | {g['n']} | {g['ttft_mean_ape']:.1f} % | {g['ttft_median_ape']:.1f} % | {g['ttft_p90_ape']:.1f} % | {g['tpot_mean_ape']:.1f} % | {g['tpot_median_ape']:.1f} % | {g['tpot_p90_ape']:.1f} % |")
print("\n## Leave one GPU out\n")
print("The same rows with each row's per-op models refitted without any kernel measurement of its")
print("GPU (`--ops-data ../shared/data`): what a GPU with no measurements of its own would get.\n")
print("| group | rows | TTFT mean | median | p90 | TPOT mean | median | p90 |")
print("|---|---|---|---|---|---|---|---|")
for g in logo["summary"]:
    print(f"| {g['group']} | {g['n']} | {g['ttft_mean_ape']:.1f} % | {g['ttft_median_ape']:.1f} % | {g['ttft_p90_ape']:.1f} % | {g['tpot_mean_ape']:.1f} % | {g['tpot_median_ape']:.1f} % | {g['tpot_p90_ape']:.1f} % |")
print("\n## Per model, system, engine and mode (shipped per-op models)\n")
print("| model | system | engine | mode | rows | TTFT mean APE | TTFT ratio | TPOT mean APE | TPOT ratio |")
print("|---|---|---|---|---|---|---|---|---|")
by = collections.defaultdict(list)
for x in rows:
    by[(x["model"], x["system"], x["backend"], x["mode"])].append(x)
for k, v in sorted(by.items()):
    t = [ape(x["predicted_ttft_ms"], x["measured_ttft_ms"]) for x in v]
    p = [ape(x["predicted_tpot_ms"], x["measured_tpot_ms"]) for x in v]
    tr = statistics.median(x["predicted_ttft_ms"] / x["measured_ttft_ms"] for x in v)
    pr = statistics.median(x["predicted_tpot_ms"] / x["measured_tpot_ms"] for x in v)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {len(v)} | {statistics.mean(t):.1f} % | {tr:.2f} | {statistics.mean(p):.1f} % | {pr:.2f} |")
print("\n## Not predicted\n")
reasons = collections.Counter(u["reason"] for u in r["unpredicted"])
print("| rows | reason |")
print("|---|---|")
for reason, n in reasons.most_common():
    print(f"| {n} | {reason} |")
PY
{
    printf '\n## Where the error is\n\n'
    printf 'Each group'"'"'s share of the summed absolute error and its median predicted / measured ratio\n'
    printf '(`python3 bench/serving_groups.py serving.json %s`, on the first pass).\n\n' "$DATA"
    python3 bench/serving_groups.py "$TMP/serving.json" "$DATA" 10
} >> bench/results/serving.md
echo "wrote bench/results/serving.md"
