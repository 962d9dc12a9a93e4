"""The Python bindings give exactly what the CLI prints with --json for the same inputs, and bad
input raises ValueError with the CLI's one-line message.

Needs the package installed with its extension (`pip install ./python`) and the CLI binary
(target/release/wavecast or $WAVECAST_BIN); see conftest.py.
"""

import json
import os
import pickle
import subprocess
import sys

import pytest

from conftest import ROOT, missing

TRACE = os.path.join(ROOT, "..", "shared", "data", "kineto", "a100_alexnet_train.json.gz")

# A small Llama-shaped Hugging Face config.json, inline.
CONFIG = {
    "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 1024,
    "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
    "intermediate_size": 2816, "vocab_size": 32000, "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
}


def without_model(d):
    """An inline config has no file name to name the model after; everything else must match."""
    return {k: v for k, v in d.items() if k != "model"}


# ---- values equal the CLI's --json ----

def test_predict_transformer_preset(wavecast, cli):
    p = wavecast.predict("gpt2-large", gpu="h100", batch=4, seq=512, mode="train", dtype="bf16")
    want = cli.json("predict", "--model", "gpt2-large", "--gpu", "h100", "--batch", 4, "--seq", 512,
                    "--mode", "train", "--dtype", "bf16")
    assert p.to_dict() == want
    assert p == want
    assert p.total_ms == want["total_ms"] and p.phases.forward == want["phases"]["forward"]
    assert p.phases.backward > 0 and p.phases.optimizer > 0
    assert [c.ms for c in p.classes] == [c["ms"] for c in want["classes"]]
    assert isinstance(p, wavecast.Prediction) and "gpt2-large" in repr(p)


def test_predict_inference_defaults_and_options(wavecast, cli):
    p = wavecast.predict("llama-3.2-1b", gpu="a100", mode="infer", attention="eager", predictor="roofline")
    assert p == cli.json("predict", "--model", "llama-3.2-1b", "--gpu", "a100", "--mode", "inference",
                         "--attention", "eager", "--predictor", "roofline")
    assert p.mode == "inference" and p.batch == 1 and p.seq == 1024


def test_predict_vision_preset(wavecast, cli):
    p = wavecast.predict("resnet50", gpu="a100", batch=32, mode="train", optimizer="sgd-momentum", image_size=160)
    want = cli.json("predict", "--model", "resnet50", "--gpu", "a100", "--batch", 32, "--mode", "train",
                    "--optimizer", "sgd-momentum", "--image-size", 160)
    assert p == want
    assert p.samples_per_s == want["samples_per_s"]
    assert any(c["class"] == "conv" for c in p.classes)


def test_predict_inline_config_and_config_path(wavecast, cli, tmp_path):
    path = tmp_path / "tiny-llama.json"
    path.write_text(json.dumps(CONFIG))
    want = cli.json("predict", "--config", path, "--gpu", "l4", "--batch", 2, "--seq", 512, "--mode", "train",
                    "--dtype", "bf16")
    inline = wavecast.predict(config=CONFIG, gpu="l4", batch=2, seq=512, mode="train", dtype="bf16")
    assert without_model(inline.to_dict()) == without_model(want)
    from_file = wavecast.predict(config=path, gpu="l4", batch=2, seq=512, mode="train", dtype="bf16")
    assert from_file == want and from_file.model == "tiny-llama"


def test_serve(wavecast, cli):
    s = wavecast.serve("qwen2.5-7b", gpu="h100", batch=8, input_len=1000, output_len=100, tp=2, weights="fp8")
    want = cli.json("predict", "--model", "qwen2.5-7b", "--gpu", "h100", "--mode", "serve", "--batch", 8,
                    "--input-len", 1000, "--output-len", 100, "--tp", 2, "--weights", "fp8")
    assert s == want and s.to_dict() == want
    assert s.prefill_ms == want["prefill_ms"] and s.tp == 2 and s.weights == "fp8"
    assert isinstance(s, wavecast.ServeReport)


