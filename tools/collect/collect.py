#!/usr/bin/env python3
"""Measure the training physics wavecast models, on one GPU, in one time-boxed run.

Parts (each writes its CSV row by row, so a run cut short still leaves data):
  ceil   bf16 8192^3 GEMM and 4 GiB device copy: the card's ceilings as found
  attn   SDPA attention fwd and fwd+bwd, causal, by backend/head dim/GQA/sequence
  gemm   BF16 vs FP8 (torch._scaled_mm, per-tensor scales) GEMMs of Llama layers
  fp8x   the extra passes of an FP8 recipe: amax, scale+cast, cast+transpose
  launch launch floor and per-kernel gap, eager and in a CUDA graph
  bw     copy/read/write bandwidth 1 MiB .. 4 GiB
  step   whole training steps (fwd, bwd, grad clip, AdamW) of a plain-PyTorch Llama

Units are in the column names. FLOPs of causal attention count the masked half
as not done (fwd = 2*B*Hq*S^2*D, bwd = 2.5x fwd).

Usage: python3 collect.py --out DIR [--parts attn,gemm,...] [--scale 1.0]
       python3 collect.py --out DIR --tiny   (CPU dry run of every code path, tiny shapes)
"""
import argparse
import csv
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

ARGS = None
DEV = "cuda"
T0 = time.time()
LOG = None


def log(msg):
    line = f"[{time.time() - T0:7.1f}s] {msg}"
    print(line, flush=True)
    if LOG:
        LOG.write(line + "\n")
        LOG.flush()


# ---------------------------------------------------------------- timing

def sync():
    if DEV == "cuda":
        torch.cuda.synchronize()


class Timer:
    """Device time of a region: CUDA events on a GPU, the host clock on the CPU dry run."""

    def __init__(self):
        if DEV == "cuda":
            self.a = torch.cuda.Event(enable_timing=True)
            self.b = torch.cuda.Event(enable_timing=True)

    def start(self):
        if DEV == "cuda":
            self.a.record()
        else:
            self.t = time.perf_counter()

    def stop(self):
        if DEV == "cuda":
            self.b.record()
        else:
            self.dt = (time.perf_counter() - self.t) * 1e3

    def ms(self):
        if DEV == "cuda":
            self.b.synchronize()
            return self.a.elapsed_time(self.b)
        return self.dt


def bench_ms(fn, target_s=0.15, min_reps=3, max_reps=40, setup=None):
    """Median of per-call times after a warm-up; reps sized so the whole takes about target_s."""
    if setup:
        setup()
    fn()
    sync()
    t = Timer()
    t.start()
    fn()
    t.stop()
    first = max(t.ms(), 1e-3)
    reps = int(min(max_reps, max(min_reps, target_s * 1e3 / first)))
    times = []
    timers = [Timer() for _ in range(reps)]
    for tm in timers:
        if setup:
            setup()
        tm.start()
        fn()
        tm.stop()
    sync()
    times = [tm.ms() for tm in timers]
    return statistics.median(times), min(times), reps


def loop_ms(fn, n):
    """Average time per call over n back-to-back calls (device busy time plus launch gaps)."""
    fn()
    sync()
    t = Timer()
    t.start()
    for _ in range(n):
        fn()
    t.stop()
    return t.ms() / n


def graph_ms(fn, n, replays=5):
    """Average time per call of n calls captured in one CUDA graph (no host launch cost)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    sync()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    g.replay()
    sync()
    ts = []
    for _ in range(replays):
        t = Timer()
        t.start()
        g.replay()
        t.stop()
        ts.append(t.ms())
    del g
    return statistics.median(ts) / n


class Csv:
    def __init__(self, name, cols):
        self.path = os.path.join(ARGS.out, name)
        self.f = open(self.path, "w", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=cols)
        self.w.writeheader()
        self.rows = []

    def add(self, **row):
        for k, v in row.items():
            if isinstance(v, float):
                row[k] = float(f"{v:.6g}")
        self.w.writerow(row)
        self.f.flush()
        self.rows.append(row)


class Box:
    """A part's time box: stop starting new measurements once its seconds are spent."""

    def __init__(self, name, seconds):
        self.name = name
        self.end = time.time() + seconds * ARGS.scale
        self.skipped = 0

    def ok(self):
        if time.time() < self.end and time.time() < GLOBAL_END:
            return True
        self.skipped += 1
        return False


def free_mem():
    if DEV == "cuda":
        torch.cuda.empty_cache()


def randn(*shape, dtype=torch.bfloat16, requires_grad=False):
    x = torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype)
    if requires_grad:
        x.requires_grad_(True)
    return x


# ---------------------------------------------------------------- env

