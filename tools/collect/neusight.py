#!/usr/bin/env python3
"""NeuSight's FP32 protocol on a GPU it never measured: per-op latencies of NeuSight's test shapes and
end-to-end inference/training labels of its workloads, written in NeuSight's own layouts so wavecast's
readers take them unchanged (`ops/test/<op>.csv`, `label/<GPU>/<workload>.json`).

Protocol (as NeuSight's docs describe it): FP32 with TF32 off, CUDA events around each call, the mean
of the 5 fastest calls. NeuSight takes 25 calls; here a call longer than a few milliseconds gets fewer
(at least 6) so a whole sweep fits one short lease — the `Calls` column / `calls` field says how many.
Models are built from their Hugging Face config with random weights and eager attention (the separate
BMM + softmax graph NeuSight traced).

    python3 neusight.py --shapes shapes.csv --configs model_configs/ --out DIR [--ops-box S] [--label-box S]
    python3 neusight.py ... --dry-run      # parse and list the plan without torch

`shapes.csv` (columns file,OPName,B,M,N,K,H) lists the shapes: a sample of ../shared/data/neusight/ops/test
made by tools/collect/README.md's recipe. Column meaning follows wavecast's NeuSight reader: bmm multiplies
[B,M,N] by [B,N,K]; linear maps B*M rows of N features to K; vector ops act on [B,H].
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys
import time

WORKLOADS = [  # NeuSight label names: model-mode-seq-batch (the single-GPU ones with a shared config)
    "bert_large-inf-512-8", "bert_large-inf-512-16", "bert_large-train-512-2", "bert_large-train-512-8",
    "gpt2_large-inf-1024-4", "gpt2_large-inf-1024-8", "gpt2_large-train-1024-1",
    "opt_13-inf-2048-2", "opt_13-inf-2048-8",
    "gpt3_xl-inf-2048-2", "gpt3_27-inf-2048-2", "gpt3_xl-inf-2048-8", "gpt3_27-inf-2048-8",
]
T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:7.1f}s] {msg}", flush=True)


def calls_for(first_ms):
    """25 calls for short ops, fewer (≥ 6) where 25 would take long."""
    if first_ms <= 2.0:
        return 25
    return int(min(25, max(6, math.ceil(50.0 / first_ms))))


def mean_of_fastest(times, n=5):
    times = sorted(times)
    return statistics.mean(times[: min(n, len(times))])


def timed_calls(torch, fn, calls):
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(calls)]
    for s, e in events:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in events]


def measure(torch, fn):
    fn()
    fn()
    torch.cuda.synchronize()
    first = timed_calls(torch, fn, 1)[0]
    calls = calls_for(first)
    return mean_of_fastest(timed_calls(torch, fn, calls)), calls


def op_fn(torch, row):
    F = torch.nn.functional
    dev, f32 = "cuda", torch.float32
    d = {k: int(row[k]) for k in ("B", "M", "N", "K", "H") if row.get(k)}
    op = row["OPName"]
    if op == "bmm":
        a = torch.randn(d["B"], d["M"], d["N"], device=dev, dtype=f32)
        b = torch.randn(d["B"], d["N"], d["K"], device=dev, dtype=f32)
        return lambda: torch.bmm(a, b)
    if op == "linear":
        x = torch.randn(d["B"] * d["M"], d["N"], device=dev, dtype=f32)
        w = torch.randn(d["K"], d["N"], device=dev, dtype=f32)
        bias = torch.randn(d["K"], device=dev, dtype=f32)
        return lambda: F.linear(x, w, bias)
    x = torch.randn(d["B"], d["H"], device=dev, dtype=f32)
    if op == "ln":
        w = torch.ones(d["H"], device=dev, dtype=f32)
        b = torch.zeros(d["H"], device=dev, dtype=f32)
        return lambda: F.layer_norm(x, (d["H"],), w, b)
    if op == "softmax":
        return lambda: torch.softmax(x, dim=-1)
    y = torch.rand(d["B"], d["H"], device=dev, dtype=f32) + 0.5
    unary = {"addu": lambda: x + 1.0, "mulu": lambda: x * 2.0, "divu": lambda: x / 3.0, "powu": lambda: x ** 2,
             "relu": lambda: F.relu(x), "gelu": lambda: F.gelu(x), "tanh": lambda: torch.tanh(x)}
    binary = {"add": lambda: x + y, "mul": lambda: x * y, "div": lambda: x / y, "pow": lambda: torch.pow(y, x)}
    if op in unary:
        return unary[op]
    if op in binary:
        return binary[op]
    raise ValueError(f"unknown op {op}")


def part_ops(torch, shapes, out, box_s, device, versions):
    cols = {"mm": ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "CUDA Version", "Calls", "B", "M", "N", "K"],
            "vec": ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "CUDA Version", "Calls", "B", "H"]}
    os.makedirs(os.path.join(out, "ops", "test"), exist_ok=True)
    files, writers = {}, {}
    start = time.time()
    done = skipped = failed = 0
    for row in shapes:
        if time.time() - start > box_s:
            skipped += 1
            continue
        name = row["file"]
        if name not in writers:
            fh = open(os.path.join(out, "ops", "test", f"{name}.csv"), "w", newline="")
            kind = "mm" if name in ("bmm", "linear") else "vec"
            files[name] = fh
            writers[name] = (csv.DictWriter(fh, cols[kind]), cols[kind])
            writers[name][0].writeheader()
        w, c = writers[name]
        try:
            ms, calls = measure(torch, op_fn(torch, row))
            rec = dict(OPName=row["OPName"], Latency=f"{ms:.6g}", Device=device, Calls=calls, **versions)
            rec.update({k: row[k] for k in c if k in ("B", "M", "N", "K", "H")})
            w.writerow(rec)
            files[name].flush()
            done += 1
        except Exception as e:  # noqa: BLE001
            failed += 1
            log(f"op {row}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
        finally:
            torch.cuda.empty_cache()
        if (done + failed) % 200 == 0:
            log(f"ops {done + failed}/{len(shapes)}")
    for fh in files.values():
        fh.close()
    log(f"ops: {done} timed, {failed} failed, {skipped} skipped (time box {box_s:.0f} s)")


def build_model(torch, transformers, cfg_path, mode):
    raw = json.load(open(cfg_path))
    try:
        cfg = transformers.CONFIG_MAPPING[raw["model_type"]].from_dict(raw)
    except (AttributeError, KeyError):
        cfg = transformers.AutoConfig.for_model(**raw)
    if raw["model_type"] == "bert":
        cls = transformers.AutoModelForSequenceClassification if mode == "inf" else transformers.AutoModelForPreTraining
    else:
        cls = transformers.AutoModelForCausalLM
    with torch.device("cuda"):
        model = cls.from_config(cfg, attn_implementation="eager")
    return model.float(), raw.get("vocab_size", 30522)


def part_labels(torch, transformers, configs, out, box_s, gpu_folder):
    folder = os.path.join(out, "label", gpu_folder)
    os.makedirs(folder, exist_ok=True)
    start = time.time()
    for wl in WORKLOADS:
        if time.time() - start > box_s:
            log(f"label {wl}: skipped (time box {box_s:.0f} s)")
            continue
        model_name, mode, seq, batch = wl.rsplit("-", 3)
        seq, batch = int(seq), int(batch)
        model = None
        try:
            model, vocab = build_model(torch, transformers, os.path.join(configs, f"{model_name}.json"), mode)
            ids = torch.randint(0, vocab, (batch, seq), device="cuda")
            layers = getattr(model.config, "num_hidden_layers", None) or getattr(model.config, "n_layer", 0)
            if mode == "inf":
                model.eval()

                def fwd():
                    with torch.no_grad():
                        model(input_ids=ids)
                fw, calls = measure(torch, fwd)
                bw = 0.0
            else:
                model.train()
                fw_t, bw_t = [], []
                calls = None
                for i in range(27):
                    s, m, e = (torch.cuda.Event(enable_timing=True) for _ in range(3))
                    s.record()
                    outp = model(input_ids=ids)
                    m.record()
                    logits = getattr(outp, "logits", None)
                    if logits is None:
                        logits = outp.prediction_logits
                    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                                                             torch.randint(0, logits.shape[-1], (logits.shape[0] * logits.shape[1],), device="cuda") if logits.dim() == 3 else torch.zeros(logits.shape[0], dtype=torch.long, device="cuda"))
                    torch.cuda.synchronize()
                    b0 = torch.cuda.Event(enable_timing=True)
                    b0.record()
                    loss.backward()
                    e.record()
                    torch.cuda.synchronize()
                    model.zero_grad(set_to_none=True)
                    if i >= 2:
                        fw_t.append(s.elapsed_time(m))
                        bw_t.append(b0.elapsed_time(e))
                    if i == 2 and fw_t[0] + bw_t[0] > 2000:
                        break
                calls = len(fw_t)
                fw, bw = mean_of_fastest(fw_t), mean_of_fastest(bw_t)
            rec = {"num_layer": layers, "e2e_latency": fw + bw, "fw_latency": fw, "bwall_latency": bw, "calls": calls}
            json.dump(rec, open(os.path.join(folder, f"{wl}.json"), "w"), indent=4)
            log(f"label {wl}: e2e {fw + bw:9.2f} ms (fw {fw:.2f} bw {bw:.2f}) over {calls} calls")
        except Exception as e:  # noqa: BLE001
            log(f"label {wl}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
        finally:
            model = None
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--configs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ops-box", type=float, default=170.0)
    ap.add_argument("--label-box", type=float, default=150.0)
    ap.add_argument("--parts", default="labels,ops")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    order = {"ln": 0, "softmax": 1, "elem": 2, "bmm": 3, "linear": 4}  # cheap families first: a time box cuts the dear ones
    shapes = sorted(csv.DictReader(open(a.shapes)), key=lambda r: order.get(r["file"], 9))
    log(f"{len(shapes)} op shapes, {len(WORKLOADS)} workloads")
    for wl in WORKLOADS:
        name = wl.rsplit("-", 3)[0]
        if not os.path.exists(os.path.join(a.configs, f"{name}.json")):
            sys.exit(f"missing config for {wl}")
    if a.dry_run:
        return
    import torch
    import transformers
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.cuda.get_device_name(0)
    versions = {"Torch Version": torch.__version__, "CUDNN Version": str(torch.backends.cudnn.version()),
                "CUDA Version": str(torch.version.cuda)}
    log(f"device {device}, torch {torch.__version__}, transformers {transformers.__version__}, {versions}")
    parts = a.parts.split(",")
    if "labels" in parts:
        part_labels(torch, transformers, a.configs, a.out, a.label_box, device.replace(" ", "_"))
    if "ops" in parts:
        part_ops(torch, shapes, a.out, a.ops_box, device, versions)
    log("done")


if __name__ == "__main__":
    main()