def test_serve_in_a_named_engine_matches_the_cli(wavecast, cli):
    s = wavecast.serve("qwen2.5-7b", gpu="h100", batch=8, input_len=1000, output_len=50, backend="trtllm")
    want = cli.json("predict", "--model", "qwen2.5-7b", "--gpu", "h100", "--mode", "serve", "--batch", 8,
                    "--input-len", 1000, "--output-len", 50, "--backend", "trtllm")
    assert s.to_dict() == want and want["backend"] == "trtllm"
    vllm = wavecast.serve("qwen2.5-7b", gpu="h100", batch=8, input_len=1000, output_len=50)
    # The engines' host time per iteration differs (TensorRT-LLM 1 ms, vLLM 35 us per layer: 0.98 ms
    # for 28 layers), so the keyword reaching the engine shows as a different decode step.
    assert s.decode_ms != vllm.decode_ms and vllm.to_dict()["backend"] == "vllm"


def test_serve_prices_from_measured_tables_as_the_cli_does(wavecast, cli, monkeypatch):
    ops = os.path.join(ROOT, "tests", "fixtures", "modern")
    s = wavecast.serve("llama-3.1-8b", gpu="h200", input_len=1000, output_len=8, ops_data=ops)
    want = cli.json("predict", "--model", "llama-3.1-8b", "--gpu", "h200", "--mode", "serve",
                    "--input-len", 1000, "--output-len", 8, "--ops-data", ops)
    assert s.to_dict() == want
    assert want["provenance"]["transfer from h100-sxm"] > 0.5
    monkeypatch.setenv("WAVECAST_OPS_DATA", str(ops))
    assert wavecast.serve("llama-3.1-8b", gpu="h200", input_len=1000, output_len=8).to_dict() == want


def test_serve_inline_config(wavecast, cli, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(CONFIG))
    s = wavecast.serve(config=CONFIG, gpu="l4", batch=2, input_len=100, output_len=10)
    want = cli.json("predict", "--config", path, "--gpu", "l4", "--mode", "serve", "--batch", 2,
                    "--input-len", 100, "--output-len", 10)
    assert without_model(s.to_dict()) == without_model(want)


def test_compare_rows_and_skipped(wavecast, cli):
    rows = wavecast.compare("qwen3-32b", gpus=["h100", "l4"], tp=[1, 2], batch=8, input_len=1000, output_len=100)
    want = cli.json("compare", "--model", "qwen3-32b", "--gpus", "h100,l4", "--tp", "1,2", "--batch", 8,
                    "--input-len", 1000, "--output-len", 100)
    assert rows.to_dict() == want
    assert list(rows) == want["results"] and len(rows) == len(want["results"]) >= 1
    assert rows.skipped == want["skipped"] and {s.gpu for s in rows.skipped} == {"l4"}
    assert rows.model == "qwen3-32b" and rows.input_len == 1000
    assert all(isinstance(r, wavecast.ServeReport) for r in rows)
    # Rows are flat enough for a table: every value a scalar except the per-class breakdowns
    # and where the prices came from.
    for r in rows:
        assert {k for k, v in r.items() if isinstance(v, (dict, list))} <= {"prefill_classes", "decode_classes", "provenance", "unpriced"}
    # Comma-separated strings work as on the command line.
    again = wavecast.compare("qwen3-32b", gpus="h100,l4", tp="1,2", batch=8, input_len=1000, output_len=100)
    assert again.to_dict() == want


def test_compare_in_a_named_engine_matches_the_cli(wavecast, cli):
    rows = wavecast.compare("qwen2.5-7b", gpus="h100", batch=8, input_len=1000, output_len=50, backend="trtllm")
    want = cli.json("compare", "--model", "qwen2.5-7b", "--gpus", "h100", "--batch", 8,
                    "--input-len", 1000, "--output-len", 50, "--backend", "trtllm")
    assert rows.to_dict() == want and [r.to_dict()["backend"] for r in rows] == ["trtllm"]


def test_compare_rows_make_a_dataframe(wavecast):
    try:
        import pandas
    except ImportError:
        missing("pandas is not installed")
    rows = wavecast.compare("llama-3-8b", gpus=["h100", "a100", "l4"], input_len=500, output_len=50)
    df = pandas.DataFrame(rows)
    assert list(df["gpu"]) == [r.gpu for r in rows] and df["total_ms"].dtype.kind == "f"