def part_env():
    with open(os.path.join(ARGS.out, "env.txt"), "w") as f:  # folded into log.txt below (8 files come back)
        f.write(f"date_utc: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
        f.write(f"python: {sys.version.split()[0]}  platform: {platform.platform()}\n")
        f.write(f"torch: {torch.__version__}  cuda: {torch.version.cuda}  cudnn: {torch.backends.cudnn.version()}\n")
        try:
            import triton
            f.write(f"triton: {triton.__version__}\n")
        except Exception as e:  # noqa: BLE001
            f.write(f"triton: missing ({e})\n")
        if DEV == "cuda":
            p = torch.cuda.get_device_properties(0)
            f.write(f"device: {p.name}  sm: {p.major}.{p.minor}  SMs: {p.multi_processor_count}  "
                    f"mem_GiB: {p.total_memory / 2**30:.1f}  L2_MiB: {getattr(p, 'L2_cache_size', 0) / 2**20:.0f}\n")
            for cmd in (["nvidia-smi"],
                        ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
                         "power.limit,temperature.gpu,persistence_mode", "--format=csv"]):
                try:
                    f.write(subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout + "\n")
                except Exception as e:  # noqa: BLE001
                    f.write(f"{cmd[0]} failed: {e}\n")
    path = os.path.join(ARGS.out, "env.txt")
    with open(path) as f:
        for line in f.read().splitlines():
            log("env " + line)
    os.remove(path)


# ---------------------------------------------------------------- ceilings

def part_ceil(out):
    box = Box("ceil", 12)
    n = 8192 if not ARGS.tiny else 256
    a, b = randn(n, n), randn(n, n)
    if box.ok():
        med, mn, reps = bench_ms(lambda: a @ b, target_s=0.3)
        out.add(what="bf16_gemm_8192", size=n, median_ms=med, min_ms=mn, reps=reps,
                rate=2 * n**3 / med / 1e9, rate_unit="TFLOP/s")
    if box.ok():
        fa, fb = randn(n, n).to(torch.float8_e4m3fn), randn(n, n).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=DEV, dtype=torch.float32)
        try:
            med, mn, reps = bench_ms(lambda: torch._scaled_mm(fa, fb, one, one, out_dtype=torch.bfloat16,
                                                              use_fast_accum=True), target_s=0.3)
            out.add(what="fp8_gemm_8192_fastaccum", size=n, median_ms=med, min_ms=mn, reps=reps,
                    rate=2 * n**3 / med / 1e9, rate_unit="TFLOP/s")
        except Exception as e:  # noqa: BLE001
            log(f"fp8 ceiling failed: {e}")
    del a, b
    if box.ok():
        nbytes = (4 << 30) if not ARGS.tiny else (4 << 20)
        src = torch.empty(nbytes, dtype=torch.uint8, device=DEV).random_(0, 255)
        dst = torch.empty_like(src)
        med, mn, reps = bench_ms(lambda: dst.copy_(src), target_s=0.3)
        out.add(what="d2d_copy_4GiB", size=nbytes, median_ms=med, min_ms=mn, reps=reps,
                rate=2 * nbytes / med / 1e6, rate_unit="GB/s (read+write)")
        del src, dst
    free_mem()


# ---------------------------------------------------------------- attention

def sdpa_backends():
    from torch.nn.attention import SDPBackend
    want = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("default", None)]
    if ARGS.tiny:
        want = [("math", SDPBackend.MATH), ("default", None)]
    return want


def run_sdpa(backend, q, k, v, gqa):
    from torch.nn.attention import sdpa_kernel
    if backend is None:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
    with sdpa_kernel([backend]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)


