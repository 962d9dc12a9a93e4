"""wavecast tracker: record PyTorch iterations on the GPU you have, for `wavecast scale`.

    from wavecast_tracker import Tracker

    with Tracker("step.json.gz", steps=3, warmup=2) as t:
        for batch in loader:
            train_step(batch)
            t.step()
            if t.done:
                break

Then: ``wavecast scale --trace step.json.gz --to h100,l4,a100``.
"""

from .summary import TraceSummary, summarize
from .tracker import Tracker, TrackerError, record, write_trace

__all__ = ["Tracker", "TrackerError", "record", "write_trace", "summarize", "TraceSummary"]
