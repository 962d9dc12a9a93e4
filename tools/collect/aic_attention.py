#!/usr/bin/env python3
"""Time attention on the local GPU at the shapes of an AIConfigurator attention table and write them
in that table's layout (`<phase>_attention_perf.parquet`), so `wavecast eval ops` reads them as an
AIConfigurator system and sets them beside a sibling's table.

`--phase generation` (decode): one new token per sequence attends to a BF16 KV cache of `step + 1`
tokens: PyTorch's scaled_dot_product_attention with q [batch, heads, 1, head_dim] and k, v [batch,
kv_heads, step + 1, head_dim]. `--phase context` (prefill): `isl` tokens per sequence attend
causally to themselves, q [batch, heads, isl, head_dim], k, v [batch, kv_heads, isl, head_dim].
Grouped-query heads are shared (`enable_gqa`); the phase's backends are tried in order (the first
that runs is timed and named in `kernel_source`: FlashAttention first for decode, cuDNN's first for
prefill, the faster of PyTorch's on Hopper). The cache is contiguous, not paged as the engines keep it. Timing as tools/collect/aic_gemm.py: a CUDA graph of REPLAYS back-to-back calls,
the median of REPEATS replays over CUDA events, divided by REPLAYS. Fresh random inputs per shape.
Several caches are rotated in the graph when one would fit in L2, so each call reads from memory.

    python3 aic_attention.py --shapes SHAPES.csv --out DIR [--phase generation|context] [--budget-s 60]
        [--max-gb 24] [--max-tflop 5] [--dry-run]

SHAPES.csv: columns batch_size,step (generation) or isl (context),num_heads,num_key_value_heads,head_dim
(cut from a sibling's table; see tools/collect/README.md). Shapes run cheapest first, so a time box
loses only the largest.
"""
import argparse, csv, json, os, sys, time

from graph_timing import replay_median_ms

REPLAYS = 10
REPEATS = 5
L2_BYTES = 64 << 20  # rotate caches below this many bytes per call (H100/H200 L2: 50/60 MiB)
COLS = ["framework", "version", "device", "op_name", "kernel_source", "batch_size", "isl", "num_heads",
        "num_key_value_heads", "head_dim", "beam_width", "attn_dtype", "kv_cache_dtype", "step", "window_size", "latency"]


def tokens(r):
    """Query and key/value tokens per sequence."""
    return (1, r["step"] + 1) if "step" in r else (r["isl"], r["isl"])


def kv_bytes(r):
    return 2 * r["batch_size"] * r["num_key_value_heads"] * tokens(r)[1] * r["head_dim"] * 2


def flops(r):
    """Causal prefill counts half the score matrix; decode all of its one row."""
    q, kv = tokens(r)
    full = 4 * r["batch_size"] * r["num_heads"] * q * kv * r["head_dim"]
    return full / 2 if q > 1 else full


def read_shapes(path, phase, max_gb, max_tflop):
    keys = ["batch_size", "step" if phase == "generation" else "isl", "num_heads", "num_key_value_heads", "head_dim"]
    rows = [{k: int(r[k]) for k in keys} for r in csv.DictReader(open(path))]
    rows = [r for r in rows if kv_bytes(r) <= max_gb * 1e9 and flops(r) <= max_tflop * 1e12]
    return sorted(rows, key=lambda r: (max(kv_bytes(r) / 4e12, flops(r) / 5e14), r["num_heads"]))


