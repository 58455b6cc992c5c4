"""Every shell command of the README (and of docs/*.md) runs as written.

Commands come from the ```sh blocks of README.md and docs/*.md:

* in a transcript block (one with lines starting with ``$ ``), each ``$ `` line is a
  command and the lines after it, up to the next ``$ ``, are output it must print
  (each line must appear in its stdout or stderr, with the repository's absolute path
  removed from the output);
* in any other block, every line that is not empty and not a ``#`` comment is a
  command; lines ending in a backslash, and lines inside an open quote (a multi-line
  ``python3 -c '...'``), continue the command;
* a line that only assigns a shell variable (``T=build/bin/ttt-opt``) is no test of its
  own: it is prepended to the later commands of its block.

Each command runs with bash from the repository root and must exit with status 0. The
earlier commands of its block run first (once per session), since a command may read
what an earlier one wrote (``/tmp/model.mlir``, ``/tmp/in.npz``). The README's build
directory is ``build/``; when $TTT_BUILD_DIR names another one, it replaces ``build/``
in the commands.

The few commands that cannot run inside a test are listed in EXCLUDED with the reason;
commands that need something this machine may lack (a GPU, the CUDA toolkit, stock
mlir-opt, the Python extension, PyTorch, IREE) are skipped with the reason when it is missing.

Run from the repository root: python3 -m pytest -q test/python/test_readme.py
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from compiler import REPO, build_dir

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TIMEOUT = 120

# Commands that are never run here, each with the reason (matched as regular
# expressions against the whole command). `test_exclusions_match_commands` keeps the
# list from going stale.
EXCLUDED = [
    # Installs missing packages (scripts/setup.sh) and rebuilds the project before the
    # demo; a test must not reconfigure or rebuild the build it is testing.
    (r"make demo\b", "installs packages and rebuilds the project (make demo)"),
    # Runs this very test suite again after setup and a build: it would recurse.
    (r"make test\b", "runs the whole test suite, this file included (it would recurse)"),
    # prepare rebuilds the project and compiles 60 GPU programs (minutes); run needs
    # a GPU and exits with status 2 without one, by design. test_gpu_runtime.py runs
    # both halves at a tiny shape (emulated, and through the fake driver).
    (r"bench/gpu_check\.sh\b", "rebuilds the project and compiles for minutes (prepare), "
                               "or needs a GPU (run: exit status 2 without one, by design)"),
    # `pip install .` into a venv and the commands it installs: a separate build of
    # many minutes. make check-package runs them, in a fresh venv.
    (r"^(python3 -m venv|pip install|ttt(-opt|-run)? )",
     "installs the package (pip install ., minutes) and runs its commands: "
     "make check-package does"),
]


def _cuda_device() -> str | None:
    """None when the CUDA driver reports a device, else why not."""
    name = os.environ.get("TTT_CUDA_DRIVER") or "libcuda.so.1"
    try:
        cuda = ctypes.CDLL(name)
    except OSError as error:
        return f"no CUDA driver ({error})"
    if cuda.cuInit(0) != 0:
        return "the CUDA driver finds no device"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "the CUDA driver reports no device"
    return None


def _cuda_tool(name: str) -> bool:
    if shutil.which(name):
        return True
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", name), os.X_OK):
            return True
    return False


def _missing_for(command: str) -> str | None:
    """Why `command` cannot run on this machine, or None."""
    if "--device=cuda" in command:
        why = _cuda_device()
        if why:
            return f"needs an NVIDIA GPU: {why}"
    if "--ttt-to-gpu" in command and "format=isa" not in command:
        missing = [t for t in ("ptxas", "fatbinary") if not _cuda_tool(t)]
        if missing:
            return f"the fatbin format needs the CUDA toolkit ({', '.join(missing)} not found)"
    if "/usr/lib/llvm-22/bin/mlir-opt" in command and not os.access(
            "/usr/lib/llvm-22/bin/mlir-opt", os.X_OK):
        return "stock mlir-opt of LLVM 22 is not installed"
    if "iree-venv/bin/" in command and not os.access(
            build_dir() / "iree-venv" / "bin" / "iree-compile", os.X_OK):
        return ("needs IREE (make check-iree installs the iree-base-compiler and "
                "iree-base-runtime wheels into the build directory's iree-venv)")
    for var in re.findall(r"\b(TTT_(?:LACT|TTT_LM|VITTT)_DIR)\b", command):
        if not os.path.isdir(os.environ.get(var) or "/nonexistent"):
            return (f"needs the upstream research code in ${var} "
                    "(python/scripts/fetch_upstream.sh clones it; make check-torch runs this)")
    if re.search(r"\bimport torch\b|import torch,", command) and \
            importlib.util.find_spec("torch") is None:
        return "needs PyTorch (pip install ttt[torch]), which is not installed"
    if "PYTHONPATH=" in command and "python" in command:
        if not list((build_dir() / "python" / "ttt").glob("_ttt*.so")):
            return ("the Python extension is not built (make build builds it when "
                    "nanobind is installed)")
        for module in ("numpy", "onnx", "onnxruntime"):
            if importlib.util.find_spec(module) is None:
                return f"the Python package needs {module}"
    return None


@dataclass
class Command:
    doc: Path
    line: int  # 1-based line of the command's first line
    text: str  # as written, continuation lines included
    prefix: list[str] = field(default_factory=list)  # variable assignments before it
    expected: list[str] = field(default_factory=list)  # transcript output lines
    block: int = 0  # index of its ```sh block in the document
    index: int = 0  # position among the block's commands

    @property
    def id(self) -> str:
        first = self.text.split("\n", 1)[0].rstrip(" \\")
        return f"{self.doc.name}:{self.line}:{first[:70]}"

    def script(self) -> str:
        return "\n".join([*self.prefix, self.text]) + "\n"


ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


def _complete(text: str) -> bool:
    """Whether `text` is a whole command (no trailing backslash, no open quote)."""
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
    except ValueError:  # No closing quotation
        return False
    return True


def _commands_of_block(doc: Path, block: int, lines: list[tuple[int, str]]) -> list[Command]:
    transcript = any(text.startswith("$ ") for _, text in lines)
    commands: list[Command] = []
    prefix: list[str] = []
    i = 0
    while i < len(lines):
        number, text = lines[i]
        i += 1
        if transcript:
            if not text.startswith("$ "):
                if commands and text.strip():
                    commands[-1].expected.append(text.strip())
                continue
            text = text[2:]
        elif not text.strip() or text.lstrip().startswith("#"):
            continue
        while not _complete(text) and i < len(lines):
            text += "\n" + lines[i][1]
            i += 1
        # `T=build/bin/ttt-opt  # comment`: a variable for the block's later commands.
        words = shlex.split(text, comments=True)
        if len(words) == 1 and ASSIGNMENT.match(text.split("#", 1)[0].strip()):
            prefix.append(text.split("#", 1)[0].strip())
            continue
        commands.append(Command(doc, number, text, list(prefix), block=block,
                                index=len(commands)))
    return commands


def parse_commands(doc: Path) -> list[Command]:
    commands: list[Command] = []
    block_lines: list[tuple[int, str]] | None = None
    block = 0
    for number, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if block_lines is None:
            if text.strip() == "```sh":
                block_lines = []
        elif text.strip().startswith("```"):
            commands += _commands_of_block(doc, block, block_lines)
            block_lines = None
            block += 1
        else:
            block_lines.append((number, text))
    return commands


COMMANDS = [c for doc in DOCUMENTS for c in parse_commands(doc)]


def _excluded(command: Command) -> str | None:
    for pattern, reason in EXCLUDED:
        if re.search(pattern, command.text):
            return reason
    return None


def _substitute_build_dir(text: str) -> str:
    """The README's `build/` is $TTT_BUILD_DIR when that names another directory."""
    build = build_dir().resolve()
    if build == (REPO / "build").resolve():
        return text
    return re.sub(r"(?<![\w./-])build/", str(build) + "/", text)


