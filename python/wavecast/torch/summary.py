"""Checks a recorded trace without torch: is it what `wavecast scale` needs?

Reads a Chrome-trace JSON (plain or gzipped) and reports the device, the kernel count and
total kernel time (the origin time wavecast will report), and what is missing: no CUDA
kernels (profiler ran without the CUDA activity), no recorded shapes, no launch configuration.
"""

from __future__ import annotations

import gzip
import json
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


def _load(path: str) -> Dict[str, Any]:
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, EOFError) as e:
        raise TrackerError(f"{path}: cannot read ({e})") from e
    except UnicodeDecodeError as e:
        raise TrackerError(f"{path}: not a JSON trace (binary content at byte {e.start})") from e
    except json.JSONDecodeError as e:
        raise TrackerError(f"{path}: not valid JSON, truncated or damaged ({e})") from e
    except RecursionError as e:
        raise TrackerError(f"{path}: JSON nested too deeply to be a profiler trace") from e
    if isinstance(data, list):
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise TrackerError(f"{path}: no 'traceEvents' array; not a PyTorch profiler trace")
    return data


def _args(event: Dict[str, Any]) -> Dict[str, Any]:
    args = event.get("args")
    return args if isinstance(args, dict) else {}


def _number(v: Any) -> float:
    """A duration as a float; anything that is not a number counts as 0."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def summarize(path: str) -> TraceSummary:
    data = _load(path)
    events = [e for e in data["traceEvents"] if isinstance(e, dict)]
    kernels = [e for e in events if str(e.get("cat", "")).lower() == "kernel"]
    ops = [e for e in events if str(e.get("cat", "")).lower() in ("cpu_op", "operator")]
    shaped = sum(1 for o in ops if any(_args(o).get("Input Dims") or []))
    launched = sum(1 for k in kernels if "grid" in _args(k) and "block" in _args(k))
    steps = sum(1 for e in events if str(e.get("name", "")).startswith("ProfilerStep#"))
    devices = data.get("deviceProperties")
    first = devices[0] if isinstance(devices, list) and devices else None
    device = first.get("name") if isinstance(first, dict) else None
    s = TraceSummary(
        path=path,
        device=device,
        kernels=len(kernels),
        kernel_time_us=float(sum(_number(k.get("dur")) for k in kernels)),
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
    if device is None:
        s.problems.append("no deviceProperties: pass --from GPU to wavecast scale")
    return s
