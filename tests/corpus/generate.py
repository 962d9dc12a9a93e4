#!/usr/bin/env python3
"""Writes the malformed-input corpus under tests/corpus/ (run from anywhere; deterministic).

Every file is something a user could hand wavecast by mistake: a config, GPU file or trace
broken one field at a time, truncated, of the wrong type, empty or binary. tests/corpus.rs
runs each through the binary and checks the promise: exit 0 with finite numbers, or exit 2
with one line; never a panic. The seeds are wavecast's own formats and the Hugging Face
config layout; the `real-*`, `unsupported-*` and `hta-*` files are derived from public files
in ../shared (see README.md for their licences) and are skipped when ../shared is absent.
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


# ---------------------------------------------------------------------------------------------
# Second round (issue "Never wrong with confidence"): seeds from real files, the shape limits
# hit together, ONNX models built field by field, linked profiler traces and NeuSight data
# folders. Files derived from ../shared keep its licence (see README.md).

SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data"))
NEUSIGHT = os.path.join(SHARED, "neusight")
AICONF = os.path.join(SHARED, "aiconfigurator", "model_configs")
KINETO = os.path.join(SHARED, "kineto")

# The limits TransformerSpec::check enforces (crates/wavecast-workload/src/hf.rs).
LIMITS = {"layers": 10_000, "hidden": 1 << 20, "heads": 1 << 14, "kv": 1 << 14, "head_dim": 1 << 14,
          "ffn": 1 << 22, "vocab": 1 << 24, "experts": 1 << 16, "positions": 1 << 30, "type_vocab": 1 << 20}
# Per family: config key → which limit bounds it.
FAMILY_FIELDS = {
    "llama": {"hidden_size": "hidden", "intermediate_size": "ffn", "num_hidden_layers": "layers", "num_attention_heads": "heads",
              "num_key_value_heads": "kv", "head_dim": "head_dim", "vocab_size": "vocab", "max_position_embeddings": "positions"},
    "moe": {"num_experts": "experts", "num_local_experts": "experts", "num_experts_per_tok": "experts", "moe_intermediate_size": "ffn"},
    "bert": {"hidden_size": "hidden", "intermediate_size": "ffn", "num_hidden_layers": "layers", "num_attention_heads": "heads",
             "vocab_size": "vocab", "max_position_embeddings": "positions", "type_vocab_size": "type_vocab"},
    "opt": {"hidden_size": "hidden", "ffn_dim": "ffn", "num_hidden_layers": "layers", "num_attention_heads": "heads",
            "vocab_size": "vocab", "max_position_embeddings": "positions", "word_embed_proj_dim": "hidden"},
    "gpt2": {"n_embd": "hidden", "n_head": "heads", "n_layer": "layers", "n_positions": "positions", "n_ctx": "positions",
             "vocab_size": "vocab", "n_inner": "ffn"},
    "switch": {"d_model": "hidden", "num_heads": "heads", "num_layers": "layers", "num_decoder_layers": "layers", "num_experts": "experts",
               "d_kv": "head_dim", "d_ff": "ffn", "vocab_size": "vocab", "relative_attention_num_buckets": "vocab",
               "expert_capacity": "positions", "num_sparse_encoder_layers": "layers", "num_sparse_decoder_layers": "layers",
               "encoder_sparse_step": "layers", "decoder_sparse_step": "layers", "num_selected_experts": "experts"},
}
REAL_CONFIGS = [
    # (short name, file, families whose fields are mutated)
    ("qwen3-8b", (AICONF, "Qwen--Qwen3-8B_config.json"), ("llama",)),
    ("qwen3-30b-a3b", (AICONF, "Qwen--Qwen3-30B-A3B_config.json"), ("llama", "moe")),
    ("mixtral-8x7b", (AICONF, "mistralai--Mixtral-8x7B-v0.1_config.json"), ("llama", "moe")),
    ("llama-3.1-8b", (AICONF, "meta-llama--Meta-Llama-3.1-8B_config.json"), ("llama",)),
    ("bert-large", (NEUSIGHT, "model_configs", "bert_large.json"), ("bert",)),
    ("opt-1.3b", (NEUSIGHT, "model_configs", "opt.json"), ("opt",)),
    ("gpt2-medium", (NEUSIGHT, "model_configs", "gpt2_med.json"), ("gpt2",)),
    ("switch-xl4", (NEUSIGHT, "model_configs", "switchxl4.json"), ("switch",)),
]
# Architectures wavecast does not model: each must be refused in one line.
UNSUPPORTED_CONFIGS = [
    ("deepseek-v3", (AICONF, "deepseek-ai--DeepSeek-V3_config.json")),
    ("gpt-oss-20b", (AICONF, "openai--gpt-oss-20b_config.json")),
    ("llama-4-scout", (AICONF, "meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json")),
    ("qwen3-vl-8b", (AICONF, "Qwen--Qwen3-VL-8B-Instruct_config.json")),
    ("gemma-4-26b", (AICONF, "google--gemma-4-26B-A4B_config.json")),
]


def read_json(parts):
    path = os.path.join(*parts)
    if not os.path.exists(path):
        print(f"skipped (no {path})")
        return None
    with open(path) as f:
        return json.load(f)


def real_configs(out):
    for short, parts, families in REAL_CONFIGS:
        base = read_json(parts)
        if base is None:
            continue
        write(f"{out}/real-{short}.json", json.dumps(base, indent=1))
        fields = {}
        for fam in families:
            fields.update(FAMILY_FIELDS[fam])
        for key, limit_name in fields.items():
            limit = LIMITS[limit_name]
            values = {"zero": 0, "at-limit": limit, "above-limit": limit + 1, "u64max": 2**64 - 1, "nan-string": "NaN", "negative": -1}
            for label, value in values.items():
                cfg = dict(base)
                cfg[key] = value
                write(f"{out}/real-{short}-{key}-{label}.json", json.dumps(cfg))
        # Every bounded field at its limit at once (each alone passes the check).
        cfg = dict(base)
        for key, limit_name in fields.items():
            if key in base or limit_name in ("layers", "hidden", "heads", "ffn", "vocab", "experts"):
                cfg[key] = LIMITS[limit_name]
        if "num_experts_per_tok" in cfg:
            cfg["num_experts_per_tok"] = LIMITS["experts"]
        write(f"{out}/real-{short}-all-at-limit.json", json.dumps(cfg))
        # The name is printed in results and some errors: a newline in it must not split a line.
        cfg = dict(base, _name_or_path="evil\nname\rwith\u2028breaks")
        write(f"{out}/real-{short}-newline-in-name.json", json.dumps(cfg))
    for short, parts in UNSUPPORTED_CONFIGS:
        base = read_json(parts)
        if base is not None:
            write(f"{out}/unsupported-{short}.json", json.dumps(base, indent=1))


def limit_configs(out):
    """Synthetic configs whose fields each pass the bounds but whose products are absurd."""
    L = LIMITS
    dense = {"model_type": "llama", "hidden_size": L["hidden"], "intermediate_size": L["ffn"], "num_hidden_layers": L["layers"],
             "num_attention_heads": L["heads"], "num_key_value_heads": 1, "head_dim": L["head_dim"], "vocab_size": L["vocab"]}
    moe = dict(dense, model_type="mixtral", num_local_experts=L["experts"], num_experts_per_tok=L["experts"], num_key_value_heads=L["kv"])
    cases = {
        "limits-dense": dense,
        "limits-moe": moe,
        "limits-moe-topk1": dict(moe, num_experts_per_tok=1),
        "limits-qwen3-moe": dict(moe, model_type="qwen3_moe", moe_intermediate_size=L["ffn"], num_experts=L["experts"]),
        "limits-one-layer-wide": dict(dense, num_hidden_layers=1),
        "limits-heads-times-head-dim": dict(LLAMA, num_attention_heads=L["heads"], num_key_value_heads=L["heads"], head_dim=L["head_dim"]),
        "limits-vocab-times-hidden": dict(LLAMA, vocab_size=L["vocab"], hidden_size=L["hidden"], head_dim=64,
                                          num_attention_heads=L["hidden"] // 64, num_key_value_heads=8),
        "limits-gpt2": {"model_type": "gpt2", "n_embd": L["hidden"], "n_head": L["heads"], "n_layer": L["layers"], "n_positions": L["positions"],
                        "vocab_size": L["vocab"], "n_inner": L["ffn"]},
        "limits-gpt2-positions": dict(GPT2, n_positions=L["positions"], n_embd=L["hidden"], n_head=L["heads"]),
        "limits-bert": {"model_type": "bert", "hidden_size": L["hidden"], "intermediate_size": L["ffn"], "num_hidden_layers": L["layers"],
                        "num_attention_heads": L["heads"], "vocab_size": L["vocab"], "max_position_embeddings": L["positions"],
                        "type_vocab_size": L["type_vocab"]},
        "limits-opt": {"model_type": "opt", "hidden_size": L["hidden"], "ffn_dim": L["ffn"], "num_hidden_layers": L["layers"],
                       "num_attention_heads": L["heads"], "vocab_size": L["vocab"], "max_position_embeddings": L["positions"],
                       "word_embed_proj_dim": 2**64 - 1},
        "limits-switch": {"model_type": "switch_transformers", "d_model": L["hidden"], "num_heads": L["heads"], "num_layers": L["layers"],
                          "num_experts": L["experts"], "d_kv": L["head_dim"], "d_ff": L["ffn"], "vocab_size": L["vocab"],
                          "num_selected_experts": L["experts"], "relative_attention_num_buckets": 2**64 - 1, "expert_capacity": 2**64 - 1},
        "switch-buckets-u64max": {"model_type": "switch_transformers", "d_model": 768, "num_heads": 12, "num_layers": 12, "num_experts": 8,
                                  "d_kv": 64, "d_ff": 2048, "vocab_size": 32128, "relative_attention_num_buckets": 2**64 - 1},
        "switch-capacity-u64max": {"model_type": "switch_transformers", "d_model": 768, "num_heads": 12, "num_layers": 12, "num_experts": 8,
                                   "d_kv": 64, "d_ff": 2048, "vocab_size": 32128, "expert_capacity": 2**64 - 1},
        "switch-sparse-step-zero": {"model_type": "switch_transformers", "d_model": 768, "num_heads": 12, "num_layers": 12, "num_experts": 8,
                                    "d_kv": 64, "d_ff": 2048, "vocab_size": 32128, "encoder_sparse_step": 0, "decoder_sparse_step": 0},
        "switch-decoder-layers-zero": {"model_type": "switch_transformers", "d_model": 768, "num_heads": 12, "num_layers": 12, "num_experts": 8,
                                       "d_kv": 64, "d_ff": 2048, "vocab_size": 32128, "num_decoder_layers": 0},
        "switch-newline-name": {"model_type": "switch_transformers", "_name_or_path": "a\nb", "d_model": 768, "num_heads": 12, "num_layers": 12,
                                "num_experts": 8, "d_kv": 64, "d_ff": 2048, "vocab_size": 32128},
        "bert-newline-name": dict({"model_type": "bert", "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
                                   "vocab_size": 100, "max_position_embeddings": 512}, _name_or_path="line one\nline two"),
        "gpt2-positions-1": dict(GPT2, n_positions=1),
        "llama-positions-1": dict(LLAMA, max_position_embeddings=1),
        "llama-head-dim-1": dict(LLAMA, head_dim=1),
        "llama-everything-1": {"model_type": "llama", "hidden_size": 1, "intermediate_size": 1, "num_hidden_layers": 1, "num_attention_heads": 1,
                               "num_key_value_heads": 1, "head_dim": 1, "vocab_size": 1, "max_position_embeddings": 1},
        "mixtral-topk-zero": dict(MIXTRAL, num_experts_per_tok=0),
        "mixtral-topk-equals-experts": dict(MIXTRAL, num_experts_per_tok=8),
        "qwen3-moe-no-moe-ffn": dict(LLAMA, model_type="qwen3_moe", num_experts=8, num_experts_per_tok=2, moe_intermediate_size=0),
        "qwen3-moe-experts-null": dict(LLAMA, model_type="qwen3_moe", num_experts=None),
        "heads-not-dividing-hidden-no-head-dim": {k: v for k, v in dict(LLAMA, hidden_size=2050).items() if k != "head_dim"},
        "kv-heads-above-heads": dict(LLAMA, num_key_value_heads=64),
        "model-type-number": dict(LLAMA, model_type=7),
        "model-type-list": dict(LLAMA, model_type=["llama"]),
        "model-type-empty": dict(LLAMA, model_type=""),
        "model-type-uppercase": dict(LLAMA, model_type="LLAMA"),
        "tie-embeddings-string": dict(LLAMA, tie_word_embeddings="yes"),
        "required-null": dict(LLAMA, hidden_size=None),
        "hidden-size-exponent": '{"model_type": "llama", "hidden_size": 4e3, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "vocab_size": 1000}',
        "hidden-size-1e400": '{"model_type": "llama", "hidden_size": 1e400, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "vocab_size": 1000}',
        "hidden-size-NaN-literal": '{"model_type": "llama", "hidden_size": NaN, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "vocab_size": 1000}',
        "hidden-size-Infinity-literal": '{"model_type": "llama", "hidden_size": Infinity, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "vocab_size": 1000}',
        "duplicate-keys": '{"model_type": "llama", "hidden_size": 0, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32, "vocab_size": 1000}',
        "trailing-comma": json.dumps(LLAMA)[:-1] + ",}",
        "comments": "// llama\n" + json.dumps(LLAMA),
        "two-objects": json.dumps(LLAMA) + json.dumps(LLAMA),
        "utf16": json.dumps(LLAMA).encode("utf-16"),
        "nul-bytes": b"\x00" * 64,
        "deeply-nested-object": '{"a":' * 3000 + "1" + "}" * 3000,
        "nested-in-field": json.dumps(dict(LLAMA, hidden_size=[[[[2048]]]])),
        "huge-string-field": json.dumps(dict(LLAMA, model_type="llama" + "x" * 20000)),
    }
    for name, cfg in cases.items():
        write(f"{out}/{name}.json", cfg if isinstance(cfg, (str, bytes)) else json.dumps(cfg))


# ---- GPU files from a real catalog entry


def builtin_entry(gpu_id):
    path = os.path.join(HERE, "..", "..", "crates", "wavecast-gpu", "data", "gpus.toml")
    text = open(path).read()
    blocks = text.split("[[gpu]]")
    for b in blocks[1:]:
        if f'id = "{gpu_id}"' in b:
            # Up to the next entry's leading comment.
            lines = b.split("\n")
            while lines and (lines[-1].startswith("#") or not lines[-1].strip()):
                lines.pop()
            return "[[gpu]]" + "\n".join(lines) + "\n"
    raise SystemExit(f"no {gpu_id} in gpus.toml")


def set_key(text, key, value):
    """Replaces `key = …` (first occurrence, comment dropped); appends to the right table if absent."""
    out, done = [], False
    for line in text.splitlines():
        if not done and line.split("=")[0].strip() == key and "=" in line:
            out.append(f"{key} = {value}")
            done = True
        else:
            out.append(line)
    if not done:
        raise SystemExit(f"no key {key}")
    return "\n".join(out) + "\n"


def drop_key(text, key):
    return "\n".join(l for l in text.splitlines() if l.split("=")[0].strip() != key) + "\n"


def gpus_real(out):
    h100 = builtin_entry("h100-sxm")
    # Its own id and name (the built-in H100 keeps its names) and no aliases.
    h100 = set_key(h100, "id", '"corpus-gpu"')
    h100 = set_key(h100, "name", '"Corpus H100 (from the built-in h100-sxm)"')
    h100 = drop_key(h100, "aliases")
    write(f"{out}/real-h100.toml", h100)
    floats = ["base_clock_mhz", "boost_clock_mhz", "memory_gb", "memory_bandwidth_gbs", "l2_cache_mb", "tdp_w", "process_nm",
              "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "shared_mem_per_sm_kb", "max_shared_mem_per_block_kb",
              "nvlink_gbs", "pcie_gbs", "usd_per_hour"]
    ints = ["sm_count", "fp32_lanes_per_sm", "warp_size", "max_threads_per_sm", "max_warps_per_sm", "max_blocks_per_sm",
            "max_threads_per_block", "registers_per_sm", "max_registers_per_block", "max_registers_per_thread", "register_alloc_unit",
            "shared_mem_alloc_unit_bytes", "reserved_shared_mem_per_block_bytes", "release_year", "pcie_gen"]
    present = {l.split("=")[0].strip() for l in h100.splitlines() if "=" in l}
    float_values = {"tiny": "1e-300", "subnormal": "5e-324", "huge": "1e300", "max": "1.7976931348623157e308", "zero": "0.0",
                    "negative-zero": "-0.0", "nan": "nan", "inf": "inf", "minus-inf": "-inf"}
    int_values = {"one": "1", "u32max": "4294967295", "beyond-u32": "4294967296", "zero": "0", "negative": "-1", "float": "32.5"}
    for key in floats:
        if key not in present:
            continue
        for label, v in float_values.items():
            write(f"{out}/real-h100-{key}-{label}.toml", set_key(h100, key, v))
    for key in ints:
        if key not in present:
            continue
        for label, v in int_values.items():
            write(f"{out}/real-h100-{key}-{label}.toml", set_key(h100, key, v))
    odd = {
        "compute-capability-garbage": ("compute_capability", '"banana"'),
        "compute-capability-99": ("compute_capability", '"99.9"'),
        "compute-capability-empty": ("compute_capability", '""'),
        "compute-capability-negative": ("compute_capability", '"-1.-5"'),
        "vendor-intel": ("vendor", '"intel"'),
        "vendor-number": ("vendor", "7"),
        "id-empty": ("id", '""'),
        "id-newline": ("id", '"corpus\\ngpu"'),
        "name-newline": ("name", '"Corpus\\nGPU"'),
        "name-empty": ("name", '""'),
        "architecture-unknown": ("architecture", '"hopper-next"'),
        "memory-type-number": ("memory_type", "3"),
        "boost-below-base": ("boost_clock_mhz", "1"),
        "threads-per-sm-below-block": ("max_threads_per_sm", "32"),
        "warps-inconsistent": ("max_warps_per_sm", "1"),
        "shared-per-block-above-sm": ("max_shared_mem_per_block_kb", "100000.0"),
        "registers-per-thread-above-block": ("max_registers_per_thread", "4294967295"),
    }
    for label, (key, v) in odd.items():
        write(f"{out}/real-h100-{label}.toml", set_key(h100, key, v))
    write(f"{out}/real-h100-twice.toml", h100 + "\n" + h100)
    write(f"{out}/real-h100-alias-of-builtin.toml", h100.replace('id = "corpus-gpu"', 'id = "corpus-gpu"\naliases = ["h100", "a100", "corpus-gpu"]'))
    write(f"{out}/real-h100-alias-duplicate.toml", h100.replace('id = "corpus-gpu"', 'id = "corpus-gpu"\naliases = ["x", "x", ""]'))
    write(f"{out}/real-h100-no-price-table.toml", h100.split("[gpu.price]")[0])
    write(f"{out}/real-h100-price-without-figure.toml", drop_key(h100, "usd_per_hour"))
    write(f"{out}/real-h100-no-occupancy-table.toml", "\n".join(l for l in h100.split("[gpu.occupancy]")[0].splitlines()) + "\n")
    write(f"{out}/real-h100-peaks-only-fp32.toml", "\n".join(
        l for l in h100.splitlines() if l.split("=")[0].strip() not in ("fp64", "tf32", "fp16", "bf16", "fp8", "int8")) + "\n")
    write(f"{out}/real-h100-unknown-key.toml", h100.replace('id = "corpus-gpu"', 'id = "corpus-gpu"\nwarp_drive = true'))
    write(f"{out}/real-h100-inline-table.toml", 'gpu = [{id = "corpus-gpu"}]\n')
    write(f"{out}/real-h100-gpu-not-array.toml", h100.replace("[[gpu]]", "[gpu]", 1))
    write(f"{out}/real-h100-crlf.toml", h100.replace("\n", "\r\n"))
    write(f"{out}/real-h100-bom.toml", "\ufeff" + h100)
    for cut in (7, len(h100) // 3, len(h100) * 2 // 3, len(h100) - 3):
        write(f"{out}/real-h100-truncated-at-{cut}.toml", h100[:cut])
    write(f"{out}/deep-arrays.toml", "x = " + "[" * 2000 + "]" * 2000 + "\n")
    write(f"{out}/long-line.toml", 'id = "' + "g" * 10000 + '"\n')


# ---- profiler traces with linked operators

DEVICE = ('{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85031714816, "computeMajor": 8, "computeMinor": 0, '
          '"maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32, '
          '"sharedMemPerBlock": 49152, "numSms": 108, "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 167936}')


def linked(ops, device=DEVICE, extra_events=()):
    """A trace of cpu_op → cuda_runtime launch → kernel triples (joined by correlation ids).
    ops: list of dicts with name, dims, types, kernel, dur, grid, block and optional kernel args."""
    events = []
    ts = 1000.0
    for i, op in enumerate(ops):
        corr = 100 + i
        events.append({"ph": "X", "cat": "cpu_op", "name": op.get("name", "aten::mm"), "pid": 1, "tid": 1, "ts": ts, "dur": 50,
                       "args": {"Input Dims": op.get("dims", [[64, 64], [64, 64]]), "Input type": op.get("types", ["float", "float"])}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 5, "dur": 5,
                       "args": {"correlation": corr}})
        kargs = {"correlation": corr, "device": 0, "stream": 7, "registers per thread": 64, "shared memory": 16384,
                 "grid": op.get("grid", [16, 16, 1]), "block": op.get("block", [256, 1, 1]), "blocks per SM": 2.37,
                 "est. achieved occupancy %": 25}
        kargs.update(op.get("kargs", {}))
        events.append({"ph": "X", "cat": "kernel", "name": op.get("kernel", "ampere_sgemm_128x64_tn"), "pid": 0, "tid": 7,
                       "ts": ts + 20, "dur": op.get("dur", 120.5), "args": kargs})
        ts += 200
    events.extend(extra_events)
    text = '{"schemaVersion": 1, "deviceProperties": [' + device + '], "traceEvents": ' + json.dumps(events) + "}"
    return text


def traces_more(out):
    mm = lambda a, b, **k: dict(name="aten::mm", dims=[a, b], **k)
    big = 1 << 24
    cases = {
        "linked-valid": linked([mm([64, 64], [64, 64]), dict(name="aten::add", dims=[[64, 64], [64, 64]], kernel="vectorized_elementwise_kernel", dur=3)]),
        "linked-mm-flops-overflow": linked([mm([big, big], [big, big])]),
        "linked-bmm-flops-overflow": linked([dict(name="aten::bmm", dims=[[1 << 16, 1 << 16, 1 << 16], [1 << 16, 1 << 16, 1 << 16]])]),
        "linked-matmul-4d-huge": linked([dict(name="aten::matmul", dims=[[1 << 12, 1 << 12, 1 << 12, 1 << 12], [1 << 12, 1 << 12, 1 << 12, 1 << 12]])]),
        "linked-linear-huge": linked([dict(name="aten::linear", dims=[[big, big], [big, big], [big]])]),
        "linked-addmm-huge": linked([dict(name="aten::addmm", dims=[[big], [big, big], [big, big]], types=["float"] * 3)]),
        "linked-sdpa-huge": linked([dict(name="aten::scaled_dot_product_attention", dims=[[1 << 12] * 4, [1 << 12, 1, 1 << 24, 1 << 12], [1 << 12, 1, 1 << 24, 1 << 12]],
                                         types=["c10::BFloat16"] * 3, kernel="flash_fwd_kernel")]),
        "linked-sdpa-zero-heads": linked([dict(name="aten::scaled_dot_product_attention", dims=[[2, 0, 128, 64], [2, 0, 128, 64], [2, 0, 128, 64]],
                                               types=["c10::BFloat16"] * 3, kernel="flash_fwd_kernel")]),
        "linked-embedding-huge": linked([dict(name="aten::embedding", dims=[[big, big], [big, big]], types=["float", "long int"], kernel="indexSelectLargeIndex")]),
        "linked-softmax-huge": linked([dict(name="aten::_softmax", dims=[[1 << 24, 1 << 24], []], types=["float", "int"], kernel="softmax_warp_forward")]),
        "linked-layernorm-zero": linked([dict(name="aten::native_layer_norm", dims=[[0, 0], [], [0], [0]], types=["float"] * 4, kernel="layer_norm_kernel")]),
        "linked-sum-huge": linked([dict(name="aten::sum", dims=[[1 << 24, 1 << 24]], types=["float"], kernel="reduce_kernel")]),
        "linked-zero-dims": linked([mm([0, 64], [64, 0]), dict(name="aten::add", dims=[[0], [0]], kernel="vectorized_elementwise_kernel")]),
        "linked-fp8-dims": linked([mm([4096, 4096], [4096, 4096], types=["c10::Float8_e4m3fn", "c10::Float8_e4m3fn"])]),
        "linked-bf16-to-no-bf16": linked([mm([4096, 4096], [4096, 4096], types=["c10::BFloat16", "c10::BFloat16"])]),
        "linked-dims-strings": linked([mm(["64", "64"], ["64", "64"])]),
        "linked-dims-nested": linked([mm([[64], [64]], [[64], [64]])]),
        "linked-dims-not-list": linked([dict(name="aten::mm", dims="[[64, 64], [64, 64]]")]),
        "linked-types-not-list": linked([dict(name="aten::mm", types="float")]),
        "block-product-2-62": linked([mm([64, 64], [64, 64], block=[(1 << 31) - 1, (1 << 31) - 1, 1])]),
        "block-max-each": linked([mm([64, 64], [64, 64], grid=[(1 << 31) - 1, (1 << 31) - 1, 1], block=[1024, 1, 1])]),
        "grid-two-elements": linked([mm([64, 64], [64, 64], grid=[1, 1])]),
        "grid-floats": linked([mm([64, 64], [64, 64], grid=[1.5, 1, 1])]),
        "grid-strings": linked([mm([64, 64], [64, 64], grid=["1", "1", "1"])]),
        "block-zero": linked([mm([64, 64], [64, 64], block=[0, 1, 1])]),
        "registers-huge": linked([mm([64, 64], [64, 64], kargs={"registers per thread": 1e12})]),
        "registers-negative": linked([mm([64, 64], [64, 64], kargs={"registers per thread": -64})]),
        "registers-nan-string": linked([mm([64, 64], [64, 64], kargs={"registers per thread": "NaN"})]),
        "shared-memory-huge": linked([mm([64, 64], [64, 64], kargs={"shared memory": 1e300})]),
        "shared-memory-negative": linked([mm([64, 64], [64, 64], kargs={"shared memory": -1})]),
        "blocks-per-sm-inf-string": linked([mm([64, 64], [64, 64], kargs={"blocks per SM": "inf"})]),
        "blocks-per-sm-zero": linked([mm([64, 64], [64, 64], kargs={"blocks per SM": 0})]),
        "occupancy-negative": linked([mm([64, 64], [64, 64], kargs={"est. achieved occupancy %": -5})]),
        "occupancy-huge": linked([mm([64, 64], [64, 64], kargs={"est. achieved occupancy %": 1e300})]),
        "counters-zero": linked([mm([64, 64], [64, 64], kargs={"flops": 0, "dram bytes": 0})]),
        "counters-flops-huge": linked([mm([64, 64], [64, 64], kargs={"flops": 1e308, "dram bytes": 0})]),
        "counters-bytes-huge": linked([mm([64, 64], [64, 64], kargs={"flops": 1, "dram bytes": 1e308})]),
        "counters-nan-string": linked([mm([64, 64], [64, 64], kargs={"flops": "NaN", "dram bytes": "NaN"})]),
        "counters-inf-string": linked([mm([64, 64], [64, 64], kargs={"flops": "inf", "dram bytes": "inf"})]),
        "duration-one-day": linked([mm([64, 64], [64, 64], dur=86_400e6)] * 10),
        "duration-subnormal": linked([mm([64, 64], [64, 64], dur=5e-324)]),
        "duration-tiny": linked([mm([64, 64], [64, 64], dur=1e-300)]),
        "duration-nan-string": linked([mm([64, 64], [64, 64], dur="NaN")]),
        "duration-inf-string": linked([mm([64, 64], [64, 64], dur="inf")]),
        "duration-hex": linked([mm([64, 64], [64, 64], dur="0xffffffffffffffff")]),
        "correlation-duplicate": linked([mm([64, 64], [64, 64])] * 3).replace('"correlation": 101', '"correlation": 100').replace('"correlation": 102', '"correlation": 100'),
        "correlation-huge": linked([mm([64, 64], [64, 64], kargs={"correlation": 1e300})]),
        "correlation-negative": linked([mm([64, 64], [64, 64], kargs={"correlation": -1})]),
        "device-huge": linked([mm([64, 64], [64, 64], kargs={"device": 1e300, "stream": -1})]),
        "ts-huge": linked([mm([64, 64], [64, 64])]).replace('"ts": 1020.0', '"ts": 1e308'),
        "ts-negative": linked([mm([64, 64], [64, 64])]).replace('"ts": 1020.0', '"ts": -1e308'),
        "ts-missing": linked([mm([64, 64], [64, 64])]).replace('"ts": 1020.0, ', ""),
        "kernel-no-args": linked([mm([64, 64], [64, 64])]).replace('"ts": 1020.0, "dur": 120.5, "args"', '"ts": 1020.0, "dur": 120.5, "unused"'),
        "kernel-no-name": linked([mm([64, 64], [64, 64])]).replace('"name": "ampere_sgemm_128x64_tn", ', ""),
        "kernel-name-empty": linked([mm([64, 64], [64, 64], kernel="")]),
        "kernel-name-newline": linked([mm([64, 64], [64, 64], kernel="bad\nkernel\nname", dur=-1)]),
        "kernel-ph-B": linked([mm([64, 64], [64, 64])]).replace('"ph": "X", "cat": "kernel"', '"ph": "B", "cat": "kernel"'),
        "only-cpu-ops": linked([mm([64, 64], [64, 64])]).replace('"cat": "kernel"', '"cat": "python_function"'),
        "only-runtime": '{"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"correlation": 1}}]}',
        "memcpy-only": '{"traceEvents": [{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 1, "dur": 100, "args": {"bytes": 1e300, "device": 0}}]}',
        "memcpy-negative": linked([mm([64, 64], [64, 64])], extra_events=[{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy", "pid": 0, "tid": 7, "ts": 5, "dur": -3, "args": {"bytes": -1}}]),
        "memset-huge-bytes": linked([mm([64, 64], [64, 64])], extra_events=[{"ph": "X", "cat": "gpu_memset", "name": "Memset", "pid": 0, "tid": 7, "ts": 5, "dur": 3, "args": {"bytes": 1e300}}]),
        "profiler-steps": linked([mm([64, 64], [64, 64])], extra_events=[{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i, "pid": 1, "tid": 1, "ts": 1, "dur": 1} for i in range(3)]),
        "device-sms-zero": linked([mm([64, 64], [64, 64])], device=DEVICE.replace('"numSms": 108', '"numSms": 0')),
        "device-sms-huge": linked([mm([64, 64], [64, 64])], device=DEVICE.replace('"numSms": 108', '"numSms": 1e300')),
        "device-warp-zero": linked([mm([64, 64], [64, 64])], device=DEVICE.replace('"warpSize": 32', '"warpSize": 0')),
        "device-threads-zero": linked([mm([64, 64], [64, 64])], device=DEVICE.replace('"maxThreadsPerMultiprocessor": 2048', '"maxThreadsPerMultiprocessor": 0')),
        "device-regs-zero": linked([mm([64, 64], [64, 64])], device=DEVICE.replace('"regsPerMultiprocessor": 65536', '"regsPerMultiprocessor": 0')),
        "device-shared-zero": linked([mm([64, 64], [64, 64])], device=DEVICE.replace('"sharedMemPerMultiprocessor": 167936', '"sharedMemPerMultiprocessor": 0')),
        "device-unknown-name": linked([mm([64, 64], [64, 64])], device=DEVICE.replace("NVIDIA A100-SXM4-80GB", "Imaginary GPU 9000")),
        "device-name-newline": linked([mm([64, 64], [64, 64])], device=DEVICE.replace("NVIDIA A100-SXM4-80GB", "Imaginary\\nGPU")),
        "device-cc-99": linked([mm([64, 64], [64, 64])], device=DEVICE.replace('"computeMajor": 8', '"computeMajor": 99')),
        "device-empty-object": linked([mm([64, 64], [64, 64])], device="{}"),
        "device-props-not-list": linked([mm([64, 64], [64, 64])]).replace('"deviceProperties": [', '"deviceProperties": {"x": ').replace('}], "traceEvents"', '}}, "traceEvents"'),
        "many-devices-mixed": linked([mm([64, 64], [64, 64])], device=DEVICE + ", " + DEVICE.replace("A100-SXM4-80GB", "V100-SXM2-32GB").replace('"id": 0', '"id": 1')),
        "trace-events-twice": linked([mm([64, 64], [64, 64])])[:-1] + ', "traceEvents": []}',
        "events-null": '{"traceEvents": null}',
        "event-not-object": '{"traceEvents": [1, "x", null, []]}',
        "deep-args": '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": ' + '{"a":' * 3000 + "1" + "}" * 3000 + "}]}",
        "deep-array": '{"traceEvents": ' + "[" * 5000 + "]" * 5000 + "}",
        "nan-literal": '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": NaN, "args": {"grid": [1,1,1], "block": [1,1,1]}}]}',
        "utf16": linked([mm([64, 64], [64, 64])]).encode("utf-16"),
        "bom": "\ufeff" + linked([mm([64, 64], [64, 64])]),
    }
    for name, text in cases.items():
        write(f"{out}/{name}.json", text)
    ok = cases["linked-valid"]
    for name in ("linked-valid", "linked-mm-flops-overflow", "linked-sdpa-huge", "duration-one-day", "counters-zero"):
        t = cases[name]
        write(f"{out}/{name}.json.gz", gzip.compress(t.encode(), mtime=0))
    z = gzip.compress(ok.encode(), mtime=0)
    write(f"{out}/gz-truncated-half.json.gz", z[: len(z) // 2])
    write(f"{out}/gz-bad-crc.json.gz", z[:-8] + b"\0\0\0\0" + z[-4:])
    write(f"{out}/gz-twice.json.gz", gzip.compress(z, mtime=0))
    write(f"{out}/gz-empty-member.json.gz", gzip.compress(b"", mtime=0))
    write(f"{out}/gz-concatenated.json.gz", z + z)
    write(f"{out}/gz-plain-text-named-gz.json.gz", ok)
    write(f"{out}/plain-gzip-named-json.json", z)
    # A bomb in miniature: 64 MB of spaces (64 KB compressed) before the object.
    write(f"{out}/gz-64mb-of-spaces.json.gz", gzip.compress(b" " * (64 << 20) + ok.encode(), mtime=0, compresslevel=9))
    real_traces(out)


def real_traces(out):
    """Cut-down variants of HTA's Triton example trace (MIT, Meta; ../shared/data/kineto)."""
    path = os.path.join(KINETO, "a100_triton_example.json.gz")
    if not os.path.exists(path):
        print(f"skipped (no {path})")
        return
    text = gzip.decompress(open(path, "rb").read()).decode()
    d = json.loads(text)
    # One device is enough; the rest repeats it.
    d["deviceProperties"] = d["deviceProperties"][:1]
    base = json.dumps(d)
    z = lambda s: gzip.compress(s.encode(), mtime=0)
    write(f"{out}/hta-triton.json.gz", z(base))
    for cut in (100, len(base) // 4, len(base) // 2, len(base) - 10):
        write(f"{out}/hta-triton-truncated-at-{cut}.json.gz", z(base[:cut]))
    def variant(name, fn):
        e = json.loads(base)
        fn(e)
        write(f"{out}/hta-triton-{name}.json.gz", z(json.dumps(e)))
    def kernels(e):
        return [ev for ev in e["traceEvents"] if ev.get("cat") == "kernel"]
    variant("kernel-dur-zero", lambda e: [k.update(dur=0) for k in kernels(e)])
    variant("kernel-dur-1e300", lambda e: [k.update(dur=1e300) for k in kernels(e)])
    variant("kernel-dur-negative", lambda e: [k.update(dur=-1.76) for k in kernels(e)])
    variant("kernel-no-dur", lambda e: [k.pop("dur") for k in kernels(e)])
    variant("kernel-grid-zero", lambda e: [k["args"].update(grid=[0, 0, 0]) for k in kernels(e)])
    variant("kernel-block-huge", lambda e: [k["args"].update(block=[2147483647, 2147483647, 1]) for k in kernels(e)])
    variant("no-kernels", lambda e: e.update(traceEvents=[ev for ev in e["traceEvents"] if ev.get("cat") != "kernel"]))
    variant("sms-zero", lambda e: e["deviceProperties"][0].update(numSms=0))
    variant("no-device-properties", lambda e: e.pop("deviceProperties"))


# ---- ONNX: a minimal protobuf writer for the messages crates/wavecast-workload/src/onnx/proto.rs reads


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def pb_int(field, v):
    return _key(field, 0) + _varint(v)


def pb_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return _key(field, 2) + _varint(len(b)) + b


def pb_float(field, v):
    import struct
    return _key(field, 5) + struct.pack("<f", v)


def dim(v):
    """A TensorShapeProto.Dimension: a number (field 1) or a symbolic name (field 2)."""
    return pb_int(1, v) if isinstance(v, int) else pb_bytes(2, v)


def value_info(name, elem, dims):
    shape = b"".join(pb_bytes(1, dim(d)) for d in dims) if dims is not None else None
    tt = pb_int(1, elem) + (pb_bytes(2, shape) if shape is not None else b"")
    return pb_bytes(1, name) + pb_bytes(2, pb_bytes(1, tt))


def tensor(name, dims, elem=1, ints=None, floats=None, raw=None, external=False):
    b = b"".join(pb_int(1, d) for d in dims) + pb_int(2, elem)
    for f in floats or []:
        b += pb_float(4, f)
    for i in ints or []:
        b += pb_int(7, i)
    b += pb_bytes(8, name)
    if raw is not None:
        b += pb_bytes(9, raw)
    if external:
        b += pb_int(14, 1)
    return b


def attr(name, v):
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, int):
        return pb_bytes(1, name) + pb_int(3, v) + pb_int(20, 2)
    if isinstance(v, float):
        return pb_bytes(1, name) + pb_float(2, v) + pb_int(20, 1)
    if isinstance(v, str):
        return pb_bytes(1, name) + pb_bytes(4, v) + pb_int(20, 3)
    if isinstance(v, bytes):  # a serialized tensor
        return pb_bytes(1, name) + pb_bytes(5, v) + pb_int(20, 4)
    if isinstance(v, list) and all(isinstance(x, float) for x in v) and v:
        return pb_bytes(1, name) + b"".join(pb_float(7, x) for x in v) + pb_int(20, 6)
    return pb_bytes(1, name) + b"".join(pb_int(8, x) for x in v) + pb_int(20, 7)


