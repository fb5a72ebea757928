"""Fixtures of the npuplan Python tests: the CLI (the reference every API
result is compared with), the source tree, the real-model cache, scratch files.

Run by ctest (`python_api`, PYTHONPATH=<build>/python) or by hand:
    PYTHONPATH=build/python NPUPLAN_BIN=build/bin/npuplan python3 -m pytest python/tests
"""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("NPUPLAN_SOURCE_DIR", Path(__file__).resolve().parents[2]))


class Cli:
    def __init__(self, path):
        self.path = path

    def __call__(self, *args, check=True):
        r = subprocess.run([self.path, *map(str, args)], capture_output=True, text=True)
        if check and r.returncode != 0:
            raise AssertionError(f"npuplan {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
        return r

    def error(self, *args):
        """The CLI's `error:` text for a failing command (without `error: `)."""
        r = self(*args, check=False)
        assert r.returncode == 1, (r.returncode, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.startswith("error: ")]
        assert len(lines) == 1, r.stderr
        return lines[0][len("error: "):]


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("NPUPLAN_BIN", str(ROOT / "build" / "bin" / "npuplan"))
    if not os.access(path, os.X_OK):
        pytest.skip(f"no npuplan binary at {path} (set NPUPLAN_BIN)")
    return Cli(path)


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def model_cache():
    return Path(os.environ.get("NPUPLAN_MODEL_CACHE", ROOT / ".cache" / "models"))
