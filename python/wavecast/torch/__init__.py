"""wavecast.torch: record PyTorch iterations on the GPU you have, for `wavecast scale`.

    from wavecast.torch import Tracker

    with Tracker("step.json.gz", steps=3, warmup=2) as t:
        for batch in loader:
            train_step(batch)
            t.step()
            if t.done:
                break

Then ``wavecast.scale("step.json.gz", to=["h100", "l4", "a100"])`` (or the CLI's
``wavecast scale --trace step.json.gz --to h100,l4,a100``). ``python -m wavecast.torch check
step.json.gz`` says what wavecast will see in a trace.

Importing this module does not import torch; recording does (an ImportError naming torch when
it is missing). Checking a trace never needs torch.
"""

from .summary import TraceSummary, summarize
from .tracker import Tracker, TrackerError, record, write_trace

__all__ = ["Tracker", "TrackerError", "record", "write_trace", "summarize", "TraceSummary"]
