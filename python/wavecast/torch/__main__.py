"""``python -m wavecast.torch check TRACE``: what wavecast will see in a trace.

Prints one summary line (and a line per problem found) and exits 0, or prints one error line
and exits 2 when the file cannot be read as a profiler trace.
"""

import sys
from typing import List

from .summary import summarize
from .tracker import TrackerError


def main(argv: List[str]) -> int:
    if len(argv) != 2 or argv[0] != "check":
        print("usage: python -m wavecast.torch check TRACE.json[.gz]", file=sys.stderr)
        return 2
    try:
        s = summarize(argv[1])
    except (TrackerError, OSError, ValueError) as e:
        print(f"wavecast.torch: error: {e}", file=sys.stderr)
        return 2
    print(f"{s.path}: device {s.device or '(not recorded)'}, {s.kernels} kernels, "
          f"{s.kernel_time_us / 1e3:.3f} ms of kernel time, {s.profiler_steps} profiler steps, "
          f"{s.ops_with_shapes} ops with shapes")
    for p in s.problems:
        print(f"  warning: {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
