"""wavecast.torch without torch: step schedule, trace writing, checks. Run from `python/`:
`python3 -m unittest discover -s tests -p test_tracker.py` (what `cargo test` does, on the
source tree), or with pytest on the installed package."""

import contextlib
import gzip
import io
import json
import os
import sys
import tempfile
import unittest

try:  # the installed package, or python/ when run from there with `python3 -m unittest`
    import wavecast.torch  # noqa: F401
except ImportError:  # the source tree (wavecast.torch needs no compiled extension)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from wavecast.torch import Tracker, TrackerError, record, summarize, write_trace  # noqa: E402
from wavecast.torch.__main__ import main  # noqa: E402

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

    def check(self, content):
        """`check` on a file with these bytes: (exit code, stderr)."""
        p = self.path("f.json")
        with open(p, "wb") as f:
            f.write(content)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["check", p])
        return code, err.getvalue()

    def test_check_on_a_binary_or_odd_file_is_one_line_and_exit_2(self):
        for content in (bytes(range(256)) * 8, gzip.compress(bytes(range(256))), b"\x1f\x8b\x08garbage",
                        b"[" * 100000, b'{"traceEvents": 5}', b"\xff\xfe{}"):
            code, err = self.check(content)
            self.assertEqual(code, 2, (content[:20], err))
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertTrue(err.startswith("wavecast.torch: error: "), err)
        code, err = self.check(b'{"traceEvents": [{"cat": "kernel", "dur": "x", "args": 3}], "deviceProperties": 7}')
        self.assertEqual(code, 0, err)
        code, err = self.check(b"")
        self.assertEqual(code, 2, err)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(main(["check", self.dir]), 2)  # a folder
        self.assertEqual(len(err.getvalue().strip().splitlines()), 1)


class WithoutTorchTest(unittest.TestCase):
    """Recording without torch: an ImportError naming torch, before any iteration runs."""

    def setUp(self):
        self.saved = sys.modules.get("torch", False)
        sys.modules["torch"] = None  # makes `import torch` fail, installed or not

    def tearDown(self):
        if self.saved is False:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved

    def test_tracker_and_record_say_torch_is_needed(self):
        path = os.path.join(tempfile.mkdtemp(), "t.json")
        with self.assertRaises(ImportError) as e:
            with Tracker(path):
                self.fail("the block does not run without torch")
        self.assertIn("pip install torch", str(e.exception))
        self.assertEqual(e.exception.name, "torch")
        runs = []
        with self.assertRaises(ImportError) as e:
            record(lambda: runs.append(1), path)
        self.assertIn("PyTorch", str(e.exception))
        self.assertEqual(runs, [], "fails before running the step")
        self.assertFalse(os.path.exists(path))


if __name__ == "__main__":
    unittest.main()
