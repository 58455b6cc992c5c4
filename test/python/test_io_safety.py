"""Safe and predictable I/O of ttt-opt and ttt-run (issue 13, part 3).

Output paths: a regular file is replaced atomically, a symbolic link keeps
pointing at the file it names, a FIFO or device is written through, a
directory is refused, a write error (/dev/full) is one line. Input: ONNX is
recognized by content (a .pb file, standard input), binary output never goes
to a terminal. Empty sequences, negative sizes, nesting too deep for
protobuf, the default pipeline with --ttt-explain, --help, fatal signals.
"""

from __future__ import annotations

import os
import pty
import resource
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compiler import REPO, tool  # noqa: E402

FIXTURES = REPO / "test" / "fixtures" / "onnx"
LAYER = REPO / "examples" / "lact_llm_layer.mlir"
MODEL = FIXTURES / "linear_dot.traced.onnx"


def opt(*args, **kwargs):
    return subprocess.run([str(tool("ttt-opt")), *map(str, args)], capture_output=True,
                          timeout=120, **kwargs)


def one_line(stderr: bytes) -> str:
    lines = [l for l in stderr.decode().splitlines() if not l.startswith("remark:")]
    assert len(lines) == 1, lines
    assert "PLEASE submit" not in lines[0] and "Stack dump" not in lines[0]
    return lines[0]


@pytest.mark.parametrize("source", [MODEL, LAYER], ids=["onnx", "mlir"])
def test_dev_full_is_a_one_line_error(source):
    suffix = ["--emit=onnx"] if source.suffix == ".onnx" else []
    proc = opt(source, "-o", "/dev/full", *suffix)
    assert proc.returncode != 0
    line = one_line(proc.stderr)
    assert "/dev/full" in line and "No space left" in line, line
    assert Path("/dev/full").is_char_device()


@pytest.mark.parametrize("source", [MODEL, LAYER], ids=["onnx", "mlir"])
def test_symlink_keeps_pointing_at_its_file(tmp_path, source):
    target = tmp_path / ("model.onnx" if source.suffix == ".onnx" else "out.mlir")
    target.write_text("old")
    link = tmp_path / ("link.onnx" if source.suffix == ".onnx" else "link.mlir")
    link.symlink_to(target.name)
    proc = opt(source, "-o", link)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == target.name
    assert target.read_bytes() != b"old" and target.stat().st_size > 10
    if source.suffix == ".onnx":
        onnx.checker.check_model(onnx.load(str(target)))