def test_gpus_and_models(wavecast, cli):
    gpus = wavecast.gpus()
    assert gpus == cli.json("gpus")
    sustained = wavecast.sustained()
    assert sustained == cli.json("gpus", "--sustained")
    h100 = next(r for r in sustained if r["id"] == "h100-sxm")
    assert 0 < h100.bf16_tflops <= h100.peak_bf16_tflops and h100.nvfp4_tflops is None
    assert all(isinstance(g, dict) for g in gpus) and gpus[0].peak_tflops.fp32 > 0
    assert wavecast.models() == cli.json("models")
    assert "gpt2" in [m.name for m in wavecast.models()]


def test_gpu_file(wavecast, cli, tmp_path):
    """A user catalog adds a GPU (here a copy of the built-in P4 under a new name)."""
    catalog = open(os.path.join(ROOT, "crates", "wavecast-gpu", "data", "gpus.toml")).read()
    p4 = catalog[catalog.index('[[gpu]]\nid = "p4"'):]
    p4 = p4[:p4.index("[[gpu]]", 1)]
    lines = [ln for ln in p4.splitlines() if not ln.startswith(("id =", "name =", "aliases ="))]
    mine = tmp_path / "mine.toml"
    mine.write_text("\n".join([lines[0], 'id = "my-p4"', 'name = "My P4"', "aliases = []", *lines[1:]]) + "\n")
    assert wavecast.gpus(gpu_file=mine) == cli.json("gpus", "--gpu-file", mine)
    assert wavecast.gpus(mine)[-1].id == "my-p4"
    p = wavecast.predict("gpt2", gpu="my-p4", gpu_file=mine, batch=2, seq=256)
    assert p == cli.json("predict", "--model", "gpt2", "--gpu", "my-p4", "--gpu-file", mine, "--batch", 2, "--seq", 256)


def test_bad_gpu_file(wavecast, cli, tmp_path):
    bad = tmp_path / "gpus.toml"
    bad.write_text("this is not [valid toml\n")
    with pytest.raises(ValueError) as e:
        wavecast.gpus(gpu_file=bad)
    assert str(e.value) == cli.error("gpus", "--gpu-file", bad)
    assert "\n" not in str(e.value) and "line 1" in str(e.value)


def test_scale(wavecast, cli):
    if not os.path.isfile(TRACE):
        pytest.skip(f"no trace at {TRACE}")
    trace = os.path.abspath(TRACE)
    r = wavecast.scale(trace, to=["h100", "l4"])
    assert r == cli.json("scale", "--trace", trace, "--to", "h100,l4")
    assert [d.gpu for d in r.destinations] == ["h100-sxm", "l4"] and r.origin.kernel_ms > 0
    lo, hi = r.destinations[0].interval_ms
    assert lo < r.destinations[0].per_step_ms < hi
    k = wavecast.scale(trace, to="h100", kernels=3)
    assert k == cli.json("scale", "--trace", trace, "--to", "h100", "--kernels", "3")
    assert len(k.kernel_rows) == 3 and k.kernel_rows[0]["origin_us"] >= k.kernel_rows[2]["origin_us"]
    w = wavecast.scale(trace, to="h100", from_="a100-sxm-40gb", method="wave", wave_form="habitat-code", gamma="habitat")
    assert w == cli.json("scale", "--trace", trace, "--to", "h100", "--from", "a100-sxm-40gb", "--method", "wave",
                         "--wave-form", "habitat-code", "--gamma", "habitat")


# ---- bad input: ValueError with the CLI's one-line message ----

BAD_PREDICT = [
    ("unknown GPU", {"model": "gpt2", "gpu": "nosuch"}, ["--model", "gpt2", "--gpu", "nosuch"]),
    ("unknown model", {"model": "nosuch", "gpu": "h100"}, ["--model", "nosuch", "--gpu", "h100"]),
    ("zero batch", {"model": "gpt2", "gpu": "h100", "batch": 0}, ["--model", "gpt2", "--gpu", "h100", "--batch", "0"]),
    ("bad dtype", {"model": "gpt2", "gpu": "h100", "dtype": "fp7"}, ["--model", "gpt2", "--gpu", "h100", "--dtype", "fp7"]),
    ("zero seq", {"model": "gpt2", "gpu": "h100", "seq": 0}, ["--model", "gpt2", "--gpu", "h100", "--seq", "0"]),
]


