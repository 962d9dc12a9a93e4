"""Where a measured step's time goes: each named case of h100_check.py run under PyTorch's
profiler for two steps after warm-up; the GPU kernels' total time by name goes to
OUT_DIR/profile_<n>.csv (name, calls, total µs), beside the step's own time.

    python3 bench/device/h100_profile.py OUT_DIR CASE_INDEX [CASE_INDEX ...]
"""

import csv
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, "bench/device")
import h100_check as check  # noqa: E402


def profile_case(index, out):
    case = check.CASES[index]
    model, opt, step = check.prepare(case)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(2):
            step()
        torch.cuda.synchronize()
    totals = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            calls, us = totals.get(e.name, (0, 0.0))
            totals[e.name] = (calls + 1, us + e.device_time)
    with open(f"{out}/profile_{index}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "calls_per_step", "us_per_step"])
        for name, (calls, us) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
            w.writerow([name[:200], calls / 2, us / 2])
    print(case[0], "kernel time per step (ms):", sum(us for _, us in totals.values()) / 2e3, flush=True)
    del model, opt
    torch.cuda.empty_cache()


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for i in sys.argv[2:]:
        try:
            profile_case(int(i), sys.argv[1])
        except Exception as e:
            print("case", i, "failed:", type(e).__name__, str(e)[:300], flush=True)
