#!/usr/bin/env python3
"""Writes the malformed-input corpus under tests/corpus/ (run from anywhere; deterministic).

Every file is something a user could hand wavecast by mistake: a config, GPU file or trace
broken one field at a time, truncated, of the wrong type, empty or binary. tests/corpus.rs
runs each through the binary and checks the promise: exit 0 with finite numbers, or exit 2
with one line; never a panic. The seeds are wavecast's own formats and the Hugging Face
config layout (facts, no third-party text); nothing from ../shared is copied.
"""

import gzip
import json
import os
import random
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

LLAMA = {
    "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "tie_word_embeddings": True,
}
GPT2 = {"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257}
MIXTRAL = dict(LLAMA, model_type="mixtral", num_local_experts=8, num_experts_per_tok=2)
BAD_VALUES = {
    "zero": 0, "negative": -4, "float": 1.5, "string": "many", "null": None, "true": True,
    "list": [64], "huge": 10**12, "u64max": 2**64 - 1, "beyond_u64": 2**70, "nan_string": "NaN",
}

GPU_T4 = """[[gpu]]
id = "corpus-gpu"
name = "Corpus GPU"
vendor = "nvidia"
architecture = "turing"
compute_capability = "7.5"
sm_count = 40
fp32_lanes_per_sm = 64
base_clock_mhz = 585
boost_clock_mhz = 1590
memory_gb = 16.0
memory_bandwidth_gbs = 320.0
l2_cache_mb = 4.0
tdp_w = 70.0
process_nm = 12

[gpu.peak_tflops]
fp32 = 8.1
fp16 = 65.0

[gpu.occupancy]
warp_size = 32
max_threads_per_sm = 1024
max_warps_per_sm = 32
max_blocks_per_sm = 16
max_threads_per_block = 1024
registers_per_sm = 65536
max_registers_per_block = 65536
max_registers_per_thread = 255
shared_mem_per_sm_kb = 64
max_shared_mem_per_block_kb = 64

[gpu.interconnect]
nvlink_gbs = 0.0
pcie_gbs = 32.0

[gpu.price]
usd_per_hour = 0.35
source = "corpus"
date = "2026-01"
"""
GPU_FIELDS = [
    "sm_count", "fp32_lanes_per_sm", "base_clock_mhz", "boost_clock_mhz", "memory_gb", "memory_bandwidth_gbs",
    "l2_cache_mb", "tdp_w", "process_nm", "fp32", "fp16", "warp_size", "max_threads_per_sm", "max_warps_per_sm",
    "max_blocks_per_sm", "max_threads_per_block", "registers_per_sm", "max_registers_per_block",
    "max_registers_per_thread", "shared_mem_per_sm_kb", "max_shared_mem_per_block_kb", "nvlink_gbs", "pcie_gbs",
    "usd_per_hour",
]
GPU_BAD = {"zero": "0", "negative": "-1", "nan": "nan", "inf": "inf", "string": '"fast"'}

KERNEL = ('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %s, "dur": %s, '
          '"args": {"correlation": %d, "registers per thread": 32, "shared memory": 0, "grid": [%s, 1, 1], "block": [128, 1, 1]}}')


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


def configs(out):
    for base_name, base in (("llama", LLAMA), ("gpt2", GPT2), ("mixtral", MIXTRAL)):
        keys = [k for k, v in base.items() if isinstance(v, int) and not isinstance(v, bool)]
        for key in keys:
            for label, value in BAD_VALUES.items():
                cfg = dict(base)
                cfg[key] = value
                write(f"{out}/{base_name}-{key}-{label}.json", json.dumps(cfg))
        cfg = dict(base)
        cfg.pop(keys[0])
        write(f"{out}/{base_name}-missing-{keys[0]}.json", json.dumps(cfg))
    text = json.dumps(LLAMA)
    for cut in (1, 10, 40, len(text) // 2, len(text) - 1):
        write(f"{out}/llama-truncated-at-{cut}.json", text[:cut])
    write(f"{out}/empty.json", "")
    write(f"{out}/bom.json", "\ufeff" + text)
    write(f"{out}/array.json", "[1, 2, 3]")
    write(f"{out}/string.json", '"llama"')
    write(f"{out}/deeply-nested.json", "[" * 5000 + "]" * 5000)
    write(f"{out}/binary.json", bytes(range(256)) * 4)
    write(f"{out}/unknown-model-type.json", json.dumps(dict(LLAMA, model_type="t5")))
    write(f"{out}/no-model-type.json", json.dumps({k: v for k, v in LLAMA.items() if k != "model_type"}))
    write(f"{out}/heads-not-dividing-hidden.json", json.dumps(dict(LLAMA, hidden_size=2050, head_dim=None)))
    write(f"{out}/kv-not-dividing-heads.json", json.dumps(dict(LLAMA, num_key_value_heads=7)))
    write(f"{out}/topk-above-experts.json", json.dumps(dict(MIXTRAL, num_experts_per_tok=9)))
    write(f"{out}/experts-zero.json", json.dumps(dict(MIXTRAL, num_local_experts=0)))


def gpus(out):
    for field in GPU_FIELDS:
        for label, value in GPU_BAD.items():
            lines = [f"{field} = {value}" if line.split(" = ")[0] == field else line for line in GPU_T4.splitlines()]
            write(f"{out}/{field}-{label}.toml", "\n".join(lines) + "\n")
        lines = [line for line in GPU_T4.splitlines() if line.split(" = ")[0] != field]
        write(f"{out}/{field}-missing.toml", "\n".join(lines) + "\n")
    write(f"{out}/empty.toml", "")
    write(f"{out}/garbage.toml", "this is not [valid toml\n")
    write(f"{out}/binary.toml", bytes(range(256)))
    write(f"{out}/no-gpu-table.toml", "[something]\nx = 1\n")
    write(f"{out}/truncated.toml", GPU_T4[: len(GPU_T4) // 2])


def trace_text(durations, grids=("65536", "512"), extra=""):
    events = [KERNEL % (name, 10 + 300 * i, dur, i + 1, grid)
              for i, (name, dur, grid) in enumerate(zip(("void at::native::vectorized_elementwise_kernel<4>", "ampere_sgemm_128x64_tn"), durations, grids))]
    return '{"traceEvents": [' + ", ".join(events) + "]" + extra + "}"


def traces(out):
    cases = {
        "zero-durations": trace_text(("0", "0")),
        "negative-duration": trace_text(("-5", "100")),
        "huge-duration": trace_text(("1e300", "100")),
        "infinite-duration": trace_text(("1e400", "100")),
        "string-duration": trace_text(('"long"', "100")),
        "null-duration": trace_text(("null", "100")),
        "zero-grid": trace_text(("100", "100"), grids=("0", "0")),
        "huge-grid": trace_text(("100", "100"), grids=("18446744073709551615", "4294967296")),
        "negative-grid": trace_text(("100", "100"), grids=("-1", "1")),
        "no-events": '{"traceEvents": []}',
        "events-not-array": '{"traceEvents": {"a": 1}}',
        "no-trace-events": '{"schemaVersion": 1}',
        "empty": "",
        "array-of-numbers": "[1, 2, 3]",
        "bad-device-properties": trace_text(("100", "100"), extra=', "deviceProperties": [{"name": 7, "numSms": -1}]'),
    }
    ok = trace_text(("250", "750.5"))
    for cut in (5, 30, len(ok) // 3, len(ok) // 2, len(ok) - 2):
        cases[f"truncated-at-{cut}"] = ok[:cut]
    dims = '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 5, "dur": 900, "args": {"Input Dims": [[%s], [%s]], "Input type": ["float", "float"]}}'
    for label, (a, b) in {"overflowing-dims": ("4294967296, 4294967296", "4294967296, 8"), "zero-dims": ("0, 64", "64, 0"),
                          "negative-dims": ("-64, 64", "64, 64"), "float-dims": ("1.5, 64", "64, 64")}.items():
        cases[label] = ok[:-2] + ", " + dims % (a, b) + "]}"
    # Found by the `trace` fuzz target (bench/results/fuzz.md): a grid whose product overflows.
    cases["fuzz-grid-overflow"] = '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementeswi_kernel<4>", "pid": 0, "t-d": 7, "ts": 10, "dur": 100, "args": {"correlation": 1, "registhared memory": 0, "grid": [18446744073709551615, 1, 2], "block": [128,71, 1]}}, {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_126x64_t_sgemm_ddddddddddddddddddddddddddddddddddddddddddddddddddd128xn", "pid": 0, "tid": 7, "ts": 155, "dur": 100, "args": {"correlation": 4, "regnmaers per thread": 32, "jhared memory": 0, "grid": [4294967296, 1, 1], "block": [128, 1, 1]}}]}'
    for name, text in cases.items():
        write(f"{out}/{name}.json", text)
    write(f"{out}/zero-durations.json.gz", gzip.compress(cases["zero-durations"].encode(), mtime=0))
    write(f"{out}/garbage.json.gz", b"\x1f\x8b\x08\x00garbage that is not deflate")
    write(f"{out}/truncated.json.gz", gzip.compress(ok.encode(), mtime=0)[:20])
    write(f"{out}/binary.json", bytes(random.Random(7).getrandbits(8) for _ in range(512)))


def onnx(out):
    rng = random.Random(11)
    write(f"{out}/empty.onnx", b"")
    write(f"{out}/text.onnx", b"this is not a protobuf model\n")
    for i in range(8):
        write(f"{out}/random-{i}.onnx", bytes(rng.getrandbits(8) for _ in range(64 * (i + 1))))
    # Field 7 (graph) with a length running past the end; field 1 (ir_version) as a huge varint.
    write(f"{out}/graph-length-past-end.onnx", b"\x08\x07\x3a\xff\xff\xff\x0f\x0a\x01x")
    write(f"{out}/overlong-varint.onnx", b"\x08" + b"\xff" * 11)
    write(f"{out}/no-graph.onnx", b"\x08\x07")


def main():
    for reader in ("config", "gpu", "trace", "onnx"):
        shutil.rmtree(os.path.join(HERE, reader), ignore_errors=True)
    configs(os.path.join(HERE, "config"))
    gpus(os.path.join(HERE, "gpu"))
    traces(os.path.join(HERE, "trace"))
    onnx(os.path.join(HERE, "onnx"))


if __name__ == "__main__":
    main()