def test_failed_run_keeps_symlink_and_file(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( {\n")
    target = tmp_path / "out.mlir"
    target.write_text("old")
    link = tmp_path / "link.mlir"
    link.symlink_to(target.name)
    proc = opt(bad, "-o", link)
    assert proc.returncode != 0
    assert link.is_symlink() and target.read_text() == "old"


@pytest.mark.parametrize("source", [MODEL, LAYER], ids=["onnx", "mlir"])
def test_fifo_is_written_through(tmp_path, source):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    suffix = ["--emit=onnx"] if source.suffix == ".onnx" else []
    proc = opt(source, "-o", fifo, *suffix)
    reader.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert fifo.is_fifo()
    assert received and len(received[0]) > 100
    if source.suffix == ".onnx":
        onnx.checker.check_model(onnx.load_from_string(received[0]))


def test_dev_null_stays_a_device():
    proc = opt(MODEL, "-o", "/dev/null", "--emit=onnx")
    assert proc.returncode == 0, proc.stderr
    assert Path("/dev/null").is_char_device()


def test_directory_is_refused(tmp_path):
    for source in (MODEL, LAYER):
        proc = opt(source, "-o", tmp_path)
        assert proc.returncode != 0
        assert "is a directory" in one_line(proc.stderr)


@pytest.mark.parametrize("source", [MODEL, LAYER], ids=["onnx", "mlir"])
def test_replaced_output_keeps_its_mode(tmp_path, source):
    """The temporary file renamed over an output gets the old file's mode
    (and owner and group, where the process may set them)."""
    out = tmp_path / ("out.onnx" if source.suffix == ".onnx" else "out.mlir")
    out.write_text("old")
    out.chmod(0o640)
    before = out.stat()
    proc = opt(source, "-o", out)
    assert proc.returncode == 0, proc.stderr
    after = out.stat()
    assert after.st_ino != before.st_ino and out.read_bytes() != b"old"
    assert oct(after.st_mode & 0o7777) == oct(0o640)
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    # A new file gets the default mode (0666 less the umask), as before.
    fresh = tmp_path / ("new" + out.suffix)
    proc = opt(source, "-o", fresh)
    assert proc.returncode == 0, proc.stderr
    umask = os.umask(0)
    os.umask(umask)
    assert oct(fresh.stat().st_mode & 0o7777) == oct(0o666 & ~umask)


def test_replaced_onnx_data_and_ttt_run_outputs_keep_their_mode(tmp_path):
    src = tmp_path / "ext.onnx"
    weight = numpy_helper.from_array(np.ones((64, 64), np.float32), "W")
    graph = h.make_graph([h.make_node("MatMul", ["X", "W"], ["Y"])], "g",
                         [h.make_tensor_value_info("X", T.FLOAT, [1, 64])],
                         [h.make_tensor_value_info("Y", T.FLOAT, [1, 64])], [weight])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), str(src),
              save_as_external_data=True, location="ext.onnx.weights", size_threshold=0)
    out, data = tmp_path / "out.onnx", tmp_path / "out.onnx.data"
    for path, mode in ((out, 0o604), (data, 0o600)):
        path.write_text("old")
        path.chmod(mode)
    proc = opt(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert oct(out.stat().st_mode & 0o7777) == oct(0o604)
    assert oct(data.stat().st_mode & 0o7777) == oct(0o600)
    assert data.stat().st_size == 64 * 64 * 4

    results = tmp_path / "out.npz"
    results.write_text("old")
    results.chmod(0o640)
    proc = subprocess.run([str(tool("ttt-run")), str(REPO / "examples" / "linear_dot_layer.mlir"),
                           "--random-inputs=1", "--print-results=false",
                           f"--outputs={results}"], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert oct(results.stat().st_mode & 0o7777) == oct(0o640)
    assert np.load(results)["result0"].shape == (8, 4, 8, 16)


@pytest.mark.parametrize("source", [MODEL, LAYER], ids=["onnx", "mlir"])
def test_empty_output_name_is_one_line(source):
    proc = opt(source, "-o", "")
    assert proc.returncode == 1
    assert one_line(proc.stderr) == "error: -o: empty output file name"
    proc = opt("")
    assert proc.returncode == 1
    assert one_line(proc.stderr) == "error: empty input file name"


def test_ttt_run_empty_file_names_are_one_line():
    layer = REPO / "examples" / "linear_dot_layer.mlir"
    for flag in ("--outputs", "--save-inputs", "--inputs"):
        proc = subprocess.run([str(tool("ttt-run")), str(layer), f"{flag}="],
                              capture_output=True, timeout=120)
        assert proc.returncode == 1
        assert one_line(proc.stderr) == f"ttt-run: error: {flag}: empty file name"
    proc = subprocess.run([str(tool("ttt-run")), ""], capture_output=True, timeout=120)
    assert proc.returncode == 1
    assert one_line(proc.stderr) == "ttt-run: error: command line: empty input file name"


def test_onnx_by_content_and_standard_streams(tmp_path):
    pb = tmp_path / "model.pb"
    pb.write_bytes(MODEL.read_bytes())
    # A .pb file and standard input are read as ONNX (MLIR out by default).
    for args, stdin in (([pb], None), (["-"], MODEL.read_bytes())):
        proc = opt(*args, input=stdin)
        assert proc.returncode == 0, proc.stderr
        assert b"onnx.graph" in proc.stdout
    # ONNX in on standard input, ONNX out on standard output: optimized.
    proc = opt("-", "--emit=onnx", "-o", "-", input=MODEL.read_bytes())
    assert proc.returncode == 0, proc.stderr
    model = onnx.load_from_string(proc.stdout)
    onnx.checker.check_model(model)
    assert any("parallel linear-attention" in n.doc_string for n in model.graph.node)


def test_binary_never_goes_to_a_terminal():
    master, slave = pty.openpty()
    try:
        for args in ([MODEL, "--emit=onnx"], [LAYER, "--emit-bytecode"]):
            proc = subprocess.run([str(tool("ttt-opt")), *map(str, args)], stdout=slave,
                                  stderr=subprocess.PIPE, timeout=120)
            assert proc.returncode != 0
            line = one_line(proc.stderr)
            assert "terminal" in line and "-o" in line, line
    finally:
        os.close(master)
        os.close(slave)


def _static_t(path: Path, t: int, out: Path) -> Path:
    model = onnx.load(str(path))
    for value in [*model.graph.input, *model.graph.output]:
        dims = value.type.tensor_type.shape.dim
        if len(dims) >= 3:
            dims[2].ClearField("dim_param")
            dims[2].dim_value = t
    onnx.save(model, str(out))
    return out


def test_empty_sequence_static(tmp_path):
    # The LaCT V2 layer with its sequence length made 0 (onnxruntime runs it).
    model = _static_t(FIXTURES / "lact_v2.traced.onnx", 0, tmp_path / "t0.onnx")
    out = tmp_path / "t0.fast.onnx"
    proc = opt(model, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert b"T = 0" in proc.stderr
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    feeds = {i.name: np.zeros([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
             for i in session.get_inputs()}
    assert session.run(None, feeds)[0].shape[2] == 0


@pytest.mark.parametrize("name", ["linear_dot.scripted", "lact_v2.scripted"])
def test_empty_sequence_rewritten_model(tmp_path, name):
    out = tmp_path / "fast.onnx"
    proc = opt(FIXTURES / f"{name}.onnx", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert b"raised to ttt.kvb_layer (linear attention" in proc.stderr
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    feeds = {}
    for i in session.get_inputs():
        shape = [1 if not isinstance(d, int) else d for d in i.shape]
        shape[2] = 0
        feeds[i.name] = np.zeros(shape, np.float32)
    (o,) = session.run(None, feeds)
    assert o.shape[2] == 0


def test_negative_dim_is_refused(tmp_path):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, -3])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, -3])
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    path = tmp_path / "neg.onnx"
    path.write_bytes(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
                     .SerializeToString())
    proc = opt(path, "-o", tmp_path / "out.onnx")
    assert proc.returncode != 0
    line = one_line(proc.stderr)
    assert "-3" in line and "'x'" in line, line
    assert not (tmp_path / "out.onnx").exists()


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (python protobuf cannot build a
    message nested this deep itself)."""
    def varint(n: int) -> bytes:
        out = b""
        while True:
            out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
            n >>= 7
            if not n:
                return out
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_nesting_deeper_than_protobuf_allows(tmp_path):
    # Each Loop nests node -> attribute -> graph: 40 Loops are 120 levels.
    io = dict(inputs=[h.make_tensor_value_info("i", T.INT64, []),
                      h.make_tensor_value_info("cond", T.BOOL, [])],
              outputs=[h.make_tensor_value_info("cond_out", T.BOOL, [])])
    identity = h.make_node("Identity", ["cond"], ["cond_out"])
    body = h.make_graph([identity], "body", **io).SerializeToString()
    for _ in range(40):
        attribute = h.make_attribute("body", h.make_graph([], "x", [], []))
        attribute.ClearField("g")
        node = h.make_node("Loop", ["", "cond"], []).SerializeToString() + _field(
            5, attribute.SerializeToString() + _field(6, body))
        body = h.make_graph([identity], "body", **io).SerializeToString() + _field(1, node)
    model = h.make_model(h.make_graph([], "g", [], []),
                         opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    model.ClearField("graph")
    path = tmp_path / "deep.onnx"
    path.write_bytes(model.SerializeToString() + _field(7, body))
    proc = opt(path, "-o", tmp_path / "out.onnx")
    assert proc.returncode != 0
    line = one_line(proc.stderr)
    assert "recursion limit of 100" in line, line


def test_explain_adds_to_the_default_pipeline(tmp_path):
    out = tmp_path / "out.onnx"
    proc = opt(MODEL, "-o", out, "--ttt-explain")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert "ttt-explain: exact lowering" in err
    notes = [l for l in err.splitlines() if l.startswith("note:")]
    assert len(notes) == 1 and "ttt-raise-onnx" in notes[0] and "linattn-to-onnx" in notes[0]
    model = onnx.load(str(out))
    assert any("parallel linear-attention" in n.doc_string for n in model.graph.node)


def test_named_passes_on_onnx_say_which_ran(tmp_path):
    proc = opt(MODEL, "--ttt-raise-onnx=raise-all", "--ttt-explain")
    assert proc.returncode == 0, proc.stderr
    notes = [l for l in proc.stderr.decode().splitlines() if l.startswith("note:")]
    assert len(notes) == 1 and "ran 'builtin.module(ttt-raise-onnx{" in notes[0] and "raise-all=true" in notes[0] \
        and "},ttt-explain{cores=0})" in notes[0], notes


def test_help_shows_the_project_first():
    proc = opt("--help")
    assert proc.returncode == 0
    text = proc.stdout.decode()
    assert len(text.splitlines()) < 120
    for name in ("--ttt-explain", "--ttt-onnx-optimize", "--ttt-to-cpu", "--emit",
                 "--help-list-all", "builtin.module(ttt-explain)"):
        assert name in text, name
    full = opt("--help-list-all")
    assert full.returncode == 0
    assert len(full.stdout.decode().splitlines()) > 500
    assert "--canonicalize" in full.stdout.decode()
    # The pass registry still works.
    proc = opt(LAYER, "--canonicalize", "--ttt-explain")
    assert proc.returncode == 0, proc.stderr


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_fatal_signal_is_one_line(tmp_path):
    proc = subprocess.run([str(tool("ttt-opt")), str(FIXTURES / "lact_v2.traced.onnx"),
                           "-o", str(tmp_path / "big.onnx")], capture_output=True,
                          timeout=120, preexec_fn=_limit_file_size)
    assert proc.returncode != 0
    line = one_line(proc.stderr)
    assert line.startswith("ttt-opt: error:") and "file size limit" in line, line
    assert not list(tmp_path.iterdir())  # the temporary file was removed

    inputs = tmp_path / "in.npz"
    np.savez(inputs, arg0=np.ones((100000,), np.float32))
    module = tmp_path / "id.mlir"
    module.write_text("func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
                      "  return %a : tensor<?xf32>\n}\n")
    proc = subprocess.run([str(tool("ttt-run")), str(module), f"--inputs={inputs}",
                           f"--outputs={tmp_path / 'out.npz'}"], capture_output=True,
                          timeout=120, preexec_fn=_limit_file_size)
    assert proc.returncode != 0
    line = one_line(proc.stderr)
    assert line.startswith("ttt-run: error:") and "file size limit" in line, line
