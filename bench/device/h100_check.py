"""Measure, on a lent H100, what `wavecast predict` answers for it: whole training and inference
steps of small transformers in PyTorch eager (random weights built from configs, nothing
downloaded), and a sample of the shared vLLM H100 GEMM table re-timed with today's PyTorch.

Run on the device machine from the repository root:
    python3 bench/device/h100_check.py OUT_DIR [GEMM_SAMPLE_CSV]
It writes OUT_DIR/steps.json and OUT_DIR/gemm.csv; bench/device/compare.py sets them beside
wavecast's predictions. Each step is the median of timed steps after warm-up steps (CUDA
events); peak memory is PyTorch's max_memory_allocated.
"""

import csv
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, BertConfig, BertForMaskedLM, GPT2Config, LlamaConfig

WARMUP, TIMED = 3, 8


def gpt2(layers, hidden, heads):
    return GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads, n_positions=1024, vocab_size=50257)


LLAMA_3_2_1B = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                    num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True, rope_theta=500000.0,
                    max_position_embeddings=8192)

# (name, wavecast command arguments, config builder, batch, seq, mode, dtype, attention)
CASES = [
    ("gpt2-large fp32 train eager", "--model gpt2-large --batch 4 --seq 1024 --mode train", lambda: gpt2(36, 1280, 20), 4, 1024, "train", "fp32", "eager"),
    ("gpt2-large fp32 train sdpa", "--model gpt2-large --batch 4 --seq 1024 --mode train --attention fused", lambda: gpt2(36, 1280, 20), 4, 1024, "train", "fp32", "sdpa"),
    ("gpt2 fp32 train eager", "--model gpt2 --batch 8 --seq 1024 --mode train", lambda: gpt2(12, 768, 12), 8, 1024, "train", "fp32", "eager"),
    ("bert-large fp32 train eager", "--model bert-large --batch 8 --seq 512 --mode train", None, 8, 512, "train", "fp32", "eager"),
    ("gpt2-large bf16 train sdpa (autocast)", "--model gpt2-large --batch 4 --seq 1024 --mode train --dtype bf16", lambda: gpt2(36, 1280, 20), 4, 1024, "train", "amp-bf16", "sdpa"),
    ("llama-3.2-1b bf16 train sdpa (autocast)", "--model llama-3.2-1b --batch 4 --seq 2048 --mode train", lambda: LlamaConfig(**LLAMA_3_2_1B), 4, 2048, "train", "amp-bf16", "sdpa"),
    ("llama-3.2-1b bf16 train sdpa (bf16 weights)", "--model llama-3.2-1b --batch 4 --seq 2048 --mode train", lambda: LlamaConfig(**LLAMA_3_2_1B), 4, 2048, "train", "bf16", "sdpa"),
    ("llama-3.2-1b bf16 infer sdpa", "--model llama-3.2-1b --batch 8 --seq 2048 --mode infer", lambda: LlamaConfig(**LLAMA_3_2_1B), 8, 2048, "infer", "bf16", "sdpa"),
    ("gpt2-large fp32 infer eager", "--model gpt2-large --batch 4 --seq 1024 --mode infer", lambda: gpt2(36, 1280, 20), 4, 1024, "infer", "fp32", "eager"),
]


def with_batch(case, batch):
    """The case at another batch size, its wavecast command and name saying so."""
    name, args, make, _, seq, mode, dtype, attn = case
    args = args.replace(f"--batch {case[3]}", f"--batch {batch}")
    return (f"{name} batch {batch}", args, make, batch, seq, mode, dtype, attn)


def build(case):
    name, _, make, _, _, _, dtype, attn = case
    if make is None:
        cfg = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
        model = BertForMaskedLM._from_config(cfg, attn_implementation=attn)
    else:
        model = AutoModelForCausalLM.from_config(make(), attn_implementation=attn)
    model = model.cuda()
    if dtype == "bf16":
        model = model.to(torch.bfloat16)
    return model


def prepare(case):
    """The case's model and one step of it (forward, and in training backward and Adam)."""
    _, _, _, batch, seq, mode, dtype, _ = case
    model = build(case)
    # from_config leaves the model in training mode; inference runs without dropout.
    model.train(mode == "train")
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device="cuda")
    opt = torch.optim.Adam(model.parameters(), lr=1e-5) if mode == "train" else None
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=(dtype == "amp-bf16"))

    def step():
        if mode == "train":
            with autocast:
                loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        else:
            with torch.no_grad(), autocast:
                model(input_ids=ids)

    return model, opt, step


def time_case(case):
    name, args, _, batch, seq, mode, dtype, _ = case
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    model, opt, step = prepare(case)
    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(TIMED):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    peak = torch.cuda.max_memory_allocated() / 1e9
    del model, opt
    return dict(name=name, wavecast_args=args, batch=batch, seq=seq, mode=mode, dtype=dtype,
                median_ms=statistics.median(times), min_ms=min(times), max_ms=max(times), peak_gb=peak)


def time_gemms(sample_csv, out_csv):
    rows = list(csv.DictReader(open(sample_csv)))
    reps = 20
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["gemm_dtype", "m", "n", "k", "table_ms", "measured_ms"])
        for r in rows:
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            # torch._scaled_mm wants every dimension a multiple of 16 (vLLM's CUTLASS kernel pads
            # the same way): FP8 rows are timed at m rounded up.
            if r["gemm_dtype"] == "fp8":
                m = -(-m // 16) * 16
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            wt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            if r["gemm_dtype"] == "fp8":
                xa, wb = x.to(torch.float8_e4m3fn), wt.to(torch.float8_e4m3fn).t()
                one = torch.ones((), device="cuda")
                fn = lambda: torch._scaled_mm(xa, wb, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            else:
                fn = lambda: F.linear(x, wt)
            try:
                for _ in range(3):
                    fn()
            except Exception as e:
                w.writerow([r["gemm_dtype"], m, n, k, r["latency"], f"error {type(e).__name__}"])
                continue
            torch.cuda.synchronize()
            # A CUDA graph of back-to-back calls: the kernels' own time, without Python's launch gaps.
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(reps):
                    fn()
            g.replay()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            torch.cuda.synchronize()
            w.writerow([r["gemm_dtype"], m, n, k, r["latency"], a.elapsed_time(b) / reps])
            del g, x, wt


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    info = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, sms=torch.cuda.get_device_properties(0).multi_processor_count)
    print(json.dumps(info), flush=True)
    results = []
    for case in CASES:
        t0 = time.time()
        try:
            r = time_case(case)
        except Exception as e:  # one failing case must not lose the others
            r = dict(name=case[0], error=f"{type(e).__name__}: {e}"[:300])
        r["wall_s"] = round(time.time() - t0, 1)
        print(json.dumps(r), flush=True)
        results.append(r)
        json.dump(dict(info=info, steps=results), open(f"{out}/steps.json", "w"), indent=1)
    if len(sys.argv) > 2:
        t0 = time.time()
        time_gemms(sys.argv[2], f"{out}/gemm.csv")
        print(f"gemms timed in {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
