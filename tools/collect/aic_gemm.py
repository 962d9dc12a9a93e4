#!/usr/bin/env python3
"""Time BF16 and FP8 (per-tensor scaled) GEMMs on the local GPU on an AIConfigurator-like grid
and write them in AIConfigurator's gemm_perf.parquet layout.

Each shape: fresh random inputs, a CUDA graph capturing REPLAYS back-to-back launches, the graph
replayed after warm-up, wall time by CUDA events / REPLAYS, the median of REPEATS such replays
(AIConfigurator's collector also captures its GEMM in a CUDA graph and averages over the runs).
BF16: torch.nn.functional.linear(x[m,k], w[n,k]) (cuBLAS); FP8: torch._scaled_mm(x_fp8[m,k],
w_fp8[n,k].t(), per-tensor float32 scales, out bf16) (cuBLASLt), AIConfigurator's 'fp8'.
Usage: python3 aic_gemm.py --out DIR [--budget-s 170] [--dry-run]
"""
import argparse, json, os, subprocess, sys, time

from graph_timing import replay_median_ms

M = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
# (n, k) of current models' linear layers (Llama-3 8B/70B, Mistral, DeepSeek-V3, Qwen).
NK = [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336), (14336, 4096), (1024, 4096),
      (4096, 1024), (8192, 8192), (57344, 8192), (8192, 28672), (10240, 8192), (7168, 2048),
      (2048, 7168), (18432, 7168), (7168, 18432), (24576, 1536)]
DTYPES = ["bfloat16", "fp8"]
REPLAYS = 10
REPEATS = 5
# H100 vLLM collection's kernel_source names, so the ladder matches libraries (see PROVENANCE).
KSRC = {"bfloat16": "torch.nn.functional.linear", "fp8": "CutlassFP8ScaledMMLinearKernel"}


def grid():
    g = [(d, m, n, k) for d in DTYPES for (n, k) in NK for m in M]
    # cheapest first within each dtype so a time-box cut loses only the largest shapes
    return sorted(g, key=lambda s: (s[1] * s[2] * s[3], s[0]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=170.0)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated subset of bfloat16,fp8")
    ap.add_argument("--fp8-mode", choices=["bare", "dynquant"], default="bare",
                    help="bare: the FP8 GEMM alone on pre-quantized inputs; dynquant: also quantize the BF16 "
                         "activation per tensor (amax/448) inside the timed graph, as vLLM's FP8 linear does per call")
    a = ap.parse_args()
    g = [s for s in grid() if s[0] in a.dtypes.split(",")]
    flops = sum(2 * m * n * k for _, m, n, k in g)
    print(f"{len(g)} shapes, {flops/1e12:.1f} TFLOP per pass; at ~600 TFLOP/s x {REPLAYS*(REPEATS+2)} launches "
          f"~{flops*REPLAYS*(REPEATS+2)/600e12:.1f} s of GEMM time")
    if a.dry_run:
        return
    import torch
    import pyarrow as pa, pyarrow.parquet as pq
    os.makedirs(a.out, exist_ok=True)
    dev = torch.cuda.get_device_name(0)
    meta = {"device": dev, "torch": torch.__version__, "cuda": torch.version.cuda,
            "cublas": None, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "replays": REPLAYS, "fp8_mode": a.fp8_mode, "repeats": REPEATS, "command": " ".join(sys.argv)}
    try:
        meta["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit,memory.total",
                                             "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:
        meta["nvidia_smi"] = repr(e)
    print(json.dumps(meta), flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    fp8 = torch.float8_e4m3fn
    rows, notes = [], []
    t0 = time.time()
    stream = torch.cuda.Stream()
    for i, (d, m, n, k) in enumerate(g):
        if time.time() - t0 > a.budget_s:
            notes.append(f"time box hit at shape {i}/{len(g)}")
            print(notes[-1], flush=True)
            break
        try:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            if d == "bfloat16":
                fn = lambda: torch.nn.functional.linear(x, w)
            else:
                xq, wq = x.to(fp8), w.to(fp8)
                sa = torch.tensor(0.5, device="cuda", dtype=torch.float32)
                sb = torch.tensor(0.25, device="cuda", dtype=torch.float32)
                wt = wq.t()
                if a.fp8_mode == "bare":
                    fn = lambda: torch._scaled_mm(xq, wt, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
                else:
                    def fn():
                        s = x.abs().amax().float() / 448.0
                        q = (x / s).to(fp8)
                        return torch._scaled_mm(q, wt, scale_a=s, scale_b=sb, out_dtype=torch.bfloat16)
            # warm up (cuBLAS heuristics, workspace) outside the graph
            with torch.cuda.stream(stream):
                for _ in range(3):
                    fn()
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                for _ in range(REPLAYS):
                    fn()
            ms = replay_median_ms(torch, graph, REPLAYS, REPEATS)
            rows.append({"framework": "torch", "version": torch.__version__.split("+")[0], "device": dev, "op_name": "gemm",
                         "kernel_source": KSRC[d], "gemm_dtype": d, "m": m, "n": n, "k": k, "latency": ms})
            del graph
        except Exception as e:
            notes.append(f"{d} m={m} n={n} k={k}: {type(e).__name__}: {str(e)[:200]}")
            print(notes[-1], flush=True)
        if i % 40 == 0:
            print(f"{i}/{len(g)} {time.time()-t0:.1f}s {d} {m}x{n}x{k}", flush=True)
    meta["elapsed_s"] = round(time.time() - t0, 1)
    meta["rows"] = len(rows)
    meta["notes"] = notes
    cols = {c: [r[c] for r in rows] for c in ["framework", "version", "device", "op_name", "kernel_source", "gemm_dtype", "m", "n", "k", "latency"]}
    schema = pa.schema([("framework", pa.string()), ("version", pa.string()), ("device", pa.string()), ("op_name", pa.string()),
                        ("kernel_source", pa.string()), ("gemm_dtype", pa.string()), ("m", pa.int64()), ("n", pa.int64()),
                        ("k", pa.int64()), ("latency", pa.float64())])
    pq.write_table(pa.table(cols, schema=schema), os.path.join(a.out, "gemm_perf.parquet"))
    with open(os.path.join(a.out, "gemm_perf.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in cols) + "\n")
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"done: {len(rows)} rows in {meta['elapsed_s']} s, {len(notes)} notes", flush=True)


if __name__ == "__main__":
    main()
