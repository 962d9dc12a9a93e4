"""Draw the GEMM rows h100_check.py re-times: 60 BF16 and 60 FP8 rows under 3 ms from the shared
vLLM 0.24.0 H100 table, at random with seed 7.

    python3 bench/device/gemm_sample.py OUT_CSV
"""

import sys

import numpy as np
import pandas as pd

TABLE = "../shared/data/aiconfigurator/systems/data/h100_sxm/gemm/vllm/0.24.0/gemm_perf.parquet"

table = pd.read_parquet(TABLE)
rng = np.random.default_rng(7)
parts = []
for dtype in ["bfloat16", "fp8"]:
    rows = table[(table.gemm_dtype == dtype) & (table.latency < 3.0)]
    parts.append(rows.iloc[rng.choice(len(rows), 60, replace=False)])
pd.concat(parts)[["kernel_source", "gemm_dtype", "m", "n", "k", "latency"]].to_csv(sys.argv[1], index=False)