_RESULTS: dict[tuple[Path, int, int], subprocess.CompletedProcess] = {}


def _run(command: Command) -> subprocess.CompletedProcess:
    key = (command.doc, command.block, command.index)
    if key not in _RESULTS:
        env = dict(os.environ, TTT_BUILD_DIR=str(build_dir()))
        _RESULTS[key] = subprocess.run(
            ["bash", "-c", _substitute_build_dir(command.script())], cwd=REPO, env=env,
            capture_output=True, text=True, timeout=TIMEOUT)
    return _RESULTS[key]


def _runnable(command: Command) -> bool:
    return _excluded(command) is None and _missing_for(command.text) is None


@pytest.fixture(scope="module", autouse=True)
def _tools_are_built():
    for tool in ("ttt-opt", "ttt-run"):
        path = build_dir() / "bin" / tool
        assert path.is_file(), f"{path} not found: build first (make build)"


def test_readme_has_commands():
    readme = [c for c in COMMANDS if c.doc.name == "README.md"]
    assert len(readme) >= 20, [c.id for c in readme]
    assert any(c.expected for c in readme), "no transcript ($ ...) command found"
    assert all(c.text.strip() for c in COMMANDS)


def test_exclusions_match_commands():
    for pattern, reason in EXCLUDED:
        assert any(re.search(pattern, c.text) for c in COMMANDS), (
            f"EXCLUDED entry {pattern!r} ({reason}) matches no command any more")


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_command(command: Command):
    reason = _excluded(command)
    if reason:
        pytest.skip(f"excluded: {reason}")
    reason = _missing_for(command.text)
    if reason:
        pytest.skip(reason)
    # Earlier commands of the block may write files this one reads.
    for earlier in COMMANDS:
        if (earlier.doc, earlier.block) == (command.doc, command.block) and \
                earlier.index < command.index and _runnable(earlier):
            _run(earlier)
    proc = _run(command)
    output = (proc.stdout + proc.stderr).replace(str(REPO) + "/", "")
    assert proc.returncode == 0, (
        f"exit status {proc.returncode}\n$ {command.script()}\n{output[-4000:]}")
    for line in command.expected:
        assert line in output, (
            f"expected output line missing:\n{line}\n--- got:\n{output[-4000:]}")