def node(op, inputs, outputs, attrs=None, domain=""):
    b = b"".join(pb_bytes(1, i) for i in inputs) + b"".join(pb_bytes(2, o) for o in outputs)
    b += pb_bytes(3, f"{op.lower()}_{outputs[0] if outputs else ''}") + pb_bytes(4, op)
    for k, v in (attrs or {}).items():
        b += pb_bytes(5, attr(k, v))
    if domain:
        b += pb_bytes(7, domain)
    return b


def model(nodes, inputs, outputs=(), inits=(), value_infos=(), opset=13, name="corpus", ir=8, domain=""):
    g = b"".join(pb_bytes(1, n) for n in nodes) + pb_bytes(2, name)
    g += b"".join(pb_bytes(5, t) for t in inits)
    g += b"".join(pb_bytes(11, vi) for vi in inputs)
    g += b"".join(pb_bytes(12, vi) for vi in outputs)
    g += b"".join(pb_bytes(13, vi) for vi in value_infos)
    opset_b = (pb_bytes(1, domain) if domain else b"") + pb_int(2, opset)
    return pb_int(1, ir) + pb_bytes(2, "wavecast-corpus") + pb_bytes(7, g) + pb_bytes(8, opset_b)


F, I64 = 1, 7


def cnn(x_dims=("batch", 3, 32, 32), w1=(16, 3, 3, 3), conv_attrs=None, pool_attrs=None, fc=(10, 16), extra_nodes=(), extra_inits=()):
    """The importer's own tiny CNN (samples.rs), parameterised so one part at a time can be broken."""
    nodes = [
        node("Conv", ["image", "conv1.weight", "conv1.bias"], ["c1"], conv_attrs if conv_attrs is not None else {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
        node("Relu", ["c1"], ["r1"]),
        node("MaxPool", ["r1"], ["p1"], pool_attrs if pool_attrs is not None else {"kernel_shape": [2, 2], "strides": [2, 2]}),
        node("GlobalAveragePool", ["p1"], ["g"]),
        node("Flatten", ["g"], ["f"], {"axis": 1}),
        node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], {"transB": 1}),
        *extra_nodes,
    ]
    inits = [tensor("conv1.weight", list(w1)), tensor("conv1.bias", [w1[0]]), tensor("fc.weight", list(fc)), tensor("fc.bias", [fc[0]]), *extra_inits]
    return model(nodes, [value_info("image", F, list(x_dims))], [value_info("logits", F, ["batch", 10])], inits)