@pytest.mark.parametrize("case,kwargs,argv", BAD_PREDICT, ids=[c[0] for c in BAD_PREDICT])
def test_bad_predict_input_is_the_cli_message(wavecast, cli, case, kwargs, argv):
    with pytest.raises(ValueError) as e:
        wavecast.predict(**kwargs)
    assert isinstance(e.value, wavecast.WavecastError)
    assert "\n" not in str(e.value)
    assert str(e.value) == cli.error("predict", *argv)


def test_bad_serve_and_compare_input(wavecast, cli):
    with pytest.raises(ValueError) as e:
        wavecast.serve("llama-3.1-70b", gpu="l4", batch=8, input_len=1000, output_len=100)
    assert str(e.value) == cli.error("predict", "--model", "llama-3.1-70b", "--gpu", "l4", "--mode", "serve",
                                     "--batch", 8, "--input-len", 1000, "--output-len", 100)
    with pytest.raises(ValueError) as e:
        wavecast.compare("qwen3-32b", gpus=["h100", "nosuch"], input_len=10, output_len=10)
    assert str(e.value) == cli.error("compare", "--model", "qwen3-32b", "--gpus", "h100,nosuch",
                                     "--input-len", 10, "--output-len", 10)


def test_mode_checks_and_choices_are_the_libraries_as_on_the_cli(wavecast, cli):
    # The flag checks of a mode live in the library: Python gets the CLI's message.
    with pytest.raises(ValueError) as e:
        wavecast.predict("gpt2", gpu="h100", optimizer="sgd")
    assert str(e.value) == cli.error("predict", "--model", "gpt2", "--gpu", "h100", "--optimizer", "sgd")
    # A choice is read once, by the declaration the CLI's flag has: aliases and names alike.
    assert wavecast.predict("gpt2", gpu="h100", mode="inf") == wavecast.predict("gpt2", gpu="h100", mode="inference")
    for call, needle in ((lambda: wavecast.predict("gpt2", gpu="h100", mode="sideways"), "unknown mode 'sideways' (inference, train or serve)"),
                         (lambda: wavecast.train("gpt2", gpu="h100", batch=8, dp=2, recompute="sometimes"), "unknown recomputation 'sometimes'"),
                         (lambda: wavecast.predict("gpt2", gpu="h100", attention="flash"), "unknown attention 'flash' (auto, eager or fused)")):
        with pytest.raises(ValueError) as e:
            call()
        assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_bad_python_arguments_are_one_line_value_errors(wavecast):
    for kwargs in ({"batch": "4"}, {"batch": 2.5}, {"batch": True}, {"batch": -1}, {"seq": None, "gpu": 3}):
        args = {"gpu": "h100", **kwargs}
        with pytest.raises(ValueError) as e:
            wavecast.predict("gpt2", **args)
        assert "\n" not in str(e.value) and str(e.value)
    with pytest.raises(ValueError):
        wavecast.predict(config=42, gpu="h100")
    with pytest.raises(ValueError, match="not several"):
        wavecast.predict("gpt2", config={"model_type": "gpt2"}, gpu="h100")
    with pytest.raises(ValueError, match="no workload"):
        wavecast.predict(gpu="h100")
    with pytest.raises(ValueError):
        wavecast.compare("gpt2", gpus=[], input_len=1, output_len=1)
    with pytest.raises(ValueError):
        wavecast.predict(config={"x": float("nan")}, gpu="h100")
    with pytest.raises(TypeError):
        wavecast.predict("gpt2")  # gpu is required


# ---- the report objects ----

def test_report_objects_behave_like_dicts(wavecast):
    p = wavecast.predict("gpt2", gpu="t4", batch=2, seq=128)
    plain = p.to_dict()
    assert type(plain) is dict and type(plain["phases"]) is dict and type(plain["classes"][0]) is dict
    assert json.loads(json.dumps(p)) == plain
    assert pickle.loads(pickle.dumps(p)) == p
    assert "total_ms" in dir(p)
    with pytest.raises(AttributeError, match="no field 'nope'"):
        p.nope  # noqa: B018
    rows = wavecast.compare("gpt2", gpus="t4", input_len=64, output_len=8, dtype="fp16")
    assert pickle.loads(pickle.dumps(rows)).to_dict() == rows.to_dict()


