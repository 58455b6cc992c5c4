"""Where the package tests find the `ttt` package, and when they may skip.

The package comes from the build tree ($TTT_BUILD_DIR/python, default
<repo>/build/python) unless it is installed. Tests skip only when the
extension could not have been built (nanobind or the Python development
headers missing).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("TTT_BUILD_DIR", REPO / "build"))
EXAMPLES = REPO / "examples"
FIXTURES = REPO / "test" / "fixtures" / "onnx"


def skip_reason() -> str | None:
    """Why the extension cannot have been built here, if it cannot."""
    if importlib.util.find_spec("nanobind") is None:
        return "the extension ttt._ttt is not built: nanobind is not installed"
    cache = BUILD_DIR / "CMakeCache.txt"
    if cache.exists() and "TTT_BUILD_PYTHON:BOOL=OFF" in cache.read_text(errors="replace"):
        return ("the extension ttt._ttt is not built: the build was configured with "
                "TTT_BUILD_PYTHON=OFF (nanobind or the Python development headers "
                "were not found)")
    return None


def extension_built() -> bool:
    """Whether the extension is in the build tree or installed."""
    pkg = BUILD_DIR / "python" / "ttt"
    if any(pkg.glob("_ttt*.so")):
        return True
    try:
        return importlib.util.find_spec("ttt._ttt") is not None
    except ImportError:
        return False


def run_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """Runs `python -m ttt ARGS` on the build tree's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(BUILD_DIR / "python"), str(REPO / "python")]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["TTT_BUILD_DIR"] = str(BUILD_DIR)
    return subprocess.run([sys.executable, "-m", "ttt", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)
