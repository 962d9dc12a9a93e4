"""Set what bench/device/h100_check.py measured on a lent GPU beside wavecast's answers.

    python3 bench/device/compare.py RESULTS_DIR [WAVECAST_BINARY] > bench/results/<gpu>_device.md

RESULTS_DIR holds steps.json (and gemm.csv, if the GEMM sample was timed). Each step is priced
with `wavecast predict ... --gpu GPU --json`, the command the measurement names, GPU the catalog
name of the card steps.json says it ran on (h100 or h200).
"""

import csv
import glob
import json
import os
import re
import statistics
import subprocess
import sys

# The profiler's kernel names, sorted into wavecast's op classes (first match wins).
KERNEL_CLASSES = [
    ("fused_attention", r"flash|fmha|sdpa"),
    ("gemm", r"gemm|cutlass|nvjet|xmma|cublas|splitk"),
    ("softmax", r"softmax"),
    ("norm", r"layer_norm|layernorm|rms_?norm"),
    ("optimizer", r"multi_tensor_apply|adam"),
    ("reduction", r"reduce"),
    ("memory", r"copy|cat|memcpy|memset"),
    ("elementwise", r"elementwise|vectorized|unrolled"),
]


# The device names PyTorch reports, and the catalog GPU each one is priced as.
CATALOG = {"NVIDIA H100 80GB HBM3": "h100", "NVIDIA H200": "h200"}
LABEL = {"h100": "H100 SXM", "h200": "H200 SXM"}


def run_predict(binary, gpu, args):
    """`wavecast predict ARGS --gpu GPU --json` as it ran (exit status, both streams)."""
    return subprocess.run([binary, "predict", *args.split(), "--gpu", gpu, "--json"], capture_output=True, text=True)


def predict(binary, gpu, args):
    out = run_predict(binary, gpu, args)
    out.check_returncode()
    return json.loads(out.stdout)


def steps_table(results, binary, gpu):
    print(f"| step (PyTorch eager, {LABEL[gpu]}) | wavecast command | measured ms | predicted ms | error | interval | measured peak GB | predicted GB |")
    print("|---|---|---|---|---|---|---|---|")
    errors = []
    for s in results["steps"]:
        if "error" in s:
            print(f"| {s['name']} | | failed: {s['error']} | | | | | |")
            continue
        p = predict(binary, gpu, s["wavecast_args"])
        ms = p.get("step_ms", p["total_ms"])
        lo, hi = p["interval_ms"]
        err = ms / s["median_ms"] - 1
        errors.append(abs(err))
        inside = "inside" if lo <= s["median_ms"] <= hi else "outside"
        mem = p.get("memory_gb", {}).get("total")
        mem = f"{mem:.1f}" if mem is not None else "-"
        print(f"| {s['name']} | `{s['wavecast_args']}` | {s['median_ms']:.1f} | {ms:.1f} | {100 * err:+.1f} % | {lo:.0f}–{hi:.0f} ({inside}) | {s['peak_gb']:.1f} | {mem} |")
    if errors:
        print(f"\nMean APE over {len(errors)} steps: {100 * statistics.mean(errors):.1f} %.")


def kernel_class(name):
    lower = name.lower()
    return next((c for c, pattern in KERNEL_CLASSES if re.search(pattern, lower)), "other")


def profile_tables(folder, results, binary, gpu):
    """Per op class: the profiled GPU kernel time of a step beside wavecast's class time."""
    for path in sorted(glob.glob(os.path.join(folder, "profile_*.csv"))):
        index = int(re.search(r"profile_(\d+)", path).group(1))
        case = results["steps"][index]
        measured = {}
        for r in csv.DictReader(open(path)):
            c = kernel_class(r["kernel"])
            measured[c] = measured.get(c, 0.0) + float(r["us_per_step"]) / 1e3
        predicted = {c["class"]: c["ms"] for c in predict(binary, gpu, case["wavecast_args"])["classes"]}
        # Eager attention's BMMs are GEMM kernels to the profiler.
        predicted["gemm"] = predicted.get("gemm", 0.0) + predicted.pop("attention_bmm", 0.0)
        print(f"\n{case['name']} (`{case['wavecast_args']}`), GPU kernel time per step by class, ms:\n")
        print("| class | measured | predicted |")
        print("|---|---|---|")
        for c in sorted(set(measured) | set(predicted), key=lambda c: (-measured.get(c, 0.0), c)):
            print(f"| {c} | {measured.get(c, 0.0):.1f} | {predicted.get(c, 0.0):.1f} |")
        print(f"| all | {sum(measured.values()):.1f} | {sum(predicted.values()):.1f} |")


