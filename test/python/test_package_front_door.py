"""The Python front door (issue 13, part 4): PyTorch modules in, sessions
out, paths that are paths, callbacks whose exceptions propagate, size checks
before ttt.run, no process exit, `python -m ttt run`, packaging metadata.

torch is optional: the tests that export a module skip (with the reason)
when it is not installed; the error without it is tested in any case.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest

from package_env import BUILD_DIR, EXAMPLES, FIXTURES, REPO
from test_package_api import ttt  # the package with its extension, or a skip

MODEL = FIXTURES / "linear_dot.scripted.onnx"
LINEAR = EXAMPLES / "linear_dot_layer.mlir"
HAVE_TORCH = importlib.util.find_spec("torch") is not None


# --- strings are paths unless they cannot be --------------------------------

def test_path_named_like_mlir_is_a_path(tmp_path, monkeypatch):
    (tmp_path / "module_linear.onnx").write_bytes(MODEL.read_bytes())
    monkeypatch.chdir(tmp_path)
    model = ttt.optimize("module_linear.onnx")
    assert any("parallel linear-attention" in n.doc_string for n in model.graph.node)
    assert ttt.explain("module_linear.onnx")


def test_missing_path_is_an_input_file_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("module_linear.onnx", "module_x.mlir", "func_model"):
        with pytest.raises(ttt.InputFileError, match=name):
            ttt.optimize(name)


def test_mlir_text_is_still_text():
    text = "module {\n  func.func @f() {\n    return\n  }\n}\n"
    assert "func.func" in ttt.optimize(text, emit="mlir")
    assert "module" in ttt.optimize("module {}", emit="mlir")


def test_on_remark_exceptions_propagate():
    seen = []

    class Stop(Exception):
        pass

    def on_remark(line):
        seen.append(line)
        raise Stop(line)

    with pytest.raises(Stop):
        ttt.optimize(str(MODEL), on_remark=on_remark)
    assert len(seen) == 1


# --- PyTorch ----------------------------------------------------------------

def test_torch_module_without_torch_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # as if not installed
    with pytest.raises(ttt.MissingDependencyError, match=r"pip install ttt\[torch\]"):
        ttt.optimize(object(), (np.ones((1, 2, 4, 8), np.float32),))
    assert issubclass(ttt.MissingDependencyError, ImportError)
    assert issubclass(ttt.MissingDependencyError, ttt.Error)


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (pip install ttt[torch])")
def test_torch_module_round_trip():
    import torch

    class Linear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(2, 8, 8) * 0.1)

        def forward(self, q, k, v):
            w = self.w.unsqueeze(0).expand(q.shape[0], -1, -1, -1)
            outs = []
            for c in range(0, q.shape[2], 4):
                qc, kc, vc = q[:, :, c:c + 4], k[:, :, c:c + 4], v[:, :, c:c + 4]
                w = w + kc.transpose(-1, -2) @ vc
                outs.append(qc @ w)
            return torch.cat(outs, dim=2)

    torch.manual_seed(0)
    module = Linear()
    q, k, v = (torch.randn(1, 2, 16, 8) for _ in range(3))
    model, remarks = ttt.optimize(module, (q, k, v), return_remarks=True)
    # The Python loop over chunks runs over the length: a rung with a dynamic
    # sequence is not the one kept, and the remarks say why.
    exports = [r for r in remarks if r.kind == "export"]
    assert exports[0].form in ttt.EXPORT_LADDER and exports[0].form != "dynamo-dynamic"
    assert [r.form for r in exports[1:]] == list(
        ttt.EXPORT_LADDER[:ttt.EXPORT_LADDER.index(exports[0].form)])
    assert all(r.reason.startswith("not used: ") for r in exports[1:])
    (layer,) = [r for r in remarks if r.kind == "layer"]
    assert layer.rewritten and layer.layer == 0
    # torch's default exporter (dynamo, opset 20 with torch 2.15) wrote the chunk
    # loop the raise rewrites into its parallel form.
    assert any(n.doc_string.startswith("ttt: parallel linear-attention form")
               for n in model.graph.node)
    out = ttt.load(model)(q.numpy(), k.numpy(), v.numpy())
    with torch.no_grad():
        expected = module(q, k, v).numpy()
    assert out.shape == expected.shape
    assert np.max(np.abs(out - expected)) <= 1e-5 * np.max(np.abs(expected))


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (pip install ttt[torch])")
def test_export_names_rungs_of_the_ladder():
    import torch

    module = torch.nn.Linear(4, 4)
    with pytest.raises(ttt.InvalidInputError, match="unknown export 'onnx'.*dynamo-static"):
        ttt.optimize(module, torch.ones(2, 4), export="onnx")
    with pytest.raises(ttt.InvalidInputError, match="unknown via 'tvm'"):
        ttt.optimize(module, torch.ones(2, 4), via="tvm")


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (pip install ttt[torch])")
def test_a_module_no_rung_exports_says_why_for_each():
    import torch

    class Unexportable(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("this module cannot be traced")

    with pytest.raises(ttt.ExportError) as error:
        ttt.optimize(Unexportable(), torch.ones(2, 4))
    message = str(error.value)
    assert message.startswith("cannot export Unexportable to ONNX: ")
    assert "\n" not in message
    for rung in ttt.EXPORT_LADDER:
        assert f"{rung}: export failed: " in message, rung


HAVE_TORCH_MLIR = importlib.util.find_spec("torch_mlir") is not None


@pytest.mark.skipif(not HAVE_TORCH_MLIR,
                    reason="torch-mlir is not installed (python/requirements-linalg.txt)")
def test_via_mlir_round_trip():
    import torch
    from ttt.models.layers import PlainLinear

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 64, 16) for _ in range(3))
    layer = PlainLinear(2, 16, 16, chunk=8)
    text, remarks = ttt.optimize(layer, (q, k, v), via="mlir", return_remarks=True)
    assert remarks[0].kind == "export" and remarks[0].form == "via-mlir"
    (found,) = [r for r in remarks if r.kind == "layer"]
    assert found.rewritten, remarks
    (out,) = ttt.run(text, [q.numpy(), k.numpy(), v.numpy()])
    with torch.no_grad():
        expected = layer(q, k, v).numpy()
    assert np.max(np.abs(out - expected)) <= 1e-5 * np.max(np.abs(expected))


# --- Remarks ----------------------------------------------------------------

def test_remarks_are_records():
    _, remarks = ttt.optimize(str(MODEL), return_remarks=True)
    (layer,) = remarks
    assert isinstance(layer, ttt.Remark) and isinstance(layer, str)
    assert layer.kind == "layer" and layer.layer == 0 and layer.rewritten is True
    assert layer.node and layer.form and layer.weights
    assert layer.reason.startswith("raised to ttt.kvb_layer")
    assert layer.where.endswith(MODEL.name)


def test_remark_lines_are_read_in_both_orders():
    cli = ttt.Remark("remark: m.onnx: node '/l/Concat': TTT layer: unrolled chunk loop "
                     "(4 chunks of 16 tokens), fast weights 'a', 'b': left as it was: "
                     "its output depends non-linearly on the trained fast weights")
    assert (cli.kind, cli.where, cli.node) == ("layer", "m.onnx", "/l/Concat")
    assert cli.form == "unrolled chunk loop (4 chunks of 16 tokens)"
    assert cli.weights == ("a", "b") and cli.rewritten is False
    assert cli.reason == "its output depends non-linearly on the trained fast weights"
    none = ttt.Remark("<onnx>: remark: no TTT layer found (12 nodes read)")
    assert none.kind == "none" and none.layer is None and none.rewritten is None
    other = ttt.Remark("x.mlir:3:4: remark: ttt-simplify: model changed: ...")
    assert other.kind == "other" and other.where == "x.mlir:3:4"
    assert ttt.Remark("not a remark").kind == "other"


# --- Session ----------------------------------------------------------------

def test_session_runs_like_the_module():
    fast = ttt.optimize(str(MODEL))
    session = ttt.Session(fast)
    assert session.input_names == ["q", "k", "v"]
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 2, 20, 16)).astype(np.float32) for _ in range(3))
    reference = ort.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
    (expected,) = reference.run(None, {"q": q, "k": k, "v": v})
    out = session(q, k, v)
    assert np.allclose(out, expected, rtol=1e-4, atol=1e-5)
    assert np.array_equal(ttt.load(fast)(q, k=k, v=v), out)
    with pytest.raises(ttt.InvalidInputError, match="missing input 'v'"):
        session(q, k)
    with pytest.raises(ttt.InvalidInputError, match="no input named 'x'"):
        session(q, k, v, x=q)
    with pytest.raises(ttt.RunError):
        session(q, k, v[:, :, :, :3])


# --- ttt.run: sizes checked first, errors raised, the process goes on --------

def _linear_inputs(tq, tk, bq=2, bk=2):
    rng = np.random.default_rng(0)
    return [rng.standard_normal((bq, 4, tq, 16)).astype(np.float32),
            rng.standard_normal((bk, 4, tk, 16)).astype(np.float32),
            rng.standard_normal((bk, 4, tk, 16)).astype(np.float32),
            np.zeros((4, 16, 16), np.float32)]


@pytest.mark.parametrize("sizes,what", [((128, 64), "sequence length"),
                                        ((64, 64, 16, 8), "batch")])
def test_run_checks_that_sizes_agree(sizes, what):
    with pytest.raises(ttt.InvalidInputError, match=f"sizes disagree.*{what}"):
        ttt.run(str(LINEAR), _linear_inputs(*sizes))
    out, = ttt.run(str(LINEAR), _linear_inputs(64, 64))
    assert out.shape == (2, 4, 64, 16)


def test_ttt_run_checks_that_sizes_agree():
    proc = subprocess.run([str(BUILD_DIR / "bin" / "ttt-run"), str(LINEAR),
                           "--random-inputs=1", "--shapes=2x4x128x16,2x4x64x16,2x4x64x16,*"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "sizes disagree" in lines[0], lines


def test_crash_in_compiled_code_raises(tmp_path):
    # A failed assertion aborts the compiled code: an error, not an exit.
    code = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %false = arith.constant false\n"
            "  cf.assert %false, \"boom\"\n"
            "  return %a : tensor<2xf32>\n}\n")
    script = ("import sys, numpy as np\n"
              f"sys.path.insert(0, {str(REPO / 'python')!r})\n"
              "import ttt\n"
              "try:\n"
              f"    ttt.run({code!r}, [np.ones(2, np.float32)])\n"
              "except ttt.RunError as e:\n"
              "    print('raised:', e)\n"
              "print('alive')\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, TTT_BUILD_DIR=str(BUILD_DIR)))
    assert proc.returncode == 0, proc.stderr
    assert "raised:" in proc.stdout and "aborted" in proc.stdout
    assert proc.stdout.strip().endswith("alive")


# --- python -m ttt ----------------------------------------------------------

def _cli(*args, **kwargs):
    env = dict(os.environ, TTT_BUILD_DIR=str(BUILD_DIR),
               PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, "-m", "ttt", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=env, **kwargs)


def test_cli_run(tmp_path):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **{f"arg{i}": a for i, a in enumerate(_linear_inputs(32, 32))})
    out = tmp_path / "out.npz"
    proc = _cli("run", "--outputs", out, LINEAR, "--inputs", inputs)
    assert proc.returncode == 0, proc.stderr
    expected, = ttt.run(str(LINEAR), _linear_inputs(32, 32))
    with np.load(out) as data:
        assert np.array_equal(data["result0"], expected)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **{f"arg{i}": a for i, a in enumerate(_linear_inputs(64, 32))})
    proc = _cli("run", LINEAR, "--inputs", bad)
    assert proc.returncode == 1
    assert proc.stderr.startswith("ttt: error:") and "disagree" in proc.stderr


def test_cli_options_in_any_order(tmp_path):
    layer = EXAMPLES / "lact_llm_layer.mlir"
    for args in (["--simplify", "freeze-inner", "drop-weight-norm", layer, "-o", "OUT"],
                 ["-o", "OUT", layer, "--simplify", "freeze-inner", "drop-weight-norm"],
                 [layer, "--simplify", "freeze-inner", "-o", "OUT",
                  "--simplify", "drop-weight-norm"]):
        out = tmp_path / "out.mlir"
        proc = _cli("opt", *[out if a == "OUT" else a for a in args])
        assert proc.returncode == 0, (args, proc.stderr)
        assert "linattn." in out.read_text()


# --- packaging --------------------------------------------------------------

def test_pyproject():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "onnx" in project["project"]["dependencies"]
    assert "torch" in project["project"]["optional-dependencies"]["torch"]
    # `ttt` is the Python interface; `ttt-opt` and `ttt-run` are the C++ tools
    # the wheel builds and installs (python/CMakeLists.txt), with the README's flags.
    assert project["project"]["scripts"] == {"ttt": "ttt.__main__:main"}
    skbuild = project["tool"]["scikit-build"]
    assert {"_ttt", "ttt-opt", "ttt-run", "ttt_cuda_runtime"} <= set(skbuild["build"]["targets"])
    install = (REPO / "python" / "CMakeLists.txt").read_text()
    assert "install(TARGETS ttt-opt ttt-run RUNTIME DESTINATION \"${SKBUILD_SCRIPTS_DIR}\"" in install
    # ONNX's build needs CMake 3.26 (Debian 12 has 3.25): pip brings one, and
    # nothing in the build calls pip (an isolated build environment has none).
    assert skbuild["cmake"]["version"] == ">=3.26"
    for cmake_file in [REPO / "CMakeLists.txt", *REPO.glob("cmake/*.cmake"),
                       *REPO.glob("python/CMakeLists.txt")]:
        assert not re.search(r"COMMAND\s+\S*PYTHON\S*\s+-m\s+pip\b",
                             cmake_file.read_text(), re.IGNORECASE), cmake_file
    # No build directory inside the source tree: a read-only checkout installs.
    build_dir = skbuild.get("build-dir", "")
    assert not build_dir or os.path.isabs(build_dir), build_dir