def test_every_public_name_documents_itself(wavecast):
    # help(wavecast.Prediction) and the rest: a class's docstring must come first in its body.
    for name in wavecast.__all__:
        obj = getattr(wavecast, name)
        assert (obj.__doc__ or "").strip(), f"wavecast.{name} has no docstring"
    from wavecast import _api
    functions = {n for n in wavecast.__all__ if callable(getattr(wavecast, n)) and not isinstance(getattr(wavecast, n), type)}
    assert functions <= set(_api.__all__), functions - set(_api.__all__)


def test_serving_on_a_gpu_without_bf16_runs_fp16_by_default(wavecast):
    asked = wavecast.compare("gpt2", gpus="t4", input_len=64, output_len=8, dtype="fp16")
    default = wavecast.compare("gpt2", gpus="t4", input_len=64, output_len=8)
    assert default[0].dtype == "fp16" and default[0].total_ms == asked[0].total_ms
    assert "t4 has no bf16 units" in default.notes[0] and asked.notes == []
    with pytest.raises(wavecast.WavecastError, match="no bf16 units"):
        wavecast.serve_sim("gpt2", gpu="t4", input=64, output=8, dtype="bf16")


def test_predict_releases_the_gil(wavecast):
    import threading

    results = []
    threads = [threading.Thread(target=lambda: results.append(wavecast.predict("gpt2", gpu="h100").total_ms))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1 and len(results) == 4


def test_installed_package_has_stubs_and_version(wavecast):
    pkg = os.path.dirname(wavecast.__file__)
    assert os.path.isfile(os.path.join(pkg, "py.typed")) and os.path.isfile(os.path.join(pkg, "_native.pyi"))
    from wavecast import _native

    assert wavecast.__version__ == _native.__version__


def test_torch_check_runs_from_the_installed_package(wavecast, tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)) * 4)
    out = subprocess.run([sys.executable, "-m", "wavecast.torch", "check", str(junk)], capture_output=True, text=True,
                         cwd=str(tmp_path))
    assert out.returncode == 2 and out.stdout == "" and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_train_matches_the_cli(wavecast, cli):
    t = wavecast.train("gpt2-large", gpu="h100", batch=16, dp=2, tp=2, pp=2, micro_batch=2, zero=1, recompute="full")
    want = cli.json("predict", "--model", "gpt2-large", "--gpu", "h100", "--mode", "train", "--batch", 16, "--seq", 1024,
                    "--dp", 2, "--tp", 2, "--pp", 2, "--micro-batch", 2, "--zero", 1, "--recompute", "full")
    assert t.to_dict() == want
    assert t.gpus == 8 and t.parts.recompute_ms > 0
    with pytest.raises(wavecast.WavecastError, match="does not divide the model's 20 attention heads"):
        wavecast.train("gpt2-large", gpu="h100", batch=16, tp=3)
    with pytest.raises(ValueError, match="sequence_parallel must be True or False"):
        wavecast.train("gpt2-large", gpu="h100", batch=16, sequence_parallel="yes")


def test_the_stack_and_fused_optimizer_keywords_match_the_cli(wavecast, cli):
    t = wavecast.train("llama-3.2-1b", gpu="h100", batch=4, seq=2048, stack="megatron")
    want = cli.json("predict", "--model", "llama-3.2-1b", "--gpu", "h100", "--mode", "train", "--batch", 4, "--seq", 2048,
                    "--stack", "megatron")
    assert t.to_dict() == want
    plain = wavecast.train("llama-3.2-1b", gpu="h100", batch=4, seq=2048)
    fused = wavecast.train("llama-3.2-1b", gpu="h100", batch=4, seq=2048, fused_optimizer=True)
    assert fused.parts.optimizer_ms < plain.parts.optimizer_ms
    assert t.memory_gb.activations < plain.memory_gb.activations
    with pytest.raises(wavecast.WavecastError, match="unknown stack 'jax'|invalid value 'jax'|'jax'"):
        wavecast.train("llama-3.2-1b", gpu="h100", batch=4, stack="jax")


