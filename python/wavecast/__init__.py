"""wavecast: predict how long deep-learning work takes on a GPU, including GPUs you do not have.

    import wavecast

    p = wavecast.predict("gpt2-large", gpu="h100", batch=4, seq=1024, mode="train")
    print(p.total_ms, p.phases.forward)                    # milliseconds
    s = wavecast.serve("qwen2.5-14b", gpu="h100", batch=8, input_len=2000, output_len=128)
    rows = wavecast.compare("qwen3-32b", gpus=["h100", "l40s"], tp=[1, 2],
                            batch=8, input_len=1000, output_len=100)   # pandas.DataFrame(rows)

Every function returns what the CLI prints with ``--json`` for the same inputs, as dicts whose
keys are also attributes (``.to_dict()`` for plain ones); bad input raises
:class:`WavecastError`, a ``ValueError`` with the CLI's one-line message. The GPU catalog,
presets and trained predictors are compiled in: no GPU and no download needed.

    t = wavecast.train("gpt2-large", gpu="h100", batch=16, dp=2, tp=2, pp=2, micro_batch=2)
    plan = wavecast.plan_train("gpt2-large", gpu="a100-sxm-80gb", gpus=16, batch=64)
    sim = wavecast.serve_sim("llama-3.1-70b", gpu="h100", layout="tp4", concurrency=32,
                             input=1024, output=256, quant="fp8")     # under load: TTFT, TPOT
    best = wavecast.plan_serve("qwen3-32b", gpu="h100", gpus=8, slo_tpot_ms=30)

In Jupyter every report shows itself as tables with its chart inline (SVG);
``report.to_html("report.html")`` writes the one-file page the CLI's ``--html`` writes.

``wavecast.torch`` records PyTorch profiler traces for :func:`scale` (needs torch to record).
"""

from ._api import WavecastError, compare, gpus, models, plan_serve, plan_train, predict, scale, serve, serve_sim, sustained, train
from ._report import CompareResult, PlanServeReport, PlanTrainReport, Prediction, Report, ScaleReport, ServeReport, ServeSimReport, TrainReport


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("wavecast")
    except Exception:  # a source checkout, not an installed package
        return "0+unknown"


__version__ = _version()

__all__ = [
    "predict",
    "serve",
    "compare",
    "train",
    "plan_train",
    "serve_sim",
    "plan_serve",
    "scale",
    "gpus",
    "sustained",
    "models",
    "WavecastError",
    "Report",
    "Prediction",
    "ServeReport",
    "CompareResult",
    "ScaleReport",
    "TrainReport",
    "PlanTrainReport",
    "ServeSimReport",
    "PlanServeReport",
]