def time_backend(torch, F, sdpa_kernel, backend, sets, causal, expand, stream):
    """Milliseconds a call of one SDPA backend: warm-up, then a CUDA graph of REPLAYS calls rotating
    over `sets`, the median of REPEATS replays. `expand`: K and V repeated to every query head
    first (outside the timing), for a backend that does not take grouped heads."""
    if expand:
        sets = [(q, k.repeat_interleave(q.shape[1] // k.shape[1], dim=1), v.repeat_interleave(q.shape[1] // v.shape[1], dim=1))
                for q, k, v in sets]
    gqa = not expand
    with sdpa_kernel([backend]), torch.cuda.stream(stream):
        for q, k, v in sets:
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with sdpa_kernel([backend]):
        with torch.cuda.graph(graph, stream=stream):
            for j in range(REPLAYS):
                q, k, v = sets[j % len(sets)]
                F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    return replay_median_ms(torch, graph, REPLAYS, REPEATS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=60.0)
    ap.add_argument("--phase", choices=["generation", "context"], default="generation")
    ap.add_argument("--max-gb", type=float, default=24.0, help="skip shapes whose KV cache exceeds this")
    ap.add_argument("--max-tflop", type=float, default=5.0, help="skip shapes of more TFLOP a call than this")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    shapes = read_shapes(a.shapes, a.phase, a.max_gb, a.max_tflop)
    secs = sum(max(kv_bytes(r) / 4e12, flops(r) / 5e14) for r in shapes) * REPLAYS * (REPEATS + 3)
    print(f"{len(shapes)} shapes; at ~4 TB/s and ~500 TFLOP/s x {REPLAYS * (REPEATS + 3)} calls ~{secs:.1f} s", flush=True)
    if a.dry_run:
        return
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import pyarrow as pa, pyarrow.parquet as pq
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    if a.phase == "context":
        backends = [backends[2], backends[0], backends[1]]
    causal = a.phase == "context"
    os.makedirs(a.out, exist_ok=True)
    dev = torch.cuda.get_device_name(0)
    meta = {"device": dev, "torch": torch.__version__, "cuda": torch.version.cuda,
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "replays": REPLAYS, "repeats": REPEATS,
            "command": " ".join(sys.argv)}
    print(json.dumps(meta), flush=True)
    rows, notes, chosen = [], [], {}
    t0 = time.time()
    stream = torch.cuda.Stream()
    for i, r in enumerate(shapes):
        if time.time() - t0 > a.budget_s:
            notes.append(f"time box hit at shape {i}/{len(shapes)}")
            print(notes[-1], flush=True)
            break
        b, hq, hkv, d = r["batch_size"], r["num_heads"], r["num_key_value_heads"], r["head_dim"]
        nq, kv = tokens(r)
        try:
            copies = max(1, min(8, -(-L2_BYTES // kv_bytes(r))))
            sets = [(torch.randn(b, hq, nq, d, device="cuda", dtype=torch.bfloat16),
                     torch.randn(b, hkv, kv, d, device="cuda", dtype=torch.bfloat16),
                     torch.randn(b, hkv, kv, d, device="cuda", dtype=torch.bfloat16)) for _ in range(copies)]
            name, ms = None, None
            for bname, backend in backends:
                try:
                    ms = time_backend(torch, F, sdpa_kernel, backend, sets, causal, expand=(bname == "cudnn"), stream=stream)
                    name = bname
                    break
                except Exception as e:
                    chosen.setdefault(f"{bname} failed", f"{type(e).__name__}: {str(e)[:160]}")
                    torch.cuda.synchronize()
            if name is None:
                raise RuntimeError("no SDPA backend ran")
            rows.append({"framework": "torch", "version": torch.__version__.split("+")[0], "device": dev,
                         "op_name": f"{a.phase}_attention", "kernel_source": f"torch_sdpa_{name}", "batch_size": b,
                         "isl": nq, "num_heads": hq, "num_key_value_heads": hkv, "head_dim": d, "beam_width": 1,
                         "attn_dtype": "bfloat16", "kv_cache_dtype": "bfloat16", "step": r.get("step", 0), "window_size": 0,
                         "latency": ms})
            chosen[name] = chosen.get(name, 0) + 1
            del sets
        except Exception as e:
            notes.append(f"b={b} hq={hq} hkv={hkv} q={nq} kv={kv}: {type(e).__name__}: {str(e)[:200]}")
            print(notes[-1], flush=True)
            torch.cuda.empty_cache()
        if i % 50 == 0:
            print(f"{i}/{len(shapes)} {time.time() - t0:.1f}s", flush=True)
    meta.update(elapsed_s=round(time.time() - t0, 1), rows=len(rows), backends=chosen, notes=notes)
    types = {"batch_size": pa.int64(), "isl": pa.int64(), "num_heads": pa.int64(), "num_key_value_heads": pa.int64(),
             "head_dim": pa.int64(), "beam_width": pa.int64(), "step": pa.int64(), "window_size": pa.int64(),
             "latency": pa.float64()}
    schema = pa.schema([(c, types.get(c, pa.string())) for c in COLS])
    pq.write_table(pa.table({c: [r[c] for r in rows] for c in COLS}, schema=schema),
                   os.path.join(a.out, f"{a.phase}_attention_perf.parquet"))
    with open(os.path.join(a.out, f"{a.phase}_meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"done: {len(rows)} rows in {meta['elapsed_s']} s, backends {chosen}, {len(notes)} notes", flush=True)


if __name__ == "__main__":
    main()
