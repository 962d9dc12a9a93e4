"""Does a training step wavecast says fits (or refuses) run on the H100? Each case of
h100_check.py's CASES at other batch sizes: two steps, then PyTorch's peak allocated and
reserved memory, or the out-of-memory error. Writes OUT_DIR/memory.json.

    python3 bench/device/h100_memory.py OUT_DIR
"""

import gc
import json
import sys

import torch

sys.path.insert(0, "bench/device")
import h100_check as check  # noqa: E402

# (case index in CASES, batch sizes): around where wavecast's predicted memory crosses 80 GB.
SWEEPS = [(0, [5, 6, 7]), (1, [8, 12, 14, 16]), (5, [8, 9, 10, 11])]


def run(case):
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    free, total = torch.cuda.mem_get_info()
    out = dict(name=case[0], wavecast_args=case[1], batch=case[3], device_total_gb=total / 1e9, free_before_gb=free / 1e9)
    try:
        model, opt, step = check.prepare(case)
        for _ in range(2):
            step()
        torch.cuda.synchronize()
        out.update(ran=True, peak_allocated_gb=torch.cuda.max_memory_allocated() / 1e9, peak_reserved_gb=torch.cuda.max_memory_reserved() / 1e9)
        del model, opt, step
    except torch.OutOfMemoryError as e:
        out.update(ran=False, error=str(e).split("\n")[0][:200], peak_allocated_gb=torch.cuda.max_memory_allocated() / 1e9)
    return out


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = False
    results = []
    for index, batches in SWEEPS:
        for batch in batches:
            r = run(check.with_batch(check.CASES[index], batch))
            print(json.dumps(r), flush=True)
            results.append(r)
            json.dump(results, open(f"{sys.argv[1]}/memory.json", "w"), indent=1)
