"""Tracker logic without torch: step schedule, trace writing, checks. Run from `python/`:
`python3 -m unittest discover -s tests` (or `python3 -m pytest tests`)."""

import gzip
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from wavecast_tracker import Tracker, TrackerError, record, summarize, write_trace  # noqa: E402
from wavecast_tracker.__main__ import main  # noqa: E402

TRACE = {
    "deviceProperties": [{"id": 0, "name": "NVIDIA L4", "numSms": 58}],
    "traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "ts": 0, "dur": 100},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 10,
         "args": {"Input Dims": [[64, 32], [32, 16]], "Input type": ["float", "float"]}},
        {"ph": "X", "cat": "kernel", "name": "sgemm", "ts": 20, "dur": 12.5,
         "args": {"grid": [4, 1, 1], "block": [128, 1, 1], "correlation": 5}},
        {"ph": "X", "cat": "kernel", "name": "add", "ts": 40, "dur": 2.5, "args": {"correlation": 6}},
    ],
}


class FakeProfiler:
    """Mimics torch.profiler.profile with schedule(wait=0, warmup, active, repeat=1)."""

    def __init__(self, warmup, steps, on_trace_ready):
        self.warmup, self.steps, self.ready = warmup, steps, on_trace_ready
        self.calls = 0
        self.entered = self.exited = False

    def __enter__(self):
        self.entered = True
        return self

    def __exit__(self, *exc):
        self.exited = True

    def step(self):
        self.calls += 1
        if self.calls == self.warmup + self.steps:
            self.ready(self)

    def export_chrome_trace(self, path):
        with open(path, "w") as f:
            json.dump(TRACE, f)


class TrackerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_trace_is_written_after_warmup_and_steps(self):
        fakes = []

        def factory(w, s, ready):
            fakes.append(FakeProfiler(w, s, ready))
            return fakes[-1]

        out = self.path("step.json.gz")
        with Tracker(out, steps=3, warmup=2, profiler_factory=factory) as t:
            for i in range(10):
                self.assertEqual(t.done, i >= 5)
                t.step()
        self.assertEqual(fakes[0].calls, 5, "steps after done are not passed on")
        self.assertTrue(fakes[0].entered and fakes[0].exited)
        with gzip.open(out, "rt") as f:
            self.assertEqual(json.load(f)["deviceProperties"][0]["name"], "NVIDIA L4")

    def test_record_runs_the_function_warmup_plus_steps_times(self):
        runs = []
        out = record(lambda: runs.append(1), self.path("r.json"), steps=2, warmup=1, profiler_factory=FakeProfiler)
        self.assertEqual(len(runs), 3)
        with open(out) as f:
            self.assertEqual(len(json.load(f)["traceEvents"]), 4)

    def test_too_few_steps_is_an_error_not_a_silent_empty_trace(self):
        with self.assertRaises(TrackerError) as e:
            with Tracker(self.path("x.json"), steps=2, warmup=1, profiler_factory=FakeProfiler) as t:
                t.step()
        self.assertIn("1 of 3 iterations", str(e.exception))
        self.assertFalse(os.path.exists(self.path("x.json")))

    def test_bad_arguments(self):
        for kwargs in ({"steps": 0}, {"steps": 1.5}, {"warmup": -1}, {"steps": True}):
            with self.assertRaises(TrackerError):
                Tracker(self.path("t.json"), **kwargs)
        with self.assertRaises(TrackerError):
            Tracker(self.path("t.txt"))
        with self.assertRaises(TrackerError):
            Tracker(self.path("t.json")).step()

    def test_write_trace_is_atomic_and_compresses(self):
        src = self.path("src.json")
        with open(src, "w") as f:
            json.dump(TRACE, f)
        write_trace(src, self.path("out/a.json.gz"))
        with open(self.path("out/a.json.gz"), "rb") as f:
            self.assertEqual(f.read(2), b"\x1f\x8b")
        self.assertEqual(sorted(os.listdir(self.path("out"))), ["a.json.gz"], "no temporary left behind")
        with self.assertRaises(TrackerError):
            write_trace(self.path("missing.json"), self.path("b.json"))

    def test_summary_reports_what_wavecast_sees(self):
        p = self.path("s.json.gz")
        with gzip.open(p, "wt") as f:
            json.dump(TRACE, f)
        s = summarize(p)
        self.assertEqual((s.device, s.kernels, s.kernel_time_us, s.profiler_steps, s.ops_with_shapes), ("NVIDIA L4", 2, 15.0, 1, 1))
        self.assertEqual(s.kernels_with_launch, 1)
        self.assertTrue(any("without grid/block" in p for p in s.problems))

    def test_summary_flags_missing_gpu_activity_and_bad_files(self):
        p = self.path("cpu.json")
        with open(p, "w") as f:
            json.dump([{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 0, "dur": 1}], f)
        s = summarize(p)
        self.assertTrue(any("no GPU kernels" in x for x in s.problems))
        self.assertTrue(any("record_shapes" in x for x in s.problems))
        self.assertTrue(any("--from" in x for x in s.problems))
        cut = self.path("cut.json")
        with open(cut, "w") as f:
            f.write(json.dumps(TRACE)[:60])
        with self.assertRaises(TrackerError):
            summarize(cut)
        self.assertEqual(main(["check", cut]), 2)
        self.assertEqual(main(["check", p]), 0)
        self.assertEqual(main([]), 2)


if __name__ == "__main__":
    unittest.main()
