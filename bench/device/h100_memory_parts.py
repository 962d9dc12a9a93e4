"""Where a training step's memory goes in PyTorch eager: for cases of h100_check.py, the memory
allocated with the model and Adam's states alone, after a forward pass without the loss, after
one with the loss, and the peak through backward and the optimizer step (GB, 1e9 bytes).
Writes OUT_DIR/memory_parts.json.

    python3 bench/device/h100_memory_parts.py OUT_DIR
"""

import gc
import json
import sys

import torch

sys.path.insert(0, "bench/device")
import h100_check as check  # noqa: E402

# (case index in CASES, batch)
PARTS = [(1, 4), (1, 8), (0, 4), (2, 8), (5, 4), (6, 4)]


def gb(x):
    return x / 1e9


def parts(case):
    name, args, _, batch, seq, mode, dtype, _ = case
    gc.collect()
    torch.cuda.empty_cache()
    model, opt, step = check.prepare(case)
    step()  # Adam's states now exist; gradients are freed (set_to_none)
    torch.cuda.synchronize()
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device="cuda")
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=(dtype == "amp-bf16"))
    states = torch.cuda.memory_allocated()
    with autocast:
        out = model(input_ids=ids)
    no_loss = torch.cuda.memory_allocated()
    del out
    gc.collect()
    torch.cuda.reset_peak_memory_stats()
    with autocast:
        out = model(input_ids=ids, labels=ids)
    with_loss = torch.cuda.memory_allocated()
    forward_peak = torch.cuda.max_memory_allocated()
    out.loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    result = dict(name=name, wavecast_args=args, states_gb=gb(states),
                  activations_without_loss_gb=gb(no_loss - states), activations_with_loss_gb=gb(with_loss - states),
                  forward_peak_gb=gb(forward_peak), step_peak_gb=gb(peak))
    del out, model, opt, step
    return result


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = False
    results = []
    for index, batch in PARTS:
        case = check.with_batch(check.CASES[index], batch)
        try:
            r = parts(case)
        except torch.OutOfMemoryError as e:
            r = dict(name=case[0], batch=batch, error=str(e)[:200])
        print(json.dumps(r), flush=True)
        results.append(r)
        json.dump(results, open(f"{sys.argv[1]}/memory_parts.json", "w"), indent=1)
