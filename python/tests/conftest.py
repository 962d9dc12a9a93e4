"""Shared fixtures of the Python tests: the CLI binary the bindings are checked against.

Set WAVECAST_TEST_STRICT=1 (as `.ci/run` does) to make a missing compiled extension, CLI binary
or pandas a failure instead of a skip.
"""

import json
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STRICT = os.environ.get("WAVECAST_TEST_STRICT") == "1"


def missing(reason):
    if STRICT:
        pytest.fail(reason + " (WAVECAST_TEST_STRICT=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def wavecast():
    """The installed package, with its compiled extension."""
    import wavecast as wc

    try:
        from wavecast import _native  # noqa: F401
    except ImportError:
        missing(f"wavecast._native is not built (imported {wc.__file__}); `pip install ./python` "
                 "and run pytest from outside python/")
    return wc


class Cli:
    """Runs the `wavecast` binary with --json from the repository root."""

    def __init__(self, path):
        self.path = path

    def run(self, *args):
        return subprocess.run([self.path, *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300)

    def json(self, *args):
        out = self.run(*args, "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def error(self, *args):
        """The CLI's error message for these arguments, without its "wavecast: error: " prefix."""
        out = self.run(*args)
        assert out.returncode == 2, (out.returncode, out.stderr)
        return out.stderr.strip().removeprefix("wavecast: error: ")


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("WAVECAST_BIN") or os.path.join(ROOT, "target", "release", "wavecast")
    if not os.path.isfile(path):
        missing(f"no wavecast binary at {path} (cargo build --release, or set WAVECAST_BIN)")
    return Cli(path)