def mlp(x_dims=("batch", "sequence", 64), w=(64, 64), op="MatMul", extra_nodes=(), extra_inits=(), opset=13):
    nodes = [node(op, ["x", "w"], ["y"]), node("Gelu" if opset >= 20 else "Relu", ["y"], ["z"]), *extra_nodes]
    return model(nodes, [value_info("x", F, list(x_dims))], [], [tensor("w", list(w)), *extra_inits], opset=opset)


def one_op(op, attrs=None, inputs=None, inits=(), x_dims=("batch", 16, 8, 8), opset=13, outputs=("y",), domain=""):
    """x → op → y, with constant inputs from `inits` (name, dims, ints)."""
    ins = ["x"] + [t[0] for t in inits] if inputs is None else inputs
    tens = [tensor(n, d, I64, ints=v) if v is not None else tensor(n, d) for (n, d, v) in inits]
    return model([node(op, ins, list(outputs), attrs, domain)], [value_info("x", F, list(x_dims))], [], tens, opset=opset)


def deep_unknown(depth):
    """An unknown length-delimited field nested `depth` times (skipped, never recursed into)."""
    b = b""
    for _ in range(depth):
        b = pb_bytes(15, b)
    return b


def onnx_more(out):
    valid = cnn()
    cases = {
        "valid-cnn": valid,
        "valid-mlp": mlp(),
        # shapes of the data input
        "input-dim-zero": cnn(x_dims=("batch", 3, 0, 32)),
        "input-dim-negative": cnn(x_dims=("batch", 3, -5, 32)),
        "input-dim-huge": cnn(x_dims=("batch", 3, 1 << 40, 1 << 40)),
        "input-dim-i64max": cnn(x_dims=("batch", 3, (1 << 63) - 1, 32)),
        "input-batch-fixed-huge": cnn(x_dims=(1 << 62, 3, 32, 32)),
        "input-batch-fixed-zero": cnn(x_dims=(0, 3, 32, 32)),
        "input-symbolic-height": cnn(x_dims=("batch", 3, "height", "width")),
        "input-no-shape": model([node("Relu", ["x"], ["y"])], [value_info("x", F, None)]),
        "input-rank-0": model([node("Relu", ["x"], ["y"])], [value_info("x", F, [])]),
        "input-rank-64": model([node("Relu", ["x"], ["y"])], [value_info("x", F, [2] * 64)]),
        "input-not-tensor": model([node("Relu", ["x"], ["y"])], [pb_bytes(1, "x")]),
        "input-elem-unknown": model([node("Relu", ["x"], ["y"])], [value_info("x", 999, ["batch", 8])]),
        "input-elem-negative": model([node("Relu", ["x"], ["y"])], [value_info("x", -1, ["batch", 8])]),
        "input-string-tensor": model([node("Relu", ["x"], ["y"])], [value_info("x", 8, ["batch", 8])]),
        # weights
        "weight-dim-zero": cnn(w1=(0, 3, 3, 3)),
        "weight-dim-negative": cnn(w1=(16, 3, -3, 3)),
        "weight-dim-huge": cnn(w1=(1 << 31, 1 << 31, 3, 3)),
        "weight-dims-product-overflow": cnn(w1=(1 << 62, 1 << 62, 3, 3)),
        "weight-channels-mismatch": cnn(w1=(16, 7, 3, 3)),
        "weight-kernel-larger-than-image": cnn(w1=(16, 3, 64, 64), conv_attrs={}),
        "fc-mismatch": cnn(fc=(10, 17)),
        "fc-huge": cnn(fc=(1 << 40, 16)),
        "initializer-external": model([node("MatMul", ["x", "w"], ["y"])], [value_info("x", F, ["batch", 64])], [], [tensor("w", [64, 64], external=True)]),
        "initializer-raw-wrong-length": model([node("Reshape", ["x", "s"], ["y"])], [value_info("x", F, ["batch", 16, 8, 8])], [],
                                              [tensor("s", [2], I64, raw=b"\x01\x02\x03")]),
        # convolution and pooling geometry
        "conv-stride-zero": cnn(conv_attrs={"kernel_shape": [3, 3], "strides": [0, 0]}),
        "conv-stride-negative": cnn(conv_attrs={"kernel_shape": [3, 3], "strides": [-2, -2]}),
        "conv-stride-huge": cnn(conv_attrs={"kernel_shape": [3, 3], "strides": [1 << 62, 1 << 62]}),
        "conv-pads-negative": cnn(conv_attrs={"kernel_shape": [3, 3], "pads": [-100, -100, -100, -100]}),
        "conv-pads-huge": cnn(conv_attrs={"kernel_shape": [3, 3], "pads": [1 << 62, 1 << 62, 1 << 62, 1 << 62]}),
        "conv-dilation-zero": cnn(conv_attrs={"kernel_shape": [3, 3], "dilations": [0, 0]}),
        "conv-dilation-huge": cnn(conv_attrs={"kernel_shape": [3, 3], "dilations": [1 << 62, 1 << 62]}),
        "conv-group-zero": cnn(conv_attrs={"kernel_shape": [3, 3], "group": 0}),
        "conv-group-not-dividing": cnn(conv_attrs={"kernel_shape": [3, 3], "group": 2}),
        "conv-group-huge": cnn(conv_attrs={"kernel_shape": [3, 3], "group": 1 << 62}),
        "conv-kernel-shape-huge": cnn(conv_attrs={"kernel_shape": [1 << 62, 1 << 62]}),
        "conv-kernel-shape-zero": cnn(conv_attrs={"kernel_shape": [0, 0]}),
        "conv-kernel-shape-rank-3": cnn(conv_attrs={"kernel_shape": [3, 3, 3]}),
        "conv-auto-pad-garbage": cnn(conv_attrs={"kernel_shape": [3, 3], "auto_pad": "SIDEWAYS"}),
        "conv-auto-pad-valid-big-kernel": cnn(w1=(16, 3, 40, 40), conv_attrs={"kernel_shape": [40, 40], "auto_pad": "VALID"}),
        "pool-kernel-zero": cnn(pool_attrs={"kernel_shape": [0, 0]}),
        "pool-kernel-huge": cnn(pool_attrs={"kernel_shape": [1 << 62, 1 << 62]}),
        "pool-kernel-larger-than-input": cnn(pool_attrs={"kernel_shape": [64, 64]}),
        "pool-stride-zero": cnn(pool_attrs={"kernel_shape": [2, 2], "strides": [0, 0]}),
        "pool-stride-huge": cnn(pool_attrs={"kernel_shape": [2, 2], "strides": [1 << 62, 1 << 62]}),
        "pool-pads-huge": cnn(pool_attrs={"kernel_shape": [2, 2], "pads": [1 << 62] * 4}),
        "pool-pads-negative": cnn(pool_attrs={"kernel_shape": [2, 2], "pads": [-50] * 4}),
        "pool-ceil-big-stride": cnn(pool_attrs={"kernel_shape": [2, 2], "strides": [1000, 1000], "ceil_mode": 1}),
        "pool-dilations": cnn(pool_attrs={"kernel_shape": [2, 2], "dilations": [2, 2]}),
        "conv-transpose-stride-huge": one_op("ConvTranspose", {"kernel_shape": [3, 3], "strides": [1 << 62, 1 << 62], "auto_pad": "SAME_UPPER"},
                                             inputs=["x", "w"], inits=[("w", [16, 8, 3, 3], None)]),
        "conv-transpose-dilation-huge": one_op("ConvTranspose", {"kernel_shape": [3, 3], "dilations": [1 << 62, 1 << 62], "output_shape": [4, 4]},
                                               inputs=["x", "w"], inits=[("w", [16, 8, 3, 3], None)]),
        "conv-transpose-output-shape-huge": one_op("ConvTranspose", {"kernel_shape": [3, 3], "output_shape": [1 << 40, 1 << 40]},
                                                   inputs=["x", "w"], inits=[("w", [16, 8, 3, 3], None)]),
        "conv-transpose-output-padding-huge": one_op("ConvTranspose", {"kernel_shape": [3, 3], "strides": [2, 2], "output_padding": [1 << 62, 1 << 62]},
                                                     inputs=["x", "w"], inits=[("w", [16, 8, 3, 3], None)]),
        "conv-transpose-group-huge": one_op("ConvTranspose", {"kernel_shape": [3, 3], "group": 1 << 62}, inputs=["x", "w"], inits=[("w", [16, 8, 3, 3], None)]),
        "conv-3d": one_op("Conv", {"kernel_shape": [3, 3, 3]}, inputs=["x", "w"], inits=[("w", [4, 16, 3, 3, 3], None)], x_dims=("batch", 16, 8, 8, 8)),
        # shape arithmetic
        "reshape-two-minus-ones": one_op("Reshape", inputs=["x", "s"], inits=[("s", [2], [-1, -1])]),
        "reshape-minus-five": one_op("Reshape", inputs=["x", "s"], inits=[("s", [2], [-5, 4])]),
        "reshape-mismatch": one_op("Reshape", inputs=["x", "s"], inits=[("s", [2], [7, 7])]),
        "reshape-huge": one_op("Reshape", inputs=["x", "s"], inits=[("s", [3], [1 << 62, 1 << 62, 4])]),
        "reshape-zero-copies-missing-dim": one_op("Reshape", inputs=["x", "s"], inits=[("s", [6], [0, 0, 0, 0, 0, 0])]),
        "reshape-minus-one-zero-total": one_op("Reshape", inputs=["x", "s"], inits=[("s", [2], [0, -1])], x_dims=("batch", 0, 8, 8)),
        "constant-dims-product-overflow": model([node("Constant", [], ["c"], {"value": tensor("v", [1 << 32, 1 << 32], I64, ints=[1])}), node("Reshape", ["x", "c"], ["y"])],
                                                [value_info("x", F, ["batch", 64])]),
        "constant-dims-negative": model([node("Constant", [], ["c"], {"value": tensor("v", [-1, 4], I64, ints=[1, 2, 3, 4])}), node("Reshape", ["x", "c"], ["y"])],
                                        [value_info("x", F, ["batch", 64])]),
        "constant-of-shape-huge": model([node("Constant", [], ["c"], {"value_ints": [1 << 40, 1 << 40]}), node("ConstantOfShape", ["c"], ["z"]), node("Add", ["x", "z"], ["y"])],
                                        [value_info("x", F, ["batch", 64])]),
        "constant-of-shape-value-overflow": model([node("Constant", [], ["c"], {"value_ints": [4, 4]}),
                                                   node("ConstantOfShape", ["c"], ["z"], {"value": tensor("v", [1 << 32, 1 << 32], F, floats=[1.0])}), node("Add", ["x", "z"], ["y"])],
                                                  [value_info("x", F, ["batch", 4])]),
        "constant-of-shape-negative": model([node("Constant", [], ["c"], {"value_ints": [-4, 4]}), node("ConstantOfShape", ["c"], ["z"])],
                                            [value_info("x", F, ["batch", 4])]),
        "range-zero-step": model([node("Constant", [], ["s"], {"value_int": 0}), node("Constant", [], ["l"], {"value_int": 10}), node("Constant", [], ["d"], {"value_int": 0}),
                                  node("Range", ["s", "l", "d"], ["r"]), node("Relu", ["x"], ["y"])], [value_info("x", F, ["batch", 4])]),
        "range-huge": model([node("Constant", [], ["s"], {"value_int": 0}), node("Constant", [], ["l"], {"value_int": (1 << 63) - 1}), node("Constant", [], ["d"], {"value_int": 1}),
                             node("Range", ["s", "l", "d"], ["r"]), node("Cast", ["r"], ["rf"], {"to": 1}), node("Relu", ["rf"], ["y"]), node("Relu", ["x"], ["y2"])],
                            [value_info("x", F, ["batch", 4])]),
        "range-tiny-float-step": model([node("Constant", [], ["s"], {"value_float": 0.0}), node("Constant", [], ["l"], {"value_float": 1.0}),
                                        node("Constant", [], ["d"], {"value_float": 1e-30}), node("Range", ["s", "l", "d"], ["r"]), node("Relu", ["r"], ["y"]), node("Relu", ["x"], ["y2"])],
                                       [value_info("x", F, ["batch", 4])]),
        "slice-step-i64min": one_op("Slice", inputs=["x", "st", "en", "ax", "sp"], inits=[("st", [1], [0]), ("en", [1], [8]), ("ax", [1], [2]), ("sp", [1], [-(1 << 63)])]),
        "slice-step-i64max": one_op("Slice", inputs=["x", "st", "en", "ax", "sp"], inits=[("st", [1], [0]), ("en", [1], [8]), ("ax", [1], [2]), ("sp", [1], [(1 << 63) - 1])]),
        "slice-const-step-i64max": model([node("Constant", [], ["c"], {"value_ints": [1, 2, 3, 4, 5, 6, 7, 8]}),
                                          node("Constant", [], ["st"], {"value_ints": [0]}), node("Constant", [], ["en"], {"value_ints": [8]}),
                                          node("Constant", [], ["sp"], {"value_ints": [(1 << 63) - 1]}), node("Slice", ["c", "st", "en", "", "sp"], ["s"]),
                                          node("Reshape", ["x", "s"], ["y"])], [value_info("x", F, ["batch", 4])]),
        "slice-const-step-i64min": model([node("Constant", [], ["c"], {"value_ints": [1, 2, 3, 4, 5, 6, 7, 8]}),
                                          node("Constant", [], ["st"], {"value_ints": [7]}), node("Constant", [], ["en"], {"value_ints": [-(1 << 63)]}),
                                          node("Constant", [], ["sp"], {"value_ints": [-(1 << 63)]}), node("Slice", ["c", "st", "en", "", "sp"], ["s"]),
                                          node("Reshape", ["x", "s"], ["y"])], [value_info("x", F, ["batch", 4])]),
        "slice-of-scalar": model([node("Constant", [], ["c"], {"value_int": 5}), node("Constant", [], ["st"], {"value_ints": [0]}),
                                  node("Constant", [], ["en"], {"value_ints": [1]}), node("Slice", ["c", "st", "en"], ["s"]), node("Relu", ["x"], ["y"])],
                                 [value_info("x", F, ["batch", 4])]),
        "slice-axes-out-of-range": one_op("Slice", inputs=["x", "st", "en", "ax"], inits=[("st", [1], [0]), ("en", [1], [8]), ("ax", [1], [99])]),
        "slice-more-axes-than-starts": one_op("Slice", inputs=["x", "st", "en", "ax"], inits=[("st", [1], [0]), ("en", [1], [8]), ("ax", [3], [1, 2, 3])]),
        "gather-index-out-of-range": model([node("Shape", ["x"], ["s"]), node("Constant", [], ["i"], {"value_ints": [99, -99]}), node("Gather", ["s", "i"], ["g"]),
                                            node("Reshape", ["x", "g"], ["y"])], [value_info("x", F, ["batch", 4])]),
        "gather-axis-out-of-range": one_op("Gather", {"axis": 99}, inputs=["x", "i"], inits=[("i", [1], [0])]),
        "gather-embedding-huge-index": model([node("Gather", ["emb", "x"], ["y"])], [value_info("x", I64, ["batch", "sequence"])], [], [tensor("emb", [1 << 24, 1 << 24])]),
        "transpose-perm-bad": one_op("Transpose", {"perm": [0, 0, 9, -1]}),
        "transpose-perm-short": one_op("Transpose", {"perm": [1, 0]}),
        "concat-axis-99": one_op("Concat", {"axis": 99}, inputs=["x", "x"]),
        "concat-scalar": model([node("Constant", [], ["c"], {"value_int": 3}), node("Concat", ["c", "c"], ["d"], {"axis": 0}), node("Relu", ["x"], ["y"])], [value_info("x", F, ["batch", 4])]),
        "concat-many-huge": one_op("Concat", {"axis": 1}, inputs=["x"] * 200, x_dims=("batch", 1 << 30, 8, 8)),
        "split-sizes-huge": one_op("Split", {"axis": 1}, inputs=["x", "sp"], inits=[("sp", [2], [1 << 62, 1 << 62])], outputs=("a", "b")),
        "split-sizes-negative": one_op("Split", {"axis": 1}, inputs=["x", "sp"], inits=[("sp", [2], [-8, 24])], outputs=("a", "b")),
        "split-no-outputs": one_op("Split", {"axis": 1}, outputs=()),
        "squeeze-axis-99": one_op("Squeeze", inputs=["x", "a"], inits=[("a", [1], [99])]),
        "unsqueeze-axes-huge": one_op("Unsqueeze", inputs=["x", "a"], inits=[("a", [2], [1 << 62, -(1 << 62)])]),
        "unsqueeze-many-axes": one_op("Unsqueeze", inputs=["x", "a"], inits=[("a", [100], list(range(100)))]),
        "expand-huge": one_op("Expand", inputs=["x", "s"], inits=[("s", [4], [1 << 30, 1 << 30, 8, 8])]),
        "expand-not-broadcastable": one_op("Expand", inputs=["x", "s"], inits=[("s", [4], [3, 5, 7, 9])]),
        "tile-huge": one_op("Tile", inputs=["x", "r"], inits=[("r", [4], [1 << 62, 1 << 62, 1, 1])]),
        "tile-negative": one_op("Tile", inputs=["x", "r"], inits=[("r", [4], [-1, -1, -1, -1])]),
        "pad-huge": one_op("Pad", inputs=["x", "p"], inits=[("p", [8], [(1 << 63) - 1] * 8)]),
        "pad-very-negative": one_op("Pad", inputs=["x", "p"], inits=[("p", [8], [-(1 << 63)] * 8)]),
        "flatten-axis-huge": one_op("Flatten", {"axis": 1 << 62}),
        "flatten-axis-negative": one_op("Flatten", {"axis": -(1 << 62)}),
        "softmax-axis-out-of-range": one_op("Softmax", {"axis": 99}),
        "layernorm-axis-huge": one_op("LayerNormalization", {"axis": -(1 << 62)}),
        "reduce-axes-bad": one_op("ReduceMean", {"axes": [99, -99]}, opset=13),
        "argmax-axis-bad": one_op("ArgMax", {"axis": 99}),
        "groupnorm-groups-huge": one_op("GroupNormalization", {"num_groups": 1 << 62}, opset=18),
        "groupnorm-groups-not-dividing": one_op("GroupNormalization", {"num_groups": 7}, opset=18),
        "batchnorm-rank-1": one_op("BatchNormalization", x_dims=("batch",)),
        "resize-scales-nan": model([node("Constant", [], ["sc"], {"value": tensor("v", [4], F, floats=[1.0, 1.0, float("nan"), float("nan")])}), node("Resize", ["x", "", "sc"], ["y"])],
                  [value_info("x", F, ["batch", 16, 8, 8])]),
        "resize-scales-inf": model([node("Constant", [], ["sc"], {"value": tensor("v", [4], F, floats=[1.0, 1.0, float("inf"), float("inf")])}), node("Resize", ["x", "", "sc"], ["y"])],
                                   [value_info("x", F, ["batch", 16, 8, 8])]),
        "resize-scales-negative": model([node("Constant", [], ["sc"], {"value": tensor("v", [4], F, floats=[1.0, 1.0, -2.0, -2.0])}), node("Resize", ["x", "", "sc"], ["y"])],
                                        [value_info("x", F, ["batch", 16, 8, 8])]),
        "resize-scales-1e30": model([node("Constant", [], ["sc"], {"value": tensor("v", [4], F, floats=[1.0, 1.0, 1e30, 1e30])}), node("Resize", ["x", "", "sc"], ["y"])],
                                    [value_info("x", F, ["batch", 16, 8, 8])]),
        "resize-sizes-huge": model([node("Constant", [], ["sz"], {"value_ints": [1, 16, 1 << 40, 1 << 40]}), node("Resize", ["x", "", "", "sz"], ["y"])],
                                   [value_info("x", F, ["batch", 16, 8, 8])]),
        "upsample-scales-attr-inf": one_op("Upsample", {"scales": [1.0, 1.0, float("inf"), 2.0]}, opset=7),
        "lstm-hidden-huge": model([node("LSTM", ["x", "W", "R"], ["y", "h", "c"], {"hidden_size": 1 << 40})], [value_info("x", F, ["sequence", "batch", 8])], [],
                                  [tensor("W", [1, 32, 8]), tensor("R", [1, 32, 8])]),
        "lstm-hidden-zero-weights-small": model([node("LSTM", ["x", "W", "R"], ["y", "h", "c"], {"hidden_size": 0})], [value_info("x", F, ["sequence", "batch", 8])], [],
                                                [tensor("W", [1, 3, 8]), tensor("R", [1, 3, 8])]),
        "gru-layout-1-huge": model([node("GRU", ["x", "W", "R"], ["y", "h"], {"hidden_size": 1 << 31, "layout": 1, "direction": "bidirectional"})],
                                   [value_info("x", F, ["batch", "sequence", 8])], [], [tensor("W", [2, 24, 8]), tensor("R", [2, 24, 8])]),
        "matmul-mismatch": mlp(w=(65, 64)),
        "matmul-rank-1-both": mlp(x_dims=(64,), w=(64,)),
        "matmul-huge-batch-broadcast": mlp(x_dims=(1 << 20, 1 << 20, 1, 64), w=(1 << 20, 1, 64, 64)),
        "matmul-weight-huge": mlp(w=(64, 1 << 40)),
        "gemm-rank-3": one_op("Gemm", inputs=["x", "w"], inits=[("w", [8, 8], None)], x_dims=("batch", 8, 8)),
        "gemm-inner-mismatch": one_op("Gemm", {"transA": 1, "transB": 1}, inputs=["x", "w"], inits=[("w", [8, 9], None)], x_dims=("batch", 8)),
        "add-not-broadcastable": model([node("Add", ["x", "w"], ["y"])], [value_info("x", F, ["batch", 7])], [], [tensor("w", [5])]),
        "add-huge-broadcast": model([node("Add", ["x", "w"], ["y"])], [value_info("x", F, ["batch", 1, 1 << 30])], [], [tensor("w", [1 << 30, 1])]),
        "where-missing-inputs": one_op("Where", inputs=["x"]),
        "dropout-train": one_op("Dropout", {"ratio": 2.0}),
        "cast-to-garbage": one_op("Cast", {"to": 12345}),
        # graph structure
        "all-unsupported-ops": model([node("FooBar", ["x"], ["a"]), node("NonMaxSuppression", ["a"], ["b"]), node("Loop", ["b"], ["c"]), node("If", ["c"], ["d"])],
                                     [value_info("x", F, ["batch", 16])]),
        "all-unsupported-with-hints": model([node("FooBar", ["x"], ["a"])], [value_info("x", F, ["batch", 16])], [], [], [value_info("a", F, [1 << 62, 1 << 62])]),
        "hint-shape-zero": model([node("FooBar", ["x"], ["a"]), node("Relu", ["a"], ["b"])], [value_info("x", F, ["batch", 16])], [], [], [value_info("a", F, [0, 16])]),
        "hint-shape-huge": model([node("FooBar", ["x"], ["a"]), node("Relu", ["a"], ["b"])], [value_info("x", F, ["batch", 16])], [], [], [value_info("a", F, [1 << 31, 1 << 31])]),
        "custom-domain-only": model([node("Relu", ["x"], ["y"], domain="com.example")], [value_info("x", F, ["batch", 16])]),
        "node-reads-own-output": model([node("Add", ["x", "y"], ["y"])], [value_info("x", F, ["batch", 16])]),
        "node-reads-undefined": model([node("Relu", ["nowhere"], ["y"])], [value_info("x", F, ["batch", 16])]),
        "node-no-inputs": model([node("Relu", [], ["y"])], [value_info("x", F, ["batch", 16])]),
        "node-no-outputs": model([node("Relu", ["x"], [])], [value_info("x", F, ["batch", 16])]),
        "node-empty-op-type": model([node("", ["x"], ["y"])], [value_info("x", F, ["batch", 16])]),
        "duplicate-outputs": model([node("Relu", ["x"], ["y"]), node("Relu", ["x"], ["y"]), node("Relu", ["y"], ["z"])], [value_info("x", F, ["batch", 16])]),
        "no-inputs-only-initializers": model([node("Relu", ["w"], ["y"])], [], [], [tensor("w", [16, 16])]),
        "no-nodes": model([], [value_info("x", F, ["batch", 16])]),
        "opset-zero": mlp(opset=0),
        "opset-negative": mlp(opset=-1),
        "opset-huge": mlp(opset=(1 << 63) - 1),
        "ir-version-negative": model([node("Relu", ["x"], ["y"])], [value_info("x", F, ["batch", 16])], ir=-1),
        "name-with-newline": model([node("Relu", ["x"], ["y"]), node("Relu", ["nowhere"], ["z"])], [value_info("x\nnewline", F, ["batch", 16])], name="line\nbreak"),
        "node-name-newline-error": model([node("Relu", ["missing\ninput"], ["y"])], [value_info("x", F, ["batch", 16])]),
        "many-nodes-chain": model([node("Relu", ["x" if i == 0 else f"t{i-1}"], [f"t{i}"]) for i in range(1000)], [value_info("x", F, ["batch", 16])]),
        "wrong-wire-type-graph": pb_int(1, 8) + pb_int(7, 5),
        "nested-length-mismatch": pb_int(1, 8) + pb_bytes(7, pb_bytes(1, b"\x0a\xff\x01abc")),
        "deep-nesting": pb_int(1, 8) + deep_unknown(2000),
    }
    for cut in (3, 20, len(valid) // 3, len(valid) // 2, len(valid) - 5, len(valid) - 1):
        cases[f"valid-cnn-truncated-at-{cut}"] = valid[:cut]
    rng = random.Random(23)
    for i in range(10):
        b = bytearray(valid)
        for _ in range(3):
            b[rng.randrange(len(b))] = rng.getrandbits(8)
        cases[f"valid-cnn-flipped-{i}"] = bytes(b)
    for name, data in cases.items():
        write(f"{out}/{name}.onnx", data)


# ---- NeuSight data folders (eval e2e / ops / pairs): our own rows in NeuSight's layout

OPGRAPH_HEADER = "Name,OpName,FwOps,BwOps,AccOps,Prev,Next,InputShapes,OutputShape\n"
OPGRAPH_ROWS = [
    ("transformer_wte", "EMBEDDING", "[['MEM', ((4, 8), (4, 8, 16))]]", "[['MEM', ((100, 16),)]]", "[['VECadd', [1, 1600]]]"),
    ("transformer_h_0_ln_1", "VECln", "[['VECln', (32, 16)]]", "[['VECmul', (32, 16)]]", "[]"),
    ("addmm", "Linear", "[['Linear', (32, 16, 48)]]", "[['Linear', (32, 48, 16)], ['Linear', (48, 32, 16)]]", "[]"),
    ("matmul", "BMM", "[['BMM', (8, 8, 4, 8)]]", "[]", "[]"),
    ("softmax", "VECsoftmax", "[['VECsoftmax', (64, 8)]]", "[]", "[]"),
    ("add_15", "VECadd", "[['VECadd', (32, 16)]]", "[]", "[]"),
    ("lm_head", "Linear", "[['Linear', (32, 16, 100)]]", "[]", "[]"),
]
WORKLOAD = "gpt2_tiny-inf-8-4"
TRAIN_WORKLOAD = "gpt2_tiny-train-8-4"
LABEL = {"num_layer": 2, "e2e_latency": 1.5, "fw_latency": 1.5, "bwall_latency": 0}
PAPER_HEADER = "model_name,seqlen,batch,device,mode,option,label_all_e2e_latency,neusight_all_e2e_latency,roofline_all_e2e_latency,habitat_all_e2e_latency,micro_all_e2e_latency\n"


def csv_quote(s):
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n') else s


def opgraph_text(rows):
    return OPGRAPH_HEADER + "".join(",".join(csv_quote(c) for c in r) + ",x,y,z,w\n" for r in rows)


def e2e_case(out, name, opgraph=None, label=None, workload=WORKLOAD, gpu="Tesla_T4", paper=None, extra=None):
    d = f"{out}/{name}"
    os.makedirs(d, exist_ok=True)
    if opgraph is not False:
        write(f"{d}/opgraph/{workload}.csv", opgraph if opgraph is not None else opgraph_text(OPGRAPH_ROWS))
    if label is not False:
        write(f"{d}/label/{gpu}/{workload}.json", label if isinstance(label, (str, bytes)) else json.dumps(label if label is not None else LABEL))
    if paper is not None:
        write(f"{d}/paper_predictions.csv", paper)
    for path, text in (extra or {}).items():
        write(f"{d}/{path}", text)


def with_row(i, col, value):
    rows = [list(r) for r in OPGRAPH_ROWS]
    rows[i][col] = value
    return opgraph_text([tuple(r) for r in rows])


def neusight_e2e(out):
    e2e_case(out, "valid")
    e2e_case(out, "valid-train", workload=TRAIN_WORKLOAD)
    e2e_case(out, "valid-with-paper", paper=PAPER_HEADER + "gpt2_tiny,8,4,Tesla_T4,inf,,1.5,1.6,1.0,,\n")
    # label files
    for label, value in {"zero": 0, "negative": -1.5, "huge": 1e308, "tiny": 5e-324, "string": "fast", "nan-string": "NaN", "null": None}.items():
        e2e_case(out, f"label-e2e-{label}", label=dict(LABEL, e2e_latency=value))
    e2e_case(out, "label-e2e-missing", label={"num_layer": 2})
    for label, value in {"zero": 0, "u64max": 2**64 - 1, "billion": 10**9, "negative": -1, "float": 1.5, "string": "two", "beyond-u64": 2**70}.items():
        e2e_case(out, f"label-num-layer-{label}", label=dict(LABEL, num_layer=value))
    e2e_case(out, "label-fw-nan", label='{"num_layer": 2, "e2e_latency": 1.5, "fw_latency": NaN}')
    e2e_case(out, "label-fw-negative", label=dict(LABEL, fw_latency=-3, bwall_latency=-1e308))
    e2e_case(out, "label-empty", label="")
    e2e_case(out, "label-truncated", label=json.dumps(LABEL)[:20])
    e2e_case(out, "label-array", label="[1.5]")
    e2e_case(out, "label-binary", label=bytes(range(256)))
    e2e_case(out, "label-unknown-gpu", gpu="Imaginary_GPU_9000")
    e2e_case(out, "label-gpu-newline", gpu="Imaginary\nGPU")
    e2e_case(out, "label-no-opgraph", opgraph=False)
    e2e_case(out, "no-labels", label=False)
    e2e_case(out, "label-is-a-file", label=False, extra={"label": "not a folder"})
    e2e_case(out, "label-gpu-is-a-file", label=False, extra={"label/Tesla_T4": "not a folder"})
    e2e_case(out, "label-json-folder", label=False, extra={f"label/Tesla_T4/{WORKLOAD}.json/x": "a folder named .json"})
    for wl in ("gpt2", "gpt2-fly-8-4", "gpt2-inf-x-4", "gpt2-inf-8-99999999999999999999999", "gpt2-inf-0-0", "switch-inf-8-4",
               "gpt2_tiny-inf-18446744073709551615-18446744073709551615"):
        e2e_case(out, f"workload-{wl}", workload=wl)
    # operator graphs
    big = str(2**32)
    cases = {
        "linear-zero": (2, 2, "[['Linear', (0, 16, 48)]]"),
        "linear-huge": (2, 2, f"[['Linear', ({big}, {big}, {big})]]"),
        "linear-negative": (2, 2, "[['Linear', (-32, 16, 48)]]"),
        "linear-float": (2, 2, "[['Linear', (32.5, 16, 48)]]"),
        "linear-two-dims": (2, 2, "[['Linear', (32, 16)]]"),
        "linear-beyond-i64": (2, 2, "[['Linear', (99999999999999999999, 16, 48)]]"),
        "bmm-huge": (3, 2, f"[['BMM', ({big}, {big}, {big}, {big})]]"),
        "bmm-zero": (3, 2, "[['BMM', (0, 8, 4, 8)]]"),
        "vec-huge": (5, 2, f"[['VECadd', ({big}, {big})]]"),
        "vec-u63": (5, 2, "[['VECgelu', (9223372036854775807, 2)]]"),
        "vec-zero": (5, 2, "[['VECadd', (0, 0)]]"),
        "vec-unknown": (5, 2, "[['VECfrobnicate', (32, 16)]]"),
        "softmax-huge": (4, 2, f"[['VECsoftmax', ({big}, {big})]]"),
        "ln-huge": (1, 2, f"[['VECln', ({big}, {big})]]"),
        "mem-sum-overflow": (0, 2, "[['MEM', ((9223372036854775807,), (9223372036854775807,), (9223372036854775807,))]]"),
        "mem-product-overflow": (0, 2, f"[['MEM', (({big}, {big}, {big}),)]]"),
        "mem-not-tuple": (0, 2, "[['MEM', 5]]"),
        "allreduce-huge": (6, 2, "[['ALLREDUCE', (9223372036854775807,)]]"),
        "allreduce-sum-overflow": (6, 2, "[['ALLREDUCE', ((9223372036854775807,), (9223372036854775807,))]]"),
        "allreduce-negative": (6, 2, "[['ALLREDUCE', -5]]"),
        "sendrecv-huge": (6, 2, "[['SENDRECV', 9223372036854775807]]"),
        "unknown-kind": (2, 2, "[['Conv3D', (1, 2, 3)]]"),
        "kind-not-string": (2, 2, "[[7, (1, 2, 3)]]"),
        "not-a-list": (2, 2, "Linear(32, 16, 48)"),
        "unterminated": (2, 2, "[['Linear', (32, 16, 48)"),
        "unterminated-string": (2, 2, "[['Linear, (32, 16, 48)]]"),
        "trailing-text": (2, 2, "[['Linear', (32, 16, 48)]] extra"),
        "integer-beyond-i64": (2, 2, "[['Linear', (1" + "0" * 30 + ", 16, 48)]]"),
        "deeply-nested": (2, 2, "[" * 60000),
        "deeply-nested-closed": (2, 2, "[" * 3000 + "]" * 3000),
        "backward-huge": (2, 3, f"[['Linear', ({big}, {big}, {big})]]"),
    }
    for name, (row, col, value) in cases.items():
        e2e_case(out, f"opgraph-{name}", opgraph=with_row(row, col, value), workload=TRAIN_WORKLOAD if col >= 3 else WORKLOAD)
    e2e_case(out, "opgraph-empty", opgraph="")
    e2e_case(out, "opgraph-header-only", opgraph=OPGRAPH_HEADER)
    e2e_case(out, "opgraph-missing-fwops", opgraph=OPGRAPH_HEADER.replace("FwOps", "Forward") + "a,b,[],[],[],x,y,z,w\n")
    e2e_case(out, "opgraph-ragged-row", opgraph=OPGRAPH_HEADER + "a,b\n")
    e2e_case(out, "opgraph-binary", opgraph=bytes(range(256)) * 4)
    e2e_case(out, "opgraph-bom", opgraph="\ufeff" + opgraph_text(OPGRAPH_ROWS))
    e2e_case(out, "opgraph-no-layer-start", opgraph=opgraph_text([r for r in OPGRAPH_ROWS if r[0] != "transformer_h_0_ln_1"]))
    e2e_case(out, "opgraph-layer-end-before-start", opgraph=opgraph_text([OPGRAPH_ROWS[5], *OPGRAPH_ROWS[:5], OPGRAPH_ROWS[6]]))
    e2e_case(out, "opgraph-num-layer-u64max-huge-ops", opgraph=with_row(2, 2, "[['Linear', (65536, 65536, 65536)]]"), label=dict(LABEL, num_layer=2**64 - 1))
    e2e_case(out, "opgraph-num-layer-u64max", label=dict(LABEL, num_layer=2**64 - 1))
    e2e_case(out, "opgraph-all-empty", opgraph=opgraph_text([(r[0], r[1], "[]", "[]", "[]") for r in OPGRAPH_ROWS]))
    e2e_case(out, "opgraph-node-name-newline", opgraph=with_row(2, 0, "addmm\nline two").replace("(32, 16, 48)", "(32, 16)"))
    # paper predictions
    p = lambda row: PAPER_HEADER + row + "\n"
    papers = {
        "label-nan": "gpt2_tiny,8,4,Tesla_T4,inf,,NaN,1.6,1.0,,",
        "label-zero": "gpt2_tiny,8,4,Tesla_T4,inf,,0,1.6,1.0,,",
        "label-negative": "gpt2_tiny,8,4,Tesla_T4,inf,,-1.5,1.6,1.0,,",
        "label-inf": "gpt2_tiny,8,4,Tesla_T4,inf,,inf,1.6,1.0,,",
        "prediction-nan": "gpt2_tiny,8,4,Tesla_T4,inf,,1.5,NaN,NaN,NaN,NaN",
        "prediction-negative": "gpt2_tiny,8,4,Tesla_T4,inf,,1.5,-1.6,-1e308,,",
        "prediction-inf": "gpt2_tiny,8,4,Tesla_T4,inf,,1.5,inf,-inf,,",
        "prediction-string": "gpt2_tiny,8,4,Tesla_T4,inf,,1.5,fast,,,",
        "seqlen-negative": "gpt2_tiny,-8,4,Tesla_T4,inf,,1.5,1.6,,,",
        "ragged": "gpt2_tiny,8,4",
        "extra-columns": "gpt2_tiny,8,4,Tesla_T4,inf,,1.5,1.6,1.0,,,,,,,",
    }
    for name, row in papers.items():
        e2e_case(out, f"paper-{name}", paper=p(row))
    e2e_case(out, "paper-empty", paper="")
    e2e_case(out, "paper-header-only", paper=PAPER_HEADER)
    e2e_case(out, "paper-wrong-header", paper="a,b,c\n1,2,3\n")
    e2e_case(out, "paper-binary", paper=bytes(range(256)))


OPS_HEADER = "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,M,N,K\n"
VEC_HEADER = "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,H\n"
CONV_HEADER = ("OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,Grid z,Block x,Block y,Block z,"
               "CUDA Version,Kernels,B,Input_Channel,Output_Channel,Kernel_Szie,Input_Size,Stride,Padding\n")


def ops_row(op, lat, dev, dims, kernel="volta_sgemm_128x64_tn", warps="16.0", grid=("20", "16", "1"), block=("128", "1", "1")):
    return ",".join([op, lat, dev, "p2.1.0", "8902", kernel, warps, "4.0", *grid, *block, "cu121", ""] + [str(d) for d in dims]) + "\n"


def ops_folder(d, linear=None, bmm=None, add=None, conv=None, test=None):
    """ops/train/<op>/<GPU>.csv and ops/test/<op>.csv with two GPUs, T4 and V100."""
    gpus = ("Tesla T4", "Tesla V100-PCIE-32GB")
    def rows(op, shapes, dev, scale):
        return "".join(ops_row(op, f"{0.05 * scale * (i + 1):.6f}", dev, s) for i, s in enumerate(shapes))
    lin_shapes = [(1, 256, 256, 256), (1, 1024, 1024, 1024), (4, 512, 768, 3072), (1, 64, 64, 64)]
    vec_shapes = [(64, 1024), (256, 4096), (1, 128), (1024, 1024)]
    conv_shapes = [(8, 3, 64, 3, 224, 1, 1), (16, 64, 64, 3, 56, 1, 1), (4, 128, 256, 1, 28, 2, 0)]
    for dev, scale in zip(gpus, (2.0, 1.0)):
        stem = dev.replace(" ", "_")
        write(f"{d}/ops/train/linear/{stem}.csv", linear(dev) if linear else OPS_HEADER + rows("linear", lin_shapes, dev, scale))
        write(f"{d}/ops/train/bmm/{stem}.csv", bmm(dev) if bmm else OPS_HEADER + rows("bmm", lin_shapes, dev, scale))
        write(f"{d}/ops/train/add/{stem}.csv", add(dev) if add else VEC_HEADER + rows("add", vec_shapes, dev, scale))
        write(f"{d}/ops/train/conv/{stem}.csv", conv(dev) if conv else CONV_HEADER + rows("conv", conv_shapes, dev, scale))
    write(f"{d}/ops/test/linear.csv", test if test is not None else OPS_HEADER + "".join(rows("linear", lin_shapes[:2], dev, s) for dev, s in zip(gpus, (2.0, 1.0))))


def neusight_ops(out):
    ops_folder(f"{out}/valid")
    big = 2**32
    bad_lin = {
        "latency-nan": ("NaN", (1, 256, 256, 256)),
        "latency-inf": ("inf", (1, 256, 256, 256)),
        "latency-zero": ("0", (1, 256, 256, 256)),
        "latency-negative": ("-0.5", (1, 256, 256, 256)),
        "latency-huge": ("1e308", (1, 256, 256, 256)),
        "latency-subnormal": ("5e-324", (1, 256, 256, 256)),
        "latency-string": ("fast", (1, 256, 256, 256)),
        "dims-zero": ("0.1", (0, 256, 256, 256)),
        "dims-negative": ("0.1", (1, -256, 256, 256)),
        "dims-float": ("0.1", (1, 256.5, 256, 256)),
        "dims-b-times-m-overflow": ("0.1", (big, big, 256, 256)),
        "dims-huge": ("0.1", (big, big, big, big)),
        "dims-u64max": ("0.1", (2**64 - 1, 2**64 - 1, 2**64 - 1, 2**64 - 1)),
        "dims-1e6-each": ("0.1", (10**6, 10**6, 10**6, 10**6)),
        "dims-all-one": ("1e-9", (1, 1, 1, 1)),
    }
    for name, (lat, dims) in bad_lin.items():
        ops_folder(f"{out}/linear-{name}", linear=lambda dev, lat=lat, dims=dims: OPS_HEADER + ops_row("linear", "0.2", dev, (1, 512, 512, 512)) + ops_row("linear", lat, dev, dims))
        ops_folder(f"{out}/bmm-{name}", bmm=lambda dev, lat=lat, dims=dims: OPS_HEADER + ops_row("bmm", "0.2", dev, (1, 512, 512, 512)) + ops_row("bmm", lat, dev, dims))
    for name, dims in {"vec-huge": (big, big), "vec-zero": (0, 64), "vec-u64max": (2**64 - 1, 2)}.items():
        ops_folder(f"{out}/add-{name}", add=lambda dev, dims=dims: VEC_HEADER + ops_row("add", "0.03", dev, (64, 64)) + ops_row("add", "0.03", dev, dims))
    conv_bad = {
        "kernel-larger-than-input": (8, 3, 64, 11, 5, 1, 0),
        "stride-zero": (8, 3, 64, 3, 32, 0, 1),
        "padding-huge": (8, 3, 64, 3, 32, 1, 2**63),
        "padding-negative": (8, 3, 64, 3, 32, 1, -1),
        "size-huge": (8, 3, 64, 3, big, 1, 1),
        "channels-huge": (big, big, big, 3, 32, 1, 1),
        "stride-huge": (8, 3, 64, 3, 32, 2**63, 1),
        "kernel-huge": (8, 3, 64, 2**63, 32, 1, 1),
    }
    for name, dims in conv_bad.items():
        ops_folder(f"{out}/conv-{name}", conv=lambda dev, dims=dims: CONV_HEADER + ops_row("conv", "0.5", dev, (8, 3, 64, 3, 224, 1, 1)) + ops_row("conv", "0.5", dev, dims))
    odd = {
        "device-unknown": lambda dev: OPS_HEADER + ops_row("linear", "0.2", "Imaginary GPU", (1, 64, 64, 64)),
        "device-empty": lambda dev: OPS_HEADER + ops_row("linear", "0.2", "", (1, 64, 64, 64)),
        "device-newline": lambda dev: OPS_HEADER + ops_row("linear", "0.2", '"Imaginary\nGPU"', (1, 64, 64, 64)),
        "wrong-field-count": lambda dev: OPS_HEADER + "linear,0.2," + dev + "\n",
        "header-only": lambda dev: OPS_HEADER,
        "empty": lambda dev: "",
        "no-latency-column": lambda dev: OPS_HEADER.replace("Latency", "Time") + ops_row("linear", "0.2", dev, (1, 64, 64, 64)),
        "bom": lambda dev: "\ufeff" + OPS_HEADER + ops_row("linear", "0.2", dev, (1, 64, 64, 64)),
        "binary": lambda dev: bytes(range(256)),
        "grid-nan": lambda dev: OPS_HEADER + ops_row("linear", "0.2", dev, (1, 64, 64, 64), grid=("NaN", "inf", "-1")),
        "grid-huge": lambda dev: OPS_HEADER + ops_row("linear", "0.2", dev, (1, 64, 64, 64), grid=("1e300", "1e300", "1e300"), block=("1e300", "1", "1")),
        "warps-nan": lambda dev: OPS_HEADER + ops_row("linear", "0.2", dev, (1, 64, 64, 64), warps="NaN"),
        "warps-negative": lambda dev: OPS_HEADER + ops_row("linear", "0.2", dev, (1, 64, 64, 64), warps="-16"),
        "unknown-op": lambda dev: OPS_HEADER + ops_row("frobnicate", "0.2", dev, (1, 64, 64, 64)),
        "unquoted-quote": lambda dev: OPS_HEADER + 'linear,0.2,"' + dev + ",p,8,k\n",
        "all-rows-bad": lambda dev: OPS_HEADER + ops_row("linear", "NaN", dev, (1, 64, 64, 64)) + ops_row("linear", "0.2", dev, (0, 0, 0, 0)),
    }
    for name, fn in odd.items():
        ops_folder(f"{out}/linear-{name}", linear=fn)
    ops_folder(f"{out}/test-empty", test="")
    ops_folder(f"{out}/test-nan", test=OPS_HEADER + ops_row("linear", "NaN", "Tesla T4", (1, 64, 64, 64)))
    ops_folder(f"{out}/test-huge-dims", test=OPS_HEADER + ops_row("linear", "0.2", "Tesla T4", (big, big, big, big)))
    d = f"{out}/no-ops-folder"
    os.makedirs(d, exist_ok=True)
    write(f"{d}/README", "no ops/ here\n")
    d = f"{out}/ops-is-a-file"
    write(f"{d}/ops", "not a folder\n")
    d = f"{out}/only-t4"
    write(f"{d}/ops/train/linear/Tesla_T4.csv", OPS_HEADER + ops_row("linear", "0.2", "Tesla T4", (1, 64, 64, 64)))


AMD_HEADER = "OPName,Latency,Device,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,Block z,Kernels,B,M,N,K\n"
AMD_VEC_HEADER = "OPName,Latency,Device,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,Block z,Kernels,B,H\n"
TENSILE = "Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SE_GSU1_ISA908_WG64_4_1_WGM2"


def amd_row(op, lat, kernel, grid, block, dims):
    return ",".join([op, lat, "AMD Instinct MI100", kernel] + [str(v) for v in grid] + [str(v) for v in block] + [";" + kernel.lower()] + [str(v) for v in dims]) + "\n"


def amd_folder(d, bmm_rows, add_rows=None):
    """NeuSight's AMD collection layout: amd_ops/{train,test}/collect/<op>/p2.4.1/<GPU>.csv."""
    good_add = amd_row("add", "0.03", "vectorized_elementwise_kernel", (1024, 1, 1), (256, 1, 1), (64, 4096))
    write(f"{d}/amd_ops/train/collect/add/p2.4.1/AMD Instinct MI100.csv", AMD_VEC_HEADER + good_add + "".join(add_rows or []))
    good = amd_row("bmm", "0.5", TENSILE, (512, 32, 8), (256, 1, 1), (8, 2048, 512, 256))
    write(f"{d}/amd_ops/test/collect/bmm/p2.4.1/AMD Instinct MI100.csv", AMD_HEADER + good + "".join(bmm_rows))


def amd_ops(out):
    """HIP launch sizes (work-items, divided by the workgroup), Tensile names and the
    collection layout at their edges."""
    amd_folder(f"{out}/valid", [])
    u64 = 2**64 - 1
    launches = {
        "block-zero": ((512, 32, 8), (0, 0, 0)),
        "grid-u64max": ((u64, u64, u64), (1, 1, 1)),
        "grid-zero": ((0, 0, 0), (256, 1, 1)),
        "block-u64max": ((512, 32, 8), (u64, 1, 1)),
        "grid-negative": ((-512, 32, 8), (256, 1, 1)),
    }
    for name, (grid, block) in launches.items():
        amd_folder(f"{out}/launch-{name}", [amd_row("bmm", "0.5", TENSILE, grid, block, (8, 2048, 512, 256))])
    tiles = {
        "tile-zero": "Cijk_Ailk_Bljk_SB_MT0x0x0_MI32x32x2x1_SE",
        "tile-u32-overflow": "Cijk_Ailk_Bljk_SB_MT4294967296x64x16_SE",
        "tile-huge": "Cijk_Ailk_Bljk_SB_MT4294967295x4294967295x16_MI0x0_GSU4294967295_WG4294967295_4294967295_4294967295",
        "tile-empty-fields": "Cijk___MT_MI_WG__GSU_",
        "name-newline": "Cijk_MT128x64x16\nSE",
    }
    for name, kernel in tiles.items():
        amd_folder(f"{out}/{name}", [amd_row("bmm", "0.5", json.dumps(kernel) if "\n" in kernel else kernel, (512, 32, 8), (256, 1, 1), (8, 2048, 512, 256))])
    amd_folder(f"{out}/dims-huge", [amd_row("bmm", "0.5", TENSILE, (512, 32, 8), (256, 1, 1), (2**32, 2**32, 2**32, 2**32))])
    amd_folder(f"{out}/latency-nan", [amd_row("bmm", "NaN", TENSILE, (512, 32, 8), (256, 1, 1), (8, 2048, 512, 256))])
    amd_folder(f"{out}/add-dims-u64max", [], [amd_row("add", "0.03", "k", (1, 1, 1), (1, 1, 1), (u64, u64))])
    # The layout itself: files at other depths, a collect/ that is a file, nothing but merged copies.
    d = f"{out}/only-merged-copies"
    write(f"{d}/amd_ops/train/collect/add.csv", AMD_VEC_HEADER + amd_row("add", "0.03", "k", (1024, 1, 1), (256, 1, 1), (64, 4096)))
    write(f"{d}/amd_ops/train/elem.csv", AMD_VEC_HEADER)
    write(f"{out}/collect-is-a-file/amd_ops/train/collect", "not a folder\n")
    d = f"{out}/too-deep"
    write(f"{d}/amd_ops/test/collect/bmm/p2.4.1/extra/AMD Instinct MI100.csv", AMD_HEADER + amd_row("bmm", "0.5", TENSILE, (512, 32, 8), (256, 1, 1), (8, 2048, 512, 256)))


def neusight(out):
    neusight_e2e(os.path.join(out, "e2e"))
    neusight_ops(os.path.join(out, "ops"))
    amd_ops(os.path.join(out, "amd_ops"))


MODERN = os.path.join(HERE, "..", "fixtures", "modern")
GEMM_TABLE = "systems/data/h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet"
VIDUR_MLP_HEADER = "n_head,n_kv_head,n_embd,n_expanded_embd,vocab_size,use_gated_mlp,num_tokens,num_tensor_parallel_workers,time_stats.attn_pre_proj.median,time_stats.mlp_act.median"
PW_HEADER = "M,N,K,avg_duration,hardware"
COLL_HEADER = ",time_stats.all_reduce.median,num_workers,size,collective,devices_per_node"


def modern(out):
    """AIConfigurator parquet tables damaged byte-wise (from the committed fixture), Vidur and
    PipeWeave CSVs broken one field at a time. Each case is a data folder for `eval ops`."""
    table = open(os.path.join(MODERN, "aiconfigurator", GEMM_TABLE), "rb").read()
    rng = random.Random(17)
    damaged = {
        "empty": b"", "magic-only": b"PAR1", "magic-twice": b"PAR1PAR1", "text": b"m,n,k,latency\n1,1,1,1\n",
        "truncated-half": table[: len(table) // 2], "truncated-footer": table[:-9], "no-tail-magic": table[:-4],
        "footer-length-huge": table[:-8] + (2**31 - 1).to_bytes(4, "little") + b"PAR1",
        "footer-length-zero": table[:-8] + (0).to_bytes(4, "little") + b"PAR1",
    }
    for i in range(6):
        b = bytearray(table)
        for _ in range(8):
            b[rng.randrange(len(b))] = rng.randrange(256)
        damaged[f"bitflips-{i}"] = bytes(b)
    for name, data in damaged.items():
        write(f"{out}/aic-{name}/{GEMM_TABLE}", data)
    write(f"{out}/aic-table-is-a-folder/{GEMM_TABLE}/x", "")
    # Found by the aiconfigurator_parquet fuzz target: a column chunk with a negative offset made
    # the parquet crate assert (exit 101) while reading rows.
    crash = open(os.path.join(HERE, "..", "fixtures", "fuzz", "aiconfigurator-negative-column-offset.parquet"), "rb").read()
    write(f"{out}/aic-fuzz-negative-column-offset/systems/data/h100_sxm/attention/vllm/0.24.0/context_attention_perf.parquet", crash)
    # Also found by it: an attention row whose batch × heads × length product overflowed 64 bits
    # in the sustained roofline's work (exit 101).
    crash = open(os.path.join(HERE, "..", "fixtures", "fuzz", "aiconfigurator-attention-size-overflow.parquet"), "rb").read()
    write(f"{out}/aic-fuzz-attention-size-overflow/systems/data/h100_sxm/attention/vllm/0.24.0/context_attention_perf.parquet", crash)
    write(f"{out}/aic-fuzz-attention-size-overflow/systems/data/b200_sxm/attention/vllm/0.24.0/context_attention_perf.parquet", crash)
    os.makedirs(f"{out}/aic-no-versions/systems/data/h100_sxm/gemm/vllm", exist_ok=True)
    vidur_rows = {
        "valid": "32,32,4096,11008,32000,True,64,1,0.05,0.01",
        "zero-heads": "0,32,4096,11008,32000,True,64,1,0.05,0.01",
        "heads-not-dividing": "33,32,4096,11008,32000,True,64,1,0.05,0.01",
        "tokens-huge": f"32,32,4096,11008,32000,True,{2**63},1,0.05,0.01",
        "tp-zero": "32,32,4096,11008,32000,True,64,0,0.05,0.01",
        "time-nan": "32,32,4096,11008,32000,True,64,1,NaN,0.01",
        "time-negative": "32,32,4096,11008,32000,True,64,1,-1,0.01",
        "time-huge": "32,32,4096,11008,32000,True,64,1,1e308,0.01",
        "short-row": "32,32,4096",
    }
    for name, row in vidur_rows.items():
        write(f"{out}/vidur-{name}/compute/h100/org/model/mlp.csv", f"{VIDUR_MLP_HEADER}\n{row}\n")
    write(f"{out}/vidur-missing-column/compute/h100/org/model/mlp.csv", "n_head,n_embd\n32,4096\n")
    write(f"{out}/vidur-unknown-gpu/compute/imaginary/org/model/mlp.csv", f"{VIDUR_MLP_HEADER}\n{vidur_rows['valid']}\n")
    coll_rows = {"valid": "0,0.05,8,2048,all_reduce,8", "workers-zero": "0,0.05,0,2048,all_reduce,8", "size-huge": f"0,0.05,8,{2**64 - 1},all_reduce,8",
                 "unknown-collective": "0,0.05,8,2048,broadcast_all,8", "time-inf": "0,inf,8,2048,all_reduce,8"}
    for name, row in coll_rows.items():
        write(f"{out}/vidur-net-{name}/network/h100_dgx/all_reduce.csv", f"{COLL_HEADER}\n{row}\n")
    pw_rows = {"valid": "64,4096,4096,20.5,NVIDIA H20", "m-zero": "0,4096,4096,20.5,NVIDIA H20", "k-huge": f"64,4096,{2**62},20.5,NVIDIA H20",
               "duration-zero": "64,4096,4096,0,NVIDIA H20", "duration-subnormal": "64,4096,4096,5e-324,NVIDIA H20",
               "unknown-gpu": "64,4096,4096,20.5,NVIDIA Imaginary", "gpu-newline": '64,4096,4096,20.5,"NVIDIA\nH20"', "text-in-m": "many,4096,4096,20.5,NVIDIA H20"}
    for name, row in pw_rows.items():
        write(f"{out}/pipeweave-{name}/gemm_fp8_train.csv", f"{PW_HEADER}\n{row}\n")
    write(f"{out}/pipeweave-missing-column/gemm_fp8_train.csv", "M,N,avg_duration,hardware\n64,64,5,NVIDIA H20\n")
    write(f"{out}/pipeweave-binary/gemm_fp8_train.csv", bytes(range(256)) * 4)


def fixtures(out):
    """Valid inputs the other readers' cases are run against (a GPU file is tried on this trace)."""
    write(f"{out}/trace-valid.json", linked([dict(name="aten::mm", dims=[[64, 64], [64, 64]]),
                                              dict(name="aten::add", dims=[[64, 64], [64, 64]], kernel="vectorized_elementwise_kernel", dur=3)]))
    write(f"{out}/cnn-valid.onnx", cnn())


def main():
    for reader in ("config", "gpu", "trace", "onnx", "neusight", "modern", "fixtures"):
        shutil.rmtree(os.path.join(HERE, reader), ignore_errors=True)
    configs(os.path.join(HERE, "config"))
    real_configs(os.path.join(HERE, "config"))
    limit_configs(os.path.join(HERE, "config"))
    gpus(os.path.join(HERE, "gpu"))
    gpus_real(os.path.join(HERE, "gpu"))
    traces(os.path.join(HERE, "trace"))
    traces_more(os.path.join(HERE, "trace"))
    onnx(os.path.join(HERE, "onnx"))
    onnx_more(os.path.join(HERE, "onnx"))
    neusight(os.path.join(HERE, "neusight"))
    modern(os.path.join(HERE, "modern"))
    fixtures(os.path.join(HERE, "fixtures"))


if __name__ == "__main__":
    main()