def memory_table(path, binary, gpu):
    """Set-ups near the memory limit: whether each ran, beside what wavecast says of it."""
    print("\n| training step near the limit | measured (PyTorch peak allocated) | wavecast |")
    print("|---|---|---|")
    for r in json.load(open(path)):
        out = run_predict(binary, gpu, r["wavecast_args"])
        if out.returncode == 0:
            m = json.loads(out.stdout)["memory_gb"]
            said = f"fits: {m['total']:.1f} of {m['capacity']:.0f} GB" + (" (close to the limit)" if m["near_limit"] else "")
        else:
            said = "refused: " + out.stderr.split("needs ")[-1].split(" per GPU")[0] + " needed"
        ran = f"ran, {r['peak_allocated_gb']:.1f} GB" if r["ran"] else f"out of memory (at {r['peak_allocated_gb']:.1f} GB)"
        print(f"| `{r['wavecast_args']}` | {ran} | {said} |")


def memory_parts_table(path, binary, gpu):
    """A step's memory in parts, measured (after forward without and with the loss, the step's
    peak) beside wavecast's model states, activations and total."""
    print("\n| step | measured states / activations (no loss) / with loss / peak, GB | wavecast states / activations / total, GB |")
    print("|---|---|---|")
    for r in json.load(open(path)):
        if "error" in r:
            continue
        m = predict(binary, gpu, r["wavecast_args"])["memory_gb"]
        states = m["weights"] + m["gradients"] + m["optimizer_states"] + m["master_weights"]
        print(f"| {r['name']} (`{r['wavecast_args']}`) | {r['states_gb']:.1f} / {r['activations_without_loss_gb']:.1f} / {r['activations_with_loss_gb']:.1f} / {r['step_peak_gb']:.1f} | {states:.1f} / {m['activations']:.1f} / {m['total']:.1f} |")


def gemm_table(path):
    rows = [r for r in csv.DictReader(open(path)) if not r["measured_ms"].startswith("error")]
    print("\n| vLLM 0.24 H100 table re-timed | rows | mean APE | median APE | median (today / table − 1) |")
    print("|---|---|---|---|---|")
    for dtype in sorted({r["gemm_dtype"] for r in rows}):
        err = [float(r["measured_ms"]) / float(r["table_ms"]) - 1 for r in rows if r["gemm_dtype"] == dtype]
        ape = [abs(e) for e in err]
        print(f"| {dtype} | {len(err)} | {100 * statistics.mean(ape):.1f} % | {100 * statistics.median(ape):.1f} % | {100 * statistics.median(err):+.1f} % |")


def main():
    folder = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/wavecast"
    results = json.load(open(os.path.join(folder, "steps.json")))
    info = results["info"]
    if info["gpu"] not in CATALOG:
        sys.exit(f"compare.py: no catalog GPU for {info['gpu']!r} (known: {', '.join(CATALOG)})")
    gpu = CATALOG[info["gpu"]]
    print(f"Measured on {info['gpu']} ({info['sms']} SMs), PyTorch {info['torch']}.\n")
    steps_table(results, binary, gpu)
    profile_tables(folder, results, binary, gpu)
    if os.path.exists(os.path.join(folder, "memory.json")):
        memory_table(os.path.join(folder, "memory.json"), binary, gpu)
    if os.path.exists(os.path.join(folder, "memory_parts.json")):
        memory_parts_table(os.path.join(folder, "memory_parts.json"), binary, gpu)
    if os.path.exists(os.path.join(folder, "gemm.csv")):
        gemm_table(os.path.join(folder, "gemm.csv"))


if __name__ == "__main__":
    main()
