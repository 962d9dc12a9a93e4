"""wavecast's Python functions: each builds the request the Rust facade takes, as JSON, calls
the compiled extension ``wavecast._native`` and wraps the JSON it returns.

The extension is imported on the first call, not on ``import wavecast``, so that
``wavecast.torch`` (which needs no Rust) also works from a source checkout.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Iterable as _Iterable
from collections.abc import Mapping as _Mapping
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from ._report import CompareResult, PlanServeReport, PlanTrainReport, Prediction, Report, ScaleReport, ServeReport, ServeSimReport, TrainReport

PathLike = Union[str, "os.PathLike[str]"]


class WavecastError(ValueError):
    """Bad input (unknown GPU or model, malformed config, zero or huge sizes, …) or a workload
    that cannot run. The message is the CLI's one-line error message."""

    __module__ = "wavecast"


def _native() -> Any:
    try:
        from . import _native as native
    except ImportError as e:
        raise ImportError(
            "wavecast's compiled extension (wavecast._native) is not installed: install the "
            "package with `pip install ./python` from the repository instead of importing it "
            "from the source tree"
        ) from e
    return native


def _call(fn_name: str, *args: Any) -> Any:
    try:
        out = getattr(_native(), fn_name)(*args)
    except ValueError as e:
        raise WavecastError(str(e)) from None
    return json.loads(out, object_hook=Report)


def _request(fn_name: str, fields: Dict[str, Any]) -> Any:
    """Runs ``fn_name`` on ``fields`` (None values left out, as the CLI's absent flags)."""
    req = {k: v for k, v in fields.items() if v is not None}
    try:
        text = json.dumps(req, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise WavecastError(f"the request cannot be written as JSON: {e}") from None
    return _call(fn_name, text)


def _report(cls: Any, fn_name: str, fields: Dict[str, Any]) -> Any:
    """Runs ``fn_name`` on ``fields`` and wraps the report in ``cls``, remembering the request
    (shown as the inputs of the report's HTML)."""
    report = cls(_request(fn_name, fields))
    report._inputs = {k: v for k, v in fields.items() if v is not None}
    return report


# ---- argument checks: wrong Python types are WavecastError (a ValueError) with one line ----

def _int(name: str, value: Any) -> Optional[int]:
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            raise TypeError
        n = operator.index(value)
    except TypeError:
        raise WavecastError(f"{name} must be an integer, got {value!r}") from None
    if n < 0:
        raise WavecastError(f"{name} must be at least 1, got {n}")
    return n


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise WavecastError(f"{name} must be True or False, got {value!r}")
    return value


def _str(name: str, value: Any) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise WavecastError(f"{name} must be a string, got {value!r}")


def _path(name: str, value: Any) -> Optional[str]:
    if value is None:
        return None
    try:
        return os.fsdecode(os.fspath(value))
    except TypeError:
        raise WavecastError(f"{name} must be a path, got {value!r}") from None


def _ops_data(value: Any) -> Optional[str]:
    """``ops_data=``, else ``$WAVECAST_OPS_DATA`` as the CLI's ``--ops-data`` reads it."""
    if value is None:
        value = os.environ.get("WAVECAST_OPS_DATA") or None
    return _path("ops_data", value)


def _config(value: Any) -> Union[None, str, Dict[str, Any]]:
    """A config.json path, or an inline config (a mapping: the parsed config.json)."""
    if isinstance(value, _Mapping):
        return dict(value)
    return _path("config", value)


def _strs(name: str, value: Any) -> List[str]:
    """A list of names from a list or a comma-separated string (as the CLI's flags)."""
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, _Iterable):
        items = list(value)
    else:
        raise WavecastError(f"{name} must be a list of names, got {value!r}")
    for v in items:
        _str(name, v)
    if not items or any(not v for v in items):
        raise WavecastError(f"{name} must name at least one GPU, got {value!r}")
    return items


