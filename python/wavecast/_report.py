"""The objects wavecast's functions return.

Every report is the JSON object the CLI prints with ``--json``, parsed: a :class:`Report` is a
``dict`` (so ``pandas.DataFrame``, ``json.dumps`` and ``==`` with the CLI's JSON work on it)
whose keys are also attributes (``r.total_ms``, ``r.phases.forward``). Nested objects are
Reports too; ``to_dict()`` gives plain dicts and lists.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional


def _plain(value: Any) -> Any:
    """``value`` with every Report turned into a plain dict (and lists copied)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class Report(Dict[str, Any]):
    """A JSON object of a wavecast report: a ``dict`` whose keys are also attributes."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r} (fields: {', '.join(self)})"
            ) from None

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | {k for k in self if k.isidentifier()})

    def to_dict(self) -> Dict[str, Any]:
        """A deep copy as plain ``dict``/``list`` values: exactly the CLI's ``--json``."""
        return {k: _plain(v) for k, v in self.items()}


class Prediction(Report):
    """``wavecast.predict``'s result (the CLI's ``predict --json``).

    Times in milliseconds. ``classes`` is one entry per operator class
    (``class, count, ms, share, flops, bytes``); ``phases`` has ``forward`` and, in training,
    ``backward`` and ``optimizer``; ``unpriced`` lists operators the predictor has no model
    for. Vision, recurrent and ONNX models add ``input`` and ``samples_per_s`` (ONNX also
    ``unsupported``).
    """

    __slots__ = ()
    model: str
    gpu: str
    predictor: str
    mode: str
    batch: int
    seq: int
    dtype: str
    params: int
    total_ms: float
    interval_ms: List[float]
    phases: Report
    classes: List[Report]
    tokens_per_s: float
    flops: float
    bytes: float
    unpriced: List[Any]

    def __repr__(self) -> str:
        return (f"Prediction(model={self.get('model')!r}, gpu={self.get('gpu')!r}, "
                f"mode={self.get('mode')!r}, batch={self.get('batch')!r}, "
                f"total_ms={self.get('total_ms')!r})")


class ServeReport(Report):
    """``wavecast.serve``'s result and each row of ``wavecast.compare`` (the CLI's
    ``predict --mode serve --json``).

    ms, GB = 1e9 bytes, per GPU of the tensor-parallel group: ``prefill_ms`` (the batch's time
    to first token), ``decode_ms`` (median decode step), ``total_ms``, ``tokens_per_s``,
    ``memory_gb``, ``usd_per_hour`` (all TP GPUs), ``tokens_per_usd``, ``comm_share``, and the
    per-class breakdowns ``prefill_classes`` and ``decode_classes``.
    """

    __slots__ = ()
    model: str
    gpu: str
    gpu_name: str
    predictor: str
    dtype: str
    weights: str
    tp: int
    batch: int
    input_len: int
    output_len: int
    params: int
    prefill_ms: float
    decode_ms: float
    decode_first_ms: float
    decode_last_ms: float
    total_ms: float
    tokens_per_s: float
    prefill_tokens_per_s: float
    decode_tokens_per_s: float
    comm_ms: float
    comm_share: float
    weight_gb: float
    kv_cache_gb: float
    activation_gb: float
    memory_gb: float
    gpu_memory_gb: float
    memory_fraction: float
    usd_per_hour: Optional[float]
    tokens_per_usd: Optional[float]
    prefill_classes: List[Report]
    decode_classes: List[Report]
    unpriced: List[Any]

    def __repr__(self) -> str:
        return (f"ServeReport(model={self.get('model')!r}, gpu={self.get('gpu')!r}, "
                f"tp={self.get('tp')!r}, batch={self.get('batch')!r}, "
                f"prefill_ms={self.get('prefill_ms')!r}, decode_ms={self.get('decode_ms')!r}, "
                f"total_ms={self.get('total_ms')!r})")


class ScaleReport(Report):
    """``wavecast.scale``'s result (the CLI's ``scale --json``): ``origin`` (the trace's GPU
    and its measured ``kernel_ms``/``per_step_ms``) and one entry of ``destinations`` per
    target GPU (``gpu, per_step_ms, interval_ms, speedup, steps_per_s, usd_per_1k_steps,
    classes, paths, notes``); with ``kernels=N``, ``kernel_rows``."""

    __slots__ = ()
    trace: str
    kernels: int
    steps: int
    shapes_recorded: bool
    method: str
    predictor: str
    wave_form: str
    origin: Report
    destinations: List[Report]

    def __repr__(self) -> str:
        dests = [d.get("gpu") for d in self.get("destinations", [])]
        origin = self.get("origin") or {}
        return (f"ScaleReport(trace={self.get('trace')!r}, origin={origin.get('gpu')!r}, "
                f"destinations={dests!r})")


class CompareResult(List[ServeReport]):
    """``wavecast.compare``'s result: a list with one :class:`ServeReport` row per GPU × TP
    degree that can serve the workload, ready for ``pandas.DataFrame(result)``.

    The combinations that cannot run are in :attr:`skipped` (``gpu, tp, reason`` each); the
    workload's description in :attr:`model`, :attr:`predictor`, :attr:`batch`,
    :attr:`input_len`, :attr:`output_len`, :attr:`dtype`, :attr:`weights`. :meth:`to_dict`
    gives the CLI's ``compare --json`` object (``results`` and ``skipped``).
    """

    model: str
    predictor: str
    batch: int
    input_len: int
    output_len: int
    dtype: str
    weights: str
    skipped: List[Report]

    def __init__(self, report: Dict[str, Any]) -> None:
        super().__init__(ServeReport(r) for r in report.get("results", []))
        self._report = {k: v for k, v in report.items() if k != "results"}
        for key, value in self._report.items():
            setattr(self, key, value)
        self.skipped = list(report.get("skipped", []))

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's ``compare --json`` object, as plain dicts and lists."""
        out: Dict[str, Any] = {}
        for key, value in self._report.items():
            if key == "skipped":
                out["results"] = [r.to_dict() for r in self]
            out[key] = _plain(value)
        if "results" not in out:
            out["results"] = [r.to_dict() for r in self]
        return out

    def __repr__(self) -> str:
        rows = ", ".join(f"{r.get('gpu')} tp{r.get('tp')}" for r in self)
        return f"CompareResult(model={self._report.get('model')!r}, rows=[{rows}], skipped={len(self.skipped)})"
