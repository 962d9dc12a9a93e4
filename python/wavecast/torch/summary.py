"""Checks a recorded trace without torch: is it what `wavecast scale` needs?

Reads a Chrome-trace JSON (plain or gzipped) and reports the device, the kernel count and
total kernel time (the origin time wavecast will report), and what is missing: no CUDA
kernels (profiler ran without the CUDA activity), no recorded shapes, no launch configuration.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .tracker import TrackerError


@dataclass
class TraceSummary:
    path: str
    device: Optional[str]
    kernels: int
    kernel_time_us: float
    ops_with_shapes: int
    kernels_with_launch: int
    profiler_steps: int
    problems: List[str] = field(default_factory=list)


def _ensure_regular_file(path: str) -> None:
    # Checked before opening: a FIFO would block the open and /dev/zero would be read forever.
    if os.path.isdir(path):
        raise TrackerError(f"{path}: is a directory, not a trace file")
    if not os.path.exists(path):
        raise TrackerError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise TrackerError(f"{path}: not a regular file")


def _read_json(path: str) -> Any:
    """The file's JSON, gunzipped first when it starts with gzip's magic bytes."""
    try:
        with open(path, "rb") as f:
            head = f.read(2)
        opener = gzip.open if head == b"\x1f\x8b" else open
        # utf-8-sig: a byte-order mark written by some editors is not damage.
        with opener(path, "rt", encoding="utf-8-sig") as f:
            return json.load(f)
    except (OSError, EOFError, zlib.error) as e:
        raise TrackerError(f"{path}: cannot read ({getattr(e, 'strerror', None) or e})") from e
    except UnicodeDecodeError as e:
        raise TrackerError(f"{path}: not a JSON trace (binary content at byte {e.start})") from e
    except json.JSONDecodeError as e:
        raise TrackerError(f"{path}: not valid JSON, truncated or damaged ({e})") from e
    except RecursionError as e:
        raise TrackerError(f"{path}: JSON nested too deeply to be a profiler trace") from e


def _load(path: str) -> Dict[str, Any]:
    _ensure_regular_file(path)
    data = _read_json(path)
    if isinstance(data, list):
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise TrackerError(f"{path}: no 'traceEvents' array; not a PyTorch profiler trace")
    return data


def _args(event: Dict[str, Any]) -> Dict[str, Any]:
    args = event.get("args")
    return args if isinstance(args, dict) else {}


def _duration(event: Dict[str, Any]) -> Optional[float]:
    """The event's duration in µs, or None when it is missing, not a number, negative or not
    finite (a damaged trace: such a kernel must not make the total time infinite or NaN)."""
    v = event.get("dur")
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    v = float(v)
    return v if math.isfinite(v) and v >= 0 else None


def _has_shapes(op: Dict[str, Any]) -> bool:
    # Kineto writes a list of per-input dimension lists, with [] for scalars and non-tensors.
    dims = _args(op).get("Input Dims")
    return isinstance(dims, list) and any(dims)


def _device_name(data: Dict[str, Any]) -> Optional[str]:
    devices = data.get("deviceProperties")
    first = devices[0] if isinstance(devices, list) and devices else None
    name = first.get("name") if isinstance(first, dict) else None
    return name if isinstance(name, str) and name else None


def summarize(path: str) -> TraceSummary:
    data = _load(path)
    events = [e for e in data["traceEvents"] if isinstance(e, dict)]
    kernels = [e for e in events if str(e.get("cat", "")).lower() == "kernel"]
    ops = [e for e in events if str(e.get("cat", "")).lower() in ("cpu_op", "operator")]
    shaped = sum(1 for o in ops if _has_shapes(o))
    launched = sum(1 for k in kernels if "grid" in _args(k) and "block" in _args(k))
    steps = sum(1 for e in events if str(e.get("name", "")).startswith("ProfilerStep#"))
    device = _device_name(data)
    timed = [d for d in map(_duration, kernels) if d is not None]
    s = TraceSummary(
        path=path,
        device=device,
        kernels=len(kernels),
        kernel_time_us=float(sum(timed)),
        ops_with_shapes=shaped,
        kernels_with_launch=launched,
        profiler_steps=steps,
    )
    if not kernels:
        s.problems.append("no GPU kernels: record with ProfilerActivity.CUDA on a machine with a GPU")
    if ops and not shaped:
        s.problems.append("no operator shapes: record with record_shapes=True (GEMMs then cannot use per-op predictors)")
    if kernels and launched < len(kernels):
        s.problems.append(f"{len(kernels) - launched} kernels without grid/block (ROCm traces): scaled without wave counts")
    if len(timed) < len(kernels):
        s.problems.append(f"{len(kernels) - len(timed)} kernels without a usable duration: counted as 0 in the kernel time")
    if device is None:
        s.problems.append("no deviceProperties: pass --from GPU to wavecast scale")
    return s