def _ints(name: str, value: Any) -> List[int]:
    if isinstance(value, str):
        parts: Iterable[Any] = [p.strip() for p in value.split(",")]
        try:
            parts = [int(p) for p in parts]
        except ValueError:
            raise WavecastError(f"{name} must be integers, got {value!r}") from None
    elif isinstance(value, _Iterable):
        parts = value
    else:
        parts = [value]
    out = [_int(name, v) for v in parts]
    if not out:
        raise WavecastError(f"{name} must not be empty")
    return out  # type: ignore[return-value]


def _prices(value: Any) -> Optional[List[str]]:
    """``price``: USD per GPU-hour for the request's GPU (a number), ``"gpu=usd"`` strings, or a
    mapping GPU → USD; as the CLI's ``--price``."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise WavecastError(f"price must be a number, 'gpu=usd' or a mapping of GPU to USD, got {value!r}")
    if isinstance(value, (int, float)):
        return [repr(float(value))]
    if isinstance(value, str):
        return [value]
    if isinstance(value, _Mapping):
        return [f"{_str('price', g)}={float(_float('price', u))!r}" for g, u in value.items()]
    raise WavecastError(f"price must be a number, 'gpu=usd' or a mapping of GPU to USD, got {value!r}")


def _either(name: str, value: Any, alias: str, alias_value: Any) -> Any:
    """One option under two names (``quant``/``weights``, ``input``/``input_len``, as the CLI
    takes both): the one given, and an error when both are."""
    if value is not None and alias_value is not None:
        raise WavecastError(f"give {name} or {alias}, not both (they are the same option)")
    return alias_value if value is None else value


# ---- the API ----

def predict(
    model: Optional[str] = None,
    *,
    gpu: str,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    onnx: Optional[PathLike] = None,
    batch: int = 1,
    seq: Optional[int] = None,
    mode: str = "inference",
    dtype: Optional[str] = None,
    predictor: Optional[str] = None,
    attention: Optional[str] = None,
    optimizer: Optional[str] = None,
    fused_optimizer: bool = False,
    stack: Optional[str] = None,
    image_size: Optional[int] = None,
    power_limit: Optional[float] = None,
    gpu_file: Optional[PathLike] = None,
    ops_data: Optional[PathLike] = None,
    allow_partial: bool = False,
    price: Union[None, float, str, Mapping[str, float]] = None,
) -> Prediction:
    """Predicts one training step or forward pass on one GPU (``wavecast predict --json``).

    Give exactly one workload: ``model`` (a built-in preset, see :func:`models`), ``config``
    (a Hugging Face ``config.json`` path, or the parsed config as a dict) or ``onnx`` (an ONNX
    file path).

    Args:
        gpu: GPU name or alias (see :func:`gpus`), e.g. ``"h100"``, ``"NVIDIA L4"``.
        batch: samples per step. seq: tokens per sample (default 1024, or the model's learned
            positions where fewer; image and latent models take none).
        mode: ``"inference"`` (or ``"infer"``) or ``"train"`` (forward, backward, optimizer).
        dtype: ``"fp32"``, ``"tf32"``, ``"fp16"``, ``"bf16"`` or ``"fp8"``; default: for transformers the config's ``torch_dtype``, else bf16 (fp32 for NeuSight's FP32 benchmark presets), fp32 for vision models and ONNX graphs.
        predictor: ``"wavecast"`` (default), ``"ladder"``, ``"sustained"``, ``"li"``, ``"neusight"``,
            ``"pm2lat"`` or ``"roofline"``.
        attention: ``"auto"`` (default), ``"eager"`` or ``"fused"``.
        optimizer: ``"adam"`` (default), ``"sgd"`` or ``"sgd-momentum"`` (training only).
        fused_optimizer: the optimizer step is one fused kernel (``fused=True``, apex or
            Transformer Engine FusedAdam) instead of PyTorch's default foreach passes.
        stack: the training software, ``"pytorch"`` (default: eager PyTorch), ``"compiled"``
            (torch.compile, torchtitan) or ``"megatron"`` (Megatron-Core, NeMo); the last two
            answer with the layout report's keys only (as :func:`train`).
        image_size: input side in pixels for vision models and symbolic ONNX height/width.
        power_limit: the GPU's power limit in W, below its board power (default: the board power).
        gpu_file: a TOML catalog whose GPUs are added to (or override) the built-in ones.
        allow_partial: return the time of what can be priced (the rest listed in
            ``unpriced``) instead of raising when the predictor has no model for some op.

    Returns:
        A :class:`Prediction`: ``total_ms``, ``interval_ms``, ``phases.forward``, ``classes``, …
        A transformer's training step also carries the layout report's keys (``step_ms``,
        ``parts``, ``memory_gb``, ``mfu``, …), as :func:`train` with ``dp=1`` answers it.

    Raises:
        WavecastError: (a ``ValueError``) with the CLI's one-line message on bad input.
    """
    return _report(Prediction, "predict", {
        "model": _str("model", model),
        "config": _config(config),
        "onnx": _path("onnx", onnx),
        "gpu": _str("gpu", gpu),
        "gpu_file": _path("gpu_file", gpu_file),
        "ops_data": _ops_data(ops_data),
        "batch": _int("batch", batch),
        "seq": _int("seq", seq),
        "mode": _str("mode", mode),
        "dtype": _str("dtype", dtype),
        "attention": _str("attention", attention),
        "optimizer": _str("optimizer", optimizer),
        "fused_optimizer": _bool("fused_optimizer", fused_optimizer),
        "stack": _str("stack", stack),
        "predictor": _str("predictor", predictor),
        "image_size": _int("image_size", image_size),
        "power_limit": _float("power_limit", power_limit),
        "price": _prices(price),
        "allow_partial": _bool("allow_partial", allow_partial),
    })


def serve(
    model: Optional[str] = None,
    *,
    gpu: str,
    input_len: int,
    output_len: int,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    batch: int = 1,
    tp: int = 1,
    dtype: Optional[str] = None,
    weights: Optional[str] = None,
    kv_dtype: Optional[str] = None,
    predictor: Optional[str] = None,
    gpu_file: Optional[PathLike] = None,
    ops_data: Optional[PathLike] = None,
    quant: Optional[str] = None,
    allow_partial: bool = False,
    price: Union[None, float, str, Mapping[str, float]] = None,
    backend: Optional[str] = None,
) -> ServeReport:
    """Predicts serving an LLM on one GPU type (``wavecast predict --mode serve --json``):
    ``batch`` prompts of ``input_len`` tokens prefilled together, then ``output_len`` decode
    steps, on ``tp`` GPUs (tensor parallelism).

    Give ``model`` (a decoder preset) or ``config`` (a Hugging Face decoder's ``config.json``
    path, or the parsed dict: dense, MoE, MLA and sliding-window models). ``weights="fp8"`` stores the layers' weights in
    FP8; ``"fp8_block"``, ``"nvfp4"``, ``"mxfp4"`` or ``"int4"`` quantizes them (scales
    included), and ``kv_dtype="fp8"`` halves the KV cache; activations are ``dtype`` (default
    ``"auto"``: bf16, or fp16 on a GPU without bf16 units, as the engines run a bf16 checkpoint). Kernels are priced by the
    ``"ladder"`` predictor unless ``predictor`` names another: measured tables of the GPU from
    ``ops_data`` (or ``$WAVECAST_OPS_DATA``) first, then a measured sibling's, then physics.
    ``quant`` is another name for ``weights`` (as :func:`serve_sim` spells it). ``backend``
    (``"vllm"``, ``"sglang"`` or ``"trtllm"``, default vLLM) is the engine the batch runs in, as
    in :func:`serve_sim`.
    Returns a :class:`ServeReport` (``prefill_ms``, ``decode_ms``, ``total_ms``,
    ``tokens_per_s``, ``memory_gb``, ``tokens_per_usd``, …). Raises :class:`WavecastError`
    (a ``ValueError``) on bad input, e.g. a model that does not fit in memory.
    """
    return _report(ServeReport, "serve", {
        "mode": "serve",
        "model": _str("model", model),
        "config": _config(config),
        "gpu": _str("gpu", gpu),
        "gpu_file": _path("gpu_file", gpu_file),
        "ops_data": _ops_data(ops_data),
        "batch": _int("batch", batch),
        "input_len": _int("input_len", input_len),
        "output_len": _int("output_len", output_len),
        "tp": _int("tp", tp),
        "dtype": _str("dtype", dtype),
        "weights": _str("weights", _either("weights", weights, "quant", quant)),
        "kv_dtype": _str("kv_dtype", kv_dtype),
        "backend": _str("backend", backend),
        "predictor": _str("predictor", predictor),
        "price": _prices(price),
        "allow_partial": _bool("allow_partial", allow_partial),
    })


def compare(
    model: Optional[str] = None,
    *,
    gpus: Union[str, Iterable[str]],
    input_len: int,
    output_len: int,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    tp: Union[int, Iterable[int]] = 1,
    batch: int = 1,
    dtype: Optional[str] = None,
    weights: Optional[str] = None,
    kv_dtype: Optional[str] = None,
    predictor: Optional[str] = None,
    gpu_file: Optional[PathLike] = None,
    ops_data: Optional[PathLike] = None,
    quant: Optional[str] = None,
    allow_partial: bool = False,
    price: Union[None, str, Mapping[str, float]] = None,
    backend: Optional[str] = None,
) -> CompareResult:
    """One serving workload (as :func:`serve`) on every GPU in ``gpus`` × every degree in
    ``tp`` (``wavecast compare --json``).

    Returns a :class:`CompareResult`: a list with one :class:`ServeReport` row per combination
    that can run (``pandas.DataFrame(result)`` takes it as is); the others, with the reason,
    are in ``result.skipped``. ``gpus`` and ``tp`` take lists or comma-separated strings.
    ``backend`` is the serving engine every combination runs in, as in :func:`serve`.
    Raises :class:`WavecastError` on bad input (an unknown GPU), or when no combination can
    serve the workload.
    """
    return _report(CompareResult, "compare", {
        "model": _str("model", model),
        "config": _config(config),
        "gpus": _strs("gpus", gpus),
        "tp": _ints("tp", tp),
        "gpu_file": _path("gpu_file", gpu_file),
        "ops_data": _ops_data(ops_data),
        "batch": _int("batch", batch),
        "input_len": _int("input_len", input_len),
        "output_len": _int("output_len", output_len),
        "dtype": _str("dtype", dtype),
        "weights": _str("weights", _either("weights", weights, "quant", quant)),
        "kv_dtype": _str("kv_dtype", kv_dtype),
        "backend": _str("backend", backend),
        "predictor": _str("predictor", predictor),
        "price": _prices(price),
        "allow_partial": _bool("allow_partial", allow_partial),
    })


def scale(
    trace: PathLike,
    to: Union[str, Iterable[str]],
    *,
    from_: Optional[str] = None,
    method: Optional[str] = None,
    wave_form: Optional[str] = None,
    gamma: Optional[str] = None,
    predictor: Optional[str] = None,
    kernels: Optional[int] = None,
    gpu_file: Optional[PathLike] = None,
) -> ScaleReport:
    """Carries a PyTorch profiler trace recorded on one GPU to other GPUs
    (``wavecast scale --json``; Habitat's method).

    Args:
        trace: the Chrome-trace JSON ``torch.profiler`` exported (plain or ``.gz``), e.g.
            one written by :class:`wavecast.torch.Tracker`.
        to: destination GPUs (a list, or a comma-separated string).
        from_: the GPU the trace was recorded on (default: the trace's ``deviceProperties``).
        method: ``"hybrid"`` (default) or ``"wave"``. wave_form: ``"wavecast"`` (default),
            ``"eq1"``, ``"eq2"`` or ``"habitat-code"``. gamma: ``"wavecast"`` or ``"habitat"``.
        predictor: per-op predictor for the hybrid method.
        kernels: also list this many of the longest kernels one by one (``kernel_rows``: name,
            library tile, measured µs and µs on every destination).

    Returns a :class:`ScaleReport` (``origin``, ``destinations[i].per_step_ms``,
    ``interval_ms``, ``speedup``…).
    """
    return _report(ScaleReport, "scale", {
        "trace": _path("trace", trace),
        "to": _strs("to", to),
        "from": _str("from_", from_),
        "method": _str("method", method),
        "wave_form": _str("wave_form", wave_form),
        "gamma": _str("gamma", gamma),
        "predictor": _str("predictor", predictor),
        "kernels": _int("kernels", kernels),
        "gpu_file": _path("gpu_file", gpu_file),
    })


def gpus(gpu_file: Optional[PathLike] = None) -> List[Report]:
    """The GPU catalog (``wavecast gpus --json``): one dict per GPU (``id``, ``name``,
    ``aliases``, ``architecture``, ``sm_count``, ``memory_gb``, ``peak_tflops``, ``price``…),
    with ``gpu_file``'s GPUs merged over the built-in ones when given."""
    return list(_call("gpus", _path("gpu_file", gpu_file)))


def sustained(gpu_file: Optional[PathLike] = None) -> List[Report]:
    """What the shipped modern-GPU kernel models imply each GPU sustains (``wavecast gpus
    --sustained --json``): per GPU its datasheet peaks and bandwidth beside ``bf16_tflops``,
    ``fp8_tflops``, ``nvfp4_tflops`` (an 8192³ GEMM), ``weight_stream_gbs`` (a decode GEMV) and
    ``kv_read_gbs`` (a decode attention step); None where the GPU has no units for a format."""
    return list(_call("sustained", _path("gpu_file", gpu_file)))


def models() -> List[Report]:
    """The built-in model presets (``wavecast models --json``): one dict per model (``name``,
    ``arch``, ``params``, and ``layers``/``hidden``/``heads``… for transformers or ``input``/
    ``macs`` for vision models)."""
    return list(_call("models"))




def _float(name: str, value: Any) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WavecastError(f"{name} must be a number, got {value!r}")
    return float(value)


def train(
    model: Optional[str] = None,
    *,
    gpu: str,
    batch: int,
    seq: Optional[int] = None,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    dp: Optional[int] = None,
    tp: int = 1,
    pp: Optional[int] = None,
    cp: Optional[int] = None,
    ep: Optional[int] = None,
    zero: Optional[int] = None,
    micro_batch: Optional[int] = None,
    interleave: Optional[int] = None,
    recompute: Optional[str] = None,
    sequence_parallel: bool = False,
    nodes: Optional[int] = None,
    gpus_per_node: Optional[int] = None,
    nic_gbps: Optional[float] = None,
    dtype: Optional[str] = None,
    optimizer: Optional[str] = None,
    fused_optimizer: bool = False,
    stack: Optional[str] = None,
    predictor: Optional[str] = None,
    power_limit: Optional[float] = None,
    gpu_file: Optional[PathLike] = None,
    ops_data: Optional[PathLike] = None,
    allow_partial: bool = False,
    price: Union[None, float, str, Mapping[str, float]] = None,
) -> TrainReport:
    """One training step spread over ``dp × tp × pp × cp`` GPUs (``wavecast predict --mode
    train --json`` with layout flags). ``batch`` is the global batch in sequences; ``dtype``
    defaults to the training rule (the config's ``torch_dtype``, else bf16; fp32 for NeuSight's
    FP32 benchmark presets) and ``micro_batch`` to each rank's whole share without ``pp``; the
    other layout keywords default to 1 (``zero`` to 0, ``recompute`` to ``"none"``,
    ``gpus_per_node`` to 8), ``optimizer`` to ``"adam"`` (PyTorch's foreach passes unless
    ``fused_optimizer``), ``stack`` to ``"pytorch"`` (or ``"compiled"``, ``"megatron"``) and
    ``predictor`` to ``"wavecast"``;
    ``power_limit`` (W, below the board power) holds the GPUs to a lower clock.

    Returns a :class:`Report`: ``step_ms``, ``parts`` (compute, recomputation, pipeline
    bubble, exposed data-parallel sync, optimizer), ``collectives`` (axis, kind, calls, bytes,
    link), ``memory_gb`` of the most loaded GPU, ``mfu`` and ``tokens_per_s``. Raises
    :class:`WavecastError` on a layout that does not suit the model or does not fit in memory.
    """
    if not isinstance(sequence_parallel, bool):
        raise WavecastError(f"sequence_parallel must be True or False, got {sequence_parallel!r}")
    return _report(TrainReport, "train", {
        "mode": "train",
        "model": _str("model", model),
        "config": _config(config),
        "gpu": _str("gpu", gpu),
        "gpu_file": _path("gpu_file", gpu_file),
        "ops_data": _ops_data(ops_data),
        "batch": _int("batch", batch),
        "seq": _int("seq", seq),
        "dtype": _str("dtype", dtype),
        "optimizer": _str("optimizer", optimizer),
        "fused_optimizer": _bool("fused_optimizer", fused_optimizer),
        "stack": _str("stack", stack),
        "tp": _int("tp", tp),
        "layout": {
            "dp": _int("dp", dp), "pp": _int("pp", pp), "cp": _int("cp", cp),
            "ep": _int("ep", ep), "zero": _int("zero", zero), "micro_batch": _int("micro_batch", micro_batch),
            "interleave": _int("interleave", interleave), "recompute": _str("recompute", recompute),
            "sequence_parallel": sequence_parallel,
            "nodes": _int("nodes", nodes),
            "gpus_per_node": _int("gpus_per_node", gpus_per_node),
            "nic_gbps": _float("nic_gbps", nic_gbps),
        },
        "predictor": _str("predictor", predictor),
        "power_limit": _float("power_limit", power_limit),
        "price": _prices(price),
        "allow_partial": _bool("allow_partial", allow_partial),
    })


def plan_train(
    model: Optional[str] = None,
    *,
    gpu: str,
    gpus: int,
    batch: int,
    seq: Optional[int] = None,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    gpus_per_node: int = 8,
    nic_gbps: Optional[float] = None,
    tokens: float = 1e12,
    top: int = 10,
    dtype: Optional[str] = None,
    optimizer: str = "adam",
    fused_optimizer: bool = False,
    stack: str = "pytorch",
    predictor: str = "wavecast",
    power_limit: Optional[float] = None,
    gpu_file: Optional[PathLike] = None,
    ops_data: Optional[PathLike] = None,
    price: Union[None, float, str, Mapping[str, float]] = None,
) -> PlanTrainReport:
    """Every training layout of ``model`` on ``gpus`` GPUs ranked by step time among those
    that fit (``wavecast plan train --json``): ``rows`` (rank, layout, step_ms, mfu,
    tokens_per_s_per_gpu, memory_gb, days and cost for ``tokens``), ``evaluated``,
    ``fitting`` and ``rejected`` (reasons with counts). ``stack`` is the training software every
    layout runs under: ``"pytorch"`` (eager, foreach Adam unless ``fused_optimizer``),
    ``"compiled"`` (torch.compile, torchtitan) or ``"megatron"`` (Megatron-Core, NeMo).
    """
    return _report(PlanTrainReport, "plan_train", {
        "model": _str("model", model),
        "config": _config(config),
        "gpu": _str("gpu", gpu),
        "gpu_file": _path("gpu_file", gpu_file),
        "ops_data": _ops_data(ops_data),
        "gpus": _int("gpus", gpus),
        "batch": _int("batch", batch),
        "seq": _int("seq", seq),
        "dtype": _str("dtype", dtype),
        "optimizer": _str("optimizer", optimizer),
        "fused_optimizer": _bool("fused_optimizer", fused_optimizer),
        "stack": _str("stack", stack),
        "gpus_per_node": _int("gpus_per_node", gpus_per_node),
        "nic_gbps": _float("nic_gbps", nic_gbps),
        "tokens": _float("tokens", tokens),
        "top": _int("top", top),
        "predictor": _str("predictor", predictor),
        "power_limit": _float("power_limit", power_limit),
        "price": _prices(price),
    })


def _formats(dtype: Optional[str], quant: Optional[str], moe_quant: Optional[str], kv_dtype: Optional[str], backend: str) -> Dict[str, Any]:
    fields = {"dtype": _str("dtype", dtype), "quant": _str("quant", quant), "moe_quant": _str("moe_quant", moe_quant),
              "kv_dtype": _str("kv_dtype", kv_dtype), "backend": _str("backend", backend)}
    return {k: v for k, v in fields.items() if v is not None}


def serve_sim(
    model: Optional[str] = None,
    *,
    gpu: str,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    layout: Optional[str] = None,
    tp: Optional[int] = None,
    prefill: Optional[str] = None,
    decode: Optional[str] = None,
    concurrency: Optional[int] = None,
    rate: Optional[float] = None,
    trace: Optional[PathLike] = None,
    input: Union[int, str, None] = None,
    output: Union[int, str, None] = None,
    requests: Optional[int] = None,
    dtype: Optional[str] = None,
    quant: Optional[str] = None,
    moe_quant: Optional[str] = None,
    kv_dtype: Optional[str] = None,
    backend: str = "vllm",
    max_batched_tokens: Optional[int] = None,
    max_seqs: Optional[int] = None,
    chunked_prefill: bool = True,
    prefix_caching: bool = False,
    shared_prefix: int = 0,
    slo_ttft_ms: Optional[float] = None,
    slo_tpot_ms: Optional[float] = None,
    seed: int = 0,
    gpu_file: Optional[PathLike] = None,
    ops_data: Optional[PathLike] = None,
    input_len: Union[int, str, None] = None,
    output_len: Union[int, str, None] = None,
    weights: Optional[str] = None,
) -> ServeSimReport:
    """LLM serving under load (``wavecast serve-sim --json``): a continuous-batching
    simulation of ``requests`` requests arriving from ``concurrency`` users (or at ``rate``
    per second, or from a CSV ``trace``) on workers laid out as ``layout`` (``"tp8"``,
    ``"tp1,dp8,ep8"``, ``"2xtp4"``; ``tp=N`` is ``layout="tpN"``) or as ``prefill`` and
    ``decode`` pools. ``input`` and ``output`` are token counts or distributions (``"uniform:512:2048"``,
    ``"lognormal:1024:0.5"``); ``input_len`` and ``output_len`` are other names for them, and
    ``weights`` for ``quant`` (as :func:`serve` and the CLI spell them).

    Returns a :class:`Report`: ``metrics`` (``ttft_ms``, ``tpot_ms``, ``e2e_ms`` with mean,
    p50, p90, p99; ``output_tokens_per_s_per_gpu``, ``tokens_per_s_per_user``, goodput),
    ``engine`` (iterations, preemptions, KV-cache peak), ``memory`` per pool and
    ``decode_step`` (where a decode iteration's time goes).
    """
    for name, flag in (("chunked_prefill", chunked_prefill), ("prefix_caching", prefix_caching)):
        if not isinstance(flag, bool):
            raise WavecastError(f"{name} must be True or False, got {flag!r}")
    input = _either("input", input, "input_len", input_len)
    output = _either("output", output, "output_len", output_len)
    quant = _either("quant", quant, "weights", weights)
    lengths = {}
    for name, value in (("input", input), ("output", output)):
        if isinstance(value, bool) or not (value is None or isinstance(value, (int, str))):
            raise WavecastError(f"{name} must be a token count or a distribution string, got {value!r}")
        lengths[name] = None if value is None else str(value)
    return _report(ServeSimReport, "serve_sim", {
        "model": _str("model", model),
        "config": _config(config),
        "gpu": _str("gpu", gpu),
        "gpu_file": _path("gpu_file", gpu_file),
        "ops_data": _ops_data(ops_data),
        "layout": _str("layout", layout),
        "tp": _int("tp", tp),
        "prefill": _str("prefill", prefill),
        "decode": _str("decode", decode),
        "concurrency": _int("concurrency", concurrency),
        "rate": _float("rate", rate),
        "trace": _path("trace", trace),
        "input": lengths["input"],
        "output": lengths["output"],
        "requests": _int("requests", requests),
        "formats": _formats(dtype, quant, moe_quant, kv_dtype, backend),
        "max_batched_tokens": _int("max_batched_tokens", max_batched_tokens),
        "max_seqs": _int("max_seqs", max_seqs),
        "chunked_prefill": chunked_prefill,
        "prefix_caching": prefix_caching,
        "shared_prefix": _int("shared_prefix", shared_prefix),
        "slo_ttft_ms": _float("slo_ttft_ms", slo_ttft_ms),
        "slo_tpot_ms": _float("slo_tpot_ms", slo_tpot_ms),
        "seed": _int("seed", seed),
    })


def plan_serve(
    model: Optional[str] = None,
    *,
    gpu: str,
    gpus: int,
    input_len: int = 1024,
    output_len: int = 256,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    slo_ttft_ms: Optional[float] = None,
    slo_tpot_ms: Optional[float] = None,
    concurrency: Optional[Iterable[int]] = None,
    disaggregated: bool = True,
    dtype: Optional[str] = None,
    quant: Optional[str] = None,
    moe_quant: Optional[str] = None,
    kv_dtype: Optional[str] = None,
    backend: str = "vllm",
    gpu_file: Optional[PathLike] = None,
    ops_data: Optional[PathLike] = None,
    weights: Optional[str] = None,
) -> PlanServeReport:
    """Serving deployments of ``model`` on ``gpus`` GPUs ranked by output tokens/s per GPU
    among those meeting the TTFT/TPOT targets (``wavecast plan serve --json``): ``ranked``
    (best point per layout), ``points`` (every simulated layout × concurrency, with
    ``pareto`` marking the front of tokens/s/GPU against tokens/s/user) and ``rejected``.
    ``concurrency``: the users per worker to try (default: 1, 2, 4, … 256, as the CLI).
    ``weights`` is another name for ``quant``.
    """
    quant = _either("quant", quant, "weights", weights)
    if not isinstance(disaggregated, bool):
        raise WavecastError(f"disaggregated must be True or False, got {disaggregated!r}")
    return _report(PlanServeReport, "plan_serve", {
        "model": _str("model", model),
        "config": _config(config),
        "gpu": _str("gpu", gpu),
        "gpu_file": _path("gpu_file", gpu_file),
        "ops_data": _ops_data(ops_data),
        "gpus": _int("gpus", gpus),
        "input_len": _int("input_len", input_len),
        "output_len": _int("output_len", output_len),
        "slo_ttft_ms": _float("slo_ttft_ms", slo_ttft_ms),
        "slo_tpot_ms": _float("slo_tpot_ms", slo_tpot_ms),
        "formats": _formats(dtype, quant, moe_quant, kv_dtype, backend),
        "concurrency": None if concurrency is None else _ints("concurrency", concurrency),
        "disaggregated": disaggregated,
    })


__all__ = ["predict", "serve", "compare", "train", "plan_train", "serve_sim", "plan_serve", "scale", "gpus", "sustained", "models", "WavecastError"]
