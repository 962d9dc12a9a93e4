"""wavecast.torch without torch: step schedule, trace writing, checks. Run from `python/`:
`python3 -m unittest discover -s tests -p test_tracker.py` (what `cargo test` does, on the
source tree), or with pytest on the installed package."""

import contextlib
import gzip
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
import zlib

try:  # the installed package, or python/ when run from there with `python3 -m unittest`
    import wavecast.torch  # noqa: F401
except ImportError:  # the source tree (wavecast.torch needs no compiled extension)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import wavecast.torch as wavecast_torch  # noqa: E402
from wavecast.torch import Tracker, TrackerError, record, summarize, write_trace  # noqa: E402
from wavecast.torch.__main__ import main  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

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


def temporary_directory(test):
    """A fresh directory removed when ``test`` ends."""
    tmp = tempfile.TemporaryDirectory()
    test.addCleanup(tmp.cleanup)
    return tmp.name


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
        self.dir = temporary_directory(self)

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

    def check_path(self, path):
        """`check` on ``path``: (exit code, stderr)."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["check", path])
        return code, err.getvalue()

    def test_check_on_a_damaged_gzip_is_one_line_and_exit_2(self):
        # Flipped bits inside the deflate stream: zlib's own error, not gzip's OSError or EOFError.
        packed = bytearray(gzip.compress(json.dumps(TRACE).encode() * 50, mtime=0))
        for i in range(20, len(packed) - 20, 7):
            packed[i] ^= 0x55
        with self.assertRaises(zlib.error):
            gzip.decompress(bytes(packed))
        code, err = self.check(bytes(packed))
        self.assertEqual(code, 2, err)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertTrue(err.startswith("wavecast.torch: error: "), err)

    def test_check_names_the_path_when_it_is_missing_or_a_folder(self):
        missing = self.path("missing.json.gz")
        for path, what in ((missing, "no such file"), (self.dir, "is a directory")):
            code, err = self.check_path(path)
            self.assertEqual(code, 2, err)
            self.assertTrue(err.startswith(f"wavecast.torch: error: {path}: {what}"), err)
            self.assertEqual(err.count("\n"), 1, err)

    @unittest.skipUnless(hasattr(os, "mkfifo"), "needs named pipes")
    def test_check_refuses_a_pipe_instead_of_waiting_for_a_writer(self):
        fifo = self.path("trace.json")
        os.mkfifo(fifo)
        # In a child process: opening the pipe to read it would block this test run forever.
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(wavecast_torch.__file__)))
        out = subprocess.run([sys.executable, "-m", "wavecast.torch", "check", fifo], capture_output=True, text=True,
                             timeout=60, env={**os.environ, "PYTHONPATH": package_parent})
        self.assertEqual((out.returncode, out.stderr), (2, f"wavecast.torch: error: {fifo}: not a regular file\n"))

    def test_check_on_odd_but_valid_json_summarizes_without_a_traceback(self):
        trace = {"deviceProperties": [{"name": 5}], "traceEvents": [
            {"cat": "cpu_op", "name": "aten::mm", "args": {"Input Dims": 5}},
            {"cat": "cpu_op", "name": "aten::add", "args": {"Input Dims": True}},
        ]}
        code, err = self.check(json.dumps(trace).encode())
        self.assertEqual(code, 0, err)
        s = summarize(self.path("f.json"))
        self.assertEqual((s.ops_with_shapes, s.device), (0, None))

    def test_damaged_durations_are_not_summed_into_an_infinite_kernel_time(self):
        kernels = [{"cat": "kernel", "name": "k", "dur": d} for d in (2.0, float("inf"), float("nan"), -5, 3)]
        p = self.path("durations.json")
        with open(p, "w") as f:
            json.dump({"traceEvents": kernels}, f)  # Python writes Infinity and NaN, and reads them
        s = summarize(p)
        self.assertEqual(s.kernel_time_us, 5.0)
        self.assertTrue(any(x.startswith("3 kernels without a usable duration") for x in s.problems), s.problems)


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
        path = os.path.join(temporary_directory(self), "t.json")
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

    def test_the_message_is_one_line_with_both_ways_to_install(self):
        with self.assertRaises(ImportError) as e:
            record(lambda: None, os.path.join(temporary_directory(self), "t.json"))
        message = str(e.exception)
        self.assertNotIn("\n", message)
        self.assertIn("`pip install torch`", message)
        self.assertIn("wavecast[torch]", message)


class BrokenTorchTest(unittest.TestCase):
    """torch installed but failing to import is not reported as torch missing."""

    def setUp(self):
        fake = temporary_directory(self)
        os.mkdir(os.path.join(fake, "torch"))
        with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
            f.write("raise ImportError('libcudart.so.12: cannot open shared object file')\n")
        saved = sys.modules.pop("torch", None)
        sys.path.insert(0, fake)
        self.addCleanup(sys.path.remove, fake)
        self.addCleanup(self.restore, saved)

    @staticmethod
    def restore(saved):
        sys.modules.pop("torch", None)
        if saved is not None:
            sys.modules["torch"] = saved

    def test_the_import_error_is_passed_on_not_called_missing(self):
        with self.assertRaises(ImportError) as e:
            with Tracker(os.path.join(temporary_directory(self), "t.json")):
                self.fail("the block does not run when torch cannot be imported")
        self.assertIn("libcudart.so.12", str(e.exception))
        self.assertNotIn("not installed", str(e.exception))


@unittest.skipUnless(shutil.which("bash") and shutil.which("cargo")
                     and os.path.isfile(os.path.join(ROOT, "bench", "scale_pairs.sh")),
                     "needs bash, cargo and the repository's bench/")
class BenchScriptTest(unittest.TestCase):
    """bench/*.sh run the binary cargo built, wherever its target folder is."""

    def run_scale_pairs(self, **env):
        """bench/scale_pairs.sh with `cargo build` skipped and a fake binary in each candidate
        target folder recording its calls: the folders whose binary was run."""
        tmp = temporary_directory(self)
        os.mkdir(os.path.join(tmp, "bin"))
        executable(os.path.join(tmp, "bin", "cargo"),
                   f'[ "$1" = build ] && exit 0\nexec {shlex.quote(shutil.which("cargo"))} "$@"\n')
        for folder in ("by-target-dir", "by-build-target-dir"):
            log = shlex.quote(os.path.join(tmp, folder + ".log"))
            executable(os.path.join(tmp, folder, "release", "wavecast"), f'echo "$@" >> {log}\n')
        outer = {k: v for k, v in os.environ.items() if k not in ("CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR")}
        env = {**outer, **{k: v.format(tmp=tmp) for k, v in env.items()},
               "PATH": os.path.join(tmp, "bin") + os.pathsep + os.environ["PATH"]}
        out = subprocess.run(["bash", os.path.join(ROOT, "bench", "scale_pairs.sh"), tmp],
                             env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        return sorted(f[:-4] for f in os.listdir(tmp) if f.endswith(".log"))

    def test_cargo_target_dir(self):
        self.assertEqual(self.run_scale_pairs(CARGO_TARGET_DIR="{tmp}/by-target-dir"), ["by-target-dir"])

    def test_cargo_build_target_dir(self):
        self.assertEqual(self.run_scale_pairs(CARGO_BUILD_TARGET_DIR="{tmp}/by-build-target-dir"), ["by-build-target-dir"])

    def test_cargo_target_dir_wins_over_cargo_build_target_dir(self):
        self.assertEqual(self.run_scale_pairs(CARGO_TARGET_DIR="{tmp}/by-target-dir",
                                              CARGO_BUILD_TARGET_DIR="{tmp}/by-build-target-dir"), ["by-target-dir"])


def executable(path, body):
    """Writes a /bin/sh script at ``path``, creating its folders."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)


if __name__ == "__main__":
    unittest.main()
