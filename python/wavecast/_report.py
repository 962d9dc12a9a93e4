"""The objects wavecast's functions return.

Every report is the JSON object the CLI prints with ``--json``, parsed: a :class:`Report` is a
``dict`` (so ``pandas.DataFrame``, ``json.dumps`` and ``==`` with the CLI's JSON work on it)
whose keys are also attributes (``r.total_ms``, ``r.phases.forward``). Nested objects are
Reports too; ``to_dict()`` gives plain dicts and lists.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Union


def _render(kind: str, report: Dict[str, Any], inputs: Optional[Dict[str, Any]], page: bool) -> str:
    """The Rust renderer's HTML (the one ``--html`` uses) for a report's JSON."""
    from . import _native

    text_inputs = json.dumps(inputs, allow_nan=False) if inputs else None
    return _native.render_html(kind, json.dumps(report, allow_nan=False), text_inputs, page)


class _Displayable:
    """A report that shows itself in a notebook (``_repr_html_``: the tables and the chart as
    inline SVG) and writes the one-file HTML page of ``--html`` (:meth:`to_html`)."""

    __slots__ = ()
    _kind: Optional[str] = None

    def _html_parts(self) -> Any:
        return self.to_dict(), getattr(self, "_inputs", None)  # type: ignore[attr-defined]

    def _repr_html_(self) -> Optional[str]:
        if self._kind is None:
            return None
        report, inputs = self._html_parts()
        try:
            return _render(self._kind, report, inputs, page=False)
        except ImportError:  # no compiled extension: the notebook falls back to repr()
            return None

    def to_html(self, path: Union[None, str, "os.PathLike[str]"] = None) -> str:
        """The self-contained HTML page of this report (what the CLI's ``--html FILE``
        writes); with ``path``, also written there."""
        if self._kind is None:
            raise TypeError(f"{type(self).__name__} has no report page")
        report, inputs = self._html_parts()
        html = _render(self._kind, report, inputs, page=True)
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(html)
        return html


def _plain(value: Any) -> Any:
    """``value`` with every Report turned into a plain dict (and lists copied)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class Report(_Displayable, Dict[str, Any]):
    """A JSON object of a wavecast report: a ``dict`` whose keys are also attributes."""

    # The request that produced the report (shown as the page's inputs), when it is one.
    __slots__ = ("_inputs",)

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
    ``backward`` and ``optimizer``; ``provenance`` gives the share of the time each rung of the
    price ladder priced; ``unpriced`` lists operators the predictor has no model for. Vision, recurrent and ONNX models add ``input`` and ``samples_per_s`` (ONNX also
    ``unsupported``).
    """

    _kind = "predict"
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
    provenance: Dict[str, float]
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
    ``memory_gb``, ``usd_per_hour`` (all TP GPUs), ``tokens_per_usd``, ``comm_share``, the
    breakdowns by the serving simulator's iteration parts ``prefill_classes`` and
    ``decode_classes`` (layers, experts, attention, LM head, pipeline, engine), ``backend``
    (the engine the batch runs in), and ``provenance``: the
    share of the time each rung of the price ladder priced (``measured``, ``transfer from GPU``,
    ``physics``).
    """

    _kind = "serve"
    __slots__ = ()
    model: str
    gpu: str
    gpu_name: str
    predictor: str
    backend: str
    dtype: str
    weights: str
    weight_dtype: str
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
    runtime_gb: float
    memory_gb: float
    gpu_memory_gb: float
    memory_fraction: float
    usd_per_hour: Optional[float]
    tokens_per_usd: Optional[float]
    prefill_classes: Dict[str, float]
    decode_classes: Dict[str, float]
    provenance: Dict[str, float]
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

    _kind = "scale"
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


class CompareResult(_Displayable, List[ServeReport]):
    """``wavecast.compare``'s result: a list with one :class:`ServeReport` row per GPU × TP
    degree that can serve the workload, ready for ``pandas.DataFrame(result)``.

    The combinations that cannot run are in :attr:`skipped` (``gpu, tp, reason`` each); the
    workload's description in :attr:`model`, :attr:`predictor`, :attr:`batch`,
    :attr:`input_len`, :attr:`output_len`, :attr:`dtype`, :attr:`weights`, and what it settled
    that the request left open in :attr:`notes`. :meth:`to_dict`
    gives the CLI's ``compare --json`` object (``results`` and ``skipped``).
    """

    _kind = "compare"

    model: str
    predictor: str
    batch: int
    input_len: int
    output_len: int
    dtype: str
    weights: str
    weight_dtype: str
    skipped: List[Report]
    notes: List[str]

    def __init__(self, report: Dict[str, Any]) -> None:
        super().__init__(ServeReport(r) for r in report.get("results", []))
        self._report = {k: v for k, v in report.items() if k != "results"}
        for key, value in self._report.items():
            setattr(self, key, value)
        self.skipped = list(report.get("skipped", []))
        # What the answer settled that the request left open (fp16 on a GPU without bf16).
        self.notes = list(report.get("notes", []))

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


class TrainReport(Report):
    """``wavecast.train``'s result (the CLI's ``predict --mode train --json`` with layout
    flags): ``step_ms``, its ``parts``, ``collectives``, ``memory_gb`` of the most loaded GPU,
    ``mfu``."""

    _kind = "train"
    __slots__ = ()


class PlanTrainReport(Report):
    """``wavecast.plan_train``'s result (``plan train --json``): ``rows`` ranked by step time
    among the layouts that fit, and the ``rejected`` reasons."""

    _kind = "plan_train"
    __slots__ = ()


class ServeSimReport(Report):
    """``wavecast.serve_sim``'s result (``serve-sim --json``): ``metrics`` (TTFT, TPOT and
    end-to-end percentiles, throughput), ``engine``, ``memory``, ``decode_step``."""

    _kind = "serve_sim"
    __slots__ = ()


class PlanServeReport(Report):
    """``wavecast.plan_serve``'s result (``plan serve --json``): every simulated ``points``
    (with its ``pareto`` flag) and those meeting the target ``ranked``."""

    _kind = "plan_serve"
    __slots__ = ()
