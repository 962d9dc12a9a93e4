"""Record iterations of PyTorch code with the profiler, in the form `wavecast scale` reads.

The profiler runs with CPU and CUDA activities, ``record_shapes=True`` (operator input shapes
and types, which let wavecast compute each op's FLOPs and bytes and send GEMMs through its
per-op predictors) and a schedule of ``warmup`` ignored steps followed by ``steps`` recorded
ones. Kineto already writes what wavecast needs for every kernel: name, duration, grid, block,
registers per thread, shared memory, and the launching op through correlation ids, plus the
device's properties.

Only the default profiler factory imports torch, so this module imports, and its step logic
can be tested, without torch. Without torch, entering a :class:`Tracker` (or calling
:func:`record`) with the default profiler raises an :class:`ImportError` that says so, before
any iteration runs.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from typing import Any, Callable, Optional


class TrackerError(ValueError):
    """Bad tracker arguments or an unusable trace."""


TORCH_MISSING = (
    "recording a trace needs PyTorch, which is not installed here: `pip install torch` "
    "(or `pip install 'wavecast[torch]'`); checking a trace with `python -m wavecast.torch "
    "check` and everything else in wavecast work without it"
)


def _import_torch() -> Any:
    """``import torch``, or an ImportError naming torch and how to get it."""
    try:
        import torch  # type: ignore[import-not-found,unused-ignore]  # only when recording
    except ImportError as e:
        if isinstance(e, ModuleNotFoundError) and e.name == "torch":
            raise ImportError(TORCH_MISSING, name="torch") from None
        # torch is there but one of its own imports failed (a CUDA library, a dependency):
        # "install torch" would send the user the wrong way.
        raise ImportError(f"PyTorch is installed but failed to import: {e}", name="torch") from e
    return torch


def _torch_profiler(warmup: int, steps: int, on_trace_ready: Callable[[Any], None]) -> Any:
    """The real profiler: CPU + CUDA activities, shapes on, wait 0 / warmup / active steps."""
    torch = _import_torch()
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    return torch.profiler.profile(
        activities=activities,
        schedule=torch.profiler.schedule(wait=0, warmup=warmup, active=steps, repeat=1),
        record_shapes=True,
        on_trace_ready=on_trace_ready,
    )


def write_trace(exported_json: str, path: str) -> str:
    """Moves the profiler's JSON export to ``path``, gzipping it when ``path`` ends in ``.gz``.

    Writes to a temporary name first and renames, so an interrupted run never leaves a
    truncated trace under the final name.
    """
    if not os.path.isfile(exported_json):
        raise TrackerError(f"the profiler wrote no trace at {exported_json}")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".wavecast-", dir=directory)
    os.close(fd)
    try:
        if path.endswith(".gz"):
            with open(exported_json, "rb") as src, gzip.open(tmp, "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(exported_json, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


class Tracker:
    """Context manager recording ``steps`` iterations after ``warmup`` ones.

    Call :meth:`step` at the end of every iteration; :attr:`done` turns true once the recorded
    iterations are complete, and the trace is written to ``path`` (``.json`` or ``.json.gz``)
    then, or when the ``with`` block ends.

    ``profiler_factory(warmup, steps, on_trace_ready)`` builds the profiler; the default uses
    ``torch.profiler`` (an :class:`ImportError` naming torch here when it is not installed).
    Tests pass a fake one.
    """

    def __init__(
        self,
        path: str,
        steps: int = 1,
        warmup: int = 1,
        profiler_factory: Optional[Callable[[int, int, Callable[[Any], None]], Any]] = None,
    ) -> None:
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
            raise TrackerError(f"steps must be a positive integer, got {steps!r}")
        if not isinstance(warmup, int) or isinstance(warmup, bool) or warmup < 0:
            raise TrackerError(f"warmup must be a non-negative integer, got {warmup!r}")
        if not (path.endswith(".json") or path.endswith(".json.gz")):
            raise TrackerError(f"trace path must end in .json or .json.gz, got {path!r}")
        self.path = path
        self.steps = steps
        self.warmup = warmup
        self._factory = profiler_factory or _torch_profiler
        self._profiler: Any = None
        self._calls = 0
        self.written: Optional[str] = None

    @property
    def done(self) -> bool:
        """True once warm-up and recorded iterations have all been stepped."""
        return self._calls >= self.warmup + self.steps

    def _export(self, prof: Any) -> None:
        # Kineto exports plain JSON; write it next to the destination, then move/compress.
        fd, tmp = tempfile.mkstemp(suffix=".json", prefix=".wavecast-export-")
        os.close(fd)
        try:
            prof.export_chrome_trace(tmp)
            self.written = write_trace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def __enter__(self) -> "Tracker":
        self._profiler = self._factory(self.warmup, self.steps, self._export)
        self._profiler.__enter__()
        return self

    def step(self) -> None:
        """Marks the end of one iteration. Steps after :attr:`done` are ignored."""
        if self._profiler is None:
            raise TrackerError("Tracker.step() called outside its `with` block")
        if self.done:
            return
        self._calls += 1
        self._profiler.step()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        profiler, self._profiler = self._profiler, None
        profiler.__exit__(exc_type, exc, tb)
        if exc_type is None and self.written is None:
            raise TrackerError(
                f"no trace written: {self._calls} of {self.warmup + self.steps} iterations "
                f"(warmup {self.warmup} + steps {self.steps}) were stepped; call tracker.step() "
                "once per iteration"
            )


def record(fn: Callable[[], Any], path: str, steps: int = 1, warmup: int = 1, **kwargs: Any) -> str:
    """Runs ``fn`` (one training iteration) ``warmup + steps`` times under the profiler and
    writes the trace to ``path``. Returns the path written."""
    with Tracker(path, steps=steps, warmup=warmup, **kwargs) as t:
        while not t.done:
            fn()
            _synchronize()
            t.step()
    assert t.written is not None
    return t.written


def _synchronize() -> None:
    """Waits for queued GPU work so each step's kernels land in that step."""
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.synchronize()