def part_attn(out):
    box = Box("attn", 95)
    tokens = 65536 if not ARGS.tiny else 512
    seqs = [1024, 2048, 4096, 8192, 16384, 32768, 65536] if not ARGS.tiny else [64, 128, 256]
    hq = 32 if not ARGS.tiny else 4
    # (head dim, group size, backends): the full grid where it matters most first
    plan = [(128, 8, ["flash", "cudnn", "default"]), (128, 1, ["flash", "cudnn"]),
            (64, 8, ["flash", "cudnn"]), (64, 1, ["flash"])]
    backends = dict(sdpa_backends())
    if ARGS.tiny:
        plan = [(16, 2, ["math", "default"]), (16, 1, ["math"])]
    for d, group, names in plan:
        for name in names:
            for s in seqs:
                if not box.ok():
                    continue
                b = max(1, tokens // s)
                hkv = hq // group
                fwd_flop = 2.0 * b * hq * s * s * d  # causal: half of 4*B*H*S^2*D
                row = dict(backend=name, head_dim=d, q_heads=hq, kv_heads=hkv, gqa_group=group, seq=s,
                           batch=b, tokens=b * s, fwd_gflop=fwd_flop / 1e9)
                try:
                    q = randn(b, hq, s, d, requires_grad=True)
                    k = randn(b, hkv, s, d, requires_grad=True)
                    v = randn(b, hkv, s, d, requires_grad=True)
                    gqa, note = group > 1, "enable_gqa"
                    be = backends[name]
                    try:
                        with torch.no_grad():
                            run_sdpa(be, q, k, v, gqa)
                    except Exception:  # noqa: BLE001  backend without GQA: expand K/V (same FLOPs)
                        k = k.detach().repeat_interleave(group, dim=1).requires_grad_(True)
                        v = v.detach().repeat_interleave(group, dim=1).requires_grad_(True)
                        gqa, note = False, "kv_expanded"
                    if group == 1:
                        note = "mha"

                    def fwd():
                        with torch.no_grad():
                            run_sdpa(be, q, k, v, gqa)
                    grad = randn(b, hq, s, d)

                    def clear():
                        q.grad = k.grad = v.grad = None

                    def fwdbwd():
                        o = run_sdpa(be, q, k, v, gqa)
                        o.backward(grad)
                    fm, _, fr = bench_ms(fwd, target_s=0.12, max_reps=20)
                    bm, _, br = bench_ms(fwdbwd, target_s=0.25, max_reps=20, setup=clear)
                    row.update(fwd_ms=fm, fwdbwd_ms=bm, bwd_ms=bm - fm, reps=min(fr, br),
                               fwd_tflops=fwd_flop / fm / 1e9,
                               bwd_tflops=2.5 * fwd_flop / max(bm - fm, 1e-6) / 1e9,
                               fwdbwd_tflops=3.5 * fwd_flop / bm / 1e9, note=note)
                    out.add(**row)
                    log(f"attn {name:7s} d={d:3d} g={group} S={s:6d} B={b:3d} fwd {fm:8.3f} ms "
                        f"{row['fwd_tflops']:6.1f} TF/s  fwd+bwd {bm:8.3f} ms {row['fwdbwd_tflops']:6.1f} TF/s")
                except Exception as e:  # noqa: BLE001
                    row.update(note=f"error: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
                    out.add(**row)
                    log(f"attn {name} d={d} g={group} S={s}: {row['note']}")
                finally:
                    q = k = v = grad = None
                    free_mem()
    if box.skipped:
        log(f"attn: {box.skipped} measurements skipped (time box)")


# ---------------------------------------------------------------- GEMMs

LLAMA = {  # name: (hidden, ffn, q_heads, kv_heads, head_dim, vocab, layers)
    "llama-1b": (2048, 8192, 32, 8, 64, 128256, 16),
    "llama-8b": (4096, 14336, 32, 8, 128, 128256, 32),
    "llama-70b": (8192, 28672, 64, 8, 128, 128256, 80),
}


def layer_linears(name):
    h, ffn, hq, hkv, d, _, _ = LLAMA[name]
    return [("qkv", (hq + 2 * hkv) * d, h), ("o", h, hq * d), ("gate_up", 2 * ffn, h), ("down", h, ffn)]


def fp8_operands(m, n, k, op):
    """Operands of one training GEMM in the layouts cuBLASLt's FP8 path needs (A row-major, B column-major).

    fwd   Y[M,N]  = X[M,K]   @ W^T       X e4m3, W e4m3
    dgrad dX[M,K] = dY[M,N]  @ W[N,K]    dY e5m2, W e4m3 (transposed copy)
    wgrad dW[N,K] = dY^T     @ X         dY^T e5m2, X^T e4m3 (transposed copies)
    """
    e4, e5 = torch.float8_e4m3fn, torch.float8_e5m2
    if op == "fwd":
        return randn(m, k).to(e4), randn(n, k).to(e4).t()
    if op == "dgrad":
        return randn(m, n).to(e5), randn(k, n).to(e4).t()
    return randn(n, m).to(e5), randn(k, m).to(e4).t()


def bf16_operands(m, n, k, op):
    if op == "fwd":
        return randn(m, k), randn(n, k).t()
    if op == "dgrad":
        return randn(m, n), randn(n, k)
    return randn(m, n).t(), randn(m, k)


def part_gemm(out):
    box = Box("gemm", 55)
    ms = [4096, 8192, 16384] if not ARGS.tiny else [64]
    one = torch.ones((), device=DEV, dtype=torch.float32)
    models = ["llama-8b", "llama-70b", "llama-1b"]
    for m in ms:
        for model in models:
            for layer, n, k in layer_linears(model):
                if ARGS.tiny:
                    n, k = 64, 32
                for op in ("fwd", "dgrad", "wgrad"):
                    if not box.ok():
                        continue
                    flop = 2.0 * m * n * k
                    row = dict(model=model, layer=layer, op=op, M_tokens=m, N=n, K=k, gflop=flop / 1e9)
                    try:
                        a, b = bf16_operands(m, n, k, op)
                        bm, _, _ = bench_ms(lambda: torch.mm(a, b), target_s=0.06, max_reps=25)
                        del a, b
                        a8, b8 = fp8_operands(m, n, k, op)
                        dtypes = f"{str(a8.dtype)[6:]}x{str(b8.dtype)[6:]}"
                        try:
                            torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16)
                        except Exception:  # noqa: BLE001  no e5m2 operand support: both e4m3
                            a8, b8 = a8.to(torch.float8_e4m3fn), b8.to(torch.float8_e4m3fn)
                            dtypes = "e4m3fnxe4m3fn(fallback)"
                        f8, _, _ = bench_ms(lambda: torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16,
                                                                     use_fast_accum=False),
                                            target_s=0.05, max_reps=25)
                        f8f, _, _ = bench_ms(lambda: torch._scaled_mm(a8, b8, one, one, out_dtype=torch.bfloat16,
                                                                      use_fast_accum=True),
                                             target_s=0.05, max_reps=25)
                        del a8, b8
                        row.update(bf16_ms=bm, fp8_ms=f8, fp8_fastacc_ms=f8f, bf16_tflops=flop / bm / 1e9,
                                   fp8_tflops=flop / f8 / 1e9, fp8_fastacc_tflops=flop / f8f / 1e9,
                                   fp8_speedup=bm / f8, fp8_dtypes=dtypes)
                        out.add(**row)
                        log(f"gemm {model:9s} {layer:7s} {op:5s} M={m:5d} N={n:5d} K={k:5d} bf16 "
                            f"{row['bf16_tflops']:6.1f} fp8 {row['fp8_tflops']:6.1f} (fast "
                            f"{row['fp8_fastacc_tflops']:6.1f}) TF/s x{row['fp8_speedup']:.2f}")
                    except Exception as e:  # noqa: BLE001
                        row.update(fp8_dtypes=f"error: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
                        out.add(**row)
                        log(f"gemm {model} {layer} {op} M={m}: {row['fp8_dtypes']}")
    free_mem()
    if box.skipped:
        log(f"gemm: {box.skipped} measurements skipped (time box)")


def part_fp8x(out):
    """The passes an FP8 recipe adds around each GEMM, unfused as eager PyTorch runs them, and one-pass bounds."""
    box = Box("fp8x", 20)
    shapes = [(4096, 4096), (8192, 4096), (16384, 4096), (16384, 14336), (16384, 8192), (14336, 4096)]
    if ARGS.tiny:
        shapes = [(64, 32)]
    e4 = torch.float8_e4m3fn
    for r, c in shapes:
        if not box.ok():
            continue
        x = randn(r, c)
        scale = torch.full((), 0.5, device=DEV, dtype=torch.float32)
        elems = r * c
        variants = [
            ("amax_abs_then_max", lambda: x.abs().amax(), 2 * elems + 2 * elems + 2 * elems),
            ("amax_inf_norm", lambda: torch.linalg.vector_norm(x, ord=float("inf")), 2 * elems),
            ("scale_then_cast", lambda: (x * scale).to(e4), 2 * elems + 2 * elems + 2 * elems + elems),
            ("cast_only", lambda: x.to(e4), 2 * elems + elems),
            ("cast_then_transpose", lambda: x.to(e4).t().contiguous(), 2 * elems + elems + 2 * elems),
            ("bf16_transpose", lambda: x.t().contiguous(), 4 * elems),
            ("bf16_copy_ref", lambda: x.clone(), 4 * elems),
        ]
        for name, fn, nbytes in variants:
            if not box.ok():
                continue
            try:
                med, _, reps = bench_ms(fn, target_s=0.04, max_reps=30)
                out.add(variant=name, rows=r, cols=c, elems=elems, bytes_moved=nbytes, median_ms=med,
                        gbps=nbytes / med / 1e6, ns_per_elem=med * 1e6 / elems, reps=reps)
            except Exception as e:  # noqa: BLE001
                out.add(variant=name, rows=r, cols=c, elems=elems, note=f"error: {type(e).__name__}: {e}"[:160])
        log(f"fp8x {r}x{c} done")
        del x
    free_mem()


# ---------------------------------------------------------------- launch and bandwidth

def part_launch(out):
    box = Box("launch", 20)
    x = torch.zeros(1, device=DEV)
    n = 5000 if not ARGS.tiny else 50
    if box.ok():
        sync()
        t = time.perf_counter()
        for _ in range(n):
            x.add_(1.0)
        sync()
        out.add(what="eager_tiny_add_host_rate", elems=1, per_op_us=(time.perf_counter() - t) / n * 1e6,
                note="host wall time per back-to-back launch (dispatch + launch)")
    if box.ok():
        out.add(what="eager_tiny_add_device", elems=1, per_op_us=loop_ms(lambda: x.add_(1.0), n) * 1e3,
                note="events around n back-to-back launches")
    if box.ok():
        m = 300 if not ARGS.tiny else 5
        t = time.perf_counter()
        for _ in range(m):
            x.add_(1.0)
            sync()
        out.add(what="eager_tiny_add_sync_roundtrip", elems=1, per_op_us=(time.perf_counter() - t) / m * 1e6,
                note="launch + synchronize, host clock")
    if DEV == "cuda":
        for elems in (1, 4096, 65536, 1 << 20, 1 << 24):
            if not box.ok():
                continue
            y = torch.randn(elems, device=DEV)
            out.add(what="eager_add", elems=elems, per_op_us=loop_ms(lambda: y.add_(1.0), 2000) * 1e3,
                    note="events, back-to-back")
            out.add(what="graph_add", elems=elems, per_op_us=graph_ms(lambda: y.add_(1.0), 1000) * 1e3,
                    note="1000 kernels in one CUDA graph")
        if box.ok():
            try:
                import cupy
                kern = cupy.RawKernel(r'extern "C" __global__ void empty_k() {}', "empty_k")
                stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
                with stream:
                    kern((1,), (32,), ())
                    sync()
                    t = time.perf_counter()
                    for _ in range(n):
                        kern((1,), (32,), ())
                    sync()
                    host = (time.perf_counter() - t) / n * 1e6
                tm = Timer()
                with stream:
                    tm.start()
                    for _ in range(n):
                        kern((1,), (32,), ())
                    tm.stop()
                out.add(what="empty_kernel_cupy_host_rate", elems=0, per_op_us=host, note="cupy RawKernel")
                out.add(what="empty_kernel_cupy_device", elems=0, per_op_us=tm.ms() * 1e3 / n,
                        note="events around n launches")
            except Exception as e:  # noqa: BLE001
                out.add(what="empty_kernel_cupy", note=f"error: {type(e).__name__}: {e}"[:160])
        if box.ok():
            try:
                import triton
                import triton.language as tl

                @triton.jit
                def empty_t(p):
                    pass
                empty_t[(1,)](x)
                out.add(what="empty_kernel_triton_device", elems=0,
                        per_op_us=loop_ms(lambda: empty_t[(1,)](x), 2000) * 1e3, note="events; triton launcher")
                out.add(what="empty_kernel_triton_graph", elems=0,
                        per_op_us=graph_ms(lambda: empty_t[(1,)](x), 1000) * 1e3, note="1000 in one CUDA graph")
                del tl
            except Exception as e:  # noqa: BLE001
                out.add(what="empty_kernel_triton", note=f"error: {type(e).__name__}: {e}"[:160])
    for r in out.rows:
        if "per_op_us" in r:
            log(f"launch {r['what']:32s} elems={r['elems']:>9} {r['per_op_us']:9.2f} us")


def part_bw(out):
    box = Box("bw", 25)
    sizes = [1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30, 4 << 30]
    if ARGS.tiny:
        sizes = [1 << 16, 1 << 20]
    for nbytes in sizes:
        if not box.ok():
            continue
        nbuf = max(1, min(256, (256 << 20) // nbytes)) if not ARGS.tiny else 2
        srcs = [torch.empty(nbytes // 4, device=DEV, dtype=torch.float32).normal_() for _ in range(nbuf)]
        dsts = [torch.empty_like(srcs[0]) for _ in range(nbuf)]
        idx = [0]

        def rot():
            idx[0] = (idx[0] + 1) % nbuf
            return idx[0]

        ops = [("copy", lambda: dsts[rot()].copy_(srcs[idx[0]]), 2 * nbytes),
               ("read_sum", lambda: srcs[rot()].sum(), nbytes),
               ("write_fill", lambda: dsts[rot()].fill_(1.5), nbytes)]
        reps = max(20, min(2000, (4 << 30) // nbytes))
        for name, fn, moved in ops:
            ms = loop_ms(fn, reps)
            row = dict(op=name, size_bytes=nbytes, rotating_buffers=nbuf, eager_us=ms * 1e3,
                       eager_gbps=moved / ms / 1e6)
            if DEV == "cuda" and nbytes <= (64 << 20):
                gm = graph_ms(fn, min(reps, 200))
                row.update(graph_us=gm * 1e3, graph_gbps=moved / gm / 1e6)
            out.add(**row)
            log(f"bw {name:10s} {nbytes / 2**20:8.0f} MiB eager {row['eager_gbps']:8.0f} GB/s"
                + (f" graph {row['graph_gbps']:8.0f} GB/s" if "graph_gbps" in row else ""))
        del srcs, dsts
        free_mem()


# ---------------------------------------------------------------- training steps

class Rope:
    def __init__(self, s, d, base=500000.0):
        inv = 1.0 / (base ** (torch.arange(0, d, 2, device=DEV, dtype=torch.float32) / d))
        f = torch.outer(torch.arange(s, device=DEV, dtype=torch.float32), inv)
        emb = torch.cat([f, f], dim=-1)
        self.cos, self.sin = emb.cos().to(torch.bfloat16), emb.sin().to(torch.bfloat16)

    def __call__(self, x):
        half = x.shape[-1] // 2
        rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * self.cos + rot * self.sin


GQA_NATIVE = [True]


def probe_gqa():
    """Whether the flash backend takes GQA directly; if not, the model expands K/V as older code did."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if ARGS.tiny:
        return
    q, k = randn(1, 8, 256, 128), randn(1, 2, 256, 128)
    try:
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(q, k, k, is_causal=True, enable_gqa=True)
    except Exception as e:  # noqa: BLE001
        GQA_NATIVE[0] = False
        log(f"flash SDPA refuses enable_gqa ({type(e).__name__}): the step model expands K/V")


class Block(torch.nn.Module):
    def __init__(self, h, ffn, hq, hkv, d):
        super().__init__()
        self.hq, self.hkv, self.d = hq, hkv, d
        self.n1 = torch.nn.RMSNorm(h)
        self.n2 = torch.nn.RMSNorm(h)
        self.qkv = torch.nn.Linear(h, (hq + 2 * hkv) * d, bias=False)
        self.o = torch.nn.Linear(hq * d, h, bias=False)
        self.gate_up = torch.nn.Linear(h, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, h, bias=False)

    def forward(self, x, rope):
        b, s, _ = x.shape
        qkv = self.qkv(self.n1(x))
        q, k, v = qkv.split([self.hq * self.d, self.hkv * self.d, self.hkv * self.d], dim=-1)
        q = rope(q.view(b, s, self.hq, self.d).transpose(1, 2))
        k = rope(k.view(b, s, self.hkv, self.d).transpose(1, 2))
        v = v.view(b, s, self.hkv, self.d).transpose(1, 2)
        if self.hq != self.hkv and not GQA_NATIVE[0]:
            k = k.repeat_interleave(self.hq // self.hkv, dim=1)
            v = v.repeat_interleave(self.hq // self.hkv, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.hq != self.hkv and GQA_NATIVE[0])
        x = x + self.o(a.transpose(1, 2).reshape(b, s, self.hq * self.d))
        g, u = self.gate_up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class Llama(torch.nn.Module):
    def __init__(self, h, ffn, hq, hkv, d, vocab, layers, tied):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, h)
        self.blocks = torch.nn.ModuleList([Block(h, ffn, hq, hkv, d) for _ in range(layers)])
        self.norm = torch.nn.RMSNorm(h)
        self.head = torch.nn.Linear(h, vocab, bias=False)
        if tied:
            self.head.weight = self.emb.weight
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.normal_(p, std=0.02)

    def forward(self, tok, rope):
        x = self.emb(tok)
        for blk in self.blocks:
            x = blk(x, rope)
        return self.head(self.norm(x))


def step_flops(cfg, layers, seq, tokens):
    """Model FLOPs per step: 6 per parameter-token of every matmul (lm head included) + causal attention."""
    h, ffn, hq, hkv, d, vocab, _ = cfg
    per_layer = h * (hq + 2 * hkv) * d + hq * d * h + 3 * h * ffn
    matmul_params = layers * per_layer + h * vocab
    attn = layers * 6 * 2 * hq * d * seq * tokens / 2  # fwd 4*S*d per token per head, causal half, x3 fwd+bwd
    return 6.0 * matmul_params * tokens + attn, matmul_params


def part_step(out):
    box = Box("step", ARGS.step_box)
    probe_gqa()
    out.add(model="-", recipe="probe", note=f"flash SDPA takes enable_gqa: {GQA_NATIVE[0]}")
    plan = []  # (model, layers, seq, micro_batch, tied, recipe)
    recipes = ARGS.step_recipes.split(",")
    shapes = [tuple(int(v) for v in x.split("x")) for x in ARGS.step_shapes.split(",")]
    for recipe in recipes:
        for seq, mb in shapes:
            plan += [("llama-1b", 16, seq, mb, True, recipe), ("llama-1b", 8, seq, mb, True, recipe),
                     ("llama-8b", 4, seq, mb, False, recipe), ("llama-8b", 2, seq, mb, False, recipe)]
    if ARGS.tiny:
        plan = [("tiny", 2, 64, 2, True, "amp_fp32_master"), ("tiny", 1, 64, 2, True, "amp_fp32_master"),
                ("tiny", 2, 64, 1, False, "pure_bf16")]
        LLAMA["tiny"] = (64, 128, 4, 2, 16, 1000, 2)
    for model, layers, seq, mb, tied, recipe in plan:
        if not box.ok():
            continue
        cfg = LLAMA[model]
        h, ffn, hq, hkv, d, vocab, _ = cfg
        row = dict(model=model, recipe=recipe, layers=layers, seq=seq, micro_batch=mb, tokens=seq * mb)
        net = opt = None
        try:
            if DEV == "cuda":
                torch.cuda.reset_peak_memory_stats()
            with torch.device(DEV):  # build and initialise on the device: fast even for billions of weights
                net = Llama(h, ffn, hq, hkv, d, vocab, layers, tied)
            if recipe == "pure_bf16":
                net = net.to(torch.bfloat16)
            params = sum(p.numel() for p in net.parameters())
            opt = torch.optim.AdamW(net.parameters(), lr=1e-4, weight_decay=0.1, fused=DEV == "cuda")
            rope = Rope(seq, d)
            tok = torch.randint(0, vocab, (mb, seq + 1), device=DEV)
            inp, tgt = tok[:, :-1], tok[:, 1:]
            tms = [Timer() for _ in range(5)]
            use_amp = recipe == "amp_fp32_master"

            def step(timed):
                if timed:
                    tms[0].start()
                with torch.autocast(device_type=DEV, dtype=torch.bfloat16, enabled=use_amp):
                    logits = net(inp, rope)
                    loss = F.cross_entropy(logits.view(-1, vocab).float(), tgt.reshape(-1))
                if timed:
                    tms[0].stop()
                    tms[1].start()
                loss.backward()
                if timed:
                    tms[1].stop()
                    tms[2].start()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0, foreach=True)
                if timed:
                    tms[2].stop()
                    tms[3].start()
                opt.step()
                opt.zero_grad(set_to_none=True)
                if timed:
                    tms[3].stop()

            for _ in range(2):
                step(False)
            sync()
            phases = {"fwd": [], "bwd": [], "clip": [], "opt": [], "step": []}
            reps = 6 if not ARGS.tiny else 2
            for _ in range(reps):
                whole = Timer()
                whole.start()
                step(True)
                whole.stop()
                sync()
                for i, name in enumerate(("fwd", "bwd", "clip", "opt")):
                    phases[name].append(tms[i].ms())
                phases["step"].append(whole.ms())
            med = {k: statistics.median(v) for k, v in phases.items()}
            flops, mparams = step_flops(cfg, layers, seq, seq * mb)
            row.update(params=params, matmul_params=mparams, fwd_ms=med["fwd"], bwd_ms=med["bwd"],
                       clip_ms=med["clip"], opt_ms=med["opt"], step_ms=med["step"],
                       tokens_per_s=seq * mb / med["step"] * 1e3, model_tflop=flops / 1e12,
                       achieved_tflops=flops / med["step"] / 1e9,
                       peak_alloc_gib=(torch.cuda.max_memory_allocated() / 2**30) if DEV == "cuda" else 0.0,
                       peak_reserved_gib=(torch.cuda.max_memory_reserved() / 2**30) if DEV == "cuda" else 0.0,
                       reps=reps)
            out.add(**row)
            log(f"step {model:8s} {recipe:15s} L={layers:2d} S={seq:5d} mb={mb} step {med['step']:8.2f} ms "
                f"(fwd {med['fwd']:.1f} bwd {med['bwd']:.1f} clip {med['clip']:.2f} opt {med['opt']:.2f}) "
                f"{row['tokens_per_s']:9.0f} tok/s {row['achieved_tflops']:6.1f} TF/s mem {row['peak_alloc_gib']:.1f} GiB")
        except Exception as e:  # noqa: BLE001
            row.update(note=f"error: {type(e).__name__}: {str(e).splitlines()[0][:140]}")
            out.add(**row)
            log(f"step {model} L={layers} S={seq}: {row['note']}")
        finally:
            net = opt = None
            free_mem()
    if box.skipped:
        log(f"step: {box.skipped} configurations skipped (time box)")


# ---------------------------------------------------------------- summary

def summary(files):
    print("\n==== summary ====")
    ceil, attn, gemm, fp8x, launch, bw, step = files
    for r in ceil.rows:
        print(f"ceil  {r['what']:26s} {r.get('rate', 0):9.1f} {r.get('rate_unit', '')}")
    for r in attn.rows:
        if "fwd_tflops" in r and r["seq"] in (1024, 4096, 16384, 65536) and r.get("fwd_tflops"):
            print(f"attn  {r['backend']:7s} d={r['head_dim']:3d} g={r['gqa_group']} S={r['seq']:6d} "
                  f"fwd {r['fwd_tflops']:6.1f} fwd+bwd {r['fwdbwd_tflops']:6.1f} TF/s")
    for r in gemm.rows:
        if r.get("bf16_tflops") and r["op"] == "fwd" and r["M_tokens"] == 8192:
            print(f"gemm  {r['model']:9s} {r['layer']:7s} M=8192 bf16 {r['bf16_tflops']:6.1f} fp8 "
                  f"{r['fp8_tflops']:6.1f} TF/s x{r['fp8_speedup']:.2f}")
    for r in fp8x.rows:
        if r.get("gbps") and r["rows"] == 16384 and r["cols"] == 4096:
            print(f"fp8x  {r['variant']:22s} 16384x4096 {r['median_ms'] * 1e3:8.1f} us {r['gbps']:7.0f} GB/s")
    for r in launch.rows:
        if r.get("per_op_us") is not None:
            print(f"launch {r['what']:30s} elems={r['elems']:>9} {r['per_op_us']:8.2f} us")
    for r in bw.rows:
        print(f"bw    {r['op']:10s} {r['size_bytes'] / 2**20:7.0f} MiB {r['eager_gbps']:7.0f} GB/s"
              + (f" graph {r['graph_gbps']:7.0f}" if r.get("graph_gbps") else ""))
    by = {(r["model"], r["recipe"], r["layers"], r["seq"], r["micro_batch"]): r for r in step.rows if r.get("step_ms")}
    for (model, recipe, layers, seq, mb), r in sorted(by.items()):
        print(f"step  {model:8s} {recipe:15s} L={layers:2d} S={seq:5d} mb={mb} {r['step_ms']:8.1f} ms "
              f"{r['tokens_per_s']:8.0f} tok/s {r['achieved_tflops']:6.1f} TF/s {r['peak_alloc_gib']:.1f} GiB")
    for (model, recipe, layers, seq, mb), r in sorted(by.items()):
        for (m2, r2, l2, s2, b2), other in by.items():
            if (m2, r2, s2, b2) == (model, recipe, seq, mb) and l2 < layers:
                per = (r["step_ms"] - other["step_ms"]) / (layers - l2)
                print(f"layer {model:8s} {recipe:15s} S={seq:5d} mb={mb} per-layer step {per:7.2f} ms "
                      f"(L{layers}-L{l2}); outside layers {r['step_ms'] - layers * per:7.2f} ms")


def main():
    global ARGS, DEV, LOG, GLOBAL_END
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--parts", default="ceil,attn,gemm,fp8x,step,launch,bw")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every part's time box")
    ap.add_argument("--budget", type=float, default=375.0, help="seconds for the whole run")
    ap.add_argument("--step-recipes", default="amp_fp32_master,pure_bf16")
    ap.add_argument("--step-shapes", default="2048x2,16384x1,2048x1", help="SEQxMICROBATCH list")
    ap.add_argument("--step-box", type=float, default=140.0)
    ap.add_argument("--tiny", action="store_true", help="CPU dry run with tiny shapes")
    ARGS = ap.parse_args()
    GLOBAL_END = T0 + ARGS.budget
    os.makedirs(ARGS.out, exist_ok=True)
    DEV = "cpu" if ARGS.tiny else "cuda"
    LOG = open(os.path.join(ARGS.out, "log.txt"), "w")
    torch.manual_seed(0)
    if DEV == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    files = (
        Csv("ceilings.csv", ["what", "size", "median_ms", "min_ms", "reps", "rate", "rate_unit"]),
        Csv("attention.csv", ["backend", "head_dim", "q_heads", "kv_heads", "gqa_group", "seq", "batch", "tokens",
                              "fwd_gflop", "fwd_ms", "fwdbwd_ms", "bwd_ms", "fwd_tflops", "bwd_tflops",
                              "fwdbwd_tflops", "reps", "note"]),
        Csv("gemm.csv", ["model", "layer", "op", "M_tokens", "N", "K", "gflop", "bf16_ms", "fp8_ms", "fp8_fastacc_ms",
                         "bf16_tflops", "fp8_tflops", "fp8_fastacc_tflops", "fp8_speedup", "fp8_dtypes"]),
        Csv("fp8_passes.csv", ["variant", "rows", "cols", "elems", "bytes_moved", "median_ms", "gbps",
                               "ns_per_elem", "reps", "note"]),
        Csv("launch.csv", ["what", "elems", "per_op_us", "note"]),
        Csv("bandwidth.csv", ["op", "size_bytes", "rotating_buffers", "eager_us", "eager_gbps", "graph_us",
                              "graph_gbps"]),
        Csv("train_step.csv", ["model", "recipe", "layers", "seq", "micro_batch", "tokens", "params",
                               "matmul_params", "fwd_ms", "bwd_ms", "clip_ms", "opt_ms", "step_ms", "tokens_per_s",
                               "model_tflop", "achieved_tflops", "peak_alloc_gib", "peak_reserved_gib", "reps",
                               "note"]),
    )
    parts = {"ceil": lambda: part_ceil(files[0]), "attn": lambda: part_attn(files[1]),
             "gemm": lambda: part_gemm(files[2]), "fp8x": lambda: part_fp8x(files[3]),
             "launch": lambda: part_launch(files[4]), "bw": lambda: part_bw(files[5]),
             "step": lambda: part_step(files[6])}
    try:
        part_env()
    except Exception:  # noqa: BLE001
        log("env failed:\n" + traceback.format_exc())
    for name in ARGS.parts.split(","):
        log(f"--- part {name}")
        try:
            parts[name]()
        except Exception:  # noqa: BLE001
            log(f"part {name} failed:\n" + traceback.format_exc())
            free_mem()
    summary(files)
    log(f"done in {time.time() - T0:.0f} s")


GLOBAL_END = 0.0

if __name__ == "__main__":
    main()