def test_plan_train_matches_the_cli(wavecast, cli):
    p = wavecast.plan_train("gpt2-large", gpu="a100-sxm-80gb", gpus=8, batch=32, top=3)
    want = cli.json("plan", "train", "--model", "gpt2-large", "--gpu", "a100-sxm-80gb", "--gpus", 8, "--batch", 32, "--top", 3)
    assert p.to_dict() == want
    assert [r.rank for r in p.rows] == [1, 2, 3]
    with pytest.raises(wavecast.WavecastError, match="tokens must be a number"):
        wavecast.plan_train("gpt2-large", gpu="h100", gpus=8, batch=32, tokens="many")


def test_serve_sim_matches_the_cli(wavecast, cli):
    s = wavecast.serve_sim("llama-3.1-70b", gpu="h100", layout="tp4", concurrency=8, input=512, output=64, quant="fp8")
    want = cli.json("serve-sim", "--model", "llama-3.1-70b", "--gpu", "h100", "--layout", "tp4", "--concurrency", 8,
                    "--input", 512, "--output", 64, "--quant", "fp8")
    assert s.to_dict() == want
    assert s.gpus == 4 and s.requests == 32
    assert 0 < s.metrics.ttft_ms.p50 <= s.metrics.ttft_ms.p99 and s.metrics.tpot_ms.mean > 0
    with pytest.raises(wavecast.WavecastError, match="unknown serving backend 'tgi'"):
        wavecast.serve_sim("llama-3.1-70b", gpu="h100", layout="tp4", backend="tgi")
    with pytest.raises(wavecast.WavecastError, match="does not fit in memory"):
        wavecast.serve_sim("llama-3.1-70b", gpu="l4", layout="tp1", concurrency=1)
    with pytest.raises(ValueError, match="input must be a token count"):
        wavecast.serve_sim("llama-3.1-70b", gpu="h100", input=1.5)


def test_plan_serve_matches_the_cli(wavecast, cli):
    p = wavecast.plan_serve("qwen3-32b", gpu="h100", gpus=2, input_len=256, output_len=32, concurrency=[1, 8], slo_tpot_ms=50)
    want = cli.json("plan", "serve", "--model", "qwen3-32b", "--gpu", "h100", "--gpus", 2, "--input-len", 256,
                    "--output-len", 32, "--concurrency", "1,8", "--slo-tpot", 50)
    assert p.to_dict() == want
    assert p.ranked and all(r.meets_slo for r in p.ranked)
    assert any(pt.pareto for pt in p.points)


def test_one_vocabulary_with_the_cli(wavecast, cli):
    """The serving options answer to both names (input/input_len, quant/weights) as the CLI's
    flags do, and giving one option under both names is an error, not a silent choice."""
    sim = dict(gpu="h100", layout="tp4", concurrency=4, requests=8)
    a = wavecast.serve_sim("llama-3.1-70b", input_len=512, output_len=64, weights="fp8", **sim)
    b = wavecast.serve_sim("llama-3.1-70b", input=512, output=64, quant="fp8", **sim)
    assert a == b == cli.json("serve-sim", "--model", "llama-3.1-70b", "--gpu", "h100", "--layout", "tp4",
                              "--concurrency", 4, "--requests", 8, "--input-len", 512, "--output-len", 64,
                              "--weights", "fp8")
    assert wavecast.serve_sim("llama-3.1-70b", input=512, output=64, quant="fp8", tp=4,
                              **{k: v for k, v in sim.items() if k != "layout"}) == a
    s = wavecast.serve("llama-3.2-1b", gpu="h100", input_len=256, output_len=16, quant="fp8")
    assert s == wavecast.serve("llama-3.2-1b", gpu="h100", input_len=256, output_len=16, weights="fp8")
    with pytest.raises(wavecast.WavecastError, match="give quant or weights, not both"):
        wavecast.serve_sim("llama-3.1-70b", quant="fp8", weights="fp8", **sim)
    with pytest.raises(wavecast.WavecastError, match="allow_partial must be True or False"):
        wavecast.predict("gpt2", gpu="h100", allow_partial="yes")
    assert wavecast.predict("llama-3.1-8b", gpu="h100", seq=128, dtype="bf16") == cli.json(
        "predict", "--model", "llama-3.1-8b", "--gpu", "h100", "--seq", 128, "--dtype", "bf16")
